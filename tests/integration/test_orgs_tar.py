"""Tar pushes (`POST /index` with `Content-Type: application/x-tar`, repo and prune in the query string)
through a real `sourcebook serve --orgs` on 127.0.0.1: the same validation and limits as JSON pushes, links
and devices refused, a body past the cap refused while it streams, and the pushed files served back."""

from __future__ import annotations

import io
import os
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from answer.serving.orgs import token_sha256
from answer.serving.pushes import PushLimits, tar_body_cap
from tests.support.servers import free_port

TOKEN_A = "tar-token-of-acme-0123456789"
TOKEN_B = "tar-token-of-globex-987654321"
LIMITS = PushLimits(max_file_bytes=4000, max_request_bytes=30_000, max_files=12)  # acme's, below

TREE = {
    "./pkg/engine.py": ('"""The tarred engine."""\n\n\ndef start_engine(speed):\n'
                        '    """Start the engine (tarmarker_acme)."""\n    return spin(speed)\n\n\n'
                        "def spin(speed):\n    return speed * 2\n"),
    "./pkg/util.py": "def clamp(x, low, high):\n    return max(low, min(x, high))\n",
    "./README.md": "# Acme\n\nThe tarmarker_acme project starts engines.\n",
}


def _tar(entries: dict[str, str | bytes], extra: list[tarfile.TarInfo] = ()) -> bytes:  # type: ignore[assignment]
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as archive:
        folder = tarfile.TarInfo("./pkg")
        folder.type = tarfile.DIRTYPE
        archive.addfile(folder)
        for name, content in entries.items():
            data = content.encode() if isinstance(content, str) else content
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
        for info in extra:
            archive.addfile(info)
    return buf.getvalue()


def _special(name: str, kind: bytes, target: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type = kind
    info.linkname = target
    return info


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("orgs-tar")
    orgs = base / "orgs.toml"
    orgs.write_text(f'[orgs.acme]\ntoken_sha256 = "{token_sha256(TOKEN_A)}"\nindex_root = "{base / "a"}"\n'
                    f"max_file_bytes = {LIMITS.max_file_bytes}\n"
                    f"max_request_bytes = {LIMITS.max_request_bytes}\n"
                    f"max_files = {LIMITS.max_files}\n\n"
                    f'[orgs.globex]\ntoken_sha256 = "{token_sha256(TOKEN_B)}"\nindex_root = "{base / "b"}"\n',
                    encoding="utf-8")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}
    env.update({"XDG_STATE_HOME": str(base / "state"), "SOURCEBOOK_EMBEDDER": "none",
                "TMPDIR": str(base / "tmp")})  # where the server spools tar bodies: looked at below
    (base / "tmp").mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "sourcebook.cli", "serve", "--orgs", str(orgs),
                             "--port", str(port)], env=env, cwd=base, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 60
    while True:
        try:
            httpx.get(f"{url}/health", timeout=2)
            break
        except httpx.TransportError:
            if proc.poll() is not None:
                raise RuntimeError(proc.stderr.read().decode() if proc.stderr else "server died") from None
            if time.monotonic() > deadline:
                raise
            time.sleep(0.1)
    try:
        yield {"url": url, "base": base}
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _push(server: dict[str, Any], body: Any, token: str | None = TOKEN_A, **params: str) -> httpx.Response:
    headers = {"Content-Type": "application/x-tar"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    return httpx.post(server["url"] + "/index", params=params, content=body, headers=headers, timeout=60)


def _get(server: dict[str, Any], endpoint: str, token: str = TOKEN_A, **params: str) -> httpx.Response:
    return httpx.get(server["url"] + endpoint, params=params, headers={"Authorization": f"Bearer {token}"},
                     timeout=60)


@pytest.fixture(scope="module")
def pushed(server: dict[str, Any]) -> dict[str, Any]:
    reply = _push(server, _tar(TREE), repo="engines", commit="v1.2.3")
    assert reply.status_code == 200, reply.text
    return reply.json()


def test_a_tar_push_is_indexed_and_served(server: dict[str, Any], pushed: dict[str, Any]) -> None:
    assert pushed["pushed"] == {"indexed": 3, "unchanged": 0, "deleted": 0, "skipped": 0}
    assert pushed["commit"] == "v1.2.3"
    assert sorted(pushed["requested"]) == ["README.md", "pkg/engine.py", "pkg/util.py"]  # "./" dropped
    read = _get(server, "/file", repo="engines", path="pkg/engine.py").json()
    assert "tarmarker_acme" in read["content"]
    hits = _get(server, "/search", repo="engines", q="start_engine", type="symbolic").json()["hits"]
    assert hits[0]["path"] == "pkg/engine.py"
    # the other org sees nothing of it
    other = _get(server, "/file", token=TOKEN_B, repo="engines", path="pkg/engine.py")
    assert other.status_code == 404
    assert not list((server["base"] / "tmp").iterdir())  # the spooled body is gone


def test_unchanged_files_are_skipped_and_prune_syncs(server: dict[str, Any], pushed: dict[str, Any]) -> None:
    again = _push(server, _tar(TREE), repo="engines").json()
    assert again["pushed"] == {"indexed": 0, "unchanged": 3, "deleted": 0, "skipped": 0}
    smaller = {k: v for k, v in TREE.items() if k != "./pkg/util.py"}
    synced = _push(server, _tar(smaller), repo="engines", prune="true").json()
    assert synced["pushed"] == {"indexed": 0, "unchanged": 2, "deleted": 1, "skipped": 0}
    assert synced["removed"] == ["pkg/util.py"]
    assert _get(server, "/file", repo="engines", path="pkg/util.py").status_code == 404


def test_links_devices_and_bad_paths_are_refused_and_nothing_written(server: dict[str, Any],
                                                                   pushed: dict[str, Any]) -> None:
    before = _get(server, "/structure", repo="engines").json()
    bad = {"pkg/new.py": "x = 1\n", "/etc/abs.py": "x = 2\n", "pkg/../../escape.py": "x = 3\n",
           "pkg/huge.py": "#" * 5000}
    extra = [_special("pkg/link.py", tarfile.SYMTYPE, "/etc/passwd"),
             _special("pkg/hard.py", tarfile.LNKTYPE, "pkg/new.py"),
             _special("pkg/dev", tarfile.CHRTYPE), _special("pkg/fifo", tarfile.FIFOTYPE)]
    reply = _push(server, _tar(bad, extra), repo="engines")
    assert reply.status_code == 400, reply.text
    problems = "\n".join(reply.json()["problems"])
    for needle in ("'/etc/abs.py': the path is absolute", "'pkg/../../escape.py': the path climbs out",
                   "'pkg/huge.py': 5,000 bytes", "'pkg/link.py': a symbolic link",
                   "'pkg/hard.py': a hard link",
                   "'pkg/dev': a device", "'pkg/fifo': a FIFO"):
        assert needle in problems
    assert "pkg/new.py" not in problems
    assert _get(server, "/structure", repo="engines").json() == before


def test_limits_and_malformed_bodies(server: dict[str, Any], pushed: dict[str, Any]) -> None:
    too_many = {f"./many/f{i}.py": f"x = {i}\n" for i in range(LIMITS.max_files + 1)}
    reply = _push(server, _tar(too_many), repo="engines")
    assert reply.status_code == 400
    assert "more than the 12 entries" in reply.json()["problems"][0]
    heavy = {f"./heavy/f{i}.py": "#" * 3900 for i in range(8)}  # each under 4000, 31,200 in all
    reply = _push(server, _tar(heavy), repo="engines")
    assert reply.status_code == 400
    assert "30,000 bytes in all" in reply.json()["problems"][-1]
    assert _push(server, b"not a tar archive at all" * 40, repo="engines").status_code == 400
    assert _push(server, _tar(TREE), repo="engines", force="1").status_code == 400
    assert _push(server, _tar(TREE), repo="engines", prune="maybe").status_code == 400
    assert _push(server, _tar(TREE), token=None, repo="engines").status_code == 401
    assert _push(server, _tar(TREE), token="wrong", repo="engines").status_code == 401


def test_a_body_past_the_cap_is_refused_while_it_streams(server: dict[str, Any]) -> None:
    cap = tar_body_cap(LIMITS)
    sent = 0

    def chunks() -> Iterator[bytes]:  # no Content-Length: chunked, so only the stream's count can stop it
        nonlocal sent
        while sent < cap * 4:
            sent += 65536
            yield b"\0" * 65536

    try:
        reply = _push(server, chunks(), repo="engines")
    except httpx.HTTPError:  # the server may answer and close before the client finished sending
        reply = None
    if reply is not None:
        assert reply.status_code == 413
    announced = _push(server, b"\0" * (cap + 1), repo="engines")
    assert announced.status_code == 413
    assert not list((server["base"] / "tmp").iterdir())


def test_the_other_org_pushes_a_tar_into_its_own_index(server: dict[str, Any],
                                                      pushed: dict[str, Any]) -> None:
    body = _tar({"./src/ledger.py": "class Ledger:\n    pass\n"})
    reply = _push(server, body, token=TOKEN_B, repo="ledger")
    assert reply.status_code == 200, reply.text
    assert _get(server, "/file", token=TOKEN_B, repo="ledger", path="src/ledger.py").status_code == 200
    assert _get(server, "/file", repo="ledger", path="src/ledger.py").status_code == 404
    assert Path(server["base"] / "b").is_dir()
