"""Material's navigation entries rendered once per folder: the `render` macro of its partials/nav-item.html
answered from a memo for the entries that read nothing of the page being rendered but its folder.

Each page's nav (generator/site/light_nav.py) holds ~30 entries; the pages of one folder show mostly the same
ones (their siblings, the closed folders around them), and the template renders each entry again on every
page: a seventh of the site engine's CPU on the monorepo tree. An entry's HTML depends on:

- the entry: a Page (its title, URL, meta, active flag), a Link (title, URL), or a closed Section (its title
  and the chain of first children Material's pruned link follows); the open sections on the page's path and
  the page's own entry (which prints its table of contents) are never taken from the memo;
- the page only through the `url` filter (a URL relative to the page's folder, and the page's base_url);
- its place (`path`, `level`, the parent's active flag) only for a section that is not pruned: that key
  holds them unless the theme's features make every closed section a pruned link (navigation.prune without
  navigation.tabs or navigation.sections), where the template never reads them.

Installed only over Material's own nav-item.html (not a theme override of it) and Jinja's own Context. The
memo holds one folder's entries at a time (the engine renders a folder's pages one after the other).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from mkdocs.structure.nav import Link, Section
from mkdocs.structure.pages import Page

TEMPLATE = "partials/nav-item.html"
# what mkdocs' Section holds (a plugin's extra attribute, e.g. a typeset title, could be printed: rendered)
_SECTION_FIELDS = frozenset({"title", "children", "parent", "_Section__active"})
_SHAPE_LIMIT = 64  # entries of a closed section's shape; a bigger one (a full, unpruned nav) is rendered


def install(env: Any) -> bool:
    """Answer Material's nav-item `render` macro from a per-folder memo in `env`'s templates; False (nothing
    changed) when `env` renders another nav-item.html or already has its own Context class."""
    import material
    from jinja2 import TemplateNotFound
    from jinja2.runtime import Context, Macro

    if env.context_class is not Context or env.loader is None:
        return False
    try:
        _, filename, _ = env.loader.get_source(env, TEMPLATE)
    except TemplateNotFound:
        return False
    own = Path(material.__file__).resolve().parent / "templates" / TEMPLATE
    if filename is None or Path(filename).resolve() != own:
        return False
    memo = FolderMemo()

    class NavItemContext(Context):
        def call(__self, __obj: Any, *args: Any, **kwargs: Any) -> Any:
            if (type(__obj) is Macro and __obj.name == "render" and 3 <= len(args) <= 4
                    and __obj._func.__code__.co_filename == filename):
                key = _key(__self, args)
                if key is not None:
                    folder, entry = key
                    return memo.get(folder, entry, lambda: Context.call(__self, __obj, *args, **kwargs))
            return Context.call(__self, __obj, *args, **kwargs)

    env.context_class = NavItemContext
    return True


class FolderMemo:
    """Rendered HTML kept for one folder's pages at a time (the engine renders a folder's pages one after the
    other): another folder empties it."""

    def __init__(self) -> None:
        self.folder: Any = None
        self.kept: dict[Any, Any] = {}

    def get(self, folder: Any, key: Any, render: Callable[[], Any]) -> Any:
        if folder != self.folder:
            self.kept.clear()
            self.folder = folder
        html = self.kept.get(key)
        if html is None:
            html = self.kept[key] = render()
        return html


def _key(context: Any, args: tuple[Any, ...]) -> tuple[Any, Any] | None:
    """(the page's folder as the url filter reads it, the entry and what of its place it shows), or None:
    render it."""
    item, path, level = args[0], args[1], args[2]
    page = context.get("page")
    url = getattr(page, "url", None)
    if not isinstance(page, Page) or not isinstance(url, str):
        return None
    kind = type(item)
    if kind is Page:
        if item is page or item == page:
            return None  # the page's own entry: its table of contents
        entry: Any = ("p", id(item), bool(item.active))
    elif kind is Link:
        entry = ("l", item.title, item.url)
    elif kind is Section and not item.active and vars(item).keys() <= _SECTION_FIELDS:
        shape = _shape(item, [_SHAPE_LIMIT])
        if shape is None:
            return None
        features = context.get("features") or ()
        pruned = ("navigation.prune" in features and "navigation.tabs" not in features
                  and "navigation.sections" not in features)
        if pruned:
            entry = ("s", shape)
        else:
            parent = args[3] if len(args) > 3 else None
            entry = ("s", shape, path, level, bool(getattr(parent, "active", False)))
    else:
        return None
    return page_folder(url, context), entry


def page_folder(url: str, context: Any) -> tuple[str, Any]:
    """What the `url` filter reads of the page at `url`: its folder as mkdocs' get_relative_url takes it (the
    last part dropped if it names a file), and the context's base_url."""
    folder, _, name = url.rpartition("/")
    return folder if "." in name else url, context.get("base_url")


def _shape(section: Section, room: list[int]) -> tuple[Any, ...] | None:
    """Everything of a closed section its template can print (titles, URLs, active flags, index pages,
    nesting); None past `room` entries."""
    room[0] -= 1
    if room[0] < 0:
        return None
    children: list[Any] = []
    child: Any
    for child in section.children or ():
        kind = type(child)
        if kind is Section:
            if not vars(child).keys() <= _SECTION_FIELDS:
                return None
            inner = _shape(child, room)
            if inner is None:
                return None
            children.append(inner)
        elif kind is Page:
            children.append(("p", id(child), bool(child.active)))
        elif kind is Link:
            children.append(("l", child.title, child.url))
        else:
            return None
        room[0] -= 1
        if room[0] < 0:
            return None
    return ("s", section.title, bool(section.active), tuple(children))
