"""An answer's markdown, shown safely. An answer is untrusted text (a model can be told to write
anything, and a prompt can carry anyone's words), so every character of it is escaped first;
only then does this add the few tags it knows: fenced code blocks, paragraphs with their line
breaks, `#` headings, bullet and numbered lists, quotes, rules, pipe tables, `inline code`,
**bold** and *italics*. No raw HTML, link or image ever comes out: a link shows as its text and
its address, an image as its description and address, both as plain text, so nothing on the page
can be followed or fetched because an answer asked.

With `claims=True` (the panel page), each sentence of a paragraph, each list item and each table
row is a claim a person can mark real or false: wrapped in an element carrying its own text in
`data-claim`, which is what the verdict's `real` and `false` lists hold.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from markupsafe import Markup, escape

from gateway.records.verdicts import MAX_CLAIM  # a claim is cut to what a verdict takes

# An answer's markdown is drawn up to here; the rest (a runaway answer: answers are allowed up
# to gateway.max_answer_bytes, 4 MB) is shown as plain text, escaped, so that no answer takes
# long to draw however it is shaped.
DRAWN_MOST = 100_000

# Every pattern is linear in what it reads: no two quantifiers can share the same characters
# (`*+`/`++` keep what they took), each search starts where a run of its opening characters
# starts, and a link's text or address stops at the next `[`, so no two starts scan the same
# characters. (A table row, a run of `!` or `#` and a long line of spaces took seconds each.)
_FENCE = re.compile(r"^```[^\n`]*\n(.*?)(?:^```[ \t]*$|\Z)", re.S | re.M)
_HEADING = re.compile(r"#{1,6}[ \t]++(.+)")  # on a stripped line; the tail's `#`s trimmed after
_ITEM = re.compile(r"([ \t]*+)([-*+]|\d{1,9}[.)])[ \t]++(.*)$")
_RULE = re.compile(r"[ \t]*+([-*_])(?:[ \t]*+\1){2,}+[ \t]*+$")
_QUOTE = re.compile(r"[ \t]*+>[ \t]?(.*)$")
_TABLE_ROW = re.compile(r"[ \t]*+\|.*\|[ \t]*+$")
_TABLE_RULE = re.compile(r"\|?[ \t]*+:?-{2,}+:?[ \t]*+(?:\|[ \t]*+:?-{2,}+:?[ \t]*+)*+\|?$")
_CODE_SPAN = re.compile(r"(`[^`\n]+`)")
_IMAGE = re.compile(r"!\[([^\[\]\n]*+)\]\(([^)\s\[]*+)[^)\n\[]*+\)")
_LINK = re.compile(r"\[([^\[\]\n]++)\]\(([^)\s\[]*+)[^)\n\[]*+\)")
_BOLD = re.compile(r"\*\*([^*\n]+)\*\*")
_ITALIC = re.compile(r"(?<![*\w])\*([^*\s][^*\n]*?)\*(?![*\w])")
# A sentence ends at . ! or ? (closing quotes or brackets may follow), then space, then what
# starts one; not after a few abbreviations a sentence rarely ends on.
_SENTENCE_END = re.compile(r"(?<![.!?])[.!?]++[\"')\]]*+\s++(?=[A-Z0-9\"'(\[`*])")
_ABBREVIATION = re.compile(r"(?:\b(?:e\.g|i\.e|etc|vs|cf|approx|Mr|Mrs|Ms|Dr|St|No)|\b[A-Z])\.$")
_MARKS = "`[*"  # a line without any of these has no code, image, link, bold or italics
_WORD_MOST = 12  # the abbreviation's check reads this much before a sentence's end (> "approx")


def render(text: str | None, claims: bool = False) -> Markup:
    """HTML for *text*: escaped throughout, with a small safe subset of markdown's shapes."""
    if not text:
        return Markup("")
    text, rest = text[:DRAWN_MOST], text[DRAWN_MOST:]
    parts: list[str] = []
    at = 0
    for fence in _FENCE.finditer(text):
        parts.extend(_prose(text[at : fence.start()], claims))
        parts.append(f"<pre><code>{escape(fence.group(1).rstrip(chr(10)))}</code></pre>")
        at = fence.end()
    parts.extend(_prose(text[at:], claims))
    if rest:
        shown = f"{len(rest):,}"
        parts.append(f'<p class="muted">The answer\'s last {shown} characters, as plain text:</p>')
        parts.append(f'<pre class="rest">{escape(rest)}</pre>')
    return Markup("\n".join(parts))


def _prose(text: str, claims: bool) -> list[str]:
    """Blocks between blank lines; within one, runs of lines of one kind each (a heading, list
    items, quoted lines, table rows, a rule, or a paragraph)."""
    out: list[str] = []
    for block in re.split(r"\n[ \t]*\n", text):
        lines = block.strip("\n").split("\n")
        i = 0
        while i < len(lines):
            line = lines[i]
            if not line.strip():
                i += 1
            elif (heading := _heading(line)) is not None:
                out.append(f"<h4>{_inline(heading)}</h4>")
                i += 1
            elif _RULE.match(line):
                out.append("<hr>")
                i += 1
            elif _ITEM.match(line):
                i = _list(lines, i, out, claims)
            elif _QUOTE.match(line):
                end = _run(lines, i, lambda s: bool(_QUOTE.match(s)))
                quoted = "\n".join(m.group(1) for s in lines[i:end] if (m := _QUOTE.match(s)))
                out.append(f"<blockquote>{_paragraph(quoted, claims)}</blockquote>")
                i = end
            elif _TABLE_ROW.match(line) and i + 1 < len(lines) and _table_rule(lines[i + 1]):
                end = _run(lines, i + 2, lambda s: bool(_TABLE_ROW.match(s)))
                out.append(_table(lines[i], lines[i + 2 : end], claims))
                i = end
            else:
                end = _run(lines, i + 1, _plain)
                out.append(_paragraph("\n".join(lines[i:end]), claims))
                i = end
    return out


def _heading(line: str) -> str | None:
    """A heading's words: after its `#`s, without the `#`s and spaces that close it (the words'
    first character stays, even if it is one of them)."""
    found = _HEADING.match(line.strip())
    if found is None:
        return None
    said = found.group(1)
    return said.rstrip(" \t#") or said[0]


def _table_rule(line: str) -> bool:
    return _TABLE_RULE.match(line.strip(" \t")) is not None


def _run(lines: list[str], start: int, keeps: Callable[[str], bool]) -> int:
    """The index after the lines from *start* that *keeps* accepts."""
    end = start
    while end < len(lines) and keeps(lines[end]):
        end += 1
    return end


def _plain(line: str) -> bool:
    """A paragraph's next line: one that starts no other kind of run."""
    return bool(line.strip()) and not (
        _heading(line) is not None
        or _ITEM.match(line)
        or _RULE.match(line)
        or _QUOTE.match(line)
        or _TABLE_ROW.match(line)
    )


def _list(lines: list[str], i: int, out: list[str], claims: bool) -> int:
    """Consecutive items (an indented line without a marker continues the item above) as one
    list, numbered if its first item is; deeper items are marked by their indent's depth."""
    first = _ITEM.match(lines[i])
    numbered = first is not None and first.group(2)[0].isdigit()
    items: list[tuple[int, list[str]]] = []
    while i < len(lines):
        item = _ITEM.match(lines[i])
        if item and not item.group(1) and item.group(2)[0].isdigit() != numbered:
            break  # a list of the other kind begins
        if item:
            depth = min(len(item.group(1).expandtabs(4)) // 2, 3)
            items.append((depth, [item.group(3)]))
        elif lines[i].startswith((" ", "\t")) and lines[i].strip() and items:
            items[-1][1].append(lines[i].strip())
        else:
            break
        i += 1
    tag = "ol" if numbered else "ul"
    rows = "".join(
        f'<li class="depth-{depth}">{_claim(chr(10).join(said), claims)}</li>'
        for depth, said in items
    )
    out.append(f"<{tag}>{rows}</{tag}>")
    return i


def _table(head: str, rows: list[str], claims: bool) -> str:
    def cells(row: str) -> list[str]:
        return [c.strip() for c in row.strip().strip("|").split("|")]

    top = "".join(f"<th>{_inline(c)}</th>" for c in cells(head))
    body = []
    for row in rows:
        tds = "".join(f"<td>{_inline(c)}</td>" for c in cells(row))
        said = " | ".join(cells(row))
        marked = f' class="claim" data-claim="{_claim_text(said)}"' if claims else ""
        body.append(f"<tr{marked}>{tds}</tr>")
    rows_html = "".join(body)
    return (
        f'<table class="md-table"><thead><tr>{top}</tr></thead><tbody>{rows_html}</tbody></table>'
    )


def _paragraph(text: str, claims: bool) -> str:
    if not claims:
        return f"<p>{_lines(text)}</p>"
    return "<p>" + " ".join(_claim(s, True) for s in sentences(text)) + "</p>"


def _claim(text: str, claims: bool) -> str:
    shown = _lines(text)
    if not claims:
        return shown
    return f'<span class="claim" data-claim="{_claim_text(text)}">{shown}</span>'


def _claim_text(text: str) -> str:
    """What a claim says, as the verdict records it: its words, spaces collapsed, escaped for
    an attribute."""
    return str(escape(" ".join(text.split())[:MAX_CLAIM]))


def sentences(text: str) -> list[str]:
    """*text* cut into sentences (not inside `code`, not after e.g. or a single initial). Each
    candidate end is looked at once: the backticks before it are counted from the last one on,
    and the abbreviation is looked for in the few characters before it."""
    found, start, ticks, counted = [], 0, 0, 0
    for end in _SENTENCE_END.finditer(text):
        at = end.start()  # the first of its . ! ?, so the sentence's words end here
        ticks, counted = ticks + text.count("`", counted, at), at
        if ticks % 2 or _abbreviated(text, start, at):
            continue
        found.append(text[start : end.end()].strip())
        start = end.end()
    rest = text[start:].strip()
    if rest:
        found.append(rest)
    return found


def _abbreviated(text: str, start: int, at: int) -> bool:
    """Whether the sentence from *start* ends at *at* on an abbreviation. Only its last few
    characters are read: an abbreviation is short, and one that starts past the first of them
    sees the same word boundary as in the whole sentence."""
    return bool(_ABBREVIATION.search(text[max(start, at - _WORD_MOST) : at] + "."))


def _lines(text: str) -> str:
    return "<br>".join(_inline(line) for line in text.strip("\n").split("\n"))


def _inline(line: str) -> str:
    """One line, escaped, then `code` (left as it is inside) and, outside code, images and
    links as text, **bold** and *italics* (their contents are escaped text already)."""
    if not any(mark in line for mark in _MARKS):
        return str(escape(line))  # nothing to draw (most lines): the patterns need not look
    out = []
    for n, piece in enumerate(_CODE_SPAN.split(line)):
        if n % 2:
            out.append(f"<code>{escape(piece[1:-1])}</code>")
            continue
        safe = str(escape(piece))
        safe = _IMAGE.sub(r'<span class="image">[image: \1 · \2]</span>', safe)
        safe = _LINK.sub(r'\1 <span class="link">(\2)</span>', safe)
        safe = _BOLD.sub(r"<strong>\1</strong>", safe)
        out.append(_ITALIC.sub(r"<em>\1</em>", safe))
    return "".join(out)
