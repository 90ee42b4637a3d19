"""The failure classes of the contract's table (§18), one case a row: a provider's status and
words, or the gateway's own kind of failure, and the class they make."""

from __future__ import annotations

import pytest

from gateway.request.failure import FailureClass, classify

# case: (status, message, the gateway's kind, class)
CASES = {
    "a content filter's 400 is the request's": (
        400,
        "litellm.BadRequestError: Output blocked by content filtering policy",
        "refused",
        "refused",
    ),
    "a 422 on a parameter": (
        422,
        "Unprocessable Entity: temperature must be <= 2",
        "refused",
        "refused",
    ),
    "a prompt over the window": (
        400,
        "maximum context length is 4096 tokens",
        "context_window",
        "refused",
    ),
    "a 429": (429, "Rate limit exceeded: free-models-per-day", "rate_limit", "rate_limited"),
    "a seat not called while its model cools": (None, "cooling 30 s", "cooling", "rate_limited"),
    "a quota notice in a 200": (200, "You exceeded your current quota", "notice", "rate_limited"),
    "a 503": (503, "Service Unavailable", "upstream", "capacity"),
    "Anthropic's 529 overloaded": (529, "Overloaded", "upstream", "capacity"),
    "overloaded without a status": (
        None,
        "the engine is currently overloaded",
        "upstream",
        "capacity",
    ),
    "a refused connection": (
        None,
        "cannot reach 127.0.0.1:9: Connection refused",
        "connection",
        "capacity",
    ),
    "a stream that broke off": (None, "stream broke off: peer closed", "broken_stream", "capacity"),
    "no answer in time": (None, "no answer within 30 s", "timeout", "timeout"),
    "a 200 with no text and no tool call": (
        200,
        "the model returned an empty answer",
        "empty",
        "empty",
    ),
    "a 401": (401, "Unauthorized", "auth", "signin"),
    "a 403 naming the key": (403, "Your API key was revoked", "auth", "signin"),
    "a 403 naming a token": (403, "Invalid TOKEN", "auth", "signin"),
    "a 403 naming authentication": (403, "Authentication failed for this org", "auth", "signin"),
    "a 402": (402, "Payment Required", "upstream", "entitlement"),
    "a 402 on insufficient credit": (
        402,
        "Insufficient credits. Add more",
        "upstream",
        "entitlement",
    ),
    "insufficient credit without a 402": (
        400,
        "Insufficient Credit on this account",
        "refused",
        "entitlement",
    ),
    "a 403 for a region": (
        403,
        "This model is not available in your region.",
        "auth",
        "entitlement",
    ),
    "not in the subscription": (
        403,
        "Model not available in your subscription",
        "auth",
        "entitlement",
    ),
    "OpenRouter's data policy 404": (
        404,
        "No endpoints found matching your data policy (Free model publication). Configure: "
        "https://openrouter.ai/settings/privacy",
        "upstream",
        "entitlement",
    ),
    "OpenRouter's withdrawn slug": (
        404,
        "No endpoints found for deepseek/deepseek-r1:free.",
        "upstream",
        "gone",
    ),
    "a 404 that does not exist": (404, "The model `gone` does not exist", "upstream", "gone"),
    "a 404 model not found": (404, "Model not found", "upstream", "gone"),
    "a 404 unknown model": (404, "Unknown model: sim-x", "upstream", "gone"),
    "a 404 no longer offered": (404, "This model is no longer offered.", "upstream", "gone"),
    "a 404 decommissioned": (404, "The model has been decommissioned", "upstream", "gone"),
    "NVIDIA's 410 end of life": (
        410,
        "The model 'meta/llama2-70b' has reached its end of life on 2025-01-01",
        "upstream",
        "gone",
    ),
    "a bare 410": (410, "Gone", "upstream", "gone"),
    "a 404 without those words": (404, "Not Found", "upstream", "other"),
    "a 400 saying a parameter does not exist is the request's": (
        400,
        "The parameter `foo` does not exist",
        "refused",
        "refused",
    ),
    "a free period that ended": (
        404,
        "The free DeepSeek V3 period has ended. To continue, migrate to the paid slug deepseek/v3",
        "upstream",
        "paywalled",
    ),
    "no longer available for free (not gone)": (
        404,
        "This model is no longer available for free.",
        "upstream",
        "paywalled",
    ),
    "a 409": (409, "Conflict", "upstream", "other"),
    "an internal error in the gateway": (None, "internal error: KeyError", "internal", "other"),
}


@pytest.mark.parametrize("case", CASES)
def test_each_failure_is_its_class(case):
    status, message, kind, expected = CASES[case]
    assert classify(status, message, kind) == expected


def test_the_wording_is_read_without_regard_to_case():
    said = "NO ENDPOINTS FOUND MATCHING YOUR DATA POLICY"
    assert classify(404, said) == classify(404, said.lower()) == FailureClass.ENTITLEMENT


def test_only_a_refusal_and_a_timeout_keep_their_chair():
    keep = {c for c in FailureClass if not c.takes_a_reserve}
    assert keep == {FailureClass.REFUSED, FailureClass.TIMEOUT}
