"""Rows as the gateway writes them (a panel, a seat's call), for the store tests."""

from __future__ import annotations


def panel(i: int) -> dict:
    return {
        "id": f"p{i}",
        "created": 1.0,
        "requested_model": "bench/x",
        "collection": "x",
        "shape": "general",
        "shape_by": "default",
        "prompt": "hi",
        "key_name": "local",
        "skipped": [],
        "notes": [],
        "reserves": [],
    }


def call(panel_id: str, seat: str) -> dict:
    return {
        "id": f"{panel_id}.{seat}",
        "panel_id": panel_id,
        "seat": seat,
        "alias": "a",
        "model": "openai/a",
        "connection": "c",
        "shape": "general",
        "status": "ok",
        "answer": "yes",
        "started": 2.0,
        "finished": 3.0,
        "seconds": 1.0,
    }
