"""A generated site in a real browser: Debian's headless chromium, driven over the DevTools protocol.

The site is served by http.server on 127.0.0.1; the test types a symbol name into Material's search box,
waits for results, and fails on any console error or uncaught exception on the pages it opens.
"""

from __future__ import annotations

import json
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote

import pytest

from generator.analyze.plan import file_page_ids
from generator.build import build
from sourcebook.config import load_config
from tests.support.browser import (
    CHROMIUM,
    MERMAID,
    MERMAID_CDN,
    DevTools,
    mermaid_svg_texts,
    new_tab,
    open_page,
    type_text,
)
from tests.support.repo_files import write_files
from tests.support.servers import sourcebook_serve, static_site

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed"),
]

REPO = {
    "README.md": "# Widgets\n\nWidgets builds <b>widgets</b>. See [the core](pkg/core.py).\n",
    "pkg/__init__.py": '"""Widget package."""\nfrom .core import WidgetFactory\n',
    "pkg/core.py": ('"""The core. <script>document.title = "pwned"</script>"""\n\n\n'
                    'class WidgetFactory:\n    """Makes widgets | fast."""\n\n'
                    '    def assemble_widget(self, name: str) -> str:\n        """Assemble one."""\n'
                    "        return name\n"),
    "web/app.js": "/** Front end. */\nexport function mountWidget(el) { return el; }\n",
    "we ird [x]/naïve#1.py": "def strange():\n    pass\n",
}


@pytest.fixture(scope="module")
def site_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_files(tmp_path_factory.mktemp("browser-repo"), REPO)
    report = build(load_config(root), index=False)
    assert report.site_dir is not None
    return report.site_dir


@pytest.fixture(scope="module")
def site_url(site_dir: Path) -> Iterator[str]:
    with static_site(site_dir) as url:
        yield url


def _search(tools: DevTools, query: str) -> list[str]:
    """Type `query` into Material's search box like a user; return the result texts."""
    tools.evaluate("document.querySelector('.md-search__input').focus()")
    type_text(tools, query)
    results: list[str] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not results:
        tools.pump(0.3)
        results = tools.evaluate(
            "Array.from(document.querySelectorAll('.md-search-result__item')).map(e => e.textContent)")
    return results


def _undrawn_icons(tools: DevTools) -> list[str]:
    """The chrome's icons (generator/site/chrome_icons.py: an empty <svg class="sbi ..."> masked by a data:
    URL
    from icons.css) that are not drawn: no mask image, or no size. [] also needs at least the header's
    icons."""
    return tools.evaluate("""(() => {
      const icons = Array.from(document.querySelectorAll('svg.sbi'));
      if (icons.length < 5) return ['only ' + icons.length + ' icons'];
      return icons.filter(e => {
        const style = getComputedStyle(e), box = e.getBoundingClientRect();
        const mask = style.maskImage || style.webkitMaskImage || '';
        const shown = e.checkVisibility();  // false under a display:none ancestor (the nav title's logo)
        return !mask.startsWith('url("data:image/svg+xml') || e.childElementCount !== 0
          || (shown && (box.width === 0 || box.height === 0));
      }).map(e => e.getAttribute('class'));
    })()""")


def test_overview_loads_and_search_finds_a_symbol(browser: str, site_url: str) -> None:
    tools = new_tab(browser)
    try:
        open_page(tools, site_url + "index.html")
        assert tools.evaluate("document.querySelector('h1').textContent.trim()")
        assert tools.evaluate("document.title") != "pwned"
        assert tools.evaluate("document.querySelectorAll('a[href*=\"files/pkg/core.py.html\"]').length") > 0
        results = _search(tools, "WidgetFactory")
        assert results, "search returned nothing for a symbol name"
        assert any("WidgetFactory" in r for r in results)
        assert tools.errors() == []
    finally:
        tools.close()


def test_search_works_from_file_urls_without_a_server(browser: str, site_dir: Path) -> None:
    tools = new_tab(browser)
    try:
        open_page(tools, (site_dir / "index.html").as_uri())
        assert _undrawn_icons(tools) == []  # the icons' stylesheet works from file:// too
        results = _search(tools, "assemble_widget")
        assert any("assemble_widget" in r for r in results), results
        assert tools.errors() == []
    finally:
        tools.close()


def test_file_page_shows_escaped_docstring_without_errors(browser: str, site_url: str) -> None:
    tools = new_tab(browser)
    try:
        open_page(tools, site_url + "files/pkg/core.py.html")
        assert tools.evaluate("document.title") != "pwned"
        body = tools.evaluate("document.querySelector('.md-content').innerText")
        assert "assemble_widget" in body
        assert '<script>document.title = "pwned"</script>' in body  # shown as text, not run
        assert tools.evaluate("document.querySelectorAll('.md-content script').length") == 0
        page_id = file_page_ids(REPO)["we ird [x]/naïve#1.py"]
        open_page(tools, site_url + quote(page_id.removesuffix(".md") + ".html"))
        assert "strange" in tools.evaluate("document.querySelector('.md-content').innerText")
        assert tools.errors() == []
    finally:
        tools.close()


def test_module_page_has_a_diagram_and_navigation(browser: str, site_url: str) -> None:
    tools = new_tab(browser)
    try:
        open_page(tools, site_url + "modules/pkg/index.html")
        text = tools.evaluate("document.querySelector('.md-content').innerText")
        assert "core.py" in text
        assert "WidgetFactory" in text  # an entry point
        assert tools.evaluate("document.querySelectorAll('a[href=\"../index.html\"]').length") > 0  # up
        if MERMAID is None:
            # Material takes the `mermaid` class off the block once it hands it to mermaid.js
            source = tools.evaluate("Array.from(document.querySelectorAll('.md-content pre'))"
                                    ".map(e => e.textContent).join('\\n')")
            assert "graph LR" in source
            assert "core.py" in source
        assert tools.errors(allow_urls=MERMAID_CDN) == []
    finally:
        tools.close()


@pytest.mark.skipif(MERMAID is None, reason="no local mermaid.js (run `make setup`, which needs npm): "
                    "diagrams would load from the CDN, which this offline machine cannot reach")
def test_module_page_diagram_renders_offline_without_errors(browser: str, site_dir: Path) -> None:
    tools = new_tab(browser)
    try:
        # from file://: no server and no network, the way a downloaded site is opened
        open_page(tools, (site_dir / "modules" / "pkg" / "index.html").as_uri())
        rendered = mermaid_svg_texts(tools)
        assert len(rendered) == 1, rendered
        assert "core.py" in rendered[0]  # the diagram's nodes, drawn as SVG text
        assert "graph LR" not in tools.evaluate("document.querySelector('.md-content').innerText")
        assert tools.errors() == []
    finally:
        tools.close()


@pytest.mark.slow
def test_flask_site_search_and_pages(browser: str, flask_wiki: Path) -> None:
    with static_site(flask_wiki / "site") as base:  # flask's pinned sdist (tests/support/real_repos.py)
        _check_flask_site(browser, base)


def _check_flask_site(browser: str, base: str) -> None:
    tools = new_tab(browser)
    try:
        open_page(tools, base + "index.html")
        results = _search(tools, "url_for")
        assert any("url_for" in r for r in results), results
        assert tools.errors() == []
        open_page(tools, base + "files/src/flask/app.py.html")
        assert "class Flask" in tools.evaluate("document.querySelector('.md-content').innerText")
        assert tools.errors() == []
        open_page(tools, base + "modules/src/flask/index.html")
        assert tools.errors(allow_urls=MERMAID_CDN) == []
    finally:
        tools.close()


# -- a hostile repository's wiki (issue 9): attribute lists and writer prose never run script -----------


@pytest.fixture(scope="module")
def hostile_site_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    from tests.support.hostile import HOSTILE_MARKDOWN

    root = tmp_path_factory.mktemp("hostile-browser-repo")
    files = {"README.md": "# Demo\n\n" + HOSTILE_MARKDOWN, "pkg/core.py": '"""Core."""\ndef f():\n    pass\n'}
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")
    report = build(load_config(root), index=False)
    assert report.site_dir is not None
    with static_site(report.site_dir) as url:
        yield url


def test_hostile_attribute_lists_do_not_run_in_the_browser(browser: str, hostile_site_url: str) -> None:
    tools = new_tab(browser)
    try:
        open_page(tools, hostile_site_url + "index.html")
        assert "Click me" in tools.evaluate("document.querySelector('.md-content').innerText")
        # the image failed to load (offline), which is when an onerror would have run; now hover and click
        # everything in the content that does not navigate, as a reader would
        tools.evaluate("""(() => {
            for (const el of document.querySelectorAll('.md-content *')) {
                for (const type of ['mouseover', 'mouseenter', 'focus']) {
                    el.dispatchEvent(new MouseEvent(type, {bubbles: true}));
                }
                if (!el.closest('a')) { el.dispatchEvent(new MouseEvent('click', {bubbles: true})); }
            }
        })()""")
        tools.pump(0.5)
        assert tools.evaluate("document.body.dataset.pwned === undefined")
        positioned = tools.evaluate(
            "Array.from(document.querySelectorAll('.md-content *'))"
            ".filter(e => ['fixed', 'absolute'].includes(getComputedStyle(e).position)).length")
        assert positioned == 0  # no overlay over the page
        assert tools.evaluate("document.getElementById('__config').tagName") == "SCRIPT"
        assert tools.errors(allow_urls=("https://example.com",)) == []
    finally:
        tools.close()


# -- the wiki served by `sourcebook serve`: strict CSP, and no writes from its pages -------------------------

HOSTILE_PAGE = """<!doctype html><html><head><title>hostile</title>
<script src="sb-hostile.js"></script></head>
<body><img src="missing.png" onerror="document.body.dataset.pwned=1"><p>hostile</p></body></html>"""
# what a page that slipped into the wiki would try: write an episode through the API, by fetch and by form
HOSTILE_SCRIPT = """
document.addEventListener("DOMContentLoaded", function () {
  fetch("/remember", {method: "POST", headers: {"Content-Type": "application/json"},
                      body: JSON.stringify({text: "planted by fetch"})})
    .then(function (r) { document.body.dataset.fetch = String(r.status); })
    .catch(function () { document.body.dataset.fetch = "blocked"; })
    .finally(function () {
      var form = document.createElement("form");
      form.method = "POST";
      form.action = "/remember?text=planted%20by%20form";
      form.enctype = "text/plain";
      document.body.appendChild(form);
      form.submit();
    });
});
"""


@pytest.fixture(scope="module")
def served_wiki(site_dir: Path) -> Iterator[tuple[str, Path]]:
    """`sourcebook serve` (real uvicorn, loopback, no token) over the browser repo; yields its URL and the
    repository. The site also gets a hostile page, as if markup had slipped past the sanitizer."""
    (site_dir / "sb-hostile.html").write_text(HOSTILE_PAGE, encoding="utf-8")
    (site_dir / "sb-hostile.js").write_text(HOSTILE_SCRIPT, encoding="utf-8")
    root = site_dir.parent.parent
    with sourcebook_serve(root, timeout_s=30) as url:
        yield url, root


def test_served_wiki_search_and_diagrams_work_under_its_csp(browser: str,
                                                           served_wiki: tuple[str, Path]) -> None:
    url, _ = served_wiki
    with urllib.request.urlopen(f"{url}/wiki/index.html", timeout=10) as resp:
        csp = resp.headers["content-security-policy"]
    assert "script-src 'self'" in csp
    assert "unsafe-inline" not in csp.split("script-src")[1].split(";")[0]
    assert f"connect-src {url}/wiki/" in csp
    assert ("unpkg.com" in csp) == (MERMAID is None)  # the CDN copy only when the site has no local one
    tools = new_tab(browser)
    try:
        open_page(tools, f"{url}/wiki/index.html")
        assert _undrawn_icons(tools) == []  # their data: masks pass the CSP (img-src data:)
        results = _search(tools, "WidgetFactory")
        assert any("WidgetFactory" in r for r in results), results
        assert tools.errors() == []  # no CSP violation either: they are logged as errors
        open_page(tools, f"{url}/wiki/modules/pkg/index.html")
        if MERMAID is not None:
            rendered = mermaid_svg_texts(tools)
            assert len(rendered) == 1, rendered
            assert "core.py" in rendered[0]
        assert tools.errors(allow_urls=MERMAID_CDN) == []
    finally:
        tools.close()


def test_a_page_in_the_served_wiki_cannot_run_handlers_or_write(browser: str,
                                                                served_wiki: tuple[str, Path]) -> None:
    url, root = served_wiki
    tools = new_tab(browser)
    try:
        open_page(tools, f"{url}/wiki/sb-hostile.html")
        deadline = time.monotonic() + 15
        while time.monotonic() < deadline:  # the form navigates away once submitted
            tools.pump(0.3)
            if "remember" in str(tools.evaluate("location.href")):
                break
        assert "remember" in tools.evaluate("location.href")
        # the server refused the form: a 403 JSON body, whatever the content type
        assert "not accepted from web pages" in tools.evaluate("document.body.innerText")
        logged = " ".join(json.dumps(e) for e in tools.events)
        # the browser refused the inline onerror and the fetch to the API (outside the wiki's connect-src)
        assert "inline event handler violates the following Content Security Policy" in logged
        assert f"Connecting to '{url}/remember' violates the following Content Security Policy" in logged
    finally:
        tools.close()
    episodes = root / ".sourcebook" / "episodes.jsonl"
    assert not episodes.exists() or "planted" not in episodes.read_text(encoding="utf-8")


def test_serve_site_sends_the_same_csp_and_the_site_works_under_it(browser: str, site_dir: Path) -> None:
    import os
    import socket
    import sys

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    root = site_dir.parent.parent
    proc = subprocess.Popen([sys.executable, "-m", "sourcebook.cli", "serve-site", str(root),
                             "--port", str(port)], env=dict(os.environ, NO_COLOR="1"),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/"
    tools = new_tab(browser)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                with urllib.request.urlopen(url + "index.html", timeout=2) as resp:
                    csp = resp.headers["content-security-policy"]
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    raise
                time.sleep(0.2)
        assert "script-src 'self'" in csp
        assert "connect-src 'self'" in csp
        open_page(tools, url + "index.html")
        results = _search(tools, "assemble_widget")
        assert any("assemble_widget" in r for r in results), results
        assert tools.errors() == []
    finally:
        tools.close()
        proc.terminate()
        proc.wait(timeout=10)
