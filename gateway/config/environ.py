"""References to the environment: `os.environ/NAME`, LiteLLM's convention for secrets.

A value written so is read from the environment at load and never written back; every value
resolved is remembered as a secret, so it can be kept out of logs.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from gateway.config.slips import shell_advice, shell_variable
from gateway.config.words import where

ENV_PREFIX = "os.environ/"


def resolve_services(
    raw: dict[str, Any], env: dict[str, str], secrets: list[str], problems: list[str]
) -> dict[str, Any]:
    """*raw* with `store:` and `state:` read from the environment when they say `os.environ/NAME`,
    so a URL with a password need not be written in the file. Resolved even for commands that
    leave provider keys alone (`keys` needs the store); the URL's password is kept out of logs."""
    out = dict(raw)
    for section in ("store", "state"):
        written = out.get(section)
        if shell_variable(written) is not None:
            resolve(written, (section,), env, [], problems)
            del out[section]  # named once, as a shell variable; not again as a malformed URL
            continue
        if not (isinstance(written, str) and written.startswith(ENV_PREFIX)):
            continue
        found = len(problems)
        value = resolve(written, (section,), env, [], problems)
        if len(problems) > found:
            del out[section]  # named once, as unset; not again as a malformed URL
            continue
        password = urlsplit(value).password
        secrets.extend([password] if password else [])
        out[section] = value
    return out


def resolve(
    value: Any,
    loc: tuple[str | int, ...],
    env: dict[str, str] | None,
    secrets: list[str],
    problems: list[str],
) -> Any:
    """*value*, read from *env* when it says `os.environ/NAME` (left as written when *env* is
    None); a shell-style `${NAME}` is named, since it would be sent as those very characters."""
    shell = shell_variable(value)
    if shell is not None:
        problems.append(f"{where(loc)}: {shell_advice(value, shell)}")
        return value
    if env is not None and isinstance(value, str) and value.startswith(ENV_PREFIX):
        name = value[len(ENV_PREFIX) :]
        if name not in env:
            problems.append(f"{where(loc)}: references {value}, but {name} is not set")
            return value  # left as written, so the entry's other checks still run
        secrets.append(env[name])
        return env[name]
    return value
