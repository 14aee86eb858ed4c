"""Light pages, through a real `mkdocs build --strict`: each page's nav shows its own path and a capped
window of siblings per level (big folders end in a link to their page), and depends on nothing else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from bench.build_bench import nav_bytes, nav_element_end
from generator.build import build
from generator.site.light_nav import ANCESTOR_CAP, NAV_CAP
from sourcebook.config import load_config

pytestmark = pytest.mark.slow


def _tree(root: Path, *, extra: bool = False) -> Path:
    """60 files in one folder (more than a window), 30 small top-level folders, one nested package."""
    for k in range(60):
        (root / "big").mkdir(parents=True, exist_ok=True)
        (root / "big" / f"m{k:02}.py").write_text(f"def f{k}():\n    return {k}\n", encoding="utf-8")
    for k in range(30):
        (root / f"area{k:02}").mkdir(parents=True, exist_ok=True)
        (root / f"area{k:02}" / "core.py").write_text(f"X = {k}\n", encoding="utf-8")
    (root / "pkg" / "sub").mkdir(parents=True, exist_ok=True)
    (root / "pkg" / "a.py").write_text("def a():\n    return 1\n", encoding="utf-8")
    (root / "pkg" / "sub" / "b.py").write_text("def b():\n    return 2\n", encoding="utf-8")
    if extra:  # an edit far from pkg/: a new file in big/, past pkg's windows
        (root / "big" / "m99.py").write_text("def f99():\n    return 99\n", encoding="utf-8")
    return root


def _nav(site: Path, page: str) -> str:
    html = (site / page).read_bytes()
    start = html.index(b'<nav class="md-nav md-nav--primary')
    return html[start:nav_element_end(html, start)].decode()


def _links(nav: str) -> list[str]:
    return re.findall(r'<a href="([^"]+)"', nav)


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(site of the tree, site of the tree with one more file in big/)."""
    sites = []
    for extra in (False, True):
        root = _tree(tmp_path_factory.mktemp("tree") / "repo", extra=extra)  # one site name
        report = build(load_config(root), index=False)
        assert report.site_built
        assert report.site_dir is not None
        sites.append(report.site_dir)
    return sites[0], sites[1]


def test_a_page_in_a_big_folder_shows_its_path_a_window_and_a_link_to_the_folder(
        built: tuple[Path, Path]) -> None:
    site = built[0]
    nav = _nav(site, "files/big/m45.py.html")
    # its own entry is in the nav, active (before: folders over 40 files left their files out of the nav)
    assert re.search(r'md-nav__link--active[^>]*>\s*<span class="md-ellipsis">\s*m45\.py', nav)
    files = set(re.findall(r"m(\d\d)\.py\.html", nav))
    assert len(files) == NAV_CAP
    assert "45" in files
    assert "00" not in files
    assert "59" not in files
    more = re.search(r'<a href="([^"]+)" class="md-nav__link">\s*<span class="md-ellipsis">\s*(\d+) more',
                     nav)
    assert more, nav[-2000:]
    assert more.group(1) == "../../modules/big/index.html"
    assert int(more.group(2)) == 60 - NAV_CAP
    # the folder's page lists every file
    folder = (site / "modules/big/index.html").read_text(encoding="utf-8")
    assert all(f"m{k:02}.py" in folder for k in range(60))


def test_the_top_level_is_capped_too_and_the_nav_stays_small(built: tuple[Path, Path]) -> None:
    site = built[0]
    nav = _nav(site, "files/pkg/sub/b.py.html")
    areas = set(re.findall(r"area(\d\d)/", nav))
    assert 0 < len(areas) <= ANCESTOR_CAP  # 30 top-level folders above the page: a narrow window of them
    # the rest: one link to a page that lists them all, the root's folder page (the home page lists none)
    more = re.findall(r'<a href="([^"]+)" class="md-nav__link">\s*<span class="md-ellipsis">\s*(\d+) more',
                      nav)
    assert ("../../../modules/index.html", str(34 - ANCESTOR_CAP)) in more, more
    root = (site / "modules/index.html").read_text(encoding="utf-8")
    assert all(f"area{k:02}/" in root for k in range(30))
    assert "b.py" in nav
    assert "sub/" in nav
    assert ">\n" not in nav  # Material's indentation squeezed out
    sizes = [nav_bytes(p.read_bytes()) for p in site.rglob("*.html")]
    assert max(sizes) < 40_000, max(sizes)


def test_a_pages_nav_depends_only_on_what_it_shows(built: tuple[Path, Path]) -> None:
    before, after = built
    # a file added to big/ (not in pkg's windows): pkg's pages carry the same nav, byte for byte
    for page in ("files/pkg/a.py.html", "files/pkg/sub/b.py.html", "modules/pkg/index.html"):
        assert _nav(before, page) == _nav(after, page), page
    # ... and a big/ page near the new file shows it
    assert "m99.py" in _nav(after, "files/big/m59.py.html")
    assert "m99.py" not in _nav(before, "files/big/m59.py.html")


def test_every_nav_link_resolves(built: tuple[Path, Path]) -> None:
    site = built[0]
    for page in ("files/big/m45.py.html", "files/pkg/sub/b.py.html", "index.html", "404.html"):
        for href in _links(_nav(site, page)):
            if href.startswith("#"):  # the page's own table of contents
                continue
            target = (site / page).parent / href.split("#")[0]
            if page == "404.html":  # served from any depth; MkDocs writes its links from the root
                target = site / href.split("#")[0].lstrip("/")
            assert target.resolve().is_file(), (page, href)


def test_a_huge_file_gets_a_page_under_1_mb_that_says_what_it_left_out(tmp_path: Path) -> None:
    root = tmp_path / "repo"
    (root / "gen").mkdir(parents=True)
    body = "".join(f"    value_{k} = compute('{'x' * 70}', {k}, 1.5, None)\n" for k in range(100))
    functions = (f'def table_{n}():\n    """Table {n}."""\n{body}    return 0\n\n\n' for n in range(85))
    (root / "gen" / "tables.py").write_text("".join(functions), encoding="utf-8")
    assert 900_000 < (root / "gen" / "tables.py").stat().st_size < 1_000_000  # under the scan's file limit
    report = build(load_config(root), index=False)
    assert report.site_dir is not None
    page = (report.site_dir / "files/gen/tables.py.html").read_text(encoding="utf-8")
    assert len(page.encode()) < 1_000_000
    assert "value_99" in page  # the first sections keep their source
    assert page.count("left out: this page reached its size limit") > 40  # the rest say so
    assert "table_84" in page  # every symbol still has its section


def test_nav_gaps_go_as_the_regex_would_take_them() -> None:
    import re

    from generator.site.light_nav import without_gaps

    spec = re.compile(r">\s+|\s+<")
    for text in ["", "<a>\n   <b>  x  </b>\n</a>", "x \t\n<i> y \u00a0<", ">\x0b\x1c a", "a  b", "<<  >>",
                 '<li class="md-nav__item">\n  <a href="x.html">\n    Title words\n  </a>\n</li>\n']:
        assert without_gaps(text) == spec.sub(lambda m: m.group().strip(), text), text
