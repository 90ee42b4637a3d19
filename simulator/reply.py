"""What a healthy model answers, and the faults a behaviour puts before it.

The answer echoes the last user message (so tests can tell seats apart), goes on from an
assistant's own earlier text (a prefill), calls the behaviour's tool when tools are offered,
and is JSON when JSON is asked for (simulator/shaped.py).
"""

from __future__ import annotations

import http
import json
import uuid
from typing import Any

from routing.text import content_text
from simulator import flood, reading, suite
from simulator.errors import error_body
from simulator.exchange import Exchange
from simulator.shaped import shaped
from simulator.stream import filler, stream


async def reply(ex: Exchange, payload: dict[str, Any]) -> None:
    b = ex.b
    if not await ex.pause(b["latency_s"]):
        return
    if b["script"] is not None:
        return await ex.replay(b["script"])
    if b["flood"] is not None:
        return await flood.reply(ex, b["flood"])
    if b["reset"]:
        return await ex.drop(abrupt=True, outcome="reset")
    if b["hang"]:
        return await ex.wait_for_client_to_leave("hung")
    if b["status"] != 200:
        status = b["status"]
        phrase = {s.value: s.phrase for s in http.HTTPStatus}.get(status, "Error")
        message = b["error_message"] or f"Simulated {status} {phrase} from {ex.model}."
        headers = [(b"retry-after", b["retry_after"]), (b"retry-after-ms", b["retry_after_ms"])]
        headers = [(name, str(value).encode()) for name, value in headers if value is not None]
        headers += ex.stated_headers()
        return await ex.send_json(status, error_body(status, message), headers, "error")
    messages = [m for m in payload.get("messages") or [] if isinstance(m, dict)]
    if b["refuses_prefill"] and messages and messages[-1].get("role") == "assistant":
        message = f"{ex.model} does not support assistant message prefill."
        body = error_body(400, b["error_message"] or message)
        return await ex.send_json(400, body, ex.stated_headers(), "error")
    last_user = next(
        (content_text(m.get("content")) for m in reversed(messages) if m.get("role") == "user"),
        "",
    )
    echo = f" You said: {last_user[:80]}" if last_user else ""  # tells seats apart in tests
    default = f"Simulated answer from {ex.model}.{echo}"
    answer = "" if b["empty"] else default if b["answer"] is None else b["answer"]
    if b["reads_prompt"] and not b["empty"]:
        answer = reading.answer(ex.model, messages) or answer
    if b["suite_skill"] is not None and not b["empty"]:  # a suite task answered with its skill
        answer = suite.answer(ex.model, last_user, b["suite_skill"], b["suite_dirs"]) or answer
    if b["answer_bytes"] is not None:  # streamed, its pieces are made in `stream`
        answer = "" if payload.get("stream") else filler(b["answer_bytes"])
    elif not b["repeats_prefix"]:
        answer = _continued(answer, messages)
    last = messages[-1] if messages else {}
    if last.get("role") == "tool":  # the tool's result came back: say what it said
        answer = f"The tool said: {content_text(last.get('content'))[:200]}"
    answer = shaped(answer, payload.get("response_format"))  # JSON when JSON is asked for
    calls = b["tool_call"] if payload.get("tools") and last.get("role") != "tool" else None
    if calls is None and b["calls_offered_tools"] and last.get("role") != "tool":
        calls = reading.offered_call(payload.get("tools"), messages)
    prompt_tokens = len("".join(content_text(m.get("content")) for m in messages)) // 4
    said = len(answer.split()) if b["answer_bytes"] is None else b["answer_bytes"] // 5
    usage = {
        "prompt_tokens": prompt_tokens,
        "completion_tokens": said,
        "total_tokens": prompt_tokens + said,
    }
    base = {
        "id": f"chatcmpl-sim-{uuid.uuid4().hex[:12]}",
        "created": int(ex.clock.now()),
        "model": ex.model,
    }
    tool_calls = None
    if calls is not None:
        tool_calls = [
            {
                "id": f"call_{uuid.uuid4().hex[:12]}",
                "type": "function",
                "function": {
                    "name": call.get("name", "tool"),
                    "arguments": json.dumps(call.get("arguments") or {}),
                },
            }
            for call in (calls if isinstance(calls, list) else [calls])
        ]
    if not payload.get("stream"):
        if not await ex.pause(b["think_s"] or 0):
            return
        reply: dict[str, Any] = {"role": "assistant", "content": answer}
        if tool_calls:
            reply = {"role": "assistant", "content": None, "tool_calls": tool_calls}
        if b["reasoning"]:
            reply["reasoning_content"] = b["reasoning"]
        finish = "tool_calls" if tool_calls else "stop"
        return await ex.send_json(
            200,
            {
                **base,
                "object": "chat.completion",
                **({"usage": usage} if b["usage"] else {}),
                "choices": [{"index": 0, "message": reply, "finish_reason": finish}],
            },
            ex.stated_headers(),
        )
    include_usage = b["usage"] and bool((payload.get("stream_options") or {}).get("include_usage"))
    await stream(ex, answer, base, usage if include_usage else None, tool_calls)


def _continued(answer: str, messages: list[dict[str, Any]]) -> str:
    """What follows the text of the last assistant message, when the answer starts with it (a
    model given its own earlier text, as a prefill or with "continue", goes on from there)."""
    said = [content_text(m.get("content")) for m in messages if m.get("role") == "assistant"]
    prior = said[-1] if said else ""
    if prior and len(answer) > len(prior) and answer.startswith(prior):
        return answer[len(prior) :]
    return answer
