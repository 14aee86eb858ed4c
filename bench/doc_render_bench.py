"""Benchmark: what rendering a repository's reST documents for their wiki pages costs, cold and cached.

Usage:
    .venv/bin/python bench/doc_render_bench.py [REPO] [--runs N]

Prints, for every .rst file of REPO (the repository is only read): the CPU seconds of rendering them all with
docutils (generator/rst.py: parse, HTML, sanitize; median of --runs), then of the same pass through the
document cache (generator/doc_html.py) once it holds them, as a build after a new commit pays it.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generator.doc_html import DocumentCache
from generator.rst import render_rst


def _texts(repo: Path) -> list[str]:
    skip = {".git", ".sourcebook", "node_modules", ".venv"}
    out = []
    for dirpath, dirnames, filenames in os.walk(repo):
        dirnames[:] = sorted(d for d in dirnames if d not in skip)
        out += [(Path(dirpath) / name).read_text(encoding="utf-8", errors="replace")
                for name in sorted(filenames) if name.endswith(".rst")]
    return out


def _cpu(fn: object, texts: list[str]) -> float:
    started = time.process_time()
    for text in texts:
        fn(text)  # type: ignore[operator]
    return time.process_time() - started


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("repo", nargs="?", default="/work/eval-repos/flask")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    texts = _texts(Path(args.repo))
    if not texts:
        print(f"no .rst files under {args.repo}")
        return 1
    render_rst(texts[0])  # imports and the Sphinx stand-ins, once, as a build pays them
    cold = [_cpu(render_rst, texts) for _ in range(args.runs)]
    with tempfile.TemporaryDirectory(prefix="doc-bench-") as tmp:
        cache = DocumentCache(Path(tmp), os.urandom(32))
        for text in texts:
            cache.render(text, lambda _uri: None)

        def cached(text: str) -> str:
            return cache.render(text, lambda _uri: None)

        warm = [_cpu(cached, texts) for _ in range(args.runs)]
    size = sum(len(t) for t in texts) // 1000
    print(f"{len(texts)} reST documents, {size} KB")
    print(f"  rendered (docutils + sanitize): median {statistics.median(cold):.2f} s CPU")
    print(f"  from the document cache:        median {statistics.median(warm):.3f} s CPU")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
