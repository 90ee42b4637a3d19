"""The month benchmarks/churn.py plays: a bench of twelve models, what becomes of each, the
collections asked, and each gateway's config.

Why apart from the run: the fates are the benchmark's claims about the world (what a withdrawn
slug, an ended free period or an account setting says, and when), and the figures are read
against them; both gateways get the very same bench and the very same month.

The days are those of a 30-day month; a shorter `days` keeps each event at the same share of it
(an outage still lasts an hour).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

DAY = 86400.0
HOUR = 3600.0
MONTH_DAYS = 30.0


@dataclass(frozen=True)
class Fate:
    """What becomes of one model: from `fails_on` (a day of the month) it answers `status` with
    `message`; from `back_on` it answers again. `dead`: withdrawn for good (only these should
    ever be retired); `retirable`: its failure may retire it while it lasts (gone or paywalled)."""

    alias: str
    what: str
    fails_on: float | None = None
    back_on: float | None = None
    status: int = 200
    message: str = ""
    dead: bool = False
    retirable: bool = False
    every: int | None = None  # fails one call in this many, all month
    lasts_s: float | None = None  # a failure of fixed length (an hour's outage)


def _gone(alias: str) -> str:
    return f"The model `sim-{alias}` does not exist"


FATES = (
    Fate("alpha", "healthy"),
    Fate("beta", "healthy"),
    Fate("gamma", "healthy"),
    Fate(
        "withdrawn-a",
        "withdrawn (404 does not exist)",
        fails_on=3,
        status=404,
        message=_gone("withdrawn-a"),
        dead=True,
        retirable=True,
    ),
    Fate(
        "withdrawn-b",
        "withdrawn (404 no endpoints found)",
        fails_on=9,
        status=404,
        message="No endpoints found for sim-withdrawn-b.",
        dead=True,
        retirable=True,
    ),
    Fate(
        "end-of-life",
        "end of life (410)",
        fails_on=6,
        status=410,
        message="This model has reached its end of life and is no longer available.",
        dead=True,
        retirable=True,
    ),
    Fate(
        "free-trial",
        "free period ended (404)",
        fails_on=14,
        status=404,
        message="The free period for sim-free-trial:free has ended. "
        "Please migrate to the paid slug sim-free-trial.",
        dead=True,
        retirable=True,
    ),
    Fate(
        "revoked",
        "key revoked (401)",
        fails_on=8,
        back_on=11,
        status=401,
        message="Invalid API key provided.",
    ),
    Fate(
        "data-policy",
        "account setting (404 data policy)",
        fails_on=4,
        back_on=24,
        status=404,
        message="No endpoints found matching your data policy (Free model training). "
        "Configure: https://openrouter.ai/settings/privacy",
    ),
    Fate(
        "outage",
        "provider down (503)",
        fails_on=17,
        status=503,
        message="Service Unavailable",
        lasts_s=HOUR,
    ),
    Fate(
        "flaky",
        "flaky (500 on one call in 5)",
        status=500,
        message="Internal server error",
        every=5,
    ),
    Fate(
        "returns",
        "withdrawn (404)",
        fails_on=12,
        back_on=22,
        status=404,
        message=_gone("returns"),
        retirable=True,
    ),
)
ALIASES = tuple(f.alias for f in FATES)
# Four collections asked in turn, three members each; the rest of the bench comes in as
# explorers (two a panel) and reserves (two).
COLLECTIONS = {
    "review": ["alpha", "withdrawn-a", "free-trial"],
    "design": ["beta", "end-of-life", "revoked"],
    "ops": ["gamma", "data-policy", "outage"],
    "misc": ["flaky", "returns", "withdrawn-b"],
}


def served(alias: str) -> str:
    return f"sim-{alias}"


def when(day: float, days: float) -> float:
    """Seconds from the month's start of *day* of a 30-day month, in a month of *days*."""
    return day * DAY * days / MONTH_DAYS


def window(fate: Fate, days: float) -> tuple[float, float] | None:
    """(from, until) in seconds from the month's start while *fate*'s model fails (until the
    month's end if it never comes back); None for a model that never fails this way."""
    if fate.fails_on is None or fate.every is not None:
        return None
    start = when(fate.fails_on, days)
    if fate.lasts_s is not None:
        return start, start + fate.lasts_s
    end = when(fate.back_on, days) if fate.back_on is not None else days * DAY
    return start, end


def sim_spec(days: float) -> dict[str, Any]:
    """The simulator's behaviours: each model's timeline, its phases from the month's start."""
    models: dict[str, Any] = {}
    for fate in FATES:
        behaviour: dict[str, Any] = {}
        fault = {"status": fate.status, "error_message": fate.message}
        if fate.every is not None:
            behaviour = {**fault, "fail_every": fate.every}
        elif (span := window(fate, days)) is not None:
            phases = [{"at_s": span[0], **fault}]
            if span[1] < days * DAY:
                phases.append({"at_s": span[1]})
            behaviour = {"timeline": phases}
        models[served(fate.alias)] = behaviour
    return {"models": models}


def config(sim: str, store: str, lifecycle: dict[str, Any] | None) -> dict[str, Any]:
    """A gateway's config for the bench; *lifecycle* only for a gateway that knows the word."""
    raw: dict[str, Any] = {
        "model_list": [
            {
                "model_name": alias,
                "litellm_params": {
                    "model": f"openai/{served(alias)}",
                    "api_base": f"{sim}/v1",
                    "api_key": "sim",
                },
                "bench": {"connection": alias, "role": "general"},
            }
            for alias in ALIASES
        ],
        "collections": {
            name: {"members": members, "description": f"the {name} panel"}
            for name, members in COLLECTIONS.items()
        },
        "gateway": {"max_calls": 5, "max_explorers": 2, "reserves": 2, "seat_timeout_s": 30},
        "store": store,
    }
    if lifecycle is not None:
        raw["lifecycle"] = lifecycle
    return raw


def scaled_lifecycle(speed: float) -> dict[str, Any]:
    """This gateway's `lifecycle:` defaults with every time (`*_s`) divided by *speed*: the
    gateway's clock is the wall, so its waits shrink as the simulator's clock runs faster."""
    from gateway.config.schema import LifecycleSettings

    defaults = LifecycleSettings().model_dump()
    return {
        name: value / speed if name.endswith("_s") else value for name, value in defaults.items()
    }
