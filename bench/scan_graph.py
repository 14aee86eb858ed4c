"""Scan and graph cost: median wall time and peak memory, on real checkouts and a generated big tree.

    nice .venv/bin/python bench/scan_graph.py [PATH ...] [--reps N] [--big FILES]

For each PATH (default: /work/eval-repos/flask and /work/eval-repos/requests): scan() median time, then
parse every accepted file once and time build_graph() on the facts. --big FILES writes a synthetic plain
directory of FILES Python modules (packages of 50 files, each importing a few others, with a .gitignore,
a node_modules dir and some binary files) into a temp dir and measures the same, plus peak RSS.
"""

from __future__ import annotations

import argparse
import random
import resource
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from generator.analyze.graph import build_graph
from generator.analyze.parse import extract
from generator.analyze.scan import read_source, scan
from sourcebook.config import load_config


def peak_rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def make_big_tree(root: Path, n_files: int, seed: int = 7) -> None:
    rng = random.Random(seed)
    per_pkg = 50
    n_pkgs = max(1, n_files // per_pkg)
    (root / ".gitignore").write_text("*.tmp\nbuild_out/\n")
    (root / "node_modules" / "dep").mkdir(parents=True)
    (root / "node_modules" / "dep" / "index.js").write_text("module.exports = 1\n")
    for p in range(n_pkgs):
        pkg = root / "src" / "proj" / f"pkg{p}"
        pkg.mkdir(parents=True)
        (pkg / "__init__.py").write_text(f'"""Package {p}."""\n')
        for m in range(per_pkg - 1):
            lines = [f'"""Module {m} of package {p}."""', ""]
            for _ in range(3):
                q, k = rng.randrange(n_pkgs), rng.randrange(per_pkg - 1)
                lines.append(f"from proj.pkg{q}.mod{k} import func_{q}_{k}")
            lines.append("")
            for j in range(6):
                lines += [f"def func_{p}_{m}{'' if j == 0 else f'_{j}'}(x: int) -> int:",
                          f'    """Compute step {j}."""', "    return x + 1", ""]
            lines += [f"class Thing{p}_{m}:", '    """A thing."""', "",
                      "    def run(self) -> int:", f"        return func_{p}_{m}(1)", ""]
            (pkg / f"mod{m}.py").write_text("\n".join(lines))
    (root / "data.tmp").write_text("ignored")
    (root / "blob.py").write_bytes(b"\0" * 100)


def measure(root: Path, reps: int) -> None:
    config = load_config(root)
    times = []
    result = None
    for _ in range(reps):
        start = time.perf_counter()
        result = scan(config)
        times.append(time.perf_counter() - start)
    assert result is not None
    size = sum(f.size for f in result.files)
    print(f"{root}: {len(result.files)} files ({size / 1e6:.2f} MB), {len(result.skipped)} skipped, "
          f"mode {result.mode}")
    print(f"  scan   median {statistics.median(times):.3f} s  (runs: {', '.join(f'{t:.3f}' for t in times)})"
          f"  peak RSS after scan {peak_rss_mb():.0f} MB")
    facts = [extract(f, read_source(config.root, f.path)) for f in result.files]
    gtimes = []
    for _ in range(reps):
        start = time.perf_counter()
        graph = build_graph(facts)
        gtimes.append(time.perf_counter() - start)
    edges = sum(len(v) for v in graph.depends_on.values())
    print(f"  graph  median {statistics.median(gtimes):.3f} s  ({edges} import edges, {len(graph.calls)} "
          f"referencing symbols, {len(graph.modules)} modules)")
    print(f"  peak RSS so far {peak_rss_mb():.0f} MB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", default=["/work/eval-repos/flask", "/work/eval-repos/requests"])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--big", type=int, default=0, help="also measure a generated tree of this many files")
    args = ap.parse_args()
    for path in args.paths:
        measure(Path(path), args.reps)
    if args.big:
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            start = time.perf_counter()
            make_big_tree(root, args.big)
            print(f"generated {args.big} files in {time.perf_counter() - start:.1f} s")
            measure(root, max(1, args.reps // 2))


if __name__ == "__main__":
    main()
