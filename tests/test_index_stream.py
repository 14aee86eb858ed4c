"""The index's rows are streamed to LanceDB batch by batch (generator/index/store.py): the batch size changes
nothing that is stored or found, and a run that fails half way through a stream leaves the previous
complete index in place, which the next run rolls back to and completes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from generator.build import build
from generator.index import row_workers, table_writes
from generator.index import rows as index_rows
from generator.index import store as ix
from generator.index.command import index_repository
from generator.index.reader import open_table
from generator.index.store import open_index
from generator.index.tokens import token_text
from sourcebook.config import Config, load_config
from sourcebook.errors import IndexStoreError, ProviderError
from tests.test_index import FakeEmbedder


def _module(n: int) -> str:
    body = "\n\n".join(
        f"def handler_{n}_{k}(request, retries={k}):\n"
        f"    \"\"\"Handle request {k} of module {n}: parse the payload and retry.\"\"\"\n"
        f"    payload = request.get('payload_{k}')\n"
        f"    return [payload] * retries\n" for k in range(6))
    return f'"""Module {n}: request handlers for the zone{n % 3} service."""\n\n{body}\n'


FILES = {
    **{f"svc/mod_{n}.py": _module(n) for n in range(14)},
    **{f"docs/guide_{n}.md": f"# Guide {n}\n\nHow to configure zone{n} retries.\n\n## Payloads\n\n"
                               f"Payload {n} is parsed by handler_{n}_0.\n" for n in range(5)},
    "README.md": "# Service\n\nRequest handlers with retries.\n",
}
QUERIES = ("retries payload", "zone1 service", "handler_3_2", "configure guide", "quokka added")


def _published(config: Config, embedder: Any = "config", *, ordered: bool = True) -> str:
    """Everything the index publishes, as a reader opens it: every table's rows (vectors included; in
    storage order, or sorted by key when not `ordered`: an incremental run appends what it rewrote), the
    meta row but for what each run draws afresh, every full-text hit with its score, and the nearest rows."""
    store = open_index(config, embedder=embedder)
    out: dict[str, Any] = {"meta": {k: v for k, v in store.meta.items()
                                    if k not in ("updated_at", "index_id", "owner", "versions", "fts_drift",
                                                 "sums")}}
    for name in ix.DATA_TABLES:
        key = index_rows.KEY_COLUMN[name]
        rows = store.rows(name, store.tables[name].schema.names)
        for row in rows:
            if row.get("vector") is not None:
                row["vector"] = np.asarray(row["vector"], dtype=np.float32).tobytes().hex()
        out[name] = rows if ordered else sorted(rows, key=lambda row: row[key])
        out[f"fts:{name}"] = {q: sorted((r[key], round(r["_score"], 4))
                                        for r in store.fts(name, token_text(q), [key], limit=1000))
                              for q in QUERIES}
        if store.vector_dim(name) and store.embedder is not None:
            out[f"near:{name}"] = {q: sorted((r[key], round(r["_distance"], 4)) for r in store.nearest(
                name, store.embedder.embed([q])[0].tolist(), [key], limit=1000)) for q in QUERIES}
    version = store.meta["versions"].get(ix.CACHE_TABLE)
    if version is not None:
        cache = open_table(store.uri, ix.CACHE_TABLE, int(version), {})
        out["cache"] = cache.scan(["id", "key", "value", "sha"]).to_pylist()
    return json.dumps(out, sort_keys=True)


def _versions(config: Config) -> dict[str, int]:
    return {name: len(list((Path(config.index_location) / f"{name}.lance" / "_versions").iterdir()))
            for name in (*ix.DATA_TABLES, ix.CACHE_TABLE)}


def test_rows_streamed_in_many_small_batches_store_and_find_what_one_batch_does(
        make_repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(FILES)
    whole = load_config(repo, overrides={"out_dir": str(tmp_path / "whole")})
    report = build(whole, site=False)
    assert report.index is not None
    assert min(report.index.chunks_written, report.index.pages_written) >= 20
    expected = _published(whole)
    assert report.index.cache_written >= 20
    # every table in batches of 3 rows, the embedder asked for 4 texts at a time: many batches each
    monkeypatch.setattr(table_writes, "WRITE_BATCH_ROWS", 3)
    monkeypatch.setattr(table_writes, "EMBED_BATCH", 4)
    batches: list[int] = []
    record_batches = table_writes._record_batches

    def counted(rows: Any, schema: Any) -> Any:
        for batch in record_batches(rows, schema):
            batches.append(batch.num_rows)
            yield batch

    monkeypatch.setattr(table_writes, "_record_batches", counted)
    small = load_config(repo, overrides={"out_dir": str(tmp_path / "small")})
    streamed = build(small, site=False).index
    assert streamed is not None
    assert max(batches) == 3
    assert len(batches) > 40
    assert sum(batches) == (streamed.chunks_written + streamed.symbols_written + streamed.pages_written
                            + streamed.files_indexed + streamed.cache_written)
    assert (streamed.embedded, streamed.embed_reused) == (report.index.embedded, report.index.embed_reused)
    assert _published(small) == expected
    assert _versions(small) == _versions(whole)  # one commit per table write, however many batches


class FailingEmbedder(FakeEmbedder):
    """FakeEmbedder that raises `error` on its call number `fail_on` (1-based)."""

    def __init__(self, fail_on: int, error: BaseException) -> None:
        super().__init__()
        self.fail_on, self.error, self.batches = fail_on, error, 0

    def embed(self, texts: list[str]) -> np.ndarray:
        self.batches += 1
        if self.batches == self.fail_on:
            raise self.error
        return super().embed(texts)


def _edit(repo: Path) -> None:
    for n in range(0, 14, 2):
        path = repo / f"svc/mod_{n}.py"
        path.write_text(path.read_text() + f"\n\ndef added_{n}():\n    return 'quokka {n}'\n")
    (repo / "svc/mod_13.py").unlink()


@pytest.mark.parametrize("error", [ProviderError("embed", "the embedding server went away"),
                                   KeyboardInterrupt()], ids=["provider-error", "ctrl-c"])
def test_a_failure_mid_stream_raises_itself_and_leaves_the_previous_index(
        make_repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    repo = make_repo(FILES)
    config = load_config(repo, overrides={"out_dir": str(tmp_path / "out")})
    index_repository(config, embedder=FakeEmbedder())
    before = _published(config, FakeEmbedder(), ordered=False)
    _edit(repo)
    monkeypatch.setattr(table_writes, "WRITE_BATCH_ROWS", 2)
    monkeypatch.setattr(table_writes, "EMBED_BATCH", 2)
    failing = FailingEmbedder(fail_on=4, error=error)  # after batches of the chunk stream were written
    with pytest.raises(type(error)) as raised:
        index_repository(config, embedder=failing)
    assert raised.value is error  # the embedder's own exception, not LanceDB's wrapping of it
    assert failing.batches == 4
    # readers still see the last complete run
    assert _published(config, FakeEmbedder(), ordered=False) == before
    report = index_repository(config, embedder=FakeEmbedder())  # rolls back, then redoes the change
    assert (report.files_indexed, report.files_deleted) == (7, 1)
    clean = load_config(repo, overrides={"out_dir": str(tmp_path / "clean")})
    index_repository(clean, embedder=FakeEmbedder())
    fake = FakeEmbedder()
    assert _published(config, fake, ordered=False) == _published(clean, fake, ordered=False)


def test_a_failure_after_some_tables_were_written_leaves_the_previous_index(
        make_repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(FILES)
    config = load_config(repo, overrides={"out_dir": str(tmp_path / "out")})
    index_repository(config, embedder=None)
    before = _published(config, None, ordered=False)
    _edit(repo)
    monkeypatch.setattr(table_writes, "WRITE_BATCH_ROWS", 2)
    file_row = index_rows.file_row
    made: list[str] = []

    def failing_file_row(facts: Any, text: str) -> dict[str, Any]:
        made.append(facts.file.path)
        if len(made) == 5:  # chunks and symbols are committed, files half streamed
            raise OSError("disk full")
        return file_row(facts, text)

    with monkeypatch.context() as patched:
        patched.setattr(row_workers, "file_row", failing_file_row)
        with pytest.raises(IndexStoreError, match="disk full"):
            index_repository(config, embedder=None)
    assert _published(config, None, ordered=False) == before
    index_repository(config, embedder=None)
    clean = load_config(repo, overrides={"out_dir": str(tmp_path / "clean")})
    index_repository(clean, embedder=None)
    assert _published(config, None, ordered=False) == _published(clean, None, ordered=False)
