"""A MkDocs navigation shaped like a big generated wiki's, with its pages written: a folder past the light
nav's window, nested index pages, a closed chain, many small folders, an external link and a page the nav
may leave out. Shared by the light nav's and the site engine's nav tests; `nav_project` makes a MkDocs
project of it and `built_pages` builds that project."""

from __future__ import annotations

import io
import json
from pathlib import Path

from generator.pages.render_markdown import HOOKS_FILE
from generator.site.material import engine as site_engine
from generator.site.publish import install_theme


def write_nav_tree(docs: Path, *, big: int, areas: int, sub: bool = False, label: str = "",
                   list_loose: bool = False, body: str = "# {page}\n") -> list[object]:
    """The nav (as mkdocs.yml's `nav`), its pages written under `docs`: `big` pages in big/ (titled
    `M00{label}`...), `areas` folders of an index and a core page (`sub`: and a sub-folder each); loose.md is
    written, and listed only with `list_loose`. `body` is each page's text, `{page}` its path."""
    nav: list[object] = [{"Overview": "index.md"}]
    if list_loose:
        nav.append({"Loose": "loose.md"})
    pages = ["index.md", "loose.md"]
    folder: list[object] = ["big/index.md"]
    for k in range(big):
        folder.append({f"M{k:02}{label}": f"big/m{k:02}.md"})
        pages.append(f"big/m{k:02}.md")
    deep: list[object] = ["big/deep/index.md", {"Deeper/": ["big/deep/deeper/index.md",
                                                            {"Leaf": "big/deep/deeper/leaf.md"}]}]
    folder.insert(5, {"Deep/": deep})
    pages += ["big/index.md", "big/deep/index.md", "big/deep/deeper/index.md", "big/deep/deeper/leaf.md"]
    nav.append({"Big/": folder})
    for k in range(areas):
        area: list[object] = [f"area{k:02}/index.md", {"Core": f"area{k:02}/core.md"}]
        pages += [f"area{k:02}/index.md", f"area{k:02}/core.md"]
        if sub:
            area.append({"Sub/": [f"area{k:02}/sub/one.md"]})
            pages.append(f"area{k:02}/sub/one.md")
        nav.append({f"Area{k:02}/": area})
    nav.append({"Elsewhere": "https://example.org/"})
    for page in pages:
        (docs / page).parent.mkdir(parents=True, exist_ok=True)
        (docs / page).write_text(body.format(page=page), encoding="utf-8")
    return nav


def nav_project(root: Path, *, features: list[str], hooks: bool) -> Path:
    """A MkDocs project over write_nav_tree's pages with Material's `features`; with `hooks`, sourcebook's
    theme layer and its MkDocs hooks. Returns its mkdocs.yml."""
    nav = write_nav_tree(root / "docs", big=30, areas=8, sub=True, label=" <b>&amp;</b>", list_loose=True,
                         body="# {page}\n\nText.\n\n## A part\n\nMore.\n")
    theme: dict[str, object] = {"name": "material", "features": features}
    if hooks:  # sourcebook's theme layer: the audit passes only its own scripts
        theme["custom_dir"] = install_theme(root).name
    config = {"site_name": "t", "use_directory_urls": False, "docs_dir": "docs", "nav": nav,
              "theme": theme, "plugins": ["search"],
              "markdown_extensions": [{"toc": {"permalink": True}}]}
    if hooks:
        config["hooks"] = [str(Path(HOOKS_FILE))]
    (root / "mkdocs.yml").write_text(json.dumps(config), encoding="utf-8")
    return root / "mkdocs.yml"


def built_pages(config: Path, into: Path) -> dict[str, bytes]:
    """The project built by the site engine (one process) into `into`: {page path: HTML bytes}."""
    site_engine._here.relay = site_engine._Relay(io.StringIO())
    site_engine.build(config, into, None, workers=1)
    return {p.relative_to(into).as_posix(): p.read_bytes() for p in sorted(into.rglob("*.html"))}
