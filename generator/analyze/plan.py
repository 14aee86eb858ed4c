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
import json
import logging
import posixpath
import re
import unicodedata
from bisect import bisect_left
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from functools import cached_property
from pathlib import Path
from typing import Any, Protocol

from generator.analyze.facts import FileFacts
from generator.pages.writer import (
    EntryPoint,
    FileContext,
    ModuleContext,
    OverviewContext,
    PageLink,
    first_paragraph,
)
from sourcebook.atomic import atomic_write_text

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


def module_page_ids(dirs: Iterable[str]) -> dict[str, str]:
    """Directory path ("" = root) -> page id (`modules/src/flask/index.md`, root `modules/index.md`)."""

    def make(path: str, suffix: str = "") -> str:
        if not path:
            return "modules/index.md"
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


# -- contexts ------------------------------------------------------------------------------------------------


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


def _cross_file(edges: Mapping[tuple[str, str], list[tuple[str, str]]], path: str, qualname: str,
                limit: int = 8) -> tuple[tuple[str, str], ...]:
    return tuple(sorted({e for e in edges.get((path, qualname), ()) if e[0] != path})[:limit])


def file_context(facts: FileFacts, plan: PagePlan, graph: GraphView) -> FileContext:
    """The inputs of one file page. Neighbours are linked by title only (summaries would couple pages)."""
    path = facts.path

    def link(other: str) -> PageLink:
        return PageLink(other, plan.files[other], page_title(other), "")

    ranked = sorted(facts.symbols, key=lambda s: (-graph.symbol_rank.get((path, s.qualname), 0.0),
                                                  s.start_line, s.qualname))
    callers = tuple((s.qualname, c) for s in facts.symbols
                    if (c := _cross_file(graph.callers, path, s.qualname)))
    calls = tuple((s.qualname, c) for s in facts.symbols if (c := _cross_file(graph.calls, path, s.qualname)))
    return FileContext(
        facts=facts, page_id=plan.files[path], module=plan.module_of(path),
        depends_on=tuple(link(p) for p in sorted(set(graph.depends_on.get(path, ()))) if p in plan.files),
        used_by=tuple(link(p) for p in sorted(set(graph.used_by.get(path, ()))) if p in plan.files),
        symbol_order=tuple(s.qualname for s in ranked), callers=callers, calls=calls)


def _owner(path: str, module: str, subdirs: list[str]) -> str | None:
    """The node of `module`'s diagram holding `path`: the file itself, a submodule, or None (outside)."""
    if posixpath.dirname(path) == module:
        return path
    for sub in subdirs:
        if path.startswith(sub + "/"):
            return sub
    return None


def _top_entry_points(facts: Iterable[FileFacts], graph: GraphView, limit: int,
                      first: Callable[[str], bool] | None = None) -> tuple[EntryPoint, ...]:
    """The most referenced public top-level symbols; `first(path)` true puts a file's symbols ahead (the
    overview's: the project's own code before docs themes and test helpers)."""
    candidates = []
    for f in facts:
        if f.file.kind != "code":
            continue
        ahead = 0 if first is None or first(f.path) else 1
        for s in f.symbols:
            if s.public and s.parent is None and s.kind not in {"module", "variable", "field", "impl"}:
                rank = graph.symbol_rank.get((f.path, s.qualname), 0.0)
                candidates.append((ahead, -rank, f.path, s.start_line, s))
    candidates.sort(key=lambda c: c[:4])

    return tuple(EntryPoint(path, s.qualname, s.kind, s.signature, first_paragraph(s.docstring, 200))
                 for _, _, path, _, s in candidates[:limit])


def module_context(directory: str, plan: PagePlan, facts: Mapping[str, FileFacts], graph: GraphView, *,
                   summaries: Mapping[str, str], readme: str = "", edge_limit: int = 60) -> ModuleContext:
    """The inputs of one module page; `summaries` maps file paths and dir paths to their page summaries."""
    files, subdirs = plan.children[directory]
    parent = parent_dir(directory)
    internal: set[tuple[str, str]] = set()
    external: set[tuple[str, str]] = set()
    prefix = directory + "/" if directory else ""
    for path in files:
        for dep in graph.depends_on.get(path, ()):
            if dep == path or dep not in plan.files:
                continue
            node = _owner(dep, directory, subdirs)
            if node is not None:
                internal.add((path, node))
            elif not dep.startswith(prefix) or not directory:
                external.add((path, posixpath.dirname(dep)))
    for sub in subdirs:
        # a submodule's files reaching its siblings or the module's own files
        for path in plan.files_under(sub):
            for dep in graph.depends_on.get(path, ()):
                node = _owner(dep, directory, subdirs)
                if node is not None and node != sub:
                    internal.add((sub, node))
    return ModuleContext(
        path=directory, page_id=plan.modules[directory], title=module_title(directory),
        parent=(PageLink(parent, plan.modules[parent], module_title(parent), "")
                if parent is not None else None),
        files=tuple(PageLink(p, plan.files[p], page_title(p), summaries.get(p, "")) for p in files),
        submodules=tuple(PageLink(d, plan.modules[d], module_title(d), summaries.get(d + "/", ""))
                         for d in subdirs),
        entry_points=_top_entry_points((facts[p] for p in files if p in facts), graph, 6),
        internal_edges=tuple(sorted(internal))[:edge_limit],
        external_edges=tuple(sorted(external))[:edge_limit], readme=readme)


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


def _ancestors(path: str) -> list[str]:
    out = []
    d = posixpath.dirname(path)
    while d:
        out.append(d)
        d = posixpath.dirname(d)
    return out


def overview_context(repo_name: str, plan: PagePlan, facts: Mapping[str, FileFacts], graph: GraphView, *,
                     summaries: Mapping[str, str], readme: str, readme_path: str,
                     skipped_count: int = 0, description: str = "") -> OverviewContext:
    from generator.pages.orientation import orientation_folders, path_group

    importance = module_importance(plan, graph)
    code_dirs = {d for p, f in facts.items() if f.file.kind == "code" for d in _ancestors(p)}
    top_dirs = orientation_folders(plan.children, importance, graph.file_rank, code_dirs)

    def group(path: str) -> bool:  # the project's own code before its tests, docs, tooling and data
        kind = facts[path].file.kind if path in facts else ""
        return kind != "code" or path_group(path, kind) != "source"

    top_files = sorted(plan.files, key=lambda p: (group(p), -round(graph.file_rank.get(p, 0.0), 9), p))[:10]
    languages: dict[str, int] = defaultdict(int)
    for f in facts.values():
        languages[f.file.language or "other"] += 1
    return OverviewContext(
        repo_name=repo_name, readme=readme, readme_path=readme_path,
        top_modules=tuple(PageLink(d, plan.modules[d], module_title(d), summaries.get(d + "/", ""))
                          for d in top_dirs),
        top_files=tuple(PageLink(p, plan.files[p], page_title(p), summaries.get(p, "")) for p in top_files),
        languages=tuple(sorted(languages.items(), key=lambda kv: (-kv[1], kv[0]))),
        entry_points=_top_entry_points(facts.values(), graph, 10, first=lambda p: not group(p)),
        file_count=len(facts), symbol_count=sum(len(f.symbols) for f in facts.values()),
        skipped_count=skipped_count, description=description)


# -- keys and state ------------------------------------------------------------------------------------------


def _digest(*parts: str) -> str:
    digest = hashlib.sha256()
    for part in parts:
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()


def draft_key(fingerprint: str, writer_id: str) -> str:
    """The key of a page's prose: its inputs and the writer (model + prompt version) that wrote it."""
    return _digest("draft", fingerprint, writer_id)


def stable_key(ctx: Any, writer_id: str) -> str:
    """What a page's model-written prose is about, for keeping it when the model fails later.

    A file page's prose is about its whole input (the draft key): any change and the old prose may be wrong.
    A module or overview page's prose is about which children it has; its children's summaries are reworded
    on every rewrite, so prose written for the same set of children is kept over extractive text."""
    from generator.pages.writer import FileContext, ModuleContext, OverviewContext

    if isinstance(ctx, FileContext):
        return draft_key(ctx.fingerprint(), writer_id)
    if isinstance(ctx, ModuleContext):
        return _digest("module-structure", writer_id, ctx.path, *(f.path for f in ctx.files),
                       *(m.path + "/" for m in ctx.submodules))
    if isinstance(ctx, OverviewContext):
        return _digest("overview-structure", writer_id, *(m.path + "/" for m in ctx.top_modules),
                       *(f.path for f in ctx.top_files))
    from generator.pages.topics import TopicContext

    if isinstance(ctx, TopicContext):  # a topic's prose is about the symbols it cites
        return _digest("topic-structure", writer_id, ctx.page_id, *(s.cite for s in ctx.evidence()))
    raise TypeError(f"no stable key for {type(ctx).__name__}")


def page_key(fingerprint: str, writer_id: str, render_version: str) -> str:
    """The key of a page's Markdown: its draft key plus everything rendering adds (templates, renderer)."""
    return _digest("page", draft_key(fingerprint, writer_id), render_version)


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


def state_path(out_dir: Path) -> Path:
    return out_dir / "state" / "pages.json"


def is_page_id(page_id: object) -> bool:
    """A page id the planner makes: a relative POSIX path to a .md file; no '..', '.', empty part or '\\'."""
    if not isinstance(page_id, str) or not page_id.endswith(".md") or "\\" in page_id or "\0" in page_id:
        return False
    parts = page_id.split("/")
    return not page_id.startswith("/") and all(part not in {"", ".", ".."} for part in parts)


def load_state(out_dir: Path) -> dict[str, PageState]:
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
    out = {}
    for page_id, row in data.get("pages", {}).items():
        if not is_page_id(page_id):
            # the state file is as untrusted as the repository that may have committed it: an id such as
            # "../../../home/you/x" would be pruned as an orphan, i.e. unlinked outside docs/
            log.warning("%s: ignored a page id that is not a path inside docs/: %r", path, page_id[:80])
            continue
        try:
            out[page_id] = PageState(**row)
        except TypeError:
            continue  # a row from another layout: that page is simply re-written
    return out


# page id -> (a row, its `"id": {...}` line): what save_state encoded, kept while the row is the same object
StateMemo = dict[str, tuple[PageState, str]]


def save_state(out_dir: Path, pages: Mapping[str, PageState], memo: StateMemo | None = None) -> None:
    """Write the state file: json.dumps({"version", "pages"}, indent=0), byte for byte.

    A build saves every few seconds while it writes pages, and encoding every row each time was quadratic
    (the monorepo's 13,000 rows took 0.6 s a save). With indent=0 a nested value's text does not depend on
    its depth, so each row is encoded alone and its text kept in `memo` while the row is the same object; a
    caller that changes a row in place drops its entry (PageSink does)."""
    memo = {} if memo is None else memo
    rows = []
    for page_id, row in sorted(pages.items()):
        kept = memo.get(page_id)
        if kept is None or kept[0] is not row:
            kept = (row, f"{json.dumps(page_id, ensure_ascii=False)}: {_row_json(row)}")
            memo[page_id] = kept
        rows.append(kept[1])
    for page_id in [p for p in memo if p not in pages]:
        del memo[page_id]
    body = "{\n" + ",\n".join(rows) + "\n}" if rows else "{}"
    text = f'{{\n"version": {json.dumps(STATE_VERSION)},\n"pages": {body}\n}}'
    atomic_write_text(state_path(out_dir), text)


def _row_json(row: PageState) -> str:
    # a shallow dict: asdict's deep copy of the drafts only to encode them took most of the time
    return json.dumps({f.name: getattr(row, f.name) for f in fields(row)}, ensure_ascii=False, indent=0)


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
