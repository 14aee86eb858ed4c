"""Build into a real S3-protocol server (moto on 127.0.0.1), then answer from other processes with no
checkout: HTTP and MCP servers started in an empty folder, as another user, with only `--index-uri`.
Then publish a new index while two server replicas are under load: no request fails, every answer comes
from one published state (old or new, never a mix), and both replicas move to the new one.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.object_store import AWS_KEYS, DEMO_FILES, MotoS3
from tests.support.servers import sourcebook_serve

ROOT = Path(__file__).resolve().parents[2]
FILES = DEMO_FILES
EXTRA = ("pkg/extra.py", '"""Extra."""\n\n\ndef zebrafish(count):\n    """Count zebrafish."""\n'
                         "    return count + 1\n")


def _env(s3: MotoS3, state: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SOURCEBOOK_", "OPENAI_")) and k not in AWS_KEYS}
    env.update(s3.env)
    env.update({"PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1", "NO_COLOR": "1",
                "XDG_STATE_HOME": str(state)})
    env.update(extra)
    return env


def _git(root: Path, *args: str) -> str:
    proc = subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", str(root),
                           *args], capture_output=True, text=True, check=True)
    return proc.stdout.strip()


def _sourcebook(args: list[str], env: dict[str, str], cwd: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "sourcebook.cli", *args], env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stderr[-2000:]


class Published:
    """A git repository built into a bucket by `sourcebook build --index-uri` (the CI side)."""

    def __init__(self, base: Path, s3: MotoS3) -> None:
        self.s3 = s3
        self.root = base / "repo"
        for rel, text in FILES.items():
            (self.root / rel).parent.mkdir(parents=True, exist_ok=True)
            (self.root / rel).write_text(text, encoding="utf-8")
        _git(self.root, "init", "-q")
        _git(self.root, "add", "-A")
        _git(self.root, "commit", "-qm", "first")
        self.commit = _git(self.root, "rev-parse", "HEAD")
        self.uri = s3.bucket() + "/demo/index"
        self.ci_env = _env(s3, base / "ci-state")
        _sourcebook(["build", str(self.root), "--index-uri", self.uri, "--no-site"], self.ci_env, base)
        self.empty = base / "no-checkout"  # where the servers run (no repository there or above it)
        self.empty.mkdir()
        self.server_env = _env(s3, base / "server-state", SOURCEBOOK_INDEX_REFRESH_S="0.3")

    def publish_extra(self) -> str:
        """A new commit, indexed into the same URI: the publish the servers must pick up."""
        rel, text = EXTRA
        (self.root / rel).write_text(text, encoding="utf-8")
        _git(self.root, "add", "-A")
        _git(self.root, "commit", "-qm", "extra")
        _sourcebook(["index", str(self.root), "--index-uri", self.uri], self.ci_env, self.root.parent)
        return _git(self.root, "rev-parse", "HEAD")


@pytest.fixture(scope="module")
def published(tmp_path_factory: pytest.TempPathFactory, moto_s3: MotoS3) -> Published:
    """One build for the read-only tests of this module."""
    return Published(tmp_path_factory.mktemp("published"), moto_s3)


@pytest.fixture
def republished(tmp_path: Path, moto_s3: MotoS3) -> Published:
    """A build of its own, for a test that publishes again."""
    return Published(tmp_path, moto_s3)


def _get(url: str, timeout: float = 30) -> tuple[int, dict[str, Any]]:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.status, json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def _q(**params: Any) -> str:
    return urllib.parse.urlencode(params)


@pytest.fixture
def no_checkout_server(published: Published) -> Iterator[str]:
    # the temp folder is under /tmp: make sure no repository marker sits above the servers' folder
    assert not any((p / ".git").exists() for p in (published.empty, *published.empty.parents))
    with sourcebook_serve(None, args=("--index-uri", published.uri), cwd=published.empty,
                          env=published.server_env) as url:
        yield url


def test_http_server_with_no_checkout_answers_every_tool(published: Published,
                                                         no_checkout_server: str) -> None:
    url = no_checkout_server
    status, tree = _get(f"{url}/structure")
    assert status == 200
    assert (tree["files"], tree["commit"]) == (len(FILES), published.commit)

    status, data = _get(f"{url}/file?{_q(path='pkg/config.py')}")
    assert status == 200
    assert data["content"] == FILES["pkg/config.py"]
    assert data["commit"] == published.commit
    assert _get(f"{url}/file?{_q(path='pkg/absent.py')}")[0] == 404

    status, data = _get(f"{url}/symbol?{_q(name='load_settings')}")
    assert status == 200
    (definition,) = data["definitions"]
    assert definition["body"].startswith("def load_settings(path):")
    assert "return open(path).read()" in definition["body"]
    assert definition["verified"] is True
    assert definition["changed_since_index"] is False  # nothing to compare with: never "stale"
    assert {"path": "pkg/app.py", "qualname": "create_app"} in definition["callers"]

    status, data = _get(f"{url}/context?{_q(targets='load_settings')}")
    assert status == 200
    assert any("return open(path).read()" in span["text"] for span in data["spans"])
    status, data = _get(f"{url}/search?{_q(q='load_settings', type='lexical')}")
    assert status == 200
    assert "pkg/config.py" in {f["path"] for f in data["files"]}

    status, reply = _get(f"{url}/ask?{_q(q='What does load_settings do?')}")
    assert status == 200
    assert reply["_meta"]["commit"] == published.commit
    assert "pkg/config.py" in json.dumps(reply)
    assert "changed on disk" not in (reply.get("note") or "")

    request = urllib.request.Request(f"{url}/index", data=b"{}", method="POST",
                                     headers={"Content-Type": "application/json"})
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=30)
    assert refused.value.code == 400
    assert not (published.empty / ".sourcebook").exists()  # nothing written where the server runs


def test_mcp_server_with_no_checkout_answers(published: Published) -> None:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, cwd=str(published.empty),
                                   args=["-m", "sourcebook.cli", "mcp", "--index-uri", published.uri],
                                   env=published.server_env)

    def data(result: Any) -> dict[str, Any]:
        assert not result.is_error, result.content
        if result.structured_content is not None:
            return dict(result.structured_content)
        return dict(json.loads(result.content[0].text))

    async def run() -> None:
        async with Client(params) as client:
            file = data(await client.call_tool("read_file", {"path": "pkg/app.py"}))
            assert file["content"].startswith('"""The app."""')
            symbol = data(await client.call_tool("get_symbol", {"name": "create_app"}))
            assert 'return load_settings("app.toml")' in symbol["definitions"][0]["body"]
            assert symbol["commit"] == published.commit
            answer = data(await client.call_tool("get_answer", {"question": "how is the app created?"}))
            assert answer["_meta"]["commit"] == published.commit

    asyncio.run(run())


def test_cli_tools_with_no_checkout(published: Published) -> None:
    def run(*args: str) -> str:
        proc = subprocess.run([sys.executable, "-m", "sourcebook.cli", *args, "--index-uri", published.uri],
                              env=published.server_env, cwd=published.empty, capture_output=True, text=True,
                              timeout=120, check=False)
        assert proc.returncode == 0, proc.stderr[-2000:]
        return proc.stdout

    assert run("file", "pkg/config.py").rstrip("\n") == FILES["pkg/config.py"].rstrip("\n")
    found = json.loads(run("search", "load_settings", "--type", "lexical", "--json"))
    assert "pkg/config.py" in {f["path"] for f in found["files"]}


def test_publish_under_load_two_replicas(republished: Published) -> None:
    """Two replicas read one URI while a new index is published: 0 failed requests, every reply from one
    complete state, and both pick the new one up within the refresh interval (0.3 s) plus a query."""
    args = ("--index-uri", republished.uri)
    with sourcebook_serve(None, args=args, cwd=republished.empty, env=republished.server_env) as one, \
            sourcebook_serve(None, args=args, cwd=republished.empty, env=republished.server_env) as two:
        replicas = [one, two]
        seen: list[tuple[int, int, str | None]] = []  # (status, files, commit) of each /structure
        answers: list[tuple[int, str | None]] = []
        failures: list[str] = []
        stop = threading.Event()

        def load(url: str) -> None:
            n = 0
            while not stop.is_set():
                n += 1
                try:
                    status, tree = _get(f"{url}/structure")
                    seen.append((status, tree.get("files", -1), tree.get("commit")))
                    status, data = _get(f"{url}/file?{_q(path='pkg/config.py')}")
                    if status != 200 or "load_settings" not in data.get("content", ""):
                        failures.append(f"/file {status}")
                    status, reply = _get(f"{url}/ask?{_q(q=f'where are settings loaded? {n % 3}')}")
                    answers.append((status, reply.get("_meta", {}).get("commit")))
                except OSError as exc:  # a refused or reset connection is a failure too
                    failures.append(f"{type(exc).__name__}: {exc}")

        workers = [threading.Thread(target=load, args=(url,)) for url in replicas for _ in range(2)]
        for worker in workers:
            worker.start()
        try:
            time.sleep(1.0)
            new_commit = republished.publish_extra()
            published_at = time.monotonic()
            picked_up = {}
            while len(picked_up) < len(replicas) and time.monotonic() - published_at < 30:
                for url in replicas:
                    if url not in picked_up and _get(f"{url}/symbol?{_q(name='zebrafish')}")[0] == 200:
                        picked_up[url] = time.monotonic() - published_at
                time.sleep(0.05)
            time.sleep(0.5)
        finally:
            stop.set()
            for worker in workers:
                worker.join(timeout=60)
    assert failures == []
    assert len(picked_up) == len(replicas), "a replica never saw the new index"
    statuses = {s for s, _, _ in seen} | {s for s, _ in answers}
    assert statuses == {200}
    # one complete state per reply: the old files with the old commit, or the new ones with the new commit
    assert {(files, commit) for _, files, commit in seen} <= {(len(FILES), republished.commit),
                                                              (len(FILES) + 1, new_commit)}
    assert (len(FILES) + 1, new_commit) in {(files, commit) for _, files, commit in seen}
    assert {commit for _, commit in answers} <= {republished.commit, new_commit}
    print(f"replicas picked the publish up after {sorted(round(s, 2) for s in picked_up.values())} s; "
          f"{len(seen) + len(answers)} requests during the run, 0 failed")
