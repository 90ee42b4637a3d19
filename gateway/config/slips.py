"""Mistakes a person makes writing a config, named as what they are rather than by their
symptoms: a shell variable where the bench reads `os.environ/NAME`, a real key pasted into the
file, a line indented one level too far out.

Each is a pattern a schema error would only describe from the outside (`expected a mapping, got
nothing`, then `unknown key 'model'` for the lines that slipped), which leaves the author to work
out what the two have to do with each other.
"""

from __future__ import annotations

import re
import types
from typing import Any, Union, get_args, get_origin

from pydantic import BaseModel

_SHELL = re.compile(r"^\$\{?([A-Za-z_][A-Za-z0-9_]*)(?::?-[^}]*)?\}?$")
_SHELL_IN_LINE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)")
# Providers' key formats (OpenAI, OpenRouter, Anthropic, Groq, NVIDIA, xAI, Hugging Face,
# Google, Perplexity, Cerebras, Replicate), then any long token mixing letters and digits.
_KEY_PREFIX = re.compile(r"^(sk-|gsk_|nvapi-|xai-|hf_|AIza|pplx-|csk-|r8_)[A-Za-z0-9_\-]{16,}$")
_LONG_TOKEN = re.compile(r"^(?=.*[A-Za-z])(?=.*[0-9])[A-Za-z0-9_\-.]{32,}$")


def shell_variable(value: Any) -> str | None:
    """The variable *value* names shell-style (`${NAME}`, `$NAME`), else None."""
    if not isinstance(value, str):
        return None
    found = _SHELL.match(value.strip())
    return found[1] if found else None


def shell_advice(value: str, name: str) -> str:
    return f"{value!r} looks like a shell variable, which is not read here; write os.environ/{name}"


def shell_in_line(line: str) -> str | None:
    """A `${NAME}` in a line YAML could not parse (flow style reads `{` as a mapping)."""
    found = _SHELL_IN_LINE.search(line)
    return found[1] if found else None


def looks_like_a_key(value: Any) -> bool:
    """A secret written into the file: a provider's key format, or a long random token."""
    if not isinstance(value, str) or "/" in value:
        return False
    return bool(_KEY_PREFIX.match(value) or _LONG_TOKEN.match(value))


def slipped(value: Any, model: Any) -> tuple[str, str] | None:
    """When a section of *value* is empty and keys that belong in it sit beside it (written
    one level too far out): that section's name and what happened; else None."""
    if not (isinstance(value, dict) and isinstance(model, type) and issubclass(model, BaseModel)):
        return None
    fields = model.model_fields
    beside = [k for k in value if isinstance(k, str) and k not in fields]
    if not beside:
        return None
    for name, field in fields.items():
        if name not in value or value[name] is not None:
            continue
        inner = _section(field.annotation)
        if inner is None:
            continue
        takes_any = inner.model_config.get("extra") == "allow"
        if takes_any or all(k in inner.model_fields for k in beside):
            them = "them" if len(beside) > 1 else "it"
            keys = ", ".join(beside)
            return name, (
                f"is empty, and {keys} {'are' if len(beside) > 1 else 'is'} written beside it "
                f"(one level too far out): indent {them} under {name}:"
            )
    return None


def _section(annotation: Any) -> type[BaseModel] | None:
    if get_origin(annotation) in (Union, types.UnionType):
        options = [a for a in get_args(annotation) if a is not type(None)]
        annotation = options[0] if len(options) == 1 else None
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return annotation
    return None
