"""Every module-level regular expression of `answer/` (what questions, queries, scopes and answers meet),
timed on adversarial text at two lengths: a pattern whose time grows with the square of the length shows up
as a ratio near (4x the length)^2 = 16.

    PYTHONPATH=$PWD .venv/bin/python bench/regex_audit.py [--chars 10000]

Each pattern runs `search` and `finditer` over runs of one or two characters (`aaaa`, `a.a.`, `a and a and`,
`!!!!`, ...) of CHARS and 4 x CHARS characters. Prints every pattern that took over 50 ms on the longer text
with both times and their ratio, then PASS/FAIL for "no pattern over 50 ms with a ratio above 8". Patterns
only ever applied with `fullmatch` to short names are timed too (search scans more than fullmatch would).
"""

from __future__ import annotations

import argparse
import importlib
import pkgutil
import re
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import answer  # noqa: E402

RUNS = ("a", "aA", "a_", "a.", "a/", "a ", "_", "1", "x and ", "how does ", "`", "`a", ".", "a:1", "a-", "A",
        "Aa", "(", "a(", "<a", "a\n", '"a', "!", "*a", "#", "__a", "talk to ")


def _patterns() -> list[tuple[str, re.Pattern[str]]]:
    found = []
    for info in pkgutil.walk_packages(answer.__path__, "answer."):
        module = importlib.import_module(info.name)
        for name, value in vars(module).items():
            values = value if isinstance(value, tuple | list) else (value,)
            for item in values:
                if isinstance(item, re.Pattern) and isinstance(item.pattern, str):
                    found.append((f"{info.name}.{name}", item))
    return found


def _seconds(pattern: re.Pattern[str], text: str) -> float:
    """The least of three runs: on a shared machine one run can be slowed by anything."""
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        pattern.search(text)
        for _match in pattern.finditer(text):
            pass
        best = min(best, time.perf_counter() - started)
    return best


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--chars", type=int, default=10000)
    args = parser.parse_args()
    short, long = args.chars, 4 * args.chars
    worst = 0.0
    flagged = 0
    patterns = _patterns()
    for name, pattern in patterns:
        for run in RUNS:
            t_long = _seconds(pattern, (run * long)[:long])
            if t_long < 0.05:
                continue
            t_short = max(_seconds(pattern, (run * short)[:short]), 1e-6)
            ratio = t_long / t_short
            worst = max(worst, ratio)
            flagged += ratio > 8
            print(f"{name:50s} {run!r:12s} {short:>7,} chars {t_short * 1000:8.1f} ms   {long:>7,} chars "
                  f"{t_long * 1000:8.1f} ms   x{ratio:5.1f}")
    print(f"{len(patterns)} patterns, {len(RUNS)} kinds of text")
    print(f"{'PASS' if not flagged else 'FAIL'}: {flagged} pattern/text pairs over 50 ms grew more than 8x "
          f"for 4x the text")
    return 0 if not flagged else 1


if __name__ == "__main__":
    raise SystemExit(main())
