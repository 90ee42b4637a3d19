"""How long the dashboard's markdown takes to draw answers shaped to make it slow, at n and 4n
characters (docs/reliability.md, N4): each figure should grow about fourfold (linear), and stop
growing past `DRAWN_MOST`, where the rest of an answer is shown as plain text.

    python benchmarks/markdown_shapes.py            # n = 20,000 and 80,000
    python benchmarks/markdown_shapes.py --n 1000000

Before the patterns were made linear: `'|a|b|\\n' + ' ' * 40000 + 'x'` took 15.8 s, `'!' * 40000
+ ' x'` with claims 17 s.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from gateway.dashboard.markdown import render  # noqa: E402


def shapes(n: int) -> dict[str, str]:
    return {
        "table row, spaces": "|a|b|\n" + " " * n + "x",
        "run of !": "!" * n + " x",
        "heading of #": "# " + "#" * n + "x",
        "rule, spaced": "-" + " -" * (n // 2) + " x",
        "open links": "[a](" * (n // 4),
        "open brackets": "[" * n,
        "initials": "A. " * (n // 3),
        "code ticks": "`a. B " * (n // 6),
        "item, continued": "- a\n" + "  b\n" * (n // 4),
        "short lines": "a.\n" * (n // 3),
        "pipes": "|" * n + "x",
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=20_000)
    n = parser.parse_args().n
    print(f"{'shape':<18} {'claims':<7} {n:>10,} {4 * n:>10,}  (seconds)")
    for name, small in shapes(n).items():
        large = shapes(4 * n)[name]
        for claims in (False, True):
            took = []
            for text in (small, large):
                began = time.perf_counter()
                render(text, claims=claims)
                took.append(time.perf_counter() - began)
            print(f"{name:<18} {claims!s:<7} {took[0]:>10.4f} {took[1]:>10.4f}")


if __name__ == "__main__":
    main()
