"""The index's rows are streamed to LanceDB batch by batch (generator/index/store.py): the batch size changes
nothing that is stored or found, and a run that fails half way through a stream leaves the previous
complete index in place, which the next run rolls back to and completes."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest

from generator.build import build
from generator.index import row_workers, table_writes
from generator.index import rows as index_rows
from generator.index import store as ix
from generator.index.command import index_repository
from sourcebook.config import Config, load_config
from sourcebook.errors import IndexStoreError, ProviderError
from tests.support.index_repos import STREAM_REPO as FILES
from tests.support.index_repos import FakeEmbedder, edit_stream_repo, published


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
    expected = published(whole)
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
    assert published(small) == expected
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



@pytest.mark.parametrize("error", [ProviderError("embed", "the embedding server went away"),
                                   KeyboardInterrupt()], ids=["provider-error", "ctrl-c"])
def test_a_failure_mid_stream_raises_itself_and_leaves_the_previous_index(
        make_repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: BaseException) -> None:
    repo = make_repo(FILES)
    config = load_config(repo, overrides={"out_dir": str(tmp_path / "out")})
    index_repository(config, embedder=FakeEmbedder())
    before = published(config, FakeEmbedder(), ordered=False)
    edit_stream_repo(repo)
    monkeypatch.setattr(table_writes, "WRITE_BATCH_ROWS", 2)
    monkeypatch.setattr(table_writes, "EMBED_BATCH", 2)
    failing = FailingEmbedder(fail_on=4, error=error)  # after batches of the chunk stream were written
    with pytest.raises(type(error)) as raised:
        index_repository(config, embedder=failing)
    assert raised.value is error  # the embedder's own exception, not LanceDB's wrapping of it
    assert failing.batches == 4
    # readers still see the last complete run
    assert published(config, FakeEmbedder(), ordered=False) == before
    report = index_repository(config, embedder=FakeEmbedder())  # rolls back, then redoes the change
    assert (report.files_indexed, report.files_deleted) == (7, 1)
    clean = load_config(repo, overrides={"out_dir": str(tmp_path / "clean")})
    index_repository(clean, embedder=FakeEmbedder())
    fake = FakeEmbedder()
    assert published(config, fake, ordered=False) == published(clean, fake, ordered=False)


def test_a_failure_after_some_tables_were_written_leaves_the_previous_index(
        make_repo, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    repo = make_repo(FILES)
    config = load_config(repo, overrides={"out_dir": str(tmp_path / "out")})
    index_repository(config, embedder=None)
    before = published(config, None, ordered=False)
    edit_stream_repo(repo)
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
    assert published(config, None, ordered=False) == before
    index_repository(config, embedder=None)
    clean = load_config(repo, overrides={"out_dir": str(tmp_path / "clean")})
    index_repository(clean, embedder=None)
    assert published(config, None, ordered=False) == published(clean, None, ordered=False)
