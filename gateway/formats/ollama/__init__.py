"""Ollama (`/api/chat`, `/api/generate`, `/api/tags`, `/api/show`, `/api/version`): `read`
checks its requests, `render` holds the two formats (`CHAT`, `GENERATE`) and the listings, and
`route` an agent's `/api/chat` turn with tools."""

from gateway.formats.ollama.format import CHAT, GENERATE
from gateway.formats.ollama.render import render_error, show_body, tags_body

__all__ = ["CHAT", "GENERATE", "render_error", "show_body", "tags_body"]
