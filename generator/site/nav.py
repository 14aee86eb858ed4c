"""The site's navigation, ordered the way a reader looks for things: the source code first, then the
repository's docs, tests and examples, and tooling (dot-folders, scripts, CI, root config files) last.

Folders with a single subfolder and no files of their own (`src/` holding `flask/`) are collapsed into one
entry (`src/flask/`). Source files at the repository root (a Go module's root package: chi's `mux.go`) are a
folder node named for the package (`chi/`), whose page is the root's folder page; the root's papers and
config files stay under "Repository and tooling". Every folder and file is in the nav, so every page's path
is shown; what one page shows of it is capped per level by generator/site/light_nav.py (a 300-file folder
shows a window of its files and a link to the folder's page, which lists every file).
"""

from __future__ import annotations

import html
import posixpath
from collections.abc import Mapping
from typing import Any

from generator.analyze.groups import Group, dir_group, file_group

NavItem = str | dict[str, Any]
GROUP_TITLES = {"docs": "Docs", "tests": "Tests", "examples": "Examples", "tooling": "Tooling"}


def _title(name: str) -> str:
    # Material prints a nav title as HTML: `<img onerror=…>.py` is a legal file name
    return html.escape(name)


def build_nav(*, modules: Mapping[str, str], files: Mapping[str, str],
              children: Mapping[str, tuple[list[str], list[str]]],
              kinds: Mapping[str, str] | None = None, root_name: str = "") -> list[NavItem]:
    """Overview; source folders; Docs; Tests; Examples; Tooling (with the repository root's page).

    Source files at the root are one folder node, `root_name/` (the project's name; "root package" without
    one), whose page is the root's folder page (it lists them); without them the root's page opens the
    tooling group.

    With `navigation.indexes` a folder's page is its section's own page; each HTML page renders only its own
    path through this tree, capped per level (generator/site/light_nav.py), which keeps big trees cheap.
    """
    kinds = kinds or {}

    def collapse(directory: str) -> str:
        """The deepest folder reached through folders that hold exactly one subfolder and no files."""
        while True:
            direct, subdirs = children[directory]
            if direct or len(subdirs) != 1:
                return directory
            directory = subdirs[0]

    def section(directory: str, label_from: str) -> NavItem:
        end = collapse(directory)
        label = posixpath.relpath(end, label_from) if label_from else end
        direct, subdirs = children[end]
        items: list[NavItem] = [modules[end]]
        items += [section(d, end) for d in subdirs]
        items += [{_title(posixpath.basename(p)): files[p]} for p in direct]
        return {_title(label) + "/": items}

    nav: list[NavItem] = [{"Overview": "index.md"}]
    if "" not in modules:
        return nav
    root_files, root_dirs = children[""]
    grouped: dict[Group, list[NavItem]] = {g: [] for g in ("source", "docs", "tests", "examples", "tooling")}
    for d in root_dirs:
        grouped[dir_group(d)].append(section(d, ""))
    for p in root_files:
        grouped[file_group(p, kinds.get(p, "code"))].append({_title(p): files[p]})
    root_source = [item for item in grouped["source"] if not _is_section(item)]
    if root_source:
        label = _title(root_name) + "/" if root_name else "root package/"
        grouped["source"] = [{label: [modules[""], *root_source]},
                             *(item for item in grouped["source"] if _is_section(item))]
    nav += grouped["source"]
    for group in ("docs", "tests", "examples"):
        items = grouped[group]
        if len(items) == 1 and isinstance(items[0], dict) and all(
                isinstance(v, list) for v in items[0].values()):
            nav += items  # one folder (`tests/`): its own entry, no group around it
        elif items:
            nav.append({GROUP_TITLES[group]: items})
    # the repository root's own page lists every top-level file and folder: it opens the last group unless
    # it is the root package's page
    tooling = grouped["tooling"] if root_source else [modules[""], *grouped["tooling"]]
    if tooling:
        nav.append({"Repository and tooling": tooling})
    return nav


def _is_section(item: NavItem) -> bool:
    return isinstance(item, dict) and all(isinstance(v, list) for v in item.values())
