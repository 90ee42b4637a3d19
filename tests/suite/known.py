"""The suite tests' own tasks, written into each test's `suite.dir`: the tests do not depend on
which tasks ship (the same ids there are replaced by these)."""

from __future__ import annotations

from pathlib import Path

TASK_FILES = {
    "t-mean-bug": "kind: bug\nshape: review\nlanguage: python\ncode: |\n  def mean(xs):\n"
    "      return sum(xs) / len(xs) + 1\nlines: [2]\n",
    "t-mean-control": "kind: control\nshape: review\nlanguage: python\ncode: |\n"
    "  def mean(xs):\n      return sum(xs) / len(xs)\n",
    "t-mean-claim": "kind: claim\nshape: review\nlanguage: python\ncode: |\n  def mean(xs):\n"
    '      return sum(xs) / len(xs)\nclaim: "mean([]) returns 0"\ntruth: false\n',
    "t-last-bug": "kind: bug\nshape: code\nlanguage: javascript\ncode: |\n"
    "  function last(items) {\n    const n = items.length;\n    return items[n];\n  }\n"
    "lines: [3]\n",
    "t-sum-claim": "kind: claim\nshape: code\nlanguage: javascript\ncode: |\n"
    "  function total(items) {\n    return items.reduce((a, b) => a + b, 0);\n  }\n"
    'claim: "total([]) returns 0"\ntruth: true\n',
}


def write_tasks(folder: Path) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    for name, text in TASK_FILES.items():
        (folder / f"{name}.yaml").write_text(text)
    return folder
