"""Every form in which providers state their limits, read by the pure quota_signals module."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from gateway.state.quota_signals import (
    after_429,
    after_success,
    believed,
    body_wait,
    boundary,
    duration,
    period_named,
    read_headers,
    reset_time,
    scarce,
)

NOW = datetime(2025, 3, 6, 22, 0, tzinfo=UTC).timestamp()  # 22:00 UTC


@pytest.mark.parametrize(
    ("text", "seconds"),
    [
        ("45s", 45.0),
        ("2m59.56s", 179.56),
        ("1h", 3600.0),
        ("500ms", 0.5),
        ("1h2m3s", 3723.0),
        ("6m0s", 360.0),
        ("30", 30.0),
        ("0.5", 0.5),
        ("soon", None),
        ("5 parsecs", None),
    ],
)
def test_durations_in_every_spelling(text, seconds):
    found = duration(text)
    assert found == (None if seconds is None else pytest.approx(seconds))


@pytest.mark.parametrize(
    ("text", "at"),
    [
        (str(int(NOW + 7200)), NOW + 7200),  # epoch seconds
        (str(int((NOW + 7200) * 1000)), NOW + 7200),  # epoch milliseconds
        ("60", NOW + 60),  # seconds from now
        ("1m30s", NOW + 90),
    ],
)
def test_x_ratelimit_reset_as_epoch_seconds_milliseconds_or_a_wait(text, at):
    assert reset_time(text, NOW) == pytest.approx(at)


@pytest.mark.parametrize(
    ("headers", "name", "at"),
    [
        ({"Retry-After": "30"}, "Retry-After", NOW + 30),
        ({"retry-after-ms": "1500"}, "Retry-After", NOW + 1.5),
        ({"Retry-After": "Thu, 06 Mar 2025 22:05:00 GMT"}, "Retry-After", NOW + 300),
        ({"X-RateLimit-Reset": str(int(NOW + 7200))}, "x-ratelimit-reset", NOW + 7200),
        ({"X-RateLimit-Reset": str(int(NOW + 7200) * 1000)}, "x-ratelimit-reset", NOW + 7200),
        (
            {"x-ratelimit-reset-requests": "2m59.56s", "x-ratelimit-remaining-requests": "0"},
            "x-ratelimit-reset-requests",
            NOW + 179.56,
        ),
        (
            {
                "x-ratelimit-reset-requests": "1h",
                "x-ratelimit-remaining-requests": "4",
                "x-ratelimit-reset-tokens": "45s",
                "x-ratelimit-remaining-tokens": "0",
            },
            "x-ratelimit-reset-tokens",  # the spent limit, not the earlier or later one
            NOW + 45,
        ),
        ({"RateLimit": "limit=10, remaining=0, reset=30"}, "ratelimit", NOW + 30),
        ({"RateLimit": '"burst";r=3;t=5, "day";r=0;t=600'}, "ratelimit", NOW + 600),
        ({"RateLimit-Remaining": "0", "RateLimit-Reset": "12"}, "ratelimit-reset", NOW + 12),
    ],
)
def test_when_a_429_ends_by_every_header_form(headers, name, at):
    when = read_headers(headers, NOW).wait_until()
    assert when is not None and when[0] == name and when[1] == pytest.approx(at)


@pytest.mark.parametrize(
    ("headers", "remaining", "limit"),
    [
        ({"x-ratelimit-remaining-requests": "0", "x-ratelimit-limit-requests": "50"}, 0, 50),
        ({"X-RateLimit-Remaining": "7", "X-RateLimit-Limit": "100"}, 7, 100),
        ({"RateLimit": "limit=10, remaining=0, reset=30"}, 0, 10),
        (
            {"RateLimit": '"default";r=0;t=30', "RateLimit-Policy": '"default";q=100;w=86400'},
            0,
            None,
        ),
        ({"RateLimit-Limit": "20", "RateLimit-Remaining": "19"}, 19, 20),
        ({}, None, None),
    ],
)
def test_remaining_and_limit_by_every_header_form(headers, remaining, limit):
    stated = read_headers(headers, NOW)
    assert (stated.remaining, stated.limit) == (remaining, limit)


def test_a_reply_with_only_ordinary_headers_states_nothing():
    ordinary = {"Content-Type": "application/json", "Content-Length": "312", "Server": "uvicorn"}
    stated = read_headers(ordinary, NOW)
    assert stated.retry_at is None and stated.resets == () and stated.window_s is None
    assert (stated.remaining, stated.limit, stated.wait_until()) == (None, None, None)
    assert after_success(ordinary, NOW, 60.0) is None


def test_a_limit_header_among_ordinary_ones_is_still_read():
    headers = {"Server": "uvicorn", "Retry-After": "12", "X-RateLimit-Remaining-Requests": "0"}
    stated = read_headers(headers, NOW)
    assert (stated.retry_at, stated.remaining) == (NOW + 12, 0)


@pytest.mark.parametrize(
    ("message", "period"),
    [
        ("Rate limit exceeded: free-models-per-day", "day"),
        ("You have reached your daily limit", "day"),
        ("RPD limit reached for this model", "day"),
        ("Requests per day (RPD) exhausted", "day"),
        ("You exceeded your current quota, please check your plan", "day"),
        ("Insufficient credits: add more to continue", "day"),
        ("Quota exceeded: GenerateRequestsPerDayPerProjectPerModel-FreeTier", "day"),
        ("Monthly limit reached", "month"),
        ("You have used your requests per month", "month"),
        ("Quota exceeded: GenerateRequestsPerMinutePerProjectPerModel-FreeTier", None),
        ("Rate limit reached for requests", None),
        ("Too many requests, slow down", None),
    ],
)
def test_messages_naming_a_daily_or_monthly_limit(message, period):
    assert period_named(message) == period


@pytest.mark.parametrize(
    ("message", "at"),
    [
        ("Rate limit reached. Please try again in 20s.", NOW + 20),
        ("Please try again in 2m59.56s", NOW + 179.56),
        ("Please retry in 41.0s", NOW + 41),
        ("Please try again in 500ms", NOW + 0.5),
        ("retry after 30 seconds", NOW + 30),
        ("try again in 2 minutes", NOW + 120),
        (f'{{"headers":{{"X-RateLimit-Reset":"{int((NOW + 60) * 1000)}"}}}}', NOW + 60),
        ("slow down", None),
    ],
)
def test_a_wait_or_reset_stated_in_the_message(message, at):
    found = body_wait(message, NOW)
    assert found == (None if at is None else pytest.approx(at))


def test_a_daily_429_cools_until_the_stated_reset_uncapped():
    learned = after_429(
        "Rate limit exceeded: free-models-per-day",
        {"X-RateLimit-Reset": str(int(NOW + 7200) * 1000)},
        NOW,
        "UTC",
    )
    assert learned.until == pytest.approx(NOW + 7200) and not learned.capped
    assert learned.source == "header x-ratelimit-reset" and "daily limit" in learned.why


def test_a_daily_429_with_no_stated_reset_cools_until_midnight_in_the_quota_zone():
    learned = after_429("daily limit reached", {}, NOW, "UTC")
    assert learned.until == datetime(2025, 3, 7, tzinfo=UTC).timestamp()
    assert (learned.source, learned.capped) == ("body", False)
    # 22:00 UTC is already the 7th in Tokyo: the next midnight there is 15:00 UTC on the 7th
    tokyo = after_429("daily limit reached", {}, NOW, "Asia/Tokyo")
    assert tokyo.until == datetime(2025, 3, 7, 15, tzinfo=UTC).timestamp()


def test_a_monthly_429_cools_until_the_first_of_the_next_month():
    learned = after_429("monthly quota exhausted", {}, NOW, "UTC")
    assert learned.until == datetime(2025, 4, 1, tzinfo=UTC).timestamp()


def test_a_policy_with_a_day_long_window_makes_a_429_daily():
    headers = {"RateLimit-Policy": "50;w=86400"}
    learned = after_429("Too many requests", headers, NOW, "UTC")
    assert learned.until == boundary(NOW, "UTC") and not learned.capped


def test_an_ordinary_429_states_its_wait_or_leaves_the_default():
    stated = after_429("slow down", {"Retry-After": "30"}, NOW, "UTC")
    assert (stated.until, stated.capped, stated.source) == (NOW + 30, True, "header Retry-After")
    in_body = after_429("Please try again in 20s", {}, NOW, "UTC")
    assert (in_body.until, in_body.source) == (NOW + 20, "body")
    silent = after_429("slow down", {}, NOW, "UTC")
    assert (silent.until, silent.source) == (None, "default")


@pytest.mark.parametrize(
    ("headers", "until"),
    [
        ({"x-ratelimit-remaining-requests": "0", "x-ratelimit-reset-requests": "45s"}, NOW + 45),
        ({"X-RateLimit-Remaining": "0", "X-RateLimit-Reset": str(int(NOW + 600))}, NOW + 600),
        ({"RateLimit": "limit=10, remaining=0, reset=30"}, NOW + 30),
        ({"RateLimit": '"default";r=0;t=90'}, NOW + 90),
        ({"x-ratelimit-remaining-requests": "0"}, NOW + 60),  # no reset stated: the default
        ({"x-ratelimit-remaining-requests": "3", "x-ratelimit-reset-requests": "45s"}, None),
        ({}, None),
    ],
)
def test_a_success_with_nothing_remaining_cools_until_its_reset(headers, until):
    learned = after_success(headers, NOW, 60.0)
    assert (learned.until if learned else None) == (None if until is None else pytest.approx(until))


@pytest.mark.parametrize(
    ("headers", "low"),
    [
        ({"x-ratelimit-remaining-requests": "2"}, True),
        ({"x-ratelimit-remaining-requests": "9", "x-ratelimit-limit-requests": "100"}, True),
        ({"x-ratelimit-remaining-requests": "50", "x-ratelimit-limit-requests": "100"}, False),
        ({"RateLimit": "limit=100, remaining=1, reset=30"}, True),
        ({}, False),
    ],
)
def test_a_low_remaining_count_is_scarce(headers, low):
    assert scarce(read_headers(headers, NOW)) is low


MIDNIGHT = datetime(2025, 3, 7, tzinfo=UTC).timestamp()
APRIL = datetime(2025, 4, 1, tzinfo=UTC).timestamp()


@pytest.mark.parametrize(
    ("message", "headers", "until", "capped"),
    [
        # a daily limit: believed until the next quota day starts plus an hour
        ("free-models-per-day", {"X-RateLimit-Reset": "9999999999999"}, MIDNIGHT + 3600, True),
        (
            "free-models-per-day",
            {"X-RateLimit-Reset": str(MIDNIGHT + 1800)},
            MIDNIGHT + 1800,
            False,
        ),
        ("daily quota", {"Retry-After": "999999999"}, MIDNIGHT + 3600, True),
        # a monthly one: the next month plus an hour
        ("monthly limit reached", {"Retry-After": "99999999"}, APRIL + 3600, True),
        # anything else: cooldown_max_s
        ("slow down", {"Retry-After": "99999999"}, NOW + 600, True),
        ("slow down", {"retry-after-ms": "120000"}, NOW + 120, False),
    ],
)
def test_a_stated_end_is_believed_only_up_to_its_bound(message, headers, until, capped):
    learned = believed(after_429(message, headers, NOW, "UTC"), NOW, "UTC", 600)
    assert learned.until == until
    assert ("capped:" in learned.why) is capped


def test_a_success_with_a_daily_window_is_bounded_by_the_next_day():
    headers = {
        "x-ratelimit-remaining-requests": "0",
        "x-ratelimit-reset-requests": "99999999s",
        "RateLimit-Policy": "100;w=86400",
    }
    learned = believed(after_success(headers, NOW, 60), NOW, "UTC", 600)
    assert learned is not None and learned.until == MIDNIGHT + 3600 and "capped" in learned.why
