"""MkDocs hooks every sourcebook site runs (`hooks:` in the generated mkdocs.yml): the HTML choke point.

- on_page_content: the page's rendered content through the allowlist sanitizer (generator/html_sanitize.py),
  and its table-of-contents titles (printed by the theme, outside the content) through the inline one.
- on_post_page: the finished page is audited; anything script-capable left in it (from the theme, a title,
  a future extension) fails the build with the page and the problem named, instead of shipping.

MkDocs loads this file by path, so it imports the rest of sourcebook like any other module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from mkdocs.exceptions import PluginError

from generator.html_sanitize import audit_page, sanitize_content, sanitize_inline

if TYPE_CHECKING:
    from mkdocs.structure.pages import Page


def on_page_content(html: str, page: Page, **_: Any) -> str:
    _clean_toc(page.toc)
    return sanitize_content(html)


def _clean_toc(items: Any) -> None:
    for item in items or ():
        item.title = sanitize_inline(item.title)
        _clean_toc(getattr(item, "children", ()))


def on_post_page(output: str, page: Page, **_: Any) -> str:
    problems = audit_page(output, clean_part=page.content or "")
    if problems:
        raise PluginError(f"sourcebook: {page.file.src_uri}: script-capable markup left in the page: "
                          + "; ".join(problems[:5]))
    return output
