"""A repository's Markdown docs render on their pages like its reST ones (sanitized, offline, links to wiki
pages), and reST `.. include::` shows the included file when it is one of the repository's own."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from generator.markup.doc_includes import include_path, included_files
from generator.markup.md_html import render_markdown
from generator.markup.rst import render_rst
from tests.support.browser import CHROMIUM, new_tab, open_page
from tests.support.repo_files import write_files
from tests.support.servers import static_site

GUIDE_MD = """\
# Widgets guide

Read [the core](../pkg/core.py), [the changes](changes.rst), [Usage](#usage) and [gone](nope.md).

[![Build status](https://img.shields.io/b.svg)](https://ci.example.com)
![Architecture](https://example.com/arch.png) and ![local diagram](arch.png)

| Option | Default |
|--------|---------|
| `workers` | 4 |

!!! note "Careful"
    Admonitions render.

## Usage

```python
def run(x):
    return x
```

<script>alert(1)</script>
<img src=x onerror=alert(2)> <a href="javascript:alert(3)">click</a> [js](javascript:alert(4))
<a href="JaVaScRiPt:alert(5)" onclick="alert(6)">raw</a> <svg onload=alert(7)></svg>

Attribute trap
{: onerror=alert(8) }

### Trap heading {: onerror=alert(9) #__config }

<p onmouseover="alert(10)" style="position:fixed;inset:0">overlay</p>
"""

CHANGES = """\
Changes
=======

Version 2.0
-----------

- :class:`~pkg.core.Runner` gained ``run``.

Version 1.0
-----------

- First release.
"""

EVIL_RST = """\
Evil
====

.. include:: ../../etc/passwd

.. include:: /etc/passwd

.. include:: escape.rst

.. include:: evil.rst

.. include:: ../pkg/core.py
   :literal:
   :start-line: 2

After the includes.
"""

FILES: dict[str, str | bytes] = {
    "README.md": "# Widgets\n\nA widget runner. See [the guide](docs/guide.md).\n",
    "CHANGES.rst": CHANGES,
    "docs/guide.md": GUIDE_MD,
    "docs/changes.rst": ".. include:: ../CHANGES.rst\n",
    "docs/license.rst": "License\n=======\n\n.. literalinclude:: ../LICENSE.txt\n    :language: text\n",
    "LICENSE.txt": "Copyright 2026 Widgets <team@example.com>\n",
    # a Sphinx project: `/path` in an include is relative to docs/, the folder holding conf.py
    "docs/conf.py": "project = 'widgets'\n",
    "docs/reference/api.rst": "API\n===\n\n.. literalinclude:: /examples/demo.py\n   :language: python\n",
    "docs/examples/demo.py": "from pkg.core import Runner\n\nRunner().run()\n",
    "docs/evil.rst": EVIL_RST,
    "pkg/__init__.py": '"""Widgets."""\n',
    "pkg/core.py": '"""Core."""\n\n\nclass Runner:\n    """Runs."""\n\n    def run(self) -> None:\n'
                   '        """Go."""\n',
}


def _article(page: Path) -> str:
    return page.read_text(encoding="utf-8").split("<article", 1)[1].split("</article>", 1)[0]


def _document(page: Path) -> str:
    return _article(page).split('class="sb-document', 1)[1]


def _repo(tmp_path: Path) -> Path:
    root = write_files(tmp_path / "repo", FILES)
    outside = tmp_path / "secret.txt"
    outside.write_text("TOP-SECRET outside the repository\n", encoding="utf-8")
    (root / "docs" / "escape.rst").symlink_to(outside)  # a symlink pointing out of the repository
    return root


def _build(root: Path, out: Path) -> None:
    run = subprocess.run([sys.executable, "-m", "sourcebook.cli", "build", str(root), "--out", str(out),
                          "--no-index"], capture_output=True, text=True, check=False,
                         env={**os.environ, "NO_MKDOCS_2_WARNING": "1"})
    assert run.returncode == 0, run.stderr  # the site is built with `mkdocs build --strict`
    assert "Traceback" not in run.stderr


@pytest.mark.slow
def test_markdown_and_included_docs_render_on_their_pages(tmp_path: Path) -> None:
    root = _repo(tmp_path)
    out = tmp_path / "out"
    _build(root, out)
    site = out / "site" / "files"

    guide = _document(site / "docs" / "guide.md.html")
    assert 'sb-md"' in _article(site / "docs" / "guide.md.html")
    assert '<h3 id="md-widgets-guide">Widgets guide</h3>' in guide
    assert '<a href="../pkg/core.py.html">the core</a>' in guide
    assert '<a href="changes.rst.html">the changes</a>' in guide
    assert '<a href="#md-usage">Usage</a>' in guide
    assert "gone" in guide
    assert "nope" not in guide
    assert '<a href="https://ci.example.com">Build status</a>' in guide  # a badge: its link, by its alt
    assert '<a href="https://example.com/arch.png" class="sb-image-link">Architecture</a>' in guide
    assert "local diagram" in guide
    assert "<table>" in guide
    assert "<code>workers</code>" in guide
    assert '<div class="admonition note">' in guide
    assert '<div class="language-python highlight">' in guide
    assert '<span class="k">def</span>' in guide
    article = _article(site / "docs" / "guide.md.html")
    for bad in ("<img", "<script", "<svg", "javascript:", "position:fixed", 'id="__config"'):
        assert bad not in article.lower(), bad
    tags = " ".join(re.findall(r"<[a-zA-Z][^<>]*>", article))
    assert not re.search(r"\son\w+=", tags)  # no event handler, from raw HTML or `{: ...}` alike
    assert "{: onerror=alert(8) }" in guide  # attr_list is off: the trap stays visible text
    # the outline links to the rendered headings (Material's table of contents does not see raw HTML)
    markdown = (out / "docs" / "files" / "docs" / "guide.md.md").read_text(encoding="utf-8")
    assert "- [Widgets guide](#md-widgets-guide)\n    - [Usage](#md-usage)\n" in markdown

    readme = _document(site / "README.md.html")
    assert '<a href="docs/guide.md.html">the guide</a>' in readme

    # docs/changes.rst is only `.. include:: ../CHANGES.rst`: its page shows the changelog
    changes = _document(site / "docs" / "changes.rst.html")
    assert '<h3 id="rst-version-2-0">Version 2.0</h3>' in changes
    assert "<code>run</code>" in changes
    # the included text's API roles link to symbol sections (and are part of the page's key)
    assert 'href="../pkg/core.py.html#sym-runner"><code>Runner</code></a>' in changes
    assert "First release." in changes

    api = _document(site / "docs" / "reference" / "api.rst.html")
    assert '<pre class="code python literal-block"><code>from pkg.core import Runner\n' in api

    license_page = _document(site / "docs" / "license.rst.html")  # Sphinx's literalinclude, as code
    assert '<pre class="code text literal-block"><code>Copyright 2026 Widgets &lt;team@example.com&gt;\n' \
        in license_page

    evil = _document(site / "docs" / "evil.rst.html")
    assert "root:" not in evil
    assert "TOP-SECRET" not in evil
    assert evil.count("its path is not one inside the repository") == 1  # ../../etc/passwd
    # /etc/passwd is docs/etc/passwd to Sphinx (not a file), the symlink out was never scanned
    assert evil.count("it is not among the repository's text files this wiki read") == 2
    assert "it would include itself" in evil
    assert '<pre class="literal-block">class Runner:' in evil  # :literal: with :start-line: 2
    assert "After the includes." in evil
    assert "TOP-SECRET" not in "".join(p.read_text(encoding="utf-8", errors="replace")
                                       for p in out.rglob("*") if p.is_file())

    # --check computes the keys the build wrote, included files and the names they link included
    unchanged = subprocess.run([sys.executable, "-m", "sourcebook.cli", "build", str(root), "--out", str(out),
                                "--check"], capture_output=True, text=True, check=False)
    assert unchanged.returncode == 0, unchanged.stdout + unchanged.stderr
    # an included file changing re-renders the page that includes it (its key names the included files)
    (root / "CHANGES.rst").write_text(CHANGES.replace("First release.", "The very first release."),
                                      encoding="utf-8")
    check = subprocess.run([sys.executable, "-m", "sourcebook.cli", "build", str(root), "--out", str(out),
                            "--check"], capture_output=True, text=True, check=False)
    assert check.returncode == 1
    assert "docs/changes.rst" in check.stdout + check.stderr
    _build(root, out)
    assert "The very first release." in _document(site / "docs" / "changes.rst.html")
    # the class a name in the included text links to moves away: the including page follows
    (root / "pkg" / "core.py").write_text('"""Core, now empty."""\n', encoding="utf-8")
    (root / "pkg" / "engine.py").write_text('"""Engine."""\n\n\nclass Runner:\n    """Runs."""\n',
                                            encoding="utf-8")
    _build(root, out)
    assert "core.py.html#sym-runner" not in _document(site / "docs" / "changes.rst.html")


def test_markdown_document_html_is_sanitized_and_offline() -> None:
    html = render_markdown(GUIDE_MD, {"../pkg/core.py": "../../pkg/core.py.md"}.get)
    assert '<a href="../../pkg/core.py.html">the core</a>' in html
    assert "<img" not in html
    assert "<script" not in html
    assert "<svg" not in html
    assert not re.search(r"<[^>]*\son\w+=", html)
    assert "javascript:" not in html.lower()
    assert 'style="' not in html
    # attr_list is off: `{: ...}` stays text, never an attribute
    assert "{: onerror=alert(8) }" in html
    assert "raw" in html
    assert "click" in html
    logo = render_markdown('<p align="center"><img src="https://example.com/logo.svg" height="200"></p>\n')
    assert "example.com" not in logo  # a remote image without words is dropped, never loaded


def test_deeply_nested_markdown_renders_without_script() -> None:
    deep = ">" * 3000 + " <script>x</script>\n"
    html = render_markdown(deep)
    assert "<script" not in html
    assert render_markdown("fine\n") == "<p>fine</p>"


def test_include_paths_stay_inside_the_repository() -> None:
    assert include_path("docs/changes.rst", "../CHANGES.rst") == "CHANGES.rst"
    assert include_path("docs/a/b.rst", "../c.rst") == "docs/c.rst"
    for bad in ("../../etc/passwd", "/etc/passwd", "<isonum.txt>", "file:///etc/passwd", "C:/x",
                "..\\..\\x", "~/.ssh/id_rsa", "../..", ""):
        assert include_path("docs/changes.rst", bad) is None, bad
    # in a Sphinx project, `/` is its source folder, never the filesystem's root
    assert include_path("doc/en/ref/fixtures.rst", "/example/a.py", "doc/en") == "doc/en/example/a.py"
    assert include_path("doc/en/ref/fixtures.rst", "/etc/passwd", "doc/en") == "doc/en/etc/passwd"
    assert include_path("doc/en/x.rst", "/etc/passwd", "") == "etc/passwd"
    for bad in ("/../../../etc/passwd", "//etc/passwd", "/"):
        assert include_path("doc/en/x.rst", bad, "doc/en") is None, bad


def test_include_follows_the_options_and_stops_at_loops_depth_and_size() -> None:
    files = {
        "docs/a.rst": "A\n=\n\n.. include:: b.rst\n",
        "docs/b.rst": "from b\n\n.. include:: a.rst\n",  # a loop round two files
        "docs/part.rst": "head\n.. marker\nkept *part*\n.. end\ntail\n",
        "docs/deep0.rst": "d0\n\n.. include:: deep1.rst\n",
        "docs/deep1.rst": "d1\n\n.. include:: deep2.rst\n",
        "docs/deep2.rst": "d2\n\n.. include:: deep3.rst\n",
        "docs/deep3.rst": "d3\n\n.. include:: deep4.rst\n",
        "docs/deep4.rst": "d4\n\n.. include:: deep5.rst\n",
        "docs/deep5.rst": "d5\n",
        "docs/big.rst": "x " * 600_000,
    }
    pages = {"deep5.rst": "deep5.rst.md", "big.rst": "big.rst.md"}
    looped = render_rst(files["docs/a.rst"], pages.get, path="docs/a.rst", read=files.get)
    assert "from b" in looped
    assert "it would include itself" in looped
    clipped = render_rst(".. include:: part.rst\n   :start-after: .. marker\n   :end-before: .. end\n",
                         path="docs/x.rst", read=files.get)
    assert "kept <em>part</em>" in clipped
    assert "head" not in clipped
    assert "tail" not in clipped
    deep = render_rst(files["docs/deep0.rst"], pages.get, path="docs/deep0.rst", read=files.get)
    assert "d4" in deep
    assert "d5" not in deep
    assert 'href="deep5.rst.html">docs/deep5.rst</a><em> (not shown here).' in deep
    picked = render_rst(".. literalinclude:: part.rst\n   :lines: 1,3-\n   :language: rst\n",
                        path="docs/x.rst", read=files.get)
    assert picked == ('<pre class="code rst literal-block"><code>head\nkept *part*\n.. end\ntail\n'
                      '</code></pre>')
    big = render_rst(".. include:: big.rst\n", pages.get, path="docs/x.rst", read=files.get)
    assert 'href="big.rst.html"' in big
    assert "x x x" not in big
    # no repository to read (a README on the home page): a note, never the file
    assert "not shown here" in render_rst(".. include:: big.rst\n")
    # the keys name every file a document may include, nested too
    assert set(included_files("docs/deep0.rst", files["docs/deep0.rst"], files.get)) == {
        "docs/deep1.rst", "docs/deep2.rst", "docs/deep3.rst", "docs/deep4.rst"}


def test_an_included_files_sphinx_roles_render_whatever_was_rendered_before() -> None:
    """A role only the included file uses (flask's changes.rst includes CHANGES.rst and its :issue:) shows its
    text as code the first time this process meets it, not as an unknown role's error: docutils' role
    registry is process-wide, so what a page showed depended on the documents rendered before it."""
    files = {"docs/changes.rst": ".. include:: ../CHANGES.rst\n",
             "CHANGES.rst": "Fixed :sbonlyincluded:`5123` and used :sbonlyincluded2:`x <y>`.\n"}
    html = render_rst(files["docs/changes.rst"], path="docs/changes.rst", read=files.get)
    assert "<code>5123</code>" in html
    assert "<code>x</code>" in html
    assert "sbonlyincluded" not in html  # no "Unknown interpreted text role" message


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed")
def test_a_markdown_doc_page_renders_cleanly_in_a_browser(browser: str, tmp_path: Path) -> None:
    """The rendered Markdown shows its table, code and admonition; nothing in it runs, nothing is fetched
    from another host, the page does not overflow at 1280 px and the console stays clean; so does a reST
    page made of an included file."""
    root = write_files(tmp_path / "repo", {k: v for k, v in FILES.items() if k != "docs/evil.rst"})
    out = tmp_path / "out"
    _build(root, out)
    with static_site(out / "site") as url:
        tools = new_tab(browser, width=1280)
        try:
            open_page(tools, url + "files/docs/guide.md.html")
            assert tools.evaluate("document.querySelectorAll('.sb-md table').length") == 1
            assert tools.evaluate("document.querySelectorAll('.sb-md .admonition').length") == 1
            assert tools.evaluate("document.querySelectorAll('.sb-md img').length") == 0
            assert tools.evaluate("typeof window.alert === 'function' && !document.title.includes('alert')")
            assert tools.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
            assert tools.errors() == []
            # a reST page made of an included file: its text shows, nothing overflows, nothing errs
            open_page(tools, url + "files/docs/changes.rst.html")
            assert tools.evaluate("document.querySelectorAll('.sb-rst h3').length") == 2
            assert tools.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
            assert tools.errors() == []
        finally:
            tools.close()


def test_markdown_lists_nested_by_two_spaces_nest_as_on_github() -> None:
    text = ("Steps:\n\n1. Install\n   - from PyPI\n     or a wheel\n   - from source\n2. Run\n\n   ```sh\n"
            "   widgets run\n   ```\n3. Done\n\nThen:\n\n- a\n  - b\n\n        code under b\n\nAfter.\n\n"
            "```md\n- kept\n  - as typed\n```\n")
    html = re.sub(r"\s+", "", render_markdown(text))
    assert html.startswith(
        "<p>Steps:</p><ol><li>Install<ul><li>fromPyPIorawheel</li><li>fromsource</li></ul></li><li><p>Run</p>"
        '<divclass="language-shhighlight">')
    assert "</code></pre></div></li><li><p>Done</p></li></ol><p>Then:</p>" in html  # fence ends in item
    assert '<ul><li>a<ul><li>b<divclass="language-texthighlight"><pre><span></span><code>codeunderb' in html
    assert "</ul></li></ul><p>After.</p>" in html
    assert '<spanclass="w"></span><spanclass="k">-</span>' in html  # fenced code keeps its indentation


def test_home_page_readme_lists_nested_by_two_spaces_nest() -> None:
    import markdown

    from generator.pages.render_markdown import render_overview_page
    from generator.pages.writer import OverviewContext, OverviewDraft

    readme = "# Widgets\n\nFeatures:\n\n- fast\n  - really\n- small\n\n```md\n- a\n  - b\n```\n"
    ctx = OverviewContext(repo_name="w", readme=readme, readme_path="README.md")
    md = render_overview_page(ctx, OverviewDraft(summary="S."), writer_id="extractive/1")
    page = re.sub(r"\s+", "", markdown.markdown(md, extensions=["tables", "pymdownx.superfences"]))
    assert "<ul><li>fast<ul><li>really</li></ul></li><li>small</li></ul>" in page
    assert "```md\n- a\n  - b\n```" in md  # fenced code as typed


def test_github_alerts_become_admonitions() -> None:
    html = render_markdown("> [!WARNING]\n> Back up *first*.\n\nText.\n\n> A quote, [!NOTE] inside.\n")
    assert html.startswith('<div class="admonition warning">\n<p class="admonition-title">Warning</p>\n'
                           "<p>Back up <em>first</em>.</p>\n</div>")
    assert "<blockquote>\n<p>A quote, [!NOTE] inside.</p>\n</blockquote>" in html


def test_rst_title_after_labels_and_admonition_arguments_with_roles() -> None:
    html = render_rst(".. _fixtures:\n\nFixtures reference\n==================\n\n"
                      ".. seealso:: :ref:`the how-to <how-to>` and *more*\n\nBody.\n")
    assert "<h1" not in html  # the page has its own title
    assert "Fixtures reference" not in html
    assert '<p class="admonition-title">See also</p>\n<p>the how-to and <em>more</em></p>' in html
    assert ":ref:" not in html


AUTODOC_FILES: dict[str, str | bytes] = {
    "README.md": "# Widgets\n\nWidgets, documented by mkdocstrings.\n",
    "pkg/__init__.py": '"""Widgets."""\nfrom pkg.core import Runner\n',
    "pkg/core.py": ('"""Core."""\n\n\nclass Runner:\n    """Runs `jobs` in order.\n\n    More text.\n'
                    '    """\n\n    def run(self) -> None:\n        pass\n'),
    "docs/api.md": """\
# API

??? abstract "API Reference"
    ::: pkg.core.Runner
        options:
            show_root_heading: true
            filters:
                - "__init__"

The runner.

::: pkg.Runner
    :docstring:
    :members: run

::: pkg.gone.Nothing
""",
}


@pytest.mark.slow
def test_mkdocstrings_directives_link_to_their_symbols_with_summaries(tmp_path: Path) -> None:
    root = write_files(tmp_path / "repo", AUTODOC_FILES)
    out = tmp_path / "out"
    _build(root, out)
    api = _document(out / "site" / "files" / "docs" / "api.md.html")
    link = ('<p class="sb-autodoc"><a href="../pkg/core.py.html#sym-runner"><code>{}</code></a>: '
            "Runs <code>jobs</code> in order.</p>")
    assert link.format("pkg.core.Runner") in api  # inside the collapsible `???` block
    assert link.format("pkg.Runner") in api  # re-exported by the package: the class where it is defined
    assert '<p class="sb-autodoc"><code>pkg.gone.Nothing</code></p>' in api  # no such symbol: code only
    assert '<details class="abstract">\n<summary>API Reference</summary>' in api
    for raw in (":::", "options:", "show_root_heading", ":docstring:", ":members:", "???"):
        assert raw not in api, raw
    assert "The runner." in api
    # nor in the page's summary, drawn from the document's first words
    assert ":::" not in _article(out / "site" / "files" / "docs" / "api.md.html").replace(api, "")
    # the summary is part of the page's key: a new docstring re-renders the page that documents it
    (root / "pkg" / "core.py").write_text(AUTODOC_FILES["pkg/core.py"].replace("Runs `jobs`", "Starts jobs"),
                                          encoding="utf-8")
    check = subprocess.run([sys.executable, "-m", "sourcebook.cli", "build", str(root), "--out", str(out),
                            "--check"], capture_output=True, text=True, check=False)
    assert check.returncode == 1
    assert "docs/api.md" in check.stdout + check.stderr
    _build(root, out)
    assert "Starts jobs in order.</p>" in _document(out / "site" / "files" / "docs" / "api.md.html")


RST_AUTODOC_FILES: dict[str, str | bytes] = {
    "README.md": "# Widgets\n\nWidgets, documented by Sphinx autodoc.\n",
    "pkg/__init__.py": '"""Widgets."""\nfrom pkg.core import Runner\n',
    "pkg/core.py": ('"""Core of the <b>widgets</b>.\n\nMore.\n"""\n\n\nclass Runner:\n'
                    '    """Runs `jobs` in order.\n\n    More text.\n    """\n\n\n'
                    'def helper(x: int) -> int:\n'
                    '    """Helps with <script>alert(1)</script> things."""\n    return x\n'),
    "docs/api.rst": """\
API
===

.. currentmodule:: pkg

.. autoclass:: Runner
   :members:

   Hand-written words about the runner.

.. autofunction:: pkg.core.helper(x)

.. automodule:: pkg.core
   :members:

.. autoclass:: pkg.gone.Nothing
""",
}


@pytest.mark.slow
def test_rst_autodoc_directives_link_to_their_symbols_with_summaries(tmp_path: Path) -> None:
    """`.. autoclass::`, `.. autofunction::`, `.. automodule::` through the real docutils path: the name
    linked to its section (under the document's current module), then its summary, escaped; an unknown name
    is inert code; no directive or option shows raw."""
    root = write_files(tmp_path / "repo", RST_AUTODOC_FILES)
    out = tmp_path / "out"
    _build(root, out)
    api = _document(out / "site" / "files" / "docs" / "api.rst.html")
    assert ('<p class="sb-autodoc"><a class="reference external" href="../pkg/core.py.html#sym-runner">'
            "<code>Runner</code></a>: Runs <code>jobs</code> in order.</p>") in api
    assert "Hand-written words about the runner." in api
    assert ('<a class="reference external" href="../pkg/core.py.html#sym-helper"><code>pkg.core.helper</code>'
            "</a>: Helps with &lt;script&gt;alert(1)&lt;/script&gt; things.</p>") in api
    # the summary is plain text: an inline HTML emphasis in a docstring reads as its words, never as a tag
    assert ('<a class="reference external" href="../pkg/core.py.html"><code>pkg.core</code></a>: '
            "Core of the widgets.</p>") in api
    assert "<b>" not in api
    assert '<p class="sb-autodoc"><code>pkg.gone.Nothing</code></p>' in api
    for raw in (".. auto", "autoclass", ":members:", "currentmodule", "<script"):
        assert raw not in api, raw
