"""`models add` and `models remove` as edits of the config's text: ruamel.yaml's round trip makes
the change, gateway/config/keep.py lays it back onto the file as it was written.

Why text in, text out: the file is a person's, with their comments, their order and their
layout, and the edit must leave all of it where it was; only the lines of the model added or
taken out (and of the collections' members lists it joins or leaves) change. Whether the result
is a config the gateway takes is not decided here: the caller validates the new text with the
loader `check-config` uses before anything is written (gateway/config/rewrite.py).
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Any

import yaml
from ruamel.yaml import YAML
from ruamel.yaml.comments import CommentedMap, CommentedSeq
from ruamel.yaml.error import CommentMark, YAMLError
from ruamel.yaml.scalarstring import DoubleQuotedScalarString
from ruamel.yaml.tokens import CommentToken

from gateway.config.environ import ENV_PREFIX
from gateway.config.keep import laid_back


class EditRefused(Exception):
    """The edit cannot be made as asked; the message says why, in one line."""


@dataclass(frozen=True)
class NewModel:
    alias: str
    model: str  # PROVIDER/NAME, litellm's
    api_base: str | None = None
    api_key_env: str | None = None  # written as os.environ/VAR, never its value
    connection: str | None = None
    role: str | None = None
    context_window: int | None = None  # learned by the probe
    to: str | None = None  # a collection whose members it joins


def added(text: str, new: NewModel) -> str:
    """*text* with *new* at the end of model_list (and in `new.to`'s members)."""
    doc = _Document(text)
    models = doc.model_list()
    if new.alias in _aliases(models):
        raise EditRefused(f"a model named {new.alias!r} is already in model_list")
    if new.to is not None:
        members = doc.members_of(new.to)
        members.append(_text(new.alias))
    entry = _entry(new, models[-1] if models else None)
    if models:
        _move_trailing_comment(models[-1], entry)
    models.append(entry)
    return doc.written()


def removed(text: str, alias: str) -> tuple[str, list[str]]:
    """*text* without *alias* in model_list or any collection's members; and the collections
    it left."""
    doc = _Document(text)
    models = doc.model_list()
    found = [i for i, name in enumerate(_aliases(models)) if name == alias]
    if not found:
        raise EditRefused(f"no model named {alias!r} in model_list")
    left = []
    for name, spec in doc.collections().items():
        members = spec.get("members") if isinstance(spec, dict) else None
        if isinstance(members, list) and alias in members:
            if len(members) == 1:
                raise EditRefused(
                    f"{alias!r} is the only member of collection {name!r}: add another member "
                    f"to {name!r} first (models add ... --to {name}), or take {name!r} out of "
                    "the config"
                )
            members.remove(alias)
            left.append(str(name))
    for i in reversed(found):
        if i == len(models) - 1 and i > 0:
            _move_trailing_comment(models[i], models[i - 1])
        del models[i]
    return doc.written(), left


class _Document:
    """The file's text loaded round-trip, and its dumps before and after the edit."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.yaml = YAML()
        self.yaml.preserve_quotes = True
        self.yaml.width = 1 << 20  # a long line stays one line
        try:
            self.data = self.yaml.load(text)
        except YAMLError as exc:
            raise EditRefused(
                f"the config is not valid YAML: {' '.join(str(exc).split())}"
            ) from None
        if not isinstance(self.data, CommentedMap):
            raise EditRefused("the config is not a mapping with model_list and collections")
        _keep_anchors(self.data)
        self._indent()
        self.before = self._dump()

    def model_list(self) -> CommentedSeq:
        models = self.data.get("model_list")
        if not isinstance(models, CommentedSeq):
            raise EditRefused("the config has no model_list to edit")
        return models

    def collections(self) -> CommentedMap:
        found = self.data.get("collections")
        return found if isinstance(found, CommentedMap) else CommentedMap()

    def members_of(self, name: str) -> CommentedSeq:
        spec = self.collections().get(name)
        if not isinstance(spec, CommentedMap):
            known = ", ".join(map(str, self.collections())) or "none"
            raise EditRefused(f"no collection named {name!r} (the config has: {known})")
        members = spec.get("members")
        if members is None:
            spec["members"] = members = _flow(CommentedSeq())
        if not isinstance(members, CommentedSeq):
            raise EditRefused(f"collection {name!r}'s members is not a list")
        if members.anchor.value:
            raise EditRefused(
                f"collection {name!r}'s members are an anchored list (&{members.anchor.value}) "
                "that other collections may share: add the model to it by hand"
            )
        return members

    def written(self) -> str:
        """The edited text: the edit in ruamel's hand, every other line as the file had it.
        The fewest lines are taken from ruamel that give the data the edit meant; should no
        laying back give it (a layout the merge cannot place), ruamel's whole dump is taken:
        right, if less like the file."""
        after = self._dump()
        meant = yaml.safe_load(after)
        for near in (False, True):
            kept = laid_back(self.text, self.before, after, near=near)
            try:
                if yaml.safe_load(kept) == meant:
                    return kept
            except yaml.YAMLError:
                pass
        return after

    def _dump(self) -> str:
        out = io.StringIO()
        self.yaml.dump(self.data, out)
        return out.getvalue()

    def _indent(self) -> None:
        """Indent as model_list is indented, so a model added looks like its neighbours."""
        models = self.data.get("model_list")
        mapping, sequence, offset = 2, 2, 0
        lines = self.text.splitlines()
        if isinstance(models, CommentedSeq) and models and isinstance(models[0], CommentedMap):
            line, column = models.lc.item(0)
            parent = self.data.lc.key("model_list")[1]
            dash = lines[line].rfind("-", 0, column) if line < len(lines) else -1
            if dash >= 0:
                sequence, offset = column - parent, dash - parent
            for key in models[0]:
                nested = models[0][key]
                if isinstance(nested, CommentedMap) and nested and not nested.fa.flow_style():
                    mapping = nested.lc.key(next(iter(nested)))[1] - models[0].lc.key(key)[1]
                    break
        if sequence < offset + 2 or mapping < 1:
            mapping, sequence, offset = 2, 2, 0
        self.yaml.indent(mapping=mapping, sequence=sequence, offset=offset)


def _aliases(models: CommentedSeq) -> list[Any]:
    return [m.get("model_name") if isinstance(m, dict) else None for m in models]


def _entry(new: NewModel, like: Any) -> CommentedMap:
    """The model_list entry, in the style of the one before it (flow mappings or block)."""
    params = CommentedMap(model=_text(new.model))
    if new.api_base:
        params["api_base"] = _text(new.api_base)
    if new.api_key_env:
        params["api_key"] = _text(f"{ENV_PREFIX}{new.api_key_env}")
    facts = CommentedMap()
    for key in ("connection", "role"):
        if getattr(new, key) is not None:
            facts[key] = _text(getattr(new, key))
    if new.context_window is not None:
        facts["context_window"] = new.context_window
    entry = CommentedMap(model_name=_text(new.alias), litellm_params=params)
    if facts:
        entry["bench"] = facts
    flow = isinstance(like, CommentedMap) and any(
        isinstance(v, CommentedMap) and v.fa.flow_style() for v in like.values()
    )
    if flow:
        _flow(params)
        _flow(facts)
    return entry


def _keep_anchors(node: Any, seen: set[int] | None = None) -> None:
    """Every anchor as written stays written, referred to or not (ruamel drops one nobody refers
    to, and a model taken out may have been the last to refer to it)."""
    seen = set() if seen is None else seen
    if id(node) in seen or not isinstance(node, CommentedMap | CommentedSeq):
        return
    seen.add(id(node))
    if node.anchor.value:
        node.yaml_set_anchor(node.anchor.value, always_dump=True)
    for value in node.values() if isinstance(node, CommentedMap) else node:
        _keep_anchors(value, seen)


def _text(value: str) -> str:
    """*value* as a string to every YAML reader: quoted where the gateway's (YAML 1.1, PyYAML)
    would read it plain as something else (`on`, `no`, `1e3`, `null`)."""
    try:
        plain = yaml.safe_load(value) == value
    except yaml.YAMLError:
        plain = False
    return value if plain else DoubleQuotedScalarString(value)


def _flow(node: Any) -> Any:
    node.fa.set_flow_style()
    return node


def _tail(node: Any) -> tuple[Any, Any]:
    """The last key (or index) written in *node*, deepest first: where ruamel keeps the
    comments and blank lines that follow it."""
    while True:
        key = next(reversed(node)) if isinstance(node, CommentedMap) else len(node) - 1
        value = node[key]
        if isinstance(value, CommentedMap | CommentedSeq) and value and not value.fa.flow_style():
            node = value
            continue
        return node, key


def _anchored(node: Any, key: Any) -> bool:
    """Is the value at *key* a node with an anchor? Its comments are written wherever it is
    written first, so a comment given to it could land elsewhere in the file."""
    value = node[key]
    return isinstance(value, CommentedMap | CommentedSeq) and bool(value.anchor.value)


def _move_trailing_comment(last: Any, new: Any) -> None:
    """The whole-line comments and blank lines after the last model stay after the list: a
    model added goes in before them (not after a comment that closes the list), and the last
    model taken out hands them on to the one before it."""
    if not isinstance(last, CommentedMap) or not last:
        return
    node, key = _tail(last)
    into, at = _tail(new)
    if _anchored(node, key) or _anchored(into, at):
        return  # left where ruamel has it
    slot = node.ca.items.get(key)
    token = slot[2] if slot and len(slot) > 2 else None
    if not isinstance(token, CommentToken) or not isinstance(token.value, str):
        return
    head, newline, rest = token.value.partition("\n")
    if not rest:
        return
    token.value = head + newline
    slot = into.ca.items.get(at)
    held = slot[2] if slot and len(slot) > 2 else None
    if isinstance(held, CommentToken) and isinstance(held.value, str):
        held.value = held.value + rest if held.value.endswith("\n") else held.value
    else:
        into.ca.items[at] = [None, None, CommentToken("\n" + rest, CommentMark(0), None), None]
