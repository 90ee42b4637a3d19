"""A call's HTTP request as litellm would send it to an OpenAI-compatible provider, built by
litellm's own provider config and sent by the gateway itself (gateway/upstream/direct/reader.py).

Why litellm still builds it: every quirk of a provider's request (which parameters it takes
and under what names, its URL, its headers) is litellm's knowledge, kept up to date there; the
gateway only takes over what costs the CPU, the sending and the reading. The parameter mapping
(`get_optional_params`, a third of a millisecond) depends only on the parameters, so it is kept
per distinct set of them: a panel's seats and an agent's turns ask with the same ones again
and again.
"""

from __future__ import annotations

import os
from collections import OrderedDict
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import litellm
import orjson
from litellm.llms.openai.chat.gpt_transformation import OpenAIGPTConfig
from litellm.types.utils import LlmProviders
from litellm.utils import ProviderConfigManager, get_optional_params

# The keys of a model's litellm_params that are about the connection, not the request.
_CONNECTION = frozenset(
    {
        "model", "api_base", "base_url", "api_key", "timeout", "num_retries", "max_retries",
        "shared_session", "organization", "api_version", "extra_headers", "headers",
        "custom_llm_provider", "stream_timeout", "rpm", "tpm",
    }
)  # fmt: skip
_SDK_OPTIONS = ("extra_headers", "extra_query", "extra_body")
_MAPPED: OrderedDict[bytes, dict[str, Any]] = OrderedDict()
_MAPPED_MAX = 512


@dataclass(frozen=True)
class Target:
    """Where a model's calls go and what it is called there (fixed per model)."""

    model: str  # the provider's own name for it
    provider: str
    url: str
    headers: dict[str, str]
    config: OpenAIGPTConfig


@dataclass(frozen=True)
class WireRequest:
    target: Target
    headers: dict[str, str]
    body: bytes
    url: str


@lru_cache(maxsize=1024)
def _place(model: str, api_base: str | None, api_key: str | None) -> tuple[str, str, Any, Any]:
    name, provider, key, base = litellm.get_llm_provider(model, api_base=api_base, api_key=api_key)
    return name, provider, key, base


def target_of(params: dict[str, Any]) -> Target:
    """The model's URL, headers and litellm provider config; raises ValueError when litellm
    does not treat its provider as OpenAI-compatible."""
    api_base = params.get("api_base") or params.get("base_url")
    api_key = params.get("api_key")
    name, provider, key, base = _place(params["model"], api_base, api_key)
    config = ProviderConfigManager.get_provider_chat_config(name, LlmProviders(provider))
    if not isinstance(config, OpenAIGPTConfig):
        raise ValueError(f"{provider} is not an OpenAI-compatible provider to litellm")
    api_base = api_base or base or _openai_base()
    api_key = api_key or key or os.environ.get("OPENAI_API_KEY")
    headers = config.validate_environment({}, name, [], {}, {}, api_key=api_key, api_base=api_base)
    for extra in (params.get("headers"), params.get("extra_headers")):
        if isinstance(extra, dict):
            headers.update({str(k): str(v) for k, v in extra.items()})
    url = config.get_complete_url(api_base, api_key, name, {}, {}, stream=None)
    return Target(name, provider, url, headers, config)


def _openai_base() -> str:
    return (
        os.environ.get("OPENAI_BASE_URL")
        or os.environ.get("OPENAI_API_BASE")
        or "https://api.openai.com/v1"
    )


def build(
    target: Target,
    params: dict[str, Any],
    messages: list[dict[str, Any]],
    asked: dict[str, Any],
    *,
    stream: bool,
) -> WireRequest:
    """The request for *messages* with *asked* (the OpenAI parameters: sampling, tools, hints),
    mapped by litellm for the provider. Raises litellm's own errors (an unsupported parameter
    is its UnsupportedParamsError, as on litellm's path)."""
    wanted = {k: v for k, v in params.items() if k not in _CONNECTION}
    wanted.update(asked)
    if stream:
        wanted.update(stream=True, stream_options={"include_usage": True})
    optional = dict(_mapped(target, wanted))
    headers = dict(target.headers)
    sent_headers = optional.pop("extra_headers", None)
    if isinstance(sent_headers, dict):
        headers.update({str(k): str(v) for k, v in sent_headers.items()})
    extra_body = optional.pop("extra_body", None)
    query = optional.pop("extra_query", None)
    body = target.config.transform_request(
        target.model,
        messages,  # type: ignore[arg-type]  # (litellm's TypedDicts of the same messages)
        optional,
        {},
        headers,
    )
    for name in _SDK_OPTIONS:
        body.pop(name, None)
    if isinstance(extra_body, dict):
        body.update(extra_body)  # as the OpenAI SDK merges it into the JSON
    url = target.url
    if isinstance(query, dict) and query:
        from urllib.parse import urlencode

        url = f"{url}{'&' if '?' in url else '?'}{urlencode(query)}"
    return WireRequest(target, headers, orjson.dumps(body), url)


def _mapped(target: Target, wanted: dict[str, Any]) -> dict[str, Any]:
    """litellm's mapping of *wanted* for the provider, kept per distinct set of values (the
    values of a request's parameters, compared as JSON)."""
    try:
        key = orjson.dumps((target.provider, target.model, wanted), option=orjson.OPT_SORT_KEYS)
    except TypeError:  # a value JSON cannot hold: mapped afresh each time
        return _map(target, wanted)
    found = _MAPPED.get(key)
    if found is None:
        found = _map(target, wanted)
        _MAPPED[key] = found
        if len(_MAPPED) > _MAPPED_MAX:
            _MAPPED.popitem(last=False)
    else:
        _MAPPED.move_to_end(key)
    return found


def _map(target: Target, wanted: dict[str, Any]) -> dict[str, Any]:
    mapped = get_optional_params(model=target.model, custom_llm_provider=target.provider, **wanted)
    mapped.pop("max_retries", None)
    return dict(mapped)
