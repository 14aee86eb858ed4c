"""The index on object storage, for real: a moto S3 server on 127.0.0.1 (tests/support/object_store.py).

In-process here: the URI plumbing (config, environment, storage options), a build into a bucket read back
through every table, and the publish pointer. The cross-process cases (a server
with no checkout, a publish under load) are in tests/integration/test_object_store_serve.py.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from generator.index.command import index_repository
from generator.index.store import open_index, storage_options
from sourcebook.config import load_config
from sourcebook.errors import ConfigError, IndexStoreError, UsageError
from tests.support.object_store import DEMO_FILES, MotoS3

FILES = DEMO_FILES


# ---------------------------------------------------------------- pure: options and config

@pytest.mark.parametrize(("uri", "env", "expected"), [
    ("s3://b/p", {"AWS_ENDPOINT_URL": "http://127.0.0.1:9000"}, {"allow_http": "true"}),
    ("s3://b/p", {"AWS_ENDPOINT_URL": "http://localhost:9000"}, {"allow_http": "true"}),
    ("s3://b/p", {"AWS_ENDPOINT_URL_S3": "http://[::1]:9000"}, {"allow_http": "true"}),
    # plain http to another host: the user must say AWS_ALLOW_HTTP=true themselves (LanceDB reads it)
    ("s3://b/p", {"AWS_ENDPOINT_URL": "http://minio.internal:9000"}, {}),
    ("s3://b/p", {"AWS_ENDPOINT_URL": "https://127.0.0.1:9000"}, {}),
    ("s3://b/p", {}, {}),
    ("gs://b/p", {"AWS_ENDPOINT_URL": "http://127.0.0.1:9000"}, {}),
    ("/var/index", {"AWS_ENDPOINT_URL": "http://127.0.0.1:9000"}, {}),
])
def test_storage_options_allow_http_only_on_loopback(uri: str, env: dict[str, str],
                                                     expected: dict[str, str]) -> None:
    assert storage_options(uri, env) == expected


def test_index_uri_comes_from_the_user_never_the_repository(make_repo, tmp_path: Path) -> None:
    root = make_repo({**FILES, "sourcebook.toml": 'index_uri = "s3://attacker/loot"\ncheckout = false\n'})
    config = load_config(root, env={"HOME": str(tmp_path)})
    assert config.index_uri == ""
    assert config.checkout
    assert config.index_location == str(root / ".sourcebook" / "index")
    env = {"HOME": str(tmp_path), "SOURCEBOOK_INDEX_URI": "s3://mine/wiki",
           "SOURCEBOOK_INDEX_REFRESH_S": "0.5"}
    config = load_config(root, env=env)
    assert (config.index_location, config.index_chosen) == ("s3://mine/wiki", True)
    assert config.index_refresh_s == 0.5
    assert load_config(root, overrides={"index_uri": "s3://flag/x"}, env=env).index_uri == "s3://flag/x"
    # a relative path is taken from where the command runs, as --out is
    assert load_config(root, overrides={"index_uri": "rel/idx"}, env={}).index_uri == str(
        Path("rel/idx").absolute())


@pytest.mark.parametrize(("uri", "message"), [
    ("ftp://host/x", "scheme must be one of s3, gs, az"),
    ("s3:///prefix", "names no bucket"),
])
def test_bad_index_uri_is_one_clear_config_error(make_repo, uri: str, message: str) -> None:
    root = make_repo(FILES)
    with pytest.raises(ConfigError, match=message):
        load_config(root, overrides={"index_uri": uri}, env={})


# ---------------------------------------------------------------- on moto

def test_index_in_a_bucket_reads_back_every_table(make_repo, s3_env: MotoS3) -> None:
    root = make_repo(FILES)
    uri = s3_env.bucket() + "/demo/index"
    config = load_config(root, overrides={"index_uri": uri})
    first = index_repository(config, embedder=None)
    assert (first.files_indexed, first.rebuilt) == (len(FILES), "new index")
    assert any(key.startswith("demo/index/files.lance/") for key in s3_env.objects(uri))
    assert not (root / ".sourcebook" / "index").exists()  # nothing went to the local default

    store = open_index(config, embedder=None)
    assert store.uri == uri
    assert {r["path"] for r in store.rows("files", ["path"])} == set(FILES)
    texts = {r["path"]: r["text"] for r in store.rows("files", ["path", "text"])}
    assert texts["pkg/config.py"] == FILES["pkg/config.py"]  # the whole file, at the indexed state
    # the persisted full-text index answers from the bucket (BM25 over the tokens column)
    hits = store.fts("chunks", "load_settings", ["path"], limit=5)
    assert hits
    assert {h["path"] for h in hits} <= set(FILES)
    assert store.meta["commit"] == ""  # not a git checkout: no commit to name

    again = index_repository(config, embedder=None)  # incremental on object storage too
    assert (again.files_indexed, again.files_unchanged, again.rebuilt) == (0, len(FILES), "")


def test_chosen_location_is_read_by_another_user(make_repo, s3_env: MotoS3, tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """CI writes the bucket, servers elsewhere read it: a user-chosen URI is not held to the local owner
    mark (the index in the repository's own folder still is: tests/integration/test_index_owner.py)."""
    root = make_repo(FILES)
    config = load_config(root, overrides={"index_uri": s3_env.bucket() + "/idx"})
    index_repository(config, embedder=None)
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "another-user"))
    store = open_index(config, embedder=None)
    assert store.rows("files", ["path"], limit=1)
    again = index_repository(config, embedder=None)
    assert (again.rebuilt, again.files_indexed) == ("", 0)  # reused, not rebuilt from scratch


def test_missing_bucket_prefix_is_a_clear_error(make_repo, s3_env: MotoS3) -> None:
    root = make_repo(FILES)
    config = load_config(root, overrides={"index_uri": s3_env.bucket() + "/nothing-here"})
    with pytest.raises(IndexStoreError, match="empty or incomplete"):
        open_index(config, embedder=None)


def test_publish_is_one_pointer_and_old_versions_stay_readable(make_repo, s3_env: MotoS3) -> None:
    """A reader holding the previous publish keeps answering after the next one (its versions are kept
    for index_keep_s), and a fresh reader sees only the new one: never a mix."""
    root = make_repo(FILES)
    config = load_config(root, overrides={"index_uri": s3_env.bucket() + "/idx"})
    index_repository(config, embedder=None)
    old = open_index(config, embedder=None)
    (root / "pkg" / "extra.py").write_text('"""Extra."""\n\n\ndef zebrafish():\n    return 1\n')
    index_repository(config, embedder=None)
    new = open_index(config, embedder=None)
    assert new.meta["versions"] != old.meta["versions"]
    assert "pkg/extra.py" not in {r["path"] for r in old.rows("files", ["path"])}
    assert old.fts("chunks", "load_settings", ["path"], limit=3)  # still readable after the publish
    assert "pkg/extra.py" in {r["path"] for r in new.rows("files", ["path"])}
    assert [h["path"] for h in new.fts("chunks", "zebrafish", ["path"], limit=1)] == ["pkg/extra.py"]


def test_with_a_checkout_staleness_is_still_reported(make_repo, s3_env: MotoS3) -> None:
    """Index in a bucket, checkout on this machine: bodies are read live and an edit is reported."""
    from answer.answering.get_answer import get_answer
    from answer.serving.tools import Tools
    from answer.serving.workspace import single

    root = make_repo(FILES)
    uri = s3_env.bucket() + "/idx"
    index_repository(load_config(root, overrides={"index_uri": uri}), embedder=None)
    tools = Tools(single(root, overrides={"index_uri": uri}))
    (definition,) = tools.get_symbol("load_settings")["definitions"]
    assert definition["changed_since_index"] is False
    (root / "pkg" / "config.py").write_text(FILES["pkg/config.py"].replace("open(path)", "open(path, 'rb')"))
    (definition,) = tools.get_symbol("load_settings")["definitions"]
    assert definition["changed_since_index"] is True
    assert "open(path, 'rb')" in definition["body"]
    reply = get_answer(tools.workspace, "where is load_settings defined?", use_cache=False)
    assert "pkg/config.py changed on disk" in (reply.note or "")


def test_every_command_that_reads_or_writes_the_index_takes_index_uri() -> None:
    from click.testing import CliRunner

    from sourcebook.cli import cli

    without = {"serve-site", "setup"}  # serves the built HTML only; prepares the offline assets only
    for name in sorted(set(cli.commands) - without):
        result = CliRunner().invoke(cli, [name, "--help"])
        assert "--index-uri" in result.output, name


def test_no_checkout_reader_takes_bodies_from_the_index(make_repo, s3_env: MotoS3, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    from answer.serving.tools import Tools
    from answer.serving.workspace import detached

    root = make_repo(FILES)
    uri = s3_env.bucket() + "/idx"
    index_repository(load_config(root, overrides={"index_uri": uri}), embedder=None)
    monkeypatch.setenv("SOURCEBOOK_EMBEDDER", "none")
    monkeypatch.chdir(tmp_path)
    tools = Tools(detached(uri))
    config = tools.workspace.resolve()
    assert (config.checkout, config.index_location) == (False, uri)
    assert not config.root.is_relative_to(root)
    reply = tools.get_answer("What does load_settings do in pkg/config.py?")
    bodies = {b["qualname"]: b for b in reply["symbol_bodies"] or []}
    assert bodies["load_settings"]["body"] == FILES["pkg/config.py"].split("\n\n\n")[1].rstrip("\n")
    assert bodies["load_settings"].get("changed_since_index") is None  # never claimed stale
    assert "changed on disk" not in (reply.get("note") or "")
    with pytest.raises(UsageError, match="no checkout"):
        tools.index()


def test_one_tool_call_reads_one_published_state(make_repo, monkeypatch: pytest.MonkeyPatch) -> None:
    """A publish picked up while a tool call runs does not reach that call: all its reads (files, texts,
    symbols, commit) come from the state it started on; the next call sees the new one."""
    import time

    from answer.serving.repo_state import one_state
    from answer.serving.tools import Tools
    from answer.serving.workspace import single

    monkeypatch.setenv("SOURCEBOOK_EMBEDDER", "none")
    root = make_repo(FILES)
    tools = Tools(single(root, overrides={"index_refresh_s": 0.01}))
    config = tools.workspace.resolve()
    index_repository(config, embedder=None)
    st = tools.state(None)
    with one_state():
        first = st.store()
        (root / "pkg" / "extra.py").write_text('def zebrafish():\n    return 1\n')
        index_repository(config, embedder=None)
        time.sleep(0.05)
        assert st.store() is first
        assert "pkg/extra.py" not in st.indexed_paths()
    time.sleep(0.05)
    assert st.store() is not first
    assert "pkg/extra.py" in st.indexed_paths()
