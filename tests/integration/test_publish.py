"""A real `mkdocs build --strict` over a wiki generated from a hostile little repository."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

import generator.site.publish
import sourcebook.data_home
from generator.build import build
from generator.pages.render_markdown import render_mkdocs_yml
from generator.site.publish import build_site, install_mermaid, mermaid_asset
from sourcebook.config import load_config
from sourcebook.errors import NotOwnedError, SiteBuildError

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
    # (no topic pages without a model)
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
    source = tmp_path / "data" / "mermaid" / "mermaid.min.js"  # where `sourcebook setup` puts it
    source.parent.mkdir(parents=True)
    source.write_text("globalThis.mermaid = {};\n", encoding="utf-8")
    monkeypatch.setenv("SOURCEBOOK_DATA_DIR", str(tmp_path / "data"))
    # the other data folders hold none: the install's own may have one from `make setup`
    monkeypatch.setattr(sourcebook.data_home, "prefix_home", lambda: tmp_path / "prefix")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path / "user"))
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


# -- the site is swapped in whole, and only directories sourcebook made are ever replaced --------------------


def _cli(*args: str, **kwargs: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sourcebook.cli", *args], capture_output=True, text=True,
                          timeout=300, check=False, env=dict(os.environ, NO_COLOR="1"), **kwargs)


def _snapshot(site: Path) -> dict[str, bytes]:
    return {p.relative_to(site).as_posix(): p.read_bytes() for p in site.rglob("*") if p.is_file()}


def _small_repo(root: Path, files: int = 3) -> Path:
    (root / "pkg").mkdir(parents=True)
    (root / "README.md").write_text("# Demo\n\nA demo.\n")
    for i in range(files):
        (root / "pkg" / f"m{i}.py").write_text(f'"""Module {i}."""\n\n\ndef f{i}(x):\n    return x\n')
    return root


@pytest.mark.slow
def test_a_failed_mkdocs_run_leaves_the_previous_site_complete(tmp_path: Path) -> None:
    root = _small_repo(tmp_path / "repo")
    assert build(load_config(root), index=False).site_built
    out = root / ".sourcebook"
    before = _snapshot(out / "site")
    assert generator.site.publish.OWNED_MARKER in before
    # a page mkdocs --strict rejects: the rebuild fails after mkdocs has started writing its new copy
    (out / "docs" / "index.md").write_text("# Broken\n\n[dead](missing.md)\n")
    with pytest.raises(SiteBuildError, match=r"missing\.md"):
        build_site(out / "mkdocs.yml", site_dir=out / "site")
    assert _snapshot(out / "site") == before
    assert sorted(p.name for p in out.iterdir() if p.name.startswith(".site")) == []  # no working copy left


@pytest.mark.slow
def test_a_killed_build_leaves_the_previous_site_and_the_next_build_cleans_up(tmp_path: Path) -> None:
    root = _small_repo(tmp_path / "repo", files=150)
    first = _cli("build", str(root), "--no-index")
    assert first.returncode == 0, first.stderr
    out = root / ".sourcebook"
    before = _snapshot(out / "site")
    (root / "pkg" / "m0.py").write_text('"""Module zero, changed."""\n\n\ndef g(x):\n    return x\n')
    proc = subprocess.Popen([sys.executable, "-m", "sourcebook.cli", "build", str(root), "--no-index"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
                            env=dict(os.environ, NO_COLOR="1"))
    deadline = time.monotonic() + 120
    try:
        # wait until mkdocs is writing pages into its working copy, then kill sourcebook and mkdocs at once
        while not any(out.glob(".site.new-*/files/pkg/*.html")):
            assert proc.poll() is None, "the build finished before it could be killed"
            assert time.monotonic() < deadline
            time.sleep(0.01)
        os.killpg(proc.pid, signal.SIGKILL)
    finally:
        proc.wait(timeout=30)
    assert list(out.glob(".site.new-*"))  # the half-written copy is there, beside the untouched site
    assert _snapshot(out / "site") == before
    again = _cli("build", str(root), "--no-index")
    assert again.returncode == 0, again.stderr
    assert not list(out.glob(".site.*"))
    assert "Module zero, changed." in (out / "site" / "files" / "pkg" / "m0.py.html").read_text()


@pytest.mark.slow
@pytest.mark.parametrize("name", ["site", "theme"])
def test_directories_sourcebook_did_not_create_are_never_replaced(tmp_path: Path, name: str) -> None:
    root = _small_repo(tmp_path / "repo")
    out = tmp_path / "out"
    (out / name).mkdir(parents=True)
    (out / name / "mine.txt").write_text("my own notes")
    result = _cli("build", str(root), "--no-index", "--out", str(out))
    assert result.returncode == 2
    assert "Traceback" not in result.stderr
    assert "Scanning" not in result.stderr  # refused before any work
    errors = [line for line in result.stderr.splitlines() if line.startswith("error")]
    marker = generator.site.publish.OWNED_MARKER
    assert errors == [f"error: {out / name}: has no {marker} marker; sourcebook only "
                      "replaces directories it created (move it away or pick another --out)"]
    assert (out / name / "mine.txt").read_text() == "my own notes"


def test_a_symlinked_or_foreign_directory_is_refused_and_a_marked_one_replaced(tmp_path: Path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "keep.txt").write_text("keep")
    (tmp_path / "out").mkdir()
    link = tmp_path / "out" / "site"
    link.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(NotOwnedError, match="symbolic link"):
        generator.site.publish.replace_owned_dir(link, lambda work: (work / "index.html").write_text("new"))
    assert (elsewhere / "keep.txt").is_file()
    link.unlink()
    generator.site.publish.replace_owned_dir(link, lambda work: (work / "index.html").write_text("one"))
    generator.site.publish.replace_owned_dir(link, lambda work: (work / "index.html").write_text("two"))
    assert (link / "index.html").read_text() == "two"
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["site"]


def test_a_site_from_before_the_marker_is_adopted(tmp_path: Path) -> None:
    old = tmp_path / "site"
    old.mkdir()
    (old / "index.html").write_text('<html><head><meta name="generator" content="sourcebook"></head></html>')
    generator.site.publish.replace_owned_dir(old, lambda work: (work / "index.html").write_text("new"))
    assert (old / "index.html").read_text() == "new"
    assert (old / generator.site.publish.OWNED_MARKER).is_file()


@pytest.mark.slow
def test_plain_mkdocs_build_of_the_generated_wiki_gives_the_same_site(hostile_site: Path,
                                                                      tmp_path: Path) -> None:
    """The generated mkdocs.yml is a plain MkDocs project: `mkdocs build` over it (MkDocs' own page loop,
    with the hooks' folder put on sys.path) makes the same bytes as sourcebook's site engine."""
    plain = tmp_path / "plain"
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q", "-f",
                          str(hostile_site / "mkdocs.yml"), "-d", str(plain)],
                         capture_output=True, text=True, timeout=300, check=False,
                         env=dict(os.environ, NO_MKDOCS_2_WARNING="1"))
    assert run.returncode == 0, run.stderr[-2000:]
    ours = _snapshot(hostile_site / "site")
    ours.pop(generator.site.publish.OWNED_MARKER)
    theirs = _snapshot(plain)
    assert sorted(ours) == sorted(theirs)
    assert [name for name in ours if ours[name] != theirs[name]] == []


@pytest.mark.slow
def test_the_switch_to_mkdocs_own_page_loop_builds_the_same_site(hostile_site: Path, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """SOURCEBOOK_SITE_ENGINE=mkdocs turns every patch of MkDocs', Material's, Jinja's and Markdown's
    internals off (the site is built by `mkdocs build`, through build_site): the same bytes."""
    monkeypatch.setenv(generator.site.publish.ENGINE_ENV, "mkdocs")
    plain = tmp_path / "plain"
    log = build_site(hostile_site / "mkdocs.yml", site_dir=plain)
    assert "generator.site.material.engine" not in log
    ours, theirs = _snapshot(hostile_site / "site"), _snapshot(plain)
    # each site's owner mark is keyed to its own path; everything else is byte for byte the same
    assert ours.pop(generator.site.publish.OWNED_MARKER) != theirs.pop(generator.site.publish.OWNED_MARKER)
    assert ours == theirs
