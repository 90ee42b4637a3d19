"""The tree explains the architecture: packages by concept, imports one way, no cycle between
modules nor between packages, and a short walk from a request's endpoint to the upstream call
and the record write.

Imports are read from the source (every `import`, at module level, inside functions and under
`TYPE_CHECKING` alike), so a cycle cannot hide behind a late import. The walk is measured on a
real request to a real gateway: the Python stack at the upstream call and at each record write,
stitched across the asyncio tasks the request starts, gateway frames only.
"""

from __future__ import annotations

import ast
import asyncio
import sys
import threading
from collections.abc import Iterator
from pathlib import Path
from types import FrameType
from typing import Any

import httpx
import pytest

from tests.helpers.bench import bench_raw

ROOT = Path(__file__).resolve().parents[1]

# Who may import whom: a module may import its own tier and the tiers below it, never above.
TIERS = [
    ("gateway.cli", "gateway.serve"),
    ("gateway.app",),
    ("gateway.endpoints", "gateway.openapi", "gateway.mcp", "gateway.dashboard"),
    ("gateway.formats",),
    ("gateway.panel", "gateway.route", "gateway.records", "gateway.suite"),
    ("gateway.runtime",),
    ("gateway.access", "gateway.state", "gateway.store", "gateway.upstream"),
    ("gateway.request",),
    ("gateway.config", "gateway.health", "gateway.errors", "gateway"),
    ("routing",),
]
MAX_TOP_MODULES = 12
MAX_STOPS = 12


def modules() -> dict[str, Path]:
    found = {}
    for top in ("gateway", "routing", "simulator"):
        for path in sorted((ROOT / top).rglob("*.py")):
            parts = list(path.relative_to(ROOT).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            found[".".join(parts)] = path
    return found


def imports() -> dict[str, set[str]]:
    """module -> the modules of this tree it imports, wherever in it the import stands."""
    known = modules()

    def resolve(name: str) -> str | None:
        while name and name not in known:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {}
    for module, path in known.items():
        package = module if path.name == "__init__.py" else module.rpartition(".")[0]
        edges = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import):
                edges.update(resolve(alias.name) for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")[: len(package.split(".")) - node.level + 1]
                    base = ".".join([*parts, base] if base else parts)
                for alias in node.names:
                    full = f"{base}.{alias.name}"
                    edges.add(full if full in known else resolve(base))
        graph[module] = {e for e in edges if e is not None and e != module}
    return graph


def tier(module: str) -> int:
    best = (-1, -1)
    for index, names in enumerate(TIERS):
        for name in names:
            if (module == name or module.startswith(name + ".")) and len(name) > best[1]:
                best = (index, len(name))
    assert best[0] >= 0, f"{module} is in no tier: add its package to TIERS"
    return best[0]


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    found: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in graph:
        if v not in index:
            visit(v)
    return found


def package_cycles(graph: dict[str, set[str]], packages: set[str]) -> list[str]:
    """Every cycle between the parts of one package, each subpackage standing for everything
    under it (modules that never import each other back can still tie two packages in a knot:
    `a.x` imports `b.y` while `b.z` imports `a.w`). Each is named with one import per step."""
    found = []
    for parent in sorted(packages | {""}):  # "": the top, where gateway, routing, simulator sit
        prefix = f"{parent}." if parent else ""

        def part(module: str, prefix: str = prefix) -> str | None:
            if not module.startswith(prefix):
                return None
            return prefix + module[len(prefix) :].split(".")[0]

        joined: dict[str, set[str]] = {}
        because: dict[tuple[str, str], str] = {}
        for a, edges in graph.items():
            for b in edges:
                pa, pb = part(a), part(b)
                if pa is not None and pb is not None and pa != pb:
                    joined.setdefault(pa, set()).add(pb)
                    because.setdefault((pa, pb), f"{a} imports {b}")
        for knot in map(set, cycles(joined)):
            if knot & packages:  # (modules alone: the module check names that cycle)
                steps = [f"{a} -> {b} ({why})" for (a, b), why in because.items() if {a, b} <= knot]
                found.append("; ".join(sorted(steps)))
    return found


def test_no_module_imports_one_that_imports_it_back():
    assert cycles(imports()) == []


def test_no_package_imports_one_that_imports_it_back():
    """A package is one concept: if access imports state and state imports access, neither can
    be read, tested or moved without the other."""
    packages = {m for m, path in modules().items() if path.name == "__init__.py"}
    knots = package_cycles(imports(), packages)
    assert knots == [], "packages import each other:\n" + "\n".join(knots)


def test_the_package_check_names_a_cycle_its_modules_alone_do_not_show():
    graph = {
        "gateway.a.x": {"gateway.b.y"},
        "gateway.b.z": {"gateway.a.w"},
        "gateway.a.w": set(),
        "gateway.b.y": set(),
    }
    assert cycles(graph) == []
    assert package_cycles(graph, {"gateway", "gateway.a", "gateway.b"}) == [
        "gateway.a -> gateway.b (gateway.a.x imports gateway.b.y); "
        "gateway.b -> gateway.a (gateway.b.z imports gateway.a.w)"
    ]


def test_a_package_init_imports_only_its_own_modules():
    """Importing `gateway.x.y` runs `gateway/x/__init__.py` first: an init that imported
    outside its package could close a cycle no import statement shows."""
    known = modules()
    for module, edges in imports().items():
        if known[module].name != "__init__.py":
            continue
        strays = {e for e in edges if not e.startswith(module + ".")}
        assert strays == set(), f"{module}/__init__.py imports {sorted(strays)}"


def test_imports_go_one_way_down_the_tiers():
    upward = [
        f"{a} -> {b}"
        for a, edges in imports().items()
        if a.startswith("gateway")
        for b in edges
        if b.startswith(("gateway", "routing")) and tier(b) < tier(a)
    ]
    assert upward == []


def test_routing_and_the_simulator_import_nothing_of_the_gateway():
    for module, edges in imports().items():
        if module.startswith(("routing", "simulator")):
            assert not any(e.startswith("gateway") for e in edges), module


def test_the_top_of_gateway_is_a_few_modules_and_packages_that_say_what_they_hold():
    top = sorted(p.name for p in (ROOT / "gateway").glob("*.py"))
    assert len(top) <= MAX_TOP_MODULES, top
    for package in sorted(p for p in (ROOT / "gateway").iterdir() if (p / "__init__.py").exists()):
        doc = ast.get_docstring(ast.parse((package / "__init__.py").read_text()))
        assert doc and len(doc) > 80, f"gateway/{package.name} says nothing of what it holds"


# -- the walk -----------------------------------------------------------------------------------


class Walk:
    """The gateway frames on the stack when the upstream is called and when a record is written,
    each stack stitched to the stack that created its asyncio task."""

    TARGETS = {
        ("gateway.upstream.seam", "call"): "upstream call",
        ("gateway.upstream.seam", "open_turn"): "upstream call",
        ("gateway.store.sqlite.store", "add_call"): "seat record",
        ("gateway.store.sqlite.store", "add_panel"): "panel record",
    }

    def __init__(self) -> None:
        self.created: dict[int, list[tuple[str, str]]] = {}
        self.stacks: dict[str, list[tuple[str, str]]] = {}
        self.loops: set[int] = set()

    def module_of(self, frame: FrameType) -> str | None:
        path = Path(frame.f_code.co_filename)
        if not path.is_relative_to(ROOT / "gateway"):
            return None
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)

    def stack(self, frame: FrameType | None) -> list[tuple[str, str]]:
        """Gateway frames from the outermost in, up to the task's coroutine, then the stack that
        created that task before them."""
        frames: list[tuple[str, str]] = []
        top = None
        while frame is not None:
            coroutine = frame.f_code.co_flags & 0x380  # coroutine, iterable or async generator
            if not coroutine and top is not None:
                break
            if coroutine:
                top = frame
            module = self.module_of(frame)
            if module is not None:
                frames.append((module, frame.f_code.co_qualname))
            frame = frame.f_back
        frames.reverse()
        return self.created.get(id(top), []) + frames

    def task_factory(self, loop: asyncio.AbstractEventLoop, coro: Any, **kw: Any) -> Any:
        frame = getattr(coro, "cr_frame", None)
        if frame is not None:
            self.created[id(frame)] = self.stack(sys._getframe(1))
        return asyncio.Task(coro, loop=loop, **kw)

    def profile(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call":
            return
        module = self.module_of(frame)
        if module is None:
            return
        loop = asyncio._get_running_loop()
        if loop is not None and id(loop) not in self.loops:
            self.loops.add(id(loop))
            loop.set_task_factory(self.task_factory)  # (tracing only; every task still runs)
        target = self.TARGETS.get((module, frame.f_code.co_name))
        if target is not None and target not in self.stacks:
            self.stacks[target] = self.stack(frame)

    def from_endpoint(self, target: str) -> list[tuple[str, str]]:
        """The walk to *target* from the first endpoint frame (or the first frame of the
        format's stream, for what a streamed reply does after the endpoint returned)."""
        frames = self.stacks[target]
        for i, (module, _) in enumerate(frames):
            if module.startswith(("gateway.endpoints", "gateway.formats")):
                return frames[i:]
        raise AssertionError(f"no endpoint on the walk to the {target}: {frames}")


@pytest.fixture
def walked(make_gateway, sim) -> Iterator[Any]:
    """Ask a gateway once, with the walk traced in its server thread."""
    traced: list[Walk] = []

    def ask(body: dict[str, Any], **gateway: Any) -> Walk:
        raw = bench_raw(sim.url, max_explorers=0, reserves=0, route_explore=0, **gateway)
        raw["collections"]["crew"] = {"members": ["alpha", "gamma"], "reply": "route"}
        walk = Walk()
        traced.append(walk)
        threading.setprofile(walk.profile)
        try:
            gw = make_gateway(raw)
        finally:
            threading.setprofile(None)  # only the gateway's own thread is traced
        reply = httpx.post(f"{gw.url}/v1/chat/completions", json=body, timeout=30)
        assert reply.status_code == 200, reply.text
        for _ in range(100):  # a streamed route turn is recorded as its stream ends
            if {"upstream call", "seat record"} <= set(walk.stacks):
                break
            threading.Event().wait(0.05)
        sys.setprofile(None)
        return walk

    yield ask


def stops(frames: list[tuple[str, str]]) -> list[str]:
    """The modules of a walk in order, consecutive frames of one module one stop."""
    seen: list[str] = []
    for module, _ in frames:
        if not seen or seen[-1] != module:
            seen.append(module)
    return seen


def check_walk(walk: Walk, target: str) -> list[str]:
    frames = walk.from_endpoint(target)
    modules = stops(frames)
    shown = " > ".join(f"{m.removeprefix('gateway.')}:{f}" for m, f in frames)
    assert len(frames) <= MAX_STOPS, f"{len(frames)} stops to the {target}: {shown}"
    assert len(modules) == len(set(modules)), f"a module entered twice: {shown}"
    tiers = [tier(m) for m in modules]
    assert tiers == sorted(tiers), f"a climb back up: {shown}"
    return modules


QUESTION = [{"role": "user", "content": "Is this right?"}]


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_a_panel_walks_from_its_endpoint_to_the_upstream_and_the_records_in_a_few_stops(
    walked, stream
):
    walk = walked({"model": "bench/trio", "messages": QUESTION, "stream": stream})
    to_upstream = check_walk(walk, "upstream call")
    assert to_upstream[0] == "gateway.endpoints.asking"
    assert to_upstream[-1] == "gateway.upstream.seam"
    check_walk(walk, "seat record")
    check_walk(walk, "panel record")


def test_plain_and_streamed_panels_walk_one_path(walked):
    plain = walked({"model": "bench/trio", "messages": QUESTION})
    streamed = walked({"model": "bench/trio", "messages": QUESTION, "stream": True})
    for target in ("upstream call", "seat record", "panel record"):
        assert plain.from_endpoint(target) == streamed.from_endpoint(target), target


@pytest.mark.parametrize("stream", [False, True], ids=["plain", "streamed"])
def test_a_route_turn_takes_its_own_path_from_the_door(walked, stream):
    walk = walked({"model": "bench/crew", "messages": QUESTION, "stream": stream})
    to_upstream = check_walk(walk, "upstream call")
    assert "gateway.endpoints.turns" in to_upstream
    assert not any(m.startswith("gateway.panel") for m in to_upstream)
    check_walk(walk, "seat record")
    check_walk(walk, "panel record")


def test_only_the_upstream_package_imports_litellm():
    for module, path in modules().items():
        if module.startswith("gateway.upstream"):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module:
                names = [node.module]
            assert not any(n.split(".")[0] == "litellm" for n in names), module
