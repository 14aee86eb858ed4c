"""Benchmark: what the HTML choke point (generator/site/hooks/mkdocs_hooks.py) costs a site build.

Usage: .venv/bin/python bench/sanitize_bench.py [REPO] [--runs N]

Builds REPO's wiki once (extractive writer, no index) into a temp dir, then times `mkdocs build --strict` of
that same wiki with the hook and with the `hooks:` entry removed, alternating, N runs each, and prints the
medians side by side (wall and CPU seconds of the mkdocs process). It also times the two hook functions alone
over every built page: the nh3 pass on the page content and the audit of the finished page.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from generator.build import build
from generator.markup.html_sanitize import audit_page, sanitize_content
from sourcebook.config import load_config

CONTENT = re.compile(r'<article class="md-content__inner md-typeset">(.*?)</article>', re.S)


def _child_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def mkdocs_once(config_file: Path, site_dir: Path) -> tuple[float, float]:
    cmd = [sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f", str(config_file),
           "-d", str(site_dir)]
    cpu, started = _child_cpu(), time.perf_counter()
    subprocess.run(cmd, check=True, env=dict(os.environ, NO_MKDOCS_2_WARNING="1"), cwd=config_file.parent)
    return time.perf_counter() - started, _child_cpu() - cpu


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("repo", nargs="?", default="/work/eval-repos/flask")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out"
        report = build(load_config(Path(args.repo), overrides={"out_dir": str(out)}), index=False)
        with_hook = out / "mkdocs.yml"
        text = with_hook.read_text(encoding="utf-8")
        without = out / "mkdocs-nohook.yml"
        without.write_text(re.sub(r"^hooks:\n(  - .*\n)+", "", text, flags=re.M), encoding="utf-8")
        assert "hooks:" in text
        assert "hooks:" not in without.read_text(encoding="utf-8")
        timings: dict[str, list[tuple[float, float]]] = {"with hook": [], "without": []}
        for run in range(args.runs):
            timings["with hook"].append(mkdocs_once(with_hook, Path(tmp) / f"a{run}"))
            timings["without"].append(mkdocs_once(without, Path(tmp) / f"b{run}"))
        pages = sorted((Path(tmp) / "a0").rglob("*.html"))
        full = [p.read_text(encoding="utf-8") for p in pages]
        contents = [m.group(1) if (m := CONTENT.search(page)) else "" for page in full]
        started = time.perf_counter()
        for content in contents:
            sanitize_content(content)
        clean_s = time.perf_counter() - started
        started = time.perf_counter()
        for page, content in zip(full, contents, strict=True):
            audit_page(page, clean_part=content)  # as the hook does: the content was cleaned already
        audit_s = time.perf_counter() - started

    print(f"{args.repo}: {report.pages_total} pages, {len(pages)} HTML files, "
          f"{sum(map(len, full)) / 1e6:.1f} MB of HTML; medians of {args.runs} mkdocs builds")
    print(f"{'':12} {'wall s':>8} {'cpu s':>8}")
    for name, runs in timings.items():
        wall, cpu = statistics.median(w for w, _ in runs), statistics.median(c for _, c in runs)
        print(f"{name:12} {wall:8.2f} {cpu:8.2f}")
    n = max(len(full), 1)
    print(f"nh3 on page content: {clean_s:.2f} s in total ({1000 * clean_s / n:.2f} ms/page)")
    print(f"audit of the pages:  {audit_s:.2f} s in total ({1000 * audit_s / n:.2f} ms/page)")


if __name__ == "__main__":
    main()
