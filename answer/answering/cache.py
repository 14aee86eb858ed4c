"""The answer cache: normalized question + scope + repo + index state -> the reply, as JSON under out_dir.

An entry remembers a fingerprint of every file its answer cites; when one of them changed on disk the entry is
invalid (deleted on read). A hedged answer is kept only until the symbol pipeline version changes, so a better
pipeline gets a chance to answer it properly. Degraded replies are never stored: they are cheap to rebuild and
a provider may be configured by the next call.

Entries are stored under a keyed name (sourcebook/local_key.py): the output folder is inside the repository,
so a repository could otherwise commit `answers/<key>.json` for a question it expects and have `ask` serve
its text as sourcebook's answer. Without a local key nothing is cached.
"""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from answer.answering.response import AnswerResponse
from answer.retrieval.query import normalize_question
from sourcebook.atomic import PRIVATE, atomic_write_text

log = logging.getLogger(__name__)

CACHE_FORMAT = 1


def cache_key(question: str, scope: str | None, repo: str | None, index_state: str) -> str:
    payload = json.dumps([CACHE_FORMAT, normalize_question(question), scope or "", repo or "", index_state])
    return hashlib.sha256(payload.encode("utf-8")).hexdigest()


def file_sha(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


@dataclass(frozen=True, slots=True)
class Fingerprint:
    """Cheap stat fields checked first; the sha settles it when they moved (a touch is not a change)."""

    size: int
    mtime_ns: int
    sha: str

    @classmethod
    def of(cls, path: Path) -> Fingerprint:
        stat = path.stat()
        return cls(size=stat.st_size, mtime_ns=stat.st_mtime_ns, sha=file_sha(path))

    def matches(self, path: Path) -> bool:
        try:
            stat = path.stat()
        except OSError:
            return False
        if stat.st_size == self.size and stat.st_mtime_ns == self.mtime_ns:
            return True
        return stat.st_size == self.size and file_sha(path) == self.sha


class AnswerCache:
    """Replies stored one JSON file per key under `<out_dir>/answers/`."""

    def __init__(self, out_dir: Path, root: Path, secret: bytes | None = None) -> None:
        from sourcebook.local_key import local_key

        self.dir = Path(out_dir) / "answers"
        self.root = Path(root).resolve()
        self.secret = local_key() if secret is None else secret

    def _entry_path(self, key: str) -> Path | None:
        from sourcebook.local_key import keyed

        if not key.isalnum():  # keys are hex digests; anything else must not reach the filesystem
            raise ValueError(f"bad cache key {key!r}")
        name = keyed(key.encode("ascii"), self.secret)
        return None if name is None else self.dir / f"{name}.json"

    def _source(self, rel: str) -> Path | None:
        path = (self.root / rel).resolve()
        return path if path.is_relative_to(self.root) else None

    def get(self, key: str, pipeline_version: str) -> AnswerResponse | None:
        entry_path = self._entry_path(key)
        if entry_path is None:
            return None
        try:
            entry: dict[str, Any] = json.loads(entry_path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return None
        except (OSError, ValueError) as exc:
            log.warning("%s: unreadable cache entry dropped: %s", entry_path, exc)
            entry_path.unlink(missing_ok=True)
            return None
        if entry.get("format") != CACHE_FORMAT:
            return None
        if entry.get("hedged") and entry.get("pipeline_version") != pipeline_version:
            return None  # re-synthesize with the new pipeline; put() overwrites the entry
        for rel, fields in entry.get("files", {}).items():
            source = self._source(rel)
            if source is None or not Fingerprint(**fields).matches(source):
                log.info("%s: cached answer invalidated, %s changed", key[:12], rel)
                entry_path.unlink(missing_ok=True)
                return None
        try:
            return AnswerResponse.model_validate(entry["response"])
        except (KeyError, ValidationError) as exc:
            log.warning("%s: cache entry from another contract dropped: %s", entry_path, exc)
            entry_path.unlink(missing_ok=True)
            return None

    def put(self, key: str, response: AnswerResponse, pipeline_version: str, hedged: bool) -> bool:
        """Store a synthesized reply. Returns False (and stores nothing) for a degraded one."""
        entry_path = self._entry_path(key)
        if response.degraded is not None or entry_path is None:
            return False
        files: dict[str, dict[str, Any]] = {}
        for rel in response.citations:
            source = self._source(rel)
            if source is None or not source.is_file():
                continue
            fp = Fingerprint.of(source)
            files[rel] = {"size": fp.size, "mtime_ns": fp.mtime_ns, "sha": fp.sha}
        entry = {
            "format": CACHE_FORMAT,
            "created": datetime.now(UTC).isoformat(timespec="seconds"),
            "pipeline_version": pipeline_version,
            "hedged": hedged,
            "files": files,
            "response": response.to_dict(),
        }
        # write-then-rename: a concurrent reader sees the old entry or the new one, never half of one
        atomic_write_text(entry_path, json.dumps(entry), mode=PRIVATE)
        return True

    def clear(self) -> int:
        removed = 0
        if self.dir.is_dir():
            for entry in self.dir.glob("*.json"):
                entry.unlink(missing_ok=True)
                removed += 1
        return removed
