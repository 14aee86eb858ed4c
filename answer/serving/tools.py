"""The agent tools, one implementation each, shared by the CLI, the HTTP API and the MCP server.

Every tool takes plain arguments plus `repo` (a workspace alias) and returns a JSON-ready dict. Errors are
SourcebookErrors (the front ends turn them into exit codes, HTTP statuses or MCP error results):
NotFoundError for "not indexed" / unknown alias (404), AccessError for paths outside the repository (403),
UsageError for malformed input (400). A retrieval outage is not an error: search and context answer an empty
result with `degraded: true` and a note.

Per-repository state (the open index, caches, the reference graph) lives in answer/serving/repo_state.py.
"""

from __future__ import annotations

import functools
import logging
import re
import threading
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

from answer.retrieval.packing import (
    DEFAULT_BUDGET_TOKENS,
    Candidate,
    Packed,
    SymbolKey,
    Target,
    expand,
    pack,
    parse_target,
)
from answer.retrieval.paths import normalize_rel_path, normalize_scope, resolve_in_root, under_scope
from answer.serving.repo_state import RepoState, indexed_source, one_state, reusable_hashes
from answer.serving.workspace import Workspace, load_workspace
from sourcebook.errors import IndexStoreError, NotFoundError, SourcebookError, UsageError
from sourcebook.settings import Settings

log = logging.getLogger(__name__)
MAX_BODY_LINES = 400
MAX_SYMBOL_MATCHES = 10
MAX_READ_CHARS = 400_000
SEARCH_LIMIT_MAX = 100
MAX_SEED_LINES = 120  # a matched span longer than this is cut to its header (see _header_end)
# ---------------------------------------------------------------- helpers (pure)


def _lines(text: str, start: int, end: int) -> str:
    return "\n".join(text.split("\n")[start - 1:end])


# Folders nested deeper than this are shown as one node named by the rest of their path: a tree as deep as a
# 1,024-character path allows (510 levels) overflowed the recursion of every JSON encoder on the way out.
MAX_TREE_DEPTH = 64


def build_tree(files: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Nest flat file rows into a directory tree; directories carry totals, children sorted dirs-first."""
    root: dict[str, Any] = {"name": "", "path": "", "type": "dir", "files": 0, "symbols": 0, "children": {}}
    for row in sorted(files, key=lambda r: r["path"]):
        parts = row["path"].split("/")
        folders = parts[:-1]
        if len(folders) > MAX_TREE_DEPTH:  # the deepest folders as one node: see MAX_TREE_DEPTH
            folders = [*folders[:MAX_TREE_DEPTH - 1], "/".join(folders[MAX_TREE_DEPTH - 1:])]
        node = root
        for part in folders:
            node["files"] += 1
            node["symbols"] += int(row.get("symbol_count") or 0)
            child = node["children"].get(part)
            if child is None:
                child = {"name": part, "path": f"{node['path']}/{part}".lstrip("/"), "type": "dir",
                         "files": 0, "symbols": 0, "children": {}}
                node["children"][part] = child
            node = child
        node["files"] += 1
        node["symbols"] += int(row.get("symbol_count") or 0)
        node["children"][parts[-1]] = {
            "name": parts[-1], "path": row["path"], "type": "file", "language": row.get("language") or "",
            "kind": row.get("kind") or "", "symbols": int(row.get("symbol_count") or 0),
            "lines": int(row.get("line_count") or 0)}

    def finish(node: dict[str, Any]) -> dict[str, Any]:
        if node["type"] != "dir":
            return node
        kids = [finish(c) for c in node["children"].values()]
        kids.sort(key=lambda c: (c["type"] != "dir", c["name"]))
        return {**node, "children": kids}

    return finish(root)


def match_symbols(rows: Sequence[dict[str, Any]], name: str, path: str | None = None) -> list[dict[str, Any]]:
    """Definitions `name` refers to: "path::Qual.name", an exact qualname, a dotted module path ending in a
    qualname ("flask.app.Flask.route"), or a bare name. The most specific kind of match wins, and each row
    says which it was in `match` (qualname | module | suffix | name: "Flask.route" answered by the
    inherited "Scaffold.route" is a name match)."""
    name = name.strip()
    if "::" in name:
        path, name = name.split("::", 1)
    if path:
        path = normalize_rel_path(path)
    last = name.replace("::", ".").replace("#", ".").split(".")[-1]
    pool = [r for r in rows if r["name"] == last and (not path or r["path"] == path)]
    if not pool:
        return []

    def score(row: dict[str, Any]) -> int:
        qual = row["qualname"]
        if qual == name:
            return 3
        if name.endswith("." + qual):
            module = name[: -len(qual) - 1].replace(".", "/")
            stem = row["path"].rsplit(".", 1)[0]
            return 2 if stem.endswith((module, module + "/__init__")) else 1
        return 0

    best = max(score(r) for r in pool)
    kind_order = {"class": 0, "function": 1, "method": 1}
    label = {3: "qualname", 2: "module", 1: "suffix", 0: "name"}[best]
    chosen = [{**r, "match": label} for r in pool if score(r) == best]
    chosen.sort(key=lambda r: (kind_order.get(r["kind"], 2), r["path"], r["start_line"]))
    return chosen[:MAX_SYMBOL_MATCHES]


# ---------------------------------------------------------------- the tools

_T = TypeVar("_T")


# what a repository alias can be (answer/serving/orgs.py and workspace.py accept no other): a name outside it
# cannot be "a repository never indexed"
_REPO_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,63}")


def _one_state(method: Callable[..., _T]) -> Callable[..., _T]:
    """A tool call reads one published index state from start to end (answer/serving/repo_state.py:
    one_state)."""
    @functools.wraps(method)
    def call(*args: Any, **kwargs: Any) -> _T:
        with one_state():
            return method(*args, **kwargs)
    return call



class Tools:
    """The agent tools over a workspace. One instance per process; safe to share across threads."""

    def __init__(self, workspace: Workspace) -> None:
        self.workspace = workspace
        self._states: dict[str, RepoState] = {}
        self._lock = threading.Lock()
        self.long_lived = False  # a server (it warmed up): every repository ranks in memory, see warm()
        from answer.serving.pushes import PushLimits

        self.push_limits = PushLimits()  # what one push may carry (an orgs file sets its own)
        # folders a caller must not learn (an organisation's index root): tool_contracts.hide_roots
        self.hidden_roots: tuple[str, ...] = ()

    @classmethod
    def for_path(cls, path: Path | str | None = None, settings: Settings | None = None) -> Tools:
        """The tools over `path`'s workspace; `settings`: the user's (default: read from the environment)."""
        return cls(load_workspace(path, settings=settings))

    def warm(self, repo: str | None = None, graph: bool = False) -> None:
        """Open a repository's index ahead of the first request, with its in-memory full-text ranking (a
        process that warms up is a server: it will answer many queries), and build its reference graph."""
        from answer.retrieval.tiers import FTS_TABLES, use_in_memory_ranking

        self.long_lived = True
        with self._lock:
            for opened in self._states.values():
                opened.rank_in_memory()
        try:
            st = self.state(repo)
            store = st.store_or_none()
            if store is not None:
                use_in_memory_ranking(store, FTS_TABLES)
            if store is not None and graph:
                st.graph()
        except SourcebookError as exc:  # the first real request reports it properly
            log.info("warm-up: %s", exc)

    def warm_in_background(self, graph: bool = False) -> threading.Thread:
        thread = threading.Thread(target=self.warm, kwargs={"graph": graph}, name="sourcebook-warm",
                                  daemon=True)
        thread.start()
        return thread

    def state(self, repo: str | None = None) -> RepoState:
        alias = self.workspace.alias_for(repo)
        with self._lock:
            if alias not in self._states:
                self._states[alias] = RepoState(alias, self.workspace.resolve(alias))
                if self.long_lived:
                    self._states[alias].rank_in_memory()
            return self._states[alias]

    # ------------------------------------------------------------ get_answer

    @_one_state
    def get_answer(self, question: str, scope: str | None = None, repo: str | None = None,
                   include: Sequence[str] = ()) -> dict[str, Any]:
        from answer.answering.get_answer import get_answer

        if not question or not question.strip():
            raise UsageError("a question is required")
        st = self.state(repo)
        try:
            reply = get_answer(st.answer_context(), question, scope=scope, repo=st.alias,
                               include=tuple(include))
        except UsageError:
            raise
        except _read_errors() as exc:
            # an outage is an answer that says so (200, degraded), never a 5xx or "not indexed"
            log.warning("get_answer: the index of %r cannot be read: %s", st.alias, exc)
            return _outage_answer(st.alias, exc)
        return reply.to_dict()

    # ------------------------------------------------------------ search_codebase

    @_one_state
    def search_codebase(self, query: str, type: str = "hybrid", scope: str | None = None,
                        limit: int = 10, repo: str | None = None) -> dict[str, Any]:
        from answer.retrieval.tiers import SEARCH_TYPES, search_codebase

        if type not in SEARCH_TYPES:
            raise UsageError(f"unknown search type {type!r}: expected one of {', '.join(SEARCH_TYPES)}")
        if not 1 <= limit <= SEARCH_LIMIT_MAX:
            raise UsageError(f"limit must be between 1 and {SEARCH_LIMIT_MAX}")
        scope = normalize_scope(scope) or None
        st = self.state(repo)
        try:
            store = st.store()
        except IndexStoreError as exc:
            return {"query": query, "type": type, "scope": scope, "repo": st.alias, "files": [], "hits": [],
                    "degraded": True, "notes": [str(exc)]}
        # Identical searches (several agents, retries) within one index state are answered from memory;
        # the key includes the store object, which is replaced whenever the index changes.
        key = (id(store), query, type, scope, limit)
        cached = st.search_cache.get(key)
        if cached is not None:
            return {**cached, "cached": True}
        result = search_codebase(store, query, type=type, scope=scope, limit=limit)
        reply = {
            "query": result.query, "type": result.type, "scope": scope, "repo": st.alias,
            "files": [asdict(f) for f in result.files],
            "hits": [asdict(h) for h in result.hits],
            "degraded": result.degraded, "notes": list(result.notes),
            "seconds": round(result.seconds, 4),
        }
        if not result.degraded:
            st.search_cache.put(key, reply)
        return reply

    # ------------------------------------------------------------ get_context

    @_one_state
    def get_context(self, query: str | None = None, targets: Sequence[str] | None = None,
                    budget_tokens: int | None = None, scope: str | None = None,
                    repo: str | None = None) -> dict[str, Any]:
        budget = DEFAULT_BUDGET_TOKENS if budget_tokens is None else int(budget_tokens)
        if budget < 1:
            raise UsageError("budget_tokens must be at least 1")
        if not (query and query.strip()) and not targets:
            raise UsageError("give a query or at least one target (path, path:START-END or symbol name)")
        scope = normalize_scope(scope) or None
        st = self.state(repo)
        notes: list[str] = []
        missing: list[str] = []
        degraded = False
        seeds: list[Candidate] = []
        if targets:
            if st.store_or_none() is None:
                raise NotFoundError(f"repository {st.alias!r} is not indexed: run `sourcebook index`")
            seeds, missing = self._target_seeds(st, targets)
            if not seeds:
                raise NotFoundError(f"none of the targets is indexed: {', '.join(missing)}")
        if query and query.strip():
            found = self.search_codebase(query, "hybrid", scope, 8, repo=st.alias)
            degraded = bool(found["degraded"])
            notes.extend(found["notes"])
            hit_seeds = self._hit_seeds(st, found["hits"])
            if not hit_seeds and found["files"]:
                # only whole-file evidence (e.g. a wiki page) matched: the best files are the seeds
                lines = {p: int(r.get("line_count") or 1) for p, r in st.indexed_paths().items()}
                hit_seeds = [Candidate(f["path"], 1, max(lines[f["path"]], 1), "match", float(f["score"]))
                             for f in found["files"][:3] if f["path"] in lines]
            seeds.extend(hit_seeds)
        candidates = self._expand(st, seeds, notes)
        unread: list[str] = []
        if candidates:
            packed = pack(candidates, lambda p, s, e: self._read_span(st, p, s, e, unread), budget)
        else:
            packed = Packed([], budget, 0, 0)
        if unread:  # spans were found but their text could not be read: an outage, not an empty answer
            degraded = True
            notes.append(f"the indexed text of {len(set(unread))} file(s) cannot be read: {unread[0]}")
        return {
            "query": query, "targets": list(targets or []), "repo": st.alias, "scope": scope,
            "budget_tokens": packed.budget_tokens, "used_tokens": packed.used_tokens,
            "counting_rule": packed.counting_rule, "skipped": packed.skipped, "missing": missing,
            "spans": [asdict(s) for s in packed.spans], "degraded": degraded, "notes": notes,
            "commit": st.commit(),
        }

    def _target_seeds(self, st: RepoState, targets: Sequence[str]) -> tuple[list[Candidate], list[str]]:
        indexed = st.indexed_paths()
        seeds: list[Candidate] = []
        missing: list[str] = []
        for raw in targets:
            target = parse_target(raw, lambda p: _clean(p) in indexed)
            if target.kind == "symbol":
                rows = match_symbols(st.symbols(), target.value)
                if rows:
                    seeds.extend(Candidate(r["path"], r["start_line"], r["end_line"], "target", 1.0,
                                           r["qualname"]) for r in rows)
                    continue
                if _clean(target.value) not in indexed:  # "util.py" may name a file, not a symbol
                    missing.append(raw)
                    continue
                target = Target("file", target.value)
            path = normalize_rel_path(target.value)  # a traversal attempt is refused, not "missing"
            row = indexed.get(path)
            if row is None:
                missing.append(raw)
                continue
            last = max(int(row.get("line_count") or 1), 1)
            if target.kind == "file":
                seeds.append(Candidate(path, 1, last, "target", 1.0))
            else:
                start = min(target.start_line, last)
                end = min(max(target.end_line, start), last)
                seeds.append(Candidate(path, start, end, "target", 1.0, _enclosing(st, path, start, end)))
        return seeds, missing

    def _hit_seeds(self, st: RepoState, hits: Sequence[dict[str, Any]]) -> list[Candidate]:
        seeds = []
        for hit in hits:
            if not hit.get("end_line"):
                continue
            start, end = int(hit["start_line"]), int(hit["end_line"])
            symbol = hit.get("symbol") or _enclosing(st, hit["path"], start, end)
            if end - start + 1 > MAX_SEED_LINES:
                # A whole big class matched: its header and docstring say what it is; the budget is
                # better spent on the other matches than on the first screens of its body.
                end = _header_end(st, hit["path"], start, end)
            seeds.append(Candidate(hit["path"], start, end, "match", float(hit["score"]), symbol or ""))
        return seeds

    def _expand(self, st: RepoState, seeds: list[Candidate], notes: list[str]) -> list[Candidate]:
        if not seeds:
            return []
        try:
            graph = st.graph()
            rows = st.symbols()
        except IndexStoreError as exc:
            notes.append(f"callers/callees not added: {exc}")
            return seeds
        if graph is None:
            notes.append("reference graph unavailable: callers/callees not added")
            return seeds
        where = {(r["path"], r["qualname"]): (int(r["start_line"]), int(r["end_line"])) for r in rows}

        def locate(key: SymbolKey) -> tuple[int, int] | None:
            return where.get(key)

        # Name-resolved edges are noisy; keep only those the import graph makes possible: a seed calls into
        # its own file or files it imports, and is called from its own file or files importing it.
        calls: dict[SymbolKey, list[SymbolKey]] = {}
        callers: dict[SymbolKey, list[SymbolKey]] = {}
        for seed in seeds:
            key = (seed.path, seed.symbol)
            reach_out = {seed.path, *graph.depends_on.get(seed.path, ())}
            reach_in = {seed.path, *graph.used_by.get(seed.path, ())}
            calls[key] = [k for k in graph.calls.get(key, ()) if k[0] in reach_out and k != key]
            callers[key] = [k for k in graph.callers.get(key, ()) if k[0] in reach_in and k != key]
        return expand(seeds, calls, callers, locate, getattr(graph, "symbol_rank", {}))

    def _read_span(self, st: RepoState, path: str, start: int, end: int,
                   unread: list[str] | None = None) -> str | None:
        try:
            text = st.file_text(path)
        except IndexStoreError as exc:
            log.warning("get_context: %s", exc)
            if unread is not None:
                unread.append(f"{path} ({exc})")
            return None
        return None if text is None else _lines(text, start, end)

    # ------------------------------------------------------------ get_symbol

    @_one_state
    def get_symbol(self, name: str, path: str | None = None, repo: str | None = None,
                   include_body: bool = True) -> dict[str, Any]:
        if not name or not name.strip():
            raise UsageError("a symbol name is required")
        st = self.state(repo)
        try:
            if st.store_or_none() is None:
                raise NotFoundError(f"repository {st.alias!r} is not indexed: run `sourcebook index`")
            symbols = st.symbols()
        except IndexStoreError as exc:  # an outage: no definitions, said so (never "no such symbol")
            log.warning("get_symbol: %s", exc)
            return {"name": name, "repo": st.alias, "definitions": [], "degraded": True,
                    "notes": [f"index outage: {exc}"]}
        rows = match_symbols(symbols, name, path)
        if not rows:
            import difflib

            names = sorted({r["name"] for r in symbols})
            close = difflib.get_close_matches(name.rsplit(".", maxsplit=1)[-1], names, n=5, cutoff=0.75)
            hint = f"; did you mean: {', '.join(close)}" if close else ""
            raise NotFoundError(f"no indexed symbol named {name!r}{hint}")
        try:
            graph = st.graph()
        except IndexStoreError as exc:  # definitions and bodies still answer; only the edges are missing
            log.warning("get_symbol: %s", exc)
            graph = None
        out = []
        outage: list[str] = []
        for row in rows:
            entry: dict[str, Any] = {
                "qualname": row["qualname"], "name": row["name"], "kind": row["kind"], "path": row["path"],
                "start_line": int(row["start_line"]), "end_line": int(row["end_line"]),
                "signature": row.get("signature") or "", "docstring": row.get("docstring") or "",
                "match": row["match"]}
            if include_body and not outage:
                try:
                    entry.update(self._live_body(st, row))
                except IndexStoreError as exc:  # the definitions answer; their bodies cannot be read
                    log.warning("get_symbol: %s", exc)
                    outage.append(f"bodies unavailable (index outage): {exc}")
            if graph is not None:
                key = (row["path"], row["qualname"])
                entry["callees"] = [{"path": p, "qualname": q} for p, q in graph.calls.get(key, [])][:50]
                entry["callers"] = [{"path": p, "qualname": q} for p, q in graph.callers.get(key, [])][:50]
            out.append(entry)
        reply: dict[str, Any] = {"name": name, "repo": st.alias, "commit": st.commit(), "definitions": out}
        if outage:
            reply.update(degraded=True, notes=outage)
        return reply

    def _live_body(self, st: RepoState, row: dict[str, Any]) -> dict[str, Any]:
        """The symbol's body read from disk now, with its line bounds checked against the index; with no
        checkout, from the file's text in the index (the indexed commit: nothing to compare)."""
        from generator.analyze.scan import decode

        start, end = int(row["start_line"]), int(row["end_line"])
        if not st.config.checkout:
            rel = normalize_rel_path(row["path"])
            text = st.file_text(rel)
            if text is None:
                return {"body": None, "verified": False, "note": "the file's text is not in the index"}
            raw = text.encode("utf-8", "surrogatepass")
        else:
            try:
                resolved, rel = resolve_in_root(st.config.root, row["path"])
                raw = resolved.read_bytes()
            except OSError as exc:
                return {"body": None, "verified": False, "note": f"cannot read the file now: {exc}"}
        live = decode(raw)
        import hashlib

        indexed = st.indexed_paths().get(rel, {})
        changed = (st.config.checkout and bool(indexed)
                   and hashlib.sha256(raw).hexdigest() != indexed.get("sha"))
        note = ""
        if changed:
            moved = _relocate(rel, raw, row)
            if moved is None:
                return {"body": None, "verified": False, "changed_since_index": True,
                        "note": "the file changed since indexing and the symbol is no longer found in it"}
            start, end = moved
            note = "the file changed since indexing; bounds re-read from the live file"
        lines = live.split("\n")
        if not 1 <= start <= end <= len(lines):
            return {"body": None, "verified": False, "changed_since_index": changed,
                    "note": f"indexed bounds {start}-{end} fall outside the live file ({len(lines)} lines)"}
        verified = row["name"] in "\n".join(lines[start - 1:min(end, start + 5)])
        body_end = min(end, start + MAX_BODY_LINES - 1)
        result: dict[str, Any] = {"body": "\n".join(lines[start - 1:body_end]), "body_start_line": start,
                                  "body_end_line": body_end, "verified": verified,
                                  "changed_since_index": changed, "truncated": body_end < end}
        if note:
            result["note"] = note
        return result

    # ------------------------------------------------------------ read_file

    @_one_state
    def read_file(self, path: str, start_line: int | None = None, end_line: int | None = None,
                  repo: str | None = None) -> dict[str, Any]:
        st = self.state(repo)
        _, rel = resolve_in_root(st.config.root, path)  # refuses escapes before anything else
        try:
            text = st.file_text(rel)
            row = st.indexed_paths()[rel] if text is not None else {}
        except IndexStoreError as exc:  # an outage: said so, never "not in the index" (issue 23)
            log.warning("read_file: %s", exc)
            return {"path": rel, "repo": st.alias, "language": "", "sha": None, "start_line": 0,
                    "end_line": 0, "total_lines": 0, "content": "", "truncated": False,
                    "degraded": True, "notes": [f"index outage: {exc}"]}
        if text is None:
            raise NotFoundError(f"{rel} is not in the index (not indexed, skipped, or no such file)")
        lines = text.split("\n")
        total = len(lines) if text else 0
        start = start_line or 1
        end = min(end_line or total, total)
        if start < 1 or (end_line is not None and end_line < start):
            raise UsageError("line range must satisfy 1 <= start_line <= end_line")
        if total and start > total:
            raise UsageError(f"start_line {start} is past the end of {rel} ({total} lines)")
        content = "\n".join(lines[start - 1:end]) if text else ""
        truncated = len(content) > MAX_READ_CHARS
        return {"path": rel, "repo": st.alias, "commit": st.commit(), "language": row.get("language") or "",
                "sha": row.get("sha"),
                "start_line": start if total else 0, "end_line": end, "total_lines": total,
                "content": content[:MAX_READ_CHARS], "truncated": truncated}

    # ------------------------------------------------------------ get_repo_structure

    @_one_state
    def get_repo_structure(self, scope: str | None = None, repo: str | None = None) -> dict[str, Any]:
        prefix = normalize_scope(scope)
        try:
            st = self.state(repo)
        except NotFoundError:
            # the contract: a repository never indexed is an empty tree, and another organisation's one
            # answers exactly as a name never used (no existence oracle). Where names are a fixed list (a
            # local workspace), an unknown one is a mistake: "not found" names the known ones; a name no
            # repository can have is never one "not indexed yet".
            if not self.workspace.named_by_push or (repo and not _REPO_NAME.fullmatch(repo)):
                raise
            return {"repo": repo or "", "scope": scope, "indexed": False, "commit": None, "files": 0,
                    "symbols": 0, "tree": build_tree([])}
        try:
            files = st.files()
        except IndexStoreError as exc:  # an outage: an empty tree that says so, not "not indexed"
            log.warning("get_repo_structure: %s", exc)
            return {"repo": st.alias, "scope": scope, "indexed": True, "files": 0, "symbols": 0,
                    "tree": build_tree([]), "degraded": True, "notes": [f"index outage: {exc}"]}
        if prefix:
            files = [f for f in files if under_scope(f["path"], prefix)]
        return {"repo": st.alias, "scope": scope, "indexed": st.store_or_none() is not None,
                "commit": st.commit(),
                "files": len(files), "symbols": sum(int(f.get("symbol_count") or 0) for f in files),
                "tree": build_tree(files)}

    # ------------------------------------------------------------ index

    def index_tar(self, fileobj: Any, repo: str | None = None, prune: bool = False,
                  commit: str | None = None) -> dict[str, Any]:
        """`index` for files pushed as a tar archive (`fileobj`, read from its start):
        answer/serving/pushes.py."""
        from answer.serving.pushes import check_tar, push_files

        entries = check_tar(fileobj, self.push_limits, commit)
        return push_files(self, repo, [], prune, self.push_limits, commit=commit, checked=entries)

    def index(self, paths: Sequence[str] | None = None, prune: bool = False, reset: bool = False,  # noqa: PLR0917
              repo: str | None = None, files: Sequence[Any] | None = None,
              commit: str | None = None) -> dict[str, Any]:
        """Upsert the requested files (or the whole tree); with prune, indexed files not requested go.

        Unchanged content hashes are skipped. A requested file that no longer exists (or is now skipped by
        scan) is removed from the index even without prune; it is listed under `removed`. A run from
        another checkout than the index's is refused (IndexSourceError) unless `reset`. `files`: the
        content pushed by a client instead (answer/serving/pushes.py).
        """
        if files is not None:
            from answer.serving.pushes import push_files

            if paths:
                raise UsageError("give `paths` (files on this server) or `files` (pushed content), not both")
            return push_files(self, repo, files, prune, self.push_limits, commit=commit)
        from generator.index.embed import get_embedder
        from generator.index.refresh import Checkout, IndexUpdate, read_source, update_from

        if commit is not None:
            raise UsageError("commit goes with pushed `files`: an index of a checkout records its HEAD")
        st = self.state(repo)
        config = st.config
        if not config.checkout:
            raise UsageError(f"repository {st.alias!r} has no checkout here (its index is read from "
                             f"{config.index_location}): index it where the files are, e.g. in CI")
        wanted: list[str] | None = None
        if paths:
            wanted = [resolve_in_root(config.root, p, allow_root=True)[1] for p in paths]
        embedder = get_embedder(config.embed)
        from sourcebook.lock import output_lock

        # the thread lock orders this server's own calls; the file lock waits for a CLI build or index run
        with st.index_lock, output_lock(config.out_dir), st.writing():
            known = reusable_hashes(st, embedder)
            select = None if wanted is None else (lambda path: _requested(path, wanted))
            # the same front half as `sourcebook build` and `sourcebook index`; unchanged files keep the
            # facts the index holds, so only new and changed files are parsed
            analysis = read_source(config, Checkout(known=_reusable_facts(st), select=select,
                                                    save_cache=False))
            seen = {f.path for f in analysis.files}
            # A requested path that is indexed but gone from disk (or now skipped) leaves the index even
            # without prune: passing every other indexed file unchanged makes the prune remove only it.
            gone = sorted(p for p in known if wanted is not None and _requested(p, wanted) and p not in seen)
            update = IndexUpdate(prune=prune, reset=reset)
            if gone and not prune:
                rows = st.indexed_paths()
                update = IndexUpdate(prune=True, reset=reset, keep=[
                    indexed_source(rows[p]) for p in known if p not in seen and p not in gone])
            report = update_from(config, analysis, embedder, update)
            st.invalidate()
        not_found = [w for w in (wanted or []) if w and not any(_requested(p, [w]) for p in seen | set(gone))]
        skipped = [asdict(s) for s in analysis.skipped if wanted is None or _requested(s.path, wanted)]
        return {"repo": st.alias, "prune": prune, "reset": reset, "requested": list(paths or []),
                "report": asdict(report),
                "removed": gone if not prune else [], "not_found": not_found, "skipped": skipped[:200]}

    # ------------------------------------------------------------ remember

    def remember(self, text: str, scope: str | None = None, repo: str | None = None) -> dict[str, Any]:
        from answer.answering.episodes import EpisodeStore

        st = self.state(repo)
        episode = EpisodeStore(st.config.out_dir).record(text, scope)
        return {"repo": st.alias, "episode": episode.model_dump(mode="json")}


def _read_errors() -> tuple[type[BaseException], ...]:
    """An index outage as raised by our readers (IndexStoreError) or from inside LanceDB/Arrow."""
    from generator.index.store import outage_errors

    return (IndexStoreError, *outage_errors())


def _outage_answer(alias: str, exc: BaseException) -> dict[str, Any]:
    from answer.answering.response import AnswerResponse, Meta

    reply = AnswerResponse(
        answer="", confidence="low", degraded="index-unavailable",
        note=f"The index of {alias!r} cannot be read right now ({exc}); no answer or evidence this time: "
             "retry later, or use search_codebase, which answers whatever part of the index is readable.",
        _meta=Meta(repo=alias, hint="The index is unavailable: retry later."))
    return reply.to_dict()


def _reusable_facts(st: RepoState) -> dict[tuple[str, str], Any]:
    """{(path, sha): facts} the index holds, when its parser is this one ({} otherwise)."""
    from generator.analyze.factcache import parser_version

    try:
        store = st.store_or_none()
    except IndexStoreError:
        return {}
    if store is None or store.meta.get("parser") != parser_version():
        return {}
    analysis = st.analysis()
    return {} if analysis is None else {(p, f.file.sha): f for p, f in analysis.facts.items()}


def _requested(path: str, wanted: Sequence[str]) -> bool:
    """True when `path` is one of the requested paths or lies under a requested directory ("" = all)."""
    return any(w in ("", path) or path.startswith(w + "/") for w in wanted)


def _clean(path: str) -> str:
    try:
        return normalize_rel_path(path)
    except SourcebookError:
        return path


def _enclosing(st: RepoState, path: str, start: int, end: int) -> str:
    """The innermost indexed symbol of `path` whose lines contain [start, end], or ""."""
    best = ""
    best_size = None
    try:
        rows = st.symbols()
    except IndexStoreError:
        return ""  # the caller still has the span; only its symbol name is unknown
    for row in rows:
        if row["path"] != path or not (row["start_line"] <= start and end <= row["end_line"]):
            continue
        size = row["end_line"] - row["start_line"]
        if best_size is None or size < best_size:
            best, best_size = row["qualname"], size
    return best


def _header_end(st: RepoState, path: str, start: int, end: int) -> int:
    """Last line of a long span's header: the line before its first nested definition, at most
    MAX_SEED_LINES lines in."""
    limit = start + MAX_SEED_LINES - 1
    try:
        rows = st.symbols()
    except IndexStoreError:
        return limit
    nested = [int(r["start_line"]) for r in rows
              if r["path"] == path and start < int(r["start_line"]) <= end]
    first = min(nested, default=limit + 1)
    return max(start, min(first - 1, limit))


def _relocate(path: str, raw: bytes, row: dict[str, Any]) -> tuple[int, int] | None:
    """Re-parse a changed file and return the symbol's new (start, end) lines, or None if it is gone."""
    from generator.analyze.facts import SourceFile
    from generator.analyze.languages import detect_language
    from generator.analyze.parse import extract

    facts = extract(SourceFile(path, detect_language(path), len(raw), ""), raw)
    for sym in facts.symbols:
        if sym.qualname == row["qualname"]:
            return sym.start_line, sym.end_line
    return None
