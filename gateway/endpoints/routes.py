"""The HTTP routes, all in one table, and the two that need no module of their own
(`/healthz`, `/openapi.json`)."""

from __future__ import annotations

from starlette.convertors import PathConvertor, register_url_convertor
from starlette.requests import Request
from starlette.responses import Response
from starlette.routing import Route

from gateway.endpoints.asking import (
    anthropic_messages,
    chat_completions,
    create_completion,
    create_response,
    gemini_generate,
    gemini_stream,
    ollama_chat,
    ollama_generate,
)
from gateway.endpoints.common import runtime_of
from gateway.endpoints.health import bench_health, restore_model, retire_model
from gateway.endpoints.listings import (
    anthropic_count_tokens,
    gemini_count_tokens,
    gemini_model,
    gemini_models,
    ollama_show,
    ollama_tags,
    ollama_version,
)
from gateway.endpoints.models import get_model, list_models
from gateway.endpoints.records import (
    bench_models,
    bench_usage,
    get_call,
    get_conversation,
    get_panel,
    list_panels,
    post_pending,
    post_verdict,
)
from gateway.endpoints.reload import reload_config
from gateway.endpoints.suite import (
    approve_draft,
    bench_suite,
    reject_draft,
    run_suite,
    suite_drafts,
)
from gateway.openapi import describe
from gateway.replies import JSONResponse


class ModelName(PathConvertor):
    """A model name as `GET /v1beta/models/{name}` and `GET /v1/models/{model}` read it: any
    path but one ending in a method of Gemini's POST routes (`:generateContent` ...), which a
    GET must not answer (their `Allow` is POST)."""

    regex = r"(?!.*:(?:generateContent|streamGenerateContent|countTokens)$).*"


register_url_convertor("model_name", ModelName())

OLLAMA_GEMINI_ROUTES = [
    Route("/api/chat", ollama_chat, methods=["POST"]),
    Route("/api/generate", ollama_generate, methods=["POST"]),
    Route("/api/tags", ollama_tags, methods=["GET"]),
    Route("/api/show", ollama_show, methods=["POST"]),
    Route("/api/version", ollama_version, methods=["GET"]),
    Route("/v1beta/models/{model:path}:generateContent", gemini_generate, methods=["POST"]),
    Route("/v1beta/models/{model:path}:streamGenerateContent", gemini_stream, methods=["POST"]),
    Route("/v1beta/models/{model:path}:countTokens", gemini_count_tokens, methods=["POST"]),
    Route("/v1beta/models", gemini_models, methods=["GET"]),
    Route("/v1beta/models/{name:model_name}", gemini_model, methods=["GET"]),
    # Gemini's v1 (langchain-google-genai's default) is served as v1beta is; GET /v1/models is
    # OpenAI's list, so only the methods that ask models are under v1.
    Route("/v1/models/{model:path}:generateContent", gemini_generate, methods=["POST"]),
    Route("/v1/models/{model:path}:streamGenerateContent", gemini_stream, methods=["POST"]),
    Route("/v1/models/{model:path}:countTokens", gemini_count_tokens, methods=["POST"]),
]


async def openapi_json(request: Request) -> Response:
    """The description for this gateway's config, made once per app."""
    state = request.app.state
    if getattr(state, "openapi", None) is None:
        state.openapi = describe(runtime_of(request).config)
    return JSONResponse(state.openapi)


async def healthz(request: Request) -> Response:
    runtime = runtime_of(request)
    if not runtime.ready:
        return JSONResponse({"status": "starting"}, status_code=503)
    body = runtime.health.status()
    figures = runtime.live.round_trips()
    if figures is not None:  # a shared state's round trips, for benchmarks and operators
        body["state"] = figures
    return JSONResponse(body)


ROUTES = [
    Route("/v1/chat/completions", chat_completions, methods=["POST"]),
    Route("/chat/completions", chat_completions, methods=["POST"]),
    Route("/v1/messages", anthropic_messages, methods=["POST"]),
    Route("/messages", anthropic_messages, methods=["POST"]),
    Route("/v1/messages/count_tokens", anthropic_count_tokens, methods=["POST"]),
    Route("/messages/count_tokens", anthropic_count_tokens, methods=["POST"]),
    Route("/v1/models", list_models, methods=["GET"]),
    Route("/v1/responses", create_response, methods=["POST"]),
    Route("/responses", create_response, methods=["POST"]),
    Route("/v1/completions", create_completion, methods=["POST"]),
    Route("/completions", create_completion, methods=["POST"]),
    Route("/models", list_models, methods=["GET"]),
    Route("/v1/models/{model:model_name}", get_model, methods=["GET"]),
    Route("/models/{model:path}", get_model, methods=["GET"]),
    Route("/bench/verdict", post_verdict, methods=["POST"]),
    Route("/bench/panels", list_panels, methods=["GET"]),
    Route("/bench/panels/{panel}", get_panel, methods=["GET"]),
    Route("/bench/calls/{call}", get_call, methods=["GET"]),
    Route("/bench/conversations/{conversation}", get_conversation, methods=["GET"]),
    Route("/bench/models", bench_models, methods=["GET"]),
    Route("/bench/models/{alias}/retire", retire_model, methods=["POST"]),
    Route("/bench/models/{alias}/restore", restore_model, methods=["POST"]),
    Route("/bench/health", bench_health, methods=["GET"]),
    Route("/bench/reload", reload_config, methods=["POST"]),
    Route("/bench/pending", post_pending, methods=["POST"]),
    Route("/bench/usage", bench_usage, methods=["GET"]),
    Route("/bench/suite", bench_suite, methods=["GET"]),
    Route("/bench/suite/run", run_suite, methods=["POST"]),
    Route("/bench/suite/drafts", suite_drafts, methods=["GET"]),
    Route("/bench/suite/drafts/{draft}/approve", approve_draft, methods=["POST"]),
    Route("/bench/suite/drafts/{draft}/reject", reject_draft, methods=["POST"]),
    Route("/healthz", healthz, methods=["GET"]),
    Route("/openapi.json", openapi_json, methods=["GET"]),
    *OLLAMA_GEMINI_ROUTES,
]
