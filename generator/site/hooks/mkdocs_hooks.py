"""MkDocs hooks every sourcebook site runs (`hooks:` in the generated mkdocs.yml): the HTML choke point.

- on_config: generator/site/material/raw_blocks.py joins the Markdown extensions: the HTML blocks sourcebook
rendered itself
  go to Markdown's stash whole instead of through its HTML parser (same HTML, a third less Markdown time).
- on_files: only pages and the assets sourcebook itself writes are taken from docs/. Anything else there (an
  `evil.html`, or a `assets/javascripts/bundle.*.js` that would shadow Material's own script on every page,
  committed by a repository into its `.sourcebook/docs/`) is left out of the site, and the theme's file it
  shadowed comes back.
- on_page_content: the page's rendered content through the allowlist sanitizer
(generator/markup/html_sanitize.py),
  and its table-of-contents titles (printed by the theme, outside the content) through the inline one; then
  the page's weight bounded (generator/site/page_budget.py): content over the budget cut with a note, the
  table
  of contents capped.
- on_page_context / on_template_context: each page gets its own light navigation
(generator/site/light_nav.py): its
  path and a capped window of siblings per level, instead of every entry of every level on its path.
- on_config / on_files / on_post_page: the theme's icons are drawn by one generated stylesheet
  (generator/site/chrome_icons.py, assets/sourcebook/icons.css) instead of inline SVG in every page's chrome.
- on_post_page: the theme's indentation squeezed out (around the content, never in it); the finished page
  is audited; anything script-capable left in it (from the theme, a title,
  a future extension) fails the build with the page and the problem named, instead of shipping.
- on_post_build (last): the search index is sharded by term prefix, so that a query loads only its terms'
  shards and the sections it shows: generator/site/search_split.py.

MkDocs loads this file by path, so it imports the rest of sourcebook like any other module.
"""

from __future__ import annotations

import logging
import os
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from mkdocs.exceptions import PluginError
from mkdocs.plugins import event_priority
from mkdocs.structure.files import File
from mkdocs.structure.nav import Navigation
from mkdocs.structure.toc import TableOfContents

from generator.markup.html_sanitize import audit_page, sanitize_content, sanitize_inline
from generator.site import chrome_icons
from generator.site.light_nav import page_nav, squeeze_nav
from generator.site.page_budget import anchor_ids, cap_toc, cut_content, filter_toc, squeeze_chrome
from generator.site.search_split import split_site_index

if TYPE_CHECKING:
    from mkdocs.config.defaults import MkDocsConfig
    from mkdocs.structure.files import Files
    from mkdocs.structure.pages import Page
    from mkdocs.utils.templates import TemplateContext

log = logging.getLogger("mkdocs.plugins.sourcebook")

RAW_BLOCKS = "generator.site.material.raw_blocks"  # a Markdown extension, by its import name

# The only non-page files sourcebook writes into docs/: site.install_mermaid's content-hashed mermaid.js and
# wiki_map.MAP_PATH (spelled out here so MkDocs does not import the generator;
# tests/integration/test_hostile_repo.py checks both still match). Pages (.md) from docs/ are kept: their HTML
# goes through on_page_content.
OWN_DOCS_ASSETS = re.compile(r"assets/sourcebook/(?:mermaid-[0-9a-f]{12}\.min\.js|wiki-map\.json)")


class _Chrome:
    """The icons of this build's theme (`{svg markup: class}`), read once per build (render workers, forked
    after on_config, inherit them)."""

    icons: ClassVar[dict[str, str]] = {}


def on_config(config: MkDocsConfig, **_: Any) -> MkDocsConfig:
    from jinja2 import TemplateNotFound

    if RAW_BLOCKS not in config.markdown_extensions:
        config.markdown_extensions.append(RAW_BLOCKS)  # by name: the engine's cache keys hash the config
    env = config.theme.get_env()
    loader = env.loader

    def source(name: str) -> str | None:
        try:
            return loader.get_source(env, name)[0] if loader is not None else None
        except TemplateNotFound:
            return None

    names = chrome_icons.icon_names(config.theme.get("icon"), config.theme.get("palette"))
    _Chrome.icons = chrome_icons.load_icons(names, source)
    return config


def on_files(files: Files, config: MkDocsConfig, **_: Any) -> Files:
    docs = os.path.realpath(config.docs_dir) + os.sep
    foreign = [f for f in files
               if not f.is_documentation_page() and f.abs_src_path
               and os.path.realpath(f.abs_src_path).startswith(docs)
               and not OWN_DOCS_ASSETS.fullmatch(f.src_uri)]
    for file in foreign:
        files.remove(file)
    if foreign:
        log.info("sourcebook: left out of the site, not written by sourcebook: %s",
                 ", ".join(sorted(f.src_uri for f in foreign)[:10]))
        files.add_files_from_theme(config.theme.get_env(), config)  # the theme's files they shadowed
    icons_css = chrome_icons.stylesheet(_Chrome.icons)
    files.append(File.generated(config, chrome_icons.CSS_PATH, content=icons_css))
    return files


def on_page_content(html: str, page: Page, **_: Any) -> str:
    _clean_toc(page.toc)
    html = sanitize_content(html)
    items = list(page.toc.items)
    cut = cut_content(html)
    if cut is not None:
        html = cut.html
        present = anchor_ids(html)
        page.present_anchor_ids = {a for a in page.present_anchor_ids or () if a in present}
        items = filter_toc(items, present)
        log.info("sourcebook: %s: its content is %.1f MB, cut at the page budget (%d sections left out)",
                 page.file.src_uri, cut.full_bytes / 1e6, cut.dropped_sections)
    capped = cap_toc(items)
    if capped != page.toc.items:
        if capped and page.toc.items and getattr(page.toc.items[0], "active", False):
            capped[0].active = True  # type: ignore[attr-defined]  # what mkdocs marks on its own first entry
        page.toc = TableOfContents(capped)
    return html


def _clean_toc(items: Any) -> None:
    for item in items or ():
        item.title = sanitize_inline(item.title)
        _clean_toc(getattr(item, "children", ()))


def on_page_context(context: TemplateContext, page: Page, nav: Navigation, **_: Any) -> TemplateContext:
    context["nav"] = page_nav(nav, page)  # type: ignore[typeddict-item]
    return context


def on_template_context(context: TemplateContext, template_name: str = "", config: MkDocsConfig | None = None,
                        **_: Any) -> TemplateContext:
    # 404.html and other theme pages: no page is open, every level closed
    nav = context.get("nav")
    if isinstance(nav, Navigation):
        context["nav"] = page_nav(nav, None)  # type: ignore[typeddict-item]
    if template_name.endswith("404.html") and not (config is not None and config.site_url):
        # MkDocs gives an error page root-absolute URLs (`/assets/...`) when no site_url is set: from disk,
        # or under a sub-path (a project's GitHub Pages), it loaded no stylesheet and every link missed. The
        # page sits at the site's root, so links relative to it work from disk and at any served root.
        context["base_url"] = "."
    return context


def on_post_page(output: str, page: Page, **_: Any) -> str:
    # before the audit: what ships is what is checked
    output = chrome_icons.light_icons(output, page.content or "", _Chrome.icons)
    output = squeeze_chrome(squeeze_nav(output), page.content or "")
    problems = audit_page(output, clean_part=page.content or "")
    if problems:
        raise PluginError(f"sourcebook: {page.file.src_uri}: script-capable markup left in the page: "
                          + "; ".join(problems[:5]))
    return output


# after Material's search plugin wrote the index and its offline plugin (-100) copied it to .js
@event_priority(-200)
def on_post_build(config: MkDocsConfig, **_: Any) -> None:
    split_site_index(Path(config.site_dir))
