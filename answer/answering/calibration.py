"""A repository's own confidence thresholds, derived from its history set, stored in its output folder.

`sourcebook eval --history N --calibrate` measures, per question of the repository's own history, the top
file's lead over the runner-up, the learned ranker's probability of it (when the ranker ranked: grade.py),
how much of the question it covers, and whether it was right; `calibrate`
turns that into thresholds and `write_calibration` stores them; get_answer reads them (`read_calibration`)
and falls back to the global thresholds (answer/answering/grade.py) when there are none.

The rule (`calibrate`), the same as bench/calibrate.py's --derive for the global thresholds:
- fewer than MIN_QUESTIONS scored questions: no calibration, the global thresholds stay;
- among the candidates (lead × coverage × the ranker's share for "high"), the one giving "high" to the most
  questions while their top file is right for at least TARGET of them (a tie: the higher share, then the
  stricter); when none
  reaches TARGET, the global thresholds stay (too few right answers to tell a threshold from another);
- shrink toward the global thresholds: each threshold moves from the global value toward the derived one
  by n / (n + SHRINK) (n: the scored questions), so a small set moves them little.
The other thresholds (coverage for "partial", the lead an exact symbol match needs) stay global: they do not
decide "high" for any measured question.

The file lives in the output folder, which may be inside the repository, so a repository could commit one
that calls everything "high": it carries a keyed mark (sourcebook/local_key.py) and a file without this
machine's mark, unreadable, too large or malformed is ignored with a warning, never trusted.
"""

from __future__ import annotations

import errno
import json
import logging
import math
import os
import stat
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from answer.answering.grade import GLOBAL_THRESHOLDS, Thresholds, quality_label
from sourcebook.atomic import atomic_write_text

log = logging.getLogger(__name__)

CALIBRATION_FILE = "calibration.json"
# 2: the ranker's share joined the thresholds (a format-1 file, made without it, is ignored: re-calibrate)
CALIBRATION_FORMAT = 2
MAX_FILE_BYTES = 64 * 1024  # a calibration is a few hundred bytes; more is not ours
LEVELS = ("high", "partial", "weak")
TARGET = 0.9  # the least share of "high" questions whose top file is right (the global thresholds' target)
MIN_QUESTIONS = 20
SHRINK = 25.0
DOMINANCE_CANDIDATES = (1.25, 1.35, 1.5, 1.75, 2.0, 2.5, 3.0)
COVERAGE_CANDIDATES = (0.5, 0.6, 0.75, 0.9, 1.0)
SHARE_CANDIDATES = (0.6, 0.7, 0.8, 0.85, 0.9, 0.95)
LONE = 1e9  # a lone file's infinite lead as measurements write it (JSON has no inf)


@dataclass(frozen=True, slots=True)
class Observation:
    """One question of a history set: what its label is computed from, and whether the top file was right."""

    lead: float  # top score / runner-up; inf when the top file is the only one found
    cover: float
    exact_symbol: bool
    found: bool  # anything ranked at all
    right: bool  # the top file is one the commit changed
    share: float | None = None  # the learned ranker's probability of the top file; None: it did not rank

    @classmethod
    def of(cls, features: dict[str, float], ranked: Sequence[str], gold: Iterable[str]) -> Observation:
        lead = float(features.get("dominance", 0.0))
        share = float(features.get("share", -1.0))  # negative (or absent): no model ranked
        return cls(lead=math.inf if lead >= LONE else lead, cover=float(features.get("coverage", 0.0)),
                   exact_symbol=bool(features.get("exact_symbol")), found=bool(ranked),
                   right=bool(ranked) and ranked[0] in set(gold), share=share if share >= 0 else None)


@dataclass(frozen=True, slots=True)
class Calibration:
    thresholds: Thresholds
    questions: int  # scored questions it was derived from
    derived: Thresholds | None  # the candidate chosen before the shrink; None: too few questions
    reason: str  # what was done, for the printout


def label(obs: Observation, t: Thresholds) -> str:
    if not obs.found:
        return "weak"
    return quality_label(obs.lead, obs.cover, obs.exact_symbol, share=obs.share,
                         dominance_high=t.dominance_high, coverage_high=t.coverage_high,
                         coverage_partial=t.coverage_partial, exact_lead=t.exact_lead,
                         share_high=t.share_high)


def labels_of(observations: Iterable[Observation], t: Thresholds) -> dict[str, list[bool]]:
    """Per label, whether each question so labelled had the right top file."""
    out: dict[str, list[bool]] = {level: [] for level in LEVELS}
    for obs in observations:
        out[label(obs, t)].append(obs.right)
    return out


def candidates(base: Thresholds = GLOBAL_THRESHOLDS, *, leads: bool = True, shares: bool = True
               ) -> list[Thresholds]:
    """The grid a repository's thresholds are chosen from, most lenient first. `leads` / `shares` False:
    the lead (the ranker's share) stays the base's, when no observation is labelled by it (a tie would
    otherwise move it to the strictest candidate on no evidence)."""
    return [Thresholds(d, c, base.coverage_partial, base.exact_lead, s)
            for d in (DOMINANCE_CANDIDATES if leads else (base.dominance_high,))
            for c in COVERAGE_CANDIDATES
            for s in (SHARE_CANDIDATES if shares else (base.share_high,))]


def derive(observations: Sequence[Observation], grid: Sequence[Thresholds], target: float = TARGET
           ) -> Thresholds | None:
    """The candidate giving "high" to the most questions at a top-file precision of at least `target` (a tie:
    the higher share, then the later, stricter candidate); None when none reaches it."""
    best: tuple[int, float] | None = None
    chosen = None
    for t in grid:
        high = labels_of(observations, t)["high"]
        if not high or sum(high) / len(high) < target:
            continue
        key = (len(high), sum(high) / len(high))
        if best is None or key >= best:
            best, chosen = key, t
    return chosen


def shrink(derived: Thresholds, base: Thresholds, weight: float) -> Thresholds:
    """`base` moved toward `derived` by `weight` (0: base, 1: derived)."""
    def toward(b: float, d: float) -> float:
        return round(b + weight * (d - b), 3)

    return Thresholds(toward(base.dominance_high, derived.dominance_high),
                      toward(base.coverage_high, derived.coverage_high),
                      base.coverage_partial, base.exact_lead, toward(base.share_high, derived.share_high))


def calibrate(observations: Sequence[Observation], base: Thresholds = GLOBAL_THRESHOLDS, *,
              target: float = TARGET, min_questions: int = MIN_QUESTIONS, shrink_n: float = SHRINK
              ) -> Calibration:
    """This repository's thresholds from its observations (the rule in the module docstring)."""
    n = len(observations)
    if n < min_questions:
        return Calibration(base, n, None,
                           f"{n} questions, fewer than {min_questions}: global thresholds kept")
    grid = candidates(base, leads=any(o.share is None for o in observations),
                      shares=any(o.share is not None for o in observations))
    derived = derive(observations, grid, target)
    how = f"most 'high' at a top-file precision of at least {target}"
    if derived is None:
        return Calibration(base, n, None, f"{n} questions; no candidate reaches a top-file precision of "
                                          f"{target}: global thresholds kept")
    weight = n / (n + shrink_n)
    return Calibration(shrink(derived, base, weight), n, derived,
                       f"{n} questions; {how} (lead {derived.dominance_high}, "
                       f"share {derived.share_high}, coverage {derived.coverage_high}), "
                       f"moved {weight:.2f} of the way from the global thresholds")


def precision_line(name: str, observations: Sequence[Observation], t: Thresholds) -> str:
    """`name  high n:share  partial n:share  weak n:share` (share: top file right)."""
    parts = []
    for level, rights in labels_of(observations, t).items():
        share = sum(rights) / len(rights) if rights else 0.0
        parts.append(f"{level} {len(rights):>3}:{share:.2f}")
    return f"{name:<34} " + "  ".join(parts)


# ---------------------------------------------------------------- I/O: the file in the output folder

def calibration_path(out_dir: Path) -> Path:
    """Always the output folder's own file: no setting names another place."""
    return Path(out_dir) / CALIBRATION_FILE


def _fields(t: Thresholds) -> dict[str, float]:
    return {"dominance_high": t.dominance_high, "coverage_high": t.coverage_high, "share_high": t.share_high}


def _mark(fields: dict[str, Any], key: bytes | None) -> str | None:
    from sourcebook.local_key import keyed

    return keyed(b"sourcebook-calibration\0" + json.dumps(fields, sort_keys=True).encode("utf-8"), key)


def write_calibration(out_dir: Path, calibration: Calibration, key: bytes | None = None) -> Path | None:
    """Store `calibration` atomically in `out_dir`; None (nothing written) without a local key, since an
    unmarked file would not be trusted on reading."""
    from sourcebook.local_key import local_key

    secret = local_key() if key is None else key
    fields = {"format": CALIBRATION_FORMAT, **_fields(calibration.thresholds)}
    mark = _mark(fields, secret)
    if mark is None:
        log.warning("no local key: the calibration is not stored (it could not be told from a planted one)")
        return None
    body = {**fields, "mark": mark, "questions": calibration.questions,
            "derived": _fields(calibration.derived) if calibration.derived else None,
            "reason": calibration.reason, "created": datetime.now(UTC).isoformat(timespec="seconds")}
    path = calibration_path(out_dir)
    atomic_write_text(path, json.dumps(body, indent=2) + "\n")
    return path


def read_calibration(out_dir: Path, key: bytes | None = None) -> Thresholds | None:
    """The stored thresholds, or None (global thresholds) when there is no file or it cannot be trusted."""
    from sourcebook.local_key import local_key

    path = calibration_path(out_dir)
    try:
        raw = _read_small(path)
    except FileNotFoundError:
        return None
    except OSError as exc:
        log.warning("%s: calibration ignored, unreadable (%s): global thresholds", path, exc.strerror or exc)
        return None
    if raw is None:
        log.warning("%s: calibration ignored, not a small regular file: global thresholds", path)
        return None
    try:
        body = json.loads(raw.decode("utf-8"))
        if body["format"] != CALIBRATION_FORMAT:
            log.warning("%s: calibration ignored, format %r (this version reads %d): global thresholds; "
                        "re-run `sourcebook eval --history N --calibrate`", path, body["format"],
                        CALIBRATION_FORMAT)
            return None
        fields = {"format": body["format"], "dominance_high": body["dominance_high"],
                  "coverage_high": body["coverage_high"], "share_high": body["share_high"]}
        mark = body["mark"]
    except (ValueError, KeyError, TypeError) as exc:
        log.warning("%s: calibration ignored, malformed (%s): global thresholds", path, exc)
        return None
    expected = _mark(fields, local_key() if key is None else key)
    if expected is None or not isinstance(mark, str) or mark != expected:
        log.warning("%s: calibration ignored, not made on this machine (no matching mark): global "
                    "thresholds; re-run `sourcebook eval --history N --calibrate`", path)
        return None
    lead, cover, share = fields["dominance_high"], fields["coverage_high"], fields["share_high"]
    if not (all(isinstance(x, int | float) and not isinstance(x, bool) for x in (lead, cover, share))
            and 1.0 <= lead < math.inf and 0.0 <= cover <= 1.0 and 0.5 <= share <= 1.0):
        log.warning("%s: calibration ignored, thresholds out of range: global thresholds", path)
        return None
    return Thresholds(float(lead), float(cover), GLOBAL_THRESHOLDS.coverage_partial,
                      GLOBAL_THRESHOLDS.exact_lead, float(share))


def _read_small(path: Path) -> bytes | None:
    """The file's bytes, or None when it is not a regular file of at most MAX_FILE_BYTES: a symlink is not
    followed and a FIFO or device is never read (a repository could commit either in the output folder)."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(path, flags)
    except OSError as exc:
        if exc.errno == errno.ELOOP:  # a symlink, under O_NOFOLLOW
            return None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
        return data if len(data) <= MAX_FILE_BYTES else None
    finally:
        os.close(fd)


class StoredThresholds:
    """The thresholds in force for one output folder, re-read only when the file changes (a long-running
    server picks up a new calibration, and a bad file is warned about once, not on every question)."""

    def __init__(self, out_dir: Path, key: bytes | None = None) -> None:
        self.out_dir = Path(out_dir)
        self.key = key
        self._seen: tuple[int, int, int] | None = None
        self._thresholds = GLOBAL_THRESHOLDS

    def current(self) -> Thresholds:
        try:
            info = os.lstat(calibration_path(self.out_dir))
            seen = (info.st_ino, info.st_size, info.st_mtime_ns)
        except OSError:
            seen = None
        if seen is None:
            self._seen, self._thresholds = None, GLOBAL_THRESHOLDS
        elif seen != self._seen:
            self._seen = seen
            self._thresholds = read_calibration(self.out_dir, self.key) or GLOBAL_THRESHOLDS
        return self._thresholds
