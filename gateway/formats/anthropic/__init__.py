"""Anthropic Messages (`/v1/messages`, `/v1/messages/count_tokens`) as a `Format`: `read` (and
the token estimate `count`), `render` (a `message` or its event stream, errors as Anthropic's),
and `route` (an agent's turn through litellm's Anthropic adapter)."""

from gateway.formats.anthropic.read import check, count, read
from gateway.formats.anthropic.render import render_error, render_run
from gateway.formats.anthropic.route import read_route, render_route

__all__ = ["check", "count", "read", "read_route", "render_error", "render_route", "render_run"]
