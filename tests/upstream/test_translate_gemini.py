"""litellm's Gemini adapter, pinned: an upgrade that moves it, reshapes it or mends the defects
worked around in gateway/upstream/translate/gemini.py fails here, loudly."""

from __future__ import annotations

import inspect
from importlib.metadata import version

import pytest

from gateway.upstream.translate import gemini as translate

litellm_adapters = pytest.importorskip("litellm.google_genai.adapters")


def test_litellm_is_the_pinned_version():
    assert version("litellm") == "1.110.2"


def test_the_adapter_is_where_the_seam_imports_it_with_the_same_signature():
    adapter = litellm_adapters.GoogleGenAIAdapter
    params = inspect.signature(adapter.translate_generate_content_to_completion).parameters
    assert list(params)[:5] == ["self", "model", "contents", "config", "litellm_params"]
    assert "kwargs" in params  # systemInstruction, tools and toolConfig arrive as keywords
    assert hasattr(litellm_adapters, "GoogleGenAIStreamWrapper")


def test_the_adapter_still_names_tool_calls_after_their_function_so_two_collide():
    """Why route mode must make its own ids (issue 14): two calls of one function, one id."""
    call = {"functionCall": {"name": "lookup", "args": {"q": 1}}}
    request = litellm_adapters.GoogleGenAIAdapter().translate_generate_content_to_completion(
        model="openai/panel",
        contents=[
            {"role": "user", "parts": [{"text": "go"}]},
            {"role": "model", "parts": [call, call]},
        ],
    )
    ids = [c["id"] for c in request["messages"][1]["tool_calls"]]
    assert ids == ["call_lookup", "call_lookup"]


def test_the_adapter_keeps_only_the_first_system_part_which_is_why_the_reader_joins_them():
    request = litellm_adapters.GoogleGenAIAdapter().translate_generate_content_to_completion(
        model="openai/panel",
        contents=[{"role": "user", "parts": [{"text": "go"}]}],
        systemInstruction={"parts": [{"text": "one"}, {"text": "two"}]},
    )
    assert request["messages"][0] == {"role": "system", "content": "one"}
    joined = translate.to_chat([{"role": "user", "parts": [{"text": "go"}]}], "one\n\ntwo", None)
    assert joined["messages"][0] == {"role": "system", "content": "one\n\ntwo"}


def test_the_adapter_leaves_out_json_without_a_schema_and_seed_which_the_reader_adds():
    config = {"responseMimeType": "application/json", "seed": 3, "temperature": 0.5}
    request = translate.to_chat([{"parts": [{"text": "go"}]}], None, config)
    assert "response_format" not in request and "seed" not in request
    assert request["temperature"] == 0.5


def test_to_chat_does_not_change_what_it_is_given():
    schema = {"type": "OBJECT", "properties": {"a": {"type": "STRING"}}, "propertyOrdering": ["a"]}
    config = {"responseMimeType": "application/json", "responseSchema": schema}
    before = repr(config)
    request = translate.to_chat([{"parts": [{"text": "go"}]}], None, config)
    assert repr(config) == before
    assert request["response_format"]["json_schema"]["schema"]["type"] == "object"
    assert "propertyOrdering" not in request["response_format"]["json_schema"]["schema"]


def test_image_parts_come_out_as_plain_openai_image_urls():
    part = {"inlineData": {"mimeType": "image/png", "data": "AAAA"}}
    request = translate.to_chat([{"parts": [{"text": "see"}, part]}], None, None)
    assert request["messages"][0]["content"][1] == {
        "type": "image_url",
        "image_url": {"url": "data:image/png;base64,AAAA"},
    }


def test_to_chat_gives_each_call_its_id_and_puts_tool_results_before_the_contents_text():
    """The adapter's two habits route mode corrects: `call_<name>` ids, and a user content's
    text ahead of its function responses (OpenAI wants the results right after the calls)."""
    call = {"functionCall": {"name": "lookup", "args": {"q": 1}}}
    answer = {"functionResponse": {"name": "lookup", "response": {"r": 1}}}
    contents = [
        {"role": "user", "parts": [{"text": "go"}]},
        {"role": "model", "parts": [call, call]},
        {"role": "user", "parts": [answer, {"text": "and then?"}, answer]},
    ]
    ids = (["call_a", "call_b"], ["call_a", "call_b"])
    messages = translate.to_chat(contents, None, None, call_ids=ids)["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "tool", "tool", "user"]
    assert [c["id"] for c in messages[1]["tool_calls"]] == ["call_a", "call_b"]
    assert [m["tool_call_id"] for m in messages[2:4]] == ["call_a", "call_b"]
    with pytest.raises(ValueError):  # a part the adapter dropped leaves an id unplaced
        translate.to_chat(contents, None, None, call_ids=(["call_a"], ["call_a", "call_b"]))
