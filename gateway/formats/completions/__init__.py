"""OpenAI legacy completions (`/v1/completions`) as a `Format`: `read` (a `prompt` as one user
message), `render` (a `text_completion` or its SSE chunks, through the chat stream writer).
It carries no tools, so its route half refuses route mode by name."""

import importlib
from typing import TYPE_CHECKING, Any

from gateway.formats.completions.read import check, read, read_route

if TYPE_CHECKING:
    from gateway.formats.completions.render import render_error, render_route, render_run

# A heavy body is checked in the body reader's child process (gateway/request/body.py), which
# imports `check` from here by name. What renders and what calls upstream reaches litellm, which
# would cost that child seconds and some 200 MB: it is imported when first used instead.
_LATER = {"render_error": "render", "render_route": "render", "render_run": "render"}


def __getattr__(name: str) -> Any:
    if name not in _LATER:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{_LATER[name]}"), name)
    globals()[name] = value  # found once
    return value


__all__ = ["check", "read", "read_route", "render_error", "render_route", "render_run"]
