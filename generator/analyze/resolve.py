"""Which repository files each import names, per language; what does not resolve is external.

Pure: paths and Import values in, file lists out. Python absolute (package roots, src/ layouts, namespace
packages by unique suffix) and relative imports; JS/TS relative paths with extension and index probing; Go
packages (module path from go.mod, or inferred); JS/TS local packages by their package.json name; Rust `mod`
and `use` within the crate and across a Cargo workspace; Java/Kotlin/Scala packages; C/C++ includes; Ruby,
PHP and C# by path suffix. What the manifests say comes in as a Manifests value (manifests.py).
"""

from __future__ import annotations

import posixpath
from collections import Counter, defaultdict
from collections.abc import Callable, Mapping, Sequence

from generator.analyze.facts import FileFacts, Import
from generator.analyze.languages import LANGUAGES
from generator.analyze.manifests import Manifests, go_module

_Finder = Callable[[str], "str | None"]  # dotted module name -> file

# language id -> resolution family (each LanguageSpec names its own)
FAMILY = {spec.id: spec.resolver for spec in LANGUAGES if spec.resolver}
_JS_EXTENSIONS = (".ts", ".tsx", ".d.ts", ".js", ".jsx", ".mjs", ".cjs", ".mts", ".cts")


def scope_chain(scope: str) -> list[str]:
    """`a.b.c`, then the scopes around it: `a.b`, `a` (where a name used inside `a.b.c` may be declared)."""
    out = []
    q = scope
    while q:
        out.append(q)
        q = q.rpartition(".")[0]
    return out


def parent_dir(path: str) -> str:
    return path.rsplit("/", 1)[0] if "/" in path else ""


_dir = parent_dir


def _join(*parts: str) -> str:
    return "/".join(p for p in parts if p)


# -------------------------------------------------------------------------------------------- python


class _PythonResolver:
    def __init__(self, paths: Sequence[str]) -> None:
        self.files = {p for p in paths if p.endswith((".py", ".pyi"))}
        inits = ("__init__.py", "__init__.pyi")
        package_dirs = {_dir(p) for p in self.files if p.rsplit("/", 1)[-1] in inits}
        self.exact: dict[str, list[str]] = defaultdict(list)
        self.root_of: dict[str, str] = {}
        self.package_dirs = package_dirs
        self.suffix: dict[str, list[str]] = defaultdict(list)
        for path in sorted(self.files):
            parts = path[: path.rfind(".")].split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            # the import root is the first ancestor that is not a package (src/ layouts, tests/, repo root)
            d = _dir(path)
            while d and d in package_dirs:
                d = _dir(d)
            depth = len(d.split("/")) if d else 0
            name = ".".join(parts[depth:])
            self.root_of[path] = d
            if name:
                self.exact[name].append(path)
            for i in range(len(parts)):
                self.suffix[".".join(parts[i:])].append(path)

    def _module_file(self, base_dir: str, dotted: str) -> str | None:
        stem = _join(base_dir, dotted.replace(".", "/"))
        for candidate in (stem + ".py", stem + "/__init__.py", stem + ".pyi", stem + "/__init__.pyi"):
            if candidate in self.files:
                return candidate
        return None

    def _importable_from(self, candidate: str, importer: str) -> bool:
        """A package is importable from anywhere in the repo; a loose top-level module only from its own
        directory or a conventional source root (otherwise `import logging` would find scripts/logging.py)."""
        if _dir(candidate) in self.package_dirs:
            return True
        root = self.root_of.get(candidate, "")
        return root in ("", "src", "lib") or root == self.root_of.get(importer)

    def _absolute(self, name: str, importer: str) -> list[str]:
        found = [c for c in self.exact.get(name, ()) if self._importable_from(c, importer)]
        if found:
            return [_closest(found, importer)]
        if _dir(importer) not in self.package_dirs:
            # a script directory (tests/, scripts/) is on sys.path when its files run: neighbours import
            sibling = self._module_file(_dir(importer), name)
            if sibling:
                return [sibling]
        if "." in name:
            by_suffix = self.suffix.get(name, [])
            if len(by_suffix) == 1:  # a namespace package without __init__.py
                return by_suffix
        return []

    def resolve(self, imp: Import) -> list[str]:
        module = imp.module
        if module.startswith("."):
            dots = len(module) - len(module.lstrip("."))
            base = _dir(imp.path)
            for _ in range(dots - 1):
                if not base:
                    return []  # beyond the top of the repository
                base = _dir(base)
            rest = module[dots:]
            return self._with_names(rest, imp.names, lambda dotted: self._module_file(base, dotted), base,
                                    imp.path)
        importer = imp.path

        def find(dotted: str) -> str | None:
            return _first(self._absolute(dotted, importer))

        return self._with_names(module, imp.names, find, None, importer)

    def _with_names(self, module: str, names: tuple[str, ...], find: _Finder, base: str | None,
                    importer: str) -> list[str]:
        out: list[str] = []
        names_all_modules = bool(names)
        for name in names:
            if name == "*":
                names_all_modules = False
                continue
            hit = find(f"{module}.{name}" if module else name)
            if hit:
                out.append(hit)
            else:
                names_all_modules = False
        if not names_all_modules:
            target = find(module) if module else (self._module_file(base, "") if base is not None else None)
            if target is None and module and base is None:
                # `import a.b.c` where c is an attribute: fall back to the longest importable prefix
                parts = module.split(".")
                for k in range(len(parts) - 1, 0, -1):
                    hits = [c for c in self.exact.get(".".join(parts[:k]), ())
                            if self._importable_from(c, importer)]
                    if hits:
                        target = hits[0]
                        break
            if target:
                out.append(target)
        return out


def _first(items: list[str]) -> str | None:
    return items[0] if items else None


def _closest(candidates: list[str], importer: str) -> str:
    """Of several files with the same module name, the one sharing the longest directory prefix."""
    if len(candidates) == 1:
        return candidates[0]
    return max(candidates, key=lambda c: (len(posixpath.commonprefix([c, importer])), c))


# ------------------------------------------------------------------------------------------- js / ts


def _js_package_bases(spec: str, packages: Mapping[str, tuple[str, str]]) -> list[str]:
    """Where a bare import of a local package (`@acme/ui`, `@acme/ui/button`) may point."""
    for name in sorted(packages, key=len, reverse=True):
        if spec == name or spec.startswith(name + "/"):
            directory, main = packages[name]
            sub = spec[len(name) + 1:]
            if sub:
                return [_join(directory, "src", sub), _join(directory, sub)]
            return [b for b in (main, _join(directory, "src", "index"), _join(directory, "index")) if b]
    return []


def _resolve_js(imp: Import, files: set[str], packages: Mapping[str, tuple[str, str]]) -> list[str]:
    spec = imp.module.split("?", 1)[0]
    if spec.startswith("."):
        bases = [posixpath.normpath(posixpath.join(_dir(imp.path), spec))]
    elif spec.startswith(("@/", "~/")):
        bases = ["src/" + spec[2:], spec[2:]]  # the usual tsconfig/bundler alias for the source root
    elif spec.startswith("/"):
        bases = [spec[1:]]
    else:
        bases = _js_package_bases(spec, packages)  # else a package from a registry: external
    for normalized in bases:
        if normalized.startswith("../") or normalized == "..":
            continue
        base = "" if normalized == "." else normalized
        candidates = [base]
        if base.endswith((".js", ".jsx", ".mjs", ".cjs")):
            stem = base[: base.rfind(".")]  # TypeScript ESM writes "./x.js" for x.ts
            candidates += [stem + ext for ext in (".ts", ".tsx", ".mts", ".cts")]
        candidates += [base + ext for ext in _JS_EXTENSIONS]
        candidates += [_join(base, "index" + ext) for ext in _JS_EXTENSIONS]
        for candidate in candidates:
            if candidate in files:
                return [candidate]
    return []


# ------------------------------------------------------------------------------------------------ go


class _GoResolver:
    def __init__(self, paths: Sequence[str], imports: Sequence[Import], modules: Mapping[str, str]) -> None:
        self.by_dir: dict[str, list[str]] = defaultdict(list)
        for p in sorted(paths):
            if p.endswith(".go"):
                self.by_dir[_dir(p)].append(p)
        self.modules = dict(modules) or self._infer_module(imports)

    def _infer_module(self, imports: Sequence[Import]) -> dict[str, str]:
        """Without go.mod, guess the module path: the prefix that most local directories agree on."""
        votes: Counter[str] = Counter()
        dirs = [d for d in self.by_dir if d]
        for imp in {i.module for i in imports}:
            for d in dirs:
                if imp.endswith("/" + d):
                    votes[imp[: -len(d) - 1]] += 1
        if not votes:
            return {}
        module, _ = max(votes.items(), key=lambda kv: (kv[1], -len(kv[0])))
        return {"": module}

    def resolve(self, imp: Import) -> list[str]:
        for mod_dir, mod_path in sorted(self.modules.items(), key=lambda kv: -len(kv[1])):
            if imp.module == mod_path or imp.module.startswith(mod_path + "/"):
                rel = imp.module[len(mod_path):].lstrip("/")
                files = self.by_dir.get(_join(mod_dir, rel), [])
                # _test.go files are compiled only for the package's own tests, never for importers
                return [f for f in files if f != imp.path and not f.endswith("_test.go")]
        return []


def go_modules(go_mod_texts: Mapping[str, str]) -> dict[str, str]:
    """{directory: module path} from the text of each go.mod ({"sub/go.mod": text}); feed to build_graph."""
    out: dict[str, str] = {}
    for path, text in go_mod_texts.items():
        module = go_module(text)
        if module:
            out[_dir(path)] = module
    return out


# ---------------------------------------------------------------------------------------------- rust


class _RustResolver:
    _ROOTS = ("lib.rs", "main.rs")

    def __init__(self, paths: Sequence[str], crates: Mapping[str, str]) -> None:
        self.files = {p for p in paths if p.endswith(".rs")}
        # other crates of the workspace by the name `use` writes: their lib.rs's directory
        self.crates = {name: _dir(lib) for name, lib in crates.items() if lib in self.files}
        crate_dirs = {_dir(p) for p in self.files if p.rsplit("/", 1)[-1] in self._ROOTS}
        self.crate_dir: dict[str, str] = {}
        self.mod_path: dict[str, tuple[str, ...]] = {}
        self.by_mod: dict[tuple[str, tuple[str, ...]], str] = {}
        for path in sorted(self.files):
            d = _dir(path)
            while d not in crate_dirs and d:
                d = _dir(d)
            if d not in crate_dirs:
                continue  # a loose .rs file (build.rs, examples): no crate to resolve within
            rel = path[len(d) + 1:] if d else path
            parts = tuple(rel[:-3].split("/"))
            if parts[-1] == "mod" or (len(parts) == 1 and parts[0] in ("lib", "main")):
                parts = parts[:-1]
            self.crate_dir[path] = d
            self.mod_path[path] = parts
            self.by_mod.setdefault((d, parts), path)

    def _children_dir(self, path: str) -> str:
        name = path.rsplit("/", 1)[-1]
        return _dir(path) if name in ("mod.rs", "lib.rs", "main.rs") else path[:-3]

    def resolve(self, imp: Import) -> list[str]:
        spec = imp.module.split("{", 1)[0].rstrip(":").strip()
        if spec.startswith("mod::"):
            stem = _join(self._children_dir(imp.path), spec[5:])
            for candidate in (stem + ".rs", stem + "/mod.rs"):
                if candidate in self.files:
                    return [candidate]
            return []
        parts = [p for p in spec.split("::") if p]
        if not parts:
            return []
        head = parts[0]
        here: tuple[str, ...]
        if imp.path not in self.crate_dir:
            if head not in self.crates:
                return []
            # an integration test, example or build script uses the package's library by its name
            crate, here = self.crates[head], ()
        else:
            crate, here = self.crate_dir[imp.path], self.mod_path[imp.path]
        if head == "crate":
            base: tuple[str, ...] = ()
            parts = parts[1:]
        elif head in ("self", "super"):
            base = here
            while parts and parts[0] in ("self", "super"):
                if parts.pop(0) == "super":
                    if not base:
                        return []
                    base = base[:-1]
        elif (crate, (*here, head)) in self.by_mod:
            base = here  # a child module named without self::
        elif (crate, (head,)) in self.by_mod:
            base = ()  # 2015-edition style or the crate root's own modules
        elif head in self.crates:
            crate, base = self.crates[head], ()  # a sibling crate of the Cargo workspace
            parts = parts[1:]
        else:
            return []  # another crate
        out: list[str] = []
        tails = [tuple(parts)] + [(*parts, n) for n in imp.names if n not in ("self", "*")]
        for tail in tails:
            for k in range(len(tail), -1, -1):  # the longest prefix that is a module; the rest are items
                hit = self.by_mod.get((crate, base + tail[:k]))
                if hit:
                    out.append(hit)
                    break
        return [p for p in dict.fromkeys(out) if p != imp.path]


# ------------------------------------------------------------------------------------------ java/kotlin


class _JvmResolver:
    """Packages and classes of the JVM languages (Java, Kotlin, Scala), which import each other freely."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.by_suffix: dict[str, list[str]] = defaultdict(list)
        self.dir_suffix: dict[str, set[str]] = defaultdict(set)
        self.by_dir: dict[str, list[str]] = defaultdict(list)
        extensions = tuple(ext for spec in LANGUAGES if spec.resolver == "jvm" for ext in spec.extensions)
        for path in sorted(paths):
            if not path.endswith(extensions):
                continue
            parts = path[: path.rfind(".")].split("/")
            self.by_dir[_dir(path)].append(path)
            for i in range(len(parts)):
                self.by_suffix[".".join(parts[i:])].append(path)
            for i in range(len(parts) - 1):
                self.dir_suffix[".".join(parts[i:-1])].add(_dir(path))

    def resolve(self, imp: Import) -> list[str]:
        name = imp.module.removeprefix("static ").strip()
        if imp.names and not name.endswith(".*"):
            # `import a.b.{C, D}` (Scala selectors): the module is the package, the names its classes
            picked = [hit for n in imp.names for hit in self._class_file(f"{name}.{n}", imp.path)]
            if picked:
                return list(dict.fromkeys(picked))
        if name.endswith(".*"):
            package = name[:-2]
            hits = [f for d in sorted(self.dir_suffix.get(package, ())) for f in self.by_dir[d]]
            if hits:
                return [f for f in hits if f != imp.path]
            name = package  # `import static a.B.*`: the class B
        return self._class_file(name, imp.path)

    def _class_file(self, name: str, importer: str) -> list[str]:
        parts = name.split(".")
        for k in range(len(parts), 1, -1):  # nested classes and static members hang off the class file
            hits = self.by_suffix.get(".".join(parts[:k]), [])
            if hits:
                return [_closest(hits, importer)]
        return []


# ---------------------------------------------------------------------------------------------- c/c++


def _resolve_include(imp: Import, files: set[str], by_name: Mapping[str, list[str]]) -> list[str]:
    target = imp.module.strip('<>"')
    local = posixpath.normpath(_join(_dir(imp.path), target))
    if local in files:
        return [local]
    same_name = by_name.get(target.rsplit("/", 1)[-1], [])
    candidates = [f for f in same_name if f == target or f.endswith("/" + target)]
    return [_closest(candidates, imp.path)] if candidates else []


# ------------------------------------------------------------------------------------- ruby, php, c#


class _SuffixResolver:
    """Languages whose imports name a path or namespace that mirrors directories (Ruby require, PHP PSR-4
    `use`, C# `using`): resolve by the longest matching path suffix, only when it is unambiguous."""

    def __init__(self, paths: Sequence[str], extension: str) -> None:
        self.extension = extension
        self.files = {p for p in paths if p.endswith(extension)}
        self.by_stem: dict[str, list[str]] = defaultdict(list)
        self.by_dir: dict[str, list[str]] = defaultdict(list)
        for p in sorted(self.files):
            self.by_stem[p[: -len(extension)].rsplit("/", 1)[-1]].append(p)
            self.by_dir[_dir(p)].append(p)

    def file(self, importer: str, spec: str) -> list[str]:
        """`spec` is a relative or load-path file name without extension: "./util", "foo/bar"."""
        spec = spec.strip("'\"").removesuffix(self.extension)
        if not spec:
            return []
        local = posixpath.normpath(_join(_dir(importer), spec)) + self.extension
        if local in self.files:
            return [local]
        tail = "/" + spec.lstrip("./") + self.extension
        hits = [p for p in self.by_stem.get(spec.rsplit("/", 1)[-1], ()) if ("/" + p).endswith(tail)]
        return [_closest(hits, importer)] if hits else []

    def namespace_file(self, importer: str, dotted: list[str]) -> list[str]:
        """A class named by its namespace path (PHP `App\\Models\\User`): the file with that path suffix."""
        for k in range(len(dotted) - 1):  # drop leading components (PSR-4 maps App\ to src/ or app/)
            tail = "/" + "/".join(dotted[k:]) + self.extension
            hits = [p for p in self.by_stem.get(dotted[-1], ()) if ("/" + p).endswith(tail)]
            if hits:
                return [_closest(hits, importer)]
        return []

    def namespace_dir(self, importer: str, dotted: list[str]) -> list[str]:
        """Every file of the directory a namespace names (C# `using App.Services;`)."""
        tail = "/" + "/".join(dotted)
        dirs = [d for d in self.by_dir if ("/" + d).endswith(tail)]
        if not dirs:
            return []
        return [p for p in self.by_dir[_closest(dirs, importer)] if p != importer]

    def resolve(self, imp: Import, language: str) -> list[str]:
        spec = imp.module.strip().strip("'\"")
        if language == "ruby":
            return self.file(imp.path, spec)
        if language == "php":
            if "\\" in spec:
                return self.namespace_file(imp.path, [p for p in spec.split("\\") if p])
            return self.file(imp.path, spec)
        spec = spec.removeprefix("static ").split("=")[-1].strip().rstrip(";")  # C#: `using A = B.C;`
        parts = [p for p in spec.split(".") if p]
        return self.namespace_dir(imp.path, parts) or self.namespace_file(imp.path, parts)


# ---------------------------------------------------------------------------------------------- imports


def resolve_imports(facts: Sequence[FileFacts], manifests: Manifests) -> tuple[
        dict[str, dict[str, list[str]]], dict[str, list[str]]]:
    paths = [f.path for f in facts]
    files = set(paths)
    language = {f.path: f.file.language for f in facts}
    all_imports = [i for f in facts for i in f.imports]
    python = _PythonResolver(paths)
    go = _GoResolver(paths, [i for i in all_imports if language.get(i.path) == "go"], manifests.go)
    rust = _RustResolver(paths, manifests.rust)
    jvm = _JvmResolver(paths)
    by_suffix = {spec.id: _SuffixResolver(paths, spec.extensions[0])
                 for spec in LANGUAGES if spec.resolver == "suffix"}
    c_by_name: dict[str, list[str]] = defaultdict(list)
    for p in paths:
        if language.get(p) in ("c", "cpp"):
            c_by_name[p.rsplit("/", 1)[-1]].append(p)

    # resolver family (LanguageSpec.resolver) -> (import, language id) -> files
    families: dict[str, Callable[[Import, str], list[str]]] = {
        "python": lambda imp, _lang: python.resolve(imp),
        "js": lambda imp, _lang: _resolve_js(imp, files, manifests.js),
        "go": lambda imp, _lang: go.resolve(imp),
        "rust": lambda imp, _lang: rust.resolve(imp),
        "jvm": lambda imp, _lang: jvm.resolve(imp),
        "c": lambda imp, _lang: _resolve_include(imp, files, c_by_name),
        "suffix": lambda imp, lang: by_suffix[lang].resolve(imp, lang),
    }
    resolved: dict[str, dict[str, list[str]]] = {}
    external: dict[str, list[str]] = {}
    for f in facts:
        language_id = f.file.language or ""
        family = families.get(FAMILY.get(language_id) or "")
        per_file: dict[str, list[str]] = {}
        missing: list[str] = []
        for imp in f.imports:
            hits = family(imp, language_id) if family is not None else []
            hits = [h for h in hits if h != f.path]
            if hits:
                per_file.setdefault(imp.module, [])
                per_file[imp.module] = sorted(set(per_file[imp.module]) | set(hits))
            elif imp.module not in missing:
                missing.append(imp.module)
        resolved[f.path] = per_file
        external[f.path] = sorted(missing)
    return resolved, external
