"""What litellm knows of a model's provider: the parameters it takes, and an assistant prefill."""

from __future__ import annotations

from gateway.upstream.params import supported_params, takes_prefill


def test_litellms_model_map_says_which_models_take_an_assistant_prefill():
    assert takes_prefill("anthropic/claude-sonnet-4-20250514")
    assert takes_prefill("deepseek/deepseek-chat")
    assert not takes_prefill("openai/gpt-4o")
    assert not takes_prefill("openai/sim-alpha")  # a model litellm does not know: told instead
    assert not takes_prefill("no-such-provider/model")


def test_a_model_litellm_cannot_place_takes_no_hint():
    assert supported_params("no-such-provider/model") == frozenset()
    assert "temperature" in supported_params("openai/gpt-4o")
