"""`Client`: who is asking, as every path that asks models sees them (a panel, a route turn, an
MCP tool) and the live state counts them: a gateway key's name and scope, or `local` when the
gateway requires no keys. Who a key is, is gateway/access/keys.py's to find out.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from gateway.errors import Forbidden
from routing import Catalog
from routing.refusals import echo

LOCAL = "local"


@dataclass(frozen=True)
class Client:
    name: str
    collections: frozenset[str] | None = None  # None: every collection
    rpm: int | None = None  # None: no cap
    reads_all: bool = False  # true only for `local`, when keys are not required

    @property
    def owner(self) -> str | None:
        """The key name a record must carry for this client to see or judge it (None: any)."""
        return None if self.reads_all else self.name

    def may_use(self, collection: str) -> bool:
        return self.collections is None or collection in self.collections

    def check(self, collection: str) -> None:
        if not self.may_use(collection):
            raise Forbidden(
                f"This gateway key may not use collection {echo(collection)!r}; "
                f"its collections: {', '.join(sorted(self.collections or ()))}.",
                param="model",
            )

    def check_nominees(self, nominees: Iterable[str], catalog: Catalog) -> None:
        """403 naming the first nominee (`with`) that is no model of the key's collections: a
        scoped key's reach is its collections' models, and a nomination would seat any other.
        (A key for `panel`, the router's panel, which seats from every model, may name any; an
        unknown alias is left to the 400 that names it.)"""
        if self.collections is None or "panel" in self.collections:
            return
        allowed = {
            member
            for name in self.collections
            if (collection := catalog.collection(name)) is not None
            for member in collection.members
        }
        for alias in nominees:
            if alias not in allowed and catalog.model(alias) is not None:
                raise Forbidden(
                    f"This gateway key may not nominate {echo(alias)!r}: it is not a model of "
                    f"the key's collections ({', '.join(sorted(self.collections))}).",
                    param="with",
                    code="model_not_allowed",
                )


EVERYONE = Client(LOCAL, reads_all=True)
