"""A push to a repository a server already answers from: the previous version keeps answering, whole, while
the new one is opened and its memos built in the background, then swapped in
(answer/serving/repo_state.py). One
real `sourcebook serve --orgs` on 127.0.0.1 whose warm-ups are made slow (SOURCEBOOK_TEST_WARM_DELAY) and
whose readers do not wait for them (SOURCEBOOK_INDEX_SWAP_WAIT_S=0), so the overlap is observable."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from answer.serving.orgs import token_sha256
from tests.support.servers import free_port, wait_until_healthy

TOKEN = "token-of-the-warm-org-01234"
WARM_DELAY_S = 4.0
OLD = {"lib/pump.py": '"""The heronpelican pump."""\n\n\ndef prime_pump(litres):\n    return litres * 3\n'}
NEW = {"lib/valve.py": '"""The ospreykestrel valve."""\n\n\ndef open_valve(turns):\n    return turns + 1\n'}
SWAPPED = "warmed in the background"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    base = tmp_path_factory.mktemp("orgs-warm")
    orgs = base / "orgs.toml"
    orgs.write_text(f'[orgs.acme]\ntoken_sha256 = "{token_sha256(TOKEN)}"\nindex_root = "{base / "db"}"\n',
                    encoding="utf-8")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}
    env.update({"XDG_STATE_HOME": str(base / "state"), "SOURCEBOOK_EMBEDDER": "none",
                "SOURCEBOOK_TEST_WARM_DELAY": str(WARM_DELAY_S), "SOURCEBOOK_INDEX_SWAP_WAIT_S": "0"})
    log = base / "server.log"
    with log.open("wb") as err:
        proc = subprocess.Popen([sys.executable, "-m", "sourcebook.cli", "-v", "serve", "--orgs", str(orgs),
                                 "--port", str(port)], env=env, cwd=base, stdout=subprocess.DEVNULL,
                                stderr=err)
    url = f"http://127.0.0.1:{port}"
    wait_until_healthy(proc, url, 60)
    try:
        yield {"url": url, "log": log}
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def _call(server: dict[str, Any], method: str, path: str, **kwargs: Any) -> httpx.Response:
    reply = httpx.request(method, server["url"] + path, headers={"Authorization": f"Bearer {TOKEN}"},
                          timeout=60, **kwargs)
    assert reply.status_code == 200, reply.text
    return reply


def _paths(server: dict[str, Any], query: str, tier: str) -> set[str]:
    found = _call(server, "GET", "/search", params={"repo": "plant", "q": query, "type": tier}).json()
    assert not found["degraded"], found
    return {h["path"] for h in found["hits"]} | {f["path"] for f in found["files"]}


def _listing(server: dict[str, Any]) -> set[str]:
    """The file paths of /structure's tree."""
    found: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            if node.get("type") == "file":
                found.add(node["path"])
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(_call(server, "GET", "/structure", params={"repo": "plant"}).json())
    return found


def _swaps(log: Path) -> int:
    return log.read_text(encoding="utf-8", errors="replace").count(SWAPPED)


def test_a_push_is_warmed_in_the_background_while_the_last_version_answers(server: dict[str, Any]) -> None:
    _call(server, "POST", "/index", json={"repo": "plant", "files": [
        {"path": p, "content": c} for p, c in OLD.items()]})
    # the first open of a repository builds on demand, as before: no previous version to answer from
    assert _paths(server, "heronpelican", "lexical") == {"lib/pump.py"}
    assert _paths(server, "prime_pump", "symbolic") >= {"lib/pump.py"}
    assert _swaps(server["log"]) == 0

    pushed = _call(server, "POST", "/index", json={"repo": "plant", "prune": True, "files": [
        {"path": p, "content": c} for p, c in NEW.items()]}).json()
    # the push diffed against the newest version, not the one still served: the old file is deleted
    assert pushed["pushed"] == {"indexed": 1, "unchanged": 0, "deleted": 1, "skipped": 0}, pushed
    started = time.monotonic()
    # right after the push: answered at once, from the previous version as a whole (never a mix)
    lexical_old = _paths(server, "heronpelican", "lexical")
    lexical_new = _paths(server, "ospreykestrel", "lexical")
    symbolic_old = _paths(server, "prime_pump", "symbolic")
    listing = _listing(server)
    old_file = _call(server, "GET", "/file", params={"repo": "plant", "path": "lib/pump.py"}).json()
    elapsed = time.monotonic() - started
    assert elapsed < WARM_DELAY_S, f"the readers waited for the warm-up ({elapsed:.1f}s)"
    assert _swaps(server["log"]) == 0, "swapped before the warm-up's delay ran out"
    assert (lexical_old, lexical_new, symbolic_old) == ({"lib/pump.py"}, set(), {"lib/pump.py"})
    assert listing == {"lib/pump.py"}
    assert "heronpelican" in old_file["content"]

    # once warm, the new version is swapped in whole, built by the background thread
    deadline = time.monotonic() + 60
    while _swaps(server["log"]) == 0:
        assert time.monotonic() < deadline, server["log"].read_text()
        time.sleep(0.2)
    started = time.monotonic()
    assert _paths(server, "ospreykestrel", "lexical") == {"lib/valve.py"}
    assert _paths(server, "heronpelican", "lexical") == set()
    assert _paths(server, "open_valve", "symbolic") >= {"lib/valve.py"}
    listing = _listing(server)
    assert listing == {"lib/valve.py"}
    assert time.monotonic() - started < WARM_DELAY_S
    assert _swaps(server["log"]) == 1


def test_a_failed_warm_up_logs_once_and_keeps_the_previous_version(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  caplog: pytest.LogCaptureFixture) -> None:
    """The store failing under the warm-up (injected into it: the reads are real LanceDB): one warning,
    the previous version still answers whole, and the new one is tried again later, then served."""
    import answer.retrieval.tiers
    from answer.serving import repo_state
    from answer.serving.orgs import OrgWorkspace, parse_orgs
    from answer.serving.tools import Tools

    monkeypatch.setenv("SOURCEBOOK_EMBEDDER", "none")
    monkeypatch.setenv("SOURCEBOOK_INDEX_SWAP_WAIT_S", "30")  # the reader waits for the warm-up's end
    spec = parse_orgs({"orgs": {"acme": {"token_sha256": token_sha256(TOKEN), "index_root": "db"}}},
                      tmp_path)["acme"]
    env = {"XDG_STATE_HOME": str(tmp_path / "state"), "SOURCEBOOK_EMBEDDER": "none",
           "SOURCEBOOK_INDEX_SWAP_WAIT_S": "30"}
    tools = Tools(OrgWorkspace(spec, env))
    tools.long_lived = True
    tools.index(repo="plant", files=[{"path": p, "content": c} for p, c in OLD.items()])

    def paths(query: str) -> set[str]:
        found = tools.search_codebase(query, "lexical", repo="plant")
        assert not found["degraded"], found
        return {h["path"] for h in found["hits"]}

    assert paths("heronpelican") == {"lib/pump.py"}
    real = answer.retrieval.tiers.warm_store

    def down(store: Any) -> None:
        raise OSError("object store unreachable (injected)")

    monkeypatch.setattr(answer.retrieval.tiers, "warm_store", down)
    tools.index(repo="plant", prune=True, files=[{"path": p, "content": c} for p, c in NEW.items()])
    assert (paths("heronpelican"), paths("ospreykestrel")) == ({"lib/pump.py"}, set())
    failed = [r for r in caplog.records if "could not be warmed" in r.getMessage()]
    assert len(failed) == 1, [r.getMessage() for r in caplog.records]
    # not retried before WARM_RETRY_S: the old version goes on answering without a warning per request
    assert paths("heronpelican") == {"lib/pump.py"}
    assert len([r for r in caplog.records if "could not be warmed" in r.getMessage()]) == 1
    monkeypatch.setattr(answer.retrieval.tiers, "warm_store", real)
    monkeypatch.setattr(repo_state, "WARM_RETRY_S", 0.0)
    st = tools.state("plant")
    st._retry_at = 0.0
    st._checked_at = 0.0
    deadline = time.monotonic() + 30
    while paths("ospreykestrel") != {"lib/valve.py"}:
        assert time.monotonic() < deadline
        st._checked_at = 0.0
        time.sleep(0.05)
    assert paths("heronpelican") == set()
