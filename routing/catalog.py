"""What the bench is made of: models, collections, shapes and panel limits.

Frozen values built once from the validated config; routing reads them and never changes them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ROLES = ("general", "code", "light", "vision", "image")

DEFAULT_SHAPES: dict[str, tuple[str, ...]] = {
    "general": ("general",),
    "design": ("general",),
    "prose": ("general",),
    "review": ("general", "code"),
    "code": ("general", "code"),
    "enumeration": ("general", "code", "light"),
    "quick": ("general", "light"),
    "vision": ("general", "light", "vision"),
}

ROUTER_PANEL = "panel"
VISION = "vision"  # the role of models that read images, and the shape of panels that carry them

_FAMILY_DROP = re.compile(r"[-_.]")


def family_of(served_name: str) -> str:
    """Normalise a served model name so one model reached two ways shares a family.

    The name after the last `/`, cut at the first `:`, lower-cased, without `-`, `_`, `.`:
    `vendor/Inkling:free` and `inkling` collide; `glm-5.2` and `glm-5.3` do not.
    """
    name = served_name.rsplit("/", 1)[-1].split(":", 1)[0].lower()
    return _FAMILY_DROP.sub("", name)


@dataclass(frozen=True)
class Model:
    alias: str
    served: str  # litellm's model string, e.g. "openai/kimi-k2"
    connection: str
    role: str = "general"
    family: str = ""
    context_window: int | None = None
    ad_hoc: bool = False
    preferred: bool = False  # its connection is marked preferred: a tie-break only
    vision: bool = False  # can read images though its role is not `vision`
    prefill: bool | None = None  # takes an assistant prefill, as its model_info says; None: ask

    @property
    def sees(self) -> bool:
        """May this model be given images? Its role says so, or its facts do."""
        return self.vision or self.role == VISION

    def __post_init__(self) -> None:
        if not self.family:
            object.__setattr__(self, "family", family_of(self.served))


@dataclass(frozen=True)
class Collection:
    name: str
    members: tuple[str, ...]
    description: str = ""
    tags: tuple[str, ...] = ()
    shape: str | None = None
    reply: str = "panel"  # panel | merged
    merger: str | None = None


@dataclass(frozen=True)
class PanelLimits:
    """How big a panel may be. (Rate limits are the gateway's: gateway/state/limits.py.)"""

    max_calls: int = 5
    max_explorers: int = 2
    reserves: int = 2


@dataclass(frozen=True)
class Catalog:
    models: tuple[Model, ...]
    collections: tuple[Collection, ...] = ()
    shapes: tuple[tuple[str, tuple[str, ...]], ...] = tuple(DEFAULT_SHAPES.items())
    limits: PanelLimits = field(default_factory=PanelLimits)
    # Lookup tables derived once from the fields above (see __post_init__).
    _models: dict[str, Model] = field(init=False, repr=False, compare=False)
    _collections: dict[str, Collection] = field(init=False, repr=False, compare=False)
    _shapes: dict[str, tuple[str, ...]] = field(init=False, repr=False, compare=False)

    def model(self, alias: str) -> Model | None:
        return self._models.get(alias)

    def collection(self, name: str) -> Collection | None:
        return self._collections.get(name)

    def roles_for(self, shape: str) -> tuple[str, ...] | None:
        return self._shapes.get(shape)

    @property
    def shape_names(self) -> tuple[str, ...]:
        return tuple(name for name, _ in self.shapes)

    def shape_for_images(self, shape: str, shape_by: str) -> tuple[str, str, str]:
        """(shape, how chosen, a note) for a request that carries images.

        A shape that admits vision models (named in the header or by the collection) is kept:
        the caller chose it knowing what it seats. Any other shape, the default included,
        becomes `vision`, since a shape that seats no model able to see would seat nobody
        useful. Either way only models that can see are seated (choose_panel), and the note
        says so in `bench.notes`."""
        roles = self.roles_for(shape)
        seeing = "only models that can see are seated"
        if shape == VISION or (roles is not None and VISION in roles):
            return shape, shape_by, f"the request carries images: shape {shape} kept; {seeing}"
        if self.roles_for(VISION) is None:  # a config may not drop it, but stay total
            return shape, shape_by, f"the request carries images; {seeing}"
        return (
            VISION,
            "images",
            f"the request carries images: shape {shape} ({shape_by}) became {VISION}; {seeing}",
        )

    # Lookup tables derived once; dataclass(frozen) forbids plain assignment, hence __setattr__.
    def __post_init__(self) -> None:
        object.__setattr__(self, "_models", {m.alias: m for m in self.models})
        object.__setattr__(self, "_collections", {c.name: c for c in self.collections})
        object.__setattr__(self, "_shapes", dict(self.shapes))
