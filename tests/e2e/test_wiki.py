"""The wiki a reader learns from, built for real (`sourcebook build` + `mkdocs build --strict`): a section per
symbol with source, calls, callers and tests; source links from the git remote at the built commit."""

from __future__ import annotations

import html
import posixpath
import re
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from generator.analyze.plan import load_state
from generator.build import build
from generator.pages.anchors import symbol_anchor
from generator.pages.render_markdown import index_text
from sourcebook.config import load_config

REPO: dict[str, str | bytes] = {
    "README.md": "# Widgets\n\nWidgets builds widgets.\n",
    "pkg/__init__.py": '"""Widget package."""\nfrom .core import WidgetFactory\n',
    "pkg/core.py": ('"""The core."""\n\n\nclass WidgetFactory:\n    """Makes widgets."""\n\n    size = 1\n\n'
                    '    def assemble_widget(self, name: str) -> str:\n        """Assemble one."""\n'
                    "        return polish_widget(name)\n\n\n"
                    'def polish_widget(name):\n    """Polish it."""\n    return name.upper()\n'),
    "tests/test_core.py": ("from pkg.core import WidgetFactory\n\n\ndef test_assemble():\n"
                           '    assert WidgetFactory().assemble_widget("a") == "A"\n'),
}


def _git(root: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(root), "-c", "user.email=a@b", "-c", "user.name=a", *args],
                          check=True, capture_output=True, text=True).stdout.strip()


def _checkout(make_repo: Callable[..., Path], remote: str | None) -> Path:
    root = make_repo(REPO)
    _git(root, "init", "-q")
    if remote:
        _git(root, "remote", "add", "origin", remote)
    _git(root, "add", "-A")
    _git(root, "commit", "-qm", "first")
    return root


def _html(site: Path, page: str) -> str:
    """The page's HTML with character references decoded (names are written as `&#95;` entities)."""
    return html.unescape((site / page).read_text(encoding="utf-8"))


def test_symbol_sections_show_source_calls_callers_and_tests(make_repo: Callable[..., Path]) -> None:
    root = _checkout(make_repo, "git@github.com:acme/widgets.git")
    report = build(load_config(root), index=False)  # mkdocs build --strict: every link resolves
    assert report.site_dir is not None
    head = _git(root, "rev-parse", "HEAD")
    page = _html(report.site_dir, "files/pkg/core.py.html")
    # a heading per symbol, titled by its name, with its kind and a stable anchor
    heading = '<h4 data-kind="method" id="sym-widgetfactory-assemble-widget">WidgetFactory.assemble_widget'
    assert heading in page
    # source, collapsed, line-numbered, highlighted (escaped by Pygments)
    source = re.search(r'<details class="note sb-source" data-search-exclude(?:="")?>'
                       r"<summary>Source \(lines 9-11\)</summary>(.*?)</details>", page, re.S)
    assert source is not None
    assert '<pre class="sb-lines"><code>9\n10\n11</code></pre>' in source.group(1)  # the line-number gutter
    assert "polish_widget" in source.group(1)
    # the class's own block stops before its members' sections: each line shown once
    assert "Source (lines 4-7)" in page
    # calls, callers, tests: links to the sections
    assert re.search(r'Calls:</strong> <a href="#sym-polish-widget">polish_widget</a>', page)
    assert re.search(r'Called by:</strong> <a href="#sym-widgetfactory-assemble-widget">', page)
    assert re.search(r'Tested by:</strong> <a href="../tests/test_core.py.html#sym-test-assemble">', page)
    # the compact index: one row per API symbol, excluded from the site search
    assert re.search(r'<div class="sb-index" data-search-exclude(?:="")?>', page)
    assert len(re.findall(r'<tr><td class="sb-depth-\d"><a href="#sym-', page)) == 3
    # source links from the git remote at the built commit, line-anchored
    assert f"https://github.com/acme/widgets/blob/{head}/pkg/core.py#L9-L11" in page
    test_page = _html(report.site_dir, "files/tests/test_core.py.html")
    exercised = test_page.split('id="code-it-exercises"')[1].split("</ul>")[0]
    assert '<a href="../pkg/core.py.html#sym-widgetfactory-assemble-widget">' in exercised


def test_a_new_commit_rerenders_links_but_keeps_prose(make_repo: Callable[..., Path]) -> None:
    root = _checkout(make_repo, "https://gitlab.com/acme/widgets.git")
    config = load_config(root)
    build(config, site=False, index=False)
    before = load_state(config.out_dir)["files/pkg/core.py.md"]
    _git(root, "commit", "-q", "--allow-empty", "-m", "second")
    report = build(config, site=False, index=False)
    after = load_state(config.out_dir)["files/pkg/core.py.md"]
    assert "files/pkg/core.py.md" in report.pages_written  # links point at the new commit...
    assert after.draft_key == before.draft_key  # ...but the prose key did not change
    markdown = (config.docs_dir / "files/pkg/core.py.md").read_text(encoding="utf-8")
    head = _git(root, "rev-parse", "HEAD")
    assert f"/-/blob/{head}/pkg/core.py#L9-11" in markdown
    # the search index stores the page without its source, cross-references or commit-pinned URLs
    stored = index_text(markdown)
    assert "sb-source" not in stored
    assert "Called by" not in stored
    assert head not in stored
    # the symbol index as the table of names, kinds, signatures and summaries the page used to carry
    assert ("| [WidgetFactory.assemble&#95;widget](#sym-widgetfactory-assemble-widget) | method | "
            "<code>def assemble&#95;widget(self, name: str) -&gt; str</code> | Assemble one. |") in stored
    assert "<span" not in stored  # the sections' highlighted signatures: markup, and in the table already


def test_no_remote_means_no_source_links(make_repo: Callable[..., Path]) -> None:
    root = _checkout(make_repo, None)
    config = load_config(root)
    build(config, site=False, index=False)
    markdown = (config.docs_dir / "files/pkg/core.py.md").read_text(encoding="utf-8")
    assert "https://" not in markdown
    assert "`pkg/core.py`, lines 9-11" in markdown


@pytest.mark.slow
@pytest.mark.parametrize(("repo", "code_page", "symbol", "test_page", "documented"), [
    ("flask", "files/src/flask/app.py.md", "Flask.dispatch_request", "files/tests/test_basic.py.md", True),
    ("flask", "files/src/flask/sessions.py.md", "SecureCookieSessionInterface.open_session",
     "files/tests/test_session_interface.py.md", False),
    ("requests", "files/src/requests/sessions.py.md", "Session.request", "files/tests/test_requests.py.md",
     True),
])
def test_dev_repositories_pages_show_sections_source_and_call_links(
        request: pytest.FixtureRequest, tmp_path: Path, repo: str, code_page: str, symbol: str,
        test_page: str, documented: bool) -> None:
    """On the pinned sdists (tests/support/real_repos.py). `documented`: the file's docstrings have parameter
    fields and roles naming other files' symbols (flask's sessions.py has neither)."""
    if repo == "flask":  # the session's flask wiki (the browser tests serve its site)
        docs = request.getfixturevalue("flask_wiki") / "docs"
    else:
        root = request.getfixturevalue(f"{repo}_repo")
        config = load_config(root, overrides={"out_dir": str(tmp_path / "out")})
        build(config, site=False, index=False)
        docs = config.docs_dir
    page = (docs / code_page).read_text(encoding="utf-8")
    anchor = symbol_anchor(symbol)
    section = page.split(f"{{ #{anchor} ")[1].split("\n#")[0]
    assert "<details class=\"note sb-source\"" in section  # its source, collapsed
    # call links, and the tests that reference the file's API: raw HTML with the built pages' URLs
    assert re.search(r'<p class="sb-refs" data-search-exclude><strong>(Calls|Called by):</strong> <a href="',
                     section)
    assert re.search(r'<strong>Tested by:</strong> <a href="\.\./[^"]+\.py\.html#sym-', page)
    if documented:  # rendered docstrings: parameter tables, roles linked to other files' symbol sections
        assert "**Parameters**\n\n| Name | Description |\n|---|---|\n| `" in page
        assert re.search(r"\[`\w+`\]\((?:\.\./)*[\w/]+\.py\.md#sym-[\w-]+\)", page)
        assert not re.search(r":(?:class|meth|func|param)[ :`]", index_text(page))  # no raw roles
    tests = (docs / test_page).read_text(encoding="utf-8")
    exercised = tests.split("## Code it exercises")[1].split("\n## ")[0]
    assert f"({posixpath.relpath(code_page, posixpath.dirname(test_page))}#" in exercised
    assert "<details class=\"note sb-source\"" in tests
    assert re.search(r'<strong>Calls:</strong> <a href="', tests)
