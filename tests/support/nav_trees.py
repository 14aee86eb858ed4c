"""A MkDocs navigation shaped like a big generated wiki's, with its pages written: a folder past the light
nav's window, nested index pages, a closed chain, many small folders, an external link and a page the nav
may leave out. Shared by the light nav's and the site engine's nav tests."""

from __future__ import annotations

from pathlib import Path


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
