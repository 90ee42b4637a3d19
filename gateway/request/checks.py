"""The checks a panel's body and a route turn's body both pass, whatever format they came in:
the model's name, the sampling fields (their JSON types and OpenAI's documented ranges), `n`.

Pure, so a format's check may run them in the body reader's child process
(gateway/request/body.py); /openapi.json states the same bounds (gateway/openapi/).
"""

from __future__ import annotations

import math
from typing import Any, cast

from gateway.errors import BadRequest
from gateway.request.bounds import MAX_RESPONSE_FORMAT, values_within, whole

COLLECTION_PREFIX = "bench/"
MERGED = ":merged"


# Sampling fields passed on to every seat, with the JSON types each may take and, for numbers,
# the closed range OpenAI documents. Every seat is given them: a value no provider takes would
# only be recorded as an upstream error against each innocent model.
_NUMBER = (int, float)
_INT64 = 2**63
SAMPLING: dict[str, tuple[type, ...]] = {
    "temperature": _NUMBER,
    "top_p": _NUMBER,
    "max_tokens": (int,),
    "max_completion_tokens": (int,),
    "presence_penalty": _NUMBER,
    "frequency_penalty": _NUMBER,
    "seed": (int,),
    "stop": (str, list),
    "user": (str,),
    "response_format": (dict,),
    "logit_bias": (dict,),
    "reasoning_effort": (str,),
}
RANGES: dict[str, tuple[float, float]] = {
    "temperature": (0, 2),
    "top_p": (0, 1),
    "max_tokens": (1, _INT64 - 1),
    "max_completion_tokens": (1, _INT64 - 1),
    "presence_penalty": (-2, 2),
    "frequency_penalty": (-2, 2),
    "seed": (-_INT64, _INT64 - 1),
}
MAX_STOP = 4  # stop sequences
MAX_LOGIT_BIAS = 300  # token ids biased


def collection_named(model: Any) -> tuple[str, bool]:
    """`bench/<collection>` or the bare name, `:merged` at the end for one merged answer:
    (collection, merged by name)."""
    if not isinstance(model, str) or not model.strip():
        raise BadRequest("`model` must be a collection such as bench/<name>.", param="model")
    collection = model.removeprefix(COLLECTION_PREFIX)
    return collection.removesuffix(MERGED), collection.endswith(MERGED)


def sampling_of(body: dict[str, Any]) -> dict[str, Any]:
    """The sampling fields a seat is given, each of the JSON type it may take, numbers finite
    and in range, `stop` and `logit_bias` within OpenAI's bounds."""
    sampling = {}
    for field, types in SAMPLING.items():
        value = body.get(field)
        if value is None:
            continue
        if types == (int,) and whole(value) is not None:
            value = whole(value)  # 56.0 is a whole number, as JSON Schema's integer has it
        if isinstance(value, bool) or not isinstance(value, types):
            raise BadRequest(f"`{field}` has the wrong type.", param=field)
        if field in RANGES:
            low, high = RANGES[field]
            if not _within(cast(float, value), low, high):
                raise BadRequest(f"`{field}` must be between {low} and {high}.", param=field)
        elif field == "stop":
            _check_stop(cast(str | list[Any], value))
        elif field == "logit_bias":
            _check_logit_bias(cast(dict[str, Any], value))
        elif field == "response_format" and not values_within(value, MAX_RESPONSE_FORMAT):
            raise BadRequest(
                f"`response_format` holds more than {MAX_RESPONSE_FORMAT} values.",
                param=field,
            )
        sampling[field] = value
    return sampling


def _within(number: float, low: float, high: float) -> bool:
    """Finite and in [low, high] (a JSON number too large for a float, such as 1e999, parses as
    infinity; a long integer is compared exactly)."""
    return (isinstance(number, int) or math.isfinite(number)) and low <= number <= high


def _check_stop(stop: str | list[Any]) -> None:
    if isinstance(stop, list) and (
        len(stop) > MAX_STOP or not all(isinstance(s, str) for s in stop)
    ):
        raise BadRequest(
            f"`stop` must be a string or a list of at most {MAX_STOP} strings.", param="stop"
        )


def _check_logit_bias(bias: dict[str, Any]) -> None:
    if len(bias) > MAX_LOGIT_BIAS:
        raise BadRequest(
            f"`logit_bias` holds {len(bias)} entries; at most {MAX_LOGIT_BIAS} are taken.",
            param="logit_bias",
        )
    for token, value in bias.items():
        if not (token.isascii() and token.isdigit() and len(token) <= 10):
            raise BadRequest(
                "`logit_bias` keys must be token ids (strings of digits).", param="logit_bias"
            )
        number = isinstance(value, _NUMBER) and not isinstance(value, bool)
        if not (number and _within(value, -100, 100)):
            raise BadRequest(
                "`logit_bias` values must be numbers between -100 and 100.", param="logit_bias"
            )


def one_choice(body: dict[str, Any]) -> None:
    """A panel gives one reply (its seats side by side, or merged): `n` other than 1 is refused
    rather than answered with one choice and no word."""
    n = body.get("n")
    if n is not None and (isinstance(n, bool) or n != 1):
        raise BadRequest(
            "`n` must be 1: a panel gives one reply, every seat's answer side by side "
            "(or one merged answer with bench/<collection>:merged).",
            param="n",
        )
