"""A provider's listing read into entries (contract §19), as tables of cases: what an entry
states is kept, what it does not is unknown, and a body that is not a listing is refused whole;
and which listing each configured model is looked for in, under which name."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from gateway.config.settings import parse_config
from gateway.upstream.listing import Entry, ListingFailed, match, parse_listing
from gateway.upstream.listing_sources import sources

# one entry as OpenRouter's listing states it (its fields as documented, trimmed)
OPENROUTER = {
    "id": "meta-llama/llama-3.3-70b-instruct:free",
    "canonical_slug": "meta-llama/llama-3.3-70b-instruct",
    "name": "Meta: Llama 3.3 70B Instruct (free)",
    "context_length": 131072,
    "pricing": {"prompt": "0", "completion": "0", "request": "0", "image": "0"},
    "supported_parameters": ["max_tokens", "temperature", "tools", "tool_choice"],
    "expiration_date": "2026-12-31",
}


def test_an_openrouter_entry_keeps_what_it_states():
    (entry,) = parse_listing(json.dumps({"data": [OPENROUTER]}).encode())
    assert entry == Entry(
        id="meta-llama/llama-3.3-70b-instruct:free",
        canonical_slug="meta-llama/llama-3.3-70b-instruct",
        context_length=131072,
        free=True,
        expires="2026-12-31",
        tools=True,
    )


@pytest.mark.parametrize(
    ("stated", "free", "expires", "tools"),
    [
        ({}, None, None, None),
        ({"pricing": {"prompt": "0.0000002", "completion": "0"}}, False, None, None),
        ({"pricing": {"prompt": "0"}}, None, None, None),
        ({"pricing": {"prompt": "zero", "completion": "0"}}, None, None, None),
        ({"expiration_date": "2026-12-31T00:00:00Z"}, None, "2026-12-31", None),
        ({"expiration_date": 1798675200}, None, "2026-12-31", None),
        ({"expiration_date": "soon"}, None, None, None),
        ({"expiration_date": None, "supported_parameters": ["temperature"]}, None, None, False),
    ],
)
def test_what_an_entry_does_not_state_plainly_is_unknown(stated, free, expires, tools):
    (entry,) = parse_listing(json.dumps([{"id": "m", **stated}]).encode())  # a bare list too
    assert (entry.free, entry.expires, entry.tools) == (free, expires, tools)


@pytest.mark.parametrize(
    ("body", "why"),
    [
        (b"<html>", "is not JSON"),
        (b'{"models": []}', 'is not a list of models (no "data" list)'),
        (b'{"data": [{"id": "a"}, {"name": "b"}]}', "lists an entry without a model id"),
        (b'{"data": ["a"]}', "lists an entry without a model id"),
    ],
)
def test_a_body_that_is_not_a_listing_is_refused_whole(body, why):
    with pytest.raises(ListingFailed, match=re.escape(why)):
        parse_listing(body)


def test_a_model_is_matched_by_id_then_case_then_canonical_slug_and_free_stays_apart():
    entries = [Entry("Vendor/Big-Model"), Entry("vendor/small:free", canonical_slug="v/small")]
    assert match("Vendor/Big-Model", entries) == entries[0]
    assert match("vendor/big-model", entries) == entries[0]
    assert match("v/small", entries) == entries[1]
    assert match("vendor/small", entries) is None  # the paid one is not listed
    assert match("vendor/big-model:free", entries) is None


def test_which_listing_each_model_is_looked_for_in():
    models = [
        ("free-llama", "openrouter/meta-llama/llama-3.3-70b-instruct:free", "or", None),
        ("groq-llama", "groq/llama-3.3-70b-versatile", "groq", None),
        ("local", "openai/qwen3", "box", "http://127.0.0.1:8000/v1"),
        ("listed-local", "openai/kimi", "lab", "http://127.0.0.1:9000/v1/"),
        ("gpt", "openai/gpt-4o-mini", "openai", None),
        ("quiet", "groq/gemma", "hush", None),
    ]
    raw = {
        "model_list": [
            {
                "model_name": alias,
                "litellm_params": {
                    "model": model,
                    "api_key": "k",
                    **({"api_base": b} if b else {}),
                },
                "bench": {"connection": connection},
            }
            for alias, model, connection, b in models
        ],
        "collections": {"all": {"members": ["free-llama"]}},
        "connections": {c: {} for _, _, c, _ in models}
        | {"lab": {"listing": True}, "hush": {"listing": False}},
    }
    found = sources(parse_config(raw, base=Path(".")))
    assert [(s.connection, s.url, s.key, s.names) for s in found] == [
        ("or", "https://openrouter.ai/api/v1/models", "k",
         {"free-llama": "meta-llama/llama-3.3-70b-instruct:free"}),
        ("groq", "https://api.groq.com/openai/v1/models", "k",
         {"groq-llama": "llama-3.3-70b-versatile"}),
        ("lab", "http://127.0.0.1:9000/v1/models", "k", {"listed-local": "kimi"}),
        ("openai", "https://api.openai.com/v1/models", "k", {"gpt": "gpt-4o-mini"}),
    ]  # fmt: skip
