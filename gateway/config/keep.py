"""A round-trip edit laid back onto the file as it was written, so every line the edit did not
change stays byte for byte.

Why: ruamel.yaml's round trip keeps comments, key order and quoting, but it writes the whole
document again in its own hand: a `---` is dropped, `[ a,b ]` becomes `[a, b]`, an anchor
nobody refers to goes, a sequence indented unlike the others is re-indented. A person's config
must not change where they did not ask it to. So the edit is made on the round-tripped data and
dumped, the untouched data is dumped the same way, and the difference between those two dumps
(the edit alone, in ruamel's hand) is applied to the original text, as a three-way merge does.
Where the edit falls on a line ruamel would also have re-rendered, that stretch is taken as
ruamel writes it: it is a changed line.
"""

from __future__ import annotations

import difflib

Span = tuple[int, int, int, int]  # base[i1:i2] is other[j1:j2]


def _spans(base: list[str], other: list[str]) -> list[tuple[bool, Span]]:
    """Each stretch of *base*, and whether *other* changed it, in order."""
    opcodes = difflib.SequenceMatcher(None, base, other, autojunk=False).get_opcodes()
    return [(tag != "equal", (i1, i2, j1, j2)) for tag, i1, i2, j1, j2 in opcodes]


def _start(spans: list[tuple[bool, Span]], line: int) -> int:
    """Where base *line* begins in the other text (after whatever was inserted before it)."""
    for _, (i1, i2, j1, _j2) in spans:
        if i1 <= line < i2:
            return j1 + (line - i1)
    return spans[-1][1][3] if spans else 0


def _end(spans: list[tuple[bool, Span]], line: int) -> int:
    """Where base *line* - 1 ends in the other text (before whatever is inserted after it)."""
    for _, (i1, i2, j1, j2) in spans:
        if i1 < line <= i2:
            return j2 if line == i2 else j1 + (line - i1)
    return 0


def _meet(a: tuple[int, int], b: tuple[int, int], *, touching: bool) -> bool:
    """Do two changed stretches of the base meet? Overlapping ones do, and an insertion strictly
    inside a stretch; *touching*: also an insertion where a stretch starts or ends."""
    (a1, a2), (b1, b2) = a, b
    if touching and (a1 == a2 or b1 == b2):
        return a1 <= b2 and b1 <= a2
    if a1 == a2 and b1 == b2:
        return a1 == b1
    return a1 < b2 and b1 < a2 or (a1 == a2 and b1 < a1 < b2) or (b1 == b2 and a1 < b1 < a2)


def laid_back(written: str, base: str, edited: str, *, near: bool = False) -> str:
    """*written* (the file) with the change from *base* to *edited* (ruamel's dumps of the data
    before and after the edit) applied, every other line of *written* as it was. *near*: a line
    the edit puts beside a line ruamel re-rendered takes that line with it, in ruamel's hand
    (an item added to a list ruamel indents otherwise than the file: the two must agree)."""
    base_lines = base.splitlines(keepends=True)
    written_lines = written.splitlines(keepends=True)
    edited_lines = edited.splitlines(keepends=True)
    ours = _spans(base_lines, written_lines)  # ruamel's re-rendering, to be undone
    theirs = _spans(base_lines, edited_lines)  # the edit
    changed = sorted(
        [(i1, i2, True) for moved, (i1, i2, _, _) in theirs if moved]
        + [(i1, i2, False) for moved, (i1, i2, _, _) in ours if moved]
    )
    groups: list[tuple[int, int, bool]] = []  # stretches of the base, grown until none meet
    for first, last, edit in changed:
        while groups and _meet(
            groups[-1][:2], (first, last), touching=near and (edit or groups[-1][2])
        ):
            g_first, g_last, g_edit = groups.pop()
            first, last, edit = min(first, g_first), max(last, g_last), edit or g_edit
        groups.append((first, last, edit))
    result: list[str] = []
    done = 0  # lines of *written* already placed
    for first, last, edit in groups:
        if not edit:
            continue  # only ruamel's re-rendering: those lines stay as written
        w_first = _start(ours, first)
        result += written_lines[done:w_first]
        result += edited_lines[_end(theirs, first) : _start(theirs, last)]
        done = max(w_first, _end(ours, last))
    result += written_lines[done:]
    return "".join(result)
