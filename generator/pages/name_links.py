"""Names in docstrings (`pkg.mod.Class`, `~Class.method`, `Foo#bar`) -> the section of the symbol they name.

An index of every public symbol (each has a section on its file's page) by qualified name, by dotted module
path + qualified name, and by module. Lookups prefer the file the docstring is in, then an exact dotted
path, then the longest unique suffix; a name the index does not know resolves to nothing (shown as code).
"""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field

from generator.analyze.facts import FileFacts


@dataclass(frozen=True)
class Target:
    path: str
    page_id: str
    anchor: str = ""  # "" = the file's page itself (a module reference)
    summary: str = ""  # the symbol's docstring summary, where a page shows it (a `::: name` directive)


def module_names(path: str) -> list[str]:
    """`src/pkg/mod.py` -> ["src.pkg.mod", "pkg.mod", "mod"]; a package's `__init__` names the package."""
    stem = posixpath.splitext(path)[0]
    parts = [p for p in stem.split("/") if p]
    if parts and parts[-1] in ("__init__", "index", "mod", "lib") and len(parts) > 1:
        parts = parts[:-1]
    return [".".join(parts[i:]) for i in range(len(parts))]


@dataclass
class NameIndex:
    by_file: dict[str, dict[str, Target]] = field(default_factory=dict)  # path -> qualname -> target
    by_qualname: dict[str, list[Target]] = field(default_factory=dict)
    modules: dict[str, list[str]] = field(default_factory=dict)  # dotted module (any suffix) -> paths
    pages: dict[str, str] = field(default_factory=dict)  # path -> page id
    docstrings: dict[tuple[str, str], str] = field(default_factory=dict)  # (path, anchor) -> docstring
    # path -> (first line, last line, target) of each symbol with a section: where a `file#L12` link lands
    spans: dict[str, list[tuple[int, int, Target]]] = field(default_factory=dict)
    packages: set[str] = field(default_factory=set)  # folders holding an __init__.py: Python packages

    @classmethod
    def build(cls, facts: Mapping[str, FileFacts], pages: Mapping[str, str]) -> NameIndex:
        from generator.pages.anchors import anchor_ids, has_section  # the one anchor scheme the pages use

        index = cls(pages={p: pages[p] for p in facts if p in pages},
                    packages={posixpath.dirname(p) for p in facts if posixpath.basename(p) == "__init__.py"})
        for path in sorted(facts):
            page = pages.get(path)
            if page is None:
                continue
            f = facts[path]
            anchors = anchor_ids(f.symbols)
            own: dict[str, Target] = {}
            for s in f.symbols:
                if not has_section(s, f.file.language) or s.qualname in own:
                    continue
                target = Target(path, page, anchors[s.qualname])
                if s.docstring:
                    index.docstrings[(path, target.anchor)] = s.docstring
                own[_dotted(s.qualname)] = target
                index.by_qualname.setdefault(_dotted(s.qualname), []).append(target)
                # outside Python a symbol's doc comment sits above its first line: a link to the comment
                # (or to a line that moved a little since the link was written) means the symbol
                above = s.docstring.count("\n") + 1 if s.docstring and f.file.language != "python" else 0
                index.spans.setdefault(path, []).append((s.start_line - above, s.end_line, target))
            index.by_file[path] = own
            if f.docstring:  # a module's own: what an `.. automodule::` of it shows
                index.docstrings[(path, "")] = f.docstring
            if f.symbols:
                for name in module_names(path):
                    index.modules.setdefault(name, []).append(path)
        return index

    def at_line(self, path: str, line: int) -> Target | None:
        """The section of the innermost symbol of `path` whose lines hold `line` (a GitHub `#L12` link);
        None when no symbol with a section does."""
        holding = [(end - start, target) for start, end, target in self.spans.get(path, ())
                   if start <= line <= end]
        return min(holding, key=lambda pair: (pair[0], pair[1].anchor))[1] if holding else None

    def lookup(self, name: str, from_path: str) -> Target | None:
        name = _dotted(name)
        if not name:
            return None
        own = self.by_file.get(from_path, {})
        if name in own:
            return own[name]
        parts = name.split(".")
        # a dotted module path followed by a qualified name: flask.app.Flask.route
        for k in range(len(parts) - 1, 0, -1):
            paths = self.modules.get(".".join(parts[:k]), [])
            qual = ".".join(parts[k:])
            found = [self.by_file[p][qual] for p in paths if qual in self.by_file.get(p, {})]
            if found:
                return _closest(found, from_path)
        modules = [p for p in self.modules.get(name, []) if self._importable(name, p)]
        if modules:
            return _closest([Target(p, self.pages[p]) for p in modules], from_path)
        # the longest suffix that names a symbol, when the rest names where it lives: `flask.Flask`
        # (re-exported) finds src/flask/app.py's Flask; `werkzeug.exceptions.abort` finds nothing here
        for k in range(len(parts)):
            qual = ".".join(parts[k:])
            prefix = set(parts[:k])
            candidates = ([own[qual]] if qual in own else []) or self.by_qualname.get(qual, [])
            related = [t for t in candidates if prefix <= set(module_names(t.path)[0].split("."))]
            if related:
                return own[qual] if qual in own and own[qual] in related else _closest(related, from_path)
        # a member named from inside its class: :meth:`route` in Flask's docstring
        members = [t for q, t in own.items() if q.endswith("." + name)] if len(parts) == 1 else []
        return members[0] if len(members) == 1 else None


    def _importable(self, name: str, path: str) -> bool:
        """Whether a Python module is imported by `name`: an import names a module from a folder that is
        not a package (`flask.json`), so `json` is the standard library's, not src/flask/json/."""
        if not path.endswith((".py", ".pyi")):
            return True
        full = module_names(path)[0].split(".")
        top = len(full) - len(name.split("."))
        return top <= 0 or "/".join(full[:top]) not in self.packages


def _dotted(name: str) -> str:
    return name.replace("::", ".").replace("#", ".").strip(". ")


def _closest(targets: Iterable[Target], from_path: str) -> Target | None:
    """The target whose file shares the longest directory prefix with the referring file."""
    here = from_path.split("/")

    def shared(t: Target) -> int:
        n = 0
        for a, b in zip(here, t.path.split("/"), strict=False):
            if a != b:
                break
            n += 1
        return n

    ordered = sorted(targets, key=lambda t: (-shared(t), t.path, t.anchor))
    return ordered[0] if ordered else None


def page_resolver(index: NameIndex, path: str, page_id: str, allowed: Mapping[str, Target | None],
                  link: Callable[[str, str], str]) -> Callable[[str], str | None]:
    """name -> URL for the page of `path`: symbols of the same page always; other pages only through
    `allowed` (the names that are part of the page's key, so a page never links to a page that is gone)."""

    def resolve(name: str) -> str | None:
        target = allowed[name] if name in allowed else index.lookup(name, path)
        if target is None or (target.path != path and name not in allowed):
            return None
        if target.page_id == page_id:
            return "#" + target.anchor if target.anchor else None
        url = link(page_id, target.page_id)
        return f"{url}#{target.anchor}" if target.anchor else url

    return resolve
