"""One organisation, or one client without a token, cannot stall `sourcebook serve --orgs` for the others;
every push is all-or-nothing. Each case goes through a real server on 127.0.0.1 (uvicorn in a subprocess,
real HTTP and MCP clients): compressed tars, cut tars, decoded and non-UTF-8 paths, control characters in
names, a regex that expands without end, over-long arguments on every surface, half-sent requests past the
connection cap, slow /ask calls of one organisation, SIGHUPs in a burst, one bucket folder spelled three
ways, a 510-deep path, and the index root kept out of tenant-facing messages."""

from __future__ import annotations

import asyncio
import bz2
import gzip
import io
import lzma
import os
import resource
import signal
import socket
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import pytest
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from answer.serving.connections import BODY_IDLE_TIMEOUT_S, HEADER_TIMEOUT_S
from answer.serving.orgs import MAX_CONCURRENT, token_sha256
from answer.serving.tool_contracts import MAX_QUESTION_CHARS
from tests.support.fake_llm import FakeLLM, Reply
from tests.support.servers import free_port, wait_until_healthy

TOKEN_A = "bounds-token-of-acme-0123456789"
TOKEN_B = "bounds-token-of-globex-98765432"
TOKEN_C = "bounds-token-of-initech-5555555"
LLM_DELAY_S = 6.0
FD_LIMIT = 512  # the server's file-descriptor limit here: its connection cap is half of it

FILES = {"pkg/engine.py": "def start_engine(speed):\n    return spin(speed)\n\n\ndef spin(speed):\n"
                          "    return speed * 2\n",
         "pkg/util.py": "def clamp(x, low, high):\n    return max(low, min(x, high))\n"}


def _orgs_text(base: Path, *, with_c: bool = False) -> str:
    text = (f'[orgs.acme]\ntoken_sha256 = "{token_sha256(TOKEN_A)}"\nindex_root = "{base / "a"}"\n\n'
            f'[orgs.globex]\ntoken_sha256 = "{token_sha256(TOKEN_B)}"\nindex_root = "{base / "b"}"\n')
    if with_c:
        text += f'\n[orgs.initech]\ntoken_sha256 = "{token_sha256(TOKEN_C)}"\nindex_root = "{base / "c"}"\n'
    return text


@pytest.fixture(scope="module")
def slow_llm() -> Iterator[dict[str, Any]]:
    """A model that takes LLM_DELAY_S per answer; counts the calls in flight and their peak."""
    state = {"now": 0, "peak": 0, "lock": threading.Lock()}

    def respond(_body: dict[str, Any]) -> Reply:
        with state["lock"]:  # type: ignore[attr-defined]
            state["now"] += 1
            state["peak"] = max(state["peak"], state["now"])
        time.sleep(LLM_DELAY_S)
        with state["lock"]:  # type: ignore[attr-defined]
            state["now"] -= 1
        return Reply.ok({"answer": "It spins.", "citations": []})

    with FakeLLM(responder=respond) as llm:
        state["url"] = llm.base_url
        yield state


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, slow_llm: dict[str, Any]) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("bounds")
    orgs = base / "orgs.toml"
    orgs.write_text(_orgs_text(base), encoding="utf-8")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}
    env.update({"XDG_STATE_HOME": str(base / "state"), "SOURCEBOOK_EMBEDDER": "none",
                "SOURCEBOOK_LLM_BASE_URL": slow_llm["url"], "SOURCEBOOK_LLM_MODEL": "fake-model",
                "SOURCEBOOK_LLM_API_KEY": "test-key", "SOURCEBOOK_LLM_MAX_RETRIES": "0",
                "SOURCEBOOK_LLM_MAX_REASKS": "0", "SOURCEBOOK_LLM_TIMEOUT": "60"})
    log = (base / "server.log").open("wb")
    proc = subprocess.Popen([sys.executable, "-m", "sourcebook.cli", "serve", "--orgs", str(orgs),
                             "--port", str(port)], env=env, cwd=base, stdout=log, stderr=log)
    # its connection cap is half its file-descriptor limit: lowered so that the test can pass it
    hard = resource.getrlimit(resource.RLIMIT_NOFILE)[1]
    resource.prlimit(proc.pid, resource.RLIMIT_NOFILE, (FD_LIMIT, hard))
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(proc, url)
        yield {"url": url, "port": port, "base": base, "proc": proc, "orgs": orgs,
               "log": base / "server.log"}
    finally:
        if proc.poll() is None:
            proc.terminate()
            proc.wait(timeout=20)
        log.close()


def _call(server: dict[str, Any], method: str, path: str, token: str = TOKEN_A,
          **kwargs: Any) -> httpx.Response:
    return httpx.request(method, server["url"] + path, headers={"Authorization": f"Bearer {token}"},
                         timeout=60, **kwargs)


def _tar(entries: dict[str, bytes], *, fmt: int = tarfile.PAX_FORMAT) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as archive:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _push_tar(server: dict[str, Any], body: bytes, token: str = TOKEN_A, **params: str) -> httpx.Response:
    return httpx.post(server["url"] + "/index", params=params, content=body, timeout=60,
                      headers={"Content-Type": "application/x-tar", "Authorization": f"Bearer {token}"})


def _repos(server: dict[str, Any], token: str = TOKEN_A) -> list[str]:
    reply = _call(server, "GET", "/health", token)
    assert reply.status_code == 200, reply.text
    return list(reply.json()["repos"])


@pytest.fixture(scope="module")
def engines(server: dict[str, Any]) -> str:
    reply = _push_tar(server, _tar({k: v.encode() for k, v in FILES.items()}), repo="engines")
    assert reply.status_code == 200, reply.text
    reply = _push_tar(server, _tar({k: v.encode() for k, v in FILES.items()}), token=TOKEN_B, repo="gears")
    assert reply.status_code == 200, reply.text
    return "engines"


def _indexed(server: dict[str, Any], repo: str) -> int:
    reply = _call(server, "GET", "/structure", params={"repo": repo})
    assert reply.status_code == 200, reply.text
    return int(reply.json()["files"])


# ---------------------------------------------------------------- pushes


@pytest.mark.parametrize("compress", [gzip.compress, bz2.compress, lzma.compress])
def test_a_compressed_tar_is_refused_unread(server: dict[str, Any], compress: Any) -> None:
    # a bomb: 60 MB of zeros in one member, a few kilobytes compressed
    bomb = io.BytesIO()
    with tarfile.open(fileobj=bomb, mode="w") as archive:
        info = tarfile.TarInfo("big.py")
        info.size = 60_000_000
        archive.addfile(info, io.BytesIO(bytes(info.size)))
    body = compress(bomb.getvalue())
    assert len(body) < 200_000
    reply = _push_tar(server, body, repo="bombed")
    assert reply.status_code == 400, reply.text
    assert "uncompressed tar" in reply.json()["message"]
    assert "bombed" not in _repos(server)


def test_a_tar_cut_at_a_member_boundary_is_refused_and_prunes_nothing(server: dict[str, Any],
                                                                        engines: str) -> None:
    whole = _tar({"pkg/engine.py": FILES["pkg/engine.py"].encode()})
    end = 512 + 512  # one header and one data block: the archive cut right after its only member
    reply = _push_tar(server, whole[:end], repo=engines, prune="true")
    assert reply.status_code == 400, reply.text
    assert "end-of-archive" in reply.json()["message"]
    assert _indexed(server, engines) == 2  # nothing pruned
    assert _push_tar(server, whole[:end + 512], repo=engines, prune="true").status_code == 400  # one block


@pytest.mark.parametrize("path", ["%2e%2e/evil.py", "pkg/%2E/x.py", "\uff0e\uff0e/evil.py", "pkg/\uff0e/x.py",
                                  "%2fetc/x.py", "pkg/a\u2028b.py", "pkg/a\x7fb.py", "pkg/a\x85b.py"])
def test_paths_are_checked_after_decoding(server: dict[str, Any], path: str) -> None:
    json_reply = _call(server, "POST", "/index", json={"repo": "decoded", "files": [
        {"path": path, "content": "x = 1\n"}]})
    assert json_reply.status_code == 400, json_reply.text
    tar_reply = _push_tar(server, _tar({path: b"x = 1\n"}), repo="decoded")
    assert tar_reply.status_code == 400, tar_reply.text
    assert "decoded" not in _repos(server)


def test_a_non_utf8_path_is_a_400_and_creates_no_repository(server: dict[str, Any]) -> None:
    raw_name = b"pkg/caf\xe9.py".decode("utf-8", "surrogateescape")  # how tarfile reads such a name
    body = _tar({raw_name: b"x = 1\n", "pkg/ok.py": b"y = 2\n"}, fmt=tarfile.GNU_FORMAT)
    assert b"caf\xe9.py" in body
    reply = _push_tar(server, body, repo="outage")
    assert reply.status_code == 400, reply.text
    assert "not valid UTF-8" in reply.json()["message"]
    assert "outage" not in _repos(server)
    assert not (server["base"] / "a" / "outage").exists()


@pytest.mark.parametrize("name", ["newline\n", "tab\tname", "nul\x00", "del\x7f", "trail\r"])
def test_repository_names_with_control_characters_are_refused(server: dict[str, Any], name: str) -> None:
    reply = _call(server, "POST", "/index", json={"repo": name, "files": [{"path": "a.py",
                                                                            "content": "x=1\n"}]})
    assert reply.status_code == 400, reply.text
    assert _push_tar(server, _tar({"a.py": b"x = 1\n"}), repo=name).status_code == 400
    assert not [r for r in _repos(server) if r.startswith(name[:3])]


def test_a_510_deep_path_still_gives_a_structure(server: dict[str, Any]) -> None:
    deep = "/".join(["d"] * 509 + ["f.py"])
    assert len(deep) <= 1024
    reply = _call(server, "POST", "/index", json={"repo": "deep", "files": [{"path": deep,
                                                                            "content": "x = 1\n"}]})
    assert reply.status_code == 200, reply.text
    tree = _call(server, "GET", "/structure", params={"repo": "deep"})
    assert tree.status_code == 200, tree.text
    node, depth = tree.json()["tree"], 0
    while node.get("children"):
        node, depth = node["children"][0], depth + 1
    assert node["path"] == deep
    assert depth <= 66


def test_tenant_messages_never_show_the_index_root(server: dict[str, Any]) -> None:
    assert _call(server, "POST", "/index", json={"repo": "emptied", "files": [
        {"path": "a.py", "content": "x = 1\n"}]}).status_code == 200
    root = str(server["base"] / "a")
    # a prune to no files at all is refused, naming the index
    refused = _push_tar(server, _tar({}), repo="emptied", prune="true")
    assert refused.status_code == 409, refused.text
    assert "<index root>/emptied" in refused.text
    replies = [refused, _call(server, "GET", "/search", params={"repo": "emptied", "q": "x"}),
               _call(server, "GET", "/file", params={"repo": "emptied", "path": "nope.py"}),
               _push_tar(server, b"\x00" * 100, repo="emptied"),
               _call(server, "POST", "/index", json={"repo": "emptied", "files": [{"path": "../x.py",
                                                                                   "content": ""}]})]
    for reply in replies:
        assert root not in reply.text, reply.text


# ---------------------------------------------------------------- bounded work per request


def test_a_regex_that_expands_without_end_is_refused_before_compiling(server: dict[str, Any],
                                                                      engines: str) -> None:
    started = time.monotonic()
    reply = _call(server, "GET", "/search", params={"repo": engines, "type": "regex",
                                                    "q": "(?:(?:x{1000}){1000}){30}"})
    assert reply.status_code == 400, reply.text
    assert "expands to more than" in reply.json()["message"]
    assert time.monotonic() - started < 10  # the compile alone took 18-24 s
    ok = _call(server, "GET", "/search", params={"repo": engines, "type": "regex", "q": r"def \w+\(speed"})
    assert ok.status_code == 200, ok.text
    assert ok.json()["hits"]


def test_every_string_argument_is_capped_on_http_and_mcp(server: dict[str, Any], engines: str) -> None:
    long_question = "how does a and " * (MAX_QUESTION_CHARS // 10)
    for reply in (_call(server, "GET", "/ask", params={"q": long_question, "repo": engines}),
                  _call(server, "POST", "/ask", json={"question": long_question, "repo": engines}),
                  _call(server, "GET", "/search", params={"q": "x" * 5000, "repo": engines}),
                  _call(server, "GET", "/symbol", params={"name": "x" * 1001, "repo": engines}),
                  _call(server, "GET", "/structure", params={"scope": "a/" * 600, "repo": engines})):
        assert reply.status_code == 400, reply.text
    schema = httpx.get(server["url"] + "/openapi.json", headers={"Authorization": f"Bearer {TOKEN_A}"}).json()
    params = {p["name"]: p["schema"] for p in schema["paths"]["/ask"]["get"]["parameters"]}
    assert params["question"]["anyOf"][0]["maxLength"] == MAX_QUESTION_CHARS

    async def over_mcp() -> tuple[Any, Any]:
        async with httpx.AsyncClient(headers={"Authorization": f"Bearer {TOKEN_A}"}, timeout=60) as http, \
                Client(streamable_http_client(server["url"] + "/mcp", http_client=http)) as client:
            listed = {tool.name: tool for tool in (await client.list_tools()).tools}
            result = await client.call_tool("get_answer", {"question": long_question, "repo": engines})
            return listed["get_answer"].input_schema, result

    input_schema, result = asyncio.run(over_mcp())
    assert input_schema["properties"]["question"]["maxLength"] == MAX_QUESTION_CHARS
    assert result.is_error


def test_an_over_long_question_is_refused_by_the_cli(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n", encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}
    env["XDG_STATE_HOME"] = str(tmp_path / "state")
    done = subprocess.run([sys.executable, "-m", "sourcebook.cli", "ask", "a" * (MAX_QUESTION_CHARS + 1),
                           "--path", str(tmp_path)], env=env, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode == 2, done.stderr
    assert "at most 10000 characters" in done.stderr


# ---------------------------------------------------------------- fairness and connections


def test_one_orgs_slow_asks_never_hold_anothers_requests(server: dict[str, Any], engines: str,
                                                         slow_llm: dict[str, Any]) -> None:
    finished: list[float] = []
    assert _call(server, "GET", "/search", TOKEN_B, params={"repo": "gears", "q": "clamp"}).status_code == 200

    def ask(_n: int) -> int:
        reply = _call(server, "POST", "/ask", json={"question": "How does start_engine spin?",
                                                    "repo": engines})
        finished.append(time.monotonic())
        return reply.status_code

    with ThreadPoolExecutor(45) as pool:
        statuses = pool.map(ask, range(45))
        time.sleep(1.5)  # the flood is in: acme's calls hold the model
        other = [_call(server, "GET", "/search", TOKEN_B, params={"repo": "gears", "q": "clamp"}),
                 _call(server, "GET", "/health", TOKEN_B), _call(server, "GET", "/health", TOKEN_A)]
        answered = time.monotonic()
        statuses = list(statuses)
    assert all(r.status_code == 200 for r in other), [r.text for r in other]
    assert answered < min(finished)  # globex (and acme's own /health) answered before any acme /ask ended
    assert set(statuses) == {200}
    assert slow_llm["peak"] <= MAX_CONCURRENT  # never more of acme's calls at once than its share


def _half_sent(port: int) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=5)
    sock.sendall(b"GET /health HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
    return sock


def test_half_sent_requests_are_evicted_and_timed_out(server: dict[str, Any]) -> None:
    size_before = server["log"].stat().st_size
    slow = [_half_sent(server["port"]) for _ in range(FD_LIMIT)]  # past the cap (FD_LIMIT / 2)
    try:
        # a new client still gets in: the longest-waiting half-sent connections made room
        with httpx.Client(timeout=10) as client:
            for _ in range(5):
                reply = client.get(server["url"] + "/health", headers={"Authorization": f"Bearer {TOKEN_B}"})
                assert reply.status_code == 200
        closed = 0
        deadline = time.monotonic() + HEADER_TIMEOUT_S + 10
        for sock in slow:
            sock.settimeout(max(0.1, deadline - time.monotonic()))
            try:
                closed += sock.recv(1) == b""
            except ConnectionResetError:
                closed += 1
            except TimeoutError:
                pass
        assert closed == len(slow)  # each one evicted or past its header deadline
    finally:
        for sock in slow:
            sock.close()
    assert server["log"].stat().st_size - size_before < 50_000


def test_the_header_deadline_never_cuts_a_request_whose_headers_are_whole(server: dict[str, Any]) -> None:
    # headers whole, the body sent only after the header deadline has passed: the request is answered
    sock = socket.create_connection(("127.0.0.1", server["port"]), timeout=5)
    sock.sendall(b"POST /remember HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN_A.encode()
                 + b"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
    time.sleep(HEADER_TIMEOUT_S + 1)  # past the header deadline: the headers were whole, so no effect
    sock.sendall(b'"text": "x"}' + b" " * 87)
    sock.settimeout(30)
    assert sock.recv(100).startswith(b"HTTP/1.1 ")
    sock.close()


@pytest.mark.slow  # waits out the 30 s body idle timeout
def test_a_body_that_stops_arriving_is_timed_out(server: dict[str, Any]) -> None:
    sock = socket.create_connection(("127.0.0.1", server["port"]), timeout=5)
    sock.sendall(b"POST /remember HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: Bearer " + TOKEN_A.encode()
                 + b"\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{")
    started = time.monotonic()
    sock.settimeout(BODY_IDLE_TIMEOUT_S + 20)
    try:
        data = sock.recv(100)
    except ConnectionResetError:
        data = b""
    waited = time.monotonic() - started
    sock.close()
    assert data == b"" or not data.startswith(b"HTTP/1.1 2")  # closed (or refused), never answered as whole
    assert BODY_IDLE_TIMEOUT_S - 1 <= waited < BODY_IDLE_TIMEOUT_S + 20


# ---------------------------------------------------------------- reload and roots


def test_sighups_in_a_burst_reload_once_more_and_sigterm_still_stops(server: dict[str, Any]) -> None:
    server["orgs"].write_text(_orgs_text(server["base"], with_c=True), encoding="utf-8")
    for _ in range(10):
        server["proc"].send_signal(signal.SIGHUP)
        time.sleep(0.02)
    deadline = time.monotonic() + 20
    while _call(server, "GET", "/health", TOKEN_C).status_code != 200:
        assert time.monotonic() < deadline, "the reload never took the new organisation"
        time.sleep(0.2)
    assert _call(server, "GET", "/health", TOKEN_B).status_code == 200
    server["proc"].terminate()
    assert server["proc"].wait(timeout=15) is not None


@pytest.mark.parametrize("spelling", ["S3://b/acme", "s3://b/%61cme", "s3://b/./acme", "s3://b//acme/",
                                      "s3://b/acme/sub"])
def test_one_bucket_folder_spelled_differently_is_one_root(tmp_path: Path, spelling: str) -> None:
    orgs = tmp_path / "orgs.toml"
    orgs.write_text(f'[orgs.acme]\ntoken_sha256 = "{token_sha256(TOKEN_A)}"\nindex_root = "s3://b/acme"\n\n'
                    f'[orgs.globex]\ntoken_sha256 = "{token_sha256(TOKEN_B)}"\nindex_root = "{spelling}"\n',
                    encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}
    done = subprocess.run([sys.executable, "-m", "sourcebook.cli", "serve", "--orgs", str(orgs), "--port",
                           str(free_port())], env=env, capture_output=True, text=True, timeout=60,
                          check=False)
    assert done.returncode != 0
    assert "overlaps" in done.stderr
