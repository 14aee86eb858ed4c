"""The split search index (generator/site/search_split.py) through a real `mkdocs build --strict` and a real
chromium: pages load titles only; the first search loads the body texts once and finds words that only the
body holds, over http and from file://."""

from __future__ import annotations

import functools
import http.server
import json
import re
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generator.build import build
from sourcebook.config import load_config
from tests.repo_files import write_files
from tests.test_browser import CHROMIUM, DevTools, _open, _page, _type
from tests.test_browser import browser as browser  # noqa: PLC0414 -- the chromium fixture, shared

REPO = {
    "pkg/widgets.py": ('"""Widgets."""\n\n\ndef assemble_widget(parts):\n'
                       '    """Bolt the parts together with the frobnicator, then polish."""\n'
                       '    return parts\n\n\n'
                       'class WidgetFactory:\n    """Makes widgets in batches."""\n'),
    "pkg/gears.py": '"""Gears."""\n\n\ndef turn(n):\n    """Rotate by quarterturns."""\n    return n\n',
}
BODY_ONLY = "frobnicator"  # in a docstring: no title, no symbol name


@pytest.fixture(scope="module")
def site_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = write_files(tmp_path_factory.mktemp("split") / "repo", REPO)
    report = build(load_config(root), index=False)
    assert report.site_dir is not None
    return report.site_dir


@pytest.mark.slow
def test_the_index_pages_load_holds_titles_and_the_texts_are_one_separate_file(site_dir: Path) -> None:
    search = site_dir / "search"
    eager = json.loads((search / "search_index.json").read_text(encoding="utf-8"))
    # file:// loads the offline copy as a script: the same eager index, not the full one
    offline = (search / "search_index.js").read_text(encoding="utf-8")
    assert json.loads(offline.removeprefix("var __index = ")) == eager
    assert BODY_ONLY not in json.dumps(eager)
    pages = eager["config"]["sourcebook"]["pages"]
    titles = {(pages[d[0]], d[1]): d[2] for d in eager["docs"]}
    assert titles[("files/pkg/widgets.py.html", "sym-assemble-widget")] == "assemble_widget"
    texts_file = search / eager["config"]["sourcebook"]["text"]
    assert sorted(p.name for p in search.iterdir()) == sorted(
        ["search_index.json", "search_index.js", texts_file.name])
    script = texts_file.read_text(encoding="utf-8")
    texts = json.loads(re.fullmatch(r"self\.__sourcebookSearchText = (.*);\n", script, re.S).group(1))
    assert len(texts) == len(eager["docs"])
    at = next(i for i, d in enumerate(eager["docs"]) if d[1] == "sym-assemble-widget")
    assert BODY_ONLY in texts[at]


class _Recorder:
    def __init__(self) -> None:
        self.paths: list[str] = []


@pytest.fixture(scope="module")
def served(site_dir: Path) -> Iterator[tuple[str, _Recorder]]:
    recorder = _Recorder()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            recorder.paths.append(self.path)

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(site_dir)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", recorder
    finally:
        server.shutdown()
        server.server_close()


def _results_with(tools: DevTools, query: str, wanted: str) -> list[str]:
    """Type `query`; the result links, once one of them contains `wanted` (or after 30 s)."""
    tools.evaluate("document.querySelector('.md-search__input').focus()")
    _type(tools, query)
    links: list[str] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not any(wanted in link for link in links):
        tools.pump(0.3)
        links = tools.evaluate("Array.from(document.querySelectorAll('.md-search-result__item a'))"
                               ".map(a => a.getAttribute('href'))")
    return links


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed")
def test_pages_load_titles_and_the_first_search_loads_the_texts(
        browser: str, served: tuple[str, _Recorder]) -> None:
    url, recorder = served
    tools = _page(browser)
    try:
        _open(tools, url + "files/pkg/gears.py.html")
        tools.pump(1.0)
        assert any(p.endswith("/search/search_index.json") for p in recorder.paths)
        assert not any("/search/text-" in p for p in recorder.paths)  # not before a search
        links = _results_with(tools, "WidgetFactory", "sym-widgetfactory")  # a title
        assert any("sym-widgetfactory" in link for link in links), links
        tools.evaluate("document.querySelector('.md-search__input').value = ''")
        links = _results_with(tools, BODY_ONLY, "sym-assemble-widget")  # only the body text holds it
        assert any("sym-assemble-widget" in link for link in links), links
        assert sum("/search/text-" in p for p in recorder.paths) == 1
        assert tools.errors() == []
    finally:
        tools.close()


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed")
def test_body_text_search_works_from_file_urls(browser: str, site_dir: Path) -> None:
    tools = _page(browser)
    try:
        _open(tools, (site_dir / "index.html").as_uri())
        links = _results_with(tools, BODY_ONLY, "sym-assemble-widget")
        assert any("sym-assemble-widget" in link for link in links), links
        assert tools.errors() == []
    finally:
        tools.close()
