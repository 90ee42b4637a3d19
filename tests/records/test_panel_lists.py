"""`GET /bench/panels` gives a panel's lists (skipped, notes, reserves) as JSON lists, the same
as `GET /bench/panels/{panel}` and the reply's `bench` give them: never JSON text in a string."""

from __future__ import annotations


def test_a_page_of_panels_gives_lists_as_lists(make_gateway, sim):
    gw = make_gateway(max_explorers=0)
    sim.set("sim-gamma", status=503)  # a member fails, so a reserve takes its seat
    completion, _ = gw.ask("bench/trio", "Is this code right?")
    bench = completion.model_extra["bench"]
    (listed,) = gw.http.get("/bench/panels").json()["panels"]
    record = gw.http.get(f"/bench/panels/{bench['panel']}").json()
    for field in ("skipped", "notes", "reserves"):
        assert isinstance(listed[field], list), (field, listed[field])
        assert listed[field] == record[field], field
    assert listed["reserves"] and all(isinstance(r, str) for r in listed["reserves"])
    assert listed["skipped"] == bench["skipped"] and listed["notes"] == bench["notes"]
