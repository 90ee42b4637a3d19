"""A bench whose members differ in what their providers take: `old` is served as a model litellm
knows takes no `reasoning_effort` (OpenAI's gpt-4o), every other member as an unknown OpenAI
model, which litellm says takes it. Both are answered by the simulated upstream."""

from __future__ import annotations

from typing import Any

from tests.helpers.bench import bench_raw

OLD = "gpt-4o"  # the model the `old` member is served as


def mixed_raw(sim_url: str, **gateway: Any) -> dict[str, Any]:
    """The test bench plus `old`; `mixed` routes old first, then alpha; `pair` seats both."""
    raw = bench_raw(sim_url, route_explore=0, max_explorers=0, reserves=0, **gateway)
    raw["model_list"].append(
        {
            "model_name": "old",
            "litellm_params": {
                "model": f"openai/{OLD}",
                "api_base": f"{sim_url}/v1",
                "api_key": "sim-key",
            },
            "bench": {"connection": "four"},
        }
    )
    raw["collections"]["mixed"] = {"members": ["old", "alpha"], "reply": "route"}
    raw["collections"]["pair"] = {"members": ["old", "alpha"]}
    return raw


def dropped(response: Any) -> list[str]:
    """The names an X-Bench-Dropped header lists (none when it is absent)."""
    value = response.headers.get("x-bench-dropped", "")
    return [name.strip() for name in value.split(",") if name.strip()]
