"""The simulator's `flood`: replies made as they are sent (a large body, an encoded one, one that
ends in a reset or a stall), read over real HTTP on 127.0.0.1."""

from __future__ import annotations

import zlib

import httpx
import pytest

from simulator import validate_behaviour

BODY = {"model": "flooded", "messages": [{"role": "user", "content": "q"}]}


def test_a_flood_sends_its_head_fill_and_tail_without_a_content_length(sim):
    sim.set("flooded", flood={"head": "[", "fill_bytes": 3 << 20, "fill": "ab", "tail": "]"})
    with httpx.Client(timeout=30) as http:
        with http.stream("POST", f"{sim.url}/v1/chat/completions", json=BODY) as reply:
            assert "content-length" not in reply.headers
            body = b"".join(reply.iter_raw())
    assert body == b"[" + b"ab" * (3 << 19) + b"]"
    assert sim.log("flooded")[0]["outcome"] == "flood"


@pytest.mark.parametrize("encoding", ["gzip", "deflate"])
def test_an_encoded_flood_is_small_on_the_wire_and_inflates_to_the_whole(sim, encoding):
    sim.set("flooded", flood={"head": '"', "fill_bytes": 64 << 20, "tail": '"',
                              "encoding": encoding})  # fmt: skip
    with httpx.Client(timeout=30) as http:
        with http.stream("POST", f"{sim.url}/v1/chat/completions", json=BODY) as reply:
            assert reply.headers["content-encoding"] == encoding
            wire = b"".join(reply.iter_raw())
    assert len(wire) < 1 << 20  # 64 MiB of one letter packs into well under 1 MiB
    wbits = -zlib.MAX_WBITS if encoding == "deflate" else 16 + zlib.MAX_WBITS
    assert zlib.decompress(wire, wbits) == b'"' + b"A" * (64 << 20) + b'"'


def test_a_flood_can_end_in_a_reset(sim):
    sim.set("flooded", flood={"head": "data: {}\n\n", "end": "reset"})
    with httpx.Client(timeout=30) as http, pytest.raises(httpx.TransportError):
        with http.stream("POST", f"{sim.url}/v1/chat/completions", json=BODY) as reply:
            b"".join(reply.iter_raw())
    assert sim.log("flooded")[0]["outcome"] == "flood reset"


@pytest.mark.parametrize(
    "flood", [{"fill_bytes": "1"}, {"end": "later"}, {"encoding": "zstd"}, {"size": 1}]
)
def test_a_mistyped_flood_is_refused(flood):
    with pytest.raises(ValueError, match="flood"):
        validate_behaviour({"flood": flood})
