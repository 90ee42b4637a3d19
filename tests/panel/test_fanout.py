"""The seat's result as a value: its record row."""

from __future__ import annotations

import dataclasses

from gateway.panel.fanout import SeatResult, SeatStatus


def test_a_seats_row_holds_every_field_with_its_plain_value():
    result = SeatResult(
        id="p1.member1", panel_id="p1", seat="member1", alias="kimi", model="openai/kimi",
        connection="moonbase", shape="review", status=SeatStatus.RATE_LIMITED,
        error="429 (cooling 30 s)", error_class="rate_limited", seconds=0.25, tokens_in=3,
        replaced_by="reserve1", started=10.0, finished=10.25,
    )  # fmt: skip
    row = result.row()
    assert row == dataclasses.asdict(result)
    assert list(row) == [f.name for f in dataclasses.fields(SeatResult)]
    assert row["status"] == "rate_limited" and isinstance(row["status"], SeatStatus)
    row["answer"] = "changed"
    assert result.answer is None  # the row is a copy: the seat is not changed through it
