"""OpenAI legacy completions (`/v1/completions`) as a `Format`: `read` (a `prompt` as one user
message), `render` (a `text_completion` or its SSE chunks, through the chat stream writer).
It carries no tools, so its route half refuses route mode by name."""

from gateway.formats.completions.read import check, read, read_route
from gateway.formats.completions.render import render_error, render_route, render_run

__all__ = ["check", "read", "read_route", "render_error", "render_route", "render_run"]
