"""The shared build cache: each page's state (keys, summary, the writer's draft) and rendered Markdown, plus
the LLM ledgers, stored beside the index so that a build on another machine reuses them.

Why beside the index: a CI runner starts with an empty output folder, and the index URI (`index_uri`,
e.g. `s3://bucket/prefix`) is the one place every runner and server already reaches with the store's own
credentials. The cache is a table of that LanceDB database (generator/index/cache_table.py writes it),
published in the
same meta-row commit as the index tables: readers see the cache and the index of one complete build, never
half of a newer one, and a run that dies half way is rolled back with the rest.

Rows are `id` (`page:<page id>` or `ledger:<run>`), `key` (a page's key), `value` (JSON) and `sha`, a hash
over the other three. Nothing in the cache is trusted to be right, only to be checkable:
- a row whose `sha` does not match (a torn or damaged write), whose JSON does not decode, whose page id is
  not a docs path or whose stored state names another key is ignored (that page is simply built);
- cached Markdown is written out only when its page key equals the key this build computes for the page,
  and a cached draft is re-rendered only when its draft key equals this build's (generator/pages/page_sink.py
checks both). So a cache entry can save work, never change a page.

Secrets: what leaves the machine through the cache passes the redaction rules (sourcebook/redaction.py). A
page whose prose (summary, drafts, generated docstrings) holds anything `redact` would remove is not cached
at all (another runner asks the model again); a page whose Markdown does (it shows source code) is cached
without its Markdown (another runner renders it again from the checkout). Ledger strings are redacted.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Callable, Container, Iterable, Iterator, Mapping
from dataclasses import asdict, dataclass, field
from typing import Any, Protocol

from generator.analyze.plan import CachedPage, PageState, is_page_id
from sourcebook.redaction import holds_secret, redact_text

log = logging.getLogger(__name__)

CACHE_FORMAT = 1
PAGE_PREFIX = "page:"
LEDGER_PREFIX = "ledger:"
MAX_LEDGER_RUNS = 50  # ledgers of this many runs are kept in the shared cache
PAGES_PER_ITEM = 64  # pages a worker makes the rows of at a time (CacheUpdate.fresh_rows)
_PROSE_FIELDS = ("title", "summary", "docstrings", "draft", "llm_draft")  # never the keys: they are hex


def row_sha(row_id: str, key: str, value: str) -> str:
    digest = hashlib.sha256()
    for part in (row_id, key, value):
        digest.update(part.encode("utf-8", "surrogatepass"))
        digest.update(b"\x00")
    return digest.hexdigest()


def _row(row_id: str, key: str, value: str) -> dict[str, str]:
    return {"id": row_id, "key": key, "value": value, "sha": row_sha(row_id, key, value)}


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for k, v in value.items():
            yield str(k)
            yield from _strings(v)
    elif isinstance(value, list | tuple):
        for v in value:
            yield from _strings(v)


# -- writing (pure) ------------------------------------------------------------------------------------------


def _page_value(state_data: Mapping[str, Any], markdown: str | None) -> str:
    return json.dumps({"format": CACHE_FORMAT, "state": state_data, "markdown": markdown},
                      ensure_ascii=False, sort_keys=True, separators=(",", ":"))


def page_row(page_id: str, state: PageState, markdown: str | None) -> dict[str, str] | None:
    """The cache row of one page, or None when its prose must not leave the machine (see the docstring)."""
    data = asdict(state)
    return _page_row(page_id, state.key, data, markdown, _verdict(page_id, data, markdown))


# what the secret rules let out of a page: all of it, all but its Markdown, or nothing
_WHOLE, _BARE, _NOTHING = "whole", "bare", "nothing"


def _verdict(page_id: str, data: Mapping[str, Any], markdown: str | None) -> str:
    prose = "\n".join(s for name in _PROSE_FIELDS for s in _strings(data[name]))
    if holds_secret(prose):
        log.info("%s: not put in the shared build cache (its prose matches a secret rule)", page_id)
        return _NOTHING
    if markdown is not None and holds_secret(markdown):
        return _BARE  # re-rendered from the checkout by whoever uses this entry
    return _WHOLE


def _page_row(page_id: str, key: str, data: Mapping[str, Any], markdown: str | None,
              verdict: str) -> dict[str, str] | None:
    if verdict == _NOTHING:
        return None
    return _row(PAGE_PREFIX + page_id, key, _page_value(data, markdown if verdict == _WHOLE else None))


def _redacted(value: Any) -> Any:
    if isinstance(value, str):
        return redact_text(value)
    if isinstance(value, dict):
        return {k: _redacted(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_redacted(v) for v in value]
    return value


def ledger_row(run_id: str, ledger: Mapping[str, Any]) -> dict[str, str]:
    """One run's ledger (Ledger.to_dict()) as a cache row, every string in it redacted."""
    value = json.dumps(_redacted(dict(ledger)), ensure_ascii=False, sort_keys=True, separators=(",", ":"))
    return _row(LEDGER_PREFIX + run_id, "", value)


def _no_markdown(_page_id: str) -> str | None:
    return None


class CacheMemo(Protocol):
    """What an earlier run derived about a page's cache row (generator/pages/index_inputs.py keeps it per
    digest of
    the page's state and Markdown): the row's sha ('' when the page is not cached) and the secret verdict."""

    def known_cache(self, page_id: str) -> str | None: ...

    def known_verdict(self, page_id: str) -> str | None: ...

    def learn(self, page_id: str, **values: str) -> None: ...


Made = tuple[str, "dict[str, str] | None", "str | None"]  # CacheUpdate.made_rows: page id, row, verdict


@dataclass
class CacheUpdate:
    """What a build publishes: its pages (id, state) with their Markdown read through `markdown` when a row
    is made (never all held at once), and other rows (ledgers); turned into rows against what is stored
    (`rows`), and which stored rows not among them survive (`retained`). `memo`: what earlier runs derived
    about pages whose state and Markdown are unchanged (their rows' shas are then not made again)."""

    pages: list[tuple[str, PageState]] = field(default_factory=list)
    extra: list[dict[str, str]] = field(default_factory=list)
    markdown: Callable[[str], str | None] = _no_markdown
    memo: CacheMemo | None = None

    def rows(self, stored: Mapping[str, list[str]] | None = None, *, verdicts: dict[str, str] | None = None,
             only: Container[str] | None = None) -> Iterator[dict[str, str]]:
        """The rows to store, one at a time, given the stored `{id: [sha, ...]}`. A page stored exactly as
        it is now is taken as it is: the secret rules ran when it was first published (a cost per page
        that a no-change build of 100k pages must not pay). `verdicts` (page id -> what the rules
        let out) is filled on a first pass and read on a later one, which then scans nothing again;
        `only`: just the rows of these ids."""
        stored = stored or {}
        judged: dict[str, str] = {} if verdicts is None else verdicts
        for row in self.extra:
            if only is None or row["id"] in only:
                yield row
        for page_id, state in self.pages:
            if only is not None and PAGE_PREFIX + page_id not in only:
                continue
            made = self._page_row(page_id, state, stored, judged)
            if made is not None:
                yield made

    def wanted(self, stored: Mapping[str, list[str]], *, verdicts: dict[str, str]) -> dict[str, str]:
        """{row id: sha} of the rows `rows` would give, taken from the memo for the pages it knows (nothing
        read, nothing scanned); the others are made, and what they gave is taught to the memo."""
        out = {row["id"]: row["sha"] for row in self.extra}
        for page_id, state in self.pages:
            known = self.memo.known_cache(page_id) if self.memo is not None else None
            # trusted while the table holds what the memo says it does (another machine's publish, or a
            # rebuilt index, makes the row again: from the memo's verdict, without scanning)
            if known is not None and stored.get(PAGE_PREFIX + page_id, []) == ([known] if known else []):
                if known:
                    out[PAGE_PREFIX + page_id] = known
                continue
            made = self._page_row(page_id, state, stored, verdicts)
            if made is not None:
                out[made["id"]] = made["sha"]
            if self.memo is not None:
                self.memo.learn(page_id, cache=made["sha"] if made is not None else "",
                                **({"verdict": verdicts[page_id]} if page_id in verdicts else {}))
        return out

    def fresh_rows(self, spread: Callable[[Iterable[list[int]], int], Iterable[list[Made]]] | None = None,
                   ) -> Iterator[dict[str, str]]:
        """Every row for an empty table, each page's made (and scanned) once, in order: what `wanted` and then
        `rows` give when nothing is stored, and what they teach the memo. `spread`: runs `made_rows` over
        groups of page positions in other processes (the index step's workers), in order."""
        yield from self.extra
        groups = [list(range(n, min(n + PAGES_PER_ITEM, len(self.pages))))
                  for n in range(0, len(self.pages), PAGES_PER_ITEM)]
        parts = spread(groups, len(groups)) if spread is not None else map(self.made_rows, groups)
        for part in parts:
            for page_id, made, verdict in part:
                if self.memo is not None and verdict is not None:
                    self.memo.learn(page_id, cache=made["sha"] if made is not None else "",
                                    **({"verdict": verdict} if verdict else {}))
                if made is not None:
                    yield made

    def made_rows(self, positions: list[int]) -> list[Made]:
        """(page id, its row or None, the secret verdict; None when the memo knows the page is not cached) of
        the pages at `positions`, for an empty table."""
        out: list[Made] = []
        for n in positions:
            page_id, state = self.pages[n]
            if self.memo is not None and self.memo.known_cache(page_id) == "":
                out.append((page_id, None, None))  # known not cacheable: nothing made, nothing learned
                continue
            judged: dict[str, str] = {}
            made = self._page_row(page_id, state, {}, judged)
            out.append((page_id, made, judged.get(page_id, "")))
        return out

    def _page_row(self, page_id: str, state: PageState, stored: Mapping[str, list[str]],
                  judged: dict[str, str]) -> dict[str, str] | None:
        markdown = self.markdown(page_id)
        data = asdict(state)
        raw = _row(PAGE_PREFIX + page_id, state.key, _page_value(data, markdown))
        if stored.get(raw["id"]) == [raw["sha"]]:
            return raw
        if page_id not in judged:
            known = self.memo.known_verdict(page_id) if self.memo is not None else None
            judged[page_id] = known if known is not None else _verdict(page_id, data, markdown)
        return _page_row(page_id, state.key, data, markdown, judged[page_id])

    @staticmethod
    def retained(stored_ids: Iterable[str], written: Iterable[str]) -> set[str]:
        """Of the stored ids not `written`: the newest ledgers (every page of this build is written; a page
        not among them is gone or was not cacheable, and its old row must not outlive it)."""
        mine = set(written)
        ledgers = sorted(i for i in stored_ids if i.startswith(LEDGER_PREFIX) and i not in mine)
        room = MAX_LEDGER_RUNS - sum(1 for i in mine if i.startswith(LEDGER_PREFIX))
        return set(ledgers[-room:]) if room > 0 else set()


def cache_update(state: Mapping[str, PageState], planned: Iterable[str],
                 markdown: Callable[[str], str | None],
                 ledger: tuple[str, Mapping[str, Any]] | None = None, memo: CacheMemo | None = None
                 ) -> CacheUpdate:
    """What a finished build publishes: every planned page in `state` (with its Markdown, when `markdown`
    returns it: read when its row is made) and this run's ledger, if it made LLM calls. `memo`: see
    CacheUpdate."""
    pages = [(page_id, state[page_id]) for page_id in sorted(planned) if page_id in state]
    return CacheUpdate(pages, [ledger_row(*ledger)] if ledger is not None else [], markdown, memo)


# -- reading -------------------------------------------------------------------------------------------------


def decode_page(row: Mapping[str, Any]) -> CachedPage | None:
    """The page a stored row holds, or None when the row is damaged or not what it claims to be."""
    row_id, key, value = row.get("id"), row.get("key"), row.get("value")
    if not (isinstance(row_id, str) and isinstance(key, str) and isinstance(value, str)):
        return None
    if not row_id.startswith(PAGE_PREFIX) or row.get("sha") != row_sha(row_id, key, value):
        return None
    page_id = row_id[len(PAGE_PREFIX):]
    if not is_page_id(page_id):  # never a path outside docs/, whoever wrote the row
        return None
    try:
        data = json.loads(value)
        if not isinstance(data, dict) or data.get("format") != CACHE_FORMAT:
            return None
        state = PageState(**data["state"])
    except (ValueError, TypeError, KeyError):
        return None
    markdown = data.get("markdown")
    if state.key != key or not isinstance(state.draft, dict) or not isinstance(state.llm_draft, dict) or (
            markdown is not None and not isinstance(markdown, str)):
        return None
    return CachedPage(state, markdown)


class SharedCache:
    """The cache a build reads, on first use (a build whose local state is complete never reads it): row by
    row for the first few pages asked (`load_some`, by row id), whole after that or without `load_some`."""

    FEW = 64  # pages asked one by one before the whole cache is read

    def __init__(self, load: Callable[[], list[dict[str, Any]]],
                 load_some: Callable[[list[str]], list[dict[str, Any]]] | None = None) -> None:
        self._load, self._load_some = load, load_some
        self._pages: dict[str, CachedPage] | None = None
        self._some: dict[str, CachedPage | None] = {}  # pages asked one by one (None: not in the cache)
        self.ignored = 0  # rows that failed their checks

    def _decoded(self, rows: Iterable[Mapping[str, Any]]) -> dict[str, CachedPage]:
        out: dict[str, CachedPage] = {}
        bad = 0
        for row in rows:
            row_id = str(row.get("id") or "")
            if not row_id.startswith(PAGE_PREFIX):
                continue
            page = decode_page(row)
            if page is None:
                bad += 1
                continue
            out[row_id[len(PAGE_PREFIX):]] = page
        if bad:
            self.ignored += bad
            log.warning("shared build cache: %d damaged or invalid entries ignored (those pages are built "
                        "again)", bad)
        return out

    def _ensure(self) -> dict[str, CachedPage]:
        if self._pages is None:
            self.ignored = 0
            self._pages = self._decoded(self._load())
        return self._pages

    def page(self, page_id: str) -> CachedPage | None:
        if self._pages is None and self._load_some is not None and (
                page_id in self._some or len(self._some) < self.FEW):
            if page_id not in self._some:
                found = self._decoded(self._load_some([PAGE_PREFIX + page_id]))
                self._some[page_id] = found.get(page_id)
            return self._some[page_id]
        return self._ensure().get(page_id)

    def matches(self, page_id: str, key: str) -> bool:
        """Whether the cache holds this page's Markdown at exactly `key` (a build restores it as it is)."""
        page = self.page(page_id)
        return page is not None and page.state.key == key and page.markdown is not None

    def summary(self, page_id: str) -> str | None:
        page = self.page(page_id)
        return page.state.summary if page is not None else None


def empty_cache() -> SharedCache:
    return SharedCache(list)
