"""What a build did (BuildReport), how it reports progress, and what changed since the last build.

The page stages fill in their part of the report through a protocol of their own
(generator/pages/stages.py `PageReport`): they never import the build stage."""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from generator.analyze.facts import FileFacts, Skipped

# stage, done, total (total 0 = unknown); called from the building thread only
Progress = Callable[[str, int, int], None]


@dataclass
class FileChanges:
    """What changed in the repository between two builds, by path (each list capped, sorted)."""

    changed: list[str]
    added: list[str]
    deleted: list[str]


@dataclass
class BuildReport:
    root: Path
    out_dir: Path
    writer_id: str
    files: int = 0
    symbols: int = 0
    skipped: list[Skipped] = field(default_factory=list)
    parsed: int = 0  # files parsed this run
    parse_cached: int = 0  # files whose facts came from the cache
    warnings: int = 0
    pages_total: int = 0
    pages_written: list[str] = field(default_factory=list)
    pages_unchanged: int = 0
    pages_deleted: list[str] = field(default_factory=list)
    pages_restored: list[str] = field(default_factory=list)  # taken as they were from the shared build cache
    drafts_reused: list[str] = field(default_factory=list)  # re-rendered from a draft in the shared cache
    stale: list[str] = field(default_factory=list)  # --check: pages that would be (re)written or deleted
    write_failures: list[str] = field(default_factory=list)  # pages whose writer failed (fallback used)
    kept_prose: list[str] = field(default_factory=list)  # failed pages that kept the model's earlier prose
    fallbacks: list[str] = field(default_factory=list)  # --check: pages whose prose is a fallback
    site_built: bool = False
    site_dir: Path | None = None
    index: Any = None  # generator.index.report.IndexReport when the index was updated
    changes: FileChanges | None = None  # files added/changed/deleted since the last build (None: first one)
    timings: dict[str, float] = field(default_factory=dict)  # stage -> wall seconds
    # stage -> CPU seconds of this process and the children it waited for (the site engine, workers): the
    # fair figure on a shared machine, and with wall the measure of how well a stage uses the cores
    cpu: dict[str, float] = field(default_factory=dict)

    @property
    def skip_reasons(self) -> dict[str, int]:
        return dict(Counter(s.reason for s in self.skipped).most_common())


def file_changes(facts: Mapping[str, FileFacts], previous: Mapping[str, str], *, limit: int = 20
                 ) -> FileChanges:
    """Files added, changed or deleted since the previous build, at most `limit` of each kind (a mass
    change is one commit, not a history).

    `previous` maps each file documented by the last build to its content hash then. The answer side keeps
    them as dated facts (answer/answering/episodes.py `record_changes`, called by `sourcebook build`).
    """
    changed = [p for p, f in sorted(facts.items()) if previous.get(p) not in (None, "", f.file.sha)]
    return FileChanges(
        changed=changed[:limit],
        added=[p for p in sorted(facts) if p not in previous][:limit],
        deleted=[p for p in sorted(previous) if p not in facts][:limit])
