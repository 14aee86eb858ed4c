"""The theme's blocks that print nothing of a page but its folder, rendered once per folder.

Material's base.html renders, on every page, blocks that read only the config, the theme's language strings
and URLs made relative to the page (`url` filter): its settings JSON (`config`, with ten translated strings
and sourcebook's search-worker rewrite in main.html), stylesheets, fonts, libraries, scripts, analytics and
sourcebook's extra head (the icons' stylesheet); and the partials the header and nav include that read
the same (search box, palette toggle, logo, repository link). The engine renders a folder's pages one after
another, so such a block's output is kept for the folder (page URL folder and base_url) and handed to its
other pages.

Installed only over Material's own base.html and a main.html that is Material's or sourcebook's theme
layer's (byte for byte): another theme could print the page in these blocks. A page that is not a Page (a
theme template such as 404.html) renders them as before.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from mkdocs.structure.pages import Page

from generator.site.material.nav_items import FolderMemo, page_folder

BLOCKS = ("styles", "libs", "fonts", "analytics", "extrahead", "config", "scripts")
# Material's partials included in the header and the nav that read only the config, the language strings
# and URLs (no page, no variable of the template including them)
PARTIALS = ("partials/search.html", "partials/palette.html", "partials/logo.html", "partials/source.html")


def install(env: Any) -> bool:
    """Wrap the page-independent blocks of base.html and main.html, and Material's own PARTIALS, in `env` with
    a per-folder memo; False (nothing changed) when either template is not one this module knows."""
    import material
    from jinja2 import TemplateNotFound

    from sourcebook.data_files import data_dir

    if env.loader is None:
        return False
    material_dir = Path(material.__file__).resolve().parent / "templates"
    try:
        _, base_file, _ = env.loader.get_source(env, "base.html")
        main_source, main_file, _ = env.loader.get_source(env, "main.html")
    except TemplateNotFound:
        return False
    if base_file is None or main_file is None or Path(base_file).resolve() != material_dir / "base.html":
        return False
    own_main = data_dir("site") / "main.html"
    if Path(main_file).resolve() != material_dir / "main.html" and not (
            own_main.is_file() and own_main.read_text(encoding="utf-8") == main_source):
        return False
    memo = FolderMemo()
    for name in ("main.html", "base.html"):
        template = env.get_template(name)
        for block in BLOCKS:
            if block in template.blocks:
                template.blocks[block] = _Kept(template.blocks[block], (name, block), memo)
    for name in PARTIALS:
        try:
            _, file, _ = env.loader.get_source(env, name)
        except TemplateNotFound:
            continue
        if file is not None and Path(file).resolve() == material_dir / name:
            template = env.get_template(name)
            template.root_render_func = _Kept(template.root_render_func, (name, ""), memo)
    return True


class _Kept:
    """A block function answered from the folder's memo. It equals the function it wraps: Jinja's super()
    finds a block's place in the context's list by the block's own function (`blocks.index(current)`)."""

    def __init__(self, render: Callable[[Any], Iterator[str]], which: tuple[str, str],
                 memo: FolderMemo) -> None:
        self.render, self.which, self.memo = render, which, memo

    def __eq__(self, other: object) -> bool:
        return other is self or other is self.render

    def __hash__(self) -> int:
        return hash(self.render)

    def __call__(self, context: Any) -> Iterator[str]:
        page = context.get("page")
        url = getattr(page, "url", None)
        if not isinstance(page, Page) or not isinstance(url, str):
            yield from self.render(context)
            return
        yield self.memo.get(page_folder(url, context), self.which, lambda: "".join(self.render(context)))
