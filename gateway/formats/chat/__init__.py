"""OpenAI chat completions (`/v1/chat/completions`) as a `Format`: `read` (the request as an
Ask), `render` (a panel run as a `chat.completion` or its chunk stream, errors as OpenAI's), and
`route` (an agent's turn both ways)."""

from gateway.formats.chat.read import check, read
from gateway.formats.chat.render import render_error, render_run
from gateway.formats.chat.route import read_route, render_route

__all__ = ["check", "read", "read_route", "render_error", "render_route", "render_run"]
