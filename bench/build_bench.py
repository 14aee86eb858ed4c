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


CPU: list[float] = []  # CPU seconds (this process + mkdocs) of each build, in call order


def _cpu() -> float:
    import resource

    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def one_build(repo: Path, out: Path, index: bool) -> tuple[float, dict[str, float], int]:
    """Wall seconds, stage timings and pages written of one build; its CPU seconds go to CPU."""
    config = load_config(repo, overrides={"out_dir": str(out)})
    cpu, started = _cpu(), time.perf_counter()
    report = build(config, index=index)
    CPU.append(_cpu() - cpu)
    return time.perf_counter() - started, report.timings, len(report.pages_written)


def synthetic_repo(root: Path, n_files: int) -> Path:
    """A generated Python package tree of `n_files` modules that import each other (for the memory bench)."""
    for i in range(n_files):
        pkg = root / f"pkg{i // 400}" / f"sub{(i // 40) % 10}"
        pkg.mkdir(parents=True, exist_ok=True)
        (pkg / "__init__.py").touch()
        dep = max(i - 7, 0)
        lines = [f'"""Module {i}: generated for the benchmark."""',
                 f"from pkg{dep // 400}.sub{(dep // 40) % 10}.mod{dep} import Thing{dep}", ""]
        for k in range(6):
            suffix = f"_{k}" if k else ""
            lines += [f"class Thing{i}{suffix}:", f'    """A thing {k} of module {i}."""', "",
                      "    def run(self, x: int, y: str = 'a') -> int:", '        """Run it."""',
                      f"        return Thing{dep}().run(x) + {k}", "",
                      "    def stop(self) -> None:", "        pass", ""]
            lines += [f"def helper_{k}(a, b=None):", f'    """Help {k}."""', "    return a", ""]
        (pkg / f"mod{i}.py").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return root


def peak_rss_mb() -> tuple[float, float]:
    """(this process, largest child) peak resident set sizes in MB (ru_maxrss is KB on Linux)."""
    import resource

    return (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo", nargs="?", default="/work/eval-repos/flask")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--index", action="store_true", help="also update the search index (not in target)")
    parser.add_argument("--synthetic", type=int, default=0, metavar="N",
                        help="build a generated N-file repository once and report time and peak memory")
    args = parser.parse_args()
    if args.synthetic:
        with tempfile.TemporaryDirectory(prefix="sb-bench-synth-") as tmp:
            repo = synthetic_repo(Path(tmp) / "repo", args.synthetic)
            total, timings, written = one_build(repo, Path(tmp) / "out", args.index)
            own, child = peak_rss_mb()
            stages = ", ".join(f"{k} {v:.1f}s" for k, v in timings.items())
            print(f"synthetic {args.synthetic} files: {total:.1f}s wall, {CPU[-1]:.1f}s CPU, {written} pages "
                  f"({stages})")
            print(f"peak RSS: build process {own:.0f} MB, mkdocs subprocess {child:.0f} MB")
        return
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
            print(f"run {n + 1}: {total:.2f}s wall, {CPU[-1]:.2f}s CPU (pages {pages[-1]:.2f}s, "
                  f"site {sites[-1]:.2f}s"
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
    print(f"cold build CPU time (machine is shared; CPU is the stable figure), median of {args.runs}: "
          f"{statistics.median(CPU[:args.runs]):.2f}s")
    print(f"cold build wall time, median of {args.runs}: {statistics.median(totals):.2f}s "
          f"(pages {statistics.median(pages):.2f}s + mkdocs {statistics.median(sites):.2f}s"
          + (f" + index {statistics.median(indexes):.2f}s" if args.index else "") + ")")
    print(f"no-change re-run: {rerun:.2f}s, {rewritten} pages rewritten")
    print(f"one-file change ({target.relative_to(copy)}): {changed:.2f}s, {changed_pages} pages rewritten, "
          f"mkdocs {ctimings.get('site', 0.0):.2f}s")


if __name__ == "__main__":
    main()
