"""The body reader's child process imports the format's check and nothing that calls upstream:
litellm would cost it seconds and some 200 MB it never uses (a format package imports its
render and route halves when first used)."""

import asyncio
import json

import pytest

from gateway.config.schema import GatewaySettings
from gateway.errors import GatewayError
from gateway.formats import chat, completions
from gateway.request.body import BodyReader, heavy
from gateway.route.ask import Door


async def _child_has_litellm(check) -> bool:
    reader = BodyReader(GatewaySettings())
    body = {"model": "bench/reviewers", "messages": [{"role": "user", "content": "hi"}]}
    body["logit_bias"] = {str(n): 1 for n in range(20_000)}
    raw = json.dumps(body).encode()
    assert heavy(raw)  # so it is read in the child
    try:
        try:
            await reader.read(raw, check)
        except GatewayError:
            pass  # refused or not, the child has imported the check to read it
        pool = reader._started()
        asked = pool.submit(eval, "'litellm' in __import__('sys').modules")
        return await asyncio.wrap_future(asked)
    finally:
        await reader.close()


@pytest.mark.parametrize("check", [chat.check, completions.check], ids=["chat", "completions"])
def test_the_body_readers_child_reads_a_heavy_body_without_importing_litellm(check):
    assert asyncio.run(_child_has_litellm(check)) is False


def test_the_door_every_chat_body_goes_through_reads_in_the_child_without_litellm():
    door = Door(chat.check, None, frozenset({"agents"}))
    assert asyncio.run(_child_has_litellm(door)) is False
