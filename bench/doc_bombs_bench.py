"""Hostile documents through the document renderers: each case in its own process (a memory cap, a wall
timeout), its CPU seconds, peak RSS and whether it was rendered or shown as text (over the CPU budget of
generator/markup/doc_budget.py, or too deeply nested). The site-* cases build a two-file repository whose
Python file
has the hostile module docstring (generator.build.build, index=False, in a temporary directory: the site
stage's Markdown pass, generator/site/material/engine.py) and give the build's CPU seconds, children included,
and
whether the page was rendered, shown as text (over the page's CPU budget) or its docstring shown as written
(generator/markup/docstrings.py).

    PYTHONPATH=. python bench/doc_bombs_bench.py [--timeout 120] [--memory-mb 3000] [case ...]
"""

from __future__ import annotations

import argparse
import os
import resource
import signal
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

# a Python file's module docstring (on its file page) or the README (on the home page), through the site
# stage's Markdown
SITE: dict[str, tuple[str, Callable[[], str]]] = {
    "site-brackets-300k": ("bomb.py", lambda: "[" * 300_000),
    "site-same-headings-20k": ("bomb.py", lambda: "# h\n" * 20_000),
    "site-readme-headings-20k": ("README.md", lambda: "# Demo\n\n" + "## h\n" * 20_000),
}


def run_site(name: str) -> None:
    import tempfile
    from pathlib import Path

    from generator.build import build
    from sourcebook.config import load_config

    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "repo"
        root.mkdir()
        where, text = SITE[name][0], SITE[name][1]()
        (root / "README.md").write_text(text if where == "README.md" else "# Demo\n\nA small package.\n")
        docstring = text if where == "bomb.py" else "A module."
        (root / "bomb.py").write_text(f'"""{docstring}"""\n\n\ndef f():\n    return 1\n')
        config = load_config(root)
        started = time.time()
        build(config, index=False)
        wall = time.time() - started
        page = next(p for p in config.site_dir.rglob("*.html") if "bomb" in str(p)) \
            if where == "bomb.py" else config.site_dir / "index.html"
        html = page.read_text()
        shown = "text" if 'class="sb-md-text"' in html else \
            "as written" if "This docstring is shown as written" in html else "rendered"
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime
    rss = max(own.ru_maxrss, kids.ru_maxrss) // 1024
    print(f"{name:22s} {cpu:7.2f} s CPU  {rss:6d} MB  {len(text):9d} chars  {shown} "
          f"({wall:.1f} s wall)")


def run_one(name: str) -> None:
    if name in SITE:
        run_site(name)
        return
    from generator.markup.md_html import render_markdown
    from generator.markup.rst import render_rst

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
    parser.add_argument("cases", nargs="*", default=[*MARKDOWN, *RST, *SITE])
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

        # its own process group: on timeout the site engine a site-* case started goes with it
        with subprocess.Popen([sys.executable, __file__, "--one", name], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True, start_new_session=True,
                              preexec_fn=cap) as proc:  # noqa: PLW1509 - this process runs no threads
            try:
                out, err = proc.communicate(timeout=args.timeout)
                line = out.strip() or f"{name:22s} failed: {err.strip().splitlines()[-1:]}"
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.communicate()
                line = f"{name:22s} over {args.timeout:g} s wall"
        print(line, flush=True)


if __name__ == "__main__":
    main()
