"""A package's public API as its users import it: the names its entry module exports, each followed through
re-exports to the file and symbol that define it.

Python: a top-level package's `__init__.py`, its `__all__` when it has one, else the names it imports from its
own modules (`from .app import Flask as Flask`) and defines (when it offers nothing, its public modules'
classes and functions); an import wins over a definition of the same name (`try: from .cli import main` /
`except ImportError: def main(): ...`: the real function, not the fallback). JavaScript/TypeScript: the file
package.json's `types`/`module`/`main`/`exports` names (a built `dist/index.js` mapped back to
`src/index.ts`), else `index.ts`/`index.js`, with `export { X } from`, `export * from` and `export class X`,
and CommonJS's `module.exports = ...` and `exports.X = ...`. Go: the exported names of the package at
go.mod's folder. Rust: lib.rs's `pub use`, `pub mod` and `pub` items. Java: the public classes of each
package.

Pure: facts, the texts of the few files it reads (through `read`) and manifests in, exports out. Repository
text is untrusted: only parsed (ast, bounded regexes), never run.
"""

from __future__ import annotations

import ast
import json
import logging
import posixpath
import re
import tomllib
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

from generator.analyze.facts import FileFacts, Symbol

log = logging.getLogger(__name__)

Reader = Callable[[str], "str | None"]
MAX_HOPS = 6  # re-export chains followed at most this deep (a cycle of `export *` ends here too)
_KINDS = frozenset({"class", "function", "interface", "struct", "trait", "enum", "type", "constant",
                    "variable", "module", "method"})


@dataclass(frozen=True)
class Export:
    name: str  # as users write it: "flask.Flask", "chi.NewRouter", "reqwest::Client", "com.x.Foo", "ky"
    path: str = ""  # the file defining it ("" when it was not found in the repository)
    qualname: str = ""  # the symbol there ("" for a module, or when not found)
    kind: str = ""


def _top_level(f: FileFacts, name: str) -> Symbol | None:
    return next((s for s in f.symbols if s.parent is None and s.name == name), None)


# ------------------------------------------------------------------------------------------------ Python


def _py_module_file(base: str, dotted: str, files: Mapping[str, FileFacts]) -> str | None:
    stem = "/".join(p for p in [base, *dotted.split(".")] if p)
    for candidate in (stem + ".py", stem + "/__init__.py", stem + ".pyi", stem + "/__init__.pyi"):
        if candidate in files:
            return candidate
    return None


def _package_root(init: str, files: Mapping[str, FileFacts]) -> tuple[str, str]:
    """`src/flask/__init__.py` -> ("src", "flask"): the folder the package is imported from, and its name."""
    d = posixpath.dirname(init)
    parts: list[str] = []
    while d and (d + "/__init__.py" in files or d + "/__init__.pyi" in files):
        parts.insert(0, posixpath.basename(d))
        d = posixpath.dirname(d)
    return d, ".".join(parts)


def python_source(importer: str, module: str, files: Mapping[str, FileFacts]) -> str | None:
    """The repository file a Python import names (`.cli` from `src/pkg/__init__.py`; `pkg.cli`), or None."""
    if module.startswith("."):
        dots = len(module) - len(module.lstrip("."))
        base = posixpath.dirname(importer)
        for _ in range(dots - 1):
            base = posixpath.dirname(base)
        return _py_module_file(base, module[dots:], files)
    root, _package = _package_root(importer, files)
    return _py_module_file(root, module, files)


def follow_python(path: str, name: str, files: Mapping[str, FileFacts], hops: int = MAX_HOPS
                  ) -> tuple[str, Symbol | None, bool]:
    """Where `name`, as module `path` offers it, is defined: (the file, its symbol there or None, whether
    it is a submodule), through the file's imports (`from .x import name`, also under an alias) to the
    file that defines it. An import wins over a definition in the same file: the definition is then a
    fallback (`try: from .cli import main` / `except ImportError: def main(): ...`)."""
    f = files.get(path)
    if f is None:
        return path, None, False
    reached: tuple[str, Symbol | None, bool] | None = None  # a file it comes from, the symbol not found
    for imp in f.imports if hops > 0 else ():
        for original in imp.names:
            if original == "*":  # `from .models import *`: the name, if that module defines it
                source = python_source(path, imp.module, files)
                found = follow_python(source, name, files, hops - 1) if source not in (None, path) else None
                if found is not None and found[1] is not None and not name.startswith("_"):
                    return found
                continue
            if dict(imp.aliases).get(original, original) != name:
                continue
            source = python_source(path, imp.module, files)
            if source is not None and source != path:
                found = follow_python(source, original, files, hops - 1)
                if found[1] is not None or found[2]:
                    return found
                reached = reached or found
            joined = imp.module + ("" if imp.module.endswith(".") else ".") + original
            sub = python_source(path, joined, files)
            if sub is not None and sub != path:  # `from . import json`: a submodule
                return sub, None, True
    own = _top_level(f, name)
    if own is None and reached is not None:
        return reached
    return path, own, False


def _assigned_all(tree: ast.Module) -> list[str] | None:
    names: list[str] | None = None
    for node in _statements(tree.body):
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            targets = [node.target]
        if not any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            continue
        value = getattr(node, "value", None)
        if isinstance(value, (ast.List, ast.Tuple)):
            listed = [e.value for e in value.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
            names = (names or []) + listed if isinstance(node, ast.AugAssign) else listed
    return names


def _statements(body: Iterable[ast.stmt]) -> Iterable[ast.stmt]:
    """Module-level statements, those inside `if`/`try` blocks included (not inside functions or classes)."""
    for node in body:
        yield node
        if isinstance(node, ast.If):
            yield from _statements(node.body)
            yield from _statements(node.orelse)
        elif isinstance(node, ast.Try):
            for block in (node.body, node.orelse, node.finalbody, *(h.body for h in node.handlers)):
                yield from _statements(block)


def python_exports(init: str, text: str, files: Mapping[str, FileFacts]) -> list[Export]:
    """The names a Python package's `__init__.py` offers its users, in the order it states them."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        log.info("%s: not read for its exports (%s)", init, type(exc).__name__)
        return []
    _root, package = _package_root(init, files)
    listed = _assigned_all(tree)
    names: list[str] = []
    if listed is None:
        for node in _statements(tree.body):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").split(".")[0]
                                                     == package.split(".")[0]):
                names += [a.asname or a.name for a in node.names if a.name != "*"]
                if any(a.name == "*" for a in node.names):
                    source = python_source(init, "." * node.level + (node.module or ""), files)
                    if source is not None:
                        names += [s.name for s in files[source].symbols if s.parent is None and s.public
                                  and s.kind in _KINDS]
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.append(node.name)
        names = [n for n in names if not n.startswith("_")]
    else:
        names = listed
    out = []
    for name in dict.fromkeys(names):
        path, symbol, module = follow_python(init, name, files)
        kind = symbol.kind if symbol is not None else ("module" if module else "")
        found = symbol is not None or path != init
        out.append(Export(f"{package}.{name}", path if found else "", symbol.qualname if symbol else "",
                          kind))
    return out


_MODULE_API_KINDS = frozenset({"class", "function"})


def python_module_exports(init: str, files: Mapping[str, FileFacts], read: Reader,
                          source: Callable[[str], bool]) -> list[Export]:
    """A package whose `__init__.py` offers nothing (`starlette`: only `__version__`) is used through its
    public modules (`from starlette.applications import Starlette`): their classes and functions (those of
    a module's `__all__` when it has one), every module whose path has no `_`-prefixed part."""
    _root, package = _package_root(init, files)
    folder = posixpath.dirname(init)
    out = []
    for p in sorted(files):
        if not p.startswith(folder + "/") or not p.endswith(".py") or not source(p) \
                or files[p].file.kind != "code":
            continue
        parts = p[len(folder) + 1:].removesuffix(".py").split("/")
        if parts[-1] == "__init__":
            parts.pop()
        if not parts or any(part.startswith("_") for part in parts):
            continue
        try:
            listed = _assigned_all(ast.parse(read(p) or ""))
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            listed = None
        module = ".".join([package, *parts])
        out += [Export(f"{module}.{s.name}", p, s.qualname, s.kind) for s in files[p].symbols
                if s.parent is None and s.public and s.kind in _MODULE_API_KINDS
                and (s.name in listed if listed is not None else not s.name.startswith("_"))]
    return out


# ----------------------------------------------------------------------------------- JavaScript, TypeScript

_JS_EXTENSIONS = (".ts", ".tsx", ".mts", ".cts", ".js", ".mjs", ".cjs", ".jsx")
_JS_FROM = re.compile(r"""\bexport\s+(?:type\s+)?\{([^{}]{0,4000})\}\s*from\s*["']([^"'\n]{1,300})["']""")
_JS_STAR = re.compile(r"""\bexport\s+(?:type\s+)?\*\s*(?:as\s+([\w$]+)\s+)?from\s*["']([^"'\n]{1,300})["']""")
_JS_LOCAL = re.compile(r"""\bexport\s+(?:type\s+)?\{([^{}]{0,4000})\}(?!\s*from)""")
_JS_DECLARED = re.compile(r"\bexport\s+(?:declare\s+)?(default\s+)?(?:abstract\s+)?(?:async\s+)?"
                          r"(class|function\*?|const|let|var|interface|type|enum|namespace)\s+([\w$]+)")
# `export const create = (<T>(init) => ...`, `= async (x) =>`, `= function`: a function held by a constant
_JS_ARROW = re.compile(r"\s*(?::[^=;\n]{0,200})?=\s*(?:function\b|async\b|[(<]|[\w$]+\s*=>)")
_JS_IMPORT = re.compile(r"""\bimport\s+(?:type\s+)?\{([^{}]{0,4000})\}\s*from\s*["']([^"'\n]{1,300})["']""")
_JS_DEFAULT_IMPORT = re.compile(r"""\bimport\s+([\w$]+)\s+from\s*["']([^"'\n]{1,300})["']""")
# CommonJS: `var X = require('./x')` (or `require('./x').Y`), `const { A, B: C } = require('./x')`
_CJS_REQUIRE = re.compile(r"""\b(?:var|let|const)\s+([\w$]+|\{[^{}]{0,2000}\})\s*=\s*"""
                          r"""require\(\s*["']([^"'\n]{1,300})["']\s*\)(?:\.([\w$]+))?""")
# `module.exports = X`, `exports = module.exports = X`, `module.exports = require('./x')`, `= { ... }`
_CJS_WHOLE = re.compile(r"""^[ \t]*(?:exports\s*=\s*)?module\.exports\s*=\s*(?:exports\s*=\s*)?"""
                        r"""(?:require\(\s*["']([^"'\n]{1,300})["']\s*\)|([\w$]+)\s*;?[ \t]*$"""
                        r"""|\{([^{}]{0,4000})\})""", re.M)
# `exports.X = ...`, `module.exports.X = ...` at a line's start (not `exports.x` read inside a function)
_CJS_NAMED = re.compile(r"""^(?:module\.)?exports\.([\w$]+)\s*=(?!=)\s*(?:"""
                        r"""require\(\s*["']([^"'\n]{1,300})["']\s*\)"""
                        r"""|([\w$]+)\s*(?:[;\n]|$)|(function\b|class\b|async\b|\())?""", re.M)


def _js_file(base: str, spec: str, files: Mapping[str, FileFacts]) -> str | None:
    if not spec.startswith("."):
        return None
    stem = posixpath.normpath(posixpath.join(base, spec)).removeprefix("./")
    if stem.startswith("../"):
        return None
    bare = re.sub(r"\.(?:d\.ts|[mc]?js|jsx)$", "", stem)
    candidates = (stem, *(bare + e for e in _JS_EXTENSIONS), *(f"{stem}/index{e}" for e in _JS_EXTENSIONS))
    for candidate in candidates:
        if candidate in files:
            return candidate
    return None


def _pairs(listed: str) -> list[tuple[str, str]]:
    """`A, B as C, type D` -> [(A, A), (B, C), (D, D)]: (the name where it comes from, the name exported)."""
    out = []
    for item in listed.split(","):
        words = item.replace("type ", " ").split()
        if not words:
            continue
        if len(words) >= 3 and words[1] == "as":
            out.append((words[0], words[2]))
        else:
            out.append((words[0], words[0]))
    return out


JsExports = dict[str, tuple[str, str, str]]


def js_exports_of(path: str, files: Mapping[str, FileFacts], read: Reader, hops: int = MAX_HOPS,
                  memo: dict[str, JsExports] | None = None) -> JsExports:
    """name exported -> (defining file, qualname, kind) for one JS/TS module, its re-exports followed. Each
    module is read once (`memo`): `export *` between many modules, or round a cycle, stays linear."""
    memo = {} if memo is None else memo
    if path in memo:
        return memo[path]  # a module in progress (a cycle) gives what it has so far
    f = files.get(path)
    text = read(path) if f is not None else None
    if f is None or text is None or hops <= 0:
        return {}
    base = posixpath.dirname(path)
    out: JsExports = {}
    memo[path] = out

    def defined(name: str) -> tuple[str, str, str]:
        s = _top_level(f, name)
        return (path, s.qualname, s.kind) if s is not None else (path, "", "")

    for m in _JS_DECLARED.finditer(text):
        kind = {"const": "constant", "let": "variable", "var": "variable", "namespace": "module"}.get(
            m.group(2), m.group(2).rstrip("*"))
        hit = defined(m.group(3))
        statement = text[m.end():m.end() + 300].split(";", 1)[0]  # `=>` of this statement, not the next
        if kind == "constant" and _JS_ARROW.match(text, m.end()) and (
                "=>" in statement or "function" in statement[:40]):
            kind = "function"
        out["default" if m.group(1) else m.group(3)] = hit if hit[1] else (path, "", kind)
    for m in _JS_STAR.finditer(text):
        source = _js_file(base, m.group(2), files)
        if source is None:
            continue
        if m.group(1):
            out[m.group(1)] = (source, "", "module")
        else:
            for name, where in js_exports_of(source, files, read, hops - 1, memo).items():
                if name != "default":
                    out.setdefault(name, where)
    imported: dict[str, tuple[str, str]] = {}  # local name -> (file, name there)
    for m in _JS_IMPORT.finditer(text):
        source = _js_file(base, m.group(2), files)
        if source is not None:
            imported.update({local: (source, original) for original, local in _pairs(m.group(1))})
    for m in _JS_DEFAULT_IMPORT.finditer(text):
        source = _js_file(base, m.group(2), files)
        if source is not None:
            imported[m.group(1)] = (source, "default")
    if "exports" in text:
        _commonjs(text, path, files=files, read=read, hops=hops, memo=memo, out=out, imported=imported,
                  defined=defined)
    for m in _JS_FROM.finditer(text):
        source = _js_file(base, m.group(2), files)
        for original, shown in _pairs(m.group(1)):
            theirs = js_exports_of(source, files, read, hops - 1, memo) if source else {}
            out[shown] = theirs.get(original) or (source or "", "", "")
    for m in _JS_LOCAL.finditer(text):
        for original, shown in _pairs(m.group(1)):
            if original in imported:
                source, name = imported[original]
                out[shown] = js_exports_of(source, files, read, hops - 1, memo).get(name) or (source, "", "")
            else:
                out[shown] = defined(original)
    return out


def _commonjs(text: str, path: str, *, files: Mapping[str, FileFacts], read: Reader, hops: int,
              memo: dict[str, JsExports], out: JsExports, imported: dict[str, tuple[str, str]],
              defined: Callable[[str], tuple[str, str, str]]) -> None:
    """A CommonJS module's exports into `out`: what `module.exports` is set to ("default"; all of a
    required module's, or an object literal's names) and each `exports.X = ...` (Node's modules)."""
    base = posixpath.dirname(path)
    for m in _CJS_REQUIRE.finditer(text):
        source = _js_file(base, m.group(2), files) or ""  # "": a dependency's, not the repository's
        if m.group(1).startswith("{"):
            imported.update({local: (source, original) for original, local in
                             _pairs(m.group(1).strip("{}").replace(":", " as "))})
        else:
            imported[m.group(1)] = (source, m.group(3) or "default")

    def value(name: str) -> tuple[str, str, str]:
        """What a local name holds: an import followed to its module (the module itself when what it
        exports is not one symbol), else the file's own definition."""
        if name in imported:
            source, original = imported[name]
            if not source:
                return "", "", ""
            theirs = js_exports_of(source, files, read, hops - 1, memo).get(original)
            if theirs is not None and theirs[1]:
                return theirs
            return (source, "", "module") if original == "default" else theirs or (source, "", "")
        return defined(name)

    for m in _CJS_WHOLE.finditer(text):
        if m.group(1):
            whole = _js_file(base, m.group(1), files)
            if whole is not None:
                for name, where in js_exports_of(whole, files, read, hops - 1, memo).items():
                    out.setdefault(name, where)
        elif m.group(2):
            out["default"] = value(m.group(2))
        else:
            # `{ parse, stringify: format }`: the key is the name exported, the value the local name
            for key, local in _pairs(m.group(3).replace(":", " as ")):
                if key.isidentifier() and local.isidentifier():
                    out[key] = value(local)
    for m in _CJS_NAMED.finditer(text):
        name = m.group(1)
        if m.group(2):
            module = _js_file(base, m.group(2), files)
            theirs = js_exports_of(module, files, read, hops - 1, memo).get("default") if module else None
            out[name] = theirs if theirs is not None and theirs[1] else (module, "", "module") if module \
                else ("", "", "")
        elif m.group(3):
            out[name] = value(m.group(3))
        else:
            hit = defined(name)  # `exports.parse = function (...)`: the parser names the function `parse`
            out[name] = hit if hit[1] else (path, "", "function" if m.group(4) else "")


_CONDITIONS = ("types", "import", "default", "require")
_BUILT = re.compile(r"^\./(?:dist|lib|build|out|esm|cjs)(?:/(?:esm|cjs|types))?/")


def _js_entry(manifest: str, text: str, files: Mapping[str, FileFacts]) -> tuple[str, str] | None:
    """(the package's name, its entry file among the repository's sources) from one package.json."""
    try:
        data = json.loads(text)
    except ValueError:
        return None
    if not isinstance(data, dict):
        return None
    base = posixpath.dirname(manifest)
    name = str(data.get("name") or posixpath.basename(base) or "package")
    wanted: list[str] = []
    exports = data.get("exports")
    dot = exports.get(".", exports) if isinstance(exports, dict) else exports
    for declared in (dot, data.get("types"), data.get("typings"), data.get("module"), data.get("main")):
        value = declared
        while isinstance(value, dict):  # {"import": {"types": ..., "default": ...}}
            value = next((v for k, v in value.items() if k in _CONDITIONS), None)
        if isinstance(value, str):
            wanted.append(value)
    wanted += ["src/index.ts", "src/index.tsx", "index.ts", "src/index.js", "index.js", "lib/index.js",
               "src/main.ts", "src/mod.ts", "mod.ts"]
    for declared_path in wanted:
        spec = "./" + declared_path.removeprefix("./")
        for c in (spec, _BUILT.sub("./src/", spec)):  # a built file's source
            hit = _js_file(base, c, files)
            if hit is not None and files[hit].file.kind == "code":
                return name, hit
    return None


# ---------------------------------------------------------------------------------------------------- Go

_GO_PACKAGE = re.compile(r"^package[ \t]+(\w+)", re.M)


def go_exports(directory: str, files: Mapping[str, FileFacts], read: Reader) -> list[Export]:
    """The exported top-level names of the Go package in `directory` (its test files left out)."""
    paths = sorted(p for p, f in files.items() if posixpath.dirname(p) == directory and p.endswith(".go")
                   and not p.endswith("_test.go") and f.file.kind == "code")
    if not paths:
        return []
    m = _GO_PACKAGE.search(read(paths[0]) or "")
    package = m.group(1) if m else posixpath.basename(directory) or "main"
    if package == "main":
        return []
    out: dict[str, Export] = {}
    for p in paths:
        for s in files[p].symbols:
            if s.parent is None and s.public and s.kind in _KINDS and s.name not in out:
                out[s.name] = Export(f"{package}.{s.name}", p, s.qualname, s.kind)
    return list(out.values())


# -------------------------------------------------------------------------------------------------- Rust

# at the start of a line: a crate's own items (a `pub use` indented inside `mod x { ... }` is that module's)
_RS_USE = re.compile(r"^pub(?:\([\w ]+\))?[ \t]+use[ \t]+([\w:]+?)(?:::\{([^{};]{0,4000})\}|::(\*)|"
                     r"[ \t]+as[ \t]+(\w+))?[ \t]*;", re.M)
_RS_MOD = re.compile(r"^pub[ \t]+mod[ \t]+(\w+)[ \t]*[;{]", re.M)
_RS_HIDDEN = re.compile(r"#\[doc\(hidden\)\]\s*$")


def _rust_module_file(src: str, parts: list[str], files: Mapping[str, FileFacts]) -> str | None:
    if not parts:
        return None
    stem = "/".join([src, *parts]) if src else "/".join(parts)
    return next((c for c in (stem + ".rs", stem + "/mod.rs") if c in files), None)


def rust_exports(lib: str, crate: str, files: Mapping[str, FileFacts], read: Reader) -> list[Export]:
    """What a crate's lib.rs makes public: `pub use` (a name, a list, a glob), `pub mod`, `pub` items."""
    text = read(lib) or ""
    src = posixpath.dirname(lib)
    by_name: dict[str, list[tuple[str, Symbol]]] = {}  # the crate's public top-level items by name
    for p in sorted(files):
        if p.endswith(".rs") and (not src or p.startswith(src + "/")):
            for s in files[p].symbols:
                if s.parent is None and s.public:
                    by_name.setdefault(s.name, []).append((p, s))
    out: dict[str, Export] = {}

    def locate(path: list[str], name: str) -> Export:
        parts = [p for p in path if p not in ("crate", "self", "super")]
        file = _rust_module_file(src, parts, files)
        if file is not None:
            s = _top_level(files[file], name)
            if s is not None:
                return Export(f"{crate}::{name}", file, s.qualname, s.kind)
            sub = _rust_module_file(src, [*parts, name], files)
            if sub is not None:
                return Export(f"{crate}::{name}", sub, "", "module")
        defining = by_name.get(name, [])
        if len(defining) == 1:
            return Export(f"{crate}::{name}", defining[0][0], defining[0][1].qualname, defining[0][1].kind)
        return Export(f"{crate}::{name}")

    for s in files[lib].symbols if lib in files else ():
        if s.parent is None and s.signature.startswith("pub ") and s.kind in _KINDS \
                and not s.name.startswith("_"):  # `pub mod __private`: public for the crate's macros only
            out[s.name] = Export(f"{crate}::{s.name}", lib, s.qualname, s.kind)
    def hidden(m: re.Match[str]) -> bool:  # `#[doc(hidden)]` on the line before: not for users
        return bool(_RS_HIDDEN.search(text, max(0, m.start() - 200), m.start()))

    for m in _RS_MOD.finditer(text):
        if hidden(m) or m.group(1).startswith("_"):
            continue
        file = _rust_module_file(src, [m.group(1)], files)
        out[m.group(1)] = Export(f"{crate}::{m.group(1)}", file or "", "", "module")
    for m in _RS_USE.finditer(text):
        if hidden(m):
            continue
        path = m.group(1).split("::")
        if m.group(2):
            for item in m.group(2).split(","):
                words = item.split()
                if not words or "::" in item or words[0] == "self":
                    continue
                shown = words[2] if len(words) >= 3 and words[1] == "as" else words[0]
                found = locate(path, words[0])
                out[shown] = Export(f"{crate}::{shown}", found.path, found.qualname, found.kind)
        elif m.group(3):
            file = _rust_module_file(src, [p for p in path if p not in ("crate", "self", "super")], files)
            for s in files[file].symbols if file else ():
                if s.parent is None and s.signature.startswith("pub ") and s.kind in _KINDS:
                    out.setdefault(s.name, Export(f"{crate}::{s.name}", file or "", s.qualname, s.kind))
        elif len(path) > 1:
            shown = m.group(4) or path[-1]
            found = locate(path[:-1], path[-1])
            out[shown] = Export(f"{crate}::{shown}", found.path, found.qualname, found.kind)
    return list(out.values())


def _crate_name(text: str) -> str:
    try:
        data = tomllib.loads(text)
    except (tomllib.TOMLDecodeError, ValueError):
        return ""
    lib, package = data.get("lib"), data.get("package")
    lib = lib if isinstance(lib, dict) else {}
    package = package if isinstance(package, dict) else {}
    return str(lib.get("name") or package.get("name") or "").replace("-", "_")


# -------------------------------------------------------------------------------------------------- Java

_JAVA_PACKAGE = re.compile(r"^[ \t]*package[ \t]+([\w.]+)[ \t]*;", re.M)


def _java_package(path: str, read: Reader) -> str:
    """`src/main/java/com/x/Foo.java` -> "com.x" by Maven's layout, without reading the file; else its
    `package` clause."""
    parts = posixpath.dirname(path).split("/")
    after = parts[parts.index("java") + 1:] if "java" in parts else []
    if after and all(p.isidentifier() for p in after):
        return ".".join(after)
    m = _JAVA_PACKAGE.search(read(path) or "")
    return m.group(1) if m else ""


def java_exports(files: Mapping[str, FileFacts], read: Reader, source: Callable[[str], bool]) -> list[Export]:
    """The public top-level classes, interfaces, enums and records of the project's own Java packages."""
    out = []
    for p in sorted(files):
        f = files[p]
        if not p.endswith(".java") or f.file.kind != "code" or not source(p):
            continue
        types = [s for s in f.symbols if s.parent is None and re.match(r"(?:@\w+\s+)*public\b", s.signature)]
        if not types:
            continue
        package = _java_package(p, read)
        out += [Export(f"{package}.{s.name}" if package else s.name, p, s.qualname, s.kind) for s in types]
    return out


# ----------------------------------------------------------------------------------------------- The API


def package_exports(files: Mapping[str, FileFacts], read: Reader, manifests: Mapping[str, str], *,
                    source: Callable[[str], bool], importance: Mapping[str, float], roots: int = 2
                    ) -> list[Export]:
    """The repository's public API: for each of its languages, the names its main packages export (Python:
    the `roots` most important top-level packages). `source`: whether a path is the project's own code
    (not tests, examples, tooling); `manifests`: {path: text} of package.json, Cargo.toml, go.mod."""
    out: list[Export] = []
    inits = [p for p, f in files.items() if posixpath.basename(p) == "__init__.py" and source(p)
             and f.file.kind == "code"
             and posixpath.dirname(posixpath.dirname(p)) + "/__init__.py" not in files]  # top-level only
    inits.sort(key=lambda p: (-importance.get(posixpath.dirname(p), 0.0), p))
    for init in inits[:roots]:
        out += python_exports(init, read(init) or "", files)
    if inits and not out:
        # no package offers names from its __init__: the most important one is used through its modules
        # (a second root package with an empty __init__ is a test server's or a tool's, not the API)
        out += python_module_exports(inits[0], files, read, source)
    by_depth = sorted(manifests.items(), key=lambda kv: (kv[0].count("/"), kv[0]))
    for manifest, text in by_depth:
        if posixpath.basename(manifest) == "package.json":
            entry = _js_entry(manifest, text, files)
            if entry is not None:
                name, path = entry
                found = js_exports_of(path, files, read)
                out += [Export(name if n == "default" else f"{name}.{n}", *found[n]) for n in found]
                break
    for manifest, _text in by_depth:
        if posixpath.basename(manifest) == "go.mod":
            out += go_exports(posixpath.dirname(manifest), files, read)
            break
    for manifest, text in by_depth:
        if posixpath.basename(manifest) == "Cargo.toml":
            base = posixpath.dirname(manifest)
            lib = posixpath.join(base, "src/lib.rs") if base else "src/lib.rs"
            crate = _crate_name(text)
            if lib in files and crate:
                out += rust_exports(lib, crate, files, read)
                break
    out += java_exports(files, read, source)
    return list({e.name: e for e in out}.values())
