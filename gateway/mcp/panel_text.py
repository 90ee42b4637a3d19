"""A panel as the bench's tools and shell commands put it: the chat request an `ask` sends, and
the reply as text (every seat's answer, the seat table of call ids, the calls to judge).

Apart from the tools (gateway/mcp/tools.py) because `bench-gateway ask` needs these and not the
MCP SDK, which takes half a second to import.
"""

from __future__ import annotations

from typing import Any


def chat_request(
    collection: str,
    prompt: str,
    system: str | None,
    shape: str | None,
    merged: bool,
    nominees: list[str] | None,
) -> tuple[dict[str, Any], dict[str, str]]:
    """An `ask` as the chat-completions body and headers every route reads (so the tool is
    checked by the same reader as any client: an unknown shape or alias is the same 400)."""
    name = collection.removeprefix("bench/")
    messages = [{"role": "system", "content": system}] if system else []
    messages.append({"role": "user", "content": prompt})
    body: dict[str, Any] = {"model": f"bench/{name}", "messages": messages}
    if merged and not name.endswith(":merged"):
        body["model"] += ":merged"
    if nominees:
        body["with"] = nominees
    return body, ({"x-panel-shape": shape} if shape else {})


# How much of a provider's message a seat's row shows (the record keeps it whole).
MESSAGE_CHARS = 160


def seat_table(bench: dict[str, Any]) -> str:
    """Every seat as a markdown table row: call id, seat, model, status, seconds. A failed
    seat's status names its failure's class and what the provider said, so a panel where every
    seat failed says why each did."""
    rows = ["| call | seat | model | status | seconds |", "| --- | --- | --- | --- | --- |"]
    for seat in bench.get("seats", []):
        status = seat["status"]
        if seat.get("failure"):
            status += f" · {seat['failure']}"
        if seat.get("replaced_by"):
            status += f" (replaced by {seat['replaced_by']})"
        if seat.get("failure") and seat.get("error"):
            status += f": {said(seat['error'])}"
        rows.append(
            f"| `{seat['call']}` | {seat['seat']} | {seat['alias']} | {status} "
            f"| {seat.get('seconds') or 0:.2f} |"
        )
    for skipped in bench.get("skipped", []):
        rows.append(
            f"| - | {skipped.get('seat') or '-'} | {skipped['alias']} | skipped: "
            f"{skipped['why']} | - |"
        )
    return "\n".join(rows)


def said(message: str) -> str:
    """A provider's message as one table cell: one line, no `|`, at most MESSAGE_CHARS."""
    flat = " ".join(message.split()).replace("|", "/")
    return flat if len(flat) <= MESSAGE_CHARS else flat[: MESSAGE_CHARS - 1] + "…"


def judgeable(bench: dict[str, Any]) -> list[str]:
    return [s["call"] for s in bench.get("seats", []) if s["status"] == "ok"]


def ask_text(reply: dict[str, Any]) -> str:
    """The reply's content, then the seat table and which calls want a verdict."""
    bench = reply.get("bench", {})
    content = reply["choices"][0]["message"]["content"]
    owed = judgeable(bench)
    footer = f"Panel `{bench.get('panel')}`, shape {bench.get('shape')}. Seats:\n\n"
    footer += seat_table(bench)
    if owed:
        footer += "\n\nSend a verdict for each of: " + ", ".join(f"`{c}`" for c in owed)
    for note in bench.get("notes", []):
        footer += f"\n\nNote: {note}"
    return f"{content}\n\n---\n\n{footer}\n"
