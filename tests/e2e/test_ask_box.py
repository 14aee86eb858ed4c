"""The ask box on the served wiki, in a real browser against a real `sourcebook serve`: it calls /ask under
the wiki's strict CSP and shows the answer with its citations linked to wiki sections; a static build
(file://)
shows no box."""

from __future__ import annotations

import time
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from generator.build import build
from sourcebook.config import load_config
from tests.support.browser import CHROMIUM, MERMAID_CDN, new_tab, open_page
from tests.support.servers import sourcebook_serve

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed"),
]

REPO = {
    "README.md": "# Ledger\n\nLedger keeps accounts.\n",
    "ledger/__init__.py": '"""Accounts."""\nfrom .book import post_entry\n',
    "ledger/book.py": ('"""The book of accounts."""\n\n\ndef post_entry(account: str, amount: int) -> int:\n'
                       '    """Post an entry of `amount` to `account` and return the new balance."""\n'
                       "    return balance_of(account) + amount\n\n\n"
                       'def balance_of(account: str) -> int:\n    """The balance of an account."""\n'
                       "    return len(account)\n"),
}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    root = tmp_path_factory.mktemp("ask-repo")
    for rel, text in REPO.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    report = build(load_config(root), index=True)  # no LLM: /ask answers with ranked evidence
    assert report.site_dir is not None
    with sourcebook_serve(root) as url:
        yield url, report.site_dir


def _wait(tools, expression: str, timeout: float = 60.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = tools.evaluate(expression)
        if value:
            return value
        tools.pump(0.3)
    raise AssertionError(f"timed out waiting for {expression}")


def test_ask_box_answers_with_linked_citations(browser: str, served: tuple[str, Path]) -> None:
    url, _ = served
    with urllib.request.urlopen(f"{url}/wiki/index.html", timeout=10) as resp:
        csp = resp.headers["content-security-policy"]
    assert f"connect-src {url}/wiki/ {url}/ask;" in csp  # the API's other endpoints stay out of reach
    tools = new_tab(browser)
    try:
        open_page(tools, f"{url}/wiki/files/ledger/book.py.html")
        _wait(tools, "document.querySelector('#sb-ask input') !== null")
        tools.evaluate("document.querySelector('#sb-ask input').focus()")
        for ch in "how is an entry posted to an account?":
            tools.call("Input.dispatchKeyEvent", type="keyDown", text=ch, key=ch, unmodifiedText=ch)
            tools.call("Input.dispatchKeyEvent", type="keyUp", key=ch)
        tools.evaluate("document.querySelector('#sb-ask button').click()")
        _wait(tools, "document.querySelectorAll('#sb-ask .sb-ask__citations a').length > 0")
        text = tools.evaluate("document.querySelector('#sb-ask .sb-ask__answer').innerText")
        assert "Confidence:" in text
        links = tools.evaluate("Array.from(document.querySelectorAll('#sb-ask .sb-ask__citations a'))"
                               ".map(a => a.href)")
        assert any(link.startswith(f"{url}/wiki/files/ledger/book.py.html") for link in links), links
        # following a citation opens its wiki page (a section when the citation names lines)
        open_page(tools, next(link for link in links if "book.py.html" in link))
        assert "post_entry" in tools.evaluate("document.querySelector('.md-content').innerText")
        assert tools.errors(allow_urls=MERMAID_CDN) == []  # no CSP violation: they are console errors
    finally:
        tools.close()


def test_static_build_has_no_ask_box(browser: str, served: tuple[str, Path]) -> None:
    _, site_dir = served
    tools = new_tab(browser)
    try:
        open_page(tools, (site_dir / "index.html").as_uri())
        tools.pump(1.0)
        assert tools.evaluate("document.querySelector('#sb-ask') === null")
        inline = "script:not([src]):not([type=\"application/json\"])"
        assert tools.evaluate(f"document.querySelectorAll('{inline}').length") == 0  # no inline script
        assert tools.errors() == []
    finally:
        tools.close()


def test_the_map_links_paths_to_pages_and_sections(make_repo: Callable[..., Path]) -> None:
    import json

    root = make_repo(REPO)
    build(load_config(root), index=False)
    data = json.loads((root / ".sourcebook/docs/assets/sourcebook/wiki-map.json").read_text(encoding="utf-8"))
    assert data["pages"]["ledger/book.py"] == "files/ledger/book.py.html"
    assert [4, 6, "sym-post-entry"] in data["symbols"]["ledger/book.py"]
    assert data["source"] is None  # no git remote: no source links
