"""The reply to a seated panel that the SSE formats share: the event stream when the client asked
for one, else the run awaited and rendered whole, or its failure in the format's error shape."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from typing import TYPE_CHECKING, Any

from starlette.responses import JSONResponse, Response, StreamingResponse

if TYPE_CHECKING:
    from gateway.errors import GatewayError
    from gateway.panel import Completion, PanelRun

SSE_HEADERS = {"Cache-Control": "no-cache", "X-Accel-Buffering": "no"}


async def reply_to(
    run: PanelRun,
    *,
    stream: Callable[[PanelRun], AsyncIterator[bytes]],
    body: Callable[[Completion], dict[str, Any]],
    error: Callable[[GatewayError], Response],
) -> Response:
    if run.ask.stream:
        headers = {**run.headers, **SSE_HEADERS}
        return StreamingResponse(stream(run), media_type="text/event-stream", headers=headers)
    await run.run()
    failed = run.failure()
    if failed is not None:
        return error(failed)
    return JSONResponse(body(run.completion()), headers=run.headers)
