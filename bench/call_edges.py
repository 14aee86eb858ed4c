"""How many call-graph edges a repository gets, and a random sample of them to check by hand.

    PYTHONPATH=$PWD .venv/bin/python bench/call_edges.py /tmp/x-flask [--sample 30] [--seed 1]

Scans and parses like `sourcebook build` (nothing is written), builds the graph, and prints: symbol->symbol
edges in total, within a file and across files, edges into methods, edges from test files, and symbols
with a "Calls" / "Called by" / "Tested by" list on their file page. The sample lists each edge with the first
source line that produced it (the referrer's reference to the target's name), so a reader can judge it.
Run it with another checkout's code on PYTHONPATH to compare before and after.
"""

from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from generator.analyze.analysis import analyze
from sourcebook.config import load_config


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("root")
    ap.add_argument("--sample", type=int, default=30)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--only-methods", action="store_true", help="sample only edges into methods")
    ap.add_argument("--dump", type=Path, help="write every edge to this file, one per line (to diff runs)")
    args = ap.parse_args()

    analysis = analyze(load_config(Path(args.root)), save_cache=False)
    graph, facts = analysis.graph, analysis.facts
    kind = {(p, s.qualname): s.kind for p, f in facts.items() for s in f.symbols}
    name = {(p, s.qualname): s.name for p, f in facts.items() for s in f.symbols}
    is_test = {p: f.file.kind == "test" for p, f in facts.items()}
    edges = sorted((src, dst) for src, targets in graph.calls.items() for dst in targets if dst[1])
    cross = sum(1 for s, d in edges if s[0] != d[0])
    into_methods = sum(1 for _, d in edges if kind.get(d) == "method")
    from_tests = sum(1 for s, d in edges if is_test.get(s[0]) and not is_test.get(d[0]))
    print(f"{args.root}: {len(edges)} edges ({len(edges) - cross} within a file, {cross} across files), "
          f"{into_methods} into methods, {from_tests} from tests into code")
    if args.dump:
        args.dump.write_text("".join(f"{s[0]}::{s[1] or '<top>'} -> {d[0]}::{d[1]}\n" for s, d in edges))
    rng = random.Random(args.seed)
    pool = [e for e in edges if kind.get(e[1]) == "method"] if args.only_methods else edges
    for src, dst in sorted(rng.sample(pool, min(args.sample, len(pool)))):
        ref = next((r for r in facts[src[0]].references
                    if (r.scope or "") == src[1] and r.name == name.get(dst)), None)
        line = ""
        if ref is not None:
            text = (Path(args.root) / src[0]).read_text(encoding="utf-8", errors="replace").splitlines()
            line = f"{src[0]}:{ref.line}: {text[ref.line - 1].strip()[:90]}"
        print(f"- {src[0]}::{src[1] or '<top>'} -> {dst[0]}::{dst[1]}\n    {line}")


if __name__ == "__main__":
    main()
