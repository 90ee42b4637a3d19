"""A model's context window: a prompt over it is refused as an OpenAI-compatible provider refuses
one, with a 400 that names the window (`context_window` behaviour).

Why: `bench-gateway models add` learns a new model's window from that refusal, and the gateway
learns it from a seat's; a fault that struck every prompt could not tell a short prompt that
fits from a long one that does not. Tokens are counted as characters / 4, a provider's rough
measure, so a test can size a prompt to land on either side.
"""

from __future__ import annotations

from typing import Any

from routing.text import content_text


def prompt_tokens(payload: dict[str, Any]) -> int:
    """The prompt's size in tokens, characters / 4, over every message's text."""
    messages = payload.get("messages")
    listed = messages if isinstance(messages, list) else []
    chars = sum(len(content_text(m.get("content"))) for m in listed if isinstance(m, dict))
    return chars // 4


def over_window(payload: dict[str, Any], window: int | None) -> str | None:
    """The provider's refusal of a prompt over *window* tokens, or None when it fits."""
    if window is None:
        return None
    tokens = prompt_tokens(payload)
    if tokens <= window:
        return None
    return (
        f"This model's maximum context length is {window} tokens. However, your messages "
        f"resulted in {tokens} tokens. Please reduce the length of the messages."
    )
