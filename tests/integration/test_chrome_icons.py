"""The theme's icons drawn by one stylesheet (generator/site/chrome_icons.py): which inline SVGs a page's
chrome
loses, what stays, and that a built site's pages and its icons.css agree. In a browser:
tests/e2e/test_browser.py (_undrawn_icons: from file:// and under the served wiki's CSP)."""

from __future__ import annotations

import re
from pathlib import Path

from generator.build import build
from generator.site.chrome_icons import CSS_PATH, class_name, icon_names, light_icons, load_icons, stylesheet
from sourcebook.config import load_config
from tests.support.repo_files import write_files

SEARCH = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M9.5 3A6.5z"/></svg>'
WIDE = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 448 512"><path d="M1 2z"/></svg>'
UNKNOWN = '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"><path d="M0 0z"/></svg>'
ICONS = {SEARCH: "sbi-material-magnify", WIDE: "sbi-fontawesome-brands-git-alt"}


def test_known_icons_outside_the_content_become_empty_svgs_of_their_class() -> None:
    content = f"<p>the page's own {SEARCH}</p>"
    page = f"<header>{SEARCH}{WIDE}{UNKNOWN}</header><article>{content}</article><footer>{SEARCH}</footer>"
    out = light_icons(page, content, ICONS)
    empty = '<svg class="sbi sbi-material-magnify" viewBox="0 0 24 24"></svg>'
    wide = '<svg class="sbi sbi-fontawesome-brands-git-alt" viewBox="0 0 448 512"></svg>'
    assert out == (f"<header>{empty}{wide}{UNKNOWN}</header>"
                   f"<article>{content}</article><footer>{empty}</footer>")
    assert light_icons(page, content, {}) == page
    assert light_icons(page, "<p>not in the page</p>", ICONS) == page  # the content's bounds unknown: kept


def test_the_stylesheet_draws_every_icon_as_a_data_url_mask() -> None:
    css = stylesheet(ICONS)
    for name in ICONS.values():
        rule = re.search(rf'\.{name}\{{--sbi:url\("(data:image/svg\+xml;charset=utf-8,[^"]*)"\)\}}', css)
        assert rule is not None, name
        assert '"' not in rule.group(1)  # quoted inside the CSS string
        assert "#" not in rule.group(1)
    assert "-webkit-mask:var(--sbi)" in css
    assert ";mask:var(--sbi)" in css


def test_icon_names_follow_the_theme_config() -> None:
    names = icon_names({"search": "fontawesome/solid/magnifying-glass", "logo": None},
                       [{"toggle": {"icon": "material/brightness-7"}}, {"scheme": "slate"}])
    assert "fontawesome/solid/magnifying-glass" in names
    assert "material/magnify" not in names
    assert {"material/library", "material/brightness-7", "material/arrow-up"} <= set(names)
    assert class_name("fontawesome/brands/git-alt") == "sbi-fontawesome-brands-git-alt"
    files = {".icons/a/b.svg": SEARCH, ".icons/a/nobox.svg": '<svg><path d="M0"/></svg>'}
    assert load_icons(["a/b", "a/nobox", "a/missing"], files.get) == {SEARCH: "sbi-a-b"}


def test_a_built_sites_pages_use_only_icons_its_stylesheet_draws(tmp_path: Path) -> None:
    root = write_files(tmp_path / "repo", {"README.md": "# R\n\nA repo.\n",
                                           "pkg/a.py": '"""A."""\n\n\ndef f():\n    pass\n'})
    site = build(load_config(root), index=False).site_dir
    assert site is not None
    css = (site / CSS_PATH).read_text(encoding="utf-8")
    page = (site / "files" / "pkg" / "a.py.html").read_text(encoding="utf-8")
    used = set(re.findall(r'<svg class="sbi (sbi-[\w-]+)"', page))
    assert {"sbi-material-magnify", "sbi-material-menu", "sbi-material-library"} <= used
    assert all(f".{name}{{" in css for name in used)
    assert 'href="../../assets/sourcebook/icons.css"' in page
    # the header's icons are not inline any more
    header = page[page.index("<header"):page.index("</header>")]
    assert "<path" not in header
