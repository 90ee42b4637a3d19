"""Where each connection's listing is read, with which key, and what each bench model is called
in it (contract §19).

Which connections are read: a provider known to serve an OpenAI-style `GET /models` (OpenRouter,
Groq, NVIDIA, Mistral, ...), at its model's `api_base` or the provider's own; any other only when
its connection says `listing: true` (then `{api_base}/models`) or names the listing's URL. Why
not every OpenAI-compatible server by default: a local or proxy server often lists only what it
has loaded, or nothing, and a listing believed wrongly would keep its models from being
explored. `listing: false` turns a provider's off.

A model's name in the listing is litellm's model string less its provider prefix
(`openrouter/meta-llama/llama-3.3-70b-instruct:free` is `meta-llama/llama-3.3-70b-instruct:free`
there); with `custom_llm_provider` the whole string is the name.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gateway.config.environ import ENV_PREFIX
from gateway.config.settings import Config

# provider -> its OpenAI-compatible API base, where `/models` is its listing
KNOWN_BASES = {
    "openrouter": "https://openrouter.ai/api/v1",
    "groq": "https://api.groq.com/openai/v1",
    "nvidia_nim": "https://integrate.api.nvidia.com/v1",
    "mistral": "https://api.mistral.ai/v1",
    "deepseek": "https://api.deepseek.com/v1",
    "together_ai": "https://api.together.xyz/v1",
    "cerebras": "https://api.cerebras.ai/v1",
    "xai": "https://api.x.ai/v1",
    "openai": "https://api.openai.com/v1",
}


@dataclass
class Source:
    """One listing to read: a connection's, at one URL, and the bench models it should name."""

    connection: str
    url: str
    key: str | None
    names: dict[str, str] = field(default_factory=dict)  # alias -> its name in the listing


def provider_and_name(params: dict[str, object]) -> tuple[str, str]:
    """(provider, the model's name at the provider) from a model's litellm params."""
    model = str(params.get("model", ""))
    custom = params.get("custom_llm_provider")
    if isinstance(custom, str) and custom:
        return custom, model
    provider, _, name = model.partition("/")
    return (provider, name) if name else ("", model)


def listing_url(config: Config, alias: str, connection: str) -> str | None:
    """Where *alias*'s connection lists its models, or None where none is read."""
    setting = config.connections[connection].listing if connection in config.connections else None
    if setting is False:
        return None
    if isinstance(setting, str):
        return setting
    params = config.litellm_params[alias]
    provider, _ = provider_and_name(params)
    written = params.get("api_base")
    base = written if isinstance(written, str) and written else None
    if setting is True:
        base = base or KNOWN_BASES.get(provider)
    elif provider in KNOWN_BASES and not (provider == "openai" and base):
        base = base or KNOWN_BASES[provider]
    else:
        base = None  # an OpenAI-compatible server of its own: read when its connection says so
    return f"{base.rstrip('/')}/models" if base else None


def sources(config: Config, connection: str | None = None) -> list[Source]:
    """Every listing the config's models point at (one per connection and URL), in order."""
    found: dict[tuple[str, str], Source] = {}
    for model in config.catalog.models:
        if connection is not None and model.connection != connection:
            continue
        url = listing_url(config, model.alias, model.connection)
        if url is None:
            continue
        source = found.setdefault((model.connection, url), Source(model.connection, url, None))
        params = config.litellm_params[model.alias]
        key = params.get("api_key")
        if source.key is None and isinstance(key, str) and key and not key.startswith(ENV_PREFIX):
            source.key = key  # (a key whose variable is unset is left as written: not sent)
        source.names[model.alias] = provider_and_name(params)[1]
    return list(found.values())
