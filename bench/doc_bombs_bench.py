"""Hostile documents through the document renderers: each case in its own process (a memory cap, a wall
timeout), its CPU seconds, peak RSS and whether it was rendered or shown as text (over the CPU budget of
generator/doc_budget.py, or too deeply nested).

    PYTHONPATH=. python bench/doc_bombs_bench.py [--timeout 120] [--memory-mb 3000] [case ...]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import time
from collections.abc import Callable

N = 50_000
MARKDOWN: dict[str, Callable[[], str]] = {
    "quotes-50k": lambda: ">" * N + " x\n",
    "quote-lines-1mb": lambda: "".join(">" * i + " x\n" for i in range(1400)),
    "lists-nested-1mb": lambda: "".join("  " * i + "- x\n" for i in range(1000)),
    "brackets-50k": lambda: "[" * N + "\n",
    "brackets-1mb": lambda: "[" * 1_000_000 + "\n",
    "same-headings-20k": lambda: "# h\n" * 20_000,
    "html-nested-50k": lambda: "<div>" * N + "x" + "</div>" * N,
    "fences-in-list": lambda: "- a\n" + "  ```\n" * N,
    "emphasis-50k": lambda: "*" * N + "x" + "*" * N + "\n",
}
RST: dict[str, Callable[[], str]] = {
    "rst-indent-3k": lambda: "".join(" " * i + "x\n\n" for i in range(3000)),
    "rst-substitutions": lambda: "".join(f".. |a{i}| replace:: |a{i + 1}|\n" for i in range(2000)) +
                                 "\n|a0|\n",
    "rst-long-line": lambda: "Title\n=====\n\n" + "x" * 20_000 + "\n",
}


def run_one(name: str) -> None:
    from generator.md_html import render_markdown
    from generator.rst import render_rst

    text = MARKDOWN[name]() if name in MARKDOWN else RST[name]()
    render = render_markdown if name in MARKDOWN else render_rst
    started = time.process_time()
    html = render(text)
    as_text = html.startswith(('<pre class="sb-md-text">', '<pre class="sb-rst-text">'))
    shown = "text" if as_text else "rendered"
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    seconds = time.process_time() - started
    print(f"{name:22s} {seconds:7.2f} s CPU  {rss:6d} MB  {len(text):9d} chars  {shown}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("cases", nargs="*", default=[*MARKDOWN, *RST])
    parser.add_argument("--timeout", type=float, default=120)
    parser.add_argument("--memory-mb", type=int, default=3000)
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        run_one(args.one)
        return
    for name in args.cases:
        def cap(limit: int = args.memory_mb) -> None:
            resource.setrlimit(resource.RLIMIT_AS, (limit << 20, limit << 20))

        try:
            done = subprocess.run([sys.executable, __file__, "--one", name], capture_output=True, text=True,
                                  timeout=args.timeout, preexec_fn=cap, check=False)
            line = done.stdout.strip() or f"{name:22s} failed: {done.stderr.strip().splitlines()[-1:]}"
        except subprocess.TimeoutExpired:
            line = f"{name:22s} over {args.timeout:g} s wall"
        print(line, flush=True)


if __name__ == "__main__":
    main()
