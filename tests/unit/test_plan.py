"""Page ids, collisions, the module tree and content-addressed staleness."""

from __future__ import annotations

import hashlib
import hmac
import json
import logging
from dataclasses import asdict, replace
from pathlib import Path

import pytest

from generator.analyze.plan import (
    OVERVIEW_ID,
    STATE_VERSION,
    PageState,
    file_page_ids,
    load_state,
    module_dirs,
    module_page_ids,
    orphan_pages,
    page_key,
    plan_pages,
    save_state,
    stale_pages,
    state_path,
)
from sourcebook.local_key import local_key


def test_file_ids_are_docs_relative_markdown_paths() -> None:
    ids = file_page_ids(["src/flask/app.py", "setup.py"])
    assert ids == {"src/flask/app.py": "files/src/flask/app.py.md", "setup.py": "files/setup.py.md"}


def test_unsafe_characters_and_dot_dirs_are_replaced() -> None:
    ids = file_page_ids(["we ird#[x]/naïve file.py", ".github/ci.yml"])
    assert ids["we ird#[x]/naïve file.py"] == "files/we_ird_x_/naïve_file.py.md"
    assert ids[".github/ci.yml"] == "files/_github/ci.yml.md"  # MkDocs would drop a dot-directory


def test_names_mkdocs_treats_as_section_indexes_are_suffixed() -> None:
    ids = file_page_ids(["README", "docs/index"])
    assert ids["README"] == "files/README_.md"
    assert ids["docs/index"] == "files/docs/index_.md"


def test_case_insensitive_collisions_get_distinct_ids() -> None:
    paths = ["README.md", "readme.md", "a b.py", "a_b.py", "a#b.py", "Src/x.py", "src/X.py"]
    ids = file_page_ids(paths)
    assert len({i.casefold() for i in ids.values()}) == len(paths)
    assert ids["README.md"] == "files/README.md.md"  # the first in sort order keeps the plain name
    assert ids["readme.md"].startswith("files/readme.md-")
    # stable: the same input gives the same ids in any order
    assert file_page_ids(reversed(paths)) == ids


def test_module_tree_and_ids() -> None:
    assert module_dirs(["a/b/c.py", "d.py"]) == ["", "a", "a/b"]
    assert module_page_ids(["", "a", "A"]) == {
        "": "modules/index.md", "A": "modules/A/index.md", "a": f"modules/a-{_hash('a')}/index.md"}
    plan = plan_pages(["a/b/c.py", "a/x.py", "d.py"])
    assert plan.children[""] == (["d.py"], ["a"])
    assert plan.children["a"] == (["a/x.py"], ["a/b"])
    assert plan.bottom_up_modules() == ["a/b", "a", ""]
    assert OVERVIEW_ID in plan.all_ids
    assert len(plan.all_ids) == 3 + 3 + 1


def _hash(text: str) -> str:
    import hashlib

    return hashlib.sha1(text.encode()).hexdigest()[:8]


def test_state_round_trip_and_staleness(tmp_path: Path) -> None:
    docs = tmp_path / "docs"
    (docs / "files").mkdir(parents=True)
    (docs / "files" / "a.py.md").write_text("# a")
    (docs / "files" / "gone.py.md").write_text("# gone")
    state = {"files/a.py.md": PageState("k1", "file", "a.py", "a.py", "A."),
             "files/gone.py.md": PageState("k9", "file", "gone.py", "gone.py", "")}
    save_state(tmp_path, state)
    loaded = load_state(tmp_path)
    assert loaded == state
    assert stale_pages({"files/a.py.md": "k1"}, loaded, docs) == []
    assert stale_pages({"files/a.py.md": "k2"}, loaded, docs) == ["files/a.py.md"]
    assert stale_pages({"files/b.py.md": "k1"}, loaded, docs) == ["files/b.py.md"]  # never written
    (docs / "files" / "a.py.md").unlink()
    assert stale_pages({"files/a.py.md": "k1"}, loaded, docs) == ["files/a.py.md"]  # file removed by hand
    assert orphan_pages({"files/a.py.md"}, loaded, docs) == ["files/gone.py.md"]


def test_state_file_is_the_plain_json_dump_and_a_memo_only_skips_unchanged_rows(tmp_path: Path) -> None:
    def signed(page_id: str, row: PageState) -> dict[str, object]:  # the row, then this user's mark over it
        fields = asdict(row)
        text = json.dumps([page_id, fields], ensure_ascii=False, separators=(",", ":")).encode()
        key = local_key()
        assert key is not None
        mark = hmac.new(key, b"sourcebook-page-state\0" + text, hashlib.sha256)
        return {**fields, "mark": mark.hexdigest()}

    def plain(state: dict[str, PageState]) -> str:  # what the state file always was, plus each row's mark
        rows = {k: signed(k, v) for k, v in sorted(state.items())}
        return json.dumps({"version": STATE_VERSION, "pages": rows}, ensure_ascii=False, indent=0)

    state = {"files/ü \"q\".py.md": PageState("k1", "file", "ü.py", "ü.py", "Ü, \u2028 and \"x\".",
                                                symbols=["a", "b"], docstrings={"a": "Doc.\nMore."},
                                                draft={"summary": "S", "nested": {"x": [1, {"y": None}]}}),
             "modules/m.md": PageState("k2", "module", "m", "m", "", draft={}, retry=True, retry_wait=3)}
    for pages in ({}, state):
        save_state(tmp_path, pages)
        assert state_path(tmp_path).read_text(encoding="utf-8") == plain(pages)
    memo: dict[str, tuple[PageState, str]] = {}
    save_state(tmp_path, state, memo)
    assert set(memo) == set(state)
    state["modules/m.md"] = replace(state["modules/m.md"], summary="new")  # a new row object: encoded again
    state["files/new.py.md"] = PageState("k3", "file", "new.py", "new.py", "N.")
    save_state(tmp_path, state, memo)
    assert state_path(tmp_path).read_text(encoding="utf-8") == plain(state)
    assert load_state(tmp_path) == state
    del state["files/new.py.md"]
    save_state(tmp_path, state, memo)
    assert set(memo) == set(state)
    assert load_state(tmp_path) == state


def test_rows_without_this_users_mark_are_dropped_with_one_warning(
        tmp_path: Path, caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch) -> None:
    state = {f"files/{n}.py.md": PageState("k", "file", n, n, f"{n} summary.", written_by="llm",
                                             draft={"summary": f"{n} summary."}) for n in "abcde"}
    save_state(tmp_path, state)
    assert load_state(tmp_path) == state
    data = json.loads(state_path(tmp_path).read_text(encoding="utf-8"))
    rows = data["pages"]
    rows["files/a.py.md"]["summary"] = "Attacker text."  # an edited summary
    rows["files/b.py.md"]["draft"]["summary"] = "Attacker text."  # an edited draft
    rows["files/c.py.md"] = {**rows["files/d.py.md"]}  # a signed row moved to another page
    del rows["files/e.py.md"]["mark"]  # an unsigned row
    rows["files/x.py.md"] = {**rows["files/d.py.md"], "mark": "0" * 64}  # a forged mark
    state_path(tmp_path).write_text(json.dumps(data), encoding="utf-8")  # another layout: marks still hold
    with caplog.at_level(logging.WARNING):
        assert load_state(tmp_path) == {"files/d.py.md": state["files/d.py.md"]}
    warnings = [r.getMessage() for r in caplog.records if r.levelno >= logging.WARNING]
    assert len(warnings) == 1, warnings
    assert "ignored 5 page state row(s)" in warnings[0]

    # another user (another local key) trusts none of this user's rows; without a key nothing is trusted
    save_state(tmp_path, state)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "another-user"))
    assert load_state(tmp_path) == {}
    monkeypatch.delenv("XDG_STATE_HOME")
    monkeypatch.delenv("HOME")
    caplog.clear()
    with caplog.at_level(logging.WARNING):
        assert load_state(tmp_path) == {}
    assert "no local key" in caplog.text
    save_state(tmp_path, state)  # stored without marks
    assert "mark" not in state_path(tmp_path).read_text(encoding="utf-8")


def test_retry_marks_a_page_stale_whatever_its_key(tmp_path: Path) -> None:
    (tmp_path / "p.md").write_text("x")
    state = {"p.md": PageState("k", "file", "p", "p", "", retry=True)}
    assert stale_pages({"p.md": "k"}, state, tmp_path) == ["p.md"]


def test_page_key_depends_on_every_part() -> None:
    base = page_key("fp", "extractive/1", "r1")
    assert base == page_key("fp", "extractive/1", "r1")
    assert len({base, page_key("fp2", "extractive/1", "r1"), page_key("fp", "llm/m/v1", "r1"),
                page_key("fp", "extractive/1", "r2")}) == 4


def test_damaged_state_means_rewrite_everything(tmp_path: Path) -> None:
    (tmp_path / "state").mkdir()
    (tmp_path / "state" / "pages.json").write_text("{not json")
    assert load_state(tmp_path) == {}


def test_very_long_names_are_shortened_uniquely() -> None:
    a, b = "x" * 250 + "a.py", "x" * 250 + "b.py"
    ids = file_page_ids([a, b])
    assert ids[a] != ids[b]
    assert all(len(i.split("/")[-1].encode()) <= 255 - len(".html") for i in ids.values())


def test_page_sink_saves_a_row_changed_in_place_after_an_earlier_save(tmp_path: Path) -> None:
    """A fallback page waiting out its backoff counts down in place: the memo of its encoded row goes."""
    from generator.build_report import BuildReport
    from generator.pages.page_sink import PageSink
    from sourcebook.config import load_config

    config = load_config(tmp_path, overrides={"out_dir": str(tmp_path / "out")}, env={})
    (config.docs_dir / "files").mkdir(parents=True)
    (config.docs_dir / "files" / "a.py.md").write_text("# a")
    state = {"files/a.py.md": PageState("k", "file", "a.py", "a.py", "A.", retry=True, retry_wait=3)}
    sink = PageSink(config, state, BuildReport(root=tmp_path, out_dir=config.out_dir, writer_id="w"))
    sink.save()
    assert sink.fresh("files/a.py.md", "k")  # waiting: not rewritten, one run less to wait
    sink.save()
    assert load_state(config.out_dir)["files/a.py.md"].retry_wait == 2


def test_files_under_a_directory_are_those_with_its_path_as_prefix() -> None:
    paths = ["a/b/x.py", "a/b/c/y.py", "a/b-c/z.py", "a/b.c/w.py", "a/b0/v.py", "a/bé/u.py", "a/b.py",
             "ab/t.py", "a/b/\U0001f600.py", "top.py", "a/b/c/d/e/deep.py"]
    plan = plan_pages(paths)
    for directory in plan.modules:
        expected = sorted(p for p in paths if not directory or p.startswith(directory + "/"))
        assert plan.files_under(directory) == expected, directory
    assert plan.files_under("a/b") == ["a/b/c/d/e/deep.py", "a/b/c/y.py", "a/b/x.py", "a/b/\U0001f600.py"]
    assert plan.files_under("nowhere") == []
