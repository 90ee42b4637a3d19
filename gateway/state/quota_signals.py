"""What providers say about their limits, read from response headers and error messages.

Why a module of its own: free tiers are limited per day as much as per minute, and the only
reliable word on when a limit resets is the provider's own, in one of a dozen spellings. Reading
them is pure (text and a clock in, facts out), so every form is tested in a plain table, and the
rate limits (gateway/state/limits.py) only decide what to do with the facts.

Forms read:
- `Retry-After` (seconds or an HTTP date), `retry-after-ms`;
- `X-RateLimit-Reset` (epoch seconds, epoch milliseconds, or seconds from now);
- `x-ratelimit-reset-requests` / `-tokens` (durations: `45s`, `2m59.56s`, `1h`, `500ms`);
- `x-ratelimit-remaining[-requests|-tokens]`, `x-ratelimit-limit[-requests]`;
- the IETF draft's `RateLimit-Limit/-Remaining/-Reset`, `RateLimit: limit=10, remaining=0,
  reset=30`, `RateLimit: "default";r=0;t=30` and `RateLimit-Policy: 100;w=86400`;
- a message that names a daily or monthly limit (per day, daily, RPD, quota, credits, per month),
  and a wait or reset stated in the message itself ("try again in 2m3s", a reset in its body).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
from email.utils import parsedate_to_datetime
from typing import Literal
from zoneinfo import ZoneInfo

from gateway.state.ratelimit_header import NUMBER, duration, ietf_fields, whole

Period = Literal["day", "month"]
DAY_S = 86400.0
GRACE_S = 3600.0  # a stated daily (monthly) reset is believed up to the next period plus this

_MONTHLY = re.compile(r"per[\s_-]?month|monthly|month(?:ly)?[\s_-](?:limit|quota|cap)", re.I)
_DAILY = re.compile(r"per[\s_-]?day|daily|\brpd\b", re.I)
_QUOTA = re.compile(r"quota|credits?\b", re.I)  # a daily limit, unless a minute is named
_MINUTE = re.compile(r"per[\s_-]?minute|\brpm\b|\btpm\b", re.I)
_BODY_WAIT = re.compile(
    r"(?:try again|retry)(?: after| in)?\s+((?:\d+(?:\.\d+)?\s*(?:ms|h|m|s)\s*)+"
    r"|\d+(?:\.\d+)?\s*(?:seconds?|secs?|minutes?|mins?|hours?)\b)",
    re.IGNORECASE,
)
_BODY_RESET = re.compile(r"x-ratelimit-reset[\"']?\s*[:=]\s*[\"']?(\d+(?:\.\d+)?)", re.I)
_WRAPPING = re.compile(r"^(?:(?:litellm\.)?\w+(?:Error|Exception)(?::| -)\s*)+")
# the provider, host and status a seat's error starts with (gateway/upstream/wording.py): the
# cooling's why has little room (a board cell), and says them elsewhere
_WHERE = re.compile(r"^(?:[\w.-]+ \([^()\s]*\): )?(?:\d{3} )?")
# every header read below starts with one of these
_STATING = ("x-ratelimit", "ratelimit", "retry-after")
_WORDS = {"second": 1.0, "sec": 1.0, "minute": 60.0, "min": 60.0, "hour": 3600.0}


@dataclass(frozen=True)
class Stated:
    """What one reply's headers said. Times are absolute (the caller's clock)."""

    retry_at: float | None = None  # Retry-After / retry-after-ms
    resets: tuple[tuple[str, float, bool], ...] = ()  # (header, when, exhausted)
    remaining: int | None = None  # requests left in the window
    limit: int | None = None  # requests allowed in the window
    window_s: float | None = None  # the policy's window, when stated

    @property
    def requests_reset(self) -> tuple[str, float] | None:
        """When the requests limit resets: the requests-specific header first."""
        order = ("x-ratelimit-reset-requests", "x-ratelimit-reset", "ratelimit", "ratelimit-reset")
        for wanted in order:
            for name, when, _ in self.resets:
                if name == wanted:
                    return name, when
        return None

    def wait_until(self) -> tuple[str, float] | None:
        """When a 429 carrying these headers ends: Retry-After; else the latest reset of a limit
        that is spent; else the earliest reset stated."""
        if self.retry_at is not None:
            return "Retry-After", self.retry_at
        spent = [(when, name) for name, when, exhausted in self.resets if exhausted]
        if spent:
            when, name = max(spent)
            return name, when
        if self.resets:
            name, when, _ = min(self.resets, key=lambda r: r[1])
            return name, when
        return None


_NOTHING = Stated()


@dataclass(frozen=True)
class Learned:
    """A cooldown learned from a provider: until when, why, from where (header, body, config),
    and whether `cooldown_max_s` bounds it (ordinary waits) or the *period*'s next start plus
    an hour does (a daily or monthly limit: `believed`)."""

    until: float | None  # None: the provider named no time; the default cooldown applies
    why: str
    source: str
    capped: bool = True
    period: Period | None = None  # the limit's, when it is a daily or monthly one


def reset_time(text: str, now: float) -> float | None:
    """`X-RateLimit-Reset`: epoch milliseconds, epoch seconds, seconds from now, or a duration."""
    text = text.strip()
    if NUMBER.match(text):
        value = float(text)
        if value > 1e11:
            return value / 1000.0
        if value > 1e9:
            return value
        return now + max(0.0, value)
    wait = duration(text)
    return None if wait is None else now + wait


def read_headers(headers: Mapping[str, str], now: float) -> Stated:
    """The limits a reply's headers state (names in any case)."""
    h = {str(k).lower(): str(v) for k, v in headers.items()}
    if not any(name.startswith(_STATING) for name in h):
        return _NOTHING  # a reply stating no limit (a local server's) is read no further
    retry_at = _retry_at(h, now)
    resets: list[tuple[str, float, bool]] = []
    remaining = whole(h.get("x-ratelimit-remaining-requests"))
    if remaining is None:
        remaining = whole(h.get("x-ratelimit-remaining"))
    limit = whole(h.get("x-ratelimit-limit-requests")) or whole(h.get("x-ratelimit-limit"))
    tokens_left = whole(h.get("x-ratelimit-remaining-tokens"))
    for name, left, read in (
        ("x-ratelimit-reset-requests", remaining, duration),
        ("x-ratelimit-reset-tokens", tokens_left, duration),
    ):
        if name in h and (wait := read(h[name])) is not None:
            resets.append((name, now + wait, left == 0))
    if "x-ratelimit-reset" in h and (when := reset_time(h["x-ratelimit-reset"], now)) is not None:
        resets.append(("x-ratelimit-reset", when, remaining == 0))
    ietf = ietf_fields(h)
    if ietf.remaining is not None and remaining is None:
        remaining = ietf.remaining
    if ietf.limit is not None and limit is None:
        limit = ietf.limit
    if ietf.reset is not None:
        resets.append((ietf.name, now + ietf.reset, ietf.remaining == 0))
    return Stated(retry_at, tuple(resets), remaining, limit, ietf.window)


def period_named(message: str) -> Period | None:
    """A message naming a daily or monthly limit: month, if a month is named, else day."""
    if _MONTHLY.search(message):
        return "month"
    if _DAILY.search(message) or (_QUOTA.search(message) and not _MINUTE.search(message)):
        return "day"
    return None


def body_wait(message: str, now: float) -> float | None:
    """A time the message itself states: "try again in 2m3s", or a reset its body carries."""
    found = _BODY_WAIT.search(message)
    if found:
        text = found.group(1).strip()
        word = re.match(r"(\d+(?:\.\d+)?)\s*([a-z]+)", text, re.I)
        if word and word.group(2).lower().rstrip("s") in _WORDS:
            return now + float(word.group(1)) * _WORDS[word.group(2).lower().rstrip("s")]
        wait = duration(text.replace(" ", ""))
        if wait is not None:
            return now + wait
    reset = _BODY_RESET.search(message)
    return reset_time(reset.group(1), now) if reset else None


def boundary(now: float, time_zone: str, period: Period = "day") -> float:
    """The next midnight (day) or first of the month (month) in *time_zone*, as epoch seconds."""
    zone = ZoneInfo(time_zone)
    local = datetime.fromtimestamp(now, zone)
    if period == "day":
        start = datetime(local.year, local.month, local.day, tzinfo=zone) + timedelta(days=1)
        start = datetime(start.year, start.month, start.day, tzinfo=zone)  # across a DST change
    else:
        year, month = (local.year + 1, 1) if local.month == 12 else (local.year, local.month + 1)
        start = datetime(year, month, 1, tzinfo=zone)
    return start.timestamp()


def day_of(now: float, time_zone: str) -> int:
    """The calendar day of *now* in *time_zone*, as a proleptic ordinal."""
    return datetime.fromtimestamp(now, ZoneInfo(time_zone)).date().toordinal()


def day_start(now: float, time_zone: str) -> float:
    zone = ZoneInfo(time_zone)
    local = datetime.fromtimestamp(now, zone)
    return datetime(local.year, local.month, local.day, tzinfo=zone).timestamp()


def month_span(year: int, month: int, time_zone: str) -> tuple[float, float]:
    """[start, end) of a calendar month in *time_zone*, as epoch seconds."""
    zone = ZoneInfo(time_zone)
    start = datetime(year, month, 1, tzinfo=zone)
    return start.timestamp(), boundary(start.timestamp(), time_zone, "month")


def after_429(message: str, headers: Mapping[str, str], now: float, time_zone: str) -> Learned:
    """How long a 429 cools its model. A message naming a daily or monthly limit cools until
    the stated reset, else the next day (month) boundary, never for a default minute; any other
    429 cools for what the headers or the message state, capped by the caller."""
    stated = read_headers(headers, now)
    period = period_named(message)
    if period is None and stated.window_s is not None and stated.window_s >= DAY_S:
        period = "day" if stated.window_s < 28 * DAY_S else "month"
    when = stated.wait_until()
    source = f"header {when[0]}" if when else None
    if when is None and (in_body := body_wait(message, now)) is not None:
        when, source = ("message", in_body), "body"
    if period is not None:
        named = f"{'daily' if period == 'day' else 'monthly'} limit ({_excerpt(message)})"
        if when is not None and when[1] > now:
            why = f"{named}; {_stated(when[1] - now)}"
            return Learned(when[1], why, source or "", False, period)
        until = boundary(now, time_zone, period)
        why = f"{named}; until the next {period} ({time_zone})"
        return Learned(until, why, "body", False, period)
    if when is not None:
        why = f"rate limited (429); {_stated(when[1] - now)}"
        return Learned(max(now, when[1]), why, source or "", True)
    return Learned(None, "rate limited (429)", "default", True)


def _stated(wait_s: float) -> str:
    """The wait a 429 stated, as the cooling it applies (a day or more: until its reset)."""
    if wait_s >= DAY_S:
        return "until the stated reset"
    return f"the {max(0.0, wait_s):.0f} s it stated"


def after_success(headers: Mapping[str, str], now: float, default_s: float) -> Learned | None:
    """A success that says no requests remain cools the model until the reset, before the next
    call meets a 429 (no reset stated: the default cooldown)."""
    stated = read_headers(headers, now)
    if stated.remaining is None or stated.remaining > 0:
        return None
    reset = stated.requests_reset
    window = stated.window_s
    period: Period | None = None
    if window is not None and window >= DAY_S:
        period = "day" if window < 28 * DAY_S else "month"
    if reset is None:
        return Learned(now + default_s, "no requests remaining (header)", "header", True)
    return Learned(
        reset[1], f"no requests remaining until the reset ({reset[0]})", f"header {reset[0]}",
        period is None, period,
    )  # fmt: skip


def believed(learned: Learned, now: float, time_zone: str, max_s: float) -> Learned:
    """A stated end believed only up to a bound: a daily limit until the next quota day starts
    plus an hour (a monthly one, the next month), any other wait `gateway.cooldown_max_s`.
    Past it, the end is the bound and `why` says so: a 429 stating a reset in the year 2286
    must not take a model out for good."""
    if learned.until is None:
        return learned
    if learned.capped:
        bound, rule = now + max_s, f"gateway.cooldown_max_s ({max_s:g} s)"
    else:
        period = learned.period or "day"
        bound = boundary(now, time_zone, period) + GRACE_S
        rule = f"the start of the next quota {period} plus an hour"
    if learned.until <= bound:
        return learned
    why = f"{learned.why}; capped: the stated end ({moment(learned.until)}) is past {rule}"
    return replace(learned, until=bound, why=why)


def moment(when: float) -> str:
    """An epoch time as UTC words, however far off it is."""
    try:
        return datetime.fromtimestamp(when, UTC).strftime("%Y-%m-%d %H:%M UTC")
    except (OverflowError, OSError, ValueError):
        return f"{when:.0f} s after 1970"


def scarce(stated: Stated) -> bool:
    """Few requests left in the window: at most 2, or a tenth of the limit."""
    left = stated.remaining
    if left is None:
        return False
    return left <= 2 or (stated.limit is not None and left <= stated.limit / 10)


def _retry_at(h: dict[str, str], now: float) -> float | None:
    if "retry-after-ms" in h:
        try:
            return now + max(0.0, float(h["retry-after-ms"]) / 1000.0)
        except ValueError:
            pass
    value = h.get("retry-after")
    if value is None:
        return None
    if NUMBER.match(value):
        return now + max(0.0, float(value))
    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max(now, when.timestamp())


def _excerpt(message: str) -> str:
    """The provider's own words, without the exception names litellm puts before them."""
    text = _WHERE.sub("", _WRAPPING.sub("", " ".join(message.split())))
    return text if len(text) <= 60 else text[:57].rsplit(" ", 1)[0] + "..."
