"""The index's rows, pure: a chunk's, a symbol's, a file's and a page's row, the text each embeds, the tables'
Arrow schemas, and the pages a run is given (PageSource).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Protocol

from generator.analyze.facts import FileFacts, PageRecord
from generator.index.chunks import Chunk
from generator.index.store import CACHE_TABLE
from generator.index.tokens import path_terms, token_text
from sourcebook.redaction import is_secret_path

if TYPE_CHECKING:
    import pyarrow as pa


EMBED_CHARS = 2000  # text per chunk given to the embedder


class PageSource(Protocol):
    """The pages a run is given (generator/pages/index_inputs.py in a build): their ids, each one's record
    made on
    demand, what an earlier run derived of it (its row hash), and a digest of them all for the run's
    fingerprint (None: unknown, the run is never skipped)."""

    ids: list[str]

    def fingerprint(self) -> str | None: ...

    def record(self, page_id: str) -> PageRecord | None: ...

    def known_hash(self, page_id: str) -> str | None: ...

    def learn(self, page_id: str, **values: str) -> None: ...

    def save(self) -> None: ...


class RecordList:
    """Page records given whole (the index tool's and tests' callers): the same interface, nothing known."""

    def __init__(self, records: Sequence[PageRecord]) -> None:
        self._records = {r.id: r for r in records}
        self.ids = list(self._records)

    def fingerprint(self) -> str | None:
        return None  # records given whole were already made: nothing to skip

    def record(self, page_id: str) -> PageRecord | None:
        return self._records.get(page_id)

    def known_hash(self, page_id: str) -> str | None:
        return None

    def learn(self, page_id: str, **values: str) -> None:
        return None

    def save(self) -> None:
        return None


def _hash(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:32]


def _embed_text(path: str, symbol: str, text: str) -> str:
    head = f"{path} {symbol}".strip()
    if is_secret_path(path):
        return head  # a secrets file by name: its content is never sent, not even to a remote embedder
    return f"{head}\n{text[:EMBED_CHARS]}"


def chunk_embed_text(chunk: Chunk) -> str:
    return _embed_text(chunk.path, chunk.symbol, chunk.text)


def page_embed_text(page: PageRecord) -> str:
    return _page_embed_text(page.title, page.summary, page.markdown)


def _page_embed_text(title: str, summary: str, markdown: str) -> str:
    return f"{title}\n{summary}\n{markdown[:EMBED_CHARS]}"


def page_embed_text_of(row: dict[str, Any]) -> str:
    return _page_embed_text(row["title"], row["summary"], row["markdown"])


def embed_text_of(row: dict[str, Any]) -> str:
    return _embed_text(row["path"], row["symbol"], row["text"])


def chunk_row(chunk: Chunk) -> dict[str, Any]:
    embed_text = chunk_embed_text(chunk)
    return {
        "id": chunk.id, "path": chunk.path, "start_line": chunk.start_line, "end_line": chunk.end_line,
        "symbol": chunk.symbol, "symbols": " ".join(chunk.symbols), "language": chunk.language,
        "kind": chunk.kind, "text": chunk.text,
        "tokens": token_text(chunk.text, chunk.path, chunk.symbols),
        "hash": _hash(embed_text),
    }


def symbol_rows(facts: FileFacts) -> list[dict[str, Any]]:
    rows = []
    seen: set[str] = set()
    for sym in facts.symbols:
        key = f"{sym.path}::{sym.qualname}"
        if key in seen:
            continue
        seen.add(key)
        rows.append({
            "id": key, "path": sym.path, "qualname": sym.qualname, "name": sym.name, "kind": sym.kind,
            "start_line": sym.start_line, "end_line": sym.end_line, "signature": sym.signature,
            "docstring": sym.docstring, "docstring_source": sym.docstring_source,
            "parent": sym.parent or "", "public": sym.public,
            "tokens": " ".join([token_text(f"{sym.qualname} {sym.signature}"),
                                token_text(sym.docstring[:1000])]),
        })
    # a type's fields and enum constants (its member table on the page, no symbols of the call graph): a
    # question about a change often names one, so the index finds them by name as it finds a method; each
    # is a row of its one line under its type, public as its type is. No full-text tokens: a one-line row
    # matching a common word (`value`, `name`) outranked the code around it in BM25 (bench/history_bench.py
    # on the 27 repositories with member tables: hit@5 even, MRR up with names only, down with tokens)
    public = {sym.qualname: sym.public for sym in facts.symbols}
    for m in facts.members:
        qualname = f"{m.parent}.{m.name}"
        key = f"{facts.file.path}::{qualname}"
        if key in seen:
            continue
        seen.add(key)
        rows.append({
            "id": key, "path": facts.file.path, "qualname": qualname, "name": m.name, "kind": m.kind,
            "start_line": m.line, "end_line": m.line, "signature": m.declaration, "docstring": m.docstring,
            "docstring_source": "code", "parent": m.parent, "public": public.get(m.parent, True),
            "tokens": "",
        })
    return rows


def file_row(facts: FileFacts, text: str) -> dict[str, Any]:
    from generator.analyze.factcache import facts_to_json

    f = facts.file
    names = [s.qualname for s in facts.symbols]
    return {
        "path": f.path, "sha": f.sha, "language": f.language or "", "kind": f.kind, "size": f.size,
        "symbol_count": len(facts.symbols), "line_count": facts.line_count or text.count("\n") + 1,
        "title": facts.title, "docstring": facts.docstring[:2000], "text": text,
        "tokens": token_text(text, f.path, names),
        "facts": json.dumps(facts_to_json(facts), ensure_ascii=False, separators=(",", ":")),
    }


def page_hash(page: PageRecord) -> str:
    # covers everything stored (not just the embedded prefix): an unchanged hash means an unchanged row
    return _hash("\x00".join([page.kind, page.title, page.target_path, page.summary, page.markdown,
                              " ".join(page.symbols), page.written_by]))


def page_row(page: PageRecord) -> dict[str, Any]:
    return {
        "id": page.id, "kind": page.kind, "title": page.title, "target_path": page.target_path,
        "summary": page.summary, "markdown": page.markdown, "symbols": " ".join(page.symbols),
        "written_by": page.written_by,
        "tokens": " ".join([" ".join(path_terms(page.target_path)) if page.target_path else "",
                            token_text(f"{page.title}\n{page.summary}\n{page.markdown}", "", page.symbols)]),
        "hash": page_hash(page),
    }


def table_schema(name: str, dim: int) -> pa.Schema:
    import pyarrow as pa

    s, i32 = pa.string(), pa.int32()
    cols: dict[str, list[tuple[str, Any]]] = {
        "chunks": [("id", s), ("path", s), ("start_line", i32), ("end_line", i32), ("symbol", s),
                   ("symbols", s), ("language", s), ("kind", s), ("text", s), ("tokens", s), ("hash", s)],
        "symbols": [("id", s), ("path", s), ("qualname", s), ("name", s), ("kind", s), ("start_line", i32),
                    ("end_line", i32), ("signature", s), ("docstring", s), ("docstring_source", s),
                    ("parent", s), ("public", pa.bool_()), ("tokens", s)],
        "files": [("path", s), ("sha", s), ("language", s), ("kind", s), ("size", pa.int64()),
                  ("symbol_count", i32), ("line_count", i32), ("title", s), ("docstring", s), ("text", s),
                  ("tokens", s), ("facts", s)],
        "pages": [("id", s), ("kind", s), ("title", s), ("target_path", s), ("summary", s), ("markdown", s),
                  ("symbols", s), ("written_by", s), ("tokens", s), ("hash", s)],
        "meta": [("key", s), ("value", s)],
        CACHE_TABLE: [("id", s), ("key", s), ("value", s), ("sha", s)],
    }
    fields = [pa.field(n, t) for n, t in cols[name]]
    if dim and name in ("chunks", "pages"):
        fields.append(pa.field("vector", pa.list_(pa.float32(), dim)))
    return pa.schema(fields)


KEY_COLUMN = {"chunks": "id", "symbols": "id", "files": "path", "pages": "id"}
PATH_COLUMN = {"chunks": "path", "symbols": "path", "files": "path", "pages": "target_path"}
