"""Route mode's Responses stream: the member's text and function-call arguments relayed as they
come, through the official OpenAI SDK against the real gateway and the simulated upstream."""

from __future__ import annotations

import json

from tests.helpers.route import CALL, WEATHER

TOOL = {"type": "function", **WEATHER["function"]}
MODEL = "bench/crew:route"
QUESTION = "Weather in Oslo?"


def test_a_streamed_function_call_loop_relays_its_pieces(crew, sim):
    with crew.client.responses.stream(model=MODEL, input=QUESTION, tools=[TOOL]) as stream:
        events = list(stream)
        first = stream.get_final_response()
    kinds = [e.type for e in events]
    assert kinds[:3] == ["response.created", "response.in_progress", "response.output_item.added"]
    assert kinds.count("response.function_call_arguments.delta") == 2  # as the member sent them
    assert kinds[-3:] == [
        "response.function_call_arguments.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert [e.sequence_number for e in events] == list(range(len(events)))
    (call,) = first.output
    assert (call.type, call.name, json.loads(call.arguments)) == (
        "function_call",
        "weather",
        CALL["arguments"],
    )
    assert events[2].item.call_id == call.call_id and events[2].item.id == call.id
    later = [
        {"role": "user", "content": QUESTION},
        {"type": "function_call", "call_id": call.call_id, "name": call.name,
         "arguments": call.arguments},
        {"type": "function_call_output", "call_id": call.call_id, "output": "windy"},
    ]  # fmt: skip
    with crew.client.responses.stream(model=MODEL, input=later, tools=[TOOL]) as stream:
        deltas = [e.delta for e in stream if e.type == "response.output_text.delta"]
        second = stream.get_final_response()
    assert len(deltas) > 1 and "".join(deltas) == second.output_text == "The tool said: windy"
    assert second.output[0].id == f"msg_{second.id.removeprefix('resp_')}"
    bench = second.model_extra["bench"]
    assert (bench["turn"], bench["alias"]) == (2, "alpha")
    sent = sim.log("sim-alpha")[-1]["body"]["messages"]
    assert sent[-1] == {"role": "tool", "tool_call_id": call.call_id, "content": "windy"}
    record = crew.http.get(f"/bench/conversations/{bench['conversation']}").json()
    assert [(t["alias"], t["status"]) for t in record["turns"]] == [("alpha", "ok")] * 2


def test_text_reaches_the_client_while_the_member_is_still_writing(crew, sim):
    """The member sends two pieces and then stalls: a turn assembled before it is sent would
    show nothing; relayed, both pieces are there."""
    sim.set("sim-alpha", answer="one two three four five six seven", stream_stall_after=2)
    deltas = []
    with crew.client.responses.stream(model=MODEL, input=QUESTION) as stream:
        for event in stream:
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
            if len(deltas) == 2:
                break
    assert deltas == ["one two three ", "four five six "]


def test_a_rate_limited_member_hands_the_streamed_turn_on(crew, sim):
    sim.set("sim-alpha", status=429, retry_after=30)
    with crew.client.responses.stream(model=MODEL, input=QUESTION) as stream:
        response = stream.get_final_response()
    assert response.output_text.startswith("Simulated answer from sim-gamma.")
    assert [f["alias"] for f in response.model_extra["bench"]["failed_over"]] == ["alpha"]
    assert len(sim.log("sim-alpha")) == 1


def test_an_error_after_the_first_piece_is_a_failed_response(crew, sim):
    sim.set("sim-alpha", error_after=1, answer="one two three four five six seven")
    for other in ("sim-gamma", "sim-delta"):  # and nobody can continue it
        sim.set(other, status=500)
    events = list(crew.client.responses.create(model=MODEL, input=QUESTION, stream=True))
    kinds = [e.type for e in events]
    assert "response.output_text.delta" in kinds and "response.completed" not in kinds
    assert kinds[-2:] == ["error", "response.failed"]
    assert "mid-stream" in events[-2].message
    assert events[-1].response.status == "failed"
    assert [len(sim.log(m)) for m in ("sim-gamma", "sim-delta")] == [1, 1]  # asked to go on
