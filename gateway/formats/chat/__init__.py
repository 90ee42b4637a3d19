"""OpenAI chat completions (`/v1/chat/completions`) as a `Format`: `read` (the request as an
Ask), `render` (a panel run as a `chat.completion` or its chunk stream, errors as OpenAI's), and
`route` (an agent's turn both ways)."""

import importlib
from typing import TYPE_CHECKING, Any

from gateway.formats.chat.read import check, read

if TYPE_CHECKING:
    from gateway.formats.chat.render import render_error, render_run
    from gateway.formats.chat.route import read_route, render_route

# A heavy body is checked in the body reader's child process (gateway/request/body.py), which
# imports `check` from here by name. What renders and what calls upstream reaches litellm, which
# would cost that child seconds and some 200 MB: it is imported when first used instead.
_LATER = {
    "render_error": "render",
    "render_run": "render",
    "read_route": "route",
    "render_route": "route",
}


def __getattr__(name: str) -> Any:
    if name not in _LATER:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_LATER[name]}"), name)
    globals()[name] = value  # found once
    return value


__all__ = ["check", "read", "read_route", "render_error", "render_route", "render_run"]
