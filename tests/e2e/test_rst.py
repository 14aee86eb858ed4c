"""reST READMEs and docs render to sanitized HTML: no raw directives, no remote images, nothing that runs."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from generator.build import build
from generator.markup.rst import LinkResolver, render_rst
from sourcebook.config import load_config
from tests.support.browser import CHROMIUM, new_tab, open_page
from tests.support.servers import static_site

# a real project's README.rst shape: a centred logo with :target:/:align:/:height:, badges, Sphinx roles
README = """\
.. image:: https://example.com/logo.svg
   :target: https://example.com
   :align: center
   :height: 200
   :alt: Widgets

------

.. image:: https://img.shields.io/pypi/v/widgets.svg
    :target: https://pypi.org/project/widgets/

.. image:: https://img.shields.io/badge/ci-passing.svg
    :target: https://ci.example.com
    :alt: CI

The ``widgets`` framework makes small tests easy. See :class:`widgets.Runner`, :ref:`the docs <docs>`,
:issue:`123` and :pep:`8`.

.. note::

   A note with *emphasis*.

.. versionadded:: 2.0
   New stuff.

.. code-block:: python

    def test_answer():
        assert inc(3) == 5

.. raw:: html

   <script>alert(1)</script>

.. include:: /etc/passwd

.. toctree::
   :maxdepth: 2

   one

.. autoclass:: widgets.Runner
   :members:

Features
--------

- Detailed `assert messages <https://docs.example.com/assert.html>`_
- `Evil <javascript:alert(1)>`_, `data <data:text/html;base64,PHNjcmlwdD4=>`_, `local <src/widgets/core.py>`_
  and `gone <nope.rst>`_

.. |badge| image:: https://img.shields.io/x.svg
   :target: https://x.example

Inline |badge| here. <script>alert(2)</script> <img src=x onerror=alert(3)>
"""


def test_readme_rst_renders_without_raw_markup(capfd: pytest.CaptureFixture[str]) -> None:
    pages = {"src/widgets/core.py": "files/src/widgets/core.py.md"}
    html = render_rst(README, pages.get)
    out, err = capfd.readouterr()
    assert not out
    assert not err  # docutils' warnings are kept out of stderr
    for raw in (":target:", ":align:", ":height:", ".. image", "image::", ":class:", ":ref:", ":issue:",
                ".. note", "versionadded", "toctree", "autoclass", ":members:", "System Message",
                "problematic"):
        assert raw not in html, raw
    assert "<img" not in html  # remote images and badges are not loaded: the site works offline
    assert '<a class="reference external" href="https://ci.example.com">CI</a>' in html.replace("\n", "")
    assert "<code>widgets</code>" in html
    assert "<code>widgets.Runner</code>" in html
    assert '<div class="admonition note">' in html
    assert '<p class="admonition-title">Added in version 2.0</p>' in html
    assert "def test_answer():" in html
    assert '<h3 id="rst-features">Features</h3>' in html  # the section's id, for the page's outline
    assert 'href="files/src/widgets/core.py.html"' in html  # raw HTML is not rewritten by MkDocs
    assert "gone" in html
    assert "nope.rst" not in html


def test_readme_rst_is_inert() -> None:
    html = render_rst(README)
    assert "<script" not in html
    assert "alert(1)" not in html  # the raw directive is disabled, not shown
    assert "/etc/passwd" not in html  # no file insertion
    tags = " ".join(re.findall(r"<[a-zA-Z][^<>]*>", html))
    assert not re.search(r"\son\w+=", tags)
    assert not re.search(r"href=\"(javascript|data):", html)
    assert "&lt;script&gt;alert(2)&lt;/script&gt;" in html  # text stays text


@pytest.mark.slow
def test_home_page_renders_a_readme_rst(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "src" / "widgets").mkdir(parents=True)
    (root / "README.rst").write_text(README, encoding="utf-8")
    (root / "src" / "widgets" / "core.py").write_text(
        '"""Core."""\n\n\nclass Runner:\n    """Runs."""\n', encoding="utf-8")
    assert build(load_config(root), index=False).site_built  # mkdocs build --strict
    home = (root / ".sourcebook" / "site" / "index.html").read_text(encoding="utf-8")
    article = home.split('<article', 1)[1].split("</article>", 1)[0]
    for raw in (":target:", ":align:", ":height:", ".. image", ":class:", "toctree"):
        assert raw not in article, raw
    assert "<img" not in article
    assert '<div class="admonition note">' in article
    assert 'href="files/src/widgets/core.py.html"' in article
    assert "<script" not in article
    assert "makes small tests easy" in article


def test_markdown_readme_images_become_words_or_links() -> None:
    import markdown

    from generator.pages.render_markdown import render_overview_page
    from generator.pages.writer import OverviewContext, OverviewDraft

    readme = ("# Widgets\n\nSmall widgets.\n\n## Install\n\n[![Build status](https://img.shields.io/b.svg)](https://ci.example.com)\n"
              "![logo](https://example.com/logo.png) and ![local](docs/arch.png)\n\n"
              "![ref image][logo]\n\n[logo]: https://example.com/logo.png\n\n"
              "```md\n![kept in code](https://example.com/x.png)\n```\n\n" + "More words. " * 60 + "\n")
    ctx = OverviewContext(repo_name="w", readme=readme, readme_path="README.md")
    md = render_overview_page(ctx, OverviewDraft(summary="S."), writer_id="extractive/1")
    page = markdown.markdown(md, extensions=["tables", "pymdownx.superfences"])
    outside = re.sub(r"<(pre|code)\b.*?</\1>", "", page, flags=re.S)
    assert "<img" not in outside
    assert '<a href="https://ci.example.com">Build status</a>' in page
    assert "logo and local" in page
    assert "![kept in code](https://example.com/x.png)" in md  # code stays verbatim


GUIDE = """\
Guide
=====

.. module:: widgets

Start with :class:`Runner` and :meth:`~widgets.Runner.run`; the code is in
`the core <../src/widgets/core.py>`_.

.. autoclass:: Runner
   :members:

   Hand-written words under the directive.

.. image:: https://example.com/diagram.png

.. raw:: html

   <script>alert(1)</script>

`Evil <javascript:alert(1)>`_, :class:`nowhere.Missing` and <img src=x onerror=alert(3)>.

Running it
----------

Call ``run``.
"""


@pytest.mark.slow
def test_doc_page_shows_the_rendered_document_with_symbol_links(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "src" / "widgets").mkdir(parents=True)
    (root / "docs").mkdir()
    (root / "docs" / "guide.rst").write_text(GUIDE, encoding="utf-8")
    (root / "src" / "widgets" / "core.py").write_text(
        '"""Core."""\n\n\nclass Runner:\n    """Runs."""\n\n    def run(self) -> None:\n        """Go."""\n',
        encoding="utf-8")
    out = tmp_path / "out"
    assert build(load_config(root, overrides={"out_dir": str(out)}), index=False).site_built  # --strict
    page = (out / "site" / "files" / "docs" / "guide.rst.html").read_text(encoding="utf-8")
    article = page.split("<article", 1)[1].split("</article>", 1)[0]
    document = article.split('class="sb-document', 1)[1]
    # API roles and autodoc directives link to the symbols' sections; the relative link to the file's page
    assert 'href="../src/widgets/core.py.html#sym-runner"><code>Runner</code></a>' in document
    assert 'href="../src/widgets/core.py.html#sym-runner-run"><code>run</code></a>' in document
    assert 'href="../src/widgets/core.py.html">the core</a>' in document
    assert "Hand-written words under the directive." in document
    # the outline links to the document's sections (Material's table of contents does not see raw HTML)
    markdown = (out / "docs" / "files" / "docs" / "guide.rst.md").read_text(encoding="utf-8")
    assert "## Outline\n\n- [Running it](#rst-running-it)\n" in markdown
    assert '<h3 id="rst-running-it">Running it</h3>' in document
    assert "<code>nowhere.Missing</code>" in document  # an unknown target: plain code, never a raw role
    for raw in (":class:", ":meth:", "autoclass", ".. module", ":members:", "<img", "<script", "alert(1)",
                "javascript:", "example.com/diagram"):
        assert raw not in document, raw
    assert list((out / "cache" / "documents").glob("*.json"))  # rendered once, kept for the next build
    # --check computes the same key (the symbols the document names are part of it): nothing is stale
    assert build(load_config(root, overrides={"out_dir": str(out)}), check=True).stale == []
    # the document is the doc file's own text: indexed as that file, not again as its page
    from generator.pages.render_markdown import index_text

    indexed = index_text((out / "docs" / "files" / "docs" / "guide.rst.md").read_text(encoding="utf-8"))
    assert "Hand-written words" not in indexed
    assert "- Running it\n" in indexed  # the outline's words, not its anchors
    assert "#rst-" not in indexed
    assert "# guide.rst" in indexed


def test_document_cache_renders_a_text_once_while_its_links_resolve_the_same(tmp_path: Path) -> None:
    from generator.markup.doc_html import DocumentCache

    calls: list[str] = []

    def counting(text: str, link: LinkResolver, name: LinkResolver) -> str:
        calls.append(text)
        return render_rst(text, link, symbol=name)

    key = b"k" * 32
    pages = {"../src/widgets/core.py": "../src/widgets/core.py.md"}
    symbols = {"widgets.Runner": "../src/widgets/core.py.md#sym-runner"}
    first = DocumentCache(tmp_path, key, counting)
    html = first.render(GUIDE, pages.get, symbols.get)
    assert 'href="../src/widgets/core.py.html#sym-runner"' in html
    first.prune()
    again = DocumentCache(tmp_path, key, counting)  # the next build
    assert again.render(GUIDE, pages.get, symbols.get) == html
    assert len(calls) == 1
    assert again.hits == 1
    moved = {"widgets.Runner": "../src/widgets/runner.py.md#sym-runner"}  # the symbol moved: render again
    assert 'href="../src/widgets/runner.py.html#sym-runner"' in again.render(GUIDE, pages.get, moved.get)
    assert len(calls) == 2
    other_user = DocumentCache(tmp_path, b"o" * 32, counting)  # entries are named under this user's key
    other_user.render(GUIDE, pages.get, moved.get)
    assert len(calls) == 3
    other_user.prune()  # what this build did not keep goes
    assert len(list(tmp_path.glob("*.json"))) == 1
    DocumentCache(tmp_path, None, counting).render(GUIDE, pages.get, moved.get)  # no key: nothing kept
    assert len(calls) == 4
    assert len(list(tmp_path.glob("*.json"))) == 1


WIDE_DOC = """\
Settings
========

.. list-table:: Settings
   :header-rows: 1

   * - Name
     - Default
   * - ``SESSION_COOKIE_VERY_LONG_NAME_THAT_DOES_NOT_BREAK_ANYWHERE_AT_ALL_EVEN_AT_THE_EDGE_OF_THE_PAGE``
     - ``a_very_long_default_value_without_any_spaces_in_it_whatsoever_0123456789abcdef_0123456789``

+--------------------------------------------------------------+--------------------------------------------+
| grid_table_cell_with_a_long_unbreakable_identifier_xxxxxxxxx | another_long_unbreakable_identifier_yyyyyy |
+--------------------------------------------------------------+--------------------------------------------+

::

    a literal block with a very long line """ + "." * 200 + """ end
"""


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed")
def test_a_wide_rendered_document_scrolls_inside_the_page(browser: str, tmp_path: Path) -> None:
    """docutils' tables and literal blocks in a doc page scroll within the content at 1280 px; the page
    itself never overflows, and the console stays clean."""
    root = tmp_path / "repo"
    (root / "docs").mkdir(parents=True)
    (root / "docs" / "settings.rst").write_text(WIDE_DOC, encoding="utf-8")
    (root / "core.py").write_text('"""Core."""\n', encoding="utf-8")
    report = build(load_config(root), index=False)
    assert report.site_dir is not None
    with static_site(report.site_dir) as url:
        tools = new_tab(browser, width=1280)
        try:
            open_page(tools, url + "files/docs/settings.rst.html")
            assert tools.evaluate("document.querySelectorAll('.sb-document table').length") == 2
            assert tools.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
            assert tools.errors() == []
        finally:
            tools.close()


def test_a_document_docutils_cannot_render_is_shown_as_text(caplog: pytest.LogCaptureFixture,
                                                            capfd: pytest.CaptureFixture[str]) -> None:
    """600 nested list levels make docutils recurse past Python's limit; its own handler would print and
    sys.exit() the build. The document is shown escaped instead, with one warning."""
    deep = "".join(" " * i + "- item <script>x</script>\n\n" for i in range(0, 1200, 2))
    html = render_rst(deep)
    assert html.startswith('<pre class="sb-rst-text">- item &lt;script&gt;')
    assert "<script" not in html
    assert [r.levelname for r in caplog.records] == ["WARNING"]
    assert "RecursionError" in caplog.records[0].getMessage()
    assert not capfd.readouterr().err  # docutils printed nothing
    assert "<p>fine</p>" in render_rst("fine\n")  # and the next document renders as usual
