"""An answer's markdown, shown safely. An answer is untrusted text (a model can be told to write
anything, and a prompt can carry anyone's words), so every character of it is escaped first;
only then does this add the few tags it knows: fenced code blocks, paragraphs with their line
breaks, `inline code`, **bold** and `#` headings. No link, image or raw HTML ever comes out.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

_FENCE = re.compile(r"^```[^\n`]*\n(.*?)(?:^```[ \t]*$|\Z)", re.S | re.M)
_INLINE_CODE = re.compile(r"`([^`\n]+)`")
_BOLD = re.compile(r"\*\*([^*\n]+)\*\*")
_HEADING = re.compile(r"^#{1,6}[ \t]+(.+)$")


def render(text: str | None) -> Markup:
    """HTML for *text*: escaped throughout, with a small safe subset of markdown's shapes."""
    if not text:
        return Markup("")
    parts: list[str] = []
    at = 0
    for fence in _FENCE.finditer(text):
        parts.extend(_prose(text[at : fence.start()]))
        parts.append(f"<pre><code>{escape(fence.group(1).rstrip(chr(10)))}</code></pre>")
        at = fence.end()
    parts.extend(_prose(text[at:]))
    return Markup("\n".join(parts))


def _prose(text: str) -> list[str]:
    blocks = []
    for block in re.split(r"\n[ \t]*\n", text):
        if not block.strip():
            continue
        heading = _HEADING.match(block.strip())
        if heading and "\n" not in block.strip():
            blocks.append(f"<h4>{_inline(heading.group(1))}</h4>")
            continue
        lines = [_inline(line) for line in block.strip("\n").split("\n")]
        blocks.append("<p>" + "<br>".join(lines) + "</p>")
    return blocks


def _inline(line: str) -> str:
    """One line, escaped, then `code` and **bold** (their contents are escaped text already)."""
    safe = str(escape(line))
    safe = _INLINE_CODE.sub(r"<code>\1</code>", safe)
    return _BOLD.sub(r"<strong>\1</strong>", safe)
