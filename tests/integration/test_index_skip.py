"""A build pays the index step for what changed (generator/index/store.py, generator/pages/index_inputs.py): a
build given
the inputs the last publish recorded leaves the index untouched, a change after such a run is still picked
up (a source file, a page's Markdown), and what earlier runs derived per page (the memo) is used only when it
carries this user's mark. Incremental stays equal to clean throughout."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from generator.analyze.plan import load_state
from generator.build import build
from generator.index import store as ix
from generator.index.build_cache import PAGE_PREFIX, SharedCache
from generator.index.store import open_index
from generator.index.tokens import token_text
from generator.pages.index_inputs import MEMO_NAME, PageInputs
from sourcebook.config import Config, load_config
from tests.support.index_repos import STREAM_REPO as FILES
from tests.support.index_repos import edit_stream_repo, published


def _normalised(config: Config) -> dict[str, Any]:
    """What the index publishes, rows sorted by key and the cache's rows too (an incremental run appends what
    it rewrote, a clean one writes in page order)."""
    out = json.loads(published(config, ordered=False))
    out["cache"] = sorted(out.get("cache", []), key=lambda row: row["id"])
    return out


def _meta_versions(config: Config) -> dict[str, int]:
    return dict(open_index(config, embedder=None).meta["versions"])


def _table_versions(config: Config) -> dict[str, int]:
    return {name: len(list((Path(config.index_location) / f"{name}.lance" / "_versions").iterdir()))
            for name in (*ix.DATA_TABLES, ix.CACHE_TABLE, ix.META_TABLE)}


def test_a_build_that_changed_nothing_leaves_the_index_untouched_and_answering(make_repo, tmp_path):
    repo = make_repo(FILES)
    config = load_config(repo, overrides={"out_dir": str(tmp_path / "out")})
    first = build(config, site=False).index
    assert first is not None
    assert not first.unchanged
    published, versions, files = _normalised(config), _meta_versions(config), _table_versions(config)
    again = build(config, site=False).index
    assert again is not None
    assert again.unchanged
    assert (again.files_unchanged, again.files_indexed, again.pages_written) == (len(FILES), 0, 0)
    assert _meta_versions(config) == versions  # not even a new meta row
    assert _table_versions(config) == files
    assert _normalised(config) == published
    store = open_index(config, embedder=None)
    assert "svc/mod_3.py" in [r["path"] for r in store.fts("chunks", token_text("handler_3_2"), ["path"],
                                                           limit=5)]


def test_a_change_after_a_skipped_run_is_indexed_as_a_clean_build_would(make_repo, tmp_path):
    repo = make_repo(FILES)
    config = load_config(repo, overrides={"out_dir": str(tmp_path / "out")})
    build(config, site=False)
    assert build(config, site=False).index.unchanged
    edit_stream_repo(repo)  # seven files changed, one deleted
    report = build(config, site=False).index
    assert report is not None
    assert not report.unchanged
    assert (report.files_indexed, report.files_deleted) == (7, 1)
    assert build(config, site=False).index.unchanged  # and the run after it is skipped again
    clean = load_config(repo, overrides={"out_dir": str(tmp_path / "clean")})
    build(clean, site=False)
    assert _normalised(config) == _normalised(clean)
    store = open_index(config, embedder=None)
    assert "svc/mod_2.py" in [r["path"] for r in store.fts("chunks", "quokka", ["path"], limit=20)]


def _page_row(config: Config, page_id: str) -> dict[str, Any]:
    rows = open_index(config, embedder=None).rows("pages", ["id", "markdown", "hash"],
                                                  f"id = '{page_id}'")
    assert len(rows) == 1
    return rows[0]


def test_a_page_edited_by_hand_after_a_skipped_run_reaches_the_index(make_repo, tmp_path):
    repo = make_repo(FILES)
    config = load_config(repo, overrides={"out_dir": str(tmp_path / "out")})
    build(config, site=False)
    assert build(config, site=False).index.unchanged
    page_id = "files/svc/mod_1.py.md"
    path = config.docs_dir / page_id
    path.write_text(path.read_text(encoding="utf-8") + "\nA wombat lives here.\n", encoding="utf-8")
    report = build(config, site=False).index
    assert report is not None
    assert not report.unchanged
    assert report.pages_written == 1
    assert report.files_indexed == 0
    assert "wombat" in _page_row(config, page_id)["markdown"]
    hits = open_index(config, embedder=None).fts("pages", "wombat", ["id"], limit=5)
    assert [h["id"] for h in hits] == [page_id]
    # the cache publishes the page as it is now, too
    cache = {r["id"]: r for r in _normalised(config)["cache"]}
    assert "wombat" in json.loads(cache[PAGE_PREFIX + page_id]["value"])["markdown"]


def test_a_memo_without_this_users_mark_is_not_believed(make_repo, tmp_path):
    repo = make_repo(FILES)
    config = load_config(repo, overrides={"out_dir": str(tmp_path / "out")})
    build(config, site=False)
    page_id = "files/svc/mod_1.py.md"
    stored_hash = _page_row(config, page_id)["hash"]
    path = config.docs_dir / page_id
    path.write_text(path.read_text(encoding="utf-8") + "\nA wombat lives here.\n", encoding="utf-8")
    # a memo planted with the repository: it claims the edited page is still the row the index holds
    memo_path = config.out_dir / "state" / MEMO_NAME
    memo = json.loads(memo_path.read_text(encoding="utf-8"))
    body = json.loads(memo["body"])
    digest = PageInputs(config.docs_dir, load_state(config.out_dir), [page_id]).digests[page_id]
    body["pages"][page_id] = {"digest": digest, "hash": stored_hash}
    memo_path.write_text(json.dumps({"body": json.dumps(body), "mark": memo["mark"]}), encoding="utf-8")
    report = build(config, site=False).index
    assert report is not None
    assert report.pages_written == 1
    assert "wombat" in _page_row(config, page_id)["markdown"]


def test_the_shared_cache_is_read_row_by_row_for_a_few_pages():
    def row(page_id: str) -> dict[str, Any]:
        return {"id": PAGE_PREFIX + page_id, "key": "k", "value": "{}", "sha": "x"}  # fails its checks

    asked: list[list[str]] = []
    loads: list[int] = []

    def load_all() -> list[dict[str, Any]]:
        loads.append(1)
        return [row(f"files/p{n}.md") for n in range(200)]

    def load_some(ids: list[str]) -> list[dict[str, Any]]:
        asked.append(ids)
        return [row(i[len(PAGE_PREFIX):]) for i in ids]

    cache = SharedCache(load_all, load_some)
    assert cache.page("files/p1.md") is None
    assert cache.page("files/p1.md") is None
    assert asked == [[PAGE_PREFIX + "files/p1.md"]]
    assert not loads
    for n in range(SharedCache.FEW + 5):
        cache.page(f"files/p{n}.md")
    assert len(asked) == SharedCache.FEW
    assert loads == [1]
    assert cache.ignored == 200
