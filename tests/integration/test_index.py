"""The LanceDB index, for real, in temp dirs: incremental runs, pruning, versions, incompatibility."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.index import store as ix
from generator.index import writer as index_writer
from generator.index.command import index_repository
from generator.index.store import open_index
from generator.index.writer import update_index
from sourcebook.config import load_config
from sourcebook.errors import IndexStoreError
from sourcebook.sql import in_list
from tests.support.index_repos import SMALL_REPO as FILES
from tests.support.index_repos import FakeEmbedder


@pytest.fixture
def repo(make_repo):
    return make_repo(FILES)


def _versions(config, name: str) -> int:
    return len(list((Path(config.index_location) / f"{name}.lance" / "_versions").iterdir()))


def test_build_then_open(repo):
    config = load_config(repo)
    report = index_repository(config, embedder=None)
    assert report.files_indexed == 4
    assert report.rebuilt == "new index"
    store = open_index(config)
    assert store.table("files").count_rows() == 4
    assert store.table("chunks").count_rows() >= 4
    assert store.table("symbols").count_rows(in_list("path", ["pkg/config.py"])) == 2
    assert store.embedder is None
    assert "without vectors" in store.embedder_error
    paths = {r["path"] for r in store.table("chunks").to_arrow().to_pylist()}
    assert {"docs/usage.md", "tests/test_app.py"} <= paths


def test_incremental_unchanged_changed_deleted_and_versions_cleaned(repo):
    config = load_config(repo, overrides={"index_keep_s": 0})  # superseded versions go at once
    emb = FakeEmbedder()
    first = index_repository(config, embedder=emb)
    assert first.embedded > 0
    assert first.embedder == "fake-32"
    emb.calls.clear()
    again = index_repository(config, embedder=emb)
    assert again.files_indexed == 0
    assert again.files_unchanged == 4
    assert emb.calls == []

    (repo / "pkg/app.py").write_text(FILES["pkg/app.py"] + "\n\ndef helper():\n    return 'changed'\n")
    (repo / "docs/usage.md").unlink()
    changed = index_repository(config, embedder=emb)
    assert changed.files_indexed == 1
    assert changed.files_deleted == 1
    assert emb.calls
    assert all("pkg/app.py" in text for text in emb.calls)
    store = open_index(config, embedder=emb)
    assert store.table("files").count_rows() == 3
    assert store.table("chunks").count_rows(in_list("path", ["docs/usage.md"])) == 0
    texts = " ".join(r["text"] for r in store.table("chunks").to_arrow().to_pylist())
    assert "changed" in texts
    for name in ix.DATA_TABLES:
        assert _versions(config, name) <= 2, name  # old versions are cleaned up


def test_no_prune_keeps_deleted_files(repo):
    config = load_config(repo)
    index_repository(config, embedder=None)
    (repo / "docs/usage.md").unlink()
    report = index_repository(config, prune=False, embedder=None)
    assert report.files_deleted == 0
    assert open_index(config).table("files").count_rows() == 4


def test_missing_and_empty_index_are_clear_errors(repo):
    config = load_config(repo)
    with pytest.raises(IndexStoreError, match="no index"):
        open_index(config)
    Path(config.index_location).mkdir(parents=True)
    with pytest.raises(IndexStoreError, match="empty or incomplete"):
        open_index(config)


def test_other_schema_version_is_detected_and_rebuilt(repo):
    config = load_config(repo)
    index_repository(config, embedder=None)
    store = open_index(config)
    state = dict(store.meta, schema_version=ix.SCHEMA_VERSION + 1)
    index_writer._write_meta(store.db, state)
    with pytest.raises(IndexStoreError, match="schema version"):
        open_index(config)
    report = index_repository(config, embedder=None)
    assert report.rebuilt.startswith("schema version")
    assert report.files_indexed == 4
    assert open_index(config).meta["schema_version"] == ix.SCHEMA_VERSION


def test_other_embedder_dimension_is_detected_and_rebuilt(repo):
    config = load_config(repo)
    index_repository(config, embedder=FakeEmbedder(dim=32))
    with pytest.raises(IndexStoreError, match="dimension 32"):
        open_index(config, embedder=FakeEmbedder(dim=8))
    store = open_index(config, embedder=FakeEmbedder(dim=32))
    assert store.embedder is not None
    assert store.dim == 32
    report = index_repository(config, embedder=FakeEmbedder(dim=8))
    assert "fake-32/32 -> fake-8/8" in report.rebuilt
    assert open_index(config, embedder=FakeEmbedder(dim=8)).dim == 8


def test_interrupted_run_leaves_previous_state_usable(repo, monkeypatch):
    from answer.retrieval.tiers import search_codebase

    config = load_config(repo)
    index_repository(config, embedder=None)
    (repo / "pkg/app.py").write_text("def brand_new_function():\n    return 'zebra'\n")

    def crash(*args, **kwargs):
        raise KeyboardInterrupt

    # a context, not undo(): undo would also restore conftest's XDG_STATE_HOME (another user's key)
    with monkeypatch.context() as patched:
        patched.setattr(index_writer, "_write_meta", crash)
        with pytest.raises(KeyboardInterrupt):
            index_repository(config, embedder=None)
    store = open_index(config)  # the previous complete state
    result = search_codebase(store, "create_app", type="lexical")
    assert not result.degraded
    assert result.files
    assert not search_codebase(store, "zebra brand_new_function", type="lexical").files
    report = index_repository(config, embedder=None)  # rolls back, then redoes the change
    assert report.files_indexed == 1
    store = open_index(config)
    assert search_codebase(store, "zebra", type="lexical").files[0].path == "pkg/app.py"
    assert store.table("chunks").count_rows(in_list("path", ["pkg/app.py"])) == 1


def test_pages_indexed_and_pruned_with_their_file(repo):
    from generator.analyze.facts import PageRecord

    config = load_config(repo)
    from generator.analyze.parse import extract
    from generator.analyze.scan import decode, read_source, scan

    files = scan(config).files
    facts = {f.path: extract(f, read_source(repo, f.path)) for f in files}
    texts = {f.path: decode(read_source(repo, f.path)) for f in files}
    pages = [PageRecord(id="files/pkg/config.py.md", kind="file", title="pkg/config.py",
                        target_path="pkg/config.py", summary="Loads settings from files.",
                        markdown="# pkg/config.py\n\nLoads settings.", symbols=("Config",))]
    module = PageRecord(id="modules/pkg.md", kind="module", title="pkg", target_path="pkg",
                        summary="Settings package.", markdown="# pkg\n\nLoads settings.")
    report = update_index(config, files, facts, [*pages, module], None, texts=texts)
    assert report.pages_written == 2
    store = open_index(config)
    assert store.table("pages").count_rows() == 2
    from answer.retrieval.tiers import rank_files

    ranked = [f.path for f in rank_files(store, "loads settings")]
    assert ranked[0] == "pkg/config.py"
    assert "pkg" not in ranked  # a module page documents a directory: never a file hit
    longer = PageRecord(id=pages[0].id, kind="file", title=pages[0].title, target_path="pkg/config.py",
                        summary=pages[0].summary, markdown=pages[0].markdown + "x" * 5000 + " zanzibar",
                        symbols=pages[0].symbols)
    # only the changed page's row is tokenised and rewritten; the unchanged module page is left alone
    assert update_index(config, files, facts, [longer, module], None, texts=texts).pages_written == 1
    assert [f.path for f in rank_files(open_index(config), "zanzibar")] == ["pkg/config.py"]
    pages_tbl = open_index(config).table("pages")
    assert pages_tbl.count_rows() == 2
    assert sorted(r["id"] for r in pages_tbl.search().select(["id"]).limit(None).to_arrow().to_pylist()) == [
        "files/pkg/config.py.md", "modules/pkg.md"]
    # a page that is no longer built loses its row; nothing else is rewritten
    assert update_index(config, files, facts, [longer], None, texts=texts).pages_written == 0
    assert open_index(config).table("pages").count_rows() == 1
    update_index(config, files, facts, [longer, module], None, texts=texts)
    kept = [f for f in files if f.path != "pkg/config.py"]
    update_index(config, kept, facts, [], None, texts=texts)
    assert open_index(config).table("pages").count_rows() == 1  # the module page stays


def test_files_without_facts_or_texts_are_read_and_parsed_here(repo):
    from generator.analyze.scan import scan

    config = load_config(repo)
    files = scan(config).files
    report = update_index(config, files, {}, None, None)
    assert report.files_indexed == 4
    assert report.symbols_written >= 3  # parsed here: Config, Config.from_file, create_app, test_create_app
    store = open_index(config)
    assert store.table("symbols").count_rows(in_list("qualname", ["Config.from_file"])) == 1


def test_damaged_index_is_a_clear_error(repo):
    import shutil

    config = load_config(repo)
    index_repository(config, embedder=None)
    shutil.rmtree(Path(config.index_location) / "files.lance" / "_versions")
    with pytest.raises(IndexStoreError, match="damaged"):
        open_index(config)
    report = index_repository(config, embedder=None)
    assert report.rebuilt.startswith("damaged index")
    assert open_index(config).table("files").count_rows() == 4


def _plant_duplicates(config) -> None:
    """What two builds racing on one index used to commit: every row twice, in versions the meta row names."""
    db = ix.connect(config.index_location)
    meta = ix.read_meta(db)
    for name in ix.DATA_TABLES:
        tbl = db.open_table(name)
        tbl.add(tbl.to_arrow())
        meta["versions"][name] = tbl.version
    index_writer._write_meta(db, meta)


def test_rows_doubled_by_racing_runs_are_healed_by_the_next_run(repo):
    from generator.build import build

    config = load_config(repo, env={})
    build(config, site=False)
    clean = {name: open_index(config, embedder=None).table(name).count_rows() for name in ix.DATA_TABLES}
    assert all(clean.values())
    _plant_duplicates(config)
    doubled = {name: open_index(config, embedder=None).table(name).count_rows() for name in ix.DATA_TABLES}
    assert doubled == {name: 2 * n for name, n in clean.items()}
    build(config, site=False)  # nothing changed in the repository, yet the rows converge
    assert {n: open_index(config, embedder=None).table(n).count_rows() for n in ix.DATA_TABLES} == clean
    _plant_duplicates(config)
    report = index_repository(config)  # `sourcebook index` heals files, symbols and chunks the same way
    assert report.files_indexed == len(FILES)
    healed = {n: open_index(config, embedder=None).table(n).count_rows() for n in ix.DATA_TABLES}
    assert {n: healed[n] for n in ("chunks", "symbols", "files")} == {
        n: clean[n] for n in ("chunks", "symbols", "files")}
    # a later no-change run finds nothing to heal and touches nothing
    assert index_repository(config).files_indexed == 0


def test_only_the_index_module_imports_lancedb() -> None:
    """The storage seam: one module owns LanceDB (its reads, full-text and vector indexes, outage errors)."""
    repo = Path(__file__).resolve().parents[2]
    importing = sorted(
        str(path.relative_to(repo)) for package in ("answer", "generator", "sourcebook")
        for path in (repo / package).rglob("*.py")
        if re.search(r"^\s*(?:import lancedb|from lancedb\b)", path.read_text(encoding="utf-8"), re.M))
    assert importing == ["generator/index/store.py"]


def test_added_rows_fold_into_the_fts_index_and_deleted_rows_or_drift_force_a_rebuild(repo, monkeypatch):
    from answer.retrieval.tiers import search_codebase

    config = load_config(repo)
    # the fixture's tables are tiny: judge them by drift alone
    monkeypatch.setattr(index_writer, "FTS_SMALL_ROWS", 0)
    monkeypatch.setattr(index_writer, "FTS_DRIFT", 1000.0)
    index_repository(config, embedder=None)
    # a new index: every table rebuilt, nothing drifted
    assert set(open_index(config).meta["fts_drift"].values()) == {0}
    rebuilt: list[str] = []
    real = ix.ensure_fts
    monkeypatch.setattr(index_writer, "ensure_fts",
                        lambda tbl, rebuild: (rebuilt.append(str(rebuild)), real(tbl, rebuild)))
    (repo / "pkg/extra.py").write_text("def brand_new_function():\n    return 'zebra'\n")
    index_repository(config, embedder=None)
    assert "True" not in rebuilt  # rows only added: folded in by optimize(), not rebuilt
    store = open_index(config)
    assert store.meta["fts_drift"]["files"] == 2
    assert search_codebase(store, "zebra", type="lexical").files[0].path == "pkg/extra.py"
    # a changed file's old rows are deleted: folding would keep them in the BM25 statistics, so it rebuilds
    rebuilt.clear()
    (repo / "pkg/app.py").write_text("def brand_new_function():\n    return 'zebu'\n")
    index_repository(config, embedder=None)
    assert "True" in rebuilt
    store = open_index(config)
    assert store.meta["fts_drift"]["files"] == 0
    assert search_codebase(store, "zebu", type="lexical").files[0].path == "pkg/app.py"
    # the replaced rows left the full-text index with their file: no chunk of pkg/app.py holds create_app
    assert "pkg/app.py" not in [r["path"] for r in store.fts("chunks", "create_app", ["path"], limit=20)]
    monkeypatch.setattr(index_writer, "FTS_DRIFT", 0.0)  # past the drift limit: even added rows rebuild
    rebuilt.clear()
    (repo / "pkg/more.py").write_text("def another():\n    return 'okapi'\n")
    index_repository(config, embedder=None)
    assert "True" in rebuilt
    assert search_codebase(open_index(config), "okapi", type="lexical").files[0].path == "pkg/more.py"
