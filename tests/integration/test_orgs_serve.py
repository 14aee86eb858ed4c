"""`sourcebook serve --orgs --workers 2` with one organisation on a local folder and one on the moto S3 server
(127.0.0.1): files pushed and read back through HTTP and through a real MCP client over streamable HTTP
(/mcp), the pushed `commit` recorded and reported, each token answered by its own organisation's tools and
no other, and SIGHUP handled by the supervisor (a broken file keeps every worker as it was)."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from answer.serving.orgs import token_sha256
from tests.support.object_store import AWS_KEYS, MotoS3
from tests.support.servers import free_port, wait_until_healthy

TOKEN_A = "acme-token-for-the-local-org-1"
TOKEN_B = "globex-token-for-the-s3-org-22"
MARKER_A = "pelicanmarmot_acme_local"
MARKER_B = "ibexwombat_globex_s3"

ACME = {"lib/pump.py": (f'"""The {MARKER_A} pump."""\n\n\ndef prime_pump(litres):\n'
                        '    """Fill the pump."""\n    return flow(litres)\n\n\n'
                        'def flow(litres):\n    return litres * 3\n')}
GLOBEX = {"svc/billing.py": (f'"""The {MARKER_B} billing."""\n\n\nclass Invoice:\n    """One bill."""\n\n'
                             '    def total(self, lines):\n        return sum(lines)\n'),
          "README.md": f"# Globex\n\nBilling ({MARKER_B}).\n"}


def _files(tree: dict[str, str]) -> list[dict[str, str]]:
    return [{"path": p, "content": c} for p, c in tree.items()]


def _write_orgs(path: Path, root_a: Path, root_b: str, extra_a: str | None = None) -> None:
    hashes = ", ".join(f'"{token_sha256(t)}"' for t in (TOKEN_A, *([extra_a] if extra_a else [])))
    path.write_text(f'[orgs.acme]\ntoken_sha256 = [{hashes}]\nindex_root = "{root_a}"\n\n'
                    f'[orgs.globex]\ntoken_sha256 = "{token_sha256(TOKEN_B)}"\nindex_root = "{root_b}"\n',
                    encoding="utf-8")


def _children(pid: int) -> list[int]:
    """The supervisor's worker processes (multiprocessing's spawned children, not its resource tracker)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                stat = Path(f"/proc/{entry}/stat").read_text()
                cmdline = Path(f"/proc/{entry}/cmdline").read_bytes()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid and b"spawn_main" in cmdline:
                found.append(int(entry))
    return found


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, moto_s3: MotoS3) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("orgs-serve")
    bucket = moto_s3.bucket()
    orgs = base / "orgs.toml"
    _write_orgs(orgs, base / "acme-db", f"{bucket}/globex")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))
           and k not in AWS_KEYS}
    env.update(moto_s3.env)
    env.update({"XDG_STATE_HOME": str(base / "state"), "SOURCEBOOK_EMBEDDER": "none",
                # pushes land on either worker: the other one picks the publish up this soon
                "SOURCEBOOK_INDEX_REFRESH_S": "0.2"})
    proc = subprocess.Popen([sys.executable, "-m", "sourcebook.cli", "serve", "--orgs", str(orgs),
                             "--port", str(port), "--workers", "2"], env=env, cwd=base,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    wait_until_healthy(proc, url, 90)
    try:
        yield {"url": url, "proc": proc, "orgs": orgs, "base": base, "bucket": bucket, "moto": moto_s3}
    finally:
        proc.terminate()
        proc.wait(timeout=20)


def _call(server: dict[str, Any], token: str | None, method: str, path: str, **kwargs: Any) -> httpx.Response:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return httpx.request(method, server["url"] + path, headers=headers, timeout=60, **kwargs)


def _eventually(check: Callable[[], Any], timeout_s: float = 10.0) -> Any:
    """A reply from either worker: the one that did not take a push sees it within index_refresh_s."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            result = check()
        except AssertionError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)
            continue
        return result


@pytest.fixture(scope="module")
def pushed(server: dict[str, Any]) -> dict[str, Any]:
    a = _call(server, TOKEN_A, "POST", "/index", json={"repo": "pumps", "files": _files(ACME)})
    b = _call(server, TOKEN_B, "POST", "/index",
              json={"repo": "billing", "files": _files(GLOBEX), "commit": "0a1b2c3d4e5f"})
    assert a.status_code == 200, a.text
    assert b.status_code == 200, b.text
    return {"a": a.json(), "b": b.json()}


def _mcp(server: dict[str, Any], token: str | None, run: Callable[[Client], Any]) -> Any:
    async def go() -> Any:
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        async with httpx.AsyncClient(headers=headers, timeout=60) as http, \
                Client(streamable_http_client(server["url"] + "/mcp", http_client=http)) as client:
            return await run(client)

    return asyncio.run(go())


def _data(result: Any) -> dict[str, Any]:
    assert not result.is_error, result.content
    if result.structured_content is not None:
        return dict(result.structured_content)
    return dict(json.loads(result.content[0].text))


def test_several_workers_serve(server: dict[str, Any]) -> None:
    assert len(_children(server["proc"].pid)) == 2


def test_the_s3_org_pushes_searches_and_reads_through_http(server: dict[str, Any],
                                                           pushed: dict[str, Any]) -> None:
    assert pushed["b"]["pushed"] == {"indexed": 2, "unchanged": 0, "deleted": 0, "skipped": 0}
    keys = server["moto"].objects(server["bucket"])
    assert any(k.startswith("globex/billing/") for k in keys), keys[:10]
    assert not (server["base"] / "acme-db" / "billing").exists()

    def read() -> dict[str, Any]:
        reply = _call(server, TOKEN_B, "GET", "/file", params={"path": "svc/billing.py"})
        assert reply.status_code == 200, reply.text
        return dict(reply.json())

    assert _eventually(read)["content"] == GLOBEX["svc/billing.py"]
    found = _eventually(lambda: _hits(server, TOKEN_B, "Invoice", "symbolic"))
    assert found[0] == ("svc/billing.py", "Invoice")
    lexical = _eventually(lambda: _hits(server, TOKEN_B, "nvoic", "lexical"))  # a piece of a word
    assert lexical[0][0] == "svc/billing.py"
    tree = _call(server, TOKEN_B, "GET", "/structure").json()
    assert (tree["repo"], tree["files"], tree["commit"]) == ("billing", 2, "0a1b2c3d4e5f")
    # no synthesizer: the grounding spans come back as citations, degraded; POST takes `query`
    ask = _call(server, TOKEN_B, "POST", "/ask", json={"query": "what is an Invoice total?"})
    assert ask.status_code == 200, ask.text
    assert ask.json()["degraded"] == "no-llm-provider"
    assert "svc/billing.py" in ask.json()["citations"]


def _hits(server: dict[str, Any], token: str, query: str, kind: str) -> list[tuple[str, str | None]]:
    reply = _call(server, token, "GET", "/search", params={"q": query, "type": kind})
    assert reply.status_code == 200, reply.text
    hits = [(h["path"], h.get("symbol")) for h in reply.json()["hits"]]
    assert hits, reply.text
    return hits


def test_the_pushed_commit_is_recorded_and_reported(server: dict[str, Any], pushed: dict[str, Any]) -> None:
    assert pushed["b"]["commit"] == "0a1b2c3d4e5f"
    assert pushed["a"]["commit"] is None  # acme named none
    files = {"src/a.py": "def alpha():\n    return 1\n"}
    first = _call(server, TOKEN_A, "POST", "/index", json={"repo": "commits", "files": _files(files),
                                                           "commit": "v1.2.3"}).json()
    assert first["commit"] == "v1.2.3"

    def structure_commit() -> str | None:
        reply = _call(server, TOKEN_A, "GET", "/structure", params={"repo": "commits"})
        assert reply.status_code == 200, reply.text
        return reply.json()["commit"]

    assert _eventually(lambda: _expect(structure_commit(), "v1.2.3")) == "v1.2.3"
    file = _eventually(lambda: _ok(_call(server, TOKEN_A, "GET", "/file",
                                         params={"repo": "commits", "path": "src/a.py"})))
    assert file["commit"] == "v1.2.3"
    # the same tree again without a commit changes nothing: the commit stays
    same = _call(server, TOKEN_A, "POST", "/index", json={"repo": "commits", "files": _files(files)}).json()
    assert (same["pushed"]["unchanged"], same["commit"]) == (1, "v1.2.3")
    # a new commit over the same files is recorded all the same
    moved = _call(server, TOKEN_A, "POST", "/index", json={"repo": "commits", "files": _files(files),
                                                           "commit": "v1.2.4"}).json()
    assert moved["commit"] == "v1.2.4"
    assert _eventually(lambda: _expect(structure_commit(), "v1.2.4")) == "v1.2.4"
    # changed files without a commit: the rows no longer describe v1.2.4, so no commit is claimed
    edited = _call(server, TOKEN_A, "POST", "/index",
                   json={"repo": "commits", "files": _files({"src/a.py": "def alpha():\n    return 2\n"})})
    assert edited.json()["commit"] is None
    assert _eventually(lambda: _expect(structure_commit(), None)) is None
    bad = _call(server, TOKEN_A, "POST", "/index", json={"repo": "commits", "files": _files(files),
                                                         "commit": "has space"})
    assert bad.status_code == 400
    assert any(p.startswith("commit:") for p in bad.json()["problems"])


def _expect(value: Any, wanted: Any) -> Any:
    assert value == wanted
    return value


def _ok(reply: httpx.Response) -> dict[str, Any]:
    assert reply.status_code == 200, reply.text
    return dict(reply.json())


def test_mcp_over_http_answers_each_org_from_its_own_index(server: dict[str, Any],
                                                           pushed: dict[str, Any]) -> None:
    async def as_globex(client: Client) -> dict[str, Any]:
        names = {t.name for t in (await client.list_tools()).tools}
        assert {"read_file", "get_repo_structure", "index", "search_codebase"} <= names
        tree = _data(await client.call_tool("get_repo_structure", {"repo": "billing"}))
        file = _data(await client.call_tool("read_file", {"path": "svc/billing.py", "repo": "billing"}))
        theirs = await client.call_tool("read_file", {"path": "lib/pump.py", "repo": "pumps"})
        missing = await client.call_tool("read_file", {"path": "lib/pump.py", "repo": "nosuchrepo"})
        return {"tree": tree, "file": file, "theirs": theirs, "missing": missing}

    got = _eventually(lambda: _mcp(server, TOKEN_B, as_globex))
    assert got["tree"]["commit"] == "0a1b2c3d4e5f"
    assert got["file"]["content"] == GLOBEX["svc/billing.py"]
    # acme's repository, asked for with globex's token, is exactly a repository that does not exist
    assert got["theirs"].is_error
    assert got["missing"].is_error
    theirs, missing = got["theirs"].content[0].text, got["missing"].content[0].text
    assert "NotFoundError (404): unknown repository" in theirs
    assert theirs == missing.replace("nosuchrepo", "pumps")
    assert MARKER_A not in theirs

    async def as_acme(client: Client) -> dict[str, Any]:
        search = _data(await client.call_tool("search_codebase", {"query": "prime_pump", "repo": "pumps"}))
        symbol = _data(await client.call_tool("get_symbol", {"name": "prime_pump", "repo": "pumps"}))
        return {"search": search, "symbol": symbol}

    acme = _eventually(lambda: _mcp(server, TOKEN_A, as_acme))
    assert acme["search"]["files"][0]["path"] == "lib/pump.py"
    assert "return flow(litres)" in acme["symbol"]["definitions"][0]["body"]
    assert MARKER_B not in json.dumps(acme)


def test_a_push_through_mcp_lands_in_the_callers_org(server: dict[str, Any], pushed: dict[str, Any]) -> None:
    files = [{"path": "tools/gauge.py", "content": "def read_gauge():\n    return 7\n"}]

    async def push(client: Client) -> dict[str, Any]:
        return _data(await client.call_tool("index", {"repo": "gauges", "files": files,
                                                      "commit": "feedbeef"}))

    reply = _mcp(server, TOKEN_B, push)
    assert (reply["pushed"]["indexed"], reply["commit"]) == (1, "feedbeef")
    assert any(k.startswith("globex/gauges/") for k in server["moto"].objects(server["bucket"]))
    file = _eventually(lambda: _ok(_call(server, TOKEN_B, "GET", "/file",
                                         params={"repo": "gauges", "path": "tools/gauge.py"})))
    assert file["content"] == files[0]["content"]
    assert _call(server, TOKEN_A, "GET", "/file", params={"repo": "gauges", "path": "tools/gauge.py"}
                 ).status_code == 404


@pytest.mark.parametrize("token", [None, "wrong-token", TOKEN_A + "x"])
def test_mcp_without_an_orgs_token_is_refused(server: dict[str, Any], token: str | None) -> None:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    initialize = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                  "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                             "clientInfo": {"name": "t", "version": "1"}}}
    reply = httpx.post(server["url"] + "/mcp", json=initialize, timeout=30,
                       headers={**headers, "Accept": "application/json, text/event-stream"})
    assert reply.status_code == 401
    assert MARKER_A not in reply.text
    assert MARKER_B not in reply.text

    async def tools(client: Client) -> Any:
        return await client.list_tools()

    with pytest.raises(Exception):  # noqa: B017, PT011 (the SDK client cannot even initialise)
        _mcp(server, token, tools)


def test_sighup_under_workers_keeps_a_broken_file_out_and_takes_a_good_one(server: dict[str, Any],
                                                                           pushed: dict[str, Any]) -> None:
    new_token = "a-second-acme-token-for-workers"
    assert _call(server, new_token, "GET", "/health").status_code == 401
    orgs: Path = server["orgs"]
    good = orgs.read_text(encoding="utf-8")
    before = sorted(_children(server["proc"].pid))
    orgs.write_text(good + "\n[orgs.broken\n", encoding="utf-8")
    server["proc"].send_signal(signal.SIGHUP)
    time.sleep(2)
    assert sorted(_children(server["proc"].pid)) == before  # no worker replaced
    assert _call(server, TOKEN_A, "GET", "/health").status_code == 200
    _write_orgs(orgs, server["base"] / "acme-db", f"{server['bucket']}/globex", extra_a=new_token)
    server["proc"].send_signal(signal.SIGHUP)
    deadline = time.monotonic() + 240  # a liveness bound (workers replaced one by one), not a timing
    while _call(server, new_token, "GET", "/structure", params={"repo": "pumps"}).status_code != 200:
        assert time.monotonic() < deadline
        time.sleep(0.3)
    # both workers replaced: every request now takes the new token
    _eventually(lambda: _expect(not set(_children(server["proc"].pid)) & set(before), True), timeout_s=90)
    for _ in range(6):
        assert _call(server, new_token, "GET", "/health").status_code == 200
    assert _call(server, TOKEN_B, "GET", "/structure", params={"repo": "billing"}).json()["files"] == 2


@pytest.mark.slow  # ~15 s: its own moto server and server
def test_the_object_store_stopped_mid_serve_is_an_outage_on_every_endpoint(tmp_path: Path) -> None:
    """Its own moto server, stopped under a running `serve --orgs` after a push: every endpoint answers
    200 with `degraded` set, never a 5xx, never "not indexed", and soon: the first read that meets the
    outage fails after one try of the store (no retries for readers), the breaker fails the rest at once
    (each call took ~5 s of the store client's retries before)."""
    with MotoS3() as moto:
        bucket = moto.bucket()
        orgs = tmp_path / "orgs.toml"
        _write_orgs(orgs, tmp_path / "acme-db", f"{bucket}/globex")
        port = free_port()
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))
               and k not in AWS_KEYS}
        env.update({**moto.env, "XDG_STATE_HOME": str(tmp_path / "state"), "SOURCEBOOK_EMBEDDER": "none",
                    "SOURCEBOOK_INDEX_REFRESH_S": "0.2"})
        proc = subprocess.Popen([sys.executable, "-m", "sourcebook.cli", "serve", "--orgs", str(orgs),
                                 "--port", str(port)], env=env, cwd=tmp_path, stdout=subprocess.DEVNULL,
                                stderr=subprocess.DEVNULL)
        server = {"url": f"http://127.0.0.1:{port}"}
        try:
            _eventually(lambda: _expect(_ok_status(server), True), timeout_s=60)
            push = _call(server, TOKEN_B, "POST", "/index", json={"repo": "billing", "files": _files(GLOBEX)})
            assert push.status_code == 200, push.text
            moto.__exit__(None, None, None)
            time.sleep(0.5)  # past the refresh interval: the next request looks at the store again
            replies, took = [], []
            for call in OUTAGE_CALLS + OUTAGE_CALLS:  # twice: the second round meets an open breaker
                started = time.monotonic()
                replies.append(_outage_call(server, *call))
                took.append(time.monotonic() - started)
            # generous bounds for a loaded 2-core machine (measured: ~2 s for the first, ~10 ms the rest)
            assert max(took) < 3.0, took
            assert max(took[len(OUTAGE_CALLS):]) < 1.0, took
            for (_method, path, _args), reply in zip(OUTAGE_CALLS + OUTAGE_CALLS, replies, strict=True):
                assert reply.status_code == 200, (path, reply.text)
                assert reply.json().get("degraded"), (path, reply.text)
                assert "not in the index" not in reply.text
                assert "not indexed" not in reply.text
        finally:
            proc.terminate()
            proc.wait(timeout=20)


OUTAGE_CALLS = [("GET", "/structure", {"repo": "billing"}),
                ("GET", "/file", {"repo": "billing", "path": "svc/billing.py"}),
                ("GET", "/search", {"repo": "billing", "q": "Invoice"}),
                ("GET", "/context", {"repo": "billing", "q": "Invoice"}),
                ("GET", "/symbol", {"repo": "billing", "name": "Invoice"}),
                ("POST", "/ask", {"repo": "billing", "query": "what is an Invoice?"})]


def _outage_call(server: dict[str, Any], method: str, path: str, args: dict[str, str]) -> httpx.Response:
    if method == "GET":
        return _call(server, TOKEN_B, method, path, params=args)
    return _call(server, TOKEN_B, method, path, json=args)


def _ok_status(server: dict[str, Any]) -> bool:
    try:
        return _call(server, TOKEN_B, "GET", "/health").status_code == 200
    except httpx.TransportError as exc:
        raise AssertionError("not up yet") from exc


def _enforcing_moto(moto: MotoS3, orgs: tuple[str, ...]) -> dict[str, tuple[str, str, str]]:
    """One bucket and one IAM user per organisation on `moto`, each user allowed its own bucket only; then
    moto checks every request's key and signature (moto-api reset-auth: no unauthenticated actions left).
    org -> (bucket URI, access key id, secret)."""
    import urllib.request

    import boto3

    plain = {"endpoint_url": moto.endpoint, "region_name": "us-east-1", "aws_access_key_id": "setup",
             "aws_secret_access_key": "setup"}
    iam, s3 = boto3.client("iam", **plain), boto3.client("s3", **plain)
    out = {}
    for org in orgs:
        bucket = f"sb-{org}-{os.getpid()}"
        s3.create_bucket(Bucket=bucket)
        iam.create_user(UserName=org)
        iam.put_user_policy(UserName=org, PolicyName="own-bucket", PolicyDocument=json.dumps({
            "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": [
                f"arn:aws:s3:::{bucket}", f"arn:aws:s3:::{bucket}/*"]}]}))
        key = iam.create_access_key(UserName=org)["AccessKey"]
        out[org] = (f"s3://{bucket}", key["AccessKeyId"], key["SecretAccessKey"])
    request = urllib.request.Request(f"{moto.endpoint}/moto-api/reset-auth", data=b"0", method="POST",
                                     headers={"Content-Type": "text/plain"})
    with urllib.request.urlopen(request, timeout=10):
        pass
    return out


@pytest.mark.slow  # ~20 s: its own moto server with IAM checks on
def test_each_org_opens_its_databases_with_its_own_credentials(tmp_path: Path) -> None:
    """Two organisations on one S3 server that checks keys (moto with IAM enforced), each with its own key
    from its own environment variables (storage_env), each key allowed its own bucket only; the server's
    standard AWS variables hold a key moto does not know. Both push and read back; a third organisation
    naming acme's variables but rooted in globex's bucket is refused by the store: so each organisation's
    connections carry its own key, not the server's, and not the other's."""
    with MotoS3() as moto:
        creds = _enforcing_moto(moto, ("acme", "globex"))
        orgs = tmp_path / "orgs.toml"
        token_c = "mixed-token-with-acme-keys-333"
        lines = []
        for org, token, root, var in (("acme", TOKEN_A, f"{creds['acme'][0]}/acme", "ACME"),
                                      ("globex", TOKEN_B, f"{creds['globex'][0]}/globex", "GLOBEX"),
                                      ("mixed", token_c, f"{creds['globex'][0]}/mixed", "ACME")):
            lines.append(f'[orgs.{org}]\ntoken_sha256 = "{token_sha256(token)}"\nindex_root = "{root}"\n'
                         f'storage_env = {{aws_access_key_id = "{var}_KEY_ID", '
                         f'aws_secret_access_key = "{var}_SECRET"}}\n')
        orgs.write_text("\n".join(lines), encoding="utf-8")
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))
               and k not in AWS_KEYS}
        env.update({**moto.env, "AWS_ACCESS_KEY_ID": "AKIANOTAKEY", "AWS_SECRET_ACCESS_KEY": "nope",
                    "ACME_KEY_ID": creds["acme"][1], "ACME_SECRET": creds["acme"][2],
                    "GLOBEX_KEY_ID": creds["globex"][1], "GLOBEX_SECRET": creds["globex"][2],
                    "XDG_STATE_HOME": str(tmp_path / "state"), "SOURCEBOOK_EMBEDDER": "none"})
        port = free_port()
        proc = subprocess.Popen([sys.executable, "-m", "sourcebook.cli", "serve", "--orgs", str(orgs),
                                 "--port", str(port)], env=env, cwd=tmp_path, stdout=subprocess.DEVNULL,
                                stderr=subprocess.PIPE)
        server = {"url": f"http://127.0.0.1:{port}"}
        try:
            wait_until_healthy(proc, server["url"], 90)
            for token, repo, tree, path in ((TOKEN_A, "pumps", ACME, "lib/pump.py"),
                                            (TOKEN_B, "billing", GLOBEX, "svc/billing.py")):
                push = _call(server, token, "POST", "/index", json={"repo": repo, "files": _files(tree)})
                assert push.status_code == 200, push.text
                assert push.json()["pushed"]["indexed"] == len(tree), push.text
                read = _call(server, token, "GET", "/file", params={"repo": repo, "path": path})
                assert read.status_code == 200, read.text
                assert read.json()["content"] == tree[path], read.text
            denied = _call(server, token_c, "POST", "/index", json={"repo": "x", "files": _files(ACME)})
            # refused by the store (403: moto knows acme's key, which may not touch globex's bucket), said so
            assert denied.status_code == 503, denied.text
            assert "was not written" in denied.json()["message"]
            assert "403" in denied.json()["message"]
        finally:
            proc.terminate()
            proc.wait(timeout=20)
