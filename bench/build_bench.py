"""Benchmark: the full extractive build (scan -> parse -> graph -> pages -> mkdocs build --strict) of a repo.

Usage: .venv/bin/python bench/build_bench.py [REPO] [--runs N] [--index]

Output goes to a fresh temp dir per run (the repository is never written to). Prints the median of N cold
builds, split into pages (everything before mkdocs) and site (mkdocs), plus a no-change re-run and a
one-file-change re-run on a copy. The issue's target for pallets/flask is <= 10 s cold (pages + site).
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generator.build import build
from sourcebook.config import load_config

PAGE_STAGES = ("scan", "parse", "graph", "plan", "files", "modules", "overview")


def one_build(repo: Path, out: Path, index: bool) -> tuple[float, dict[str, float], int]:
    config = load_config(repo, overrides={"out_dir": str(out)})
    started = time.perf_counter()
    report = build(config, index=index)
    return time.perf_counter() - started, report.timings, len(report.pages_written)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo", nargs="?", default="/work/eval-repos/flask")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--index", action="store_true", help="also update the search index (not in target)")
    args = parser.parse_args()
    repo = Path(args.repo).resolve()

    totals, pages, sites, indexes = [], [], [], []
    written = 0
    with tempfile.TemporaryDirectory(prefix="sb-bench-") as tmp:
        for n in range(args.runs):
            out = Path(tmp) / f"cold{n}"
            total, timings, written = one_build(repo, out, args.index)
            totals.append(total)
            pages.append(sum(timings.get(s, 0.0) for s in PAGE_STAGES))
            sites.append(timings.get("site", 0.0))
            indexes.append(timings.get("index", 0.0))
            print(f"run {n + 1}: {total:.2f}s (pages {pages[-1]:.2f}s, site {sites[-1]:.2f}s"
                  + (f", index {indexes[-1]:.2f}s" if args.index else "") + ")", flush=True)
            if n < args.runs - 1:
                shutil.rmtree(out)
        out = Path(tmp) / f"cold{args.runs - 1}"
        rerun, _, rewritten = one_build(repo, out, args.index)

        # one-file change on a copy of the repository (the original is never touched)
        copy = Path(tmp) / "copy"
        shutil.copytree(repo, copy, ignore=shutil.ignore_patterns(".git"), symlinks=True)
        one_build(copy, Path(tmp) / "copy-out", args.index)
        target = next(p for p in sorted(copy.rglob("*.py")) if p.stat().st_size > 2000)
        target.write_text(target.read_text(encoding="utf-8") + "\n# touched\n", encoding="utf-8")
        changed, ctimings, changed_pages = one_build(copy, Path(tmp) / "copy-out", args.index)

    print(f"\nrepository: {repo}  ({written} pages)")
    print(f"cold build, median of {args.runs}: {statistics.median(totals):.2f}s "
          f"(pages {statistics.median(pages):.2f}s + mkdocs {statistics.median(sites):.2f}s"
          + (f" + index {statistics.median(indexes):.2f}s" if args.index else "") + ")")
    print(f"no-change re-run: {rerun:.2f}s, {rewritten} pages rewritten")
    print(f"one-file change ({target.relative_to(copy)}): {changed:.2f}s, {changed_pages} pages rewritten, "
          f"mkdocs {ctimings.get('site', 0.0):.2f}s")


if __name__ == "__main__":
    main()
