"""A top-level field name no header value can carry (`"ключ"`, `"x\\r\\ny"`) is named in
`X-Bench-Dropped` percent-encoded (UTF-8, as a URL has it), on a panel and on a route turn, in
a reply that is whole; its record keeps the name as it came. Through the real gateway, with
raw bytes on the wire (httpx), as curl sent them."""

from __future__ import annotations

import json
from urllib.parse import unquote

import pytest

from tests.helpers.bench import bench_raw

QUESTION = [{"role": "user", "content": "q"}]
NAMES = [
    pytest.param("ключ", "%D0%BA%D0%BB%D1%8E%D1%87", id="not Latin-1"),
    pytest.param("x\r\ny", "x%0D%0Ay", id="a line break"),
    pytest.param("a,b", "a%2Cb", id="a comma"),
    pytest.param("50%", "50%25", id="a percent sign"),
]


@pytest.fixture
def gw(make_gateway, sim):
    raw = bench_raw(sim.url, max_explorers=0, reserves=0, route_explore=0)
    raw["collections"]["crew"] = {"members": ["alpha", "gamma"], "reply": "route"}
    return make_gateway(raw)


def post(gw, body: dict):
    raw = json.dumps(body, ensure_ascii=False).encode()
    headers = {"Content-Type": "application/json"}
    return gw.http.post("/v1/chat/completions", content=raw, headers=headers)


def named(response) -> list[str]:
    return [n.strip() for n in response.headers["x-bench-dropped"].split(",")]


@pytest.mark.parametrize(("name", "shown"), NAMES)
def test_a_panel_names_such_a_field_percent_encoded_and_answers_whole(gw, sim, name, shown):
    response = post(gw, {"model": "bench/trio", "messages": QUESTION, name: 1, "top_k": 3})
    assert response.status_code == 200, response.text
    assert sorted(named(response)) == sorted([shown, "top_k"])
    assert unquote(shown) == name  # any client decodes it back
    seats = response.json()["bench"]["seats"]
    assert [s["status"] for s in seats] == ["ok"] * 3
    record = gw.http.get(f"/bench/calls/{seats[0]['call']}").json()
    assert name in record["dropped"]  # the record keeps the name as it came


@pytest.mark.parametrize(("name", "shown"), NAMES)
def test_a_route_turn_names_such_a_field_percent_encoded_and_answers_whole(gw, sim, name, shown):
    response = post(gw, {"model": "bench/crew:route", "messages": QUESTION, name: 1})
    assert response.status_code == 200, response.text
    assert named(response) == [shown]
    assert response.json()["choices"][0]["message"]["content"]
    assert len(sim.log()) == 1
