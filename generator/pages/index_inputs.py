"""What a build hands the index step about its pages: each page's state row and Markdown, digested, and made
into index records only when asked.

Why: the index stores a page as its state's fields plus `index_text(markdown)`, and the shared build cache
stores its state and Markdown as they pass the secret rules. Both are functions of (state row, Markdown file)
alone, and deriving them for every page (index_text's regexes, the cache rows' JSON, the secret rules) was
most of the index step after a one-file edit (docs/performance.md). So each page gets a digest over its state
row and its Markdown bytes, and a memo (`state/index-pages.json`) keeps what the last run derived per digest:
the page's index-row hash, its build-cache row's sha and the secret rules' verdict. A page whose digest is in
the memo is neither rendered for the index nor checked for secrets again; any other page is made as before.
The digests together are also part of the index step's fingerprint (generator/index/fingerprint.py: a build
that changed nothing leaves the index alone).

The memo lives in the output folder, which the repository owns: it carries a mark keyed under this user's
local key (sourcebook/local_key.py) and is ignored without it, and it names the code it was made by (a change
to index_text, the rows' layout or the secret rules drops it).
"""

from __future__ import annotations

import functools
import hashlib
import json
import logging
from collections.abc import Iterable, Mapping
from dataclasses import fields
from pathlib import Path

from generator.analyze.facts import PageRecord
from generator.analyze.plan import PageState
from sourcebook.atomic import atomic_write_text

log = logging.getLogger(__name__)

MEMO_NAME = "index-pages.json"
_MISSING = b"\x00no markdown file\x00"


@functools.cache
def code_version() -> str:
    """The code whose output the memo keeps, and that the index step's fingerprint names: this module's import
    closure (index_text, the state rows) and the index writer's (the rows' layout, tokens and hashes, the
    secret rules), with the build-cache rows it publishes."""
    from sourcebook.code_version import stage_version

    version = stage_version("generator.pages.index_inputs", "generator.index.writer",
                            "generator.index.build_cache")
    return hashlib.sha256(f"index-pages 1\0{version}".encode()).hexdigest()[:32]


def record_of(page_id: str, row: PageState, markdown: str) -> PageRecord:
    """The index's record of a page from its state row and its Markdown file's text."""
    from generator.pages.render_markdown import index_text

    return PageRecord(id=page_id, kind=row.kind, title=row.title,  # type: ignore[arg-type]
                      target_path=row.target_path, summary=row.summary, markdown=index_text(markdown),
                      symbols=tuple(row.symbols),
                      written_by="llm" if row.written_by == "llm" else "extracted")


class PageInputs:
    """The planned pages that have a state row: their digests (read once, the Markdown not kept), the records
    the index stores (made on demand) and what the memo knows of each digest.

    `known_hash`/`known_cache`/`known_verdict` answer from the memo (None: unknown); `learn` records what this
    run derived, and `save` writes the memo once the index step is done."""

    def __init__(self, docs_dir: Path, state: Mapping[str, PageState], planned: Iterable[str],
                 out_dir: Path | None = None, *, state_file: Path | None = None) -> None:
        """`state_file`: the page state as saved (plan.save_state) from exactly `state`; the fingerprint then
        digests its bytes instead of encoding every row (the monorepo's 13k rows with their drafts)."""
        self.docs_dir, self.state, self.out_dir, self.state_file = docs_dir, state, out_dir, state_file
        self.ids = sorted(pid for pid in set(planned) if pid in state)
        self._markdown: dict[str, bytes] = {}  # page id -> digest of its Markdown file's bytes
        for page_id in self.ids:
            try:
                self._markdown[page_id] = hashlib.sha256((docs_dir / page_id).read_bytes()).digest()
            except OSError:
                self._markdown[page_id] = _MISSING
        self._digests: dict[str, str] | None = None
        self._memo_read: dict[str, dict[str, str]] | None = None
        self._learned: dict[str, dict[str, str]] = {}

    @property
    def digests(self) -> dict[str, str]:
        """page id -> digest of its state row and Markdown (made on first use: a skipped run needs none)."""
        if self._digests is None:
            self._digests = {}
            for page_id in self.ids:
                row = self.state[page_id]
                text = json.dumps({f.name: getattr(row, f.name) for f in fields(row)}, ensure_ascii=False)
                digest = hashlib.sha256(page_id.encode("utf-8", "surrogatepass") + b"\x00")
                digest.update(text.encode("utf-8", "surrogatepass") + b"\x00")
                digest.update(self._markdown[page_id])
                self._digests[page_id] = digest.hexdigest()[:40]
        return self._digests

    @property
    def _memo(self) -> dict[str, dict[str, str]]:
        if self._memo_read is None:
            self._memo_read = self._load()
        return self._memo_read

    def fingerprint(self) -> str:
        """One digest over every page's state and Markdown (and the code that makes their rows): equal only
        when neither changed."""
        digest = hashlib.sha256(code_version().encode())
        if self.state_file is not None and self.state_file.is_file():
            digest.update(b"state file\x00" + hashlib.sha256(self.state_file.read_bytes()).digest())
            for page_id in self.ids:
                digest.update(page_id.encode("utf-8", "surrogatepass") + b"\x00" + self._markdown[page_id])
        else:
            for page_id in self.ids:
                digest.update(f"{page_id}\x00{self.digests[page_id]}\x00".encode("utf-8", "surrogatepass"))
        return digest.hexdigest()

    def markdown(self, page_id: str) -> str | None:
        try:
            return (self.docs_dir / page_id).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return None

    def record(self, page_id: str) -> PageRecord | None:
        """The page as the index stores it (None when its Markdown file is missing)."""
        markdown = self.markdown(page_id)
        return None if markdown is None else record_of(page_id, self.state[page_id], markdown)

    def records(self) -> list[PageRecord]:
        return [r for r in map(self.record, self.ids) if r is not None]

    def _known(self, page_id: str, what: str) -> str | None:
        entry = self._learned.get(page_id) or self._memo.get(page_id)
        if entry is None or entry.get("digest") != self.digests.get(page_id):
            return None
        value = entry.get(what)
        return value if isinstance(value, str) else None

    def known_hash(self, page_id: str) -> str | None:
        """The index-row hash (index.page_hash) of this page's record, if the memo holds its digest."""
        return self._known(page_id, "hash")

    def known_cache(self, page_id: str) -> str | None:
        """The sha of the build-cache row this page is stored as ('' when it is not cacheable), if known."""
        return self._known(page_id, "cache")

    def known_verdict(self, page_id: str) -> str | None:
        """What the secret rules let out of this page into the cache (build_cache's verdicts), if known."""
        return self._known(page_id, "verdict")

    def learn(self, page_id: str, **values: str) -> None:
        if page_id not in self.digests:
            return
        entry = self._learned.get(page_id)
        if entry is None or entry.get("digest") != self.digests[page_id]:
            old = self._memo.get(page_id)
            entry = dict(old) if old is not None and old.get("digest") == self.digests[page_id] else {}
            entry["digest"] = self.digests[page_id]
            self._learned[page_id] = entry
        entry.update(values)

    # -- the memo file ---------------------------------------------------------------------------------

    def _path(self) -> Path | None:
        return None if self.out_dir is None else self.out_dir / "state" / MEMO_NAME

    def _load(self) -> dict[str, dict[str, str]]:
        from sourcebook.local_key import keyed, local_key

        path = self._path()
        if path is None or not path.is_file():
            return {}
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
            body, mark = data["body"], data["mark"]
        except (OSError, ValueError, TypeError, KeyError):
            return {}
        if not isinstance(body, str):
            return {}
        expected = keyed(body.encode("utf-8", "surrogatepass"), local_key())
        if expected is None or mark != expected:
            return {}  # not this user's (or no key to tell): derived again
        try:
            memo = json.loads(body)
        except ValueError:
            return {}
        if not isinstance(memo, dict) or memo.get("code") != code_version():
            return {}
        pages = memo.get("pages")
        return {k: v for k, v in pages.items() if isinstance(v, dict)} if isinstance(pages, dict) else {}

    def save(self) -> None:
        """Write the memo: this run's pages, each with what is known of its current digest."""
        from sourcebook.local_key import keyed, local_key

        path = self._path()
        if path is None:
            return
        pages: dict[str, dict[str, str]] = {}
        for page_id in self.ids:
            entry = self._learned.get(page_id) or self._memo.get(page_id)
            if entry is not None and entry.get("digest") == self.digests[page_id]:
                pages[page_id] = entry
        body = json.dumps({"code": code_version(), "pages": pages}, ensure_ascii=False, sort_keys=True,
                          separators=(",", ":"))
        mark = keyed(body.encode("utf-8", "surrogatepass"), local_key())
        if mark is None:
            path.unlink(missing_ok=True)
            return
        try:
            atomic_write_text(path, json.dumps({"body": body, "mark": mark}))
        except OSError as exc:  # only a memo: the next run derives the rows again
            log.info("%s: not written (%s)", path, exc)
