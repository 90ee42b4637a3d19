"""A config's problems put where its author looks: the model's name and the file's line.

Problems are found on the parsed file and named by their path (`model_list[4].bench.rpm`), which
is exact but not what a person reads: they wrote `model_name: mistral-small` on line 23. Once
the file is at hand, a problem under a model entry is named by that model, and every problem
gets the line its path starts on. The file is read as YAML's node tree, which also shows what
parsing hides: a key written twice in one mapping (PyYAML keeps the last, silently).
"""

from __future__ import annotations

import re
from typing import Any

import yaml

from gateway.config.words import PLAIN_NAME

_ENTRY = re.compile(r"model_list\[(\d+)\](.*)", re.S)


def tree(text: str) -> yaml.Node | None:
    """The file's node tree, or None when it is not YAML (yaml_problem names that)."""
    try:
        return yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return None


def written_twice(root: yaml.Node | None) -> list[str]:
    """Each key written twice in one mapping, by its path and both lines."""
    problems: list[str] = []
    seen: set[int] = set()  # an alias makes a node reachable twice, or from itself

    def walk(node: yaml.Node, path: str) -> None:
        if id(node) in seen:
            return
        seen.add(id(node))
        if isinstance(node, yaml.MappingNode):
            first: dict[Any, int] = {}
            for key, value in node.value:
                name = key.value if isinstance(key, yaml.ScalarNode) else None
                inner = f"{path}.{name}" if path else str(name)
                line = key.start_mark.line + 1
                if name is not None and name in first:
                    problems.append(
                        f"{inner}: written twice (lines {first[name]} and {line}), and YAML "
                        "would keep only the second: merge them or rename one"
                    )
                elif name is not None:
                    first[name] = line
                walk(value, inner)
        elif isinstance(node, yaml.SequenceNode):
            for i, item in enumerate(node.value):
                walk(item, f"{path}[{i}]")

    if root is not None:
        walk(root, "")
    return problems


def located(problems: list[str], root: yaml.Node | None) -> list[str]:
    """Each problem with its model's name for `model_list[i]` and ` (line N)` at its end."""
    if root is None:
        return problems
    names = _model_names(root)
    return [_locate(problem, root, names) for problem in problems]


def model_line(root: yaml.Node | None, index: int) -> int | None:
    """The line model_list[index] starts on."""
    entries = _child(root, "model_list") if root is not None else None
    if isinstance(entries, yaml.SequenceNode) and index < len(entries.value):
        return int(entries.value[index].start_mark.line) + 1
    return None


def _model_names(root: yaml.Node) -> dict[int, str]:
    """index -> model_name, for entries whose name is plain and written once."""
    entries = _child(root, "model_list")
    if not isinstance(entries, yaml.SequenceNode):
        return {}
    found: dict[int, str] = {}
    for i, entry in enumerate(entries.value):
        name = _child(entry, "model_name")
        if isinstance(name, yaml.ScalarNode) and PLAIN_NAME.match(name.value):
            found[i] = name.value
    written = list(found.values())
    return {i: name for i, name in found.items() if written.count(name) == 1}


def _locate(problem: str, root: yaml.Node, names: dict[int, str]) -> str:
    node = _walk(root, problem)
    if node is None or node is root:
        return problem
    text = problem
    entry = _ENTRY.match(problem)
    if entry and int(entry[1]) in names and not entry[2].startswith(".model_name"):
        name, tail = names[int(entry[1])], entry[2]
        text = f"model {name}: {tail[1:]}" if tail.startswith(".") else f"model {name}{tail}"
    return f"{text} (line {node.start_mark.line + 1})"


def _walk(root: yaml.Node, problem: str) -> yaml.Node | None:
    """The deepest node the problem's leading path (`a.b[2].c: ...`) reaches."""
    node: yaml.Node = root
    rest = problem
    while rest and not rest.startswith(":"):
        if rest.startswith("["):
            close = rest.find("]")
            index = rest[1:close] if close > 0 else ""
            if not (isinstance(node, yaml.SequenceNode) and index.isdigit()):
                break
            if int(index) >= len(node.value):
                break
            node, rest = node.value[int(index)], rest[close + 1 :]
            continue
        if node is not root:
            if not rest.startswith("."):
                break
            rest = rest[1:]
        key = _longest_key(node, rest)
        found = _child(node, key) if key is not None else None
        if key is None or found is None:
            break
        node, rest = found, rest[len(key) :]
    return node


def _longest_key(node: yaml.Node, text: str) -> str | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    keys = [k.value for k, _ in node.value if isinstance(k, yaml.ScalarNode)]
    fitting = [k for k in keys if text.startswith(k) and text[len(k) : len(k) + 1] in ".[:"]
    return max(fitting, key=len, default=None)


def _child(node: yaml.Node | None, key: str) -> yaml.Node | None:
    if not isinstance(node, yaml.MappingNode):
        return None
    found = None
    for k, value in node.value:
        if isinstance(k, yaml.ScalarNode) and k.value == key:
            found = value  # the last, as YAML's loader keeps it
    return found
