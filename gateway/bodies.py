"""Reading a request body into checked JSON without holding the event loop.

Python's JSON parser holds the GIL, so a thread does not help: a 17 MB body of 1.5 M
`logit_bias` keys held the loop for seconds, and every other client (health checks included)
waited. So a body is first sized up at C speed: one whose length, or whose count of `,` `[` `{`
(more than the number of JSON values it can hold), could take long is parsed and checked in a
child process, which hands back the checked (and so bounded) body or the refusal; any other body
is parsed on the loop, where it costs a few milliseconds at most. Either way the same checks run,
so a body gets the same answer wherever it was read.

The child is started on the first heavy body (most gateways never see one) and ended with the
app. A child that dies (out of memory, killed) costs that request a 413, and the next heavy
body gets a new child.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import re
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from typing import Any

from gateway.config.schema import GatewaySettings
from gateway.errors import BadRequest, GatewayError, PayloadTooLarge

# Beyond either, a body is read off the loop. Measured here: a 1 MB body parses and is checked in
# ~5-15 ms, 10,000 values in ~1-15 ms; a 20 MB string took ~50 ms to parse, 1.5 M keys 2.6 s.
HEAVY_BYTES = 1_000_000
HEAVY_VALUES = 10_000

# A format's check: the parsed body and the gateway's settings -> the body as that format reads
# it, every part bounded, or a GatewayError. It must pickle by name (a module-level function, or
# a `functools.partial` of one) from a module that does not import litellm: the child imports
# it, and litellm would cost it seconds and hundreds of megabytes.
Check = Callable[[dict[str, Any], GatewaySettings], dict[str, Any]]


def values_limit(settings: GatewaySettings) -> int:
    """The JSON values a body checked by `bounded` may hold: room for `max_messages` messages
    of two parts each at most (a text and an image need a handful of values), and a schema."""
    return settings.max_messages * 2 * MAX_PART_VALUES + MAX_RESPONSE_FORMAT


def bounded(body: dict[str, Any], settings: GatewaySettings, *, listed: str) -> dict[str, Any]:
    """The check of a format whose reader translates its body (through litellm) before the
    shared chat checks run on the result: the body is bounded here, pure and cheap, so that the
    translation and every check after it work on a small body on the loop. *listed* is the
    field holding the conversation, refused by name past `max_messages` items. A format uses it
    as `check = functools.partial(bounded, listed=...)`, which pickles by this function's name,
    so the child never imports the format's module (nor litellm)."""
    items = body.get(listed)
    if isinstance(items, list) and len(items) > settings.max_messages:
        raise BadRequest(
            f"`{listed}` holds {len(items)} items; at most {settings.max_messages} are taken "
            "(gateway.max_messages).",
            param=listed,
        )
    limit = values_limit(settings)
    if not values_within(body, limit):
        raise BadRequest(
            f"The request body holds more than {limit} JSON values; the gateway takes at most "
            f"{settings.max_messages} messages (gateway.max_messages) and a few values for each."
        )
    return body


def heavy(raw: bytes) -> bool:
    """Could parsing *raw* take long? Every JSON value but the first follows a `,` or opens a
    container, so the counts bound the values from above (commas inside strings only inflate
    it, which sends a body off the loop it did not need to leave, never the other way)."""
    if len(raw) > HEAVY_BYTES:
        return True
    return raw.count(b",") + raw.count(b"[") + raw.count(b"{") > HEAVY_VALUES


def read_checked(raw: bytes, check: Check, settings: GatewaySettings) -> dict[str, Any]:
    """Strict JSON, then the format's check: what runs on the loop for an ordinary body."""
    return check(json_object(raw), settings)


def _read_in_child(raw: bytes, check: Check, settings: GatewaySettings) -> tuple[Any, ...]:
    """In the child: the checked body, or the refusal as (class, message, param) to raise."""
    try:
        return ("ok", read_checked(raw, check, settings))
    except GatewayError as error:
        return ("refused", type(error), error.message, error.param)


class BodyReader:
    """Reads bodies for one app (one per worker): ordinary ones inline, heavy ones in a child."""

    def __init__(self, settings: GatewaySettings) -> None:
        self.settings = settings
        self._pool: ProcessPoolExecutor | None = None

    async def read(self, raw: bytes, check: Check) -> dict[str, Any]:
        if not heavy(raw):
            return read_checked(raw, check, self.settings)
        pool = self._started()
        loop = asyncio.get_running_loop()
        try:
            answer = await loop.run_in_executor(pool, _read_in_child, raw, check, self.settings)
        except BrokenProcessPool:
            self._pool = None  # the next heavy body starts another child
            pool.shutdown(wait=False)
            raise PayloadTooLarge(
                "The request body could not be read within the gateway's limits."
            ) from None
        if answer[0] == "refused":
            _, kind, message, param = answer
            raise kind(message, param=param)
        checked: dict[str, Any] = answer[1]
        return checked

    def _started(self) -> ProcessPoolExecutor:
        if self._pool is None:
            spawn = multiprocessing.get_context("spawn")  # no fork of a threaded server
            self._pool = ProcessPoolExecutor(max_workers=1, mp_context=spawn)
        return self._pool

    async def close(self) -> None:
        """End the child, if one was started (it finishes the body it is reading first)."""
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, wait=True, cancel_futures=True)


MAX_RESPONSE_FORMAT = 10_000  # JSON values in a response_format (its schema included)


# JSON values one content part may hold: its own and at most 8 fields of a few plain values each,
# an image's url object as many again (gateway/panel/ask.py `_check_extras`)
MAX_PART_VALUES = 80


# A lone surrogate can only be spelled as a \uD800-\uDFFF escape in valid UTF-8 JSON.
_SURROGATE_ESCAPE = re.compile(rb"\\u[dD][89abcdefABCDEF]")


def json_object(raw: bytes, what: str = "The request body") -> dict[str, Any]:
    """Strict JSON: UTF-8 only, no NaN or Infinity, no lone surrogates, an object at the top."""
    try:
        body = json.loads(raw.decode("utf-8"), parse_constant=_no_constant)
        if _SURROGATE_ESCAPE.search(raw):  # (only then can a lone one be in there: look)
            json.dumps(body, ensure_ascii=False).encode("utf-8")  # lone surrogates fail here
    except (ValueError, RecursionError) as exc:
        raise BadRequest(f"{what} is not valid JSON: {_reason(exc)}.") from None
    if not isinstance(body, dict):
        raise BadRequest(f"{what} must be a JSON object.")
    return body


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a JSON number")


def _reason(exc: BaseException) -> str:
    if isinstance(exc, UnicodeError):
        return "it is not UTF-8 (or holds a lone surrogate)"
    if isinstance(exc, RecursionError):
        return "it is nested too deeply"
    return str(exc)


def values_within(value: Any, limit: int) -> bool:
    """Does *value* hold at most *limit* JSON values (itself included)? Stops counting there, so
    the answer costs at most *limit* steps however large the value is."""
    stack, seen = [value], 0
    while stack:
        seen += 1
        if seen > limit:
            return False
        item = stack.pop()
        if isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)
    return True


def whole(value: Any) -> int | None:
    """A JSON whole number as an int (`56.0` is one, as JSON Schema's integer has it); None
    for anything else (a bool, a fraction, a string, infinity)."""
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return None
