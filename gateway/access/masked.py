"""The net under the masking at the sources (gateway/access/secrets.py): every response body and
every log line with the config's provider secrets masked.

Answers, errors and records are masked where they are made, which is the only place a secret
split across an upstream's chunks can be caught. What else the gateway sends can echo a client's
own input (a 404 names the path called, a 403 the Host sent, the dashboard what was stored):
`MaskedResponses` masks any secret whole in a response's bytes, holding back the end of a piece
that could begin one until the next piece, and fixes `Content-Length` to match. `MaskingFilter`
does the same for a log record, traceback included; the process owner puts it on its handlers
(gateway/serve/workers.py), as an embedded app leaves logging to whoever owns the process.
"""

from __future__ import annotations

import logging

from starlette.datastructures import MutableHeaders
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from gateway.access.secrets import Mask


class MaskedResponses:
    """ASGI middleware: response bodies with every secret of *mask* masked."""

    def __init__(self, app: ASGIApp, *, mask: Mask) -> None:
        self.app = app
        self.mask = mask

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or not self.mask:
            return await self.app(scope, receive, send)
        mask = self.mask
        start: Message | None = None
        tail = b""

        async def sending(message: Message) -> None:
            nonlocal start, tail
            if message["type"] == "http.response.start":
                start = message  # sent with the first piece of the body, its length known
                return
            if message["type"] != "http.response.body":
                return await send(message)
            more = message.get("more_body", False)
            body = mask.data(tail + message.get("body", b""))
            hold = mask.held_data(body) if more else 0
            tail = body[len(body) - hold :] if hold else b""
            body = body[: len(body) - hold] if hold else body
            if start is not None:
                headers = MutableHeaders(scope=start)
                if "content-length" in headers:
                    if more:
                        del headers["content-length"]  # (sent in chunks: its length changes)
                    else:
                        headers["content-length"] = str(len(body))
                await send(start)
                start = None
            await send({**message, "body": body})

        await self.app(scope, receive, sending)
        if start is not None:  # a response with no body message at all
            await send(start)


class MaskingFilter(logging.Filter):
    """A handler's filter: the record's message, and its traceback, masked."""

    def __init__(self, mask: Mask) -> None:
        super().__init__()
        self.mask = mask

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.mask:
            return True
        message = record.getMessage()
        masked = self.mask.text(message)
        if masked != message:
            record.msg, record.args = masked, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.mask.text(record.exc_text)
        return True


def mask_logs(mask: Mask, loggers: tuple[str, ...] = ("bench", "uvicorn", "uvicorn.error")) -> None:
    """Put a MaskingFilter on the handlers of *loggers* (the process owner's to call)."""
    for name in loggers:
        for handler in logging.getLogger(name).handlers:
            masking = [f for f in handler.filters if isinstance(f, MaskingFilter)]
            for kept in masking:  # called again (a reloaded config): the new mask replaces it
                kept.mask = mask
            if not masking:
                handler.addFilter(MaskingFilter(mask))
