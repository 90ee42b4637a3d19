"""OpenAI Responses (`/v1/responses`) as a `Format`: `read`, `render` (its typed stream in
`events`), and `route` (an agent's turn, Responses items to chat and back)."""

from gateway.formats.responses.read import check, read
from gateway.formats.responses.render import render_error, render_run
from gateway.formats.responses.route import read_route, render_route

__all__ = ["check", "read", "read_route", "render_error", "render_route", "render_run"]
