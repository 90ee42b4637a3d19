"""The bench as MCP tools: `list_collections`, `ask`, `verdict`, `pending_verdicts`.

An agent working on its own model asks the bench for second opinions when it wants them, then
judges each seat: the verdicts are what rotate better models onto later panels, so the tools and
the server's instructions make the loop (ask, check, judge every call) the obvious way to use
them. The same tools serve both transports; only the `Bench` behind them differs: in the
gateway (`POST /mcp`, gateway/mcp/http.py) it seats panels in-process, through the same path as
every route; over stdio (`bench-gateway mcp`, gateway/mcp/stdio.py) it calls a running gateway.
"""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable
from typing import Annotated, Any, Literal, Protocol

from mcp.server.mcpserver import Context, MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from pydantic import Field

from gateway.mcp.panel_text import ask_text, chat_request, seat_table
from gateway.mcp.remote import Refused

INSTRUCTIONS = """\
Bench Gateway seats a panel of several language models on one prompt and returns every answer \
side by side, each with a call id. Use it for second opinions on code, designs and facts.

The loop:
1. `list_collections` once, to see which collections (panels of models) you may ask.
2. `ask` a collection with a self-contained prompt (paste the code or facts the seats need; \
they cannot see your files). The reply has every seat's answer and a seat table of call ids.
3. Check each answer against the code or the facts yourself: models are often confidently wrong.
4. Send one `verdict` per call id: useful true or false, with a short note, and optionally the \
claims you found real or false. Verdicts decide which models sit on later panels; \
unjudged calls teach the bench nothing.
5. `pending_verdicts` with the call ids you were given tells you which you still owe.
"""

Progress = Callable[[int, int, str], Awaitable[None]]


class Bench(Protocol):
    """What the tools need of the gateway; each call raises Refused with the gateway's words."""

    async def collections(self) -> list[dict[str, Any]]: ...
    async def ask(
        self, body: dict[str, Any], headers: dict[str, str], progress: Progress
    ) -> dict[str, Any]: ...
    async def verdict(self, verdict: dict[str, Any]) -> dict[str, Any]: ...
    async def pending(self, calls: list[str]) -> dict[str, Any]: ...


BenchOf = Callable[[Context], Bench]
LogLevel = Literal["DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"]
LOG_LEVELS: tuple[LogLevel, ...] = ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL")


def python_names(**names: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A tool whose arguments are Python keywords (`with`, `false`) takes them under other
    names with a Field alias; the SDK calls it by the alias, so rename on the way in."""

    def wrap(fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)  # the signature and annotations the SDK reads stay fn's
        async def renamed(**arguments: Any) -> Any:
            return await fn(**{names.get(k, k): v for k, v in arguments.items()})

        return renamed

    return wrap


def build_server(bench_of: BenchOf, log_level: LogLevel = "WARNING") -> MCPServer:
    """The MCP server; *bench_of* gives the Bench serving one tool call (its caller's key).
    *log_level*: the SDK sets the process's root logger to it (WARNING: no line per HTTP
    request of the client underneath, only what is wrong)."""
    server: MCPServer = MCPServer(
        name="bench",
        title="Bench Gateway",
        instructions=INSTRUCTIONS,
        website_url=None,
        log_level=log_level,
    )

    @server.tool(
        structured_output=False,
        description="The collections (panels of models) this key may ask, with their "
        "members, shape and description. Call once before `ask`.",
    )
    async def list_collections(ctx: Context) -> str:
        try:
            found = await bench_of(ctx).collections()
        except Refused as refused:
            raise ToolError(refused.message) from None
        lines = []
        for c in found:
            if c["id"].endswith(":merged"):
                continue
            members = ", ".join(c.get("members") or []) or "chosen by the router"
            lines.append(
                f"- `{c['id'].removeprefix('bench/')}`: {c.get('description') or ''} "
                f"(members: {members}; explorers: {c.get('explorers')}; shape: {c.get('shape')}; "
                f"reply: {c.get('reply')})"
            )
        return "Collections you may ask:\n" + "\n".join(lines)

    @server.tool(
        structured_output=False,
        description="Ask a panel of models one prompt; every seat answers in parallel. Returns "
        "every answer side by side and a seat table with each call id and status. Then check "
        "the answers and send a `verdict` for each answered call. Takes seconds to minutes; "
        "progress is reported as seats finish.",
    )
    @python_names(**{"with": "nominees"})
    async def ask(
        collection: Annotated[
            str, Field(description="A collection name from list_collections, e.g. `core`.")
        ],
        prompt: Annotated[
            str,
            Field(
                description="The question, self-contained: paste the code, diff or facts the "
                "seats need; they cannot see your files.",
                min_length=1,
            ),
        ],
        ctx: Context,
        system: Annotated[
            str | None, Field(description="An optional system message for every seat.")
        ] = None,
        shape: Annotated[
            str | None,
            Field(description="The panel's shape, e.g. review, design, general (optional)."),
        ] = None,
        merged: Annotated[
            bool, Field(description="One merged answer instead of every answer side by side.")
        ] = False,
        nominees: Annotated[
            list[str] | None,
            Field(alias="with", description="Model aliases to seat in explorer chairs."),
        ] = None,
    ) -> str:
        body, headers = chat_request(collection, prompt, system, shape, merged, nominees)

        async def progress(done: int, total: int, message: str) -> None:
            await ctx.report_progress(done, total, message)

        try:
            reply = await bench_of(ctx).ask(body, headers, progress)
        except Refused as refused:
            text = refused.message
            if refused.bench:
                text += "\n\n" + seat_table(refused.bench)
            raise ToolError(text) from None
        return ask_text(reply)

    @server.tool(
        structured_output=False,
        description="Judge one seat's answer by its call id (from ask's seat table): useful "
        "true or false, after checking it. Sending again replaces the verdict.",
    )
    @python_names(**{"false": "false_claims"})
    async def verdict(
        call: Annotated[str, Field(description="The call id, e.g. p1a2b3c4d5e6.member1.")],
        useful: Annotated[bool, Field(description="Was this answer useful and correct?")],
        ctx: Context,
        note: Annotated[str | None, Field(description="Why, in a sentence.")] = None,
        real: Annotated[
            list[str] | None, Field(description="Claims in the answer you found true.")
        ] = None,
        false_claims: Annotated[
            list[str] | None,
            Field(alias="false", description="Claims in the answer you found false."),
        ] = None,
    ) -> str:
        judged: dict[str, Any] = {"call": call, "useful": useful}
        for field, value in (("note", note), ("real", real), ("false", false_claims)):
            if value is not None:
                judged[field] = value
        try:
            answer = await bench_of(ctx).verdict(judged)
        except Refused as refused:
            raise ToolError(refused.message) from None
        if answer.get("recorded"):
            return f"Verdict on {call} recorded ({'useful' if useful else 'not useful'})."
        return f"Verdict on {call} unchanged: the same verdict was already recorded."

    @server.tool(
        structured_output=False,
        description="Which of these call ids are answered and not yet judged (the verdicts "
        "you still owe), which are judged, unanswered, or unknown to this key.",
    )
    async def pending_verdicts(
        calls: Annotated[
            list[str], Field(description="Call ids from ask's seat tables.", max_length=1000)
        ],
        ctx: Context,
    ) -> str:
        try:
            found = await bench_of(ctx).pending(calls)
        except Refused as refused:
            raise ToolError(refused.message) from None
        lines = [
            f"{state}: {', '.join(found.get(state) or []) or 'none'}"
            for state in ("pending", "judged", "unanswered", "unknown")
        ]
        return "\n".join(lines)

    return server
