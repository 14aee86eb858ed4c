"""Organisations (`sourcebook serve --orgs`): two tenants with their own tokens and their own LanceDB
folders, files pushed by the client, and no way for one tenant's token to reach the other's repositories.
One real server on 127.0.0.1 for the module (pushes and reads through HTTP); the pure parts directly."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from answer.serving.orgs import parse_orgs, token_sha256
from answer.serving.pushes import PushLimits, check_push, path_problem
from generator.analyze.scan import classify_content as classify
from sourcebook.errors import ConfigError, RequestRefused
from tests.support.servers import free_port, wait_until_healthy

TOKEN_A = "token-of-acme-0123456789"
TOKEN_B = "token-of-globex-9876543210"
MARKER_A = "zebraquokka_acme_only"
MARKER_B = "narwhalotter_globex_only"

ACME = {
    "pkg/engine.py": (f'"""The {MARKER_A} engine."""\n\n\ndef start_engine(speed):\n'
                      f'    """Start the engine ({MARKER_A})."""\n    return spin(speed)\n\n\n'
                      'def spin(speed):\n    return speed * 2\n'),
    "pkg/util.py": "def clamp(x, low, high):\n    return max(low, min(x, high))\n",
    "README.md": f"# Acme\n\nThe {MARKER_A} project starts engines.\n",
}
GLOBEX = {
    "src/ledger.py": (f'"""The {MARKER_B} ledger."""\n\n\nclass Ledger:\n    """Books ({MARKER_B})."""\n\n'
                      '    def post(self, amount):\n        return amount\n'),
}


def _files(tree: dict[str, str]) -> list[dict[str, str]]:
    return [{"path": p, "content": c} for p, c in tree.items()]


def _orgs_file(path: Path, root_a: Path, root_b: Path, extra_a: tuple[str, ...] = ()) -> None:
    hashes_a = ", ".join(f'"{token_sha256(t)}"' for t in (TOKEN_A, *extra_a))
    path.write_text(f'[orgs.acme]\ntoken_sha256 = [{hashes_a}]\nindex_root = "{root_a}"\n'
                    'max_file_bytes = 4000\n\n'
                    f'[orgs.globex]\ntoken_sha256 = "{token_sha256(TOKEN_B)}"\nindex_root = "{root_b}"\n',
                    encoding="utf-8")


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("orgs")
    orgs = base / "orgs.toml"
    _orgs_file(orgs, base / "acme-db", base / "globex-db")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}
    env["XDG_STATE_HOME"] = str(base / "state")
    env["SOURCEBOOK_EMBEDDER"] = "none"
    # these tests read their own pushes at once: a reader waits for the re-push's background warm-up (a
    # few files: milliseconds) however loaded the machine is (tests/integration/test_orgs_warm.py: readers
    # that do not)
    env["SOURCEBOOK_INDEX_SWAP_WAIT_S"] = "60"
    proc = subprocess.Popen([sys.executable, "-m", "sourcebook.cli", "serve", "--orgs", str(orgs),
                             "--port", str(port)], env=env, cwd=base, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    wait_until_healthy(proc, url, 60)
    try:
        yield {"url": url, "proc": proc, "orgs": orgs, "base": base}
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _call(server: dict[str, Any], token: str | None, method: str, path: str, **kwargs: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.request(method, server["url"] + path, headers=headers, timeout=60, **kwargs)


@pytest.fixture(scope="module")
def pushed(server: dict[str, Any]) -> dict[str, Any]:
    a = _call(server, TOKEN_A, "POST", "/index", json={"repo": "engines", "files": _files(ACME)})
    b = _call(server, TOKEN_B, "POST", "/index", json={"repo": "ledger", "files": _files(GLOBEX)})
    assert a.status_code == 200, a.text
    assert b.status_code == 200, b.text
    return {"a": a.json(), "b": b.json()}


# ---------------------------------------------------------------- pure parts


def test_orgs_file_rules(tmp_path: Path) -> None:
    good = {"orgs": {"a": {"token_sha256": token_sha256("x"), "index_root": "a-db"},
                     "b": {"token_sha256": [token_sha256("y")], "index_root": "s3://bucket/b/"}}}
    specs = parse_orgs(good, tmp_path)
    assert specs["a"].index_root == str(tmp_path / "a-db")
    assert specs["b"].index_root == "s3://bucket/b"
    bad = {"orgs": {"a": {"token": "plain", "token_sha256": "abc", "index_root": "db"},
                    "b": {"token_sha256": token_sha256("y"), "index_root": "db/inner"},
                    "c": {"token_sha256": token_sha256("y"), "index_root": "c-db"}}}
    with pytest.raises(ConfigError) as caught:
        parse_orgs(bad, tmp_path)
    text = " | ".join(caught.value.problems)
    assert "never the token" in text
    assert "not 64 hex digits" in text
    assert "overlaps" in text
    assert "must select one organisation" in text


def test_per_org_storage_settings_name_environment_variables_only(tmp_path: Path) -> None:
    from answer.serving.orgs import storage_settings
    from generator.index import object_stores
    from generator.index.store import storage_options

    data = {"orgs": {
        "a": {"token_sha256": token_sha256("x"), "index_root": "s3://bucket-a/sb",
              "storage_env": {"aws_access_key_id": "A_KEY", "aws_secret_access_key": "A_SECRET",
                              "aws_endpoint": "A_ENDPOINT"}},
        "b": {"token_sha256": token_sha256("y"), "index_root": "s3://bucket-b/sb",
              "storage_env": {"aws_access_key_id": "B_KEY", "aws_secret_access_key": "B_SECRET"}}}}
    specs = parse_orgs(data, tmp_path)
    env = {"A_KEY": "ak", "A_SECRET": "as", "A_ENDPOINT": "http://127.0.0.1:9", "B_KEY": "bk",
           "B_SECRET": "bs"}
    assert storage_settings(specs["a"], env) == {"aws_access_key_id": "ak", "aws_secret_access_key": "as",
                                                 "aws_endpoint": "http://127.0.0.1:9"}
    with pytest.raises(ConfigError, match="B_SECRET"):
        storage_settings(specs["b"], {"B_KEY": "bk"})
    pasted = parse_orgs({"orgs": {"c": {"token_sha256": token_sha256("z"), "index_root": "s3://c/c",
                                        "storage_env": {"aws_access_key_id": "AKIAIOSFODNN7EXAMPLE"}}}},
                        tmp_path)["c"]  # a key id pasted where a variable's name goes: not echoed
    with pytest.raises(ConfigError) as unset:
        storage_settings(pasted, {})
    assert "aws_access_key_id" in str(unset.value)
    assert "AKIAIOSFODNN7EXAMPLE" not in str(unset.value)
    # a value in the file (a secret, not a variable's name) is refused, and never echoed
    bad = {"orgs": {"a": {"token_sha256": token_sha256("x"), "index_root": "s3://b/a",
                          "storage_env": {"aws_secret_access_key": "wJalr/XUtnFEMI+K7MDENG"}}}}
    with pytest.raises(ConfigError) as caught:
        parse_orgs(bad, tmp_path)
    assert "storage_env" in str(caught.value)
    assert "wJalr" not in str(caught.value)
    # each root's databases get its own options and no other's (and a loopback http endpoint is allowed)
    object_stores.set_scopes({s.index_root: storage_settings(s, env) for s in specs.values()})
    try:
        a = storage_options("s3://bucket-a/sb/repo1", env={})
        b = storage_options("s3://bucket-b/sb/repo2", env={})
        assert a == {"allow_http": "true", "aws_access_key_id": "ak", "aws_secret_access_key": "as",
                     "aws_endpoint": "http://127.0.0.1:9"}
        assert b == {"aws_access_key_id": "bk", "aws_secret_access_key": "bs"}
        assert storage_options("s3://bucket-a/sbother/x", env={}) == {}  # a sibling prefix is not the root
    finally:
        object_stores.set_scopes({})


def test_an_unreachable_store_opens_its_breaker_and_a_probe_closes_it() -> None:
    """A read that cannot reach the store opens its root's breaker: the next reads fail at once (no
    request), other roots are untouched, a missing table does not count, and the background probe closes
    it as soon as the store answers."""
    from generator.index import object_stores

    up = {"flag": False}

    def probe() -> object:
        if not up["flag"]:
            raise OSError("HTTP error: error sending request")
        return None

    def down() -> None:
        raise OSError("Generic S3 error: error sending request: tcp connect error: Connection refused")

    def missing() -> None:
        raise ValueError("Dataset at path s3://other/x/t.lance was not found")

    root = "s3://breaker-test-bucket"
    with pytest.raises(ValueError, match="not found"):
        object_stores.call("s3://other/x", probe, missing)
    object_stores.check("s3://other/x")  # a missing table opens no breaker
    with pytest.raises(OSError, match="Connection refused"):
        object_stores.call(f"{root}/org/repo", probe, down)
    started = time.monotonic()
    for _ in range(50):
        with pytest.raises(object_stores.StoreUnavailable):
            object_stores.call(f"{root}/org/repo", probe, lambda: 1)
    assert time.monotonic() - started < 0.5
    assert object_stores.call("s3://another-bucket/x", probe, lambda: 2) == 2
    up["flag"] = True
    deadline = time.monotonic() + 10
    while True:
        try:
            assert object_stores.call(f"{root}/org/repo", probe, lambda: 3) == 3
            break
        except object_stores.StoreUnavailable:
            assert time.monotonic() < deadline
            time.sleep(0.05)


@pytest.mark.parametrize("path", ["../x.py", "a/../../x.py", "/etc/passwd", "C:/x.py", "a\\b.py", "a\0.py",
                                  "", "a//b.py", "./a.py", "a/"])
def test_bad_paths_are_named(path: str) -> None:
    assert path_problem(path) is not None
    with pytest.raises(RequestRefused) as caught:
        check_push([{"path": "ok.py", "content": "x = 1\n"}, {"path": path, "content": "x"}], PushLimits())
    assert caught.value.problems[0].startswith("files[1]")


def test_size_caps_and_encodings() -> None:
    limits = PushLimits(max_file_bytes=10, max_request_bytes=15)
    with pytest.raises(RequestRefused, match=r"files\[0\] 'big.py': 11 bytes"):
        check_push([{"path": "big.py", "content": "x" * 11}], limits)
    with pytest.raises(RequestRefused, match="in all"):
        check_push([{"path": "a.py", "content": "x" * 8}, {"path": "b.py", "content": "y" * 8}], limits)
    with pytest.raises(RequestRefused, match="not valid base64"):
        check_push([{"path": "a.py", "content": "@@@", "encoding": "base64"}], limits)
    got = check_push([{"path": "a.py", "content": base64.b64encode(b"x=1").decode(), "encoding": "base64"}],
                     limits)
    assert got[0].raw == b"x=1"
    assert classify("img.png", b"\x89PNG\0\0")[1] is not None
    assert classify("a.py", b"x = 1\0\0")[1] == "binary"
    assert classify("node_modules/x/a.js", b"1")[1] == "vendored or generated"
    assert classify("a.py", b"x = 1\n")[0] is not None


# ---------------------------------------------------------------- through the real server


def test_tokens_select_the_org_and_nothing_else_gets_in(server: dict[str, Any]) -> None:
    for token in (None, "wrong", TOKEN_A + "x"):
        reply = _call(server, token, "GET", "/health")
        assert reply.status_code == 401
        assert _call(server, token, "POST", "/index", json={"repo": "r", "files": []}).status_code == 401
    assert _call(server, TOKEN_A, "GET", "/health").status_code == 200


def test_push_then_every_tool_answers_from_the_orgs_index(server: dict[str, Any],
                                                         pushed: dict[str, Any]) -> None:
    assert pushed["a"]["pushed"] == {"indexed": 3, "unchanged": 0, "deleted": 0, "skipped": 0}
    tree = _call(server, TOKEN_A, "GET", "/structure").json()  # `repo` left out: the org has one
    assert tree["repo"] == "engines"
    assert tree["files"] == 3
    file = _call(server, TOKEN_A, "GET", "/file", params={"path": "pkg/engine.py"}).json()
    assert file["content"] == ACME["pkg/engine.py"]
    found = _call(server, TOKEN_A, "GET", "/search", params={"q": "start_engine", "type": "lexical"}).json()
    assert any(h["path"] == "pkg/engine.py" for h in found["hits"]), found
    symbol = _call(server, TOKEN_A, "GET", "/symbol", params={"name": "start_engine"}).json()
    assert symbol["definitions"][0]["path"] == "pkg/engine.py"
    assert "return spin(speed)" in symbol["definitions"][0]["body"]
    ask = _call(server, TOKEN_A, "POST", "/ask", json={"question": "how does the engine start?"})
    assert ask.status_code == 200
    assert ask.json()["degraded"]


def test_a_pushed_repository_gets_substring_and_reference_search(server: dict[str, Any],
                                                                  pushed: dict[str, Any]) -> None:
    """Over HTTP on a pushed repository: a piece of a word of the code (`ngine` of engine) finds it
    lexically; the symbolic tier answers `spin` with its definition, then its caller start_engine."""
    piece = _call(server, TOKEN_A, "GET", "/search", params={"q": "ngine", "type": "lexical"})
    assert piece.status_code == 200, piece.text
    assert piece.json()["files"][0]["path"] == "pkg/engine.py"
    symbolic = _call(server, TOKEN_A, "GET", "/search", params={"q": "spin", "type": "symbolic"})
    assert symbolic.status_code == 200, symbolic.text
    spans = [(h["path"], h["symbol"]) for h in symbolic.json()["hits"]]
    assert spans[0] == ("pkg/engine.py", "spin")
    assert ("pkg/engine.py", "start_engine") in spans[1:]


def test_unchanged_files_are_skipped_and_prune_is_a_full_sync(server: dict[str, Any],
                                                             pushed: dict[str, Any]) -> None:
    again = _call(server, TOKEN_B, "POST", "/index", json={"repo": "ledger", "files": _files(GLOBEX)}).json()
    assert again["pushed"] == {"indexed": 0, "unchanged": 1, "deleted": 0, "skipped": 0}
    extra = {"src/extra.py": "def extra():\n    return 1\n", "logo.png": "\x89PNG\0\0\0"}
    grown = _call(server, TOKEN_B, "POST", "/index", json={"repo": "ledger", "files": _files(extra)}).json()
    assert grown["pushed"] == {"indexed": 1, "unchanged": 0, "deleted": 0, "skipped": 1}
    assert grown["skipped"][0]["path"] == "logo.png"
    assert grown["skipped"][0]["reason"] == "unsupported type"
    assert _call(server, TOKEN_B, "GET", "/structure", params={"repo": "ledger"}).json()["files"] == 2
    synced = _call(server, TOKEN_B, "POST", "/index",
                   json={"repo": "ledger", "files": _files(GLOBEX), "prune": True}).json()
    assert synced["pushed"] == {"indexed": 0, "unchanged": 1, "deleted": 1, "skipped": 0}
    assert synced["removed"] == ["src/extra.py"]
    gone = _call(server, TOKEN_B, "GET", "/file", params={"repo": "ledger", "path": "src/extra.py"})
    assert gone.status_code == 404


def test_a_refused_push_writes_nothing(server: dict[str, Any], pushed: dict[str, Any]) -> None:
    before = _call(server, TOKEN_A, "GET", "/structure").json()
    files = [{"path": "pkg/new.py", "content": "x = 1\n"}, {"path": "../escape.py", "content": "x"},
             {"path": "pkg/huge.py", "content": "#" * 5000}]  # acme's max_file_bytes is 4000
    reply = _call(server, TOKEN_A, "POST", "/index", json={"repo": "engines", "files": files})
    assert reply.status_code == 400
    problems = reply.json()["problems"]
    assert any("files[1] '../escape.py'" in p for p in problems)
    assert any("files[2] 'pkg/huge.py'" in p for p in problems)
    assert _call(server, TOKEN_A, "GET", "/structure").json() == before


# /structure is not among them: there an unknown repository is one never indexed, an empty tree (below)
ENDPOINTS = [("GET", "/file", {"path": "pkg/engine.py"}),
             ("GET", "/search", {"q": "engine"}), ("GET", "/context", {"q": "engine"}),
             ("GET", "/symbol", {"name": "start_engine"}), ("GET", "/ask", {"q": "what starts engines?"}),
             ("POST", "/remember", {"text": "a fact"})]


@pytest.mark.parametrize(("method", "path", "args"), ENDPOINTS)
def test_another_orgs_repository_answers_as_one_that_does_not_exist(
        server: dict[str, Any], pushed: dict[str, Any], method: str, path: str, args: dict[str, str]) -> None:
    def ask(repo: str) -> httpx.Response:
        if method == "GET":
            return _call(server, TOKEN_B, method, path, params={**args, "repo": repo})
        return _call(server, TOKEN_B, method, path, json={**args, "repo": repo})

    theirs, missing = ask("engines"), ask("nosuchrepo")
    assert theirs.status_code == missing.status_code == 404
    assert theirs.json() == {**missing.json(), "message": missing.json()["message"].replace("nosuchrepo",
                                                                                            "engines")}
    assert MARKER_A not in theirs.text
    # and acme's own token reads it
    mine = (_call(server, TOKEN_A, method, path, params={**args, "repo": "engines"}) if method == "GET"
            else _call(server, TOKEN_A, method, path, json={**args, "repo": "engines"}))
    assert mine.status_code == 200, mine.text


def test_structure_of_another_orgs_repository_is_the_empty_tree_of_one_never_indexed(
        server: dict[str, Any], pushed: dict[str, Any]) -> None:
    """The contract: an unindexed repository's structure is an empty tree (200), on HTTP and MCP, and
    another organisation's repository answers exactly as a name never pushed (no existence oracle)."""
    def http(repo: str) -> dict[str, Any]:
        reply = _call(server, TOKEN_B, "GET", "/structure", params={"repo": repo})
        assert reply.status_code == 200, reply.text
        return dict(reply.json())

    theirs, missing = http("engines"), http("nosuchrepo")
    assert missing == {"repo": "nosuchrepo", "scope": None, "indexed": False, "commit": None, "files": 0,
                       "symbols": 0, "tree": {"name": "", "path": "", "type": "dir", "files": 0,
                                              "symbols": 0, "children": []}}
    assert theirs == {**missing, "repo": "engines"}
    assert MARKER_A not in str(theirs)
    scoped = _call(server, TOKEN_B, "GET", "/structure", params={"repo": "engines", "scope": "pkg"}).json()
    assert scoped == {**missing, "repo": "engines", "scope": "pkg"}
    # a name no repository can have is still not found; acme reads its own
    assert _call(server, TOKEN_B, "GET", "/structure", params={"repo": "../engines"}).status_code == 404
    assert _call(server, TOKEN_A, "GET", "/structure", params={"repo": "engines"}).json()["files"] == 3

    async def over_mcp() -> list[dict[str, Any]]:
        from mcp import Client
        from mcp.client.streamable_http import streamable_http_client

        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN_B}"}, timeout=60) as client, \
                Client(streamable_http_client(server["url"] + "/mcp", http_client=client)) as mcp:
            results = [await mcp.call_tool("get_repo_structure", {"repo": name})
                       for name in ("engines", "nosuchrepo")]
        assert not any(r.is_error for r in results), [r.content for r in results]
        return [dict(r.structured_content or json.loads(r.content[0].text)) for r in results]

    mcp_theirs, mcp_missing = asyncio.run(over_mcp())
    assert mcp_missing == missing
    assert mcp_theirs == theirs


def test_no_reply_of_one_org_carries_the_others_content(server: dict[str, Any],
                                                        pushed: dict[str, Any]) -> None:
    for method, path, args in ENDPOINTS[:-1]:
        for query in ("engine", "start_engine spin"):  # words of acme's files (its marker would be echoed)
            params = {**args, **({"q": query} if "q" in args else {})}
            reply = _call(server, TOKEN_B, method, path, params=params)
            assert MARKER_A not in reply.text, (path, reply.text[:300])
            if path != "/file":  # /file's 404 names the path it was asked for
                assert "engine.py" not in reply.text
    # a push by globex to a name acme uses makes globex's own repository, never touches acme's
    _call(server, TOKEN_B, "POST", "/index", json={"repo": "engines", "files": _files(GLOBEX), "prune": True})
    assert _call(server, TOKEN_A, "GET", "/structure", params={"repo": "engines"}).json()["files"] == 3
    assert (server["base"] / "acme-db" / "engines").is_dir()
    assert (server["base"] / "globex-db" / "engines").is_dir()


def test_sighup_rereads_the_orgs_file(server: dict[str, Any], pushed: dict[str, Any]) -> None:
    new_token = "a-second-acme-token-42"
    assert _call(server, new_token, "GET", "/health").status_code == 401
    base = server["base"]
    _orgs_file(server["orgs"], base / "acme-db", base / "globex-db", extra_a=(new_token,))
    server["proc"].send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 10
    while _call(server, new_token, "GET", "/health").status_code != 200:
        assert time.monotonic() < deadline
        time.sleep(0.1)
    assert _call(server, new_token, "GET", "/structure").json()["repo"] == "engines"


def test_an_outage_is_reported_as_one_on_every_endpoint(server: dict[str, Any],
                                                        pushed: dict[str, Any]) -> None:
    """A files table that cannot be read, then the repository's folder deleted under the running server:
    every endpoint answers 200 with `degraded` set and empty results, never 5xx, never "not indexed"."""
    import shutil

    files = [{"path": "src/fragile.py", "content": "def fragile_thing():\n    return 1\n"}]
    pushed_now = _call(server, TOKEN_B, "POST", "/index", json={"repo": "fragile", "files": files})
    assert pushed_now.status_code == 200
    folder = server["base"] / "globex-db" / "fragile"
    for data in (folder / "files.lance" / "data").iterdir():  # before the server read the new publish
        data.write_bytes(b"garbage")
    question = "what does fragile_thing do?"
    ask = _call(server, TOKEN_B, "POST", "/ask", json={"query": question, "repo": "fragile"})  # `query` too
    assert ask.status_code == 200, ask.text
    assert ask.json()["degraded"] == "index-unavailable"
    for kind in ("hybrid", "lexical", "symbolic"):
        found = _call(server, TOKEN_B, "GET", "/search", params={"q": "fragile_thing", "type": kind,
                                                                 "repo": "fragile"})
        assert found.status_code == 200
        assert found.json()["degraded"] is True, (kind, found.text)
    context = _call(server, TOKEN_B, "GET", "/context", params={"q": "fragile_thing", "repo": "fragile"})
    assert context.status_code == 200
    assert context.json()["degraded"] is True
    reads = (("/file", {"path": "src/fragile.py"}), ("/structure", {}),
             ("/symbol", {"name": "fragile_thing"}))
    for path, params in reads:
        reply = _call(server, TOKEN_B, "GET", path, params={**params, "repo": "fragile"})
        assert reply.status_code == 200, (path, reply.text)
        assert reply.json()["degraded"] is True, (path, reply.text)
        assert "body" not in str(reply.json().get("definitions")), reply.text  # partial: no text read
    shutil.rmtree(folder)
    time.sleep(2.2)  # past the server's index refresh interval (2 s): it looks at the index again
    for path, params in reads:
        gone = _call(server, TOKEN_B, "GET", path, params={**params, "repo": "fragile"})
        assert gone.status_code == 200, (path, gone.text)
        assert gone.json()["degraded"] is True, (path, gone.text)
        assert "not in the index" not in gone.text
        assert "not indexed" not in gone.text
    ask = _call(server, TOKEN_B, "GET", "/ask", params={"q": question, "repo": "fragile"})
    assert ask.json()["degraded"] == "index-unavailable"
    context = _call(server, TOKEN_B, "GET", "/context", params={"q": "fragile_thing", "repo": "fragile"})
    assert context.status_code == 200
    assert context.json()["degraded"] is True
