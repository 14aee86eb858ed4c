"""Scan-and-parse, then an index update: the one path every run that writes an index takes.

`sourcebook build`, `sourcebook index`, the `index` tool (a checkout on the server) and a push (content sent
by a client) differ only in what they read and what they ask of the update, so those differences are the
inputs here and nothing else is written out four times:

- the source: a `Checkout` on disk (scanned and parsed by `analyze`, reusing the facts it is given) or
  `PushedContent` (classified by the scan's rules, only the files whose hash the index does not hold parsed);
- the update (`IndexUpdate`): prune or not, indexed files kept as they are, the wiki's pages and the
  facts with their generated docstrings (a build), the build cache, a reset, the commit a push names.

`read_source` is the front half and `update_from` the back half, and every run calls both: what lies between
is each run's own decision, made from what was read (a build writes its pages there, the `index` tool keeps
the indexed files a partial scan did not reach, a push names the commit when the rows change).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from generator.analyze.analysis import Analysis, FactsSource, Notify, analyze
from generator.analyze.facts import FileFacts, Skipped, SourceFile
from generator.analyze.manifests import Manifests

if TYPE_CHECKING:
    from generator.analyze.facts import PageRecord
    from generator.index.build_cache import CacheUpdate
    from generator.index.embed import Embedder
    from generator.index.report import IndexReport
    from generator.index.writer import PageSource
    from sourcebook.config import Config


@dataclass(frozen=True)
class Checkout:
    """The repository's files on disk under `config.root` (see `analyze` for each field)."""

    known: FactsSource | None = None  # facts of an earlier run (the index's), reused like the facts cache
    select: Callable[[str], bool] | None = None  # only these paths are parsed and kept
    save_cache: bool = True  # write the facts cache back (False for runs that must write nothing)
    notify: Notify | None = None
    processes: int = 1


class PushedFile(Protocol):
    """One file a client sent: its repository path and raw bytes (answer/serving/pushes.py checks them)."""

    @property
    def path(self) -> str: ...

    @property
    def raw(self) -> bytes: ...


@dataclass(frozen=True)
class PushedContent:
    """Files a client sent, there being no checkout here. A file whose hash `unchanged` holds for its path
    (the index has it) is not parsed again."""

    files: Sequence[PushedFile]
    unchanged: Mapping[str, str] = field(default_factory=dict)  # path -> sha the index holds
    manifests: Manifests | None = None  # None: the push carries none to store (the stored ones stay)


@dataclass(frozen=True)
class IndexUpdate:
    """What an update does with what was read (update_index's arguments, named once)."""

    prune: bool = True  # indexed files absent from the update's files are removed
    keep: Sequence[SourceFile] = ()  # indexed files the update carries over as they are (same sha)
    pages: Sequence[PageRecord] | PageSource | None = None  # the wiki's pages (a build), else kept
    facts: Mapping[str, FileFacts] | None = None  # stored instead of the analysis's (a build's: its
    # generated docstrings applied, which the symbols table stores too, marked "llm")
    build_cache: CacheUpdate | None = None
    reset: bool = False  # prune or rebuild even from another checkout than the index's
    commit: str | None = None  # the commit the rows describe, as a push names it
    processes: int = 1


def read_source(config: Config, source: Checkout | PushedContent) -> Analysis:
    """The front half: the files of `source`, their facts (reused or parsed now), their texts, manifests.

    For pushed content, `files` are the accepted files (in path order), `facts` and `texts` those of the files
    parsed now (the others the index holds already), `skipped` what the scan's rules refuse, `manifests` the
    push's (empty when it carries none: see `IndexUpdate` and `update_from`)."""
    if isinstance(source, Checkout):
        return analyze(config, known=source.known, select=source.select, save_cache=source.save_cache,
                       notify=source.notify, processes=source.processes)
    return _read_pushed(config, source)


def _read_pushed(config: Config, source: PushedContent) -> Analysis:
    from generator.analyze.parse import extract
    from generator.analyze.scan import classify_content, decode, settle_shared

    analysis = Analysis(root=config.root, files=[], skipped=[], facts={},
                        manifests=source.manifests or Manifests())
    raws: dict[str, bytes] = {}
    for entry in source.files:
        accepted, reason = classify_content(entry.path, entry.raw)
        if accepted is None:
            analysis.skipped.append(Skipped(entry.path, reason or "skipped"))
        else:
            analysis.files.append(accepted)
            raws[entry.path] = entry.raw
    # `.h` read as the language most of the pushed files are in, as a scan of the checkout reads it (a push
    # of a few files judges by those: the files it does not carry are the index's already)
    analysis.files = settle_shared(analysis.files)
    for f in analysis.files:  # in the order sent; `files` in path order like a scan's, after
        if source.unchanged.get(f.path) == f.sha:
            continue
        analysis.facts[f.path] = extract(f, raws[f.path])
        analysis.texts[f.path] = decode(raws[f.path])
        analysis.parsed += 1
    analysis.files.sort(key=lambda f: f.path)
    return analysis


def update_from(config: Config, analysis: Analysis, embedder: Embedder | None, update: IndexUpdate, *,
                stored_manifests: bool = False) -> IndexReport:
    """The back half: bring the index in step with what `analysis` read and `update` asks.

    The files written are the analysis's, then `update.keep`, in path order when anything is kept; their
    facts are the analysis's unless `update.facts` gives others.
    `stored_manifests`: store none, the index keeps the ones it holds (a push that carries none)."""
    from generator.index.writer import update_index

    files = list(analysis.files)
    if update.keep:
        files = sorted([*files, *update.keep], key=lambda f: f.path)
    facts = analysis.facts if update.facts is None else dict(update.facts)
    return update_index(config, files, facts, update.pages, embedder, prune=update.prune,
                        texts=analysis.texts, manifests=None if stored_manifests else analysis.manifests,
                        build_cache=update.build_cache, processes=update.processes, reset=update.reset,
                        commit=update.commit)

