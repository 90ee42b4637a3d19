"""The JSON reply every route sends: starlette's, compact, and ending in a newline.

Why the newline: a reply read with `curl` otherwise ends mid-line, and the shell's prompt lands
on the end of the JSON (`...}$ `); every JSON body the gateway writes, answers and refusals alike,
ends as a text file does. Parsers skip the whitespace, so no client sees a difference.
"""

from __future__ import annotations

from typing import Any

from starlette import responses


class JSONResponse(responses.JSONResponse):
    def render(self, content: Any) -> bytes:
        return super().render(content) + b"\n"
