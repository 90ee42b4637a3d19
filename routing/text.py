"""Chat messages as plain text, the one way every reader of a conversation sees it.

A message's content is a string or a list of parts (OpenAI's multi-part content: text parts,
images, ...). The prompt estimate and record, the merger's view of the conversation and the
simulated upstream all read text the same way: the text parts, in order, a line each. An image
part reads as `[image]`: a record shows where an image was and never its bytes (a data URL can
be megabytes of base64). Other parts hold no text and count for nothing. Pure, so the simulator
may use it without importing the gateway.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

IMAGE_PART = "image_url"  # OpenAI's image part; other formats' images are translated to it
IMAGE_PLACEHOLDER = "[image]"


def content_text(content: Any) -> str:
    """The text of one message's content: the string itself, or its text parts a line each."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        texts = (_part_text(part) for part in content)
        return "\n".join(text for text in texts if text is not None)
    return ""


def _part_text(part: Any) -> str | None:
    if not isinstance(part, Mapping):
        return None
    if part.get("type") == IMAGE_PART:
        return IMAGE_PLACEHOLDER
    text = part.get("text")
    return text if isinstance(text, str) else None


def has_images(messages: Iterable[Mapping[str, Any]]) -> bool:
    """Does any message carry an image part?"""
    return any(
        isinstance(part, Mapping) and part.get("type") == IMAGE_PART
        for message in messages
        if isinstance(content := message.get("content"), list)
        for part in content
    )


def conversation_text(messages: Iterable[Mapping[str, Any]], *, roles: bool = False) -> str:
    """Every message's text, a blank line between them; `[role] ` before each if *roles*."""
    texts = []
    for message in messages:
        text = content_text(message.get("content"))
        texts.append(f"[{message.get('role')}] {text}" if roles else text)
    return "\n\n".join(texts)
