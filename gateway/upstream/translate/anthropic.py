"""Anthropic Messages requests in OpenAI's chat shape, through litellm's adapter.

litellm 1.110.2's `LiteLLMAnthropicMessagesAdapter.translate_anthropic_to_openai` turns
`system`, `messages` (text, image, tool_use and tool_result blocks), `metadata.user_id`,
`stop_sequences` and `thinking` into OpenAI chat kwargs. Two of its habits are corrected here:
it mutates the request it is given (so it gets a copy, never the caller's body), and it drops
`tool_result.is_error` unless built with `keep_tool_errors=True`. It also drops, silently, the
blocks it does not know: the format's reader refuses those before they get here.

(Python imports `gateway.upstream`, the seam that makes litellm offline and quiet, before this
module, so litellm is never first imported from here.)
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from litellm.llms.anthropic.messages.adapters.transformation import (
    LiteLLMAnthropicMessagesAdapter,
)

# Stateless but for its two flags, so one serves every request.
_ADAPTER = LiteLLMAnthropicMessagesAdapter(keep_tool_errors=True)


def to_openai_chat(request: Mapping[str, Any]) -> dict[str, Any]:
    """An Anthropic Messages request as OpenAI chat kwargs (`messages`, `stop`, `user`,
    `reasoning_effort`, and the fields that need no translation, copied as they are)."""
    translated, _tool_names = _ADAPTER.translate_anthropic_to_openai(copy.deepcopy(dict(request)))
    return dict(translated)
