"""The front half of every run, computed in one place: scan -> parse -> manifests -> graph -> plan.

`analyze(config)` is what `sourcebook build` (and its `--check` and `--dry-run`), `sourcebook index` and the
`index` tool call (through generator/index/refresh.py, which pushed content takes too); nothing else scans
and parses a repository. Keeping one copy is what keeps them agreeing:
a graph built without the go.mod data (as one copy once did) ranks and links files differently, so pages look
stale to one command and fresh to another. The index stores the facts and manifests of what it indexed
(generator/index/stored_analysis.py), so the answer side loads an Analysis (`load_analysis`) instead of
re-parsing.

Facts come from, in order: the build's facts cache (<out_dir>/cache/facts.json), the facts the index holds
for the same (path, sha, parser version), and only then the parser.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

from generator.analyze.facts import FileFacts, Skipped, SourceFile
from generator.analyze.manifests import Manifests, manifest_paths, read_manifests
from sourcebook.errors import SourcebookError

if TYPE_CHECKING:
    from generator.analyze.graph import RepoGraph
    from generator.analyze.plan import PagePlan
    from sourcebook.config import Config

log = logging.getLogger(__name__)

# stage, done, total (total 0 = unknown)
Notify = Callable[[str, int, int], None]
FactsSource = Mapping[tuple[str, str], FileFacts]  # (path, sha) -> facts known from an earlier run


@dataclass
class Analysis:
    """What the repository is: its files, their facts, its manifests; the graph and page plan on demand."""

    root: Path
    files: list[SourceFile]  # accepted by scan (and readable), sorted by path
    skipped: list[Skipped]
    facts: dict[str, FileFacts]  # path -> facts, for every file in `files`
    manifests: Manifests
    texts: dict[str, str] = field(default_factory=dict)  # decoded text of the files read in this run
    parsed: int = 0  # files parsed in this run
    parse_cached: int = 0  # files whose facts came from a cache

    @cached_property
    def graph(self) -> RepoGraph:
        from generator.analyze.graph import build_graph

        return build_graph(list(self.facts.values()), self.manifests)

    @cached_property
    def plan(self) -> PagePlan:
        from generator.analyze.plan import plan_pages

        return plan_pages(sorted(self.facts))

    @classmethod
    def from_facts(cls, root: Path, facts: Iterable[FileFacts], manifests: Manifests) -> Analysis:
        """An Analysis of already known facts (the index's), nothing read from the repository."""
        by_path = {f.file.path: f for f in sorted(facts, key=lambda f: f.file.path)}
        return cls(root=root, files=[f.file for f in by_path.values()], skipped=[], facts=by_path,
                   manifests=manifests, parse_cached=len(by_path))


def analyze(config: Config, *, known: FactsSource | None = None, select: Callable[[str], bool] | None = None,
            save_cache: bool = True, notify: Notify | None = None, processes: int = 1) -> Analysis:
    """Scan, then facts for every accepted file (cached or parsed now), and the repository's manifests.

    `known`: facts from an earlier run (the index's), used like the cache. `select`: only files whose path
    it accepts are parsed and kept (the `index` tool on a few paths). `save_cache` writes the facts cache
    back when anything changed (False for runs that must write nothing: --check, --dry-run). `processes`:
    how many parse (this one and forked workers, sourcebook/workers.py; a build passes its CPUs).
    """
    from generator.analyze.scan import scan

    say = notify or (lambda _stage, _done, _total: None)
    say("scan", 0, 0)
    scanned = scan(config)
    say("scan", len(scanned.files), len(scanned.files))
    files = [f for f in scanned.files if select is None or select(f.path)]
    analysis = Analysis(root=config.root, files=[], skipped=list(scanned.skipped), facts={},
                        manifests=load_manifests(config.root, [f.path for f in scanned.files]
                                                 + [s.path for s in scanned.skipped]))
    _parse(config, files, analysis, known or {}, say, save_cache=save_cache and select is None,
           processes=processes)
    return analysis


def load_manifests(root: Path, paths: Iterable[str]) -> Manifests:
    """The manifests among `paths` (scanned or skipped: go.mod is no source file), read from `root`."""
    from generator.analyze.scan import decode

    texts = {}
    for path in manifest_paths(paths):
        try:
            texts[path] = decode((root / path).read_bytes())
        except OSError:
            continue
    return read_manifests(texts)


def _parse(config: Config, files: Sequence[SourceFile], analysis: Analysis, known: FactsSource, say: Notify,
           *, save_cache: bool, processes: int = 1) -> None:
    from generator.analyze.factcache import load_facts_cache, save_facts_cache
    from generator.analyze.parse import extract
    from generator.analyze.scan import decode, read_source
    from sourcebook.workers import ordered_map

    def parse(f: SourceFile) -> tuple[FileFacts, str] | str:
        """(facts, text) of a file, or why it cannot be read: in this process or a forked worker."""
        try:
            source = read_source(config.root, f.path)
        except SourcebookError as exc:  # vanished or changed type since the scan: skip it, say why
            return f"unreadable: {exc}"
        return extract(f, source), decode(source)

    cached = load_facts_cache(config.out_dir)
    hits: list[FileFacts | None] = []
    for f in files:
        hit = cached.get((f.path, f.sha)) or known.get((f.path, f.sha))
        hits.append(hit if hit is not None and hit.file == f else None)
    parsed = ordered_map(parse, [f for f, hit in zip(files, hits, strict=True) if hit is None], processes,
                         describe=lambda f: f"parsing {f.path}")
    for n, (f, hit) in enumerate(zip(files, hits, strict=True), 1):
        if hit is not None:
            analysis.facts[f.path] = hit
            analysis.parse_cached += 1
        else:
            result = next(parsed)
            if isinstance(result, str):
                analysis.skipped.append(Skipped(f.path, result))
                continue
            analysis.facts[f.path], analysis.texts[f.path] = result
            analysis.parsed += 1
        analysis.files.append(f)
        if n % 25 == 0 or n == len(files):
            say("parse", n, len(files))
    if save_cache and (analysis.parsed or len(cached) != len(analysis.facts)):
        try:
            save_facts_cache(config.out_dir, analysis.facts)
        except OSError as exc:  # a read-only output folder only costs the next run a re-parse
            log.warning("cannot save the facts cache under %s: %s", config.out_dir, exc)
