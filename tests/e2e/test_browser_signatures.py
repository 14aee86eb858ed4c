"""Signatures and search ranking in a real browser (Debian chromium over DevTools, tests/e2e/test_browser.py's
helpers), on a small built site: a long signature wraps one parameter per line with nothing cut or hidden
under the copy button, a class shows its constructor's parameters, a property reads as an attribute, and
typing a function's name into Material's search box puts that function's section first."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from generator.build import build
from sourcebook.config import load_config
from tests.support.browser import CHROMIUM, DevTools, new_tab, open_page, result_links
from tests.support.repo_files import write_files
from tests.support.servers import static_site

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed"),
]

PARAMS = [f"option_{i:02d}_name" for i in range(15)]
REPO = {
    "README.md": "# Sigs\n\nA package of signatures. Start with `configure_transport` in the client.\n",
    "docs/guide.md": ("# Guide\n\nCall configure_transport before anything else; configure_transport takes "
                      "fifteen options. The pool is a ConnectionPool.\n"),
    "sigs/__init__.py": '"""Sigs."""\nfrom .api import ConnectionPool, configure_transport\n',
    "sigs/api.py": (
        '"""The API."""\n\n\ndef configure_transport(\n'
        + "".join(f"    {name}: int | None = {i * 1000},\n" for i, name in enumerate(PARAMS))
        + ') -> dict[str, int]:\n    """Configure the transport."""\n    return {}\n\n\n'
        'class ConnectionPool:\n    """A pool."""\n\n'
        "    def __init__(self, host: str, port: int = 8080, *, maxsize: int = 10) -> None:\n"
        "        self.host = host\n\n"
        '    @property\n    def pool_size(self) -> int:\n        """The number of connections."""\n'
        "        return 1\n"),
    "router/router.go": ("package router\n\n// Router routes requests to handlers.\ntype Router struct {\n"
                         "\tRoutes int\n}\n\n// RouterGroup is a Router's group of routes.\n"
                         "type RouterGroup struct{}\n\n// ServeHTTP serves one request.\n"
                         "func (r *Router) ServeHTTP(w int) {}\n\n// Handle adds a route to the Router.\n"
                         "func (r *Router) Handle(path string) {}\n"),
    "sigs/client.py": ('"""A client built on configure_transport."""\n'
                       "from .api import configure_transport\n\n\n"
                       "def connect():\n"
                       '    """Connect: calls configure_transport with defaults."""\n'
                       "    return configure_transport()\n"),
}
PAGE = "files/sigs/api.py.html"


@pytest.fixture(scope="module")
def sig_site(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    root = write_files(tmp_path_factory.mktemp("sig-repo"), REPO)
    report = build(load_config(root), index=False)
    assert report.site_dir is not None
    with static_site(report.site_dir) as url:
        yield url


def _signature(tools: DevTools, anchor: str) -> dict[str, Any]:
    """The signature block under the heading `anchor`: its text, scroll/client widths, and whether the
    copy button's box meets any box of the signature's text (one rect per line/span, from a Range)."""
    return tools.evaluate(f"""(() => {{
      const h = document.getElementById({anchor!r});
      let el = h.nextElementSibling;
      while (el && !el.classList.contains('sb-signature')) el = el.nextElementSibling;
      const pre = el.querySelector('pre'), code = pre.querySelector('code');
      const button = el.querySelector('.md-code__button[data-md-type="copy"], .md-clipboard');
      const range = document.createRange();
      range.selectNodeContents(code);
      const rects = Array.from(range.getClientRects()).filter(r => r.width > 0 && r.height > 0);
      let overlap = null;
      if (button) {{
        const b = button.getBoundingClientRect();
        const hit = rects.find(r => r.left < b.right && b.left < r.right
                                 && r.top < b.bottom && b.top < r.bottom);
        if (hit) overlap = [hit.left, hit.top, hit.right, hit.bottom, b.left, b.top, b.right, b.bottom];
      }}
      return {{text: code.innerText, scroll: pre.scrollWidth, client: pre.clientWidth,
               codeScroll: code.scrollWidth, codeClient: code.clientWidth,
               button: !!button, overlap: overlap, rects: rects.length}};
    }})()""")


@pytest.mark.parametrize("width", [1280, 800])
def test_long_signature_wraps_one_parameter_per_line_uncut(browser: str, sig_site: str, width: int) -> None:
    tools = new_tab(browser, width=width)
    try:
        open_page(tools, sig_site + PAGE)
        sig = _signature(tools, "sym-configure-transport")
        lines = [line.strip() for line in str(sig["text"]).splitlines()]
        for i, name in enumerate(PARAMS):  # each parameter, whole, on a line of its own
            assert f"{name}: int | None = {i * 1000}," in lines, (name, sig["text"])
        assert "…" not in str(sig["text"])
        assert lines[0].startswith("def configure_transport(")
        assert lines[-1] == ") -> dict[str, int]"
        assert sig["scroll"] <= sig["client"], sig  # no horizontal scroll: every parameter in view
        assert sig["codeScroll"] <= sig["codeClient"], sig
        assert sig["button"], "Material's copy button is on the signature"
        assert sig["overlap"] is None, sig  # the copy button sits beside the text, not over it
        assert tools.errors() == []
    finally:
        tools.close()


def test_class_shows_constructor_and_property_reads_as_attribute(browser: str, sig_site: str) -> None:
    tools = new_tab(browser, width=1280)
    try:
        open_page(tools, sig_site + PAGE)
        cls = _signature(tools, "sym-connectionpool")
        text = " ".join(str(cls["text"]).split())
        assert text.startswith("class ConnectionPool("), text
        for part in ("host: str", "port: int = 8080", "*", "maxsize: int = 10"):
            assert part in text, (part, text)
        assert "self" not in text  # the constructor's parameters as a caller passes them
        assert cls["overlap"] is None, cls
        prop = _signature(tools, "sym-connectionpool-pool-size")
        prop_text = " ".join(str(prop["text"]).split())
        assert prop_text == "pool_size: int", prop_text  # an attribute: no def, no parentheses
        kind = tools.evaluate("document.getElementById('sym-connectionpool-pool-size').dataset.kind")
        assert kind == "property"
        assert tools.errors() == []
    finally:
        tools.close()


@pytest.mark.parametrize(("query", "first"), [
    ("configure_transport", PAGE + "#sym-configure-transport"),
    # a member's title `ConnectionPool.pool_size` matches the camelCase-split, wildcarded query on one more
    # term (`pool*`) than the class's own title: the exact name still puts the class first
    ("ConnectionPool", PAGE + "#sym-connectionpool"),
    ("ConnectionPool.pool_size", PAGE + "#sym-connectionpool-pool-size"),  # a member by its qualname
    ("Router", "files/router/router.go.html#sym-router"),  # Go: its methods and RouterGroup match too
    ("Router.ServeHTTP", "files/router/router.go.html#sym-router-servehttp"),
])
def test_search_puts_the_defining_section_first(browser: str, sig_site: str, query: str, first: str) -> None:
    """The name also appears in a guide, the README, another module's docstring and call: the defining
    section still comes first."""
    tools = new_tab(browser)
    try:
        open_page(tools, sig_site + "index.html")
        links = result_links(tools, query, items=1)
        # Material groups results by page: the first item is the defining page, and the first section it
        # lists under that page is the symbol's own
        page = first.split("#", maxsplit=1)[0]
        assert links, query
        assert links[0].split("#", maxsplit=1)[0] == page, (query, links)
        sections = [link for link in links if "#" in link]
        assert sections, (query, links)
        assert sections[0] == first, (query, links)
        assert tools.errors() == []
    finally:
        tools.close()
