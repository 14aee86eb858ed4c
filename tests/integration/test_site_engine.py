"""The incremental site engine (generator/site/material/engine.py) against real `mkdocs build --strict`
semantics: a
site updated through the render cache equals a clean build of the same tree, whatever changed and whatever
the worker count, renders only what changed, and fails (leaving the old site) exactly when a clean build
would."""

from __future__ import annotations

import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from generator.build import build
from generator.site.material.engine import LAST_BUILD
from generator.site.publish import RENDER_CACHE_DIR, build_site
from generator.site.render_cache import MANIFEST
from sourcebook.config import load_config
from sourcebook.errors import SiteBuildError

pytestmark = pytest.mark.slow


def _repo(root: Path, files: int = 6) -> Path:
    (root / "pkg" / "sub").mkdir(parents=True)
    (root / "README.md").write_text("# Demo\n\nA demo. See [the first module](pkg/m0.py).\n")
    for i in range(files):
        (root / "pkg" / f"m{i}.py").write_text(
            f'"""Module {i}."""\n\nfrom .m{(i + 1) % files} import f{(i + 1) % files}\n\n\n'
            f"def f{i}(x):\n    \"\"\"Return x, {i}.\"\"\"\n    return x\n\n\nclass C{i}:\n"
            f"    def run(self) -> int:\n        return {i}\n")
    (root / "pkg" / "sub" / "deep.py").write_text('"""Deep."""\n\n\ndef deep():\n    pass\n')
    # a reST document: its page shows it rendered (generator/markup/rst.py), with an outline into its sections
    (root / "docs").mkdir()
    (root / "docs" / "guide.rst").write_text(
        "Guide\n=====\n\nStart with ``f0``.\n\nInstalling\n----------\n\n* one\n* two\n\n"
        ".. note::\n\n   A note.\n\nUsing\n-----\n\nCall it::\n\n    f0(1)\n")
    return root


def _docs(out: Path) -> dict[str, bytes]:
    return {p.relative_to(out / "docs").as_posix(): p.read_bytes() for p in (out / "docs").rglob("*.md")}


def _snapshot(site: Path) -> dict[str, bytes]:
    """Every file of the site, with the sitemap's dates (the build day) taken out, and without the owner
    marker (its mark is keyed to the site's path)."""
    files = {}
    for path in sorted(site.rglob("*")):
        if not path.is_file() or path.name == ".sourcebook-owned":
            continue
        data = path.read_bytes()
        if path.name == "sitemap.xml.gz":
            data = gzip.decompress(data)
        if path.name.startswith("sitemap.xml"):
            data = re.sub(rb"<lastmod>[^<]*</lastmod>", b"", data)
        files[path.relative_to(site).as_posix()] = data
    return files


def _clean_build(out: Path, into: Path, *, workers: int = 1) -> dict[str, bytes]:
    """A build of `out`'s current docs with an empty cache."""
    build_site(out / "mkdocs.yml", site_dir=into / "site", cache_dir=into / "cache", workers=workers)
    return _snapshot(into / "site")


def _last(out: Path) -> dict[str, list[str]]:
    return json.loads((out / RENDER_CACHE_DIR / LAST_BUILD).read_text())  # type: ignore[no-any-return]


@pytest.fixture
def built(tmp_path: Path) -> tuple[Path, Path]:
    root = _repo(tmp_path / "repo")
    assert build(load_config(root), index=False).site_built
    return root, root / ".sourcebook"


def test_an_edit_renders_its_pages_and_equals_a_clean_build(built: tuple[Path, Path], tmp_path: Path) -> None:
    root, out = built
    assert _last(out)["contents_rendered"]  # the first build rendered everything
    assert "Installing" in (out / "site" / "files" / "docs" / "guide.rst.html").read_text()
    before = _docs(out)
    source = root / "pkg" / "m3.py"
    source.write_text(source.read_text() + "\n\ndef added_function(y):\n    return y\n")
    guide = root / "docs" / "guide.rst"
    guide.write_text(guide.read_text() + "\nUpgrading\n---------\n\nRead the notes.\n")
    assert build(load_config(root), index=False).site_built
    last = _last(out)
    after = _docs(out)
    changed = {page for page, text in after.items() if before.get(page) != text}
    assert {"files/pkg/m3.py.md", "files/docs/guide.rst.md"} <= changed
    # exactly the pages whose Markdown changed are rendered again (no title changed: no other nav did)
    assert set(last["contents_rendered"]) == changed
    assert set(last["pages_rendered"]) == changed
    assert len(changed) < last["pages"] // 2
    assert "added_function" in (out / "site" / "files" / "pkg" / "m3.py.html").read_text()
    assert "Upgrading" in (out / "site" / "files" / "docs" / "guide.rst.html").read_text()
    assert _snapshot(out / "site") == _clean_build(out, tmp_path / "clean")


def test_an_added_and_a_deleted_file_equal_a_clean_build(built: tuple[Path, Path], tmp_path: Path) -> None:
    root, out = built
    (root / "pkg" / "new_one.py").write_text('"""Brand new."""\n\n\ndef fresh():\n    pass\n')
    assert build(load_config(root), index=False).site_built
    assert (out / "site" / "files" / "pkg" / "new_one.py.html").is_file()
    assert _snapshot(out / "site") == _clean_build(out, tmp_path / "clean-added")
    (root / "pkg" / "sub" / "deep.py").unlink()
    assert build(load_config(root), index=False).site_built
    assert not (out / "site" / "files" / "pkg" / "sub" / "deep.py.html").exists()  # deleted pages go
    assert _snapshot(out / "site") == _clean_build(out, tmp_path / "clean-deleted")
    # the cache keeps only what the current site uses
    manifest = json.loads((out / RENDER_CACHE_DIR / MANIFEST).read_text().partition("\n")[2])
    kept = list((out / RENDER_CACHE_DIR / "pages").iterdir())
    assert len(kept) == len(manifest["pages"]) == _last(out)["pages"]


def test_a_theme_change_rewraps_every_page_without_rendering_markdown(built: tuple[Path, Path],
                                                                        tmp_path: Path) -> None:
    _, out = built
    main = out / "theme" / "main.html"
    main.write_text(main.read_text().replace('content="sourcebook">',
                                             'content="sourcebook">\n  <meta name="x" content="themed">'))
    build_site(out / "mkdocs.yml", site_dir=out / "site")
    last = _last(out)
    assert last["contents_rendered"] == []
    assert len(last["pages_rendered"]) == last["pages"]
    assert 'content="themed"' in (out / "site" / "index.html").read_text()
    assert _snapshot(out / "site") == _clean_build(out, tmp_path / "clean")


def test_config_changes_rerender_what_they_touch(built: tuple[Path, Path], tmp_path: Path) -> None:
    _, out = built
    yml = out / "mkdocs.yml"
    text = yml.read_text()
    yml.write_text(re.sub(r"^site_name: .*$", 'site_name: "Renamed site"', text, count=1, flags=re.M))
    build_site(yml, site_dir=out / "site")
    last = _last(out)
    assert last["contents_rendered"] == []
    assert len(last["pages_rendered"]) == last["pages"]
    assert "Renamed site" in (out / "site" / "files" / "pkg" / "m1.py.html").read_text()
    assert _snapshot(out / "site") == _clean_build(out, tmp_path / "clean-name")
    # a Markdown setting changes every page's content
    yml.write_text(yml.read_text().replace("  - toc:\n      permalink: true",
                                           "  - toc:\n      permalink: false"))
    build_site(yml, site_dir=out / "site")
    last = _last(out)
    assert len(last["contents_rendered"]) == last["pages"]
    assert _snapshot(out / "site") == _clean_build(out, tmp_path / "clean-toc")


def test_parallel_workers_write_the_same_bytes_as_one(built: tuple[Path, Path], tmp_path: Path) -> None:
    _, out = built
    one = _clean_build(out, tmp_path / "one", workers=1)
    three = _clean_build(out, tmp_path / "three", workers=3)
    assert one == three
    stats = json.loads((tmp_path / "three" / "cache" / LAST_BUILD).read_text())
    assert stats["workers"] == 3
    assert len(stats["pages_rendered"]) == stats["pages"]


def test_a_failing_page_leaves_the_old_site_and_its_warning_is_never_cached_away(
        built: tuple[Path, Path]) -> None:
    _, out = built
    before = _snapshot(out / "site")
    page = out / "docs" / "files" / "pkg" / "m2.py.md"
    good = page.read_text()
    page.write_text(good + "\n\nSee [gone](nowhere.md).\n")
    for workers in (2, 1):
        with pytest.raises(SiteBuildError, match=r"m2\.py\.md.*nowhere\.md"):
            build_site(out / "mkdocs.yml", site_dir=out / "site", workers=workers)
        assert _snapshot(out / "site") == before
        assert not list(out.glob(".site.*"))
    # a lenient build may keep the page; its warning is stored with it and a strict build still fails
    build_site(out / "mkdocs.yml", site_dir=out / "site", strict=False)
    with pytest.raises(SiteBuildError, match="nowhere"):
        build_site(out / "mkdocs.yml", site_dir=out / "site")
    page.write_text(good)
    build_site(out / "mkdocs.yml", site_dir=out / "site")
    assert _snapshot(out / "site") == before


def test_a_cache_that_is_not_this_users_is_not_trusted(built: tuple[Path, Path], tmp_path: Path) -> None:
    _, out = built
    cache = out / RENDER_CACHE_DIR
    # a repository can commit the cache: a manifest without this user's mark is ignored, every page rendered
    manifest = cache / MANIFEST
    mark, _, body = manifest.read_text().partition("\n")
    planted = cache / "pages" / "planted.html"
    planted.write_text("<script>alert(1)</script>")
    manifest.write_text("0" * len(mark) + "\n" + body)
    build_site(out / "mkdocs.yml", site_dir=out / "site")
    last = _last(out)
    assert len(last["contents_rendered"]) == last["pages"]
    assert not planted.exists()  # what the build does not use is removed
    for html in (out / "site").rglob("*.html"):
        assert "alert(1)" not in html.read_text()


def test_a_symlinked_cache_is_refused(built: tuple[Path, Path], tmp_path: Path) -> None:
    _, out = built
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "pages").mkdir(parents=True)
    (elsewhere / "pages" / "precious.txt").write_text("keep")
    cache = out / RENDER_CACHE_DIR
    shutil.rmtree(cache)
    cache.symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(SiteBuildError, match="symbolic link"):
        build_site(out / "mkdocs.yml", site_dir=out / "site")
    assert (elsewhere / "pages" / "precious.txt").read_text() == "keep"


def _children(pid: int) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            fields = stat[stat.rindex(")") + 2:].split()
            if int(fields[1]) == pid and fields[0] != "Z":
                found.append(int(entry.name))
    return found


def _alive(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat[stat.rindex(")") + 2] != "Z"


def test_render_workers_die_with_a_killed_build(built: tuple[Path, Path], tmp_path: Path) -> None:
    _, out = built
    proc = subprocess.Popen([sys.executable, "-m", "generator.site.material.engine", str(out / "mkdocs.yml"),
                             str(tmp_path / "site"), "--cache", str(tmp_path / "cache"), "--workers", "2"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd=out)
    deadline = time.monotonic() + 120
    try:
        while not (workers := _children(proc.pid)):
            assert proc.poll() is None, "the build finished before its workers were seen"
            assert time.monotonic() < deadline
            time.sleep(0.005)
        proc.kill()  # what a timeout does: the build process alone
    finally:
        proc.wait(timeout=30)
    deadline = time.monotonic() + 20
    while any(_alive(w) for w in workers):
        assert time.monotonic() < deadline, "render workers outlived their build"
        time.sleep(0.05)


def test_without_a_local_key_nothing_is_kept_or_trusted(built: tuple[Path, Path], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    _, out = built
    monkeypatch.setenv("XDG_STATE_HOME", "/proc/no-such-dir")  # no key can be kept: every mark is untrusted
    before = _snapshot(out / "site")
    build_site(out / "mkdocs.yml", site_dir=tmp_path / "site", cache_dir=tmp_path / "cache")
    assert _snapshot(tmp_path / "site") == before  # a full render, the same site
    assert not (tmp_path / "cache").exists()
    assert not [p.name for p in tmp_path.iterdir() if p.name.startswith(".render-cache-")]


def test_build_site_workers_option_sets_the_render_processes(tmp_path: Path) -> None:
    root = _repo(tmp_path / "repo")
    env = {k: v for k, v in os.environ.items() if k != "SOURCEBOOK_SITE_WORKERS"}
    run = subprocess.run([sys.executable, "-m", "sourcebook.cli", "build", str(root), "--no-index",
                          "--site-workers", "3"], capture_output=True, text=True, env=env, check=False)
    assert run.returncode == 0, run.stderr
    assert _last(root / ".sourcebook")["workers"] == 3
    bad = subprocess.run([sys.executable, "-m", "sourcebook.cli", "build", str(root), "--site-workers", "0"],
                         capture_output=True, text=True, env=env, check=False)
    assert bad.returncode == 2
    assert "Traceback" not in bad.stderr
    assert "--site-workers" in bad.stderr


def test_the_reused_markdown_converter_renders_what_mkdocs_page_render_does(built: tuple[Path, Path]) -> None:
    from mkdocs.config import load_config as load_mkdocs_config
    from mkdocs.structure.files import get_files
    from mkdocs.structure.pages import Page

    from generator.site.material.engine import render_markdown

    _, out = built
    config = load_mkdocs_config(str(out / "mkdocs.yml"))
    config = config.plugins.on_config(config)
    files = get_files(config)
    docs = list(files.documentation_pages())
    assert len(docs) > 5

    def rendered(page: Page) -> tuple[Any, ...]:
        return (page.content, [(i.title, i.id, i.level, len(i.children)) for i in page.toc],
                page._title_from_render, page.present_anchor_ids,
                {f.src_uri: a for f, a in (page.links_to_anchors or {}).items()})

    for _ in range(2):  # every page after another: nothing of one page's conversion stays in the next
        for file in docs:
            theirs, ours = Page(None, file, config), Page(None, file, config)
            theirs.read_source(config)
            theirs.render(config, files)
            ours.read_source(config)
            render_markdown(ours, config, files)
            assert rendered(ours) == rendered(theirs), file.src_uri
            assert ours.content


def test_the_engines_attribute_lookup_answers_as_jinjas() -> None:
    import jinja2
    from mkdocs.structure.nav import Section

    from generator.site.material.engine import _fast_getattr

    class Items:
        def __getitem__(self, key: str) -> str:
            if key == "found":
                return "item"
            raise KeyError(key)

    class Broken:
        @property
        def meta(self) -> None:
            raise AttributeError("computed and missing")

    reference, fast = jinja2.Environment(), jinja2.Environment()
    _fast_getattr(fast)
    assert "getattr" in vars(fast)
    cases = [(Section("s", []), "title"), (Section("s", []), "meta"), ({"icon": 1}, "icon"), ({}, "icon"),
             ({"items": 1}, "items"), (Items(), "found"), (Items(), "lost"), (Broken(), "meta"),
             ("ab", "upper"), ([1], "x"), (None, "x")]
    for obj, name in cases:
        want, got = reference.getattr(obj, name), fast.getattr(obj, name)
        if isinstance(want, jinja2.Undefined):
            assert isinstance(got, jinja2.Undefined)
            assert type(got) is type(want)
            assert (got._undefined_obj, got._undefined_name) == (want._undefined_obj, want._undefined_name)
        else:
            assert got == want, (obj, name)
    template = "{{ s.title }}|{{ s.meta is defined }}|{{ d.icon }}|{{ d.items is defined }}"
    values = {"s": Section("t", []), "d": {"icon": "i"}}
    assert fast.from_string(template).render(values) == reference.from_string(template).render(values)


def test_search_attributes_go_as_materials_pattern_takes_them() -> None:
    import re

    from generator.site.material.engine import without_search_attributes

    spec = re.compile(r"\s?data-search-\w+=\"[^\"]+\"")  # Material's on_page_context
    for text in ["", '<h2 id="a" data-search-boost="3">A</h2>', '<p  data-search-exclude="">x</p>',
                 '<div\ndata-search-exclude="1"data-search-x="y">', 'data-search-a="x data-search-b="y"',
                 "<p data-search-exclude>bare</p>", '\u00a0data-search-é="1"']:
        assert without_search_attributes(text) == spec.sub("", text), text


# ---------------------------------------------------------------- plain `mkdocs build` over real wikis


def _plain_mkdocs(out: Path, into: Path) -> dict[str, bytes]:
    """`mkdocs build --strict` over a generated wiki's mkdocs.yml (MkDocs' own page loop, Material's own
    search parser, the hooks' folder put on sys.path), as a user without sourcebook's engine runs it."""
    run = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
                          "-f", str(out / "mkdocs.yml"), "-d", str(into)],
                         capture_output=True, text=True, timeout=900, check=False,
                         env=dict(os.environ, NO_MKDOCS_2_WARNING="1"))
    assert run.returncode == 0, run.stderr[-3000:]
    return _snapshot(into)


def _engine_site(out: Path) -> dict[str, bytes]:
    ours = _snapshot(out / "site")
    ours.pop(".sourcebook-owned", None)
    return ours


def _assert_same_sites(ours: dict[str, bytes], theirs: dict[str, bytes]) -> None:
    assert sorted(ours) == sorted(theirs)
    assert [name for name in ours if ours[name] != theirs[name]] == []


def test_a_document_whose_list_holds_a_code_block_builds_the_same_with_plain_mkdocs(tmp_path: Path) -> None:
    """A changelog list item with a code block, then more items (requests' HISTORY.md has one): Material's
    search parser tracks excluded elements by tag, so the code block's <div> closing inside a <div> wrapper
    ended the exclusion and plain `mkdocs build` failed with "'<li>' is not in list"."""
    root = tmp_path / "repo"
    root.mkdir()
    (root / "HISTORY.md").write_text(
        "# History\n\n## 2.0\n\n- Dependencies\n\n    Install it with:\n\n"
        "    ```shell\n    pip install x\n    ```\n\n    Then import it.\n\n"
        "- Second change\n- Third change\n\n## 1.0\n\n- First\n", encoding="utf-8")
    (root / "mod.py").write_text('"""A module."""\n\n\ndef f():\n    """F."""\n', encoding="utf-8")
    out = tmp_path / "out"
    assert build(load_config(root, overrides={"out_dir": str(out)}), index=False).site_built
    page = (out / "site" / "files" / "HISTORY.md.html").read_text(encoding="utf-8")
    assert "language-shell highlight" in page  # the code block is in the document
    _assert_same_sites(_engine_site(out), _plain_mkdocs(out, tmp_path / "plain"))
    index = json.loads((out / "site" / "search" / "search_index.json").read_text(encoding="utf-8"))
    history = " ".join(d["text"] for d in index["docs"] if d["location"].startswith("files/HISTORY.md"))
    assert "Second change" not in history  # the document stays out of search, as its wrapper says


@pytest.mark.parametrize("wiki", ["flask", "requests"])
def test_plain_mkdocs_builds_the_engines_site_of_a_real_repository(wiki: str, request: pytest.FixtureRequest,
                                                                   tmp_path: Path) -> None:
    """Every page of the pinned flask and requests wikis (changelogs, READMEs, reST documents included)
    comes out of plain `mkdocs build --strict` byte for byte as the site engine wrote it."""
    if wiki == "flask":
        out = request.getfixturevalue("flask_wiki")
    else:
        repo = request.getfixturevalue("requests_repo")
        out = tmp_path / "out"
        assert build(load_config(repo, overrides={"out_dir": str(out)}), index=False).site_built
        assert (out / "site" / "files" / "HISTORY.md.html").is_file()
    _assert_same_sites(_engine_site(out), _plain_mkdocs(out, tmp_path / "plain"))
