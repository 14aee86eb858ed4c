"""What the home page shows a newcomer besides prose: what the project is (the README's opening), how it is
started (entry points), what the rest of the code leans on (most-used abstractions), how its packages
connect (an architecture diagram), and where to start reading.

Rendering inputs only, like xref.py: derived from facts, the graph and the manifests, part of the overview's
page key but never of its draft key, so they never ask a writer for new prose.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.diagrams import Graph, architecture
from generator.entry_points import MANIFESTS, Entry, cli_sources, find_entry_points
from generator.facts import FileFacts
from generator.nav import dir_group

MAX_ABSTRACTIONS = 8
README_INTRO_LINES = 40
_ABSTRACT_KINDS = frozenset({"class", "interface", "struct", "trait", "enum", "type", "function"})


@dataclass(frozen=True)
class Abstraction:
    path: str
    qualname: str
    kind: str
    used_from: int  # distinct other files referencing it
    summary: str = ""


@dataclass(frozen=True)
class Orientation:
    entries: tuple[Entry, ...] = ()
    abstractions: tuple[Abstraction, ...] = ()
    diagram: Graph | None = None
    start_reading: tuple[str, ...] = ()  # file paths, in reading order
    readme_intro: str = ""

    def key(self) -> str:
        return repr((self.entries, self.abstractions, self.diagram.mermaid() if self.diagram else "",
                     self.diagram.left_out if self.diagram else "", self.start_reading, self.readme_intro))


_RULE = re.compile(r"([=\-~^*#])\1{2,}\s*")
_BADGES = re.compile(r"\s*(\[?!\[[^\]]*\]\([^)]*\)\]?(\([^)]*\))?\s*)+")


def readme_intro(text: str, max_lines: int = README_INTRO_LINES) -> str:
    """The README's opening: its title dropped (the page has one), then up to its next section heading
    (Markdown `#` or a reST underline), at most `max_lines` lines; badge and image lines dropped (they need
    the network)."""
    out: list[str] = []
    lines = text.replace("\r\n", "\n").split("\n")
    headings = 0
    fence = False
    skip = 0
    in_image = False
    for i, line in enumerate(lines):
        if skip:
            skip -= 1
            continue
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        after = lines[i + 2] if i + 2 < len(lines) else ""
        over = _RULE.fullmatch(line) and _RULE.fullmatch(after)
        underline = bool(line.strip()) and _RULE.fullmatch(nxt)
        if not fence and (re.match(r"^#{1,6}\s", line) or underline or over):
            headings += 1
            if headings > 1:
                break
            skip = 2 if over else (1 if underline else 0)
            continue  # the title
        if line.startswith((".. image::", ".. figure::")):
            in_image = True
            continue
        if in_image and line.startswith((" ", "\t")) and line.strip():
            continue  # the image's :target: / :align: options
        in_image = False
        if _BADGES.fullmatch(line):
            continue
        out.append(line)
        if len(out) >= max_lines:
            break
    return "\n".join(out).strip()


def manifest_texts(root: Path, paths: Iterable[str]) -> dict[str, str]:
    """The manifests among the repository's files (at most three levels deep), read from disk."""
    out = {}
    for path in paths:
        if posixpath.basename(path) in MANIFESTS and path.count("/") <= 2:
            try:
                out[path] = (root / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
    return out


def cli_texts(root: Path, facts: Mapping[str, FileFacts]) -> dict[str, str]:
    """The files that may define command-line groups (entry_points.cli_sources), read from disk."""
    out = {}
    for path in cli_sources(facts):
        try:
            out[path] = (root / path).read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
    return out


def _is_source(path: str) -> bool:
    """A file of the project's own code: not under tests, docs, examples or tooling folders."""
    return "/" not in path or dir_group(path.split("/", 1)[0]) == "source"


def most_used(facts: Mapping[str, FileFacts], callers: Mapping[tuple[str, str], list[tuple[str, str]]],
              limit: int = MAX_ABSTRACTIONS) -> list[Abstraction]:
    """Public symbols of the project's own code referenced from the most other code files (tests, examples
    and tooling neither count as users nor as candidates)."""
    from generator.docstrings import docstring_summary

    rows = []
    for path, f in facts.items():
        if f.file.kind != "code" or not _is_source(path):
            continue
        for s in f.symbols:
            if not s.public or s.kind not in _ABSTRACT_KINDS or s.parent is not None:
                continue
            users = {p for p, _ in callers.get((path, s.qualname), ()) if p != path
                     and p in facts and facts[p].file.kind == "code"}
            if len(users) >= 2:
                rows.append(Abstraction(path, s.qualname, s.kind, len(users),
                                        docstring_summary(s.docstring, 160)))
    rows.sort(key=lambda a: (-a.used_from, a.kind != "class", a.path, a.qualname))
    return rows[:limit]


def orientation(*, modules: Mapping[str, str], files: Mapping[str, str], facts: Mapping[str, FileFacts],
                graph: Any, importance: Mapping[str, float], manifests: Mapping[str, str],
                readme: str, sources: Mapping[str, str] | None = None) -> Orientation:
    """`sources`: the texts of the files that may define command-line groups (cli_texts)."""
    entries = find_entry_points(manifests, facts, sources=sources)
    abstractions = most_used(facts, graph.callers)

    def source_package(d: str) -> bool:
        return dir_group(d.split("/", 1)[0]) == "source"

    def module_of(path: str) -> str:
        return posixpath.dirname(path)

    diagram = architecture(modules, graph.depends_on, importance, module_of, "index.md", keep=source_package)
    if diagram is None:
        diagram = architecture(modules, graph.depends_on, importance, module_of, "index.md",
                               keep=lambda d: dir_group(d.split("/", 1)[0]) != "tooling")
    start: list[str] = []
    for path in [e.path for e in entries] + [a.path for a in abstractions] + graph.ranked_files(
            [p for p in files if p in facts and facts[p].file.kind == "code" and _is_source(p)])[:3]:
        if path not in start:
            start.append(path)
    return Orientation(entries=tuple(entries), abstractions=tuple(abstractions), diagram=diagram,
                       start_reading=tuple(start[:5]), readme_intro=readme_intro(readme))
