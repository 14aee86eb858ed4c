"""Benchmark: what a `sourcebook build` costs on a tree: full, one-edit and no-change builds side by side.

Usage:
    .venv/bin/python bench/build_bench.py REPO [--runs N] [--no-index] [--code DIR [--code DIR2 ...]]
    .venv/bin/python bench/build_bench.py --synthetic-tree [--folders 200 --files 100]
    .venv/bin/python bench/build_bench.py --synthetic N          # N generated modules that import each other
    .venv/bin/python bench/build_bench.py REPO --cold-only [--no-site] [--no-index] [--code A --code B]

One run of the bench prints, for the tree:
- full build (median of --runs cold builds into fresh output folders), then a no-change re-run, then a
  one-edit re-run (one function appended to one mid-sized .py file of a private copy: the repository is never
  written to), each with its stage timings and pages rewritten;
- the peak memory of each build, summed over the build process and its children (mkdocs, render workers):
  RSS (counts pages shared between forked workers once per process) and PSS (shares them out);
- the built `site/`: total size, page count, largest page, nav bytes per page (median, max), and the search
  files with what a first search downloads.

Each build runs in its own interpreter (`--code DIR` picks whose sourcebook: main's checkout for a baseline,
this worktree by default), so imports are paid as the CLI pays them and memory is the build's own. Several
`--code` run side by side: their cold builds take turns, each on its own copy of the tree, and a last table
puts their figures next to each other (CPU seconds are the fair figure on a shared, loaded machine).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
STAGES = ("scan+parse", "graph", "plan", "files", "modules", "overview", "topics", "site", "index")

# run in the child interpreter: one build, its report as JSON on the last line of stdout
_CHILD = """
import json, sys
from pathlib import Path
from generator.build import build
from sourcebook.config import load_config
repo, out, index, site = Path(sys.argv[1]), sys.argv[2], sys.argv[3] == "1", sys.argv[4] == "1"
# an older checkout (a baseline) may lack the site switch and the CPU figures
only = {} if site else {"site": False}
report = build(load_config(repo, overrides={"out_dir": out}), index=index, **only)
print(json.dumps({"timings": report.timings, "cpu": getattr(report, "cpu", {}),
                  "written": len(report.pages_written),
                  "total": report.pages_total, "site_built": report.site_built}))
"""


@dataclass
class Run:
    label: str
    wall: float
    timings: dict[str, float]
    written: int
    total: int
    site_built: bool
    rss_mb: float
    pss_mb: float
    cpu: float = 0.0
    extra: dict[str, float] = field(default_factory=dict)
    stage_cpu: dict[str, float] = field(default_factory=dict)  # stage -> CPU s (build process + children)


# -- memory of a process tree --------------------------------------------------------------------------------


def _tree(root: int) -> list[int]:
    """`root` and its live descendants (from /proc/*/stat's ppid field)."""
    parents: dict[int, list[int]] = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            with open(f"/proc/{entry.name}/stat", encoding="ascii", errors="replace") as fh:
                stat = fh.read()
        except OSError:
            continue
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        parents.setdefault(ppid, []).append(int(entry.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += parents.get(pid, [])
    return out


def _rss_pss_kb(pid: int) -> tuple[int, int]:
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as fh:
            text = fh.read()
    except OSError:
        return 0, 0
    rss = re.search(r"^Rss:\s+(\d+)", text, re.M)
    pss = re.search(r"^Pss:\s+(\d+)", text, re.M)
    return (int(rss.group(1)) if rss else 0), (int(pss.group(1)) if pss else 0)


class TreeMemory:
    """Samples the summed RSS and PSS of a process tree every `interval` seconds; keeps the peaks."""

    def __init__(self, pid: int, interval: float = 0.25) -> None:
        self.pid, self.interval = pid, interval
        self.rss_kb = self.pss_kb = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, daemon=True)
        self._thread.start()

    def _loop(self) -> None:
        while not self._stop.is_set():
            pairs = [_rss_pss_kb(p) for p in _tree(self.pid)]
            self.rss_kb = max(self.rss_kb, sum(r for r, _ in pairs))
            self.pss_kb = max(self.pss_kb, sum(p for _, p in pairs))
            self._stop.wait(self.interval)

    def stop(self) -> None:
        self._stop.set()
        self._thread.join()


def one_build(label: str, repo: Path, out: Path, *, index: bool, code: Path, site: bool = True) -> Run:
    env = dict(os.environ, PYTHONPATH=str(code), NO_MKDOCS_2_WARNING="1")
    started = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-c", _CHILD, str(repo), str(out), "1" if index else "0",
                             "1" if site else "0"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=code)
    memory = TreeMemory(proc.pid)
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - started
    memory.stop()
    stdout = proc.stdout.read() if proc.stdout else ""
    stderr = proc.stderr.read() if proc.stderr else ""
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit(f"{label} build failed (exit {proc.returncode}):\n{stderr[-3000:]}")
    report = json.loads(stdout.strip().splitlines()[-1])
    # wait4's rusage covers the child and its waited-for descendants (mkdocs, workers)
    cpu = usage.ru_utime + usage.ru_stime
    run = Run(label, wall, report["timings"], report["written"], report["total"], report["site_built"],
              memory.rss_kb / 1024, memory.pss_kb / 1024, cpu, stage_cpu=report.get("cpu", {}))
    print(f"  {label}: {wall:.1f}s wall, {cpu:.1f}s CPU, {run.written} pages written, "
          f"peak RSS {run.rss_mb:.0f} MB (PSS {run.pss_mb:.0f} MB)", flush=True)
    return run


# -- the built site ------------------------------------------------------------------------------------------

_NAV_START = re.compile(rb'<nav class="md-nav md-nav--primary[ "]')
_TOC_START = re.compile(rb'<nav class="md-nav md-nav--secondary"')
_NAV_TAG = re.compile(rb"<nav\b|</nav>")


def nav_element_end(page: bytes, start: int) -> int:
    """The end of the <nav> element that starts at `start` (its matching </nav>)."""
    depth = 0
    for tag in _NAV_TAG.finditer(page, start):
        depth += 1 if tag.group() != b"</nav>" else -1
        if depth == 0:
            return tag.end()
    return len(page)


def nav_bytes(page: bytes) -> int:
    """Bytes of the site navigation in a Material page: its primary (left) <nav>, without the copy of the
    page's own table of contents Material nests in it for small screens (see `toc_bytes`)."""
    start = _NAV_START.search(page)
    if not start:
        return 0
    end = nav_element_end(page, start.start())
    toc = _TOC_START.search(page, start.start(), end)
    return end - start.start() - (nav_element_end(page, toc.start()) - toc.start() if toc else 0)


def toc_bytes(page: bytes) -> int:
    """Bytes of one copy of the page's table of contents (a page carries it twice: sidebar and nav)."""
    toc = _TOC_START.search(page)
    return nav_element_end(page, toc.start()) - toc.start() if toc else 0


def first_search_bytes(site: Path) -> tuple[int, list[str], int]:
    """(bytes every page loads for search, their files, bytes of all the lazy search files on disk).

    Material's stock search loads search/search_index.json over http (or, from file://, the identical .js
    copy its offline plugin writes: one of the two, never both). The sharded index
    (generator/site/search_split.py) is that file without sections; a query loads some of the shard files
    in search/<key>/ (what one query loads is measured in a browser: bench/search_bytes.py)."""
    index = site / "search" / "search_index.json"
    if not index.is_file():
        return 0, [], 0
    lazy = 0
    extra = json.loads(index.read_text(encoding="utf-8")).get("config", {}).get("sourcebook")
    if extra and extra.get("dir") and (site / "search" / extra["dir"]).is_dir():
        lazy = sum(p.stat().st_size for p in (site / "search" / extra["dir"]).iterdir())
    elif extra and (site / "search" / extra.get("text", "")).is_file():  # a titles/texts split (older)
        lazy = (site / "search" / extra["text"]).stat().st_size
    return index.stat().st_size, ["search_index.json"], lazy


@dataclass
class SiteFigures:
    total: int
    pages: int
    largest: tuple[int, str]
    nav_median: float
    nav_max: int
    toc_median: float
    toc_max: int
    pages_over_1mb: int
    search_files: list[tuple[int, str]]
    first_search: int
    first_search_names: list[str]
    lazy_search: int


def site_figures(site: Path) -> SiteFigures:
    total = pages = 0
    largest = (0, "")
    navs: list[int] = []
    tocs: list[int] = []
    for path in site.rglob("*"):
        if not path.is_file():
            continue
        size = path.stat().st_size
        total += size
        if path.suffix == ".html":
            pages += 1
            if size > largest[0]:
                largest = (size, str(path.relative_to(site)))
            html = path.read_bytes()
            navs.append(nav_bytes(html))
            tocs.append(toc_bytes(html))
    search_files = sorted(((p.stat().st_size, p.name) for p in (site / "search").glob("*") if p.is_file()),
                          reverse=True) if (site / "search").is_dir() else []
    first, first_names, lazy = first_search_bytes(site)
    return SiteFigures(total, pages, largest, statistics.median(navs) if navs else 0, max(navs, default=0),
                       statistics.median(tocs) if tocs else 0, max(tocs, default=0),
                       sum(1 for p in site.rglob("*.html") if p.stat().st_size > 1 << 20),
                       search_files, first, first_names, lazy)


# -- trees ---------------------------------------------------------------------------------------------------


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


def tiny_tree(root: Path, folders: int, files: int) -> Path:
    """`folders` top-level folders of `files` tiny modules each (the issue's 200 x 100 case)."""
    for f in range(folders):
        pkg = root / f"area{f:03d}"
        pkg.mkdir(parents=True, exist_ok=True)
        for k in range(files):
            text = f'"""Part {k} of area {f}."""\n\n\ndef value_{f}_{k}() -> int:\n    return {k}\n'
            (pkg / f"part{k:03d}.py").write_text(text, encoding="utf-8")
    return root


def edit_target(repo: Path) -> Path:
    """A deterministic mid-sized Python file to edit: the median-sized .py file over 2 KB."""
    sized = sorted((p.stat().st_size, str(p)) for p in repo.rglob("*.py")
                   if ".git" not in p.parts and p.stat().st_size > 2000)
    if not sized:
        sized = sorted((p.stat().st_size, str(p)) for p in repo.rglob("*.py") if ".git" not in p.parts)
    return Path(sized[len(sized) // 2][1])


# -- report --------------------------------------------------------------------------------------------------


def _mb(n: float) -> str:
    return f"{n / 1e6:.1f} MB"


def print_report(repo_label: str, full: list[Run], nochange: Run, edit: Run, edited: str,
                 site: SiteFigures) -> None:
    def med(get: Callable[[Run], float]) -> float:
        return statistics.median(get(r) for r in full)

    print(f"\n== {repo_label}: {full[0].total} pages; full = median of {len(full)} cold build(s)")
    print(f"{'':24}{'full':>12}{'one-edit':>12}{'no-change':>12}")
    rows: list[tuple[str, float, float, float, str]] = [
        ("wall s", med(lambda r: r.wall), edit.wall, nochange.wall, ".1f"),
        ("CPU s (incl. children)", med(lambda r: r.cpu), edit.cpu, nochange.cpu, ".1f")]
    for stage in STAGES:
        if any(stage in r.timings for r in (*full, edit, nochange)):
            rows.append((f"  {stage} s", statistics.median(r.timings.get(stage, 0.0) for r in full),
                         edit.timings.get(stage, 0.0), nochange.timings.get(stage, 0.0), ".1f"))
    for stage in STAGES:  # what each stage cost the machine, and (against its wall) how it uses the cores
        if any(stage in r.stage_cpu for r in (*full, edit, nochange)):
            rows.append((f"  {stage} CPU s", statistics.median(r.stage_cpu.get(stage, 0.0) for r in full),
                         edit.stage_cpu.get(stage, 0.0), nochange.stage_cpu.get(stage, 0.0), ".1f"))
    rows += [("pages written", med(lambda r: r.written), edit.written, nochange.written, ".0f"),
             ("peak RSS MB (tree sum)", med(lambda r: r.rss_mb), edit.rss_mb, nochange.rss_mb, ".0f"),
             ("peak PSS MB (tree sum)", med(lambda r: r.pss_mb), edit.pss_mb, nochange.pss_mb, ".0f")]
    for name, a, b, c, fmt in rows:
        print(f"{name:24}{a:>12{fmt}}{b:>12{fmt}}{c:>12{fmt}}")
    fw = med(lambda r: r.wall)
    print(f"one-edit / full: {edit.wall / fw:.0%}   no-change / full: {nochange.wall / fw:.0%}   "
          f"(edited: {edited})")
    per_page = site.total / max(site.pages, 1) / 1e3
    print(f"site/: {_mb(site.total)} in {site.pages} pages ({per_page:.0f} KB/page); largest page "
          f"{site.largest[0] / 1e3:.0f} KB ({site.largest[1]}); pages over 1 MB: {site.pages_over_1mb}")
    print(f"nav per page: median {site.nav_median / 1e3:.1f} KB, max {site.nav_max / 1e3:.1f} KB; the page's "
          f"own table of contents (x2 per page): median {site.toc_median / 1e3:.1f} KB, "
          f"max {site.toc_max / 1e3:.1f} KB")
    files = site.search_files
    print("search files: " + ", ".join(f"{n} {_mb(s)}" for s, n in files[:6])
          + (f" (+{len(files) - 6} more)" if len(files) > 6 else ""))
    print(f"first search downloads: {_mb(site.first_search)} ({', '.join(site.first_search_names)})"
          + (f", then {_mb(site.lazy_search)} of body text" if site.lazy_search else ""))


@dataclass
class CodeResult:
    code: Path
    full: list[Run]
    nochange: Run
    edit: Run
    edited: str
    site: SiteFigures


def print_comparison(label: str, results: list[CodeResult]) -> None:
    """The checkouts' figures side by side (full = median of the cold builds)."""
    def med(runs: list[Run], get: Callable[[Run], float]) -> float:
        return statistics.median(get(r) for r in runs)

    names = [f"[{k}]" for k in range(len(results))]
    print(f"\n== side by side on {label}: " + "; ".join(f"{n} {r.code}" for n, r in zip(names, results,
                                                                                          strict=True)))
    print(f"{'':28}" + "".join(f"{n:>12}" for n in names))
    rows: list[tuple[str, list[float]]] = [
        ("full wall s", [med(r.full, lambda x: x.wall) for r in results]),
        ("full CPU s (incl. children)", [med(r.full, lambda x: x.cpu) for r in results]),
        ("  site stage wall s", [med(r.full, lambda x: x.timings.get("site", 0.0)) for r in results]),
        ("one-edit CPU s", [r.edit.cpu for r in results]),
        ("no-change CPU s", [r.nochange.cpu for r in results]),
        ("full peak RSS MB", [med(r.full, lambda x: x.rss_mb) for r in results]),
        ("site/ MB", [r.site.total / 1e6 for r in results])]
    for name, values in rows:
        print(f"{name:28}" + "".join(f"{v:>12.1f}" for v in values))
    base = med(results[0].full, lambda x: x.cpu)
    for name, result in zip(names[1:], results[1:], strict=True):
        print(f"full CPU {name} / {names[0]}: {med(result.full, lambda x: x.cpu) / base:.2f}x")


def print_cold(label: str, codes: list[Path], full: list[list[Run]]) -> None:
    """--cold-only: the checkouts' cold builds side by side, every stage's wall and CPU (medians)."""
    def med(runs: list[Run], get: Callable[[Run], float]) -> float:
        return statistics.median(get(r) for r in runs)

    names = [f"[{k}]" for k in range(len(codes))]
    print(f"\n== cold builds of {label} (median of {len(full[0])}): "
          + "; ".join(f"{n} {c}" for n, c in zip(names, codes, strict=True)))
    print(f"{'':24}" + "".join(f"{n + ' wall':>14}{n + ' CPU':>12}" for n in names))
    rows = [("build s", [(med(r, lambda x: x.wall), med(r, lambda x: x.cpu)) for r in full])]
    for stage in STAGES:
        if any(stage in x.timings for r in full for x in r):
            rows.append((f"  {stage} s", [(med(r, lambda x, st=stage: x.timings.get(st, 0.0)),
                                           med(r, lambda x, st=stage: x.stage_cpu.get(st, 0.0)))
                                          for r in full]))
    for name, pairs in rows:
        print(f"{name:24}" + "".join(f"{w:>14.1f}{c:>12.1f}" for w, c in pairs))
    print(f"{'peak RSS MB (tree sum)':24}" + "".join(f"{med(r, lambda x: x.rss_mb):>14.0f}{'':>12}"
                                                      for r in full))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("repo", nargs="?", default="/work/eval-repos/flask")
    parser.add_argument("--runs", type=int, default=1, help="cold builds (the full figure is their median)")
    parser.add_argument("--no-index", action="store_true", help="leave the search index (LanceDB) out")
    parser.add_argument("--code", type=Path, action="append",
                        help="the sourcebook checkout to measure (default this one); repeat it to measure "
                             "several side by side, their cold builds taking turns (a shared machine's "
                             "load then weighs on each alike)")
    parser.add_argument("--synthetic-tree", action="store_true",
                        help="a generated tree of --folders x --files tiny modules instead of REPO")
    parser.add_argument("--folders", type=int, default=200)
    parser.add_argument("--files", type=int, default=100)
    parser.add_argument("--synthetic", type=int, default=0, metavar="N",
                        help="a generated N-module tree whose modules import each other instead of REPO")
    parser.add_argument("--cold-only", action="store_true",
                        help="only the cold builds (no no-change or one-edit run): each stage's wall and CPU")
    parser.add_argument("--no-site", action="store_true",
                        help="leave the site out too (with --cold-only): the stages before it")
    parser.add_argument("--keep", type=Path, help="keep the work folder here (the site, for inspection)")
    args = parser.parse_args()
    index = not args.no_index
    if args.no_site and not args.cold_only:
        parser.error("--no-site needs --cold-only (the other runs measure the site)")
    checkouts: list[Path] = args.code or [HERE]

    def tree(into: Path) -> tuple[Path, str]:
        if args.synthetic_tree:
            return (tiny_tree(into / "tiny", args.folders, args.files),
                    f"synthetic {args.folders} folders x {args.files} files")
        if args.synthetic:
            return synthetic_repo(into / "synthetic", args.synthetic), f"synthetic {args.synthetic} modules"
        source = Path(args.repo).resolve()
        repo = into / source.name  # a private copy: the one-edit run appends to one of its files
        shutil.copytree(source, repo, ignore=shutil.ignore_patterns(".git", ".sourcebook"), symlinks=True)
        return repo, str(source)

    tmp = Path(tempfile.mkdtemp(prefix="sb-bench-", dir=args.keep))
    try:
        codes, repos = [], []
        label = ""
        for k, checkout in enumerate(checkouts):
            # a snapshot: a checkout that moves during a long run (main, while others land) must not change
            # the code between the full, no-change and one-edit builds
            code = tmp / f"code{k}"
            shutil.copytree(checkout, code, symlinks=True, ignore=shutil.ignore_patterns(
                ".git", ".venv", ".sourcebook", "__pycache__", ".mypy_cache", ".ruff_cache", ".pytest_cache"))
            repo, label = tree(tmp / f"tree{k}")
            codes.append(code)
            repos.append(repo)
            print(f"{label}: [{k}] code {checkout.resolve()} (snapshot), index {'on' if index else 'off'}, "
                  f"{os.cpu_count()} CPUs", flush=True)
        full: list[list[Run]] = [[] for _ in checkouts]
        for n in range(args.runs):
            for k, (code, repo) in enumerate(zip(codes, repos, strict=True)):
                out = tmp / f"out{k}-{n}"
                tag = f"[{k}] " if len(checkouts) > 1 else ""
                full[k].append(one_build(f"{tag}full {n + 1}", repo, out, index=index, code=code,
                                         site=not args.no_site))
                if n < args.runs - 1 or args.cold_only:
                    shutil.rmtree(out)
        if args.cold_only:
            print_cold(label, [c.resolve() for c in checkouts], full)
            return
        results = []
        for k, (code, repo) in enumerate(zip(codes, repos, strict=True)):
            tag = f"[{k}] " if len(checkouts) > 1 else ""
            out = tmp / f"out{k}-{args.runs - 1}"
            site = site_figures(out / "site")
            nochange = one_build(f"{tag}no-change", repo, out, index=index, code=code)
            target = edit_target(repo)
            with target.open("a", encoding="utf-8") as fh:
                fh.write("\n\ndef bench_added_function(value: int) -> int:\n"
                         '    """Added by bench/build_bench.py: the one-edit run."""\n    return value + 1\n')
            edit = one_build(f"{tag}one-edit", repo, out, index=index, code=code)
            results.append(CodeResult(checkouts[k].resolve(), full[k], nochange, edit,
                                      str(target.relative_to(repo)), site))
        for k, result in enumerate(results):
            print_report(f"{label} [{k}] {result.code}" if len(results) > 1 else label, result.full,
                         result.nochange, result.edit, result.edited, result.site)
        if len(results) > 1:
            print_comparison(label, results)
    finally:
        if args.keep:
            print(f"kept: {tmp}")
        else:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
