"""Provider secrets masked wherever the gateway shows or stores text (contract §17).

Why: the config references provider keys (`api_key`, inline or `os.environ/NAME`, and a store
URL's password), and an upstream can echo one back: in an answer, an error, a rate-limit
message. Errors were scrubbed; answers were stored and shown as they came. Now every secret the
config references, of at least `MIN_LENGTH` characters (shorter values are placeholders such as
`ollama`, and masking them would mangle ordinary text), is shown as `…` plus its last four
characters: in seats' answers and errors, route turns (plain, and streamed chunk by chunk, so an
upstream splitting a secret across chunks does not get it through), the records written from
them, logs, and any response body (gateway/access/masked.py).

A stream is masked with a little held back: the end of what came so far that could be the
start of a secret waits for the next piece (or the stream's end), so a secret is never sent in
two halves. Without secrets every call here returns at once.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any

MIN_LENGTH = 8
# A provider's error message names the key it was sent ("Incorrect API key provided: X"), so
# errors are masked of shorter secrets too: a placeholder mangled in an error harms nothing.
MIN_ERROR_LENGTH = 4
_TEXT = -1  # a choice's text, among its streams (a tool call's is its index)


def masked(secret: str) -> str:
    return "…" + secret[-4:]


class Mask:
    """The config's secrets (longest first: one may hold another) and their masked forms."""

    def __init__(self, secrets: Iterable[str], least: int = MIN_LENGTH) -> None:
        found = {s for s in secrets if isinstance(s, str) and len(s) >= least}
        self.secrets = tuple(sorted(found, key=len, reverse=True))
        self._pairs = tuple((s, masked(s)) for s in self.secrets)
        self._bytes = tuple((s.encode(), masked(s).encode()) for s in self.secrets)

    def __bool__(self) -> bool:
        return bool(self.secrets)

    def text(self, text: str | None) -> str | None:
        """*text* with every secret in it masked."""
        if not text or not self.secrets:
            return text
        for secret, shown in self._pairs:
            if secret in text:
                text = text.replace(secret, shown)
        return text

    def data(self, data: bytes) -> bytes:
        for secret, shown in self._bytes:
            if secret in data:
                data = data.replace(secret, shown)
        return data

    def held(self, text: str) -> int:
        """How much of *text*'s end could begin a secret (and so must wait for what follows)."""
        return max((_begun(text, secret) for secret in self.secrets), default=0)

    def held_data(self, data: bytes) -> int:
        return max((_begun(data, secret) for secret, _ in self._bytes), default=0)

    def stream(self) -> StreamMask:
        return StreamMask(self)


def _begun(text: Any, secret: Any) -> int:
    """The length of the longest end of *text* that *secret* starts with (str or bytes, alike),
    shorter than the secret: found from the first character's last places, at C speed."""
    at = text.find(secret[:1], max(0, len(text) - len(secret) + 1))
    while at != -1:
        if secret.startswith(text[at:]):
            return int(len(text) - at)
        at = text.find(secret[:1], at + 1)
    return 0


class StreamMask:
    """One stream of text, masked piece by piece (`feed`), its held end sent by `flush`."""

    def __init__(self, mask: Mask) -> None:
        self.mask = mask
        self._tail = ""

    def feed(self, text: str) -> str:
        """What of *text* (after what was held) may be sent now, masked."""
        whole = self.mask.text(self._tail + text) or ""
        hold = self.mask.held(whole)
        self._tail = whole[len(whole) - hold :] if hold else ""
        return whole[: len(whole) - hold]

    def flush(self) -> str:
        tail, self._tail = self._tail, ""
        return tail


class ChunkMask:
    """A streamed route turn's chat chunks (gateway/upstream/chunks.py, whichever reader read
    them), masked in place as they are relayed: each choice's text and each tool call's
    arguments is a stream of its own; what is held is sent with the choice's finishing chunk."""

    def __init__(self, mask: Mask) -> None:
        self.mask = mask
        self._streams: dict[tuple[int, int], StreamMask] = {}  # (choice, _TEXT or call index)
        self._last_call: dict[tuple[int, int], Any] = {}

    def chunk(self, chunk: Any) -> Any:
        if not self.mask:
            return chunk
        for choice in getattr(chunk, "choices", None) or ():
            index = getattr(choice, "index", 0) or 0
            delta = getattr(choice, "delta", None)
            if delta is None:
                continue
            if getattr(delta, "content", None):
                delta.content = self._stream(index, _TEXT).feed(delta.content)
            for part in getattr(delta, "tool_calls", None) or ():
                function = getattr(part, "function", None)
                key = (index, getattr(part, "index", 0) or 0)
                self._last_call[key] = part
                if function is not None and getattr(function, "arguments", None):
                    function.arguments = self._stream(*key).feed(function.arguments)
            if getattr(choice, "finish_reason", None):
                self._finish(index, delta)
        return chunk

    def _stream(self, index: int, part: int) -> StreamMask:
        key = (index, part)
        if key not in self._streams:
            self._streams[key] = self.mask.stream()
        return self._streams[key]

    def _finish(self, index: int, delta: Any) -> None:
        for (choice, part), stream in self._streams.items():
            tail = stream.flush() if choice == index else ""
            if not tail:
                continue
            if part == _TEXT:
                delta.content = (getattr(delta, "content", None) or "") + tail
                continue
            last = copy.deepcopy(self._last_call[(choice, part)])
            last.id, last.function.name, last.function.arguments = None, None, tail
            delta.tool_calls = [*(getattr(delta, "tool_calls", None) or []), last]

    def message(self, response: Any) -> Any:
        """A plain reply's message, masked in place (its text and its tool calls' arguments)."""
        if not self.mask:
            return response
        for choice in getattr(response, "choices", None) or ():
            message = getattr(choice, "message", None)
            if message is None:
                continue
            if getattr(message, "content", None):
                message.content = self.mask.text(message.content)
            for call in getattr(message, "tool_calls", None) or ():
                function = getattr(call, "function", None)
                if function is not None and getattr(function, "arguments", None):
                    function.arguments = self.mask.text(function.arguments)
        return response
