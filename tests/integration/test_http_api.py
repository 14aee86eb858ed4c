"""The HTTP API: every endpoint through FastAPI's TestClient, and one real uvicorn on 127.0.0.1."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest
from fastapi.testclient import TestClient

from answer.serving.http_api import check_bind, create_app, is_loopback
from answer.serving.tools import Tools
from answer.serving.workspace import WORKSPACE_FILE, load_workspace
from generator.site.publish import MERMAID_CDN_URL, claim
from sourcebook.errors import AccessError

FILES = {
    "sourcebook.toml": '[embed]\nprovider = "none"\n',
    "README.md": "# Demo\n\nA demo package.\n",
    "pkg/__init__.py": "",
    "pkg/core.py": ('"""Core."""\n\n\ndef helper(value):\n    """Double a value."""\n'
                    '    return value * 2\n\n\nclass Engine:\n    """Runs jobs."""\n\n'
                    '    def start(self, job):\n        """Start a job."""\n        return helper(job)\n'),
    "pkg/settings.py": ('import json\n\n\ndef load_settings(path):\n'
                        '    """Load settings from a JSON file."""\n    with open(path) as fh:\n'
                        '        return json.load(fh)\n'),
}
TOKEN = "s3cret-token"


def _write(root: Path) -> None:
    for rel, text in FILES.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    base = tmp_path_factory.mktemp("http")
    root = base / "demo"
    _write(root)
    (base / "other").mkdir()
    (base / "other" / "x.py").write_text("def other():\n    return 1\n")
    (base / WORKSPACE_FILE).write_text('[repos.demo]\npath = "demo"\n[repos.other]\npath = "other"\n')
    tools = Tools(load_workspace(base, env={}))
    tools.index()
    site = tools.state().config.site_dir
    site.mkdir(parents=True)
    (site / "index.html").write_text("<html><body>demo wiki</body></html>")
    claim(site)  # as a build by this user marks it (a site without this user's mark is not served)
    return base


@pytest.fixture(scope="module")
def client(repo: Path) -> TestClient:
    return TestClient(create_app(Tools(load_workspace(repo, env={})), max_body_bytes=10_000))


def test_ask_get_and_post(client: TestClient) -> None:
    got = client.get("/ask", params={"q": "how are settings loaded from json?"})
    assert got.status_code == 200, got.text
    body = got.json()
    assert body["degraded"] == "no-llm-provider"
    assert body["confidence"] in {"medium", "low"}
    assert "pkg/settings.py" in body["answer"] or "pkg/settings.py" in body["fallback_targets"]
    posted = client.post("/ask", json={"question": "how are settings loaded from json?"})
    assert posted.status_code == 200
    assert posted.json()["fallback_targets"] == body["fallback_targets"]
    assert client.post("/ask", params={"q": "how are settings loaded?"}).status_code == 200
    assert client.post("/ask", json={}).status_code == 400


def test_body_takes_precedence_over_query_string(client: TestClient) -> None:
    ok = client.post("/ask", params={"q": "settings", "repo": "nope"}, json={"repo": "demo"})
    assert ok.status_code == 200
    overridden = client.post("/ask", params={"q": "settings", "repo": "demo"}, json={"repo": "nope"})
    assert overridden.status_code == 404
    search = client.post("/search", params={"q": "zzz_nothing"}, json={"query": "load_settings"})
    assert search.json()["files"][0]["path"] == "pkg/settings.py"


def test_unknown_alias_is_404_listing_known_and_all_is_400(client: TestClient) -> None:
    response = client.get("/search", params={"q": "engine", "repo": "nope"})
    assert response.status_code == 404
    assert response.json()["error"] == "NotFoundError"
    assert "demo, other" in response.json()["message"]
    assert client.get("/ask", params={"q": "x", "repo": "all"}).status_code == 400


def test_tool_endpoints(client: TestClient) -> None:
    search = client.get("/search", params={"q": "Engine start"}).json()
    assert search["files"][0]["path"] == "pkg/core.py"
    context = client.post("/context", json={"query": "load settings json", "budget_tokens": 50}).json()
    assert context["spans"]
    assert context["used_tokens"] <= 50
    targets = client.get("/context", params={"targets": "Engine.start,pkg/settings.py:1-2"}).json()
    assert {s["reason"] for s in targets["spans"]} >= {"target"}
    symbol = client.get("/symbol", params={"name": "Engine.start"}).json()
    assert symbol["definitions"][0]["verified"] is True
    file = client.get("/file", params={"path": "pkg/core.py", "start_line": 4, "end_line": 4}).json()
    assert file["content"] == "def helper(value):"
    structure = client.get("/structure").json()
    assert structure["files"] == len(FILES)
    other = client.get("/structure", params={"repo": "other"}).json()
    assert other["indexed"] is False
    assert other["tree"]["children"] == []
    remembered = client.post("/remember", json={"text": "settings are JSON only", "scope": "pkg"})
    assert remembered.json()["episode"]["scope"] == "pkg"
    indexed = client.post("/index", json={"paths": ["pkg/core.py"]}).json()
    assert indexed["report"]["files_indexed"] == 0


def test_clear_4xx_for_bad_input(client: TestClient) -> None:
    assert client.get("/search", params={"q": "(unclosed", "type": "regex"}).status_code == 400
    assert client.get("/search", params={"q": "x", "type": "telepathy"}).status_code == 400
    assert client.get("/file", params={"path": "pkg/absent.py"}).status_code == 404
    for bad in ("../../etc/passwd", "/etc/passwd", "%2e%2e/%2e%2e/etc/passwd", "%252e%252e%252fetc"):
        response = client.get("/file", params={"path": bad})
        assert response.status_code == 403, bad
        assert response.json()["error"] == "AccessError"
    assert client.post("/index", json={"paths": ["../outside"]}).status_code == 403
    assert client.get("/symbol", params={"name": "nothing_like_this"}).status_code == 404
    assert client.post("/context", json={}).status_code == 400


def test_sql_looking_scope_never_widens(client: TestClient) -> None:
    for scope in ("' OR 1=1 --", "pkg%' OR '1'='1", "%", "_"):
        data = client.get("/search", params={"q": "Engine settings", "scope": scope}).json()
        assert data["files"] == []
        assert data["hits"] == []
    narrowed = client.get("/search", params={"q": "Engine settings", "scope": "pkg/core"}).json()
    assert {f["path"] for f in narrowed["files"]} == {"pkg/core.py"}


def test_oversized_bodies_are_413(client: TestClient) -> None:
    big = {"text": "x" * 20_000}
    assert client.post("/remember", json=big).status_code == 413

    def chunks():  # no Content-Length: the guard counts the streamed bytes
        for _ in range(30):
            yield b"x" * 1000

    streamed = client.post("/remember", content=chunks(), headers={"content-type": "application/json"})
    assert streamed.status_code == 413


def test_openapi_and_wiki(client: TestClient) -> None:
    schema = client.get("/openapi.json").json()
    assert {"/ask", "/search", "/context", "/symbol", "/file", "/structure", "/index", "/remember"} <= set(
        schema["paths"])
    wiki = client.get("/wiki/")
    assert wiki.status_code == 200
    assert "demo wiki" in wiki.text
    assert "demo wiki" in client.get("/wikis/demo/").text
    assert client.get("/wikis/other/").status_code == 404  # not built yet: not found, not a crash


def test_token_is_checked_on_every_request(repo: Path) -> None:
    guarded = TestClient(create_app(Tools(load_workspace(repo, env={})), token=TOKEN))
    for path in ("/ask?q=x", "/openapi.json", "/wiki/", "/structure"):
        assert guarded.get(path).status_code == 401
        assert guarded.get(path, headers={"Authorization": "Bearer wrong"}).status_code == 401
    ok = guarded.get("/structure", headers={"Authorization": f"Bearer {TOKEN}"})
    assert ok.status_code == 200


def test_loopback_server_refuses_foreign_host_headers(repo: Path) -> None:
    local = TestClient(create_app(Tools(load_workspace(repo, env={})), local_only=True),
                       base_url="http://127.0.0.1:7700")
    assert local.get("/structure").status_code == 200
    assert local.get("/structure", headers={"host": "localhost:7700"}).status_code == 200
    assert local.get("/structure", headers={"host": "[::1]:7700"}).status_code == 200
    rebound = local.get("/file", params={"path": "pkg/core.py"}, headers={"host": "evil.example:7700"})
    assert rebound.status_code == 403


def test_state_changing_posts_need_a_json_body(client: TestClient) -> None:
    # what a cross-site form or no-cors fetch can send without a CORS preflight
    assert client.post("/remember", params={"text": "planted"}).status_code == 415
    form = client.post("/remember", data={"text": "planted"})
    assert form.status_code == 415
    plain = client.post("/index", content=b"{}", headers={"content-type": "text/plain"})
    assert plain.status_code == 415
    assert client.post("/remember", params={"text": "fine"}, json={}).status_code == 200


def test_bind_rules() -> None:
    assert is_loopback("127.0.0.1")
    assert is_loopback("::1")
    assert is_loopback("localhost")
    assert not is_loopback("0.0.0.0")
    assert not is_loopback("example.com")
    check_bind("127.0.0.1", None)
    check_bind("0.0.0.0", TOKEN)
    with pytest.raises(AccessError):
        check_bind("0.0.0.0", None)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _cli() -> list[str]:
    return [sys.executable, "-m", "sourcebook.cli"]


@pytest.mark.parametrize("workers", ["1", "2"])
def test_real_server_on_loopback_with_token(repo: Path, workers: str) -> None:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}
    env["SOURCEBOOK_TOKEN"] = TOKEN
    proc = subprocess.Popen([*_cli(), "serve", str(repo), "--port", str(port), "--workers", workers], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while True:
            try:
                first = httpx.get(f"{url}/health", timeout=2)
                break
            except httpx.TransportError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.1)
        assert first.status_code == 401
        auth = {"Authorization": f"Bearer {TOKEN}"}
        ask = httpx.get(f"{url}/ask", params={"q": "how are settings loaded?"}, headers=auth, timeout=30)
        assert ask.status_code == 200
        assert ask.json()["degraded"] == "no-llm-provider"
        big = httpx.post(f"{url}/remember", content=b"x" * 2_000_000, headers=auth, timeout=30)
        assert big.status_code == 413
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_non_loopback_without_token_refuses_to_start(repo: Path) -> None:
    env = {k: v for k, v in os.environ.items() if k != "SOURCEBOOK_TOKEN"}
    result = subprocess.run([*_cli(), "serve", str(repo), "--host", "0.0.0.0", "--port", str(_free_port())],
                            env=env, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 2
    assert "requires a bearer token" in result.stderr


def _serve(repo: Path, *extra: str, token: str | None = None) -> tuple[subprocess.Popen[bytes], str]:
    port = _free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}
    if token:
        env["SOURCEBOOK_TOKEN"] = token
    proc = subprocess.Popen([*_cli(), "serve", str(repo), "--port", str(port), *extra], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while True:
        try:
            httpx.get(f"{url}/health", timeout=2)
            return proc, url
        except httpx.TransportError:
            if time.monotonic() > deadline or proc.poll() is not None:
                proc.terminate()
                raise
            time.sleep(0.1)


def _episodes(repo: Path) -> str:
    path = repo / "demo" / ".sourcebook" / "episodes.jsonl"
    return path.read_text(encoding="utf-8") if path.exists() else ""


def test_real_server_refuses_writes_from_web_pages(repo: Path) -> None:
    proc, url = _serve(repo)
    try:
        # a page elsewhere submitting a form (what a browser sends for <form method=post>)
        form = httpx.post(f"{url}/remember", data={"text": "planted by form"},
                          headers={"Origin": "http://evil.example", "Sec-Fetch-Site": "cross-site",
                                   "Sec-Fetch-Mode": "navigate"}, timeout=10)
        assert form.status_code == 403
        # the same form with a body that passes the content-type check, and text/plain (no preflight)
        for ctype in ("application/json", "text/plain"):
            sneaky = httpx.post(f"{url}/remember", content=b'{"text": "planted by form"}',
                                headers={"Origin": "null", "Content-Type": ctype}, timeout=10)
            assert sneaky.status_code == 403
        # a script on a page served from /wiki/ itself: same origin, JSON and all
        same_origin = httpx.post(f"{url}/remember", json={"text": "planted by the wiki"},
                                 headers={"Origin": url, "Sec-Fetch-Site": "same-origin",
                                          "Sec-Fetch-Mode": "cors"}, timeout=10)
        assert same_origin.status_code == 403
        assert "not accepted from web pages" in same_origin.json()["message"]
        reindex = httpx.post(f"{url}/index", json={"paths": ["pkg/core.py"]},
                             headers={"Sec-Fetch-Site": "same-origin"}, timeout=30)
        assert reindex.status_code == 403
        assert "planted" not in _episodes(repo)
        # reads stay open to a browser, and an agent's client (no browser headers) may write
        typed = httpx.get(f"{url}/structure", headers={"Sec-Fetch-Site": "none"}, timeout=10)
        assert typed.status_code == 200
        agent = httpx.post(f"{url}/remember", json={"text": "recorded by an agent"}, timeout=10)
        assert agent.status_code == 200
        assert "recorded by an agent" in _episodes(repo)
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_with_a_token_the_token_is_what_vouches_for_a_write(repo: Path) -> None:
    proc, url = _serve(repo, token=TOKEN)
    try:
        browserish = {"Origin": url, "Sec-Fetch-Site": "same-origin"}
        refused = httpx.post(f"{url}/remember", json={"text": "planted"}, headers=browserish, timeout=10)
        assert refused.status_code == 401
        ok = httpx.post(f"{url}/remember", json={"text": "written with the token"},
                        headers={**browserish, "Authorization": f"Bearer {TOKEN}"}, timeout=10)
        assert ok.status_code == 200
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_wiki_responses_carry_a_strict_csp(client: TestClient) -> None:
    wiki = client.get("/wiki/", headers={"host": "127.0.0.1:7700"})
    csp = dict(part.strip().split(" ", 1) for part in wiki.headers["content-security-policy"].split(";"))
    assert csp["script-src"] == f"'self' {MERMAID_CDN_URL}"  # this site has no local mermaid.js: one file
    assert "unsafe-inline" not in csp["script-src"]
    # the API is outside what pages may call, but for /ask (the ask box reads answers; it changes nothing)
    assert csp["connect-src"] == "http://127.0.0.1:7700/wiki/ http://127.0.0.1:7700/ask"
    assert [csp["default-src"], csp["object-src"], csp["base-uri"]] == ["'none'"] * 3
    assert wiki.headers["x-content-type-options"] == "nosniff"
    other = client.get("/wikis/demo/", headers={"host": "localhost:7700"})
    assert ("connect-src http://localhost:7700/wikis/demo/ http://localhost:7700/ask;"
            in other.headers["content-security-policy"])
    assert client.get("/wiki/sourcebook-api.json").json() == {"ask": "/ask"}  # what tells ask.js to show
    odd = client.get("/wiki/", headers={"host": "a b;script-src *"})
    assert "connect-src 'self';" in odd.headers["content-security-policy"]
    assert "script-src *" not in odd.headers["content-security-policy"]
    assert "content-security-policy" not in client.get("/health").headers  # the API is JSON, not a page
