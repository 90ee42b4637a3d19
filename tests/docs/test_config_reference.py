"""docs/config-reference.md is the schema's own account of itself: made by
`python -m gateway.config.reference`, it fails here the moment a key, a default or a meaning
changes without the page being made again."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from pydantic import BaseModel

from gateway.config.reference import page
from gateway.config.schema import FileSections

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "docs" / "config-reference.md"


def test_the_page_is_what_the_schema_makes_of_itself():
    made = subprocess.run(
        [sys.executable, "-m", "gateway.config.reference"],
        capture_output=True, text=True, timeout=60, cwd=ROOT, check=True,
    ).stdout  # fmt: skip
    assert made == PAGE.read_text(), (
        "docs/config-reference.md is out of date: "
        "python -m gateway.config.reference > docs/config-reference.md"
    )


def sections() -> list[type[BaseModel]]:
    found, seen = [FileSections], set()
    for model in found:
        for field in model.model_fields.values():
            for inner in (field.annotation, *getattr(field.annotation, "__args__", ())):
                if isinstance(inner, type) and issubclass(inner, BaseModel) and inner not in seen:
                    seen.add(inner)
                    found.append(inner)
    return found


def test_every_key_of_every_section_has_a_meaning_on_the_page():
    text = page()
    for model in sections():
        for key, field in model.model_fields.items():
            if model.__name__ == "LitellmParams":
                continue  # litellm's own keys, handed on as written
            assert field.description, f"{model.__name__}.{key} has no description"
            assert f"{key}` |" in text, f"{model.__name__}.{key} is not on the page"


def test_no_page_of_the_docs_cites_the_contracts_sections():
    """Users do not have the contract: a page says what it means in its own words."""
    for path in [ROOT / "README.md", *(ROOT / "docs").glob("*.md")]:
        text = path.read_text()
        assert "§" not in text and "the contract" not in text, path
