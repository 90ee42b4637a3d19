"""A route turn asked in each format that has route mode, through that format's official SDK,
plain or streamed, and read the same way: the answer's text, the model the format reports, and
the usage it reports; or the SDK's own error when the turn is refused. So one test of a failover
scenario runs in every format (chat, Anthropic Messages, Responses, Gemini, Ollama)."""

from __future__ import annotations

from dataclasses import dataclass

import anthropic
import ollama
import openai
import pytest
from google import genai
from google.genai import errors, types

FORMATS = ["chat", "anthropic", "responses", "gemini", "ollama"]
MODEL = "bench/crew:route"


@dataclass
class Reply:
    text: str
    model: str  # the model the format reports: the member that answered
    tokens: tuple[int, int]  # (prompt, completion) as the format reports them


@dataclass
class Refused:
    status: int
    message: str


def ask(gw, form: str, stream: bool, question: str) -> Reply:
    """One turn of *question* in format *form*, through its SDK."""
    return _ASK[form](gw, stream, question)


def refused(gw, form: str, stream: bool, question: str) -> Refused:
    """One turn the gateway refuses: the error the format's SDK raises, as its own."""
    own = _ERRORS[form]
    with pytest.raises(own) as caught:
        ask(gw, form, stream, question)
    error = caught.value
    if isinstance(error, openai.APIStatusError | anthropic.APIStatusError):
        return Refused(error.status_code, error.message)
    if isinstance(error, errors.APIError):
        return Refused(error.code, error.message or "")
    assert isinstance(error, ollama.ResponseError)
    return Refused(error.status_code, error.error)


_ERRORS = {
    "chat": openai.APIStatusError,
    "responses": openai.APIStatusError,
    "anthropic": anthropic.APIStatusError,
    "gemini": errors.APIError,
    "ollama": ollama.ResponseError,
}


def _chat(gw, stream: bool, question: str) -> Reply:
    messages = [{"role": "user", "content": question}]
    if not stream:
        reply = gw.client.chat.completions.create(model=MODEL, messages=messages)
        usage = reply.usage
        return Reply(
            reply.choices[0].message.content or "",
            reply.model,
            (usage.prompt_tokens, usage.completion_tokens) if usage else (0, 0),
        )
    text, model, tokens = "", "", (0, 0)
    for chunk in gw.client.chat.completions.create(
        model=MODEL, messages=messages, stream=True, stream_options={"include_usage": True}
    ):
        text += "".join(c.delta.content or "" for c in chunk.choices)
        model = chunk.model or model
        if chunk.usage is not None:
            tokens = (chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
    return Reply(text, model, tokens)


def _anthropic(gw, stream: bool, question: str) -> Reply:
    client = anthropic.Anthropic(base_url=gw.url, api_key="local", max_retries=0, timeout=30)
    messages = [{"role": "user", "content": question}]
    if stream:
        with client.messages.stream(model=MODEL, max_tokens=100, messages=messages) as events:
            message = events.get_final_message()
    else:
        message = client.messages.create(model=MODEL, max_tokens=100, messages=messages)
    text = "".join(b.text for b in message.content if b.type == "text")
    return Reply(text, message.model, (message.usage.input_tokens, message.usage.output_tokens))


def _responses(gw, stream: bool, question: str) -> Reply:
    if stream:
        with gw.client.responses.stream(model=MODEL, input=question) as events:
            response = events.get_final_response()
    else:
        response = gw.client.responses.create(model=MODEL, input=question)
    usage = response.usage
    tokens = (usage.input_tokens, usage.output_tokens) if usage else (0, 0)
    return Reply(response.output_text, response.model, tokens)


def _gemini(gw, stream: bool, question: str) -> Reply:
    if "genai" not in gw.__dict__:  # kept: a Client closes its pool when collected
        options = types.HttpOptions(base_url=gw.url, api_version="v1beta", timeout=30_000)
        gw.genai = genai.Client(api_key="local", http_options=options)
    models = gw.genai.models
    if stream:
        chunks = list(models.generate_content_stream(model=MODEL, contents=question))
    else:
        chunks = [models.generate_content(model=MODEL, contents=question)]
    text = "".join(c.text or "" for c in chunks)
    usage = chunks[-1].usage_metadata
    tokens = (usage.prompt_token_count or 0, usage.candidates_token_count or 0) if usage else (0, 0)
    return Reply(text, chunks[-1].model_version or "", tokens)


def _ollama(gw, stream: bool, question: str) -> Reply:
    client = ollama.Client(host=gw.url, timeout=30)
    messages = [{"role": "user", "content": question}]
    if stream:
        lines = list(client.chat(model=MODEL, messages=messages, stream=True))
    else:
        lines = [client.chat(model=MODEL, messages=messages)]
    text = "".join(line.message.content or "" for line in lines)
    last = lines[-1]
    return Reply(text, last.model or "", (last.prompt_eval_count or 0, last.eval_count or 0))


_ASK = {
    "chat": _chat,
    "anthropic": _anthropic,
    "responses": _responses,
    "gemini": _gemini,
    "ollama": _ollama,
}
