"""Which OpenAI chat parameters a model's provider takes, whether it takes an assistant
prefill, and how long an answer it may write, as litellm knows them.

A request's hints (gateway/request/hints.py) are passed on to a model only where its provider takes
them: litellm refuses an unsupported parameter outright (unless told to drop it, which would drop
it unnamed), so the gateway asks first, per model, and names what it leaves out.
"""

from __future__ import annotations

from functools import lru_cache

import litellm
import litellm.utils


@lru_cache(maxsize=1024)
def takes_prefill(model: str) -> bool:
    """Does litellm's model map say *model* (`provider/name`) takes an assistant prefill (a
    last assistant message it writes on from)? False for a model litellm cannot place."""
    try:
        return bool(litellm.utils.supports_assistant_prefill(model=model))
    except Exception:  # an unknown model: told to continue instead, which every model takes
        return False


@lru_cache(maxsize=1024)
def supported_params(model: str) -> frozenset[str]:
    """The chat parameters litellm passes on for *model* (`provider/name`, as configured);
    none for a model litellm cannot place."""
    try:
        name, provider, _key, _base = litellm.get_llm_provider(model)
        found = litellm.get_supported_openai_params(model=name, custom_llm_provider=provider)
    except Exception:  # a model litellm cannot place is given no hint, and each one is named
        return frozenset()
    return frozenset(found or ())


def max_output_of(served: str) -> int | None:
    """The model's known maximum output tokens (litellm's model map), or None when unknown."""
    info = litellm.model_cost.get(served) or {}
    value = info.get("max_output_tokens") or info.get("max_tokens")
    return value if isinstance(value, int) and value > 0 else None
