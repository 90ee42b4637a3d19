"""What every endpoint needs: the runtime, and a body read within its limits of size and time."""

from __future__ import annotations

import asyncio
from typing import cast

from starlette.requests import ClientDisconnect, Request

from gateway.errors import BadRequest, PayloadTooLarge, RequestTimeout
from gateway.runtime import Runtime


def runtime_of(request: Request) -> Runtime:
    return cast(Runtime, request.app.state.runtime)  # (starlette types app state as Any)


async def read_body(request: Request, limit: int) -> bytes:
    """The body, refused with 413 as soon as it is known to be over the limit, and with 408
    (the connection closed) when it has not all come within `gateway.body_timeout_s`: a body
    trickled a byte a second would otherwise keep its request, and whatever it holds, for as
    long as its sender likes."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise PayloadTooLarge(f"The request body is over the limit of {limit} bytes.")
    timeout_s = runtime_of(request).config.gateway.body_timeout_s
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout_s):
            async for chunk in request.stream():
                size += len(chunk)
                if size > limit:
                    raise PayloadTooLarge(f"The request body is over the limit of {limit} bytes.")
                chunks.append(chunk)
    except TimeoutError:
        raise RequestTimeout(
            f"The request body did not arrive within {timeout_s:g} s (gateway.body_timeout_s).",
            headers={"Connection": "close"},
        ) from None
    except ClientDisconnect:
        raise BadRequest("The connection closed before the request body was complete.") from None
    return b"".join(chunks)
