"""Strict JSON and the bounds every body is read within: what both a panel's and a route turn's
body checks build on. Pure and cheap (no I/O, no litellm), so a check built from these may run
in the body reader's child process (gateway/request/body.py); counting stops at the limit, so a
bound costs at most what it allows however large the body is.
"""

from __future__ import annotations

import json
import re
from typing import Any

from gateway.config.schema import GatewaySettings
from gateway.errors import BadRequest

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


# Where each format keeps a turn's conversation (chat, Anthropic and Ollama `messages`,
# Responses `input`, Gemini `contents`), and the tools a turn may offer its member (OpenAI's own
# bound on a request's functions).
TURN_LISTS = ("messages", "input", "contents")
MAX_TOOLS = 128


def bounded_turn(body: dict[str, Any], settings: GatewaySettings) -> dict[str, Any]:
    """A route turn's body, bounded as a panel's is before its member is given it: the
    conversation within `max_messages` items, `tools` a list of at most MAX_TOOLS objects, and
    the whole within the JSON values a panel's body may hold. A turn passes its body on nearly as
    it is, so what is not bounded here would be built into the member's request on the loop
    and sent upstream."""
    for listed in TURN_LISTS:
        items = body.get(listed)
        if isinstance(items, list) and len(items) > settings.max_messages:
            raise BadRequest(
                f"`{listed}` holds {len(items)} items; at most {settings.max_messages} are taken "
                "(gateway.max_messages).",
                param=listed,
            )
    tools = body.get("tools")
    if tools is not None and not (
        isinstance(tools, list)
        and len(tools) <= MAX_TOOLS
        and all(isinstance(tool, dict) for tool in tools)
    ):
        raise BadRequest(f"`tools` must be a list of at most {MAX_TOOLS} objects.", param="tools")
    return bounded(body, settings, listed=TURN_LISTS[0])
