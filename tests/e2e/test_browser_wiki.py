"""The wiki in a real browser (Debian chromium over DevTools), on flask's pinned sdist
(tests/support/real_repos.py, the session's `flask_wiki`): Material's search puts the defining symbol's
section in the top 3 for symbol queries, pages never overflow horizontally at 1280 px, Mermaid renders, and no
console errors. (Topic pages need a model: tests/e2e/test_topics.py opens those.)"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.browser import (
    CHROMIUM,
    MERMAID_CDN,
    mermaid_svg_texts,
    new_tab,
    open_page,
    result_links,
    svg_links,
)
from tests.support.servers import static_site

pytestmark = [
    pytest.mark.browser,
    pytest.mark.slow,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed"),
]


@pytest.fixture(scope="module")
def flask_site(flask_wiki: Path) -> Iterator[str]:
    with static_site(flask_wiki / "site") as url:
        yield url


@pytest.mark.parametrize(("query", "defining"), [
    ("url_for", ("files/src/flask/helpers.py.html#sym-url-for",)),
    ("Blueprint", ("files/src/flask/blueprints.py.html#sym-blueprint",
                   "files/src/flask/sansio/blueprints.py.html#sym-blueprint")),
    ("Flask.route", ("files/src/flask/sansio/scaffold.py.html#sym-scaffold-route",
                     "files/src/flask/app.py.html#sym-flask")),
    ("dispatch_request", ("files/src/flask/app.py.html#sym-flask-dispatch-request",
                          "files/src/flask/views.py.html#sym-view-dispatch-request")),
])
def test_search_puts_the_defining_symbol_in_the_top_3(browser: str, flask_site: str, query: str,
                                                       defining: tuple[str, ...]) -> None:
    tools = new_tab(browser)
    try:
        open_page(tools, flask_site + "index.html")
        links = result_links(tools, query)
        assert any(link.endswith(defining) for link in links), (query, "\n".join(links))
        assert tools.errors() == []
    finally:
        tools.close()


@pytest.mark.parametrize("page", ["index.html", "files/src/flask/app.py.html",
                                  "files/src/flask/sessions.py.html", "files/tests/test_basic.py.html",
                                  "modules/src/flask/index.html", "files/docs/api.rst.html",
                                  "files/docs/quickstart.rst.html"])
def test_no_horizontal_overflow_at_1280px(browser: str, flask_site: str, page: str) -> None:
    tools = new_tab(browser, width=1280)
    try:
        open_page(tools, flask_site + page)
        tools.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")  # sources too
        tools.pump(0.5)
        overflow = tools.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth")
        assert overflow <= 0, (page, overflow)
        if page.endswith(".rst.html"):  # a doc rendered, its autodoc directives linked to the sections
            hrefs = tools.evaluate("Array.from(document.querySelectorAll('.sb-document a'))"
                                   ".map(a => a.getAttribute('href'))")
            assert hrefs
            dangling = tools.evaluate(  # the outline's links land on the rendered sections
                "Array.from(document.querySelectorAll('.md-content a[href^=\"#rst-\"]'))"
                ".filter(a => !document.getElementById(a.getAttribute('href').slice(1))).length")
            assert tools.evaluate("document.querySelectorAll('.md-content a[href^=\"#rst-\"]').length") > 3
            assert dangling == 0
            if "api" in page:
                assert "../src/flask/app.py.html#sym-flask" in hrefs
        elif page.startswith("files/"):
            body = tools.evaluate("document.querySelector('.md-content').innerText")
            assert "Source (line" in body
            assert any(label in body for label in ("Called by:", "Calls:", "Used by:", "Uses:"))
        if page == "index.html" and not MERMAID_CDN:
            rendered = mermaid_svg_texts(tools)
            assert rendered
            assert "app.py" in rendered[0]
            assert "__init__.py" in rendered[0]
            assert "files/src/flask/app.py.html" in svg_links(tools)  # the files are clickable
        if page.startswith("modules/") and not MERMAID_CDN:
            mermaid_svg_texts(tools)
            assert "../../../files/src/flask/app.py.html" in svg_links(tools)
        assert tools.errors(allow_urls=MERMAID_CDN) == []
    finally:
        tools.close()
