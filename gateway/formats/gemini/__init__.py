"""Gemini (`/v1beta/models/{collection}:generateContent` and its siblings): `read` checks the
request and has litellm's adapter make it chat, `render` holds the per-request `GeminiFormat`
(the collection is in the path) and everything sent back, `route` an agent's turn with
function declarations (`tools` maps them both ways)."""

from gateway.formats.gemini.format import GeminiFormat
from gateway.formats.gemini.render import model_body, model_of, render_error

__all__ = ["GeminiFormat", "model_body", "model_of", "render_error"]
