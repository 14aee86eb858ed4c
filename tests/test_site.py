"""A real `mkdocs build --strict` over a wiki generated from a hostile little repository."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import generator.site
from generator.build import build
from generator.render import render_mkdocs_yml
from generator.site import build_site, install_mermaid, mermaid_asset
from sourcebook.config import load_config
from sourcebook.errors import SiteBuildError

HOSTILE: dict[str, str | bytes] = {
    "README.md": ('# Hostile <img src="logo.png">\n\n<p align="center"><b>Bold</b> claims.</p>\n\n'
                  "Start at [the core](src/core.py), the [web part](web/) or [missing](docs/nope.md).\n\n"
                  "![diagram](docs/arch.png)\n\n<script>alert('readme')</script>\n\n"
                  "| a | b |\n|---|---|\n| 1 | 2 |\n\n```html\n<div>code is fine</div>\n```\n"),
    "readme.md": "lowercase twin of README.md: the page names collide on case-insensitive filesystems\n",
    "src/core.py": ('"""Core. <script>alert("module")</script>"""\nfrom .util import helper\n\n\n'
                    "class Core:\n"
                    '    """Pipes | and `ticks` and <img src=x onerror=alert(1)> in a docstring.\n\n'
                    '    [broken](nowhere.md) and {curly} and *stars*.\n    """\n\n'
                    "    def run(self, a: int | None = None) -> str:\n"
                    '        """Return `a` | "x".\n\n'
                    '        ```\n        fenced inside\n        ```\n        """\n'
                    "        return helper(a)\n"),
    "src/util.py": ('def helper(x):\n    """Help <b>me</b>."""\n    return str(x)\n\n\n'
                    "class Box:\n    def __init__(self, x_y):\n        self.x_y = x_y\n\n"
                    "    def __repr__(self):\n        return 'Box'\n"),
    "web/app.js": ("/** Mounts the <App/> | widget. */\nimport { dom } from './lib/dom.js';\n"
                   "export function mount(el) { return dom(el); }\n"),
    "web/lib/dom.js": "/** DOM helper. */\nexport function dom(x) { return x; }\n",
    "we ird#[dir]/naïve file [1].py": '"""Unicode and brackets."""\ndef café(): pass\n',
    "sub/README": "A plain README: its page must not become the section index.\n",
    ".github/workflows/ci.yml": "on: push\n",
}


@pytest.fixture(scope="module")
def hostile_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("hostile")
    for rel, content in HOSTILE.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(content if isinstance(content, str) else "", encoding="utf-8")
    report = build(load_config(root), index=False)
    assert report.site_built
    return root / ".sourcebook"


@pytest.mark.slow
def test_strict_build_passes_and_every_page_is_in_the_site(hostile_site: Path) -> None:
    docs, site = hostile_site / "docs", hostile_site / "site"
    pages = sorted(p.relative_to(docs).as_posix() for p in docs.rglob("*.md"))
    # every file + 8 modules (root, src, web, web/lib, sub, we ird, .github, .github/workflows) + overview
    assert len(pages) == len(HOSTILE) + 8 + 1
    assert "files/sub/README_.md" in pages
    for page in pages:
        assert (site / (page[: -len(".md")] + ".html")).is_file(), page
    assert (site / "search" / "search_index.js").is_file()  # the offline plugin's file:// search index
    log = build_site(hostile_site / "mkdocs.yml")
    assert "no such anchor" not in log  # anchors are only "info" for mkdocs, but a dead one is our bug


@pytest.mark.slow
def test_no_source_text_becomes_html(hostile_site: Path) -> None:
    site = hostile_site / "site"
    for html_file in site.rglob("*.html"):
        text = html_file.read_text(encoding="utf-8")
        assert not re.search(r"<script\b[^>]*>[^<]*(alert|pwned)", text), html_file
        assert not re.search(r"<img[^>]*onerror", text), html_file
    core = next(site.rglob("core.py.html")).read_text(encoding="utf-8")
    assert "&lt;img src=x onerror=alert(1)&gt;" in core  # shown as text
    assert "fenced inside" in core


@pytest.mark.slow
def test_readme_links_are_rewritten_to_pages(hostile_site: Path) -> None:
    index = (hostile_site / "site" / "index.html").read_text(encoding="utf-8")
    assert 'href="files/src/core.py.html"' in index
    assert 'href="modules/web/index.html"' in index
    assert not re.search(r'(href|src)="[^"]*(nope\.md|arch\.png)', index)
    assert "<b>Bold</b>" not in index


def _outside_code(html: str) -> str:
    """The HTML minus <code>/<pre> contents, where escaped source text legitimately appears."""
    return re.sub(r"<(pre|code)\b.*?</\1>", "", html, flags=re.S)


def test_site_build_error_carries_mkdocs_output(tmp_path: Path) -> None:
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "index.md").write_text("[dead](missing.md)\n")
    (tmp_path / "mkdocs.yml").write_text("site_name: t\n")
    with pytest.raises(SiteBuildError) as info:
        build_site(tmp_path / "mkdocs.yml")
    assert "missing.md" in str(info.value)


@pytest.mark.slow
def test_empty_repository_gets_a_strict_site(tmp_path: Path) -> None:
    (tmp_path / "repo").mkdir()
    report = build(load_config(tmp_path / "repo"), index=False)
    assert report.site_built
    assert (tmp_path / "repo" / ".sourcebook" / "site" / "index.html").is_file()
    again = build(load_config(tmp_path / "repo"), index=False)
    assert not again.site_built  # nothing changed: mkdocs is not run again


def test_local_mermaid_gets_a_content_hashed_name_and_replaces_older_copies(tmp_path: Path) -> None:
    assert mermaid_asset(tmp_path / "absent.js") is None  # a plain pip install: Material's CDN, as before
    assert "assets/sourcebook/mermaid" not in render_mkdocs_yml(site_name="s", nav=[], mermaid_js="")
    source = tmp_path / "mermaid.min.js"
    source.write_text("globalThis.mermaid = {};\n", encoding="utf-8")
    first = mermaid_asset(source)
    assert first is not None
    assert re.fullmatch(r"mermaid-[0-9a-f]{12}\.min\.js", first.name)
    yml = render_mkdocs_yml(site_name="s", nav=[], mermaid_js=first.url)
    # before the theme's own script, so window.mermaid exists when Material looks for it
    assert yml.index(first.url) < yml.index("assets/sourcebook/sourcebook.js")
    docs = tmp_path / "docs"
    install_mermaid(docs, first)
    assert (docs / first.url).read_bytes() == source.read_bytes()
    source.write_text("globalThis.mermaid = {version: 2};\n", encoding="utf-8")
    second = mermaid_asset(source)
    assert second is not None
    assert second.name != first.name
    install_mermaid(docs, second)
    assert sorted(p.name for p in (docs / "assets" / "sourcebook").iterdir()) == [second.name]
    install_mermaid(docs, None)
    assert list((docs / "assets" / "sourcebook").iterdir()) == []


def test_a_new_mermaid_js_rebuilds_the_site(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    root = tmp_path / "repo"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("from .b import f\n", encoding="utf-8")
    (root / "pkg" / "b.py").write_text("def f():\n    pass\n", encoding="utf-8")
    source = tmp_path / "mermaid.min.js"
    source.write_text("globalThis.mermaid = {};\n", encoding="utf-8")
    monkeypatch.setattr(generator.site, "MERMAID_SOURCE", source)
    config = load_config(root)

    def shipped() -> list[str]:
        return sorted(p.name for p in (config.site_dir / "assets" / "sourcebook").glob("mermaid-*.min.js"))

    assert build(config, index=False).site_built
    first = shipped()
    assert len(first) == 1
    assert f"assets/sourcebook/{first[0]}" in (config.site_dir / "modules" / "pkg" / "index.html").read_text(
        encoding="utf-8")
    assert not build(config, index=False).site_built  # nothing changed
    source.write_text("globalThis.mermaid = {version: 2};\n", encoding="utf-8")
    assert build(config, index=False).site_built
    assert len(shipped()) == 1
    assert shipped() != first
    source.unlink()  # uninstalled: back to the CDN, and no stale copy in the site
    assert build(config, index=False).site_built
    assert shipped() == []
