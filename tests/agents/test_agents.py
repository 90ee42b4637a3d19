"""Every coding agent, the real program, unchanged, through the gateway (docs/clients.md's
"Coding agents" settings; the pins in agents.toml).

Per agent: its tool loop in route mode (the member calls the agent's own shell tool, or writes
aider's edit, and the agent quotes what the command printed), a one-shot question to a plain
panel (every seat's answer in what it prints), and failover in the middle of its session (the
member that took the first turn is rate limited on the turn carrying the tool's result; the next
one answers it, and the agent never knows). The gateway is the real app on a real uvicorn server,
its members `openai/...` models on the simulated upstream.

The runs take seconds each, most of it the programs starting, so a module fixture starts the
runs the selected tests need all at once (a few at a time) and the tests read their results.
"""

from __future__ import annotations

import copy
import json
import sqlite3
from concurrent.futures import ThreadPoolExecutor

import pytest

from gateway.app import create_app
from gateway.config.settings import parse_config
from gateway.serve.server import ServerThread
from tests.agents.programs import (
    DOC_COLLECTION,
    PINS,
    SETUPS,
    Run,
    need,
    pinned,
    run,
    settings,
)
from tests.helpers.bench import Gateway, bench_raw
from tests.helpers.clients_doc import DOC_URL, blocks

AGENTS = tuple(SETUPS)
PARALLEL = 4  # runs at a time: the machine has two cores, and each program mostly starts up
# started first
SLOWEST_FIRST = ("opencode", "aider", "cline", "qwen", "gemini", "claude", "pi", "cn", "codex")
SHELL_TOOL = {  # the agent's own tool for a shell command, and its argument naming the command
    "claude": ("Bash", "command"),
    "codex": ("exec_command", "cmd"),
    "gemini": ("run_shell_command", "command"),
    "opencode": ("bash", "command"),
    "qwen": ("run_shell_command", "command"),
    "pi": ("bash", "command"),
    "cn": ("Bash", "command"),
    "cline": ("run_commands", "commands"),  # a list of commands
}
LISTED = {"cline"}  # the agents whose shell tool takes a list of commands


def printed(agent: str) -> str:
    """What the proof command prints: not in the command's own text, so quoting it in the final
    answer means the tool's output came back through the gateway."""
    return f"proof-42-{agent}"


def command(agent: str) -> str:
    return f"printf 'proof-%s-{agent}\\n' 42 > proof.txt && cat proof.txt"


def loop_behaviour(agent: str) -> dict[str, object]:
    """A route member that makes the agent write the proof file: a call of its shell tool, or
    for aider (no tools) an edit in its `whole` format, which aider applies itself."""
    if agent == "aider":
        return {"answer": f"proof.txt\n```\n{printed(agent)}\n```\n"}
    name, argument = SHELL_TOOL[agent]
    value: object = [command(agent)] if agent in LISTED else command(agent)
    return {"tool_call": {"name": name, "arguments": {argument: value}}}


def seat_answer(agent: str, seat: int) -> str:
    return f"Seat {seat} for {agent}: the loop never backs off."


def members(agent: str, scenario: str) -> dict[str, dict[str, object]]:
    """The members of the scenario's collection: name -> simulator behaviour."""
    if scenario == "route":
        return {"loop": loop_behaviour(agent)}
    if scenario == "panel":
        return {f"seat{i}": {"answer": seat_answer(agent, i)} for i in (1, 2, 3)}
    # failover: the first member fails the turn carrying the tool's result (aider has one turn,
    # so its first member fails that one); the next member takes the turn over
    fails = {"status": 429, "fail_tool_turns": agent != "aider"}
    return {"first": {**loop_behaviour(agent), **fails}, "next": loop_behaviour(agent)}


def served(agent: str, scenario: str, member: str) -> str:
    return f"sim-{agent}-{scenario}-{member}"


def collection(agent: str, scenario: str) -> str:
    return f"{agent}-{'loop' if scenario == 'route' else scenario}"


SCENARIO_OF = {  # test -> scenario
    "test_the_tool_loop_through_route_mode": "route",
    "test_a_one_shot_question_to_a_panel_is_answered_by_every_seat": "panel",
    "test_a_member_rate_limited_mid_session_hands_the_turn_on_unnoticed": "failover",
}


def wanted(request: pytest.FixtureRequest) -> list[tuple[str, str]]:
    """(agent, scenario) of each selected test of this module whose program is installed."""
    cases = []
    for item in request.session.items:
        scenario = SCENARIO_OF.get(getattr(item, "originalname", ""))
        if item.module is request.module and scenario and hasattr(item, "callspec"):
            agent = item.callspec.params["agent"]
            if pinned(agent):
                cases.append((agent, scenario))
    return sorted(cases, key=lambda case: SLOWEST_FIRST.index(case[0]))


@pytest.fixture(scope="module")
def runs(request, sim_server, tmp_path_factory):
    """Every wanted run, done: ((agent, scenario) -> Run, the simulator, the gateway's store)."""
    cases = wanted(request)
    sim_server.state.reset()
    raw = bench_raw(sim_server.url, route_explore=0, max_explorers=0, reserves=0)
    for agent, scenario in cases:
        names = []
        for member, behaviour in members(agent, scenario).items():
            name = served(agent, scenario, member)
            sim_server.set(name, **copy.deepcopy(behaviour))
            params = {"model": f"openai/{name}", "api_base": f"{sim_server.url}/v1", "api_key": "k"}
            raw["model_list"].append(
                {"model_name": name, "litellm_params": params, "bench": {"connection": name}}
            )
            names.append(name)
        raw["collections"][collection(agent, scenario)] = {"members": names}
    base = tmp_path_factory.mktemp("agents")
    raw["store"] = f"sqlite:///{base / 'records.db'}"
    config = parse_config(raw, base=base)
    gw = Gateway(ServerThread(create_app(config)).start(), config)

    def one(case: tuple[str, str]) -> Run:
        agent, scenario = case
        mode = "panel" if scenario == "panel" else "route"
        where = base / f"{agent}-{scenario}"
        return run(agent, mode, gw.url, collection(agent, scenario), where)

    try:
        with ThreadPoolExecutor(PARALLEL) as pool:
            done = dict(zip(cases, pool.map(one, cases), strict=True))
        yield done, sim_server, base / "records.db"
    finally:
        gw.close()
        gw.runtime.board.close()


def after_tool(entry: dict) -> bool:
    messages = entry["body"].get("messages") or []
    return bool(messages) and messages[-1].get("role") == "tool"


def counted(lines: list[str]) -> list[str]:
    """Runs of equal lines as one, with how many: an agent's retries read as one line."""
    runs: list[tuple[str, int]] = []
    for line in lines:
        if runs and runs[-1][0] == line:
            runs[-1] = (line, runs[-1][1] + 1)
        else:
            runs.append((line, 1))
    return [f"{line} (x{n})" if n > 1 else line for line, n in runs]


class Case:
    """One run and what its collection's members were asked (the simulator's log)."""

    def __init__(self, runs, agent: str, scenario: str) -> None:
        need(agent)
        done, sim, self.store = runs
        self.agent, self.run = agent, done[agent, scenario]
        self.aliases = {served(agent, scenario, m): m for m in members(agent, scenario)}
        self.asked = {m: sim.log(name) for name, m in self.aliases.items()}

    def why(self, what: str) -> str:
        """*what* went wrong, then how the run ended, all it printed, and what each member was
        asked and answered."""
        asked = [
            f"{member}: {t['status']} {'after a tool result' if after_tool(t) else 'a turn'}"
            f"{' streamed' if t['stream'] else ''}"
            for member, turns in self.asked.items()
            for t in turns
        ]
        return (
            f"{what}{self.run.report()}\n--- what the members were asked\n"
            + "\n".join(counted(asked) or ["(nothing)"])
            + "\n--- the gateway's calls on the record\n"
            + "\n".join(self.recorded() or ["(none)"])
        )

    def calls(self) -> list[dict]:
        """The gateway's record of each call to this run's members, oldest first."""
        with sqlite3.connect(self.store) as db:
            db.row_factory = sqlite3.Row
            rows = db.execute("SELECT * FROM calls ORDER BY started").fetchall()
        return [dict(r) for r in rows if r["alias"] in self.aliases]

    def recorded(self) -> list[str]:
        said = []
        for call in self.calls():
            error = " ".join((call["error"] or "").split())[:240]
            more = " ".join(f"{k}={call[k]}" for k in ("failed_over", "dropped") if call.get(k))
            said.append(f"{self.aliases[call['alias']]}: {call['status']} {error} {more}")
        return counted(said)

    def handed_on(self) -> bool:
        """A call of the next member answered a turn that the first had failed, rate limited:
        the agent's one request was handed on, so the agent saw no error to retry."""
        first = served(self.agent, "failover", "first")
        for call in self.calls():
            failures = json.loads(call.get("failed_over") or "[]")
            if self.aliases[call["alias"]] == "next" and call["status"] == "ok":
                if {"alias": first, "status": "rate_limited"} in [
                    {k: f.get(k) for k in ("alias", "status")} for f in failures
                ]:
                    return True
        return False

    def loop_worked(self) -> None:
        """The proof file is in the work folder, and the agent's answer quotes the command's
        output (aider: the edit it applied)."""
        assert self.run.rc == 0, self.why("the agent failed")
        proof = self.run.work / "proof.txt"
        assert proof.exists(), self.why("no proof.txt in the work folder")
        assert proof.read_text().strip() == printed(self.agent), self.why("proof.txt is wrong")
        if self.agent == "aider":
            assert "Applied edit to proof.txt" in self.run.stdout, self.why("no edit applied")
        else:
            quoted = "The tool said: " in self.run.stdout and printed(self.agent) in self.run.stdout
            assert quoted, self.why("the final text does not quote the tool's output")


@pytest.mark.parametrize("agent", AGENTS)
def test_the_tool_loop_through_route_mode(agent, runs):
    case = Case(runs, agent, "route")
    case.loop_worked()
    turns = case.asked["loop"]
    working = [t for t in turns if t["body"].get("tools")] if agent != "aider" else turns[:1]
    assert working and all(t["stream"] for t in working), case.why("a turn was not streamed")
    if agent != "aider":
        returned = any(after_tool(t) and t["status"] == 200 for t in turns)
        assert returned, case.why("no turn carried the tool's result")


@pytest.mark.parametrize("agent", AGENTS)
def test_a_one_shot_question_to_a_panel_is_answered_by_every_seat(agent, runs):
    case = Case(runs, agent, "panel")
    assert case.run.rc == 0, case.why("the agent failed")
    for seat in (1, 2, 3):
        assert case.asked[f"seat{seat}"], case.why(f"seat {seat} was not asked")
        assert seat_answer(agent, seat) in case.run.stdout, case.why(f"seat {seat} is missing")


@pytest.mark.parametrize("agent", AGENTS)
def test_a_member_rate_limited_mid_session_hands_the_turn_on_unnoticed(agent, runs):
    case = Case(runs, agent, "failover")
    case.loop_worked()
    first, then = case.asked["first"], case.asked["next"]
    assert any(t["status"] == 429 for t in first), case.why("the first member never failed")
    assert case.handed_on(), case.why("no turn of the first member was handed on to the next")
    if agent == "aider":  # one turn: the first member fails it, the next answers it
        assert any(t["status"] == 200 for t in then), case.why("the next member did not answer")
        return
    began = any(t["status"] == 200 and not after_tool(t) for t in first)
    assert began, case.why("the first member did not take the first turn")
    assert all(after_tool(t) for t in first if t["status"] == 429)
    took_over = any(after_tool(t) and t["status"] == 200 for t in then)
    assert took_over, case.why("the next member did not take the turn over")


def test_every_agent_is_set_up_by_the_doc_alone():
    """The tests point each agent at the gateway only through the doc's blocks: every block
    exists, and between them they name the doc's address and collection (which the tests
    replace with their own)."""
    titled = blocks()
    for agent, setup in SETUPS.items():
        given = (*setup.files, *([setup.first] if setup.first else []))
        for title in (*given, setup.route, setup.panel):
            assert title in titled, f"docs/clients.md has no block titled {title!r} ({agent})"
        for mode in (setup.route, setup.panel):
            text = "".join(titled[t] for t in (*given, mode))
            assert DOC_URL in text and DOC_COLLECTION in text, (agent, mode)
            moved = "".join(settings(t, "http://gw.test", "c") for t in (*given, mode))
            assert DOC_URL not in moved and "http://gw.test" in moved
    assert json.loads(titled["opencode.json"])["provider"]["bench"]["options"]["baseURL"]
    assert set(PINS) == set(SETUPS), "an agent is pinned but not run, or run but not pinned"
