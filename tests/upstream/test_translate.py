"""litellm's format translators, pinned: an upgrade that moves or changes what the formats rely
on fails here, by name, before any client sees a different reply."""

from __future__ import annotations

import copy
import inspect
from importlib.metadata import version

import litellm
from litellm.responses.litellm_completion_transformation.transformation import (
    LiteLLMCompletionResponsesConfig,
)

from gateway.upstream.translate import responses

CHAT = {
    "id": "chatcmpl-p1",
    "object": "chat.completion",
    "created": 1700000000,
    "model": "bench/trio",
    "choices": [
        {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": "md"}}
    ],
    "usage": {"prompt_tokens": 3, "completion_tokens": 4, "total_tokens": 7},
}


def test_the_pinned_litellm_is_installed_and_quiet():
    assert version("litellm") == responses.VERSION
    assert litellm.suppress_debug_info is True


def test_the_responses_translator_keeps_the_signatures_the_seam_calls():
    config = LiteLLMCompletionResponsesConfig
    to_messages = inspect.signature(config.transform_responses_api_input_to_messages)
    assert {"input", "responses_api_request"} <= set(to_messages.parameters)
    to_response = inspect.signature(
        config.transform_chat_completion_response_to_responses_api_response
    )
    assert list(to_response.parameters) == [
        "request_input",
        "responses_api_request",
        "chat_completion_response",
    ]
    assert callable(config._transform_text_format_to_response_format)


def test_input_items_and_instructions_become_chat_messages_without_touching_the_input():
    items = [
        {"role": "user", "content": [{"type": "input_text", "text": "hi"}]},
        {
            "type": "message",
            "role": "assistant",
            "content": [{"type": "output_text", "text": "yo"}],
        },
        {
            "role": "user",
            "content": [{"type": "input_image", "image_url": "data:image/png;base64,AA"}],
        },
    ]
    before = copy.deepcopy(items)
    messages = responses.messages_of(items, "be brief")
    assert items == before
    assert messages == [
        {"role": "system", "content": "be brief"},
        {"role": "user", "content": [{"type": "text", "text": "hi"}]},
        {"role": "assistant", "content": [{"type": "text", "text": "yo"}]},
        {
            "role": "user",
            "content": [
                {
                    "type": "image_url",
                    "image_url": {"url": "data:image/png;base64,AA", "detail": "auto"},
                }
            ],
        },
    ]
    assert responses.messages_of("plain", None) == [{"role": "user", "content": "plain"}]


def test_text_format_becomes_a_chat_response_format():
    assert responses.response_format_of({"format": {"type": "json_object"}}) == {
        "type": "json_object"
    }
    assert responses.response_format_of({"format": {"type": "text"}}) is None
    schema = {"type": "json_schema", "name": "risks", "schema": {"type": "object"}, "strict": True}
    assert responses.response_format_of({"format": schema}) == {
        "type": "json_schema",
        "json_schema": {"name": "risks", "schema": {"type": "object"}, "strict": True},
    }


def test_litellm_still_ids_a_response_chatcmpl_and_the_seam_replaces_it():
    config = LiteLLMCompletionResponsesConfig
    translate = config.transform_chat_completion_response_to_responses_api_response
    raw = translate(
        request_input="hi", responses_api_request={}, chat_completion_response=copy.deepcopy(CHAT)
    )
    assert raw.id == "chatcmpl-p1"  # the defect corrected around (issue 13)
    body = responses.response_of(copy.deepcopy(CHAT), {"temperature": 0.5}, "resp_p1", "msg_p1")
    assert body["id"] == "resp_p1" and body["object"] == "response" and body["store"] is False
    assert body["status"] == "completed" and body["temperature"] == 0.5
    (item,) = body["output"]
    assert item["id"] == "msg_p1" and item["type"] == "message" and item["role"] == "assistant"
    assert item["content"] == [{"type": "output_text", "text": "md", "annotations": []}]
    assert body["usage"] == {
        "input_tokens": 3,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 4,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 7,
    }
