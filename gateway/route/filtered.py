"""A provider's content filter refusing a turn: recognised, and never routed around.

Why: a member that refuses a request for what it asks (a 400 naming a content policy, a filter
or a safety system; a 200 that ends with `finish_reason: content_filter` before a word of it)
is a policy decision, not a fault. Handing the turn to the next member until one answers would
use the collection to get round the provider's policy, so the refusal is the client's: a 400 in
its format, recorded with the provider's reason (gateway/route/refusal.py), and nobody else is
asked. Any other 400 still goes to the next member, as one provider may refuse a parameter
another takes.
"""

from __future__ import annotations

import re

from gateway.upstream.chunks import Chunk

# The Failure kind and record `error_class` of such a refusal.
CONTENT_FILTER = "content_filter"

# How providers (and litellm's ContentPolicyViolationError) name a refusal for content:
# OpenAI's `content_policy_violation`, "rejected as a result of our safety system", "violating
# our usage policy"; Azure's `content_filter`, "content management policy",
# ResponsibleAIPolicyViolation, "The response was filtered"; Anthropic's "content filtering
# policy".
_NAMED = re.compile(
    r"content[ _-]?(?:polic|filter|management polic|moderation)"
    r"|contentpolicyviolation|responsibleaipolicy|safety[ _-]?system|usage polic"
    r"|\bfiltered\b",
    re.IGNORECASE,
)


def names_a_filter(message: str) -> bool:
    """Does a provider's refusal (its code and message, as the error carries them) say it was
    refused for its content?"""
    return _NAMED.search(message) is not None


def stopped_by_filter(chunk: Chunk) -> bool:
    """Does *chunk* end its answer with `finish_reason: content_filter`?"""
    return any(choice.finish_reason == CONTENT_FILTER for choice in chunk.choices)
