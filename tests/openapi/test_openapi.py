"""/openapi.json describes exactly the app's routes, and real replies validate against it."""

from __future__ import annotations

import re

import jsonschema
import pytest
from starlette.routing import Route

from gateway.endpoints.routes import ROUTES
from tests.helpers.bench import served


@pytest.fixture
def spec(gateway):
    return gateway.http.get("/openapi.json").json()


def check(spec, path, method, status, body):
    """Validate a reply body against the response schema the description gives."""
    response = spec["paths"][path][method]["responses"][str(status)]
    schema = response["content"]["application/json"]["schema"]
    jsonschema.validate(body, {**schema, "components": spec["components"]})


def test_every_route_is_described_and_nothing_else(spec):
    described = {(path, m.upper()) for path, ops in spec["paths"].items() for m in ops}
    routed = {
        (re.sub(r"{(\w+):\w+}", r"{\1}", route.path), method)  # {model:path} is {model}
        for route in ROUTES
        if isinstance(route, Route)
        for method in route.methods - {"HEAD"}
    }
    assert described == routed


def test_the_description_is_a_valid_openapi_document(spec):
    assert spec["openapi"].startswith("3.1")
    for schema in spec["components"]["schemas"].values():
        jsonschema.Draft202012Validator.check_schema(schema)


def test_real_replies_match_the_description(gateway, sim, spec):
    completion = gateway.http.post(
        "/v1/chat/completions",
        json={"model": "bench/trio", "messages": [{"role": "user", "content": "hi"}]},
    )
    check(spec, "/v1/chat/completions", "post", 200, completion.json())
    call = completion.json()["bench"]["seats"][0]["call"]
    panel = completion.json()["bench"]["panel"]
    check(spec, "/bench/calls/{call}", "get", 200, gateway.http.get(f"/bench/calls/{call}").json())
    check(
        spec, "/bench/panels/{panel}", "get", 200, gateway.http.get(f"/bench/panels/{panel}").json()
    )
    verdict = gateway.http.post(
        "/bench/verdict", json={"call": call, "useful": True, "real": ["hi"], "note": "ok"}
    )
    check(spec, "/bench/verdict", "post", 200, verdict.json())
    judged = gateway.http.get(f"/bench/calls/{call}").json()
    assert judged["verdict"]["blind"] is False  # the API's verdicts are open
    check(spec, "/bench/calls/{call}", "get", 200, judged)
    check(spec, "/v1/models", "get", 200, gateway.http.get("/v1/models").json())
    check(spec, "/bench/models", "get", 200, gateway.http.get("/bench/models").json())
    merged = gateway.http.post(
        "/v1/chat/completions",
        json={"model": "bench/trio:merged", "messages": [{"role": "user", "content": "hi"}]},
    )
    check(spec, "/v1/chat/completions", "post", 200, merged.json())
    asked = {"model": "bench/trio", "input": "hi"}
    check(spec, "/v1/responses", "post", 200, gateway.http.post("/v1/responses", json=asked).json())
    asked = {"model": "bench/trio", "prompt": "hi"}
    completion = gateway.http.post("/v1/completions", json=asked)
    check(spec, "/v1/completions", "post", 200, completion.json())
    model = gateway.http.get("/v1/models/bench/trio")
    check(spec, "/v1/models/{model}", "get", 200, model.json())
    check(spec, "/v1/models/{model}", "get", 404, gateway.http.get("/models/nope").json())


def test_errors_match_the_description(gateway, sim, spec):
    cases = [
        (gateway.http.post("/v1/chat/completions", content=b"nope"), 400),
        (
            gateway.http.post(
                "/v1/chat/completions",
                json={"model": "bench/x", "messages": [{"role": "user", "content": "h"}]},
            ),
            404,
        ),
        (gateway.http.get("/bench/calls/nope"), 404),
    ]
    for response, status in cases:
        assert response.status_code == status
    for alias in ("alpha", "gamma", "delta", "beta", "epsilon"):
        sim.set(served(alias), status=500)
    failed = gateway.http.post(
        "/v1/chat/completions",
        json={"model": "bench/trio", "messages": [{"role": "user", "content": "hi"}]},
    )
    cases.append((failed, 502))
    for response, status in cases:
        path = "/bench/calls/{call}" if "calls" in str(response.url) else "/v1/chat/completions"
        method = "get" if response.request.method == "GET" else "post"
        check(spec, path, method, status, response.json())
