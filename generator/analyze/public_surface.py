"""The public API of the ecosystems whose packages export by convention rather than from one entry module:
Kotlin, Scala, C#, PHP, Ruby and C/C++ (exports.py follows Python's, JavaScript's, Go's, Rust's entry modules
and Java's public classes).

- Kotlin and Scala: the top-level declarations of the main source sets (`src/main/`, `src/commonMain/`, ...;
  every source file when there are none, sbt's `project/` build left out) that are not `private`,
  `protected` or `internal`, named by their `package` (Scala's chained package clauses joined).
- C#: the `public` top-level types of the non-test projects, named by their namespace.
- PHP: the classes, interfaces, traits and enums under composer.json's PSR-4/PSR-0 autoload folders (none
  marked `@internal`), named by their namespace.
- Ruby: the modules and classes under `lib/` (what a gem's require path loads), and their nested ones.
- C and C++: the types and functions declared in the public headers (`include/`; else the headers at the
  repository's root), namespaces included in the name.

Pure: facts and the texts of the few files it reads (through `read`) in, exports out; `source` says whether
a path is the project's own code (not tests, examples, benchmarks, tooling).
"""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable, Mapping

from generator.analyze.exports import Export, Reader
from generator.analyze.facts import FileFacts, Symbol

_TYPE_KINDS = frozenset({"class", "interface", "struct", "trait", "enum", "type", "record", "object",
                         "union", "module"})
_API_KINDS = _TYPE_KINDS | {"function"}
_KOTLIN_MAIN = re.compile(r"(?:^|/)src/(?:main|\w+Main)/")
_JVM_PACKAGE = re.compile(r"^\s*package\s+([\w.]+)", re.M)
_SCALA_PACKAGE = re.compile(r"^[ \t]*package[ \t]+(?!object\b)([\w.]+)[ \t]*;?[ \t]*$", re.M)
_SBT_BUILD = re.compile(r"^project/")  # sbt's build definition, code of the build and not of the project
_CS_NAMESPACE = re.compile(r"^\s*namespace\s+([\w.]+)", re.M)
_PHP_NAMESPACE = re.compile(r"^\s*namespace\s+([\w\\]+)\s*;", re.M)
_HIDDEN_MODIFIER = re.compile(r"\b(?:private|internal|protected)\b")
_HEADERS = (".h", ".hh", ".hpp", ".hxx")


def _top(f: FileFacts, kinds: frozenset[str]) -> list[Symbol]:
    """Top-level declarations: at the file's top or directly in a namespace block (C#'s `namespace X { }`)."""
    namespaces = {s.qualname for s in f.symbols if s.kind == "namespace"}
    return [s for s in f.symbols if (s.parent is None or s.parent in namespaces) and s.public
            and s.kind in kinds and "~" not in s.qualname]


def _jvm_exports(extension: str, files: Mapping[str, FileFacts], read: Reader, source: Callable[[str], bool],
                 package: Callable[[str], str]) -> list[Export]:
    """The top-level declarations of a JVM language's main source sets (`src/main/`, `src/jvmMain/`; every
    source file when there are none: a Mill module's `src/`) not hidden by a modifier."""
    ours = [p for p, f in files.items() if p.endswith(extension) and f.file.kind == "code" and source(p)]
    main = [p for p in ours if _KOTLIN_MAIN.search(p)] or [p for p in ours if not _SBT_BUILD.match(p)]
    out = []
    for p in sorted(main):
        # the modifiers before the declared name (`public class Moshi private constructor(...)` is public,
        # `case class EscapeAttr private[fansi](...)` too)
        symbols = [s for s in _top(files[p], _API_KINDS) if not _HIDDEN_MODIFIER.search(
            s.signature.split(s.name, 1)[0])]
        if symbols:
            prefix = package(read(p) or "")
            out += [Export(f"{prefix}.{s.name}" if prefix else s.name, p, s.qualname, s.kind)
                    for s in symbols]
    return out


def _kotlin_package(text: str) -> str:
    m = _JVM_PACKAGE.search(text)
    return m.group(1) if m else ""


def _scala_package(text: str) -> str:
    """Scala's chained package clauses (`package com.x` then `package y`: `com.x.y`), not a `package
    object` or a block-scoped `package p { }`."""
    return ".".join(m.group(1) for m in _SCALA_PACKAGE.finditer(text[:4000]))


def kotlin_exports(files: Mapping[str, FileFacts], read: Reader, source: Callable[[str], bool]
                   ) -> list[Export]:
    return _jvm_exports(".kt", files, read, source, _kotlin_package)


def scala_exports(files: Mapping[str, FileFacts], read: Reader, source: Callable[[str], bool]
                  ) -> list[Export]:
    return _jvm_exports(".scala", files, read, source, _scala_package)


def csharp_exports(files: Mapping[str, FileFacts], read: Reader, source: Callable[[str], bool]
                   ) -> list[Export]:
    out = []
    for p in sorted(files):
        f = files[p]
        if not p.endswith(".cs") or f.file.kind != "code" or not source(p):
            continue
        types = [s for s in _top(f, _TYPE_KINDS) if re.search(r"\bpublic\b", s.signature)]
        if types:
            m = _CS_NAMESPACE.search(read(p) or "")
            namespace = m.group(1) + "." if m else ""
            out += [Export(namespace + s.name, p, s.qualname, s.kind) for s in types]
    return out


def _autoload_folders(composer: str) -> list[str]:
    try:
        data = json.loads(composer)
    except ValueError:
        return []
    autoload = data.get("autoload") if isinstance(data, dict) else None
    folders: list[str] = []
    for key in ("psr-4", "psr-0"):
        table = autoload.get(key) if isinstance(autoload, dict) else None
        for value in (table or {}).values() if isinstance(table, dict) else ():
            for folder in value if isinstance(value, list) else [value]:
                if isinstance(folder, str):
                    folders.append(folder.strip("/").removeprefix("./"))
    return folders


def php_exports(files: Mapping[str, FileFacts], read: Reader, source: Callable[[str], bool]) -> list[Export]:
    folders = _autoload_folders(read("composer.json") or "")
    out = []
    for p in sorted(files):
        f = files[p]
        if not p.endswith(".php") or f.file.kind != "code" or not source(p) or not any(
                folder == "" or p.startswith(folder + "/") for folder in folders):
            continue
        types = [s for s in _top(f, _TYPE_KINDS) if "@internal" not in s.docstring]
        if types:
            m = _PHP_NAMESPACE.search(read(p) or "")
            namespace = m.group(1) + "\\" if m else ""
            out += [Export(namespace + s.name, p, s.qualname, s.kind) for s in types]
    return out


def ruby_exports(files: Mapping[str, FileFacts], source: Callable[[str], bool]) -> list[Export]:
    out = []
    for p in sorted(files):
        f = files[p]
        if not (p.startswith("lib/") and p.endswith(".rb")) or f.file.kind != "code" or not source(p):
            continue
        for s in f.symbols:
            # a gem's modules and classes, nested ones too (`HTTParty::Request`); not their methods
            if s.public and s.kind in ("module", "class") and "~" not in s.qualname:
                out.append(Export(s.qualname.replace(".", "::"), p, s.qualname, s.kind))
    return out


# C++'s own namespace: what a header declares in it (`std::begin` for its type, a `std::hash` specialisation)
# extends the standard library for the library's types; it is not a name the library exports
_STANDARD_NAMESPACES = ("std",)


def c_exports(files: Mapping[str, FileFacts], source: Callable[[str], bool]) -> list[Export]:
    headers = [p for p, f in files.items() if p.endswith(_HEADERS) and f.file.kind == "code" and source(p)]
    public = [p for p in headers if p.startswith("include/") or "/include/" in p] or [
        p for p in headers if "/" not in p]
    out = []
    for p in sorted(public):
        base = posixpath.basename(p)
        if re.search(r"(?:[_-](?:private|internal|inl|impl))\.h\w*$", base):
            continue  # an implementation header a public one includes
        f = files[p]
        namespaces = {s.qualname for s in f.symbols if s.kind == "namespace"}
        for s in f.symbols:
            if not s.public or s.kind not in _API_KINDS or "~" in s.qualname:
                continue
            if s.qualname.split(".", 1)[0] in _STANDARD_NAMESPACES:
                continue
            if s.parent is not None and s.parent not in namespaces:
                continue
            out.append(Export(s.qualname.replace(".", "::"), p, s.qualname, s.kind))
    return out


def conventional_exports(files: Mapping[str, FileFacts], read: Reader, source: Callable[[str], bool]
                         ) -> list[Export]:
    """The exports of every ecosystem above the repository has code in."""
    return [*kotlin_exports(files, read, source), *scala_exports(files, read, source),
            *csharp_exports(files, read, source),
            *php_exports(files, read, source), *ruby_exports(files, source), *c_exports(files, source)]
