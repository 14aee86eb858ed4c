"""The misses of a history run, TUNE repositories only, for reading by hand.

    python bench/history_misses.py RESULTS.jsonl [--repo NAME ...] [--k 5] [--show 7]

For each question of the TUNE split whose gold file is not in the top k (bench/history_bench.py's
results, either mode): the question, its gold files, the rank of the first gold file, and the files ranked
above it. REPORT questions are never printed: rules are designed on TUNE misses alone and measured on both.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def misses(lines: list[str], repos: set[str], k: int) -> list[dict]:
    """The TUNE records (of `repos`, by the repository's name after its owner, when given) whose first gold
    file ranks below `k`, each with `rank` (0 when no gold file was ranked)."""
    out = []
    for line in lines:
        record = json.loads(line)
        if record.get("split") != "tune" or (repos and record["repo"].rsplit("/", 1)[-1] not in repos):
            continue
        gold = set(record["gold_files"])
        rank = next((i for i, path in enumerate(record["ranked"], start=1) if path in gold), 0)
        if rank == 0 or rank > k:
            out.append({**record, "rank": rank})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("results", type=Path)
    parser.add_argument("--repo", action="append", default=[], help="repository name (repeatable)")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--show", type=int, default=7, help="ranked files shown per miss")
    args = parser.parse_args()
    found = misses(args.results.read_text(encoding="utf-8").splitlines(), set(args.repo), args.k)
    for record in found:
        gold = set(record["gold_files"])
        print("=" * 100)
        print(f"[{record['repo']}] {record['id']} ({record['mode']}) first gold at "
              f"{record['rank'] or 'none'}")
        print("Q:", " | ".join(record["question"].splitlines())[:400])
        print("GOLD:", ", ".join(sorted(gold)))
        for i, path in enumerate(record["ranked"][:args.show], start=1):
            print(f"  {i:2}. {'*' if path in gold else ' '} {path}")
    print(f"{len(found)} misses", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
