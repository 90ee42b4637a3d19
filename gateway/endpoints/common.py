"""What every endpoint needs: the runtime, and a body read within its limit."""

from __future__ import annotations

from typing import cast

from starlette.requests import Request

from gateway.errors import PayloadTooLarge
from gateway.runtime import Runtime


def runtime_of(request: Request) -> Runtime:
    return cast(Runtime, request.app.state.runtime)  # (starlette types app state as Any)


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 as soon as it is known to be over the limit."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"The request body is over the limit of {limit} bytes.")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > limit:
            raise PayloadTooLarge(f"The request body is over the limit of {limit} bytes.")
        chunks.append(chunk)
    return b"".join(chunks)
