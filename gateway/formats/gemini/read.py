"""The read half of Gemini's format (gemini.py): a generateContent body checked and made into an
OpenAI chat request, and `countTokens`, which reads the same body. Kept apart from the replies
because the checks are most of the format and its replies need none of them.

Every part, role and setting is checked first, because litellm's adapter drops what it does not
know and nothing may be dropped silently; then litellm's `GoogleGenAIAdapter`
(gateway/upstream/translate/gemini.py) makes the OpenAI chat request, and the fields it leaves
out are added here. A panel answers in prose: its function declarations are named as dropped,
earlier function calls and responses reach its seats as text, and only a `toolConfig` that
demands a call is refused, with a pointer to route mode (route_gemini.py), which reads its
bodies with the same helpers. Hint fields are read by gateway/formats/gemini/hints.py.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from gateway.errors import BadRequest
from gateway.formats.gemini.hints import (
    camel_keys,
    config_hints,
    model_parts,
    safety_hints,
)
from gateway.formats.gemini.tools import tools_of
from gateway.panel.ask import chat_messages
from gateway.request.bounds import bounded
from gateway.request.hints import Hints
from gateway.request.tool_text import call_line, result_line
from gateway.upstream.translate.gemini import to_chat
from routing import conversation_text, estimate_tokens

_TOP_FIELDS = frozenset(
    {"contents", "systemInstruction", "generationConfig", "with", "bench", "safetySettings",
     "tools", "toolConfig"}
)  # fmt: skip
_REFUSED_FIELDS = {
    "cachedContent": "cached content is stored with Google; send the contents themselves",
}
# generationConfig -> the OpenAI sampling field it is passed on as (the adapter maps the first
# four; the rest it leaves out, so they are mapped here).
_CONFIG = {
    "temperature": "temperature",
    "topP": "top_p",
    "maxOutputTokens": "max_tokens",
    "stopSequences": "stop",
    "seed": "seed",
    "presencePenalty": "presence_penalty",
    "frequencyPenalty": "frequency_penalty",
}
_JSON = "application/json"


def chat_request(body: dict[str, Any]) -> tuple[dict[str, Any], Hints]:
    """A generateContent body (keys in camelCase) -> OpenAI chat `messages` and sampling, and
    the hints of its generationConfig."""
    contents = _contents(body.get("contents"))
    system = system_text(body.get("systemInstruction"))
    config, found = generation_config(body.get("generationConfig"))
    request = to_chat(contents, system, config)
    for message in request.get("messages") or ():  # a turn of empty texts is an empty turn
        if message.get("content") is None and not message.get("tool_calls"):
            message["content"] = ""
    with_config(request, config)
    return request, found


def with_config(request: dict[str, Any], config: dict[str, Any]) -> None:
    """The generationConfig fields the adapter leaves out of *request*, and checks of its work."""
    for name, field in _CONFIG.items():
        if name in config and field not in request:
            request[field] = config[name]
    if config.get("responseMimeType") == _JSON and "response_format" not in request:
        if config.get("responseSchema") is not None or config.get("responseJsonSchema") is not None:
            raise BadRequest(
                "`generationConfig.responseSchema` must describe an object.",
                param="generationConfig.responseSchema",
            )
        request["response_format"] = {"type": "json_object"}


# countTokens' bound: its contents may also sit in `generateContentRequest`, which the count of
# values bounds.
COUNT_CHECK = partial(bounded, listed="contents")


def count_tokens(body: dict[str, Any], max_messages: int) -> int:
    """`countTokens`: an estimate from the text (no model is called), as every reader sizes a
    prompt. The body (bounded by `COUNT_CHECK`) is checked as generateContent's is."""
    body = camel_keys(body)
    inner = body.pop("generateContentRequest", None)
    if inner is not None:
        if not isinstance(inner, dict):
            raise BadRequest("`generateContentRequest` must be an object.")
        body = {**camel_keys(inner), **body}
        body.pop("model", None)
    check_fields(body)
    messages = chat_messages(chat_request(body)[0]["messages"], max_messages)
    return estimate_tokens(len(conversation_text(messages)))


def check_fields(body: dict[str, Any]) -> Hints:
    """The top-level fields: the ones a panel cannot honour are refused saying why; safety
    thresholds and fields the gateway does not know are named as dropped."""
    found = safety_hints(body.get("safetySettings"), Hints())
    found = _panel_tools(body, found)
    for field in body:
        if field in _REFUSED_FIELDS and body[field] not in (None, []):  # `tools: []`: no tools
            raise BadRequest(f"`{field}`: {_REFUSED_FIELDS[field]}.", param=field)
        if field not in _TOP_FIELDS and field not in _REFUSED_FIELDS:
            found = found.drop(field)
    return found


def _panel_tools(body: dict[str, Any], found: Hints) -> Hints:
    """A panel answers in prose: its function declarations are named `tools`, Google's own
    tools by name; only a `toolConfig` that demands a call (mode ANY) is refused."""
    declared, hosted = tools_of(body.get("tools"), unique=False)
    calling = body.get("toolConfig")
    mode = None
    if isinstance(calling, dict):
        config = camel_keys(calling).get("functionCallingConfig")
        mode = camel_keys(config).get("mode") if isinstance(config, dict) else None
    if isinstance(mode, str) and mode.upper() == "ANY":
        raise BadRequest(
            "`toolConfig.functionCallingConfig.mode` ANY demands a function call, which a panel "
            "cannot make: it answers in prose, every seat side by side. Use the collection's "
            "`:route` model for a tool-calling turn.",
            param="toolConfig",
        )
    found = found.drop(*hosted)
    return found.drop("tools") if declared else found


def _contents(contents: Any) -> list[dict[str, Any]]:
    if isinstance(contents, dict):
        contents = [contents]
    if not isinstance(contents, list) or not contents:
        raise BadRequest("`contents` must be a non-empty list.", param="contents")
    kept = []
    for i, content in enumerate(contents):
        where = f"contents[{i}]"
        if not isinstance(content, dict):
            raise BadRequest(f"`{where}` must be an object.", param=where)
        content = camel_keys(content)
        for field in content:
            if field not in ("role", "parts"):
                raise BadRequest(f"`{where}.{field}` is not a content field.", param=where)
        if content.get("role", "user") not in ("user", "model"):
            raise BadRequest(f"`{where}.role` must be user or model.", param=f"{where}.role")
        parts = content.get("parts")
        content["parts"] = model_parts(parts)
        if parts and content["parts"] == []:
            continue  # a turn of thoughts only: nothing a seat reads
        _parts(content["parts"], f"{where}.parts")
        kept.append(content)
    return kept


def _parts(parts: Any, where: str, *, text_only: bool = False) -> list[dict[str, Any]]:
    """The parts, checked, with their keys in camelCase."""
    if not isinstance(parts, list) or not parts:
        raise BadRequest(f"`{where}` must be a non-empty list of parts.", param=where)
    for j, part in enumerate(parts):
        here = f"{where}[{j}]"
        if not isinstance(part, dict):
            raise BadRequest(f"`{here}` must be an object.", param=here)
        part = camel_keys(part)
        parts[j] = part
        kinds = set(part)
        if kinds == {"text"} and isinstance(part["text"], str):
            continue
        if not text_only and kinds == {"inlineData"}:
            inline_image(part["inlineData"], f"{here}.inlineData")
            continue
        if not text_only and kinds & {"functionCall", "functionResponse"} and len(kinds) == 1:
            parts[j] = {"text": _tool_text(part, here)}  # a panel's seats read it as text
            continue
        raise BadRequest(f"`{here}`: {_why_not(kinds, text_only)}.", param=here)
    return parts


def _tool_text(part: dict[str, Any], where: str) -> str:
    """An earlier function call or response, as the text a panel's seats read."""
    kind, value = next(iter(part.items()))
    value = camel_keys(value) if isinstance(value, dict) else None
    if value is None or not isinstance(value.get("name"), str):
        raise BadRequest(f"`{where}.{kind}` must be an object with a name.", param=where)
    if kind == "functionCall":
        return call_line(value["name"], value.get("args") or {})
    return result_line(value.get("response"))


def _why_not(kinds: set[str], text_only: bool) -> str:
    if kinds & {"functionCall", "functionResponse"}:
        return "a part must be exactly one of text, inlineData, functionCall or functionResponse"
    if "fileData" in kinds:
        return "uploaded files cannot reach a panel's seats; send the image bytes as inlineData"
    if kinds & {"executableCode", "codeExecutionResult"}:
        return "code execution is a Gemini tool that runs on Google's side"
    if text_only:
        return "a system instruction takes only text parts"
    return "a part must be exactly one of text (a string) or inlineData (an image)"


def inline_image(data: Any, where: str) -> None:
    if not isinstance(data, dict):
        raise BadRequest(f"`{where}` must be an object.", param=where)
    data = camel_keys(data)
    mime, payload = data.get("mimeType"), data.get("data")
    if not isinstance(mime, str) or not mime.startswith("image/"):
        raise BadRequest(
            f"`{where}.mimeType` must be an image type; audio, video and documents cannot "
            "reach a panel's seats.",
            param=where,
        )
    if not isinstance(payload, str) or not re.fullmatch(r"[A-Za-z0-9+/_-]+=*", payload):
        raise BadRequest(f"`{where}.data` must be base64.", param=where)
    if set(data) - {"mimeType", "data"}:
        raise BadRequest(f"`{where}` takes only mimeType and data.", param=where)


def system_text(system: Any) -> str | None:
    if system is None:
        return None
    if isinstance(system, str):
        return system
    if not isinstance(system, dict) or set(camel_keys(system)) - {"role", "parts"}:
        raise BadRequest(
            "`systemInstruction` must be a content with text parts.", param="systemInstruction"
        )
    parts = _parts(system.get("parts"), "systemInstruction.parts", text_only=True)
    return "\n\n".join(part["text"] for part in parts)


def generation_config(given: Any) -> tuple[dict[str, Any], Hints]:
    """The generationConfig fields passed on, checked, and the hints in the rest
    (gateway/formats/gemini/hints.py)."""
    if given is None:
        return {}, Hints()
    if not isinstance(given, dict):
        raise BadRequest("`generationConfig` must be an object.", param="generationConfig")
    config, found = config_hints({k: v for k, v in camel_keys(given).items() if v is not None})
    if config.get("candidateCount", 1) != 1:
        raise BadRequest(
            "`generationConfig.candidateCount` must be 1: a panel's answers come as one "
            "candidate, side by side.",
            param="generationConfig.candidateCount",
        )
    if config.get("responseMimeType", "text/plain") not in ("text/plain", _JSON):
        raise BadRequest(
            "`generationConfig.responseMimeType` must be text/plain or application/json.",
            param="generationConfig.responseMimeType",
        )
    if config.get("responseModalities", ["TEXT"]) not in (["TEXT"], ["text"]):
        raise BadRequest(
            "`generationConfig.responseModalities`: a panel answers in text only.",
            param="generationConfig.responseModalities",
        )
    return config, found
