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

from tests.support.fake_llm import FakeLLM
from tests.support.servers import sourcebook_serve

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


# ---------------------------------------------------------------- (5) regex search has a time budget

REPORTED = r"(\w+\s?)*Z"  # the issue's: minutes with re on a 28-letter word, instant with `regex`
CATASTROPHIC = r"(a|aa)+$"  # backtracks without end in either engine: 60 a's are ~10^12 ways to split
BACKTRACK_BAIT = {"sourcebook.toml": '[embed]\nprovider = "none"\n',
                  "pkg/__init__.py": "", "pkg/words.py": "WORDS = '" + "a" * 60 + "!'\n"}


def test_a_catastrophic_regex_is_a_400_and_the_server_keeps_answering(make_repo: Callable[..., Path]) -> None:
    import threading
    import time
    import urllib.parse

    repo = make_repo(BACKTRACK_BAIT)
    assert _cli("index", str(repo)).returncode == 0
    with sourcebook_serve(repo) as url:
        query = urllib.parse.urlencode({"q": CATASTROPHIC, "type": "regex"})
        result: dict[str, object] = {}

        def search() -> None:
            started = time.monotonic()
            result["status"], result["body"] = _get(f"{url}/search?{query}", timeout=60)
            result["seconds"] = time.monotonic() - started

        worker = threading.Thread(target=search)
        worker.start()
        time.sleep(0.3)  # the search is under way
        health = []
        while worker.is_alive():
            started = time.monotonic()
            status, _ = _get(f"{url}/health", timeout=10)
            health.append((status, time.monotonic() - started))
            time.sleep(0.05)
        worker.join()
        assert result["status"] == 400, result
        assert b"budget" in result["body"]  # type: ignore[operator]
        assert result["seconds"] < 5  # type: ignore[operator]
        assert health, "the search ended before /health was asked"
        assert all(status == 200 for status, _ in health)
        assert max(seconds for _, seconds in health) < 0.5, health
        started = time.monotonic()
        status, body = _get(f"{url}/search?{urllib.parse.urlencode({'q': REPORTED, 'type': 'regex'})}")
        assert status in {200, 400}, body
        assert time.monotonic() - started < 3
        # an ordinary pattern still answers
        status, body = _get(f"{url}/search?{urllib.parse.urlencode({'q': 'WORDS = .a+', 'type': 'regex'})}")
        assert status == 200
        assert b"pkg/words.py" in body


def test_a_catastrophic_regex_over_mcp_is_a_tool_error_in_seconds(make_repo: Callable[..., Path]) -> None:
    import asyncio
    import time

    from mcp import Client, StdioServerParameters

    repo = make_repo(BACKTRACK_BAIT)
    assert _cli("index", str(repo)).returncode == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}
    params = StdioServerParameters(command=sys.executable, args=["-m", "sourcebook.cli", "mcp", str(repo)],
                                   env=env)

    async def run() -> tuple[object, float]:
        async with Client(params) as client:
            started = time.monotonic()
            result = await client.call_tool("search_codebase", {"query": CATASTROPHIC, "type": "regex"})
            return result, time.monotonic() - started

    result, seconds = asyncio.run(asyncio.wait_for(run(), timeout=120))
    assert result.is_error  # type: ignore[attr-defined]
    assert "budget" in result.content[0].text  # type: ignore[attr-defined]
    assert seconds < 5


# ---------------------------------------------------------------- (6) costly calls need intent

def test_other_sites_pages_cannot_spend_the_users_provider_calls(make_repo: Callable[..., Path],
                                                                 fake_llm: FakeLLM) -> None:
    import urllib.parse

    repo = make_repo({**SOURCE, "sourcebook.toml": '[embed]\nprovider = "none"\n'})
    assert _cli("index", str(repo)).returncode == 0
    env = {"SOURCEBOOK_LLM_BASE_URL": fake_llm.base_url, "SOURCEBOOK_LLM_MODEL": "fake"}
    question = urllib.parse.urlencode({"q": "what does parse do?"})
    with sourcebook_serve(repo, env=env) as url:
        # <img src=".../ask?q=..."> on a page elsewhere
        status, _ = _get(f"{url}/ask?{question}", {"Sec-Fetch-Site": "cross-site", "Sec-Fetch-Dest": "image"})
        assert status == 403
        status, _ = _get(f"{url}/ask?{question}", {"Origin": "http://evil.example"})
        assert status == 403
        # a cross-site form posting nothing but the query string, and the same form from a browser that
        # sends no Sec-Fetch headers (Origin only), and a form body with no browser headers at all
        for headers in ({"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site"},
                        {"Origin": "null"}, {}):
            form = urllib.request.Request(f"{url}/ask?{question}", data=b"", method="POST",
                                          headers={"Content-Type": "application/x-www-form-urlencoded",
                                                   **headers})
            try:
                with urllib.request.urlopen(form, timeout=30) as response:
                    status = response.status
            except urllib.error.HTTPError as exc:
                status = exc.code
            assert status in {403, 415}, headers
        assert fake_llm.requests == []
        # the wiki's own ask box (same origin) and an agent's client still get answers from the provider
        status, body = _get(f"{url}/ask?{question}", {"Sec-Fetch-Site": "same-origin",
                                                      "Origin": url})
        assert status == 200, body
        assert fake_llm.requests
        calls = len(fake_llm.requests)
        request = urllib.request.Request(f"{url}/ask", data=json.dumps({"q": "and parse?"}).encode(),
                                         headers={"Content-Type": "application/json"}, method="POST")
        with urllib.request.urlopen(request, timeout=60) as response:
            assert response.status == 200
        assert len(fake_llm.requests) > calls


# ---------------------------------------------------------------- (3) a committed site is never served

def test_a_committed_site_is_not_served_and_the_next_build_sets_it_aside(make_repo: Callable[..., Path],
                                                                        tmp_path: Path) -> None:
    repo = make_repo({**SOURCE, "README.md": "# Demo\n\nA demo.\n"})
    # the attacker's build (another user's key), with a script added: what a commit of .sourcebook/ carries
    attacker = {"XDG_STATE_HOME": str(tmp_path / "attacker-state")}
    assert _cli("build", str(repo), "--no-index", env=attacker).returncode == 0
    site = repo / ".sourcebook" / "site"
    (site / "evil.js").write_text("fetch('/ask?repo=other&q=secrets')", encoding="utf-8")
    with sourcebook_serve(repo) as url:
        for page in ("/wiki/", "/wiki/index.html", "/wiki/evil.js"):
            status, body = _get(url + page)
            assert status == 404, page
            assert b"fetch(" not in body
    built = _cli("build", str(repo), "--no-index")
    assert built.returncode == 0, built.stderr
    assert "was not built by this user" in built.stderr
    assert not (site / "evil.js").exists()
    aside = [p for p in site.parent.iterdir() if p.name.startswith(".site.not-ours-")]
    assert len(aside) == 1
    assert (aside[0] / "site" / "evil.js").is_file()  # moved, not deleted
    with sourcebook_serve(repo) as url:
        status, body = _get(f"{url}/wiki/")
        assert status == 200
        status, _ = _get(f"{url}/wiki/evil.js")
        assert status == 404
        request = urllib.request.Request(f"{url}/wiki/")
        with urllib.request.urlopen(request, timeout=10) as response:
            csp = response.headers["content-security-policy"]
        img = next(part for part in csp.split("; ") if part.startswith("img-src"))
        assert "https:" not in img.split()  # no image URL elsewhere to carry what a script read


def test_an_unmarked_committed_site_is_never_served(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({**SOURCE, ".sourcebook/site/index.html": "<script src='evil.js'></script>",
                      ".sourcebook/site/evil.js": "fetch('/ask?q=x')"})
    with sourcebook_serve(repo) as url:
        status, body = _get(f"{url}/wiki/evil.js")
        assert status == 404
        assert b"fetch(" not in body


# ---------------------------------------------------------------- (4) Mermaid only from the wiki's diagrams

OVERLAY = ('%%{init: {"themeCSS": ".node rect {position: fixed; inset: 0}"}}%%\n'
           'graph TD\n  A["Session expired: sign in again"] --> B\n  click A "https://evil.example/login"\n')


def test_mermaid_from_a_repository_is_shown_as_code(make_repo: Callable[..., Path]) -> None:
    import re

    repo = make_repo({
        "README.md": (f'# Demo\n\nA demo.\n\n<pre class="mermaid">{OVERLAY}</pre>\n\n'
                      f"```mermaid\n{OVERLAY}```\n\n"
                      f'<div class="mermaid">{OVERLAY}</div>\n'),
        "docs/guide.rst": "Guide\n=====\n\n.. raw:: html\n\n   <pre class=\"mermaid\">%%{init: {}}%%</pre>\n",
        "pkg/__init__.py": "from pkg import core\n", "pkg/core.py": "from pkg import util\n\n\ndef f():\n"
        "    return util.g()\n", "pkg/util.py": "def g():\n    return 1\n",
        # a file name is a diagram label: a directive spelled there must stay text too
        "pkg/x%%{init: {}}%%.py": "import pkg.core\n"})
    built = _cli("build", str(repo), "--no-index")
    assert built.returncode == 0, built.stderr
    site = repo / ".sourcebook" / "site"
    blocks = []
    for page in site.rglob("*.html"):
        blocks += re.findall(r'class="[^"]*mermaid[^"]*"[^>]*>(.*?)</(?:pre|div)>', page.read_text(), re.S)
    assert blocks, "no generated diagram at all: the test would pass by showing nothing"
    for body in blocks:
        assert "%%" not in body
        assert "themeCSS" not in body
        assert "evil.example" not in body
    home = (site / "index.html").read_text()
    assert "themeCSS" in home  # shown, as text


# ---------------------------------------------------------------- (6) the Low items

def test_an_absurd_max_file_bytes_in_the_repository_config_is_clamped(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({**SOURCE, "sourcebook.toml": "max_file_bytes = 100000000000\n"})
    built = _cli("build", str(repo), "--no-site")
    assert built.returncode == 0, built.stderr
    assert "Traceback" not in built.stderr
    assert "max_file_bytes=100000000000 (clamped" in built.stderr


def test_a_lone_surrogate_is_a_400_not_a_500(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({**SOURCE, "sourcebook.toml": '[embed]\nprovider = "none"\n'})
    assert _cli("index", str(repo)).returncode == 0
    with sourcebook_serve(repo) as url:
        for path, body in (("/remember", b'{"text": "fact \\ud800 here"}'),
                           ("/ask", b'{"question": "what \\udfff"}')):
            request = urllib.request.Request(url + path, data=body, method="POST",
                                             headers={"Content-Type": "application/json"})
            try:
                with urllib.request.urlopen(request, timeout=30) as response:
                    status, reply = response.status, response.read()
            except urllib.error.HTTPError as exc:
                status, reply = exc.code, exc.read()
            assert status == 400, (path, reply)
            assert b"surrogate" in reply


def test_a_committed_state_file_is_one_line_not_a_traceback(make_repo: Callable[..., Path]) -> None:
    repo = make_repo({**SOURCE, ".sourcebook/state": "a file, not a folder"})
    built = _cli("build", str(repo), "--no-site")
    assert built.returncode != 0
    assert "Traceback" not in built.stderr
    errors = [line for line in built.stderr.splitlines() if line.startswith("error:")]
    assert len(errors) == 1, built.stderr
    assert "state" in errors[0]
