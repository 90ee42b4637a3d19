"""What a reload changes: the models and collections one config has that another lacks.

Why a module of its own: `POST /bench/reload` answers with it, the reload's log line names it,
and new models are onboarded from it (gateway/panel/onboard.py), so the three read one answer.
Pure: two configs in, names out.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from gateway.config.settings import Config


@dataclass(frozen=True)
class Changes:
    added: tuple[str, ...] = ()  # models the new config has and the running one lacks
    removed: tuple[str, ...] = ()
    changed: tuple[str, ...] = ()  # models in both whose facts or litellm params differ
    collections_added: tuple[str, ...] = ()
    collections_removed: tuple[str, ...] = ()
    collections_changed: tuple[str, ...] = ()

    def as_json(self) -> dict[str, Any]:
        return {
            "added": list(self.added),
            "removed": list(self.removed),
            "changed": list(self.changed),
            "collections": {
                "added": list(self.collections_added),
                "removed": list(self.collections_removed),
                "changed": list(self.collections_changed),
            },
        }

    def summary(self) -> str:
        """One line for the log."""
        parts = [
            f"{label} {', '.join(names)}"
            for label, names in (
                ("models added:", self.added),
                ("models removed:", self.removed),
                ("models changed:", self.changed),
                ("collections added:", self.collections_added),
                ("collections removed:", self.collections_removed),
                ("collections changed:", self.collections_changed),
            )
            if names
        ]
        return "; ".join(parts) or "no model or collection changed"


def changes(before: Config, after: Config) -> Changes:
    """What *after* changes of *before*, in *after*'s order (removals in *before*'s)."""
    old = {m.alias: m for m in before.catalog.models}
    new = {m.alias: m for m in after.catalog.models}
    old_sets = {c.name: c for c in before.catalog.collections}
    new_sets = {c.name: c for c in after.catalog.collections}

    def differs(alias: str) -> bool:
        return old[alias] != new[alias] or before.litellm_params.get(
            alias
        ) != after.litellm_params.get(alias)

    return Changes(
        added=tuple(a for a in new if a not in old),
        removed=tuple(a for a in old if a not in new),
        changed=tuple(a for a in new if a in old and differs(a)),
        collections_added=tuple(c for c in new_sets if c not in old_sets),
        collections_removed=tuple(c for c in old_sets if c not in new_sets),
        collections_changed=tuple(
            c for c in new_sets if c in old_sets and new_sets[c] != old_sets[c]
        ),
    )
