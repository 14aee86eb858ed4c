"""Benchmark: Python-Markdown's conversion of a built wiki's pages, as the site engine runs it and as it ran
before sourcebook's Markdown extension (generator/site/material/raw_blocks.py) and the reused converter.

Usage:
    .venv/bin/python bench/markdown_bench.py OUT_DIR [--runs 3]

OUT_DIR is a `sourcebook build` output folder (its mkdocs.yml and docs/). Every page's Markdown (front matter
taken off) is converted three ways, each timed in CPU seconds (median of --runs):
- "new converter, Markdown only": a markdown.Markdown per page with the site's extensions but without
  sourcebook's (Markdown's html.parser scan finds the raw HTML blocks, its inline pass reads every text);
- "new converter, + raw_blocks": the same with generator.site.material.raw_blocks (as the hooks add it);
- "one converter, + raw_blocks": one converter reset between pages (site_engine.render_markdown).
The three must give the same HTML page by page; the bench says so, or names the first page that differs.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import markdown
from mkdocs.config import load_config

from generator.site.hooks.mkdocs_hooks import RAW_BLOCKS

_FRONT_MATTER = re.compile(r"\A---\n.*?\n---\n", re.S)


def pages(out: Path) -> list[tuple[str, str]]:
    docs = out / "docs"
    return [(p.relative_to(docs).as_posix(), _FRONT_MATTER.sub("", p.read_text(encoding="utf-8")))
            for p in sorted(docs.rglob("*.md"))]


def timed(convert: Callable[[str], str], texts: list[tuple[str, str]]) -> tuple[float, list[str]]:
    started = time.process_time()
    html = [convert(text) for _, text in texts]
    return time.process_time() - started, html


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("out", type=Path, help="a sourcebook build's output folder")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    config = load_config(str(args.out / "mkdocs.yml"))
    config = config.plugins.on_config(config)  # the hooks add raw_blocks
    ours = list(config.markdown_extensions)
    plain = [e for e in ours if e != RAW_BLOCKS]
    settings = config.mdx_configs or {}
    texts = pages(args.out)
    reused = markdown.Markdown(extensions=ours, extension_configs=settings)

    def one(text: str) -> str:
        reused.reset()
        return reused.convert(text)

    ways: dict[str, Callable[[str], str]] = {
        "new converter, Markdown only": lambda t: markdown.Markdown(
            extensions=plain, extension_configs=settings).convert(t),
        "new converter, + raw_blocks": lambda t: markdown.Markdown(
            extensions=ours, extension_configs=settings).convert(t),
        "one converter, + raw_blocks": one,
    }
    seconds: dict[str, list[float]] = {name: [] for name in ways}
    outputs: dict[str, list[str]] = {}
    for _ in range(args.runs):
        for name, convert in ways.items():
            spent, html = timed(convert, texts)
            seconds[name].append(spent)
            outputs[name] = html
    size = sum(len(t) for _, t in texts)
    print(f"{len(texts)} pages, {size / 1e6:.1f} MB of Markdown; CPU s, median of {args.runs}")
    first = next(iter(ways))
    for name in ways:
        med = statistics.median(seconds[name])
        print(f"  {name:32}{med:8.2f}  ({med / statistics.median(seconds[first]):.2f}x)")
    for name in ways:
        pairs = zip(texts, outputs[first], outputs[name], strict=True)
        differ = [page for (page, _), a, b in pairs if a != b]
        print(f"  {name}: " + (f"{len(differ)} pages differ, first {differ[0]}" if differ else "same HTML"))


if __name__ == "__main__":
    main()
