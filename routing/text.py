"""Chat messages as plain text, the one way every reader of a conversation sees it.

A message's content is a string or a list of parts (OpenAI's multi-part content: text parts,
images, ...). The prompt estimate and record, the merger's view of the conversation and the
simulated upstream all read text the same way: the text parts, in order, a line each; parts that
hold no text count for nothing. Pure, so the simulator may use it without importing the gateway.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any


def content_text(content: Any) -> str:
    """The text of one message's content: the string itself, or its text parts a line each."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(
            part["text"]
            for part in content
            if isinstance(part, Mapping) and isinstance(part.get("text"), str)
        )
    return ""


def conversation_text(messages: Iterable[Mapping[str, Any]], *, roles: bool = False) -> str:
    """Every message's text, a blank line between them; `[role] ` before each if *roles*."""
    texts = []
    for message in messages:
        text = content_text(message.get("content"))
        texts.append(f"[{message.get('role')}] {text}" if roles else text)
    return "\n\n".join(texts)
