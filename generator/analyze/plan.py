"""Which pages exist, under which ids, with which inputs, and which of them are stale.

Page ids are docs-relative Markdown paths: `files/<path>.md` per source file, `modules/<dir>/index.md` per
directory (`modules/index.md` for the root), `index.md` for the overview. Ids are made safe for every
filesystem and for MkDocs: `#`, `[]`, spaces and other punctuation become `_`, unicode is NFC-normalised,
leading dots are replaced (MkDocs drops dot-files), `README`/`index` page names get a suffix (MkDocs would
treat them as section indexes), and ids that collide case-insensitively get a short hash of their path.

Staleness is content-addressed: a page's key is the hash of its context's fingerprint, the writer id and the
render version. The state file (`<out_dir>/state/pages.json`) remembers each page's key and summary, so an
unchanged page is neither re-written nor re-rendered, and modules can be written from their children's
summaries without re-running their children.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
import posixpath
import re
import unicodedata
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from sourcebook.atomic import atomic_write_text
from sourcebook.local_key import keyed, local_key

log = logging.getLogger(__name__)

OVERVIEW_ID = "index.md"
STATE_VERSION = 1
_UNSAFE = re.compile(r"[^\w.\-]+")
_RESERVED_STEMS = frozenset({"index", "readme"})
_MAX_SEGMENT_BYTES = 200  # filesystems allow 255 bytes per name


# -- page ids ------------------------------------------------------------------------------------------------


def _safe_segment(segment: str) -> str:
    seg = _UNSAFE.sub("_", unicodedata.normalize("NFC", segment))
    if seg.startswith("."):
        seg = "_" + seg[1:]  # MkDocs excludes dot-files and dot-directories from the site
    if len(seg.encode("utf-8")) > _MAX_SEGMENT_BYTES:  # room for ".md", ".html" and a collision suffix
        head = seg.encode("utf-8")[:_MAX_SEGMENT_BYTES - 9].decode("utf-8", "ignore")
        seg = f"{head}-{_short_hash(segment)}"
    return seg or "_"


def _short_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8"), usedforsecurity=False).hexdigest()[:8]


def _assign(paths: Iterable[str], make: Any, disambiguate: Any) -> dict[str, str]:
    """Give each path an id; ids equal up to case get a hash suffix, except the first path in sort order."""
    ids: dict[str, str] = {}
    taken: set[str] = set()
    for path in sorted(set(paths)):
        candidate = make(path)
        if candidate.casefold() in taken:
            candidate = disambiguate(path)
        taken.add(candidate.casefold())
        ids[path] = candidate
    return ids


def file_page_ids(paths: Iterable[str]) -> dict[str, str]:
    """Source path -> page id (`files/src/app.py.md`), unique even on case-insensitive filesystems."""

    def make(path: str, suffix: str = "") -> str:
        parts = [_safe_segment(p) for p in path.split("/")]
        name = parts[-1] + suffix
        if name.casefold() in _RESERVED_STEMS:
            name += "_"
        return "files/" + "/".join([*parts[:-1], name]) + ".md"

    return _assign(paths, make, lambda path: make(path, "-" + _short_hash(path)))


ROOT_MODULE_PAGE = "modules/index.md"  # the repository root's folder page: every top-level file and folder


def module_page_ids(dirs: Iterable[str]) -> dict[str, str]:
    """Directory path ("" = root) -> page id (`modules/src/flask/index.md`, root `modules/index.md`)."""

    def make(path: str, suffix: str = "") -> str:
        if not path:
            return ROOT_MODULE_PAGE
        parts = [_safe_segment(p) for p in path.split("/")]
        parts[-1] += suffix
        return "modules/" + "/".join(parts) + "/index.md"

    return _assign(dirs, make, lambda path: make(path, "-" + _short_hash(path)))


def module_dirs(paths: Iterable[str]) -> list[str]:
    """Every directory holding a file, directly or below, plus the root "", sorted."""
    dirs = {""}
    for path in paths:
        parent = posixpath.dirname(path)
        while parent:
            dirs.add(parent)
            parent = posixpath.dirname(parent)
    return sorted(dirs)


def parent_dir(path: str) -> str | None:
    return None if path == "" else posixpath.dirname(path)


@dataclass(frozen=True)
class PagePlan:
    """The set of pages of one build."""

    files: dict[str, str]  # source path -> page id
    modules: dict[str, str]  # dir path -> page id
    children: dict[str, tuple[list[str], list[str]]]  # dir -> (direct files, direct subdirs)

    @property
    def all_ids(self) -> set[str]:
        return {*self.files.values(), *self.modules.values(), OVERVIEW_ID}

    def module_of(self, path: str) -> str:
        return posixpath.dirname(path)

    def bottom_up_modules(self) -> list[str]:
        """Deepest directories first, so a module is written after all of its submodules."""
        return sorted(self.modules, key=lambda d: (-(d.count("/") + 1 if d else 0), d))

    def files_under(self, directory: str) -> list[str]:
        """The files at any depth below `directory` ('' = every file), sorted. A range of the sorted paths:
        scanning every file for each module's was quadratic (the monorepo: 1,811 modules x 11,160 files)."""
        paths = self._sorted_files
        if not directory:
            return list(paths)
        # "d/..." sorts from "d/" up to "d0" ("0" is the character after "/")
        return paths[bisect_left(paths, directory + "/"):bisect_left(paths, directory + "0")]

    @cached_property
    def _sorted_files(self) -> list[str]:
        return sorted(self.files)


def plan_pages(paths: Sequence[str]) -> PagePlan:
    dirs = module_dirs(paths)
    children: dict[str, tuple[list[str], list[str]]] = {d: ([], []) for d in dirs}
    for path in sorted(paths):
        children[posixpath.dirname(path)][0].append(path)
    for d in dirs:
        if d:
            children[posixpath.dirname(d)][1].append(d)
    return PagePlan(files=file_page_ids(paths), modules=module_page_ids(dirs), children=children)


# -- what pages read of the plan and the graph ---------------------------------------------------------------


class GraphView(Protocol):
    """The parts of generator.analyze.graph.RepoGraph the pages read."""

    depends_on: dict[str, list[str]]
    used_by: dict[str, list[str]]
    file_rank: dict[str, float]
    symbol_rank: dict[tuple[str, str], float]
    calls: dict[tuple[str, str], list[tuple[str, str]]]
    callers: dict[tuple[str, str], list[tuple[str, str]]]


def page_title(path: str) -> str:
    return posixpath.basename(path) or path


def module_title(path: str) -> str:
    return (path + "/") if path else "(repository root)"


def module_importance(plan: PagePlan, graph: GraphView) -> dict[str, float]:
    score: dict[str, float] = defaultdict(float)
    for path in plan.files:
        rank = graph.file_rank.get(path, 0.0)
        d = posixpath.dirname(path)
        while True:
            score[d] += rank
            if not d:
                break
            d = posixpath.dirname(d)
    return dict(score)


# -- keys and state ------------------------------------------------------------------------------------------


def digest_of(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()


def draft_key(fingerprint: str, writer_id: str) -> str:
    """The key of a page's prose: its inputs and the writer (model + prompt version) that wrote it."""
    return digest_of("draft", fingerprint, writer_id)


def page_key(fingerprint: str, writer_id: str, render_version: str) -> str:
    """The key of a page's Markdown: its draft key plus everything rendering adds (templates, renderer)."""
    return digest_of("page", draft_key(fingerprint, writer_id), render_version)


@dataclass
class PageState:
    """What the state file remembers about one written page."""

    key: str
    kind: str
    title: str
    target_path: str
    summary: str
    written_by: str = "extracted"
    symbols: list[str] = field(default_factory=list)
    retry: bool = False  # written by a fallback: re-write on the next run whatever the key says
    docstrings: dict[str, str] = field(default_factory=dict)  # qualname -> LLM-written docstring (file pages)
    # the writer's draft and the key of its inputs: a page whose inputs are unchanged but whose rendering
    # changed (templates, renderer) is re-rendered from this draft without asking the writer again
    draft_key: str = ""
    draft: dict[str, Any] = field(default_factory=dict)
    source_sha: str = ""  # file pages: the content hash of the file the page was written from
    # the last prose the model wrote for this page and its stable key (see stable_key): a later failure keeps
    # it instead of replacing it with extractive text, while what it was written about is unchanged
    llm_draft: dict[str, Any] = field(default_factory=dict)
    llm_key: str = ""
    failures: int = 0  # consecutive runs in which the model failed this page
    retry_wait: int = 0  # runs still to skip before the model is asked again (backoff after failures)


@dataclass(frozen=True)
class CachedPage:
    """A page as the shared build cache (generator/index/build_cache.py) holds it: its state row and its
    Markdown."""

    state: PageState
    markdown: str | None  # None: cached without its Markdown (it must be rendered again)


def state_path(out_dir: Path) -> Path:
    return out_dir / "state" / "pages.json"


def is_page_id(page_id: object) -> bool:
    """A page id the planner makes: a relative POSIX path to a .md file; no '..', '.', empty part or '\\'."""
    if not isinstance(page_id, str) or not page_id.endswith(".md") or "\\" in page_id or "\0" in page_id:
        return False
    parts = page_id.split("/")
    return not page_id.startswith("/") and all(part not in {"", ".", ".."} for part in parts)


def load_state(out_dir: Path) -> dict[str, PageState]:
    """The page state as this user saved it. The file is as untrusted as the repository that may have
    committed it: a row whose owner mark (see _row_mark) is not this user's is dropped, so its page is
    written again instead of its stored drafts and summary being published as the user's model's prose."""
    path = state_path(out_dir)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("%s: unreadable page state (%s); every page will be re-written", path, exc)
        return {}
    if not isinstance(data, dict) or data.get("version") != STATE_VERSION:
        return {}
    pages = data.get("pages", {})
    if not isinstance(pages, dict):
        return {}
    key = local_key()
    out, unsigned = {}, 0
    for page_id, row in pages.items():
        if not is_page_id(page_id):
            # an id such as "../../../home/you/x" would be pruned as an orphan, i.e. unlinked outside docs/
            log.warning("%s: ignored a page id that is not a path inside docs/: %r", path, page_id[:80])
            continue
        if not isinstance(row, dict):
            continue
        mark = row.pop(MARK_FIELD, None)
        expected = _row_mark(page_id, row, key)
        if not isinstance(mark, str) or expected is None or not hmac.compare_digest(mark, expected):
            unsigned += 1
            continue
        try:
            out[page_id] = PageState(**row)
        except TypeError:
            continue  # a row from another layout: that page is simply re-written
    if unsigned:
        why = ("there is no local key to check them with (make $XDG_STATE_HOME or ~/.local/state writable)"
               if key is None else "they are not signed by this user (a state committed with the repository, "
               "or written by an older sourcebook)")
        log.warning("%s: ignored %d page state row(s), with their drafts and summaries: %s; those pages will "
                    "be re-written", path, unsigned, why)
    return out


# page id -> (a row, its `"id": {...}` line): what save_state encoded, kept while the row is the same object
StateMemo = dict[str, tuple[PageState, str]]


def save_state(out_dir: Path, pages: Mapping[str, PageState], memo: StateMemo | None = None) -> None:
    """Write the state file: json.dumps({"version", "pages"}, indent=0), byte for byte, each row signed
    (its owner mark, the last field: see _row_mark; none without a local key).

    A build saves every few seconds while it writes pages, and encoding every row each time was quadratic
    (seconds of a big tree's build: docs/performance.md). With indent=0 a nested value's text does not depend
    on its depth, so each row is encoded alone and its text kept in `memo` while the row is the same object; a
    caller that changes a row in place drops its entry (PageSink does)."""
    memo = {} if memo is None else memo
    key = local_key()
    rows = []
    for page_id, row in sorted(pages.items()):
        kept = memo.get(page_id)
        if kept is None or kept[0] is not row:
            kept = (row, f"{json.dumps(page_id, ensure_ascii=False)}: {_signed_row_json(page_id, row, key)}")
            memo[page_id] = kept
        rows.append(kept[1])
    for page_id in [p for p in memo if p not in pages]:
        del memo[page_id]
    body = "{\n" + ",\n".join(rows) + "\n}" if rows else "{}"
    text = f'{{\n"version": {json.dumps(STATE_VERSION)},\n"pages": {body}\n}}'
    atomic_write_text(state_path(out_dir), text)


MARK_FIELD = "mark"  # a stored row's owner mark; not a PageState field (the shared build cache has its own)


def _row_mark(page_id: str, row: Mapping[str, Any], key: bytes | None) -> str | None:
    """This user's mark over a row (its page id and every other field, drafts and summary included): a row
    moved to another page, edited or made elsewhere never matches. None without a local key.

    It signs the row's compact JSON, not the file's indent=0 text: json encodes compact text in C (indent
    falls back to the pure-Python encoder), and a loaded row re-encodes to the same text (same order)."""
    text = json.dumps([page_id, row], ensure_ascii=False, separators=(",", ":"))
    return keyed(b"sourcebook-page-state\0" + text.encode("utf-8", "surrogatepass"), key)


def _signed_row_json(page_id: str, row: PageState, key: bytes | None) -> str:
    fields_ = _row_fields(row)
    text = _row_text(fields_)
    mark = _row_mark(page_id, fields_, key)
    if mark is None:
        return text
    # the mark is appended as the row's last field ("{\n...\n}" with indent=0): the row is encoded once
    return f'{text[:-2]},\n"{MARK_FIELD}": "{mark}"\n}}'


def _row_fields(row: PageState) -> dict[str, Any]:
    # a shallow dict: asdict's deep copy of the drafts only to encode them took most of the time
    return {f.name: getattr(row, f.name) for f in fields(row)}


def _row_text(row: Mapping[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, indent=0)


MAX_RETRY_WAIT = 16  # runs: a page the model keeps failing is still retried at least this often


def retry_wait(failures: int) -> int:
    """Runs to skip before retrying a page that failed `failures` times in a row: 0, 1, 3, 7, 15, 16, ..."""
    return min(MAX_RETRY_WAIT, 2 ** max(0, failures - 1) - 1)


def inputs_changed(page_id: str, key: str, state: Mapping[str, PageState], docs_dir: Path) -> bool:
    """Whether the page must be rewritten because what it is written from changed (or it is missing)."""
    row = state.get(page_id)
    return row is None or row.key != key or not (docs_dir / page_id).is_file()


def retry_due(page_id: str, state: Mapping[str, PageState]) -> bool:
    """A fallback page whose backoff has run out: the model is asked again this run."""
    row = state.get(page_id)
    return row is not None and row.retry and row.retry_wait <= 0


def is_stale(page_id: str, key: str, state: Mapping[str, PageState], docs_dir: Path) -> bool:
    return inputs_changed(page_id, key, state, docs_dir) or retry_due(page_id, state)


def fallback_pages(state: Mapping[str, PageState], planned: Iterable[str]) -> list[str]:
    """Pages whose current prose is a fallback (extractive, or kept from an earlier model draft)."""
    return sorted(pid for pid in planned if pid in state and state[pid].retry)


def stale_pages(planned: Mapping[str, str], state: Mapping[str, PageState], docs_dir: Path) -> list[str]:
    """Page ids whose planned key differs from the state (or whose file is missing), sorted."""
    return sorted(pid for pid, key in planned.items() if is_stale(pid, key, state, docs_dir))


def orphan_pages(planned_ids: set[str], state: Mapping[str, PageState], docs_dir: Path) -> list[str]:
    """Pages the state or the docs dir hold that the plan no longer has (their source disappeared)."""
    orphans = {pid for pid in state if pid not in planned_ids}
    for sub in ("files", "modules", "topics"):
        base = docs_dir / sub
        if base.is_dir():
            for md in base.rglob("*.md"):
                pid = md.relative_to(docs_dir).as_posix()
                if pid not in planned_ids:
                    orphans.add(pid)
    return sorted(orphans)
