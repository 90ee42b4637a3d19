"""A failed call in words a person can act on: which provider, at which host, what it said.

litellm's exceptions read `AuthenticationError: AuthenticationError: OpenAIException - Invalid
API Key`, or carry an object's repr (`ssl:<ssl.SSLContext object at 0x7f...>`). What a person
needs is `groq (api.groq.com): 401 Invalid API Key`, or `ollama_chat (127.0.0.1:11434):
connection refused`: the provider and host to look at, the status, and the provider's own words.
"""

from __future__ import annotations

import ast
import re
import socket
import ssl
from typing import Any
from urllib.parse import urlsplit

import litellm

# litellm's wrapping before a provider's words: `litellm.RateLimitError: RateLimitError:
# OpenAIException - `, `APIConnectionError: Ollama_chatException - `, and the like
_WRAPPING = re.compile(r"^(?:(?:litellm\.)?\w+(?:Error|Exception)(?::| -)\s*)+")
# the OpenAI SDK's own prefix, which some providers' errors carry inside litellm's wrapping
_ERROR_CODE = re.compile(r"^Error code: \d{3} - ")
_REPR = re.compile(r"\s*\S*<[\w.]+ object at 0x[0-9a-f]+>\S*", re.IGNORECASE)
# Where providers litellm gives no api_base for are, when a model sets none.
_DEFAULT_HOSTS = {
    "openai": "api.openai.com",
    "text-completion-openai": "api.openai.com",
    "openrouter": "openrouter.ai",
    "anthropic": "api.anthropic.com",
    "gemini": "generativelanguage.googleapis.com",
    "ollama": "localhost:11434",
    "ollama_chat": "localhost:11434",
    "lm_studio": "localhost:1234",
    "cohere": "api.cohere.ai",
    "cohere_chat": "api.cohere.ai",
}


def provider_at(params: dict[str, Any]) -> str:
    """`groq (api.groq.com)`: the provider litellm calls for these params, and its host (with
    the port only when the api_base names one). Never the api_base's path, query or user:
    they may carry a key."""
    model = str(params.get("model", ""))
    custom = params.get("custom_llm_provider")
    base = params.get("api_base") or params.get("base_url")
    provider, found = model.split("/", 1)[0] if "/" in model else "", None
    try:
        _, provider, _, found = litellm.get_llm_provider(
            model=model,
            custom_llm_provider=custom if isinstance(custom, str) else None,
            api_base=base if isinstance(base, str) else None,
        )
    except Exception:  # a model litellm cannot place: named by what was written
        pass
    provider = provider or "the provider"
    written = base if isinstance(base, str) and base else found
    host = _host(written) if isinstance(written, str) and written else None
    return f"{provider} ({host or _DEFAULT_HOSTS.get(provider, 'its default endpoint')})"


def _host(url: str) -> str | None:
    try:
        parts = urlsplit(url if "//" in url else f"//{url}")
        port = parts.port
    except ValueError:
        return None
    host = parts.hostname
    if not host:
        return None
    host = f"[{host}]" if ":" in host else host
    return f"{host}:{port}" if port else host


def provider_words(exc: BaseException, status: int | None) -> str:
    """What the provider said, without litellm's wrapping: `401 Invalid API Key`."""
    body = getattr(exc, "body", None)
    inner = body.get("error", body) if isinstance(body, dict) else body
    said = inner.get("message") if isinstance(inner, dict) else inner
    text = said if isinstance(said, str) and said.strip() else str(exc)
    text = _REPR.sub("", _WRAPPING.sub("", " ".join(text.split()))).strip()
    text = _said_inside(_ERROR_CODE.sub("", text)) or type(exc).__name__
    if status is not None and not text.startswith(str(status)):
        text = f"{status} {text}"
    return text


def _said_inside(text: str) -> str:
    """The provider's message when *text* is the repr of its error body (`{'error': {'message':
    ...}}`, as the OpenAI SDK words an error it could not read), else *text*."""
    if not text.startswith("{") or len(text) > 20_000:
        return text
    try:
        body = ast.literal_eval(text)
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return text
    inner = body.get("error", body) if isinstance(body, dict) else None
    said = inner.get("message") if isinstance(inner, dict) else inner
    return " ".join(said.split()) if isinstance(said, str) and said.strip() else text


def unreachable_words(exc: BaseException) -> str:
    """Why a connection was not made, from the cause chain: refused, no such host, TLS."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused"
        if isinstance(seen, socket.gaierror):
            return "host name not found"
        if isinstance(seen, ssl.SSLError):
            return f"TLS failed ({seen.reason or seen})"
        if isinstance(seen, ConnectionResetError):
            return "connection reset"
        if "Connect call failed" in str(seen) or "ConnectionRefused" in type(seen).__name__:
            return "connection refused"
        seen = seen.__cause__ or seen.__context__
    return "connection failed"
