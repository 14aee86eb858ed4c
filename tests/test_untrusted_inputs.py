"""Untrusted input, round two (issue 25): what a repository could still decide for the user, each break
reproduced through the real CLI, HTTP server or MCP client.

A repository is anything a user clones: a workspace file, a built site, a config setting or a regex pattern
it carries must not choose where keys and code go, run script next to the API, or pin the server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path

from tests.fake_llm import FakeLLM
from tests.servers import sourcebook_serve

SOURCE = {"pkg/__init__.py": "", "pkg/core.py": 'def parse(text):\n    """Parse text."""\n    return text\n'}
USER_KEY = "sk-user-secret-key-0123456789"


def _cli(*args: str, env: dict[str, str] | None = None,
         timeout: float = 240) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}
    return subprocess.run([sys.executable, "-m", "sourcebook.cli", *args], capture_output=True, text=True,
                          env={**base, **(env or {})}, timeout=timeout, check=False)


def _get(url: str, headers: dict[str, str] | None = None, timeout: float = 30) -> tuple[int, bytes]:
    request = urllib.request.Request(url, headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read()


def _checkout(make_repo: Callable[..., Path], files: dict[str, str]) -> Path:
    """A cloned repository: its files and a .git folder (what marks a checkout)."""
    repo = make_repo(files)
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    return repo


# ---------------------------------------------------------------- (1) a committed workspace file

def test_a_committed_workspace_file_cannot_send_the_users_key_elsewhere(
        make_repo: Callable[..., Path], fake_llm: FakeLLM) -> None:
    # at the repository's root, listing a folder below it (the old check trusted it: its own folder is not
    # inside the folder it lists)
    workspace = (f'[repos.app]\npath = "src"\n[repos.app.llm]\nbase_url = "{fake_llm.base_url}"\n'
                 'model = "fake"\n')
    repo = _checkout(make_repo, {**{f"src/{k}": v for k, v in SOURCE.items()},
                                 "sourcebook-workspace.toml": workspace})
    env = {"OPENAI_API_KEY": USER_KEY}
    proc = _cli("index", str(repo / "src"), env=env)
    assert proc.returncode == 0, proc.stderr
    proc = _cli("ask", "what does parse do?", "--path", str(repo), "--no-cache", env=env)
    assert proc.returncode == 0, proc.stderr
    assert fake_llm.requests == []
    assert "llm.base_url" in proc.stderr  # named in the one warning
    # the control: the user's opt-in obeys the file (so the test would see the leak)
    proc = _cli("--trust-repo-config", "ask", "what does parse do?", "--path", str(repo), "--no-cache",
                env=env)
    assert proc.returncode == 0, proc.stderr
    assert fake_llm.auth_headers
    assert fake_llm.auth_headers[0] == f"Bearer {USER_KEY}"


def test_a_committed_workspace_file_cannot_serve_folders_outside_its_repository(
        make_repo: Callable[..., Path], tmp_path: Path) -> None:
    loot = tmp_path / "home-of-user"
    loot.mkdir()
    (loot / "creds.txt").write_text("the user's private file\n", encoding="utf-8")
    repo = _checkout(make_repo, {**SOURCE, "sourcebook-workspace.toml":
                                 f'[repos.app]\npath = "."\n[repos.loot]\npath = "{loot}"\n'
                                 f'out_dir = "{tmp_path / "loot-out"}"\n'})
    assert _cli("index", str(repo)).returncode == 0
    with sourcebook_serve(repo) as url:
        status, body = _get(f"{url}/health")
        assert json.loads(body)["repos"] == ["app"]
        status, body = _get(f"{url}/file?repo=loot&path=creds.txt")
        assert status == 404, body
        assert b"private file" not in body
        status, body = _get(f"{url}/file?repo=app&path=pkg/core.py")
        assert status == 200
        assert b"def parse" in body
    assert not (tmp_path / "loot-out").exists()
