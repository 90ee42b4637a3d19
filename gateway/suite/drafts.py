"""Claims become tasks (contract §20): each verdict's `real` and `false` claims are draft `claim`
tasks (the panel's prompt as the code, the claim, `truth` true or false), listed until someone
approves or rejects them; an approved one runs like a task.

Why drafts are read from the verdicts rather than written beside them: the verdict is already
the record, and reading it keeps one source (a verdict replaced drops its old claims' drafts
unless one was decided). What was decided is kept by draft id, with the task as it was when
approved, so a later verdict cannot change a task that has answers scored against it.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass
from typing import Any

from gateway.store.interface import SuiteStore
from gateway.store.suite_rows import MAX_DRAFT_CODE
from gateway.suite.tasks import Task

VERDICTS_READ = 500  # the newest verdicts with claims that drafts are made from
APPROVED, REJECTED = "approved", "rejected"


@dataclass(frozen=True)
class Draft:
    id: str
    call: str
    shape: str
    claim: str
    truth: bool
    code: str

    def task(self) -> Task:
        return Task(self.id, "claim", self.shape, self.code, None, (), self.claim, self.truth)


def draft_id(call: str, claim: str, truth: bool) -> str:
    said = f"{call}\0{'real' if truth else 'false'}\0{claim}".encode()
    return "d-" + hashlib.sha256(said).hexdigest()[:12]


def drafts_of(rows: list[dict[str, Any]]) -> list[Draft]:
    """The drafts in verdict rows ({call_id, real, false, shape, prompt}), each once. A row
    read without its prompt (its `size`) makes drafts with no code, to count."""
    found: dict[str, Draft] = {}
    for row in rows:
        code = row.get("prompt") or ""
        size = row.get("size", len(code))
        if not size or size > MAX_DRAFT_CODE or ("size" not in row and not code.strip()):
            continue  # (a prompt over MAX_DRAFT_CODE is not read: it makes none)
        for name, truth in (("real", True), ("false", False)):
            for claim in row.get(name) or []:
                if isinstance(claim, str) and claim.strip():
                    key = draft_id(row["call_id"], claim.strip(), truth)
                    found.setdefault(
                        key, Draft(key, row["call_id"], row["shape"], claim.strip(), truth, code)
                    )
    return list(found.values())


async def waiting(store: SuiteStore, code: bool = True) -> list[Draft]:
    """Drafts nobody decided yet, newest verdict first (without *code*: their code left empty,
    for a count that need not read every prompt)."""
    decided = {d["id"] for d in await store.draft_decisions()}
    made = drafts_of(await store.claim_verdicts(VERDICTS_READ, code))
    return [d for d in made if d.id not in decided]


async def approved(store: SuiteStore) -> dict[str, Task]:
    """The approved drafts, as the tasks they were approved as."""
    tasks = {}
    for row in await store.draft_decisions():
        if row["state"] == APPROVED:
            saved = json.loads(row["task"])
            saved["lines"] = tuple(saved.get("lines") or ())
            tasks[row["id"]] = Task(**saved)
    return tasks


async def decide(store: SuiteStore, draft: str, state: str, when: float) -> Draft | None:
    """Approve or reject a waiting draft; None when no draft waits by that id."""
    found = next((d for d in await waiting(store) if d.id == draft), None)
    if found is not None:
        await store.decide_draft(found.id, state, json.dumps(asdict(found.task())), when)
    return found


def view(draft: Draft) -> dict[str, Any]:
    return asdict(draft)
