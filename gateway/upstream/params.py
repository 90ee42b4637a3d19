"""Which OpenAI chat parameters a model's provider takes, as litellm knows them.

A request's hints (gateway/panel/hints.py) are passed on to a model only where its provider takes
them: litellm refuses an unsupported parameter outright (unless told to drop it, which would drop
it unnamed), so the gateway asks first, per model, and names what it leaves out.
"""

from __future__ import annotations

from functools import lru_cache

import litellm


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
