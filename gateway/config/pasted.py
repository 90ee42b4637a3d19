"""A LiteLLM proxy config pasted in keeps what it relied on, or is told that it does not.

LiteLLM's proxy reads a model's request caps from `litellm_params` (`rpm`, `tpm`) and guards
itself with `general_settings.master_key`. The bench has its own places for both: a model's
`bench.rpm`, and `gateway.require_keys` with keys made by `bench-gateway keys create`. Quietly
dropping them would leave a user believing a model is capped, or the gateway locked, when it is
neither; so the rpm becomes the model's cap, the tpm is named as ignored (the bench counts
requests, not tokens), and a master key is refused with what to write instead.
"""

from __future__ import annotations

from typing import Any

from gateway.config.schema import LITELLM_SECTIONS
from gateway.config.slips import looks_like_a_key
from gateway.config.words import got, where

IGNORED = "ignored (LiteLLM proxy settings, not used by the bench)"


def as_pasted(
    raw: dict[Any, Any], notes: list[str], warnings: list[str], problems: list[str]
) -> dict[Any, Any]:
    """*raw* with each model's LiteLLM `rpm` moved to `bench.rpm` and its `tpm` dropped (both
    named in *notes*); a key written into the file named in *warnings*; a master key refused."""
    sections = [name for name in LITELLM_SECTIONS if name in raw]
    if sections:
        notes.append(f"{IGNORED}: {', '.join(sections)}")
    general = raw.get("general_settings")
    if isinstance(general, dict) and general.get("master_key") is not None:
        problems.append(
            f"{where(('general_settings', 'master_key'))}: this gateway does not read LiteLLM's "
            "master key, and would answer anyone without it: set gateway.require_keys: true, "
            "create a key with `bench-gateway keys create NAME`, and remove master_key"
        )
    entries = raw.get("model_list")
    if not isinstance(entries, list):
        return raw
    kept = [_entry(i, e, notes, warnings, problems) for i, e in enumerate(entries)]
    return {**raw, "model_list": kept}


def _entry(
    index: int, entry: Any, notes: list[str], warnings: list[str], problems: list[str]
) -> Any:
    if not (isinstance(entry, dict) and isinstance(entry.get("litellm_params"), dict)):
        return entry
    params = dict(entry["litellm_params"])
    at = ("model_list", index, "litellm_params")
    if looks_like_a_key(params.get("api_key")):
        warnings.append(
            f"{where((*at, 'api_key'))}: a real key is written into the file (whoever reads the "
            "file or a backup of it has it): put it in the environment and write "
            "api_key: os.environ/NAME"
        )
    if "tpm" in params:
        del params["tpm"]
        notes.append(
            f"{where((*at, 'tpm'))}: ignored: the bench has no token cap (it caps requests: "
            "bench.rpm, bench.rpd)"
        )
    if "rpm" not in params:
        return {**entry, "litellm_params": params}
    rpm = params.pop("rpm")
    bench = entry.get("bench")
    if not (type(rpm) is int and rpm >= 1):
        problems.append(
            f"{where((*at, 'rpm'))}: must be a whole number of at least 1, got {got(rpm)}"
        )
        return {**entry, "litellm_params": params}
    if isinstance(bench, dict) and bench.get("rpm") is not None:
        notes.append(
            f"{where((*at, 'rpm'))}: ignored: bench.rpm ({got(bench['rpm'])}) is this model's cap"
        )
        return {**entry, "litellm_params": params}
    if bench is not None and not isinstance(bench, dict):
        return {**entry, "litellm_params": params}  # the wrong `bench:` is named by its check
    notes.append(f"{where((*at, 'rpm'))}: kept as this model's cap (bench.rpm: {rpm})")
    return {**entry, "litellm_params": params, "bench": {**(bench or {}), "rpm": rpm}}
