"""Episodes: dated facts about this checkout, each scoped to a path prefix.

Recorded explicitly (`sourcebook remember "…" --scope PATH`) or automatically (a cited file changed on disk
after the index was built). A reply carries at most one, only below high confidence and only when its scope
intersects the files of the answer: a fact the agent did not need is noise. Stored as JSON lines under
out_dir; each record is one write() on an O_APPEND descriptor under an exclusive lock, so concurrent writers
never interleave.

Each line carries a keyed hash ("mac") under this user's local key (sourcebook/local_key.py). The output
folder
is inside the repository, so a repository can commit an episodes file; its lines (and lines from before
episodes were signed) are not served, with one warning saying how many.
"""

from __future__ import annotations

import fcntl
import hmac
import json
import logging
import os
import posixpath
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import ValidationError

from answer.answering.response import Confidence, Episode
from answer.retrieval.paths import normalize_scope
from sourcebook.errors import UsageError

if TYPE_CHECKING:
    from generator.build_report import FileChanges

log = logging.getLogger(__name__)

EPISODES_FILE = "episodes.jsonl"
# A fact, not a document: every later answer in its scope may carry it, so its size is capped when it is
# recorded (a clear UsageError on every surface) and again when it is read (a file written by an older
# version, by hand, or committed in the repository's own output folder is cut, never served whole).
MAX_EPISODE_CHARS = 2000


def scope_intersects(scope: str, files: Iterable[str]) -> bool:
    """True when the scope (a prefix; "" = everything) covers one of `files`."""
    for path in files:
        if not path:
            continue
        if scope in ("", path) or path.startswith(scope + "/"):
            return True
    return False


def select_episode(episodes: Sequence[Episode], answer_files: Sequence[str],
                   confidence: Confidence) -> Episode | None:
    """At most one episode: never at high confidence, only one whose scope intersects the answer's files.

    The most specific scope wins (a fact about `src/flask/json` beats one about the whole repository),
    then the most recent.
    """
    if confidence == "high" or not answer_files:
        return None
    matching = [ep for ep in episodes if scope_intersects(ep.scope, answer_files)]
    if not matching:
        return None
    return max(matching, key=lambda ep: (len(ep.scope), ep.recorded_at))


def _episode_scope(scope: str | None) -> str:
    """The scope an episode is stored under: checked like every scope, without a trailing "/"."""
    return normalize_scope(scope).rstrip("/")


class EpisodeStore:
    def __init__(self, out_dir: Path) -> None:
        self.path = Path(out_dir) / EPISODES_FILE

    def record(self, text: str, scope: str | None = None, source: Literal["explicit", "auto"] = "explicit",
               now: datetime | None = None) -> Episode:
        text = " ".join(text.split()) if isinstance(text, str) else ""
        if not text:
            raise UsageError("an episode needs some text")
        if len(text) > MAX_EPISODE_CHARS:
            raise UsageError(f"an episode is at most {MAX_EPISODE_CHARS} characters (this one has "
                             f"{len(text)}): record the fact, not the evidence")
        episode = Episode(
            text=text,
            scope=_episode_scope(scope),
            recorded_at=(now or datetime.now(UTC)).isoformat(timespec="seconds"),
            source=source,
        )
        line = (sign_line(episode.model_dump(mode="json")) + "\n").encode("utf-8")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX)
            os.write(fd, line)
        finally:
            os.close(fd)  # closing releases the lock
        return episode

    def record_auto(self, text: str, scope: str, now: datetime | None = None) -> Episode | None:
        """Record an automatic fact once: the same text about the same scope is not repeated."""
        scope = _episode_scope(scope)
        if any(ep.text == text and ep.scope == scope for ep in self.all()):
            return None
        return self.record(text, scope, source="auto", now=now)

    def record_changes(self, changes: FileChanges) -> None:
        """A build's file changes (generator/pages/stages.py `file_changes`) as dated automatic facts."""
        for path in changes.changed:
            self.record_auto(f"{path} changed; its wiki page was regenerated", scope=path)
        for path in changes.added:
            self.record_auto(f"{path} was added to the repository and the wiki", scope=path)
        for path in changes.deleted:
            self.record_auto(f"{path} was deleted; its wiki page was removed", scope=posixpath.dirname(path))

    def all(self) -> list[Episode]:
        try:
            raw = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        from sourcebook.local_key import local_key

        key = local_key()
        episodes: list[Episode] = []
        foreign = 0
        for number, line in enumerate(raw.splitlines(), start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                fields = _verified(data, key)
                if fields is None:
                    foreign += 1
                    continue
                episode = Episode.model_validate(fields)
            except (ValueError, TypeError) as exc:
                reason = exc.errors()[0]["msg"] if isinstance(exc, ValidationError) else str(exc)
                log.warning("%s:%d: unreadable episode skipped: %s", self.path, number, reason)
                continue
            if len(episode.text) > MAX_EPISODE_CHARS:
                log.warning("%s:%d: episode of %d characters cut to %d", self.path, number, len(episode.text),
                            MAX_EPISODE_CHARS)
                episode = episode.model_copy(update={"text": episode.text[:MAX_EPISODE_CHARS - 1] + "…"})
            episodes.append(episode)
        if foreign:
            log.warning("%s: %d episode(s) not recorded by you on this machine (committed with the "
                        "repository, or from before episodes were signed) are not served; record them again "
                        "with `sourcebook remember`", self.path, foreign)
        return episodes


def _mac(fields: dict[str, Any], key: bytes | None) -> str | None:
    from sourcebook.local_key import keyed

    return keyed(json.dumps(fields, sort_keys=True, ensure_ascii=False).encode("utf-8"), key)


def sign_line(fields: dict[str, Any]) -> str:
    """One stored line: the episode's fields plus their keyed hash under this user's key."""
    from sourcebook.local_key import local_key

    mac = _mac(fields, local_key())
    return json.dumps({**fields, "mac": mac} if mac else fields, ensure_ascii=False)


def _verified(data: object, key: bytes | None) -> dict[str, Any] | None:
    """The episode fields of a stored line whose mac `key` made; None for any other line."""
    if not isinstance(data, dict):
        raise TypeError("not a JSON object")
    fields = {k: v for k, v in data.items() if k != "mac"}
    expected = _mac(fields, key)
    mac = data.get("mac")
    if expected is None or not isinstance(mac, str) or not hmac.compare_digest(mac, expected):
        return None
    return fields
