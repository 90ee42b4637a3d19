"""A test's need for a program the project does not install (a Debian package's): found, the
test runs; missing, it skips saying how to get it, and under CI (the `CI` variable) it fails, so
a CI run never passes by skipping what it was meant to check."""

from __future__ import annotations

import os

import pytest


def installed(found: str | None, hint: str, what: str) -> str:
    """*found* (the program or its folder, None if missing); *hint*: how to install it; *what*:
    the tests that need it, as the failure under CI names them."""
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(f"{hint} (CI is set: the {what} tests must run)")
        pytest.skip(hint)
    return found
