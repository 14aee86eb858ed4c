"""What the home page shows a newcomer besides prose: what the project is (the README's opening), how it is
started (entry points), what the rest of the code leans on (most-used abstractions), how its packages
connect (an architecture diagram), and where to start reading.

Rendering inputs only, like call_links.py's XrefIndex: derived from facts, the graph and the manifests, part
of the overview's page key but never of its draft key, so they never ask a writer for new prose.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from generator.analyze.entry_points import MANIFESTS, Entry, cli_sources, find_entry_points
from generator.analyze.exports import Export, Reader, package_exports
from generator.analyze.facts import FileFacts
from generator.analyze.groups import Group, dir_group, file_group, named_group
from generator.analyze.public_surface import conventional_exports
from generator.pages.diagrams import Graph, architecture, file_architecture
from generator.pages.type_parts import SplitType, secondary_parts, split_types

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
class ApiName:
    """A name the package's users import (exports.Export), where it is defined, and its summary."""

    name: str  # "flask.Flask"
    path: str = ""
    qualname: str = ""
    kind: str = ""
    summary: str = ""


# a Ruby module is a gem's front door (`include HTTParty`); a module with no symbol (a file) never is
_MAIN_TYPE_KINDS = frozenset({"class", "struct", "interface", "trait", "object", "record", "module"})
MAIN_TYPE_WINDOW = 8  # the main type is among the API's first names (front door first, then by use)
MAX_MAIN_CANDIDATES = 500  # the names looked for in the README, the most used first


def main_name(api: Sequence[ApiName], readme: str = "",
              records: frozenset[tuple[str, str]] = frozenset()) -> ApiName | None:
    """What the home page's opening names as the library's main type: the API's class, struct, interface,
    trait, object or (Ruby) module the README's code (blocks and spans) uses most (`cxxopts::Options`, clikt's
    `CliktCommand`; not the exception the library's own code throws everywhere), else the function it uses
    most (Express's `express()`); with no README code, the first type among the API's first names, else
    its first function (inih's `ini_parse`). A type alias (a callback's typedef) or a constant never;
    `records`: the (path, qualname) of the aliases that name a C struct (`typedef struct redisContext
    {...} redisContext`)."""
    located = [a for a in api[:MAX_MAIN_CANDIDATES] if a.qualname and a.path]
    # its code blocks and the code spans of its prose (`redisContext`)
    code = "\n".join([_readme_code(readme), *_CODE_SPAN.findall(readme)]) if readme else ""
    if code:
        for kinds in (_MAIN_TYPE_KINDS, frozenset({"function"})):
            counts = [(len(re.findall(rf"(?<![\w$]){re.escape(_short_name(a.name))}(?![\w$])", code)), -i, a)
                      for i, a in enumerate(located) if a.kind in kinds or (
                          "function" not in kinds and (a.path, a.qualname) in records)]
            best = max(counts, key=lambda c: (c[0], c[1]), default=None)
            if best is not None and best[0] > 0:
                return best[2]
    first = located[:MAIN_TYPE_WINDOW]
    return next((a for a in first if a.kind in _MAIN_TYPE_KINDS or (a.path, a.qualname) in records),
                None) or next(
        (a for a in first if a.kind == "function"), None)


_CODE_SPAN = re.compile(r"(?<!`)`([^`\n]{1,200})`(?!`)")
_STRUCT_ALIAS = re.compile(r"typedef\s+(?:struct|union)\b")


def _struct_aliases(api: Iterable[ApiName], facts: Mapping[str, FileFacts]) -> frozenset[tuple[str, str]]:
    """The API's C typedefs that name a struct or union: its types, where other typedefs are aliases."""
    out = set()
    for a in api:
        if a.kind == "type" and a.path in facts:
            s = next((s for s in facts[a.path].symbols if s.qualname == a.qualname), None)
            if s is not None and _STRUCT_ALIAS.match(s.signature):
                out.add((a.path, a.qualname))
    return frozenset(out)


def _one_per_name(found: Iterable[Any]) -> list[Any]:
    """One export per name, in first-seen order: a name several files declare (a Ruby module reopened in
    each of the gem's files, `module HTTParty` in version.rb and request.rb alike) is the one of the file
    named after it (lib/httparty.rb), else its first declaration."""
    chosen: dict[str, Any] = {}
    for e in found:
        have = chosen.get(e.name)
        if have is None or (not _named_after(have) and _named_after(e)):
            chosen[e.name] = e
    return list(chosen.values())


def _named_after(e: Any) -> bool:
    stem = e.path.rsplit("/", 1)[-1].split(".", 1)[0]
    return stem.replace("_", "").replace("-", "").lower() == _short_name(e.name).lower()


def _short_name(name: str) -> str:
    """`com.x.Moshi`, `cxxopts::Options`, `Monolog\\Logger` -> the name a user's code writes."""
    return re.split(r"::|[.\\]", name)[-1]


MAX_API_SHOWN = 30  # the home page's "Public API" lists this many; the API page lists them all
MAX_API_NAMES = 2000  # a Java monorepo's thousands of public classes: the most used this many


@dataclass(frozen=True)
class Orientation:
    entries: tuple[Entry, ...] = ()
    abstractions: tuple[Abstraction, ...] = ()
    diagram: Graph | None = None
    start_reading: tuple[str, ...] = ()  # file paths, in reading order
    readme_intro: str = ""
    api: tuple[ApiName, ...] = ()  # the public API, most used first
    main: ApiName | None = None  # the library's main type (or function), named in the page's opening

    def key(self) -> str:
        return repr((self.entries, self.abstractions, self.api, self.main,
                     self.diagram.mermaid() if self.diagram else "",
                     self.diagram.left_out if self.diagram else "", self.diagram.unit if self.diagram else "",
                     self.start_reading,
                     self.readme_intro))


_RULE = re.compile(r"([=\-~^*#])\1{2,}\s*")
# badges: Markdown images, linked or not, and HTML `<img>` tags, linked or not (`[<img src=...>](url)`),
# which need the network and leave an empty link once the image is gone
# an image (`![alt](src)`, `![alt][ref]`), the same inside a link, or an HTML <img>, alone or linked. Each
# piece has one way to match: a README is untrusted, and a pattern with two ways to read `![x](y)` took
# seconds on a line of 20 badges followed by a word (every split tried before the line's end failed)
_IMAGE = r"!\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])?"
_BADGE = (rf"(?:\[{_IMAGE}\](?:\([^)]*\)|\[[^\]]*\])?|{_IMAGE}"
          r"|\[\s*<img\b[^<>]*>\s*\]\([^)]*\)|<img\b[^<>]*>)")
_BADGES = re.compile(rf"\s*(?:{_BADGE}(?:\s|&ensp;|&nbsp;)*)+")
# badges after a line's words ("Very fast C++ logging library. [![ci](…)](…)&nbsp; [![Release](…)](…)"):
# their alt texts would read as words of the sentence ("… library. ci Build status Release")
MAX_BADGE_LINE = 4000
_TRAILING_BADGES = re.compile(rf"(?<=\S)(?:\s|&ensp;|&nbsp;)+(?:{_BADGE}(?:\s|&ensp;|&nbsp;)*)+$")
# a line that is only a horizontal rule, or a label and a link ("**Documentation**: https://...")
# (possessive runs of space: a README line of 30,000 spaces took 52 s when the label and the spaces around it
# could share them out every way)
_FILLER = re.compile(r"\s*(?:[-*_]\s*){3,}|\s*+(?:\*\*|__)?[\w ]{1,30}(?:\*\*|__)?\s*+:\s*+"
                     r"(?:<?https?://\S+>?|\[[^\]]*\]\([^)]*\)|<a\s[^>]*>[^<]*</a>)\s*")
# a paragraph announcing a release or news, not saying what the project is ("v3 is out!", "📢 We are
# happy to announce ...", "**Note**: version 2.0 drops ..."): a README's first paragraph is often one
_ANNOUNCEMENT = re.compile(
    r"^\W*(?:(?:\*\*|__)?(?:news|announcement|announcing|update|note|important|attention|heads[- ]up)\b"
    r"|(?:we(?:'re| are)\s+)?(?:happy|excited|pleased|proud)\s+to\s+announce)"
    r"|\b(?:v?\d+\.\d+(?:\.\d+)?|version\s+\d+|\w+\s+\d+)\s+(?:is|has been)\s+(?:now\s+)?"
    r"(?:out|released|available|here)\b"
    r"|^\W*(?:released?|new(?: release)?)\b.{0,40}\bv?\d+\.\d+",
    re.I)


def is_announcement(paragraph: str) -> bool:
    """Whether a README paragraph is a release or news announcement (see _ANNOUNCEMENT)."""
    return bool(_ANNOUNCEMENT.search(" ".join(paragraph.split())[:300]))


_TAG = re.compile(r"<[^<>]{0,500}>")


def _drop_announcements(text: str) -> str:
    """`text` minus its leading paragraphs that announce releases or news, or that are only HTML tags (the
    `<div align="center">` that wrapped a README's badges)."""
    paragraphs = re.split(r"\n[ \t]*\n", text.strip("\n"))
    while paragraphs and (is_announcement(paragraphs[0]) or not _TAG.sub("", paragraphs[0]).strip()):
        paragraphs.pop(0)
    return "\n\n".join(paragraphs)


def readme_intro(text: str, max_lines: int = README_INTRO_LINES) -> str:
    """The README's opening: its title dropped (the page has one), then up to its next section heading
    (Markdown `#` or a reST underline), at most `max_lines` lines; badge and image lines dropped (they need
    the network), and rules, "Documentation: <url>" lines and leading release announcements too."""
    intro, _ = _split_readme(text, max_lines)
    return _drop_announcements(intro)


def readme_rest(text: str, max_lines: int = README_INTRO_LINES) -> str:
    """The README after the part readme_intro shows (from its next section heading on): what the home page
    shows below the intro, so no paragraph of it appears twice."""
    return _split_readme(text, max_lines)[1]


def _split_readme(text: str, max_lines: int) -> tuple[str, str]:
    out: list[str] = []
    lines = text.replace("\r\n", "\n").split("\n")
    headings = 0
    fence = False
    opened = (0, 0)
    skip = 0
    in_image = False
    for i, line in enumerate(lines):
        if skip:
            skip -= 1
            continue
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
            opened = (len(out), i)  # where the block starts, in the intro and in the README
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        after = lines[i + 2] if i + 2 < len(lines) else ""
        over = _RULE.fullmatch(line) and _RULE.fullmatch(after)
        underline = bool(line.strip()) and _RULE.fullmatch(nxt)
        if not fence and (re.match(r"^#{1,6}\s", line) or underline or over):
            headings += 1
            if headings > 1:
                return "\n".join(out).strip(), "\n".join(lines[i:]).strip()
            skip = 2 if over else (1 if underline else 0)
            continue  # the title
        if line.startswith((".. image::", ".. figure::")):
            in_image = True
            continue
        if in_image and line.startswith((" ", "\t")) and line.strip():
            continue  # the image's :target: / :align: options
        in_image = False
        if _BADGES.fullmatch(line) or (not fence and _FILLER.fullmatch(line)):
            continue
        # (a search from each space is quadratic in the line: real badge rows are far below the cap)
        out.append(line if fence or len(line) > MAX_BADGE_LINE else _TRAILING_BADGES.sub("", line))
        if len(out) >= max_lines:
            if fence:  # never half a code block (whose fence would swallow what follows): it starts the rest
                return "\n".join(out[:opened[0]]).strip(), "\n".join(lines[opened[1]:]).strip()
            return "\n".join(out).strip(), "\n".join(lines[i + 1:]).strip()
    return "\n".join(out).strip(), ""


def manifest_texts(root: Path, paths: Iterable[str]) -> dict[str, str]:
    """The manifests among the repository's files (at most three levels deep), read from disk, and the
    go.mod files of their folders (the scan skips them: no source file) as "": where a Go module's root
    package is, which is all the API needs of them (its name is the sources' `package` clause)."""
    out = {}
    folders = set()
    for path in paths:
        if path.count("/") <= 2:
            folders.add(posixpath.dirname(path))
        if posixpath.basename(path) in MANIFESTS and path.count("/") <= 2:
            try:
                out[path] = (root / path).read_text(encoding="utf-8", errors="replace")
            except OSError:
                continue
    for folder in sorted(folders):
        go_mod = root / folder / "go.mod"
        if go_mod.is_file() and not go_mod.is_symlink():
            out[posixpath.join(folder, "go.mod")] = ""
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


_GROUP_RANK = {"source": 0, "docs": 1, "tests": 2, "examples": 3, "tooling": 4}


def folder_group(directory: str) -> Group:
    """A folder's group by its top-level folder (nav.dir_group); below a source folder, a tests, docs,
    examples or benchmarks folder is one too (a monorepo's `pylint/tests/`, Maven's `src/test/`, a
    `Serilog.Tests` project, a `src/jmh/` or `fuzz/` folder: groups.named_group's unmistakable names, since
    `_pytest/config/` is code); a dot-folder anywhere is tooling."""
    parts = directory.split("/")
    if any(p.startswith(".") for p in parts):
        return "tooling"
    group = dir_group(parts[0])
    if group != "source":
        return group
    return next((g for p in parts[1:] if (g := named_group(p)) is not None), "source")


def path_group(path: str, kind: str = "code") -> Group:
    """A file's group: its folder's, or at the root its own (nav.file_group: setup.py is tooling)."""
    return folder_group(posixpath.dirname(path)) if "/" in path else file_group(path, kind)


def pass_through(directory: str, children: Mapping[str, tuple[Sequence[str], Sequence[str]]]) -> bool:
    """A folder with no files of its own and one subfolder (`src/` holding `flask/`): its subfolder stands
    for it wherever folders are listed for orientation."""
    files, subdirs = children.get(directory, ((), ()))
    return not files and len(subdirs) == 1


def orientation_folders(children: Mapping[str, tuple[Sequence[str], Sequence[str]]],
                        importance: Mapping[str, float], file_rank: Mapping[str, float],
                        code_dirs: Iterable[str], *, limit: int = 10, per_group: int = 1) -> list[str]:
    """The folders a newcomer should know, for "Most important modules": pass-through folders collapsed
    into their child; the source packages first, ranked by their own files (a container such as `src/`
    holding one shim and two packages ranks below the packages), then at most `per_group` each of docs,
    tests and examples, ranked by their whole tree (its top folder first), each of these groups keeping a
    place however many source packages there are. Tooling, dot-folders and folders of the source group
    holding no code (`ext/` of logos) only when nothing else exists. `code_dirs`: folders with code below."""
    has_code = set(code_dirs)

    def group(d: str) -> Group:
        g = folder_group(d)
        return "tooling" if g == "source" and d not in has_code else g

    def weight(d: str) -> float:
        if group(d) == "source":
            return sum(file_rank.get(f, 0.0) for f in children[d][0])
        return importance.get(d, 0.0)

    folders = [d for d in children if d and not pass_through(d, children)]
    folders.sort(key=lambda d: (_GROUP_RANK[group(d)], -round(weight(d), 9), d))
    if any(group(d) != "tooling" for d in folders):
        folders = [d for d in folders if group(d) != "tooling"]
    others: list[str] = []
    for g in ("docs", "tests", "examples"):
        others += [d for d in folders if group(d) == g][:per_group]
    reserved = len({group(d) for d in others})  # one place for each of docs, tests, examples present
    source = [d for d in folders if group(d) not in ("docs", "tests", "examples")]
    source = source[:max(limit - reserved, 1)]
    return (source + others)[:limit]


def _is_source(path: str) -> bool:
    """A file of the project's own code: not under tests, docs, examples or tooling folders."""
    return "/" not in path or folder_group(posixpath.dirname(path)) == "source"


# a build's own code beside its build file, not the library's: sbt compiles `project/` (Dependencies.scala,
# plugins.sbt) into the build definition `build.sbt` uses
_BUILD_CODE = {"build.sbt": "project"}


def build_folders(root: Path) -> frozenset[str]:
    """The top-level folders that hold the build's code rather than the project's (_BUILD_CODE)."""
    return frozenset(folder for build, folder in _BUILD_CODE.items() if (root / build).is_file())


def source_in(build: frozenset[str]) -> Callable[[str], bool]:
    """_is_source, the build's folders (build_folders) left out."""
    return lambda path: _is_source(path) and path.split("/", 1)[0] not in build


def most_used(facts: Mapping[str, FileFacts], callers: Mapping[tuple[str, str], list[tuple[str, str]]],
              limit: int = MAX_ABSTRACTIONS, split: Sequence[SplitType] = (),
              source: Callable[[str], bool] = _is_source) -> list[Abstraction]:
    """Public symbols of the project's own code referenced from the most other code files (tests, examples
    and tooling neither count as users nor as candidates). A type declared in several files (`split`:
    type_parts.split_types) is one row, its main part's, used from where any of its parts is."""
    from generator.markup.docstrings import docstring_summary

    secondary = secondary_parts(split)
    parts_of = {(t.main.path, t.main.qualname): [(p.path, p.qualname) for p in t.others] for t in split}
    rows = []
    for path, f in facts.items():
        if f.file.kind != "code" or not source(path):
            continue
        for s in f.symbols:
            if not s.public or s.kind not in _ABSTRACT_KINDS or s.parent is not None:
                continue
            if (path, s.qualname) in secondary:
                continue
            parts = [(path, s.qualname), *parts_of.get((path, s.qualname), ())]
            own = {p for p, _ in parts}
            users = {p for key in parts for p, _ in callers.get(key, ()) if p not in own
                     and p in facts and facts[p].file.kind == "code"}
            if len(users) >= 2:
                rows.append(Abstraction(path, s.qualname, s.kind, len(users),
                                        docstring_summary(s.docstring, 160)))
    rows.sort(key=lambda a: (-a.used_from, a.kind != "class", a.path, a.qualname))
    return rows[:limit]


MIN_PACKAGE_NODES = 6  # a package diagram with fewer boxes (or no arrows) orients nobody: draw files instead
MAX_START = 5
_API_ROOTS = frozenset({"__init__.py", "index.js", "index.mjs", "index.cjs", "index.ts", "index.tsx",
                        "index.jsx", "lib.rs"})
_API_KINDS = frozenset({"class", "function", "interface", "struct", "trait", "enum", "type"})
MAX_API_FILES = 10
_LAUNCHER_LINES = 12  # an entry file this short (`__main__.py` calling cli.main) is read through what it runs


def public_api(files: Iterable[str], facts: Mapping[str, FileFacts], depends_on: Mapping[str, Iterable[str]],
               importance: Mapping[str, float], roots: int = 2) -> list[str]:
    """The public API of the `roots` most important top-level packages: the files defining the classes and
    functions their root module (`__init__.py`, `index.js`, `lib.rs`) re-exports by name (constants, module
    objects and version strings are not where reading starts), callers before what they call: the files
    leading (through imports) to more of the others first, then those giving users more code. None when
    they are more than MAX_API_FILES (pytest's root re-exports from 30 plugins: no small surface)."""
    source = set(files)
    found = [p for p in source if posixpath.basename(p) in _API_ROOTS]
    dirs = {posixpath.dirname(p) for p in found}

    def top(path: str) -> bool:
        d = posixpath.dirname(posixpath.dirname(path))
        while d:
            if d in dirs:
                return False
            d = posixpath.dirname(d)
        return True

    chosen = sorted((p for p in found if top(p)),
                    key=lambda p: (-importance.get(posixpath.dirname(p), 0.0), p))[:roots]
    api: list[str] = []
    for root in chosen:
        names = {n for imp in facts[root].imports for n in imp.names} if root in facts else set()
        for q in depends_on.get(root, ()):
            if q in source and q not in found and q not in api and q in facts and any(
                    s.public and s.parent is None and s.kind in _API_KINDS and s.name in names
                    for s in facts[q].symbols):
                api.append(q)
    if not api or len(api) > MAX_API_FILES:
        return []  # a root re-exporting from dozens of files has no small surface to start at
    members = set(api)
    imports = {p: {q for q in depends_on.get(p, ()) if q in members and q != p} for p in api}

    def reach(p: str) -> int:  # how many of the other API files p leads to, through imports
        seen, todo = {p}, [p]
        while todo:
            for q in imports[todo.pop()]:
                if q not in seen:
                    seen.add(q)
                    todo.append(q)
        return len(seen) - 1

    def size(p: str) -> int:  # lines of the classes and functions p gives the package's users
        return sum(s.end_line - s.start_line + 1 for s in facts[p].symbols
                   if s.public and s.parent is None and s.kind in _API_KINDS)

    return sorted(api, key=lambda p: (-reach(p), -size(p), p))


_README_CODE = re.compile(r"^ {0,3}(`{3,}|~{3,})[^\n]*\n(.*?)^ {0,3}\1[ \t]*$", re.M | re.S)
_PROMPT = re.compile(r"^[ \t]*(?:>>>|\.\.\.)[ \t]?(.*)$", re.M)
_RST_CODE = re.compile(r"(?:::|\.\. code(?:-block)?::[^\n]*)\n(?:[ \t]*\n)+((?:(?:[ \t]+[^\n]*)?\n)+)")
_FROM_IMPORT = re.compile(r"\bfrom[ \t]+([\w.]+)[ \t]+import[ \t]+\(?([\w, \t]+)")
_JS_IMPORT = re.compile(r"\b(?:import|const|let|var)\s*\{([^}]*)\}\s*(?:from|=\s*require\()")
_IMPORT_PATH = re.compile(r"""\bimport[ \t]+([\w.]+)|["']([\w@./-]+)["']""")
_QUALIFIED = re.compile(r"\b([A-Za-z_]\w*)(?:\.|::)([A-Za-z_]\w*)")
_RETURNS = re.compile(r"\)\s*(?:->|:)?\s*([^{=]*)$")
MAX_README_FILES = 3


def _readme_code(readme: str) -> str:
    """The code a README shows: fenced blocks, `>>>` sessions, reST literal and code blocks."""
    parts = [m.group(2) for m in _README_CODE.finditer(readme)]
    parts += [m.group(1) for m in _PROMPT.finditer(readme)]
    parts += [m.group(1) for m in _RST_CODE.finditer(readme)]
    return "\n".join(parts)


def _is_private_file(path: str) -> bool:
    """`_utils.py`, `_internal_utils.py`: a module its package keeps to itself (`__init__.py` is not)."""
    base = posixpath.basename(path)
    return base.startswith("_") and not base.startswith("__")


def readme_api(readme: str, facts: Mapping[str, FileFacts], code: Iterable[str]) -> list[str]:
    """The files defining what the README's code uses from the project, in the order it first uses them:
    names it imports (`from starlette.applications import Starlette`, `import { Command } from`) and names
    it reaches through a package (`requests.get`, `chi.NewRouter`, `middleware.Logger`), each a public
    top-level class or function of the project's own code; a function's file is followed by the file of
    the project type it returns (`func NewRouter() *Mux`: mux.go). What a user meets first, so where the
    reading starts."""
    text = _readme_code(readme)
    if not text:
        return []
    own = [p for p in code if p in facts and not _is_private_file(p)]
    defined: dict[str, list[tuple[str, Any]]] = {}
    for path in own:
        for s in facts[path].symbols:
            if s.public and s.parent is None and s.kind in _API_KINDS:
                defined.setdefault(s.name, []).append((path, s))
    # what may qualify a name: the packages and modules the README imports, and the project's folders
    imported = (m.group(1) or m.group(2) for m in _IMPORT_PATH.finditer(text))
    qualifiers = {seg for path in imported for seg in re.split(r"[./]", path)
                  if seg and not re.fullmatch(r"v\d+", seg)}
    qualifiers |= {seg for p in own for seg in posixpath.dirname(p).split("/") if seg}
    used: list[tuple[int, str, str]] = []  # (position, qualifier or module, name)
    for m in _FROM_IMPORT.finditer(text):
        used += [(m.start(), m.group(1), n.strip()) for n in m.group(2).split(",") if n.strip()]
    for m in _JS_IMPORT.finditer(text):
        used += [(m.start(), "", n.split(" as ")[0].strip()) for n in m.group(1).split(",") if n.strip()]
    for m in _QUALIFIED.finditer(text):
        if m.group(1) in qualifiers:
            used.append((m.start(), m.group(1), m.group(2)))
    out: list[str] = []

    def names_of(path: str) -> set[str]:  # the folders and the module a file is reached by
        return {*posixpath.dirname(path).split("/"), posixpath.splitext(posixpath.basename(path))[0]}

    def where(name: str, near: str) -> tuple[str, Any] | None:
        """The file defining `name`: the one `near` (a module path or qualifier) names, else the only one."""
        found = defined.get(name, [])
        parts = set(re.split(r"[./]", near)) - {""}
        close = [c for c in found if parts & names_of(c[0])]
        if close or len(found) == 1:
            return min(close or found, key=lambda c: (c[0].count("/"), c[0]))
        return None

    for _pos, near, name in sorted(used, key=lambda u: u[0]):
        hit = where(name, near)
        if hit is None:
            continue
        path, symbol = hit
        if path not in out:
            out.append(path)
        if symbol.kind == "function":
            returns = _RETURNS.search(symbol.signature)
            for word in re.findall(r"[A-Za-z_]\w*", returns.group(1) if returns else ""):
                made = where(word, posixpath.dirname(path))
                if made is not None and made[1].kind != "function" and made[0] not in out:
                    out.append(made[0])
    return out[:MAX_README_FILES]


def reading_order(*, api: Sequence[str], entries: Sequence[Entry], abstractions: Sequence[Abstraction],
                  ranked: Sequence[str], facts: Mapping[str, FileFacts],
                  depends_on: Mapping[str, Iterable[str]], limit: int = MAX_START,
                  readme: Sequence[str] = ()) -> list[str]:
    """Where a newcomer starts: the files of what the README's code uses (readme_api), then the public API
    (up to three files), then the entry points (a launcher of a few lines replaced by the files it runs:
    for a library, its console scripts come after its API), then the most-used abstractions, then the most
    important files; a package's private modules (`_utils.py`) only from the README, the API or the entry
    points (httpx's `_main.py`)."""
    entry_files: list[str] = []
    launchers: set[str] = set()
    for e in entries:
        f = facts.get(e.path)
        if f is not None and f.line_count and f.line_count <= _LAUNCHER_LINES and not e.qualname:
            launchers.add(e.path)
            entry_files += [q for q in depends_on.get(e.path, ())
                            if q in facts and facts[q].file.kind == "code"]
        else:
            entry_files.append(e.path)
    out: list[str] = []
    # a command line the package re-exports (httpx: `from ._main import main` for its console script) is
    # read as the entry point it is, after the library it drives: its print helpers are no place to start
    api = [p for p in api if p not in {e.path for e in entries}]
    first = [*readme, *api[:3], *entry_files[:2]]  # what the project says users start from, private or not
    for path in [*first, *(a.path for a in abstractions), *ranked]:
        if path not in out and path not in launchers and (path in first or not _is_private_file(path)):
            out.append(path)
    return out[:limit]


# a file named only for what it is (hiredis's `test.c`, cxxopts's `src/example.cpp`): a test or example
# program beside the sources, not part of them
_PROGRAM_NAMES = frozenset({"test", "tests", "example", "examples", "demo", "sample", "samples", "bench",
                            "benchmark", "benchmarks"})


def own_code(files: Iterable[str], facts: Mapping[str, FileFacts], build: frozenset[str] = frozenset()
             ) -> list[str]:
    """The project's own code files: not tests, docs, examples, tooling, root scripts like setup.py or the
    build's code (`build`: build_folders)."""
    return [p for p in files if p in facts and facts[p].file.kind == "code" and path_group(p) == "source"
            and posixpath.basename(p).split(".", 1)[0].lower() not in _PROGRAM_NAMES
            and p.split("/", 1)[0] not in build]


def overview_diagram(*, modules: Mapping[str, str], files: Mapping[str, str], code: Sequence[str],
                     depends_on: Mapping[str, Iterable[str]], importance: Mapping[str, float],
                     from_page: str, build: frozenset[str] = frozenset()) -> Graph | None:
    """The architecture diagram of the home and Architecture pages: the source packages and their imports,
    or, when that is a handful of boxes (fewer than MIN_PACKAGE_NODES) or has no arrow, the main package
    file by file (`code`: own_code; `files`: file page ids). Without either, the packages of docs (never
    of tests, examples, benchmarks or tooling, the build's code among it: `build`, build_folders)."""
    # a folder of the source group holding no code (a `notes/` of release notes, the build's `project/`)
    # is no package
    holds_code = set()
    for p in code:
        d = posixpath.dirname(p)
        while d and d not in holds_code:
            holds_code.add(d)
            d = posixpath.dirname(d)

    def source_package(d: str) -> bool:
        return folder_group(d) == "source" and d in holds_code

    diagram = architecture(modules, depends_on, importance, posixpath.dirname, from_page, keep=source_package)
    if diagram is None or len(diagram.nodes) < MIN_PACKAGE_NODES or not diagram.edges:
        by_file = file_architecture(code, depends_on, files, from_page)
        if by_file is not None:
            return by_file
    if diagram is None:
        diagram = architecture(modules, depends_on, importance, posixpath.dirname, from_page,
                               keep=lambda d: folder_group(d) not in ("tooling", "tests", "examples")
                               and d.split("/", 1)[0] not in build
                               # with code elsewhere, a source-named folder of none is no package either
                               and (source_package(d) or folder_group(d) != "source" or not holds_code))
    return diagram


_NAME_PARTS = re.compile(r"[.\\:/]+")


def _internal_package(name: str) -> bool:
    return any(part.lower() in ("internal", "impl") for part in _NAME_PARTS.split(name)[:-1])


def _named_after_package(name: str, root: Sequence[str] | None = None) -> bool:
    """Whether a name's last part is its package's (`org.jsoup.Jsoup`); with `root`, the parts every name of
    the library starts with, that package is the root (`starlette.applications.Starlette`, not
    `starlette.testclient.TestClient`, named after its module)."""
    parts = [p.lower().replace("-", "").replace("_", "") for p in _NAME_PARTS.split(name) if p]
    among = parts[:-1] if root is None else [p.lower().replace("-", "").replace("_", "") for p in root]
    return len(parts) > 1 and parts[-1] in among


def _common_prefix(names: Iterable[list[str]]) -> list[str]:
    """The package parts all the names share (a package's default export, a bare name, left aside)."""
    prefix: list[str] | None = None
    for parts in names:
        package = parts[:-1]
        if not package:
            continue
        if prefix is None:
            prefix = package
            continue
        n = 0
        while n < min(len(prefix), len(package)) and prefix[n] == package[n]:
            n += 1
        prefix = prefix[:n]
    return prefix or []


def front_door_first(exports: Sequence[Export], rank: Mapping[tuple[str, str], float]) -> list[Export]:
    """The public API in reading order: the root package's type named after it (`org.jsoup.Jsoup`,
    `com.squareup.moshi.Moshi`), the library's front door, first; then the root package's names (`Serilog.Log`
    before `Serilog.Core.ILogEventSink`); each group by its rank among the library's own callers (`rank`:
    the graph's symbol rank), a name the repository defines before one it only passes on."""
    top: dict[str, int] = {}  # the root package's depth, per first segment (`com`, `Serilog`): a
    # repository in several languages has a root in each
    by_first: dict[str, list[list[str]]] = {}
    for e in exports:
        parts = _NAME_PARTS.split(e.name)
        top[parts[0]] = min(top.get(parts[0], len(parts)), len(parts))
        by_first.setdefault(parts[0], []).append(parts)
    # the package all of a root's names are in (`org.jsoup`, `starlette`): its namesake is the front door
    roots = {first: _common_prefix(names) for first, names in by_first.items()}

    def order(e: Export) -> tuple[bool, bool, bool, float, str]:
        parts = _NAME_PARTS.split(e.name)
        deeper = len(parts) > top[parts[0]]  # `Monolog\Handler\Handler` names a sub-package's
        named = _named_after_package(e.name, roots[parts[0]] or None)
        return (deeper or not named, deeper,
                not e.qualname and e.kind != "module", -rank.get((e.path, e.qualname), 0.0), e.name)

    return sorted(exports, key=order)


# a type users catch rather than use: `BadParameterValue : UsageError`, C++'s `spdlog_ex : std::exception`
_ERROR_NAME = re.compile(r"(?:Error|Exception|_error|_exception|Throwable)$")
_ERROR_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "type", "object", "record"})
_ASIDE_KINDS = frozenset({"type", "constant"})  # aliases (a callback's typedef, `filename_t`) and constants


def error_types(facts: Mapping[str, FileFacts]) -> frozenset[tuple[str, str]]:
    """The (path, qualname) of the types that are exceptions or errors: named so (`...Error`,
    `...Exception`), or subclassing one, through the repository's own classes (`class Error : Exception`,
    then `class MissingValueError : Error` or `class BadValue : UsageError`)."""
    types = [(p, s) for p, f in facts.items() for s in f.symbols if s.kind in _ERROR_KINDS]
    # the names its head writes after its own (`: public std::exception`, `extends Error`, `< StandardError`),
    # a Kotlin or Scala constructor's parameters left out; the parser's base references besides
    bases = {(p, s.qualname): _written_after(s.signature, s.name) for p, s in types}
    for p, f in facts.items():
        for r in f.references:
            if r.kind == "base" and r.scope is not None:
                bases.setdefault((p, r.scope), set()).add(_short_name(r.name))
    names = {s.name for _, s in types if _ERROR_NAME.search(s.name)}
    # the bases named outside the repository (`std::exception`, `RuntimeException`) by their name alone
    grew = True
    while grew:
        grew = False
        for p, s in types:
            if s.name not in names and any(b in names or _ERROR_NAME.search(b) or b in ("exception", "error")
                                           for b in bases[(p, s.qualname)]):
                names.add(s.name)
                grew = True
    return frozenset((p, s.qualname) for p, s in types if s.name in names)


_PARAMETERS = re.compile(r"\([^()]*:[^()]*\)")  # `(message: String)`, not Python's `(Base)`
_WORD = re.compile(r"[\w$]+")


def _written_after(signature: str, name: str) -> set[str]:
    at = re.search(rf"(?<![\w$]){re.escape(name)}(?![\w$])", signature)
    return set(_WORD.findall(_PARAMETERS.sub(" ", signature[at.end():]))) if at else set()


def reader_order(api: Sequence[ApiName], facts: Mapping[str, FileFacts], readme: str = "") -> list[ApiName]:
    """The public API as a reader expects it: the main type the home page names (main_name) first, then the
    ordinary types and functions in their order, then the exceptions and errors (error_types), then type
    aliases and constants; a C typedef naming a struct is an ordinary type. Rank in the call graph alone
    puts what the library's own code uses everywhere first: the exception it throws, the record type its
    handlers pass on, the alias its signatures spell, none of them where a reader starts."""
    records = _struct_aliases(api, facts)
    errors = error_types(facts)

    def group(a: ApiName) -> int:
        if (a.path, a.qualname) in errors:
            return 1
        return 2 if a.kind in _ASIDE_KINDS and (a.path, a.qualname) not in records else 0

    ordered = sorted(api, key=group)  # stable: each group keeps its front-door-then-rank order
    main = main_name(ordered, readme, records)
    return ordered if main is None else [main, *(a for a in ordered if a is not main)]


def api_names(facts: Mapping[str, FileFacts], graph: Any, importance: Mapping[str, float],
              manifests: Mapping[str, str], read: Reader, *,
              split: Sequence[SplitType] = (), readme: str = "",
              build: frozenset[str] = frozenset()) -> list[ApiName]:
    """The public API (exports.package_exports) of the project's own code in reading order (reader_order:
    the main type first; within a group the front door, then by the symbol's rank in the call graph, a name
    the repository defines before one it only passes on), each with its docstring summary. A type declared
    in several files (`split`) is named by its main part; `readme`: the root README, whose code names the
    main type; `build`: the build's folders (build_folders), no API."""
    from generator.markup.docstrings import docstring_summary

    # entry modules' exports (Python, JS/TS, Go, Rust, Java), then the conventions of Kotlin, C#, PHP, Ruby, C
    source = source_in(build)
    found = [*package_exports(facts, read, manifests, source=source, importance=importance),
             *conventional_exports(facts, read, source)]
    secondary = secondary_parts(split)
    found = [e for e in found if (e.path, e.qualname) not in secondary]
    # a package named `internal` (`org.jsoup.internal`, `Foo\\Internal`) is the library's own business
    exports = [e for e in _one_per_name(found) if not _internal_package(e.name)]
    rank = graph.symbol_rank
    paths = {e.path for e in exports}
    symbols = {(p, s.qualname): s for p in paths if p in facts for s in facts[p].symbols}

    def documented(s: Any) -> Any:  # an overload's docstring is on its implementation (`name~3`)
        return next((o for o in facts[s.path].symbols if o.name == s.name and o.parent == s.parent
                     and o.docstring), s) if not s.docstring and s.path in facts else s

    out = []
    for e in front_door_first(exports, rank)[:MAX_API_NAMES]:
        s = symbols.get((e.path, e.qualname))
        doc = documented(s).docstring if s is not None else (facts[e.path].docstring if e.kind == "module" and
                                                 e.path in facts else "")
        out.append(ApiName(e.name, e.path, e.qualname, e.kind, docstring_summary(doc, 160) if doc else ""))
    return reader_order(out, facts, readme)


def orientation(*, modules: Mapping[str, str], files: Mapping[str, str], facts: Mapping[str, FileFacts],
                graph: Any, importance: Mapping[str, float], manifests: Mapping[str, str],
                readme: str, sources: Mapping[str, str] | None = None, read: Reader | None = None,
                build: frozenset[str] = frozenset()) -> Orientation:
    """`sources`: the texts of the files that may define command-line groups (cli_texts); `read`: a
    repository file's text (None for a path the scan did not accept), for the package's public API;
    `build`: the folders of the build's own code (build_folders), never the project's."""
    entries = find_entry_points(manifests, facts, sources=sources)
    split = split_types(facts.values())  # C# partial types, Kotlin expect/actual: each type named once
    api = tuple(api_names(facts, graph, importance, manifests, read, split=split,
                          readme=readme, build=build)) if read is not None else ()
    shown = {(a.path, a.qualname) for a in api[:MAX_API_SHOWN]}
    # a name the Public API section already shows is not listed again among the abstractions
    used = most_used(facts, graph.callers, MAX_ABSTRACTIONS + len(shown), split, source_in(build))
    abstractions = [a for a in used if (a.path, a.qualname) not in shown][:MAX_ABSTRACTIONS]

    code = own_code(files, facts, build)
    diagram = overview_diagram(modules=modules, files=files, code=code, depends_on=graph.depends_on,
                               importance=importance, from_page="index.md", build=build)
    start = reading_order(api=public_api(code, facts, graph.depends_on, importance), entries=entries,
                          abstractions=used[:MAX_ABSTRACTIONS],
                          ranked=graph.ranked_files(code), facts=facts, depends_on=graph.depends_on,
                          readme=readme_api(readme, facts, code))
    return Orientation(entries=tuple(entries), abstractions=tuple(abstractions), diagram=diagram,
                       start_reading=tuple(start), readme_intro=readme_intro(readme), api=api,
                       main=main_name(api, readme, _struct_aliases(api, facts)))
