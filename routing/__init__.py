"""Pure panel selection: frozen facts in, a Panel out. No I/O lives here."""

from routing.catalog import (
    DEFAULT_SHAPES,
    ROLES,
    ROUTER_PANEL,
    VISION,
    Catalog,
    Collection,
    Model,
    PanelLimits,
    family_of,
)
from routing.choose import (
    Choice,
    Panel,
    PanelRequest,
    Seat,
    Skipped,
    choose_panel,
)
from routing.evidence import Evidence, Standing
from routing.refusals import (
    NothingToSeat,
    PromptTooLarge,
    Refusal,
    UnknownAlias,
    UnknownCollection,
    UnknownShape,
    closest,
    did_you_mean,
)
from routing.text import IMAGE_PLACEHOLDER, content_text, conversation_text, has_images
from routing.windows import estimate_tokens, window_of

__all__ = [
    "closest",
    "did_you_mean",
    "DEFAULT_SHAPES",
    "IMAGE_PLACEHOLDER",
    "ROLES",
    "ROUTER_PANEL",
    "VISION",
    "PanelRequest",
    "Catalog",
    "Choice",
    "Collection",
    "Evidence",
    "PanelLimits",
    "Model",
    "NothingToSeat",
    "Panel",
    "PromptTooLarge",
    "Refusal",
    "Seat",
    "Skipped",
    "Standing",
    "UnknownAlias",
    "UnknownCollection",
    "UnknownShape",
    "choose_panel",
    "content_text",
    "conversation_text",
    "estimate_tokens",
    "family_of",
    "has_images",
    "window_of",
]
