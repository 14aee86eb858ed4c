"""The shared build cache (generator/index/build_cache.py): a build on a fresh runner (new checkout, empty
output
folder, the same index URI) makes no LLM call and renders nothing, and no cache entry can change a page."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from generator.analyze.plan import PageState
from generator.build import BuildReport, build
from generator.index.build_cache import (
    LEDGER_PREFIX,
    MAX_LEDGER_RUNS,
    CacheUpdate,
    decode_page,
    ledger_row,
    page_row,
    row_sha,
)
from generator.index.cache_table import read_build_cache
from generator.index.store import CACHE_TABLE
from generator.pages.llm.writer import LLMWriter
from sourcebook.config import Config, load_config
from sourcebook.provider import OpenAIChatModel
from tests.support.fake_llm import FakeLLM, Reply, page_writer_responder, request_text
from tests.support.object_store import MotoS3
from tests.support.repo_files import AWS_KEY, DEMO, SECRET_SETTINGS, write_files

FILES = DEMO
WITH_SECRET = {**FILES, "pkg/settings.py": SECRET_SETTINGS}


def checkout(base: Path, files: dict[str, str | bytes] = FILES) -> Path:
    """A new checkout of the same commit on another runner: same repository name, another parent folder."""
    return write_files(base / "repo", files)


def configure(root: Path, server: FakeLLM, index_uri: str) -> Config:
    env = {"SOURCEBOOK_LLM_BASE_URL": server.base_url, "SOURCEBOOK_LLM_MODEL": "fake"}
    settings = {"retry_base_s": 0.01, "max_retries": 1, "max_reasks": 1, "concurrency": 2}
    return load_config(root, overrides={"llm": settings, "index_uri": index_uri}, env=env)


def run(config: Config, *, check: bool = False) -> BuildReport:
    writer = LLMWriter(OpenAIChatModel(config.llm), repo_name="demo", concurrency=config.llm.concurrency)
    return build(config, writer=writer, site=False, index=True, check=check)


def docs(config: Config) -> dict[str, str]:
    return {p.relative_to(config.docs_dir).as_posix(): p.read_text(encoding="utf-8")
            for p in sorted(config.docs_dir.rglob("*.md"))}


@pytest.fixture
def shared(tmp_path: Path) -> str:
    """The index URI every runner of these tests shares (a path here; s3:// in the object-store tests)."""
    return str(tmp_path / "shared-index")


@pytest.fixture
def runner_a(tmp_path: Path, fake_llm: FakeLLM, shared: str) -> Iterator[tuple[Config, int]]:
    """The first runner's build: every page written by the (scripted) model; (config, LLM calls made)."""
    fake_llm.responder = page_writer_responder
    config = configure(checkout(tmp_path / "runner-a"), fake_llm, shared)
    report = run(config)
    assert report.pages_written
    assert not report.pages_restored
    assert report.index is not None
    assert report.index.cache_written == len(report.pages_written) + 1
    return config, fake_llm.calls


def test_fresh_runner_makes_no_llm_call_and_renders_nothing(tmp_path: Path, fake_llm: FakeLLM, shared: str,
                                                            runner_a: tuple[Config, int]) -> None:
    config_a, calls = runner_a
    assert calls > 0
    config_b = configure(checkout(tmp_path / "runner-b"), fake_llm, shared)
    assert not config_b.out_dir.exists()
    report = run(config_b)
    assert fake_llm.calls == calls  # zero LLM calls
    assert report.pages_written == []  # nothing written or rendered: every page came from the cache
    assert sorted(report.pages_restored) == sorted(docs(config_a))
    assert report.parse_cached == report.files  # facts came from the shared index, nothing re-parsed
    assert docs(config_b) == docs(config_a)  # byte for byte what runner A published
    assert report.index.files_indexed == 0
    assert report.index.cache_written == 0

    # and runner B is now an ordinary incremental build: a change rewrites only what depends on it
    (config_b.root / "other/tool.py").write_text("def main():\n    print('tool 2')\n")
    report = run(config_b)
    assert "files/other/tool.py.md" in report.pages_written
    assert "files/pkg/core.py.md" not in report.pages_written


def test_check_on_a_fresh_runner_reads_the_cache(tmp_path: Path, fake_llm: FakeLLM, shared: str,
                                                 runner_a: tuple[Config, int]) -> None:
    _, calls = runner_a
    root = checkout(tmp_path / "runner-b")
    config = configure(root, fake_llm, shared)
    assert run(config, check=True).stale == []
    (root / "pkg/util.py").write_text("def helper():\n    return 2\n")
    stale = run(config, check=True).stale
    assert "files/pkg/util.py.md" in stale
    assert "files/other/tool.py.md" not in stale
    assert not config.out_dir.exists()
    assert fake_llm.calls == calls


def _publish_rows(uri: str, change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]]) -> None:
    """Rewrite the published cache rows with `change` and publish that as the index's cache: what a writer
    that tore or damaged some entries would leave (the meta row is re-marked, so it is trusted)."""
    import lancedb
    import pyarrow as pa

    from generator.index.rows import table_schema
    from generator.index.store import read_meta
    from generator.index.writer import _write_meta

    db = lancedb.connect(uri)
    meta = read_meta(db)
    assert meta is not None
    tbl = db.open_table(CACHE_TABLE)
    rows = change(tbl.to_arrow().to_pylist())
    tbl.delete("true")
    tbl.add(pa.Table.from_pylist(rows, schema=table_schema(CACHE_TABLE, 0)))
    _write_meta(db, {**meta, "versions": {**meta["versions"], CACHE_TABLE: int(tbl.version)}})


def test_damaged_or_mismatched_entries_never_change_a_page(tmp_path: Path, fake_llm: FakeLLM, shared: str,
                                                           runner_a: tuple[Config, int]) -> None:
    config_a, calls = runner_a

    def damage(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
        out = []
        for row in rows:
            new = row
            if row["id"] == "page:files/pkg/core.py.md":  # torn: the hash no longer matches
                new = {**row, "value": row["value"].replace("Scripted", "Planted")}
            elif row["id"] == "page:files/pkg/util.py.md":  # intact, but Markdown for other inputs
                data = json.loads(row["value"])
                data["markdown"] = "# Planted page\n"
                data["state"]["key"] = "0" * 64
                value = json.dumps(data)
                new = {**row, "key": "0" * 64, "value": value, "sha": row_sha(row["id"], "0" * 64, value)}
            elif row["id"] == "page:files/other/tool.py.md":  # claims a key its state does not hold
                new = {**row, "key": "1" * 64, "sha": row_sha(row["id"], "1" * 64, row["value"])}
            out.append(new)
        escape = "page:../../outside.md"
        state = {"key": "k", "kind": "file", "title": "x", "target_path": "x", "summary": "x"}
        value = json.dumps({"format": 1, "state": state, "markdown": "planted"})
        return [*out, {"id": escape, "key": "k", "value": value, "sha": row_sha(escape, "k", value)}]

    _publish_rows(shared, damage)
    config_b = configure(checkout(tmp_path / "runner-b"), fake_llm, shared)
    report = run(config_b)
    # core.py's and tool.py's entries fail their checks: written again by the model (one call each);
    # util.py's Markdown is not used at a key it was not made for, but its draft is (the draft key
    # matches): re-rendered without the model
    assert fake_llm.calls == calls + 2
    assert sorted(report.pages_written) == ["files/other/tool.py.md", "files/pkg/core.py.md",
                                            "files/pkg/util.py.md"]
    assert report.drafts_reused == ["files/pkg/util.py.md"]
    assert docs(config_b) == docs(config_a)
    assert not (tmp_path / "runner-b" / "outside.md").exists()
    assert not list(tmp_path.rglob("outside.md"))


def test_an_unpublished_cache_write_is_invisible(tmp_path: Path, fake_llm: FakeLLM, shared: str,
                                                 runner_a: tuple[Config, int]) -> None:
    """Rows a writer added without publishing a meta row (it died half way) are never read."""
    import lancedb
    import pyarrow as pa

    _, calls = runner_a
    tbl = lancedb.connect(shared).open_table(CACHE_TABLE)
    rows = [r for r in tbl.to_arrow().to_pylist() if r["id"] == "page:files/pkg/util.py.md"]
    value = rows[0]["value"].replace("Scripted", "Unpublished")
    tbl.delete(f"id = '{rows[0]['id']}'")
    tbl.add(pa.Table.from_pylist([{**rows[0], "value": value, "sha": row_sha(rows[0]["id"], rows[0]["key"],
                                                                                 value)}]))
    config_b = configure(checkout(tmp_path / "runner-b"), fake_llm, shared)
    assert not any("Unpublished" in r["value"] for r in read_build_cache(config_b))
    report = run(config_b)
    assert fake_llm.calls == calls
    assert report.pages_written == []
    assert "Unpublished" not in "".join(docs(config_b).values())


def test_secrets_stay_out_of_the_cache(tmp_path: Path, fake_llm: FakeLLM, shared: str) -> None:
    """A draft holding what the redaction rules match is not cached; Markdown holding one (source code) is
    cached without its Markdown. Another runner then re-asks / re-renders, and gets the same pages."""

    def leaky(body: dict[str, Any]) -> Reply:
        reply = page_writer_responder(body)
        if "File: pkg/util.py" in request_text(body) and isinstance(reply.payload, dict):
            leak = f"It signs requests with the key {AWS_KEY} here."
            return Reply.ok({**reply.payload, "how_it_works": leak})
        return reply

    fake_llm.responder = leaky
    config_a = configure(checkout(tmp_path / "runner-a", WITH_SECRET), fake_llm, shared)
    run(config_a)
    assert AWS_KEY in (config_a.docs_dir / "files/pkg/util.py.md").read_text()
    rows = read_build_cache(config_a)
    assert rows
    assert not any(AWS_KEY in r["value"] for r in rows)
    ids = {r["id"] for r in rows}
    assert "page:files/pkg/util.py.md" not in ids
    settings = next(decode_page(r) for r in rows if r["id"] == "page:files/pkg/settings.py.md")
    assert AWS_KEY in (config_a.docs_dir / "files/pkg/settings.py.md").read_text()  # the page shows the code
    assert settings is not None
    assert settings.markdown is None

    calls = fake_llm.calls
    config_b = configure(checkout(tmp_path / "runner-b", WITH_SECRET), fake_llm, shared)
    report = run(config_b)
    assert fake_llm.calls == calls + 1  # util.py only
    assert "files/pkg/util.py.md" in report.pages_written
    assert "files/pkg/settings.py.md" in report.drafts_reused  # rendered again, from the cached draft
    assert docs(config_b) == docs(config_a)
    assert run(config_a).index.cache_written == 0  # what was published filtered is not published again


def test_the_ledger_is_published_beside_the_index(tmp_path: Path, fake_llm: FakeLLM, shared: str,
                                                  runner_a: tuple[Config, int]) -> None:
    config_a, calls = runner_a
    ledgers = [json.loads(r["value"]) for r in read_build_cache(config_a)
               if r["id"].startswith(LEDGER_PREFIX)]
    assert len(ledgers) == 1
    assert ledgers[0]["totals"]["calls"] == calls
    run(configure(checkout(tmp_path / "runner-b"), fake_llm, shared))  # no call: no new ledger
    assert sum(r["id"].startswith(LEDGER_PREFIX) for r in read_build_cache(config_a)) == 1


# -- the pure parts ------------------------------------------------------------------------------------------


def _state(**kw: Any) -> PageState:
    base: dict[str, Any] = {"key": "k" * 64, "kind": "file", "title": "app.py", "target_path": "app.py",
                            "summary": "Runs the app.", "draft": {"summary": "Runs the app."}}
    return PageState(**{**base, **kw})


def test_a_page_row_round_trips_and_fails_every_check_it_should() -> None:
    row = page_row("files/app.py.md", _state(), "# app.py\n")
    assert row is not None
    page = decode_page(row)
    assert page is not None
    assert page.markdown == "# app.py\n"
    assert page.state == _state()
    assert decode_page({**row, "value": row["value"] + " "}) is None  # torn value
    assert decode_page({**row, "sha": "0" * 64}) is None
    other = "files/other.py.md"
    assert decode_page({**row, "id": "page:" + other, "sha": row_sha("page:" + other, row["key"],
                                                                         row["value"])}) is not None
    for bad_id in ("page:../x.md", "page:/etc/x.md", "page:files/x.txt"):
        assert decode_page({**row, "id": bad_id, "sha": row_sha(bad_id, row["key"], row["value"])}) is None
    wrong_key = "z" * 64
    assert decode_page({**row, "key": wrong_key, "sha": row_sha(row["id"], wrong_key, row["value"])}) is None
    bad_value = json.dumps({"format": 99, "state": {}})
    assert decode_page({**row, "value": bad_value, "sha": row_sha(row["id"], row["key"], bad_value)}) is None


def test_secret_prose_is_never_cached_and_secret_markdown_is_dropped() -> None:
    assert page_row("files/a.md", _state(summary=f"Uses {AWS_KEY}."), "# a\n") is None
    assert page_row("files/a.md", _state(docstrings={"f": f"token ghp_{'a1B2' * 9}"}), "# a\n") is None
    row = page_row("files/a.md", _state(), f'KEY = "{AWS_KEY}"\n')
    assert row is not None
    assert AWS_KEY not in row["value"]
    page = decode_page(row)
    assert page is not None
    assert page.markdown is None
    ledger = ledger_row("run-1", {"entries": [{"label": "file:a.py", "error": f"HTTP 401, key {AWS_KEY}"}]})
    assert AWS_KEY not in ledger["value"]


def test_old_ledgers_are_pruned_and_gone_pages_dropped() -> None:
    stored = [f"{LEDGER_PREFIX}{n:03d}" for n in range(MAX_LEDGER_RUNS + 5)] + ["page:files/gone.py.md"]
    kept = CacheUpdate.retained(stored, [ledger_row("999", {})["id"]])
    assert len(kept) == MAX_LEDGER_RUNS - 1
    assert f"{LEDGER_PREFIX}{MAX_LEDGER_RUNS + 4:03d}" in kept
    assert f"{LEDGER_PREFIX}000" not in kept
    assert "page:files/gone.py.md" not in kept


def test_a_runner_with_another_local_key_reuses_the_chosen_location(
        tmp_path: Path, fake_llm: FakeLLM, shared: str, runner_a: tuple[Config, int],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A real fresh CI runner starts with an empty state folder (another local key): an index at a location
    the user chose (index_uri) is not held to the owner mark, so its cache is reused."""
    _, calls = runner_a
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "fresh-runner-state"))
    config_b = configure(checkout(tmp_path / "runner-b"), fake_llm, shared)
    assert read_build_cache(config_b)
    report = run(config_b)
    assert fake_llm.calls == calls
    assert report.pages_restored


def test_a_foreign_index_in_the_repository_reuses_nothing_of_its_cache(
        tmp_path: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    """An index in the repository's own output folder (where a committed one could come from) that this
    user did not write: neither it nor its cache is trusted."""
    fake_llm.responder = page_writer_responder
    root = checkout(tmp_path / "committed")
    env = {"SOURCEBOOK_LLM_BASE_URL": fake_llm.base_url, "SOURCEBOOK_LLM_MODEL": "fake"}
    settings = {"retry_base_s": 0.01, "max_retries": 1, "max_reasks": 1, "concurrency": 2}
    config = load_config(root, overrides={"llm": settings}, env=env)
    assert run(config).pages_written
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "another-user"))
    assert read_build_cache(config) == []
    assert run(config).pages_restored == []


def test_rows_stored_as_they_are_skip_the_secret_scan(monkeypatch: pytest.MonkeyPatch) -> None:
    import generator.index.build_cache as build_cache

    markdown = {"files/a.py.md": "# a\n", "files/b.py.md": "# b\n"}
    update = CacheUpdate([("files/a.py.md", _state()), ("files/b.py.md", _state(summary="Builds b."))],
                         markdown=markdown.get)
    first = list(update.rows())
    scans: list[str] = []
    monkeypatch.setattr(build_cache, "holds_secret", lambda text: scans.append(text) or False)
    assert list(update.rows({r["id"]: [r["sha"]] for r in first})) == first
    assert scans == []
    assert list(update.rows({first[0]["id"]: [first[0]["sha"]]})) == first
    assert len(scans) == 2  # b's prose and Markdown: not stored yet, so scanned


# -- on object storage: a real S3 protocol server (moto) on 127.0.0.1, through the CLI ----------------------


def _cli(root: Path, *args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sourcebook.cli", "build", str(root), "--no-site", *args],
                          capture_output=True, text=True, env=env, timeout=300, check=False)


def test_fresh_runner_against_s3_makes_no_llm_call(tmp_path: Path, fake_llm: FakeLLM, s3_env: MotoS3) -> None:
    fake_llm.responder = page_writer_responder
    uri = s3_env.bucket() + "/wiki"
    env = {**os.environ, "SOURCEBOOK_LLM_BASE_URL": fake_llm.base_url, "SOURCEBOOK_LLM_MODEL": "fake",
           "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    root_a = checkout(tmp_path / "runner-a")
    done = _cli(root_a, "--index-uri", uri, env=env)
    assert done.returncode == 0, done.stderr[-2000:]
    calls = fake_llm.calls
    assert calls > 0
    assert any("build_cache" in key for key in s3_env.objects(uri))  # the cache went to the bucket

    root_b = checkout(tmp_path / "runner-b")  # new checkout, empty output folder, another local key
    env_b = {**env, "XDG_STATE_HOME": str(tmp_path / "runner-b-state")}
    check = _cli(root_b, "--check", "--index-uri", uri, env=env_b)
    assert check.returncode == 0, check.stdout[-2000:] + check.stderr[-2000:]  # nothing stale: all cached
    done = _cli(root_b, "--index-uri", uri, env=env_b)
    assert done.returncode == 0, done.stderr[-2000:]
    assert fake_llm.calls == calls  # zero LLM calls on the fresh runner
    assert "0 written" in " ".join((done.stdout + done.stderr).split())
    a, b = (root / ".sourcebook" / "docs" for root in (root_a, root_b))
    assert {p.relative_to(b): p.read_bytes() for p in b.rglob("*.md")} == {
        p.relative_to(a): p.read_bytes() for p in a.rglob("*.md")}
