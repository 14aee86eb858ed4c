"""Throughput of parse (and parse + graph when generator.analyze.graph exists) in MB of source per second.

    nice .venv/bin/python bench/parse_graph.py [PATH ...] [--reps N] [--replicate K]

Reads every file under PATH (default: /work/eval-repos/flask) that a parsed or documentation language
claims, then times extract() over all of them, one core, N repetitions, and prints the median.
--replicate K treats the file set as K copies (distinct paths) to get a bigger, steadier sample.
Times are CPU seconds of this (single-threaded) process, so other load on a shared machine inflates
them less than wall-clock time would; wall-clock medians are printed alongside.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import os
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from generator.analyze.facts import FileFacts, SourceFile
from generator.analyze.languages import GRAMMARS, detect_language
from generator.analyze.parse import extract

_SKIP_DIRS = {".git", "node_modules", "__pycache__", ".venv", ".sourcebook", ".mypy_cache", ".ruff_cache"}
_MAX_SIZE = 1_000_000


def collect(root: Path) -> list[tuple[SourceFile, bytes]]:
    files: list[tuple[SourceFile, bytes]] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if d not in _SKIP_DIRS)
        for name in sorted(filenames):
            full = Path(dirpath, name)
            rel = full.relative_to(root).as_posix()
            language = detect_language(rel)
            if language is None or full.is_symlink():
                continue
            data = full.read_bytes()
            if len(data) > _MAX_SIZE or b"\0" in data[:8000]:
                continue
            sha = hashlib.sha256(data).hexdigest()
            files.append((SourceFile(path=rel, language=language, size=len(data), sha=sha), data))
    return files


def replicate(files: list[tuple[SourceFile, bytes]], k: int) -> list[tuple[SourceFile, bytes]]:
    if k <= 1:
        return files
    out = []
    for i in range(k):
        for f, data in files:
            out.append((SourceFile(f"copy{i}/{f.path}", f.language, f.size, f.sha, f.kind), data))
    return out


def time_parse(files: list[tuple[SourceFile, bytes]]) -> tuple[float, float, list[FileFacts]]:
    start, wall = time.process_time(), time.perf_counter()
    facts = [extract(f, data) for f, data in files]
    return time.process_time() - start, time.perf_counter() - wall, facts


def time_tree_sitter(files: list[tuple[SourceFile, bytes]]) -> float:
    """CPU seconds tree-sitter alone needs for the parsed files: the ceiling extract() works under."""
    from tree_sitter_language_pack import get_parser

    parsers = {lang: get_parser(grammar) for lang, grammar in GRAMMARS.items()}  # type: ignore[arg-type]
    start = time.process_time()
    for f, data in files:
        if f.language in parsers:
            parsers[f.language].parse(data)
    return time.process_time() - start


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="*", default=["/work/eval-repos/flask"])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--replicate", type=int, default=1)
    args = ap.parse_args()

    try:
        from generator.analyze.graph import build_graph
    except ImportError:
        build_graph = None

    for path in args.paths:
        files = replicate(collect(Path(path)), args.replicate)
        total = sum(len(d) for _, d in files)
        mb = total / 1e6
        langs = Counter(f.language for f, _ in files)
        mix = ", ".join(f"{k} {v}" for k, v in langs.most_common(6))
        print(f"{path}: {len(files)} files, {mb:.2f} MB ({mix})")
        time_parse(files[:50])  # warm-up: parsers and compiled queries are built once per process
        ts_times: list[float] = []
        parse_times: list[float] = []
        parse_walls: list[float] = []
        graph_times: list[float] = []
        facts: list[FileFacts] = []
        for _ in range(args.reps):
            facts = []
            gc.collect()
            ts_times.append(time_tree_sitter(files))
            elapsed, wall, facts = time_parse(files)
            parse_times.append(elapsed)
            parse_walls.append(wall)
            if build_graph is not None:
                start = time.process_time()
                build_graph(facts)
                graph_times.append(time.process_time() - start)
        symbols = sum(len(f.symbols) for f in facts)
        refs = sum(len(f.references) for f in facts)
        warnings = sum(len(f.warnings) for f in facts)
        p = statistics.median(parse_times)
        print(f"  facts: {symbols} symbols, {refs} references, {warnings} warnings")
        w = statistics.median(parse_walls)
        ts = statistics.median(ts_times)
        print(f"  tree-sitter parse alone (ceiling) median {ts:.3f} s CPU -> {mb / ts:.2f} MB/s")
        runs = ", ".join(f"{t:.3f}" for t in parse_times)
        print(f"  parse        median {p:.3f} s CPU -> {mb / p:.2f} MB/s"
              f"  (wall {w:.3f} s -> {mb / w:.2f} MB/s; CPU runs: {runs})")
        if graph_times:
            g = statistics.median(graph_times)
            both = statistics.median(a + b for a, b in zip(parse_times, graph_times, strict=True))
            print(f"  graph        median {g:.3f} s CPU")
            print(f"  parse+graph  median {both:.3f} s CPU -> {mb / both:.2f} MB/s")
        else:
            print("  graph: generator.analyze.graph.build_graph not available; parse only")


if __name__ == "__main__":
    main()
