"""Build the virtual environments the comparison runs its rivals in.

Why separate environments: LiteLLM's proxy pulls in a large dependency tree (fastapi, prisma
client stubs, apscheduler, ...) and Benchwarmers 0.3.3 is a stdlib-only app with its own
layout; installing either into the project's venv would change what *our* gateway runs on and
so the very thing being measured. Each rival gets its own venv under ``benchmarks/.venvs/``
(gitignored), installed from PyPI by name and pinned version, nothing vendored.

    python benchmarks/setup_envs.py            # create what is missing
    python benchmarks/setup_envs.py --force    # rebuild both

A venv counts as ready only when its marker file names the exact requirement it was built
for, so bumping a pin below rebuilds it on the next run.

When the index cannot serve a pinned companion of an extra (on this workplace's PyPI mirror,
``litellm[proxy]==1.110.2`` names ``litellm-proxy==1.110.2``, which the index does not have, and
companion pins newer than it holds), the extra is installed requirement by requirement: litellm
itself at the exact pin, every other requirement of the extra as declared, and only the ones
the index refuses are relaxed (pin dropped) or, if no version exists at all, left out. What was
relaxed is written to ``<venv>/.bench-relaxed`` and printed in docs/performance.md.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENVS = HERE / ".venvs"

# The same litellm the project pins (pyproject.toml), so "proxy vs ours" compares the proxy
# layer, not two litellm versions.
LITELLM_VERSION = "1.110.2"
ENVS: dict[str, list[str]] = {
    "proxy": [f"litellm[proxy]=={LITELLM_VERSION}"],
    "seed": ["benchwarmers==0.3.3"],
    "tools": ["py-spy==0.4.3"],  # only for --profile
}
_MARKER = ".bench-requirements"
_RELAXED = ".bench-relaxed"
_MISSING = re.compile(r"No matching distribution found for ([A-Za-z0-9_.-]+)")


def venv_python(name: str) -> Path:
    return VENVS / name / "bin" / "python"


def venv_bin(name: str, program: str) -> Path:
    return VENVS / name / "bin" / program


def is_ready(name: str) -> bool:
    marker = VENVS / name / _MARKER
    return (
        venv_python(name).exists()
        and marker.exists()
        and marker.read_text().strip() == " ".join(ENVS[name])
    )


def ensure(name: str, *, force: bool = False, quiet: bool = False) -> Path:
    """Create (or reuse) the venv *name*; return its python. Raises on a failed install."""
    if name not in ENVS:
        raise KeyError(f"unknown environment {name!r}; known: {', '.join(ENVS)}")
    root = VENVS / name
    if is_ready(name) and not force:
        return venv_python(name)
    if root.exists():
        shutil.rmtree(root)
    VENVS.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    if not quiet:
        print(f"[setup] creating {root} with {' '.join(ENVS[name])} (from PyPI) ...", flush=True)
    # The base interpreter, not the project venv's: a venv of a venv works but is fragile.
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(root)], check=True)
    pip = [str(venv_python(name)), "-m", "pip", "install", "-q", "--disable-pip-version-check"]
    done = subprocess.run([*pip, *ENVS[name]], capture_output=True, text=True)
    if done.returncode:
        relaxed = _install_relaxed(name, pip, done.stderr)
        (root / _RELAXED).write_text("\n".join(relaxed) + "\n")
        if not quiet:
            print(f"[setup] {name}: the index lacks some pins; relaxed: {'; '.join(relaxed)}")
    (root / _MARKER).write_text(" ".join(ENVS[name]) + "\n")
    if not quiet:
        print(f"[setup] {name} ready in {time.monotonic() - started:.0f} s", flush=True)
    return venv_python(name)


def relaxed(name: str) -> list[str]:
    path = VENVS / name / _RELAXED
    return [line for line in path.read_text().splitlines() if line] if path.exists() else []


def _install_relaxed(name: str, pip: list[str], first_error: str) -> list[str]:
    """Install ``pkg[extra]==v`` as pkg==v plus the extra's own requirements, relaxing only the
    requirements the index refuses. Returns what was relaxed, as human-readable lines."""
    (spec,) = ENVS[name]
    match = re.fullmatch(r"([A-Za-z0-9_.-]+)\[([a-z0-9_-]+)\]==(.+)", spec)
    if match is None:
        raise RuntimeError(f"installing {spec} failed:\n{first_error[-3000:]}")
    package, extra, version = match.groups()
    done = subprocess.run([*pip, f"{package}=={version}"], capture_output=True, text=True)
    if done.returncode:
        raise RuntimeError(f"installing {package}=={version} failed:\n{done.stderr[-3000:]}")
    script = (
        "import json, sys\n"
        "from importlib.metadata import requires\n"
        "from packaging.requirements import Requirement\n"
        "out = []\n"
        f"for text in requires({package!r}) or []:\n"
        "    r = Requirement(text)\n"
        f"    if r.marker and r.marker.evaluate({{'extra': {extra!r}}}) "
        "and not r.marker.evaluate({'extra': ''}):\n"
        "        r.marker = None\n"
        "        out.append(str(r))\n"
        "print(json.dumps(out))\n"
    )
    listed = subprocess.run([pip[0], "-c", script], check=True, capture_output=True, text=True)
    wanted: list[str] = json.loads(listed.stdout)
    notes: list[str] = []
    for _ in range(len(wanted) + 1):
        done = subprocess.run([*pip, *wanted], capture_output=True, text=True)
        if done.returncode == 0:
            return notes
        missing = _MISSING.search(done.stderr)
        if missing is None:
            raise RuntimeError(f"installing {spec}'s requirements failed:\n{done.stderr[-3000:]}")
        bad = missing.group(1).lower()
        found = next((w for w in wanted if re.split(r"[<>=!~\[ ]", w)[0].lower() == bad), None)
        if found is None:
            raise RuntimeError(f"pip refused {bad}, which {spec} does not name:\n{done.stderr}")
        bare = re.split(r"[<>=!~ ]", found)[0]
        wanted.remove(found)
        if (
            bare != found
            and subprocess.run([*pip, "--dry-run", bare], capture_output=True).returncode == 0
        ):
            wanted.append(bare)
            notes.append(f"{found} -> {bare} (that pin is not on the index)")
        else:
            notes.append(f"{found} left out (no version on the index)")
    raise RuntimeError(f"could not install {spec}'s requirements")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--force", action="store_true", help="rebuild even if present")
    parser.add_argument("names", nargs="*", default=list(ENVS), help=f"any of {', '.join(ENVS)}")
    args = parser.parse_args(argv)
    for name in args.names:
        ensure(name, force=args.force)
    return 0


if __name__ == "__main__":
    sys.exit(main())
