"""Benchmark: what rendering a repository's documents for their wiki pages costs, cold and cached.

Usage:
    .venv/bin/python bench/doc_render_bench.py [REPO] [--runs N]

Prints, for the .rst files and then the .md files of REPO (the repository is only read): the CPU seconds of
rendering them all (reST: docutils, generator/markup/rst.py, its includes resolved in the repository;
Markdown:
generator/markup/md_html.py; parse, HTML, sanitize; median of --runs), then of the same pass through the
document
cache (generator/markup/doc_html.py) once it holds them, as a build after a new commit pays it.
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

from generator.markup.doc_html import DocumentCache, DocumentRender
from generator.markup.md_html import render_markdown
from generator.markup.rst import render_rst


def _texts(repo: Path, suffixes: tuple[str, ...]) -> dict[str, str]:
    skip = {".git", ".sourcebook", "node_modules", ".venv"}
    out = {}
    for dirpath, dirnames, filenames in os.walk(repo):
        dirnames[:] = sorted(d for d in dirnames if d not in skip)
        for name in sorted(filenames):
            if name.endswith(suffixes):
                path = Path(dirpath) / name
                out[path.relative_to(repo).as_posix()] = path.read_text(encoding="utf-8", errors="replace")
    return out


def _renderers(repo: Path) -> dict[str, tuple[dict[str, str], DocumentRender]]:
    rst = _texts(repo, (".rst",))
    by_text = {text: path for path, text in rst.items()}

    def read(path: str) -> str | None:
        return rst.get(path)

    def rst_render(text: str, link: object, symbol: object) -> str:
        return render_rst(text, path=by_text.get(text, ""), read=read)

    return {"reST": (rst, rst_render),
            "Markdown": (_texts(repo, (".md", ".markdown")), lambda text, _l, _s: render_markdown(text))}


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
    for kind, (files, render) in _renderers(Path(args.repo)).items():
        texts = list(files.values())
        if not texts:
            print(f"no {kind} documents under {args.repo}")
            continue
        _report(kind, texts, render, args.runs)
    return 0


def _report(kind: str, texts: list[str], render: DocumentRender, runs: int) -> None:
    def cold_one(text: str) -> str:
        return render(text, lambda _uri: None, lambda _name: None)

    cold_one(texts[0])  # imports (and reST's Sphinx stand-ins), once, as a build pays them
    cold = [_cpu(cold_one, texts) for _ in range(runs)]
    with tempfile.TemporaryDirectory(prefix="doc-bench-") as tmp:
        cache = DocumentCache(Path(tmp), os.urandom(32), render)
        for text in texts:
            cache.render(text, lambda _uri: None)

        def cached(text: str) -> str:
            return cache.render(text, lambda _uri: None)

        warm = [_cpu(cached, texts) for _ in range(runs)]
    size = sum(len(t) for t in texts) // 1000
    print(f"{len(texts)} {kind} documents, {size} KB")
    print(f"  rendered (parse + sanitize):  median {statistics.median(cold):.2f} s CPU")
    print(f"  from the document cache:      median {statistics.median(warm):.3f} s CPU")


if __name__ == "__main__":
    raise SystemExit(main())
