"""Each page's own navigation: its path from the top, and at every level of that path a capped window of
siblings; the rest of a big folder is one "more" link to the folder's page, which lists every entry.

MkDocs hands Material the whole navigation for every page. With `navigation.prune` Material renders only the
open branch, but every entry along it: a page in a 300-file folder carried 300 links, a page under a root
with 200 folders 200 more (docs/performance.md). `page_nav` builds, per page, a small stand-in tree of MkDocs'
own structure classes that Material's unmodified templates render:

- closed sections are kept as a single chain to their first page (all Material's pruned link needs);
- an open section keeps its index page, the entry on the path, and neighbours around it: up to `cap` on
  the page's own level (its siblings), `ancestor_cap` on the levels above;
- what does not fit becomes one Link to the nearest folder page: the section's index, else (the top level
  and its groups: Tests, Repository and tooling) the repository root's folder page, which lists every
  top-level file and folder (the home page lists none of them).

So what a page's nav shows depends only on its ancestors and the siblings in their windows, never on the rest
of the tree: an edit elsewhere leaves the page's nav (and a render cache keyed on it: `nav_key`) unchanged.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Sequence
from typing import Any

from mkdocs.structure.nav import Link, Navigation, Section
from mkdocs.structure.pages import Page

from generator.analyze.plan import ROOT_MODULE_PAGE

NAV_CAP = 12  # entries on the page's own level besides the section's index page and its "more" link
# entries on each level above it: the ancestor on the path and its neighbours. Chosen on the 12k-file bench
# tree for the site's size target (the sizes each pair gave: docs/performance.md); 12 keeps room for heavier
# pages, the folder's page lists the rest
ANCESTOR_CAP = 5


class PageNav:
    """The `nav` a page's templates see: Material reads `items` and `homepage`; `pages` stays the site's."""

    def __init__(self, items: list[Any], homepage: Page | None, pages: list[Page]) -> None:
        self.items, self.homepage, self.pages = items, homepage, pages

    def __iter__(self) -> Iterator[Any]:
        return iter(self.items)

    def __len__(self) -> int:
        return len(self.items)


def page_nav(nav: Navigation, page: Page | None, cap: int = NAV_CAP,
             ancestor_cap: int = ANCESTOR_CAP) -> PageNav:
    """`nav` as `page` shows it (see the module docstring); `page` None (a 404 page): every level closed."""
    path = _path_to(nav.items, page) if page is not None else []
    return PageNav(_level(nav.items, path, cap, top_folder_url(nav), ancestor_cap=ancestor_cap), nav.homepage,
                   nav.pages)


def top_folder_url(nav: Navigation) -> str:
    """Where the top level's "more" link goes: the root's folder page, which is a top-level page or opens a
    top-level section (generator/site/nav.py), so only those are read (not every page: this runs per page);
    else the home page."""
    for item in nav.items:
        first = item.children[0] if isinstance(item, Section) and item.children else item
        if isinstance(first, Page) and first.file.src_uri == ROOT_MODULE_PAGE:
            return str(first.url)
    return nav.homepage.url if nav.homepage is not None else ""


def _path_to(items: Sequence[Any], page: Page) -> list[Any]:
    """The items from the top level down to `page` (page last); [] when the nav does not hold it. Read from
    the parent links MkDocs sets (a search of the whole tree per page was quadratic on 12k pages)."""
    chain: list[Any] = [page]
    while chain[-1].parent is not None:
        chain.append(chain[-1].parent)
    chain.reverse()
    return chain if any(item is chain[0] for item in items) else []


def _index_of(section: Section) -> Page | None:
    # Material's navigation.indexes: the section's first index page is the section's own page
    return next((c for c in section.children if isinstance(c, Page) and c.is_index), None)


def _width(on_path: Any, path: list[Any], cap: int, ancestor_cap: int) -> int:
    """How many entries a level shows: `cap` on the page's own level (its siblings), `ancestor_cap` on a level
    the path goes on below (an ancestor folder and its neighbours)."""
    return ancestor_cap if isinstance(on_path, Section) and len(path) > 1 else cap


def _window(entries: list[Any], on_path: Any, width: int) -> list[Any]:
    return _window_at(entries, next((n for n, item in enumerate(entries) if item is on_path), 0), width)


def _window_at(entries: list[Any], at: int, width: int) -> list[Any]:
    start = max(0, min(at - width // 2, len(entries) - width))
    return entries[start:start + width]


def _level(items: Sequence[Any], path: list[Any], cap: int, more_url: str,
           index: Page | None = None, *, ancestor_cap: int = ANCESTOR_CAP) -> list[Any]:
    """One level: `index` first (if any), then a window of entries around the one on `path` (see `_width`),
    each section closed unless it is on the path, then a Link for the items left out."""
    entries = [i for i in items if i is not index]
    on_path = path[0] if path else None
    window = _window(entries, on_path, _width(on_path, path, cap, ancestor_cap))
    out: list[Any] = [index] if index is not None else []
    for item in window:
        if item is on_path and isinstance(item, Section):
            out.append(_open(item, path[1:], cap, more_url, ancestor_cap))
        elif isinstance(item, Section):
            out.append(_closed(item))
        else:
            out.append(item)
    left_out = len(entries) - len(window)
    if left_out and more_url:
        out.append(Link(f"{left_out} more: all on the folder's page", more_url))
    return out


def _open(section: Section, path: list[Any], cap: int, more_url: str, ancestor_cap: int) -> Section:
    index = _index_of(section)
    copy = Section(section.title, _level(section.children, path, cap,
                                         index.url if index is not None else more_url, index,
                                         ancestor_cap=ancestor_cap))
    copy.active = True
    return copy


def _closed(section: Section) -> Section:
    """A closed section: its title and the chain to its first page (the link Material renders for it)."""
    first = section.children[0] if section.children else None
    return Section(section.title, [_closed(first) if isinstance(first, Section) else first]
                   if first is not None else [])


def nav_key(nav: PageNav | Sequence[Any]) -> str:
    """A digest of everything `page_nav` shows: titles, URLs, open/closed and nesting (for render caches)."""
    digest = hashlib.sha256()

    def walk(items: Sequence[Any], depth: int) -> None:
        for item in items:
            kind = "s" if isinstance(item, Section) else "l" if isinstance(item, Link) else "p"
            digest.update(f"{depth}\x1f{kind}\x1f{item.title}\x1f{getattr(item, 'url', '')}\x1f"
                          f"{bool(getattr(item, 'active', False))}\x1e".encode())
            if isinstance(item, Section):
                walk(item.children, depth + 1)

    walk(nav.items if isinstance(nav, PageNav) else nav, 0)
    return digest.hexdigest()


class NavKeys:
    """`nav_key(page_nav(nav, page))` for the pages of one navigation, without building each page's nav: the
    same lines hashed in the same order, a closed section's lines made once (the site engine keys ~12k pages
    per build with it; tests/unit/test_light_nav_keys.py checks it equals nav_key on every page)."""

    def __init__(self, nav: Navigation, cap: int = NAV_CAP, ancestor_cap: int = ANCESTOR_CAP) -> None:
        self.nav, self.cap, self.ancestor_cap = nav, cap, ancestor_cap
        self.more_url = top_folder_url(nav)
        self._closed: dict[tuple[int, int], bytes] = {}
        # per level (its items and index page): the entries and where each sits; per item, depth and state:
        # its line. Siblings share them, so a folder of n pages is not walked n times per page (quadratic)
        self._levels: dict[tuple[int, int], tuple[list[Any], dict[int, int]]] = {}
        self._lines: dict[tuple[int, int, bool], bytes] = {}

    def __call__(self, page: Page) -> str:
        out: list[bytes] = []
        self._level(self.nav.items, _path_to(self.nav.items, page), self.more_url, None, depth=0, out=out)
        return hashlib.sha256(b"".join(out)).hexdigest()

    def _level(self, items: Sequence[Any], path: list[Any], more_url: str, index: Page | None, *, depth: int,
               out: list[bytes]) -> None:
        level = self._levels.get((id(items), id(index)))
        if level is None:
            kept = [i for i in items if i is not index]
            level = self._levels[(id(items), id(index))] = (kept, {id(i): n for n, i in enumerate(kept)})
        entries, places = level
        on_path = path[0] if path else None
        window = _window_at(entries, places.get(id(on_path), 0),
                            _width(on_path, path, self.cap, self.ancestor_cap))
        if index is not None:
            out.append(self._line(depth, index))
        for item in window:
            if item is on_path and isinstance(item, Section):
                out.append(_line(depth, item, active=True))
                inner = _index_of(item)
                self._level(item.children, path[1:], inner.url if inner is not None else more_url, inner,
                            depth=depth + 1, out=out)
            elif isinstance(item, Section):
                out.append(self._closed_lines(item, depth))
            else:
                out.append(self._line(depth, item))
        left_out = len(entries) - len(window)
        if left_out and more_url:
            out.append(_line(depth, Link(f"{left_out} more: all on the folder's page", more_url)))

    def _line(self, depth: int, item: Any) -> bytes:
        shown = bool(getattr(item, "active", False))
        memo = (id(item), depth, shown)
        line = self._lines.get(memo)
        if line is None:
            line = self._lines[memo] = _line(depth, item, active=shown)
        return line

    def _closed_lines(self, section: Section, depth: int) -> bytes:
        memo = (id(section), depth)
        if memo not in self._closed:
            first = section.children[0] if section.children else None
            if first is None:
                below = b""
            elif isinstance(first, Section):
                below = self._closed_lines(first, depth + 1)
            else:
                below = _line(depth + 1, first)
            self._closed[memo] = _line(depth, section, active=False) + below
        return self._closed[memo]


def _line(depth: int, item: Any, active: bool | None = None) -> bytes:
    """One item as nav_key hashes it."""
    kind = "s" if isinstance(item, Section) else "l" if isinstance(item, Link) else "p"
    shown = bool(getattr(item, "active", False)) if active is None else active
    return f"{depth}\x1f{kind}\x1f{item.title}\x1f{getattr(item, 'url', '')}\x1f{shown}\x1e".encode()


# the primary nav's class list goes on with md-nav--integrated under toc.integrate
_PRIMARY = re.compile(r'<nav class="md-nav md-nav--primary[ "]')
_NAV_TAG = re.compile(r"<nav\b|</nav>")


def without_gaps(html: str) -> str:
    """`html` without the whitespace after each `>` and before each `<` (what `re.sub(r">\\s+|\\s+<", ...)`
    stripping each match leaves), by splitting on the marks: a regex whose match may start with any
    whitespace character tries every position of the text."""
    parts = html.split(">")
    html = ">".join([parts[0], *(part.lstrip() for part in parts[1:])])
    parts = html.split("<")
    return "<".join([*(part.rstrip() for part in parts[:-1]), parts[-1]])


def squeeze_nav(page_html: str) -> str:
    """The page with the whitespace around the tags of its primary nav removed. Material's nav templates
    indent every entry with ~250 bytes of blank lines and spaces (335 bytes per entry on the 12k-file bench
    tree, 70% whitespace); the nav holds no <pre> or inline text where it shows."""
    start = _PRIMARY.search(page_html)
    if not start:
        return page_html
    depth, end = 0, len(page_html)
    for tag in _NAV_TAG.finditer(page_html, start.start()):
        depth += 1 if tag.group() != "</nav>" else -1
        if depth == 0:
            end = tag.end()
            break
    nav = without_gaps(page_html[start.start():end])
    return page_html[:start.start()] + nav + page_html[end:]
