"""docs/clients.md's titled blocks (```lang title="..."```): the settings and snippets the doc
shows are what the tests run, so the doc cannot say one thing while the tests prove another."""

from __future__ import annotations

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "clients.md"
BLOCK = re.compile(r'^```(\w+) title="([^"]+)"\n(.*?)^```$', re.M | re.S)
DOC_URL = "http://127.0.0.1:8123"  # the gateway's address in every block; a test puts its own


def blocks(language: str | None = None) -> dict[str, str]:
    """Title -> text of each titled block (of *language* only, when given)."""
    return {
        title: code
        for lang, title, code in BLOCK.findall(DOC.read_text())
        if language in (None, lang)
    }
