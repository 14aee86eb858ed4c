"""Which symbol each reference names: the edges of the call graph ("Calls", "Called by", "Tested by").

Pure: FileFacts and the resolved imports in, {referrer: Counter(referenced symbol)} out.

Python references are bound the way the interpreter binds names, as far as a static reading can tell:
- `f()` or a bare name: the enclosing functions' own definitions, the file's top level, then what the
  file imports (following a package's re-exports, `from .app import Flask as Flask`) or star-imports;
- `Cls()` links to the class itself;
- `self.m()` / `cls.m()`: the enclosing class's method, else the first base (depth first, in order) that
  defines it, bases resolved like any other name;
- `x.m()` when `x` has a known class: annotated (`x: Cls`, `def f(x: Cls)`), assigned an instance
  (`x = Cls()`) or the result of a function or method that declares its return type (`-> Cls`), or an
  attribute given a type in the class or by `self.x = ...` in a method; a variable given two unrelated
  types (or something unknown besides) has no known class;
- `super().m()`: the first base that defines `m`;
- `Name.m()`, `module.f()`, `pkg.mod.Cls.m()`: the dotted receiver resolved to a class or a module of the
  repository, then the member in it;
- a receiver of unknown type (a local variable, a parameter, `self.attr`, a call's result): no edge,
  unless the name is defined exactly once in the repository's Python and is not a name the standard
  types' methods use (`get`, `pop`, `append`, `items`, ...): then the one definition is the only candidate
  a reader would suspect too. A receiver bound by an import the repository does not hold (`os.path.join`)
  never links, and neither does `self.m()` when `m` is not found but the class has a base from outside.
An honest "no edge" is preferred to a plausible wrong one: a reader follows these links.

Go references are bound by type (see _Go): receivers, parameters, locals, struct fields and package names;
a receiver of a type from outside the repository (`t *testing.T`, `sync.Pool`) never links.

Rust references are bound by type too (see generator/analyze/references_rust.py): paths, `use`s, `self`,
typed parameters, `let`s and struct fields; a path into another crate (`Box::new`) never links.

Java, JavaScript and TypeScript references are bound by scope and type (generator/analyze/references_oo.py):
lexical lookup, imports, `this`/`super`, typed parameters, variables and fields, `new T()`.

Ruby, PHP, C#, Kotlin and C++ references are bound through the receiver's type
(generator/analyze/references_loose.py); a bare name not found in scope is linked by name as below.

Other languages keep linking by name (same file, then imported files, then a name unique in the
repository), except that `this.m()` / `self.m()` link to the enclosing class's own member when it has one.
"""

from __future__ import annotations

import builtins
import functools
import re
from collections import Counter, defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from generator.analyze.facts import FileFacts, Reference
from generator.analyze.references_loose import LOOSE_LANGUAGES, LooseBinder
from generator.analyze.references_oo import ClassBinder
from generator.analyze.references_rust import RustBinder
from generator.analyze.resolve import FAMILY
from generator.analyze.resolve import parent_dir as _dir

__all__ = ["COMMON_METHOD_NAMES", "SymbolKey", "Symbols", "resolve_references"]

SymbolKey = tuple[str, str]  # (path, qualname); qualname "" stands for the file's top level
_Entity = tuple[str, str, str]  # ("sym", path, qualname) or ("mod", path, "")

# A name defined in more files than this is too generic to link by name alone ("get", "run", "__init__").
COMMON_NAME_FILES = 5
# Of the files a referrer imports, at most this many may define the name for the link to be trusted.
MAX_IMPORTED_CANDIDATES = 3
# Re-export hops followed from an import to the definition (package __init__ -> submodule -> ...).
_MAX_HOPS = 4
_CLS_FIRST = re.compile(r"\(\s*cls\s*[,:)]")
_NAMESPACES = frozenset({"class", "function", "method"})
_CLASS_KINDS = frozenset({"class", "struct", "interface", "trait", "enum", "impl", "type"})


def _methods_of(*types: type) -> set[str]:
    return {n for t in types for n in dir(t)}


# Method names any object of the standard types answers to, and the verbs every library reuses: a call on
# a receiver of unknown type with one of these names says nothing about which definition runs.
COMMON_METHOD_NAMES: frozenset[str] = frozenset(
    _methods_of(dict, list, set, frozenset, str, bytes, bytearray, int, float, tuple, object, BaseException)
    | {n for n in dir(builtins) if not n.startswith("_")}
    | {
        "add", "append", "apply", "call", "cancel", "clear", "close", "connect", "copy", "create", "debug",
        "decode", "delete", "dispatch", "dump", "dumps", "emit", "encode", "error", "exception", "execute",
        "fileno", "flush", "get", "handle", "info", "init", "load", "loads", "log", "match", "open",
        "parse", "pop", "process", "put", "read", "readline", "readlines", "register", "release",
        "acquire", "remove", "render", "reset", "result", "run", "save", "search", "seek", "send", "set",
        "setup", "start", "stop", "submit", "teardown", "tell", "update", "validate", "wait", "warning",
        "write", "writelines", "group", "sub", "name", "value", "iter", "next", "items", "keys",
        "values", "join", "split", "strip", "setdefault", "extend", "insert", "discard", "sort",
    }
)


@dataclass
class Symbols:
    """Every lookup over the repository's symbols, built in one pass."""

    by_name: dict[str, list[SymbolKey]]  # name -> definitions (module pseudo-symbols excluded)
    files_defining: dict[str, int]  # name -> how many files define it
    name_of: dict[SymbolKey, str]
    kind_of: dict[SymbolKey, str]
    top_level: dict[str, set[str]]  # file -> names defined at its top level
    members: dict[SymbolKey, dict[str, str]]  # (file, parent qualname or "") -> name -> qualname
    classmethods: set[SymbolKey] = field(default_factory=set)  # methods whose first parameter is `cls`

    @classmethod
    def index(cls, facts: Sequence[FileFacts]) -> Symbols:
        by_name: dict[str, list[SymbolKey]] = defaultdict(list)
        name_of: dict[SymbolKey, str] = {}
        kind_of: dict[SymbolKey, str] = {}
        top_level: dict[str, set[str]] = {}
        members: dict[SymbolKey, dict[str, str]] = defaultdict(dict)
        classmethods: set[SymbolKey] = set()
        for f in facts:
            path = f.path
            top: set[str] = set()
            for s in f.symbols:
                key = (path, s.qualname)
                name_of[key] = s.name
                kind_of[key] = s.kind
                if s.parent is None:
                    top.add(s.name)
                if s.kind != "module":
                    by_name[s.name].append(key)
                    members[(path, s.parent or "")].setdefault(s.name, s.qualname)
                if s.kind == "method" and _CLS_FIRST.search(s.signature):
                    classmethods.add(key)
            top_level[path] = top
        files_defining = {name: len({p for p, _ in keys}) for name, keys in by_name.items()}
        return cls(by_name=by_name, files_defining=files_defining, name_of=name_of, kind_of=kind_of,
                   top_level=top_level, members=members, classmethods=classmethods)


def _enclosing(symbols: Symbols, path: str, scope: str, kinds: frozenset[str]) -> str | None:
    """The innermost symbol around `scope` (itself included) whose kind is one of `kinds`."""
    q = scope
    while q:
        if symbols.kind_of.get((path, q)) in kinds:
            return q
        q = q.rpartition(".")[0]
    return None


def _module_name(path: str) -> str:
    stem = path.rsplit("/", 1)[-1].split(".", 1)[0]
    return _dir(path).rsplit("/", 1)[-1] if stem == "__init__" else stem


# ------------------------------------------------------------------------------------------------ python


class _Python:
    """Binds Python references to the repository's definitions (the rules are in the module docstring)."""

    def __init__(self, facts: Sequence[FileFacts], symbols: Symbols,
                 names_from: Mapping[str, Mapping[str, set[str]]], renamed: Mapping[tuple[str, str], str],
                 resolved: Mapping[str, Mapping[str, list[str]]]) -> None:
        self.symbols = symbols
        self.members = symbols.members
        self.kind_of = symbols.kind_of
        self.names_from = names_from
        self.renamed = renamed
        self.files = {f.path for f in facts}
        self.unique: dict[str, SymbolKey] = {}
        python_keys: dict[str, list[SymbolKey]] = defaultdict(list)
        for f in facts:
            if FAMILY.get(f.file.language or "") == "python":
                for s in f.symbols:
                    if s.kind != "module":
                        python_keys[s.name].append((f.path, s.qualname))
        for name, keys in python_keys.items():
            if len(keys) == 1 and name not in COMMON_METHOD_NAMES and not name.startswith("__"):
                self.unique[name] = keys[0]
        # `import a.b` binds `a`; a receiver "a.b" names that module
        self.plain: dict[str, dict[str, list[str]]] = defaultdict(dict)
        self.plain_heads: dict[str, set[str]] = defaultdict(set)  # `import a.b` binds `a`
        # file -> names bound by its imports that resolve to no file of the repository
        self.external: dict[str, set[str]] = defaultdict(set)
        self.base_refs: dict[SymbolKey, list[Reference]] = defaultdict(list)
        # (file, scope) -> variable -> the types it is given there (annotations "Cls", calls "Cls()")
        self.variables: dict[SymbolKey, dict[str, list[str]]] = defaultdict(lambda: defaultdict(list))
        # (file, class) -> attribute -> (scope, type): `self.x = Cls()` in a method, `x: Cls` in the body
        self.attributes: dict[SymbolKey, dict[str, list[tuple[str, str]]]] = defaultdict(
            lambda: defaultdict(list))
        for f in facts:
            for imp in f.imports:
                files = resolved.get(f.path, {}).get(imp.module)
                aliases = [alias for _, alias in imp.aliases]
                if imp.names:
                    if not files:
                        self.external[f.path].update(imp.names, aliases)
                elif files:
                    self.plain[f.path][imp.module] = files
                    self.plain_heads[f.path].add(imp.module.split(".", 1)[0])
                    self._add_parent_packages(f.path, imp.module, files[0])
                    for alias in aliases:  # `import pkg.mod as m`
                        self.plain[f.path][alias] = files
                        self.plain_heads[f.path].add(alias)
                else:
                    self.external[f.path].update(aliases or [imp.module.split(".", 1)[0]])
            for ref in f.references:
                if ref.kind == "base" and ref.scope:
                    self.base_refs[(f.path, ref.scope)].append(ref)
                elif ref.kind == "bind" and ref.receiver:
                    self._add_binding(f.path, ref)
        self._type_cache: dict[tuple[str, str, tuple[str, ...]], SymbolKey | None] = {}
        self._in_module_cache: dict[tuple[str, str], _Entity | None] = {}
        self._mro_cache: dict[SymbolKey, tuple[list[SymbolKey], bool]] = {}

    def _add_parent_packages(self, path: str, module: str, file: str) -> None:
        """`import a.b.c` binds `a`, and `a.b` names a package too: their __init__ files, found by going
        up from the file `a.b.c` resolved to."""
        parts = module.split(".")
        base = file[: -len("/__init__.py")] if file.endswith("/__init__.py") else file.rsplit(".", 1)[0]
        for k in range(len(parts) - 1, 0, -1):
            base = _dir(base)
            package = f"{base}/__init__.py" if base else "__init__.py"
            if package not in self.files:
                return
            self.plain[path].setdefault(".".join(parts[:k]), [package])

    # ---- the types names are given

    def _add_binding(self, path: str, ref: Reference) -> None:
        scope, type_text = ref.scope or "", ref.receiver or ""
        while scope and self.kind_of.get((path, scope)) not in _NAMESPACES:
            scope = scope.rpartition(".")[0]  # `LIMIT = Cls()` is a constant symbol: bound in its module
        head, _, attr = ref.name.partition(".")
        if not attr:
            if self.kind_of.get((path, scope)) == "class":  # `x: Cls` in a class body: an attribute
                self.attributes[(path, scope)][head].append((scope, type_text))
            self.variables[(path, scope)][head].append(type_text)
        elif head == "self" and "." not in attr:
            cls = _enclosing(self.symbols, path, scope, frozenset({"class"}))
            if cls is not None:
                self.attributes[(path, cls)][attr].append((scope, type_text))

    def type_of(self, path: str, scope: str, types: Sequence[str]) -> SymbolKey | None:
        """The class an instance given these types is of: annotations win over calls; several classes
        agree when one is a base of all the others (the declared interface); anything else is unknown."""
        key = (path, scope, tuple(types))
        if key in self._type_cache:
            return self._type_cache[key]
        self._type_cache[key] = None  # `x = x.copy()`-style cycles end here
        annotations = [t for t in types if not t.endswith("()")]
        classes: set[SymbolKey] = set()
        for text in dict.fromkeys(annotations or types):
            if text.endswith("()"):
                cls = self.result(path, scope, text[:-2])
            else:
                found = self.dotted(path, scope, text.split("."))
                cls = (found[1], found[2]) if found is not None and found[0] == "sym" else None
            if cls is None or self.kind_of.get(cls) != "class":
                return None
            classes.add(cls)
        common = [c for c in classes if all(c in self.mro(d)[0] for d in classes)]
        result = common[0] if len(common) == 1 else None
        self._type_cache[key] = result
        return result

    def variable(self, path: str, scope: str, name: str) -> SymbolKey | None:
        """The class of variable `name` as seen from `scope`: given a type in an enclosing function or at
        the top level (this file's, or the module it is imported from)."""
        q, innermost = scope, True
        while True:
            if innermost or self.kind_of.get((path, q)) != "class":
                types = self.variables.get((path, q), {}).get(name)
                if types:
                    return self.type_of(path, q, types)
            if not q:
                break
            innermost = False
            q = q.rpartition(".")[0]
        imported = self.names_from.get(path, {}).get(name)
        if imported and self.members.get((path, ""), {}).get(name) is None:
            original = self.renamed.get((path, name), name)
            for target in sorted(imported):
                if _module_name(target) == original:
                    return None  # `from . import cli`: the module, not its `cli` variable
                types = self.variables.get((target, ""), {}).get(original)
                if types:
                    return self.type_of(target, "", types)
        return None

    def attribute(self, cls: SymbolKey, attr: str) -> SymbolKey | None:
        """The class of `instance.attr` for an instance of `cls`, from the first class in its MRO that
        gives the attribute a type."""
        for c in self.mro(cls)[0]:
            given = self.attributes.get(c, {}).get(attr)
            if given:
                scopes = {scope for scope, _ in given}
                scope = min(scopes, key=len)
                return self.type_of(c[0], scope, [t for _, t in given])
        return None

    def callee(self, path: str, scope: str, parts: list[str]) -> SymbolKey | None:
        """What a dotted name being called names: a method of a typed object (`self.m`, `app.m`), or a
        class or function of the repository."""
        if len(parts) > 1:
            owner = self.instance(path, scope, parts[:-1])
            if owner is not None:
                return self.lookup(owner, parts[-1])
        found = self.dotted(path, scope, parts)
        return (found[1], found[2]) if found is not None and found[0] == "sym" else None

    def result(self, path: str, scope: str, called: str) -> SymbolKey | None:
        """The class of what calling `called` gives: an instance of the class it names, or what the
        function or method declares it returns (`def request_context(...) -> RequestContext`)."""
        key = self.callee(path, scope, called.split("."))
        if key is None:
            return None
        kind = self.kind_of.get(key)
        if kind == "class":
            return key
        returns = self.variables.get(key, {}).get("return") if kind in ("function", "method") else None
        return self.type_of(key[0], key[1], returns) if returns else None

    def instance(self, path: str, scope: str, parts: list[str]) -> SymbolKey | None:
        """The class of the object a dotted receiver names (`self`, `app`, `self.session_interface`)."""
        if parts[0] in ("self", "cls"):
            q = _enclosing(self.symbols, path, scope, frozenset({"class"}))
            cls = (path, q) if q is not None else None
        else:
            cls = self.variable(path, scope, parts[0])
        for attr in parts[1:]:
            if cls is None:
                return None
            cls = self.attribute(cls, attr)
        return cls

    # ---- names in modules

    def in_module(self, file: str, name: str, hops: int = 0) -> _Entity | None:
        """What `file.name` is: its own top-level definition, or what it imports under that name."""
        key = (file, name)
        if key in self._in_module_cache:
            return self._in_module_cache[key]
        self._in_module_cache[key] = None  # an import cycle ends here
        found = self._in_module(file, name, hops)
        self._in_module_cache[key] = found
        return found

    def _in_module(self, file: str, name: str, hops: int) -> _Entity | None:
        q = self.members.get((file, ""), {}).get(name)
        if q is not None:
            return ("sym", file, q)
        if hops >= _MAX_HOPS:
            return None
        imported = self.names_from.get(file, {})
        original = self.renamed.get((file, name), name)
        for target in sorted(imported.get(name, ())):
            if _module_name(target) == original:
                return ("mod", target, "")
            found = self.in_module(target, original, hops + 1)
            if found is not None:
                return found
        for target in sorted(imported.get("*", ())):
            found = self.in_module(target, name, hops + 1)
            if found is not None:
                return found
        if file.endswith("/__init__.py"):  # a submodule of a package: `pkg.sub` after `import pkg`
            base = file[: -len("__init__.py")] + name
            for candidate in (base + ".py", base + "/__init__.py"):
                if candidate in self.files:
                    return ("mod", candidate, "")
        return None

    # ---- classes

    def mro(self, cls: SymbolKey,
            visiting: frozenset[SymbolKey] = frozenset()) -> tuple[list[SymbolKey], bool]:
        """The class and its known bases, depth first in order; and whether some base lies outside."""
        cached = self._mro_cache.get(cls)
        if cached is not None:
            return cached
        order, open_ended = [cls], False
        path, qual = cls
        outer = qual.rpartition(".")[0]
        for ref in self.base_refs.get(cls, ()):
            base = self.entity(path, outer, ref.receiver, ref.name)
            if base is None or base[0] != "sym" or self.kind_of.get((base[1], base[2])) != "class":
                open_ended = True
                continue
            key = (base[1], base[2])
            if key in visiting or key == cls:
                continue
            sub, sub_open = self.mro(key, visiting | {cls})
            open_ended = open_ended or sub_open
            order += [k for k in sub if k not in order]
        self._mro_cache[cls] = (order, open_ended)
        return order, open_ended

    def lookup(self, cls: SymbolKey, name: str, *, skip_self: bool = False) -> SymbolKey | None:
        order, _ = self.mro(cls)
        for c in order[1:] if skip_self else order:
            q = self.members.get(c, {}).get(name)
            if q is not None:
                return (c[0], q)
        return None

    # ---- names in scope

    def bare(self, path: str, scope: str, name: str) -> _Entity | None:
        """A bare name: the enclosing functions' definitions (a class body only from inside it), the
        file's top level, then its imports."""
        q, innermost = scope, True
        while q:
            if innermost or self.kind_of.get((path, q)) != "class":
                hit = self.members.get((path, q), {}).get(name)
                if hit is not None:
                    return ("sym", path, hit)
            innermost = False
            q = q.rpartition(".")[0]
        return self.in_module(path, name)

    def member(self, entity: _Entity, name: str) -> _Entity | None:
        kind, path, qual = entity
        if kind == "mod":
            return self.in_module(path, name)
        if self.kind_of.get((path, qual)) == "class":
            hit = self.lookup((path, qual), name)
            return ("sym", hit[0], hit[1]) if hit is not None else None
        return None

    def dotted(self, path: str, scope: str, parts: list[str]) -> _Entity | None:
        entity: _Entity | None = None
        rest = parts[1:]
        plain = self.plain.get(path)
        if plain:
            for k in range(len(parts), 0, -1):
                files = plain.get(".".join(parts[:k]))
                if files:
                    entity, rest = ("mod", files[0], ""), parts[k:]
                    break
        if entity is None:
            entity = self.bare(path, scope, parts[0])
        for part in rest:
            if entity is None:
                return None
            entity = self.member(entity, part)
        return entity

    def entity(self, path: str, scope: str, receiver: str | None, name: str) -> _Entity | None:
        if receiver is None:
            return self.bare(path, scope, name)
        if receiver in ("?", "super"):
            return None
        base = self.dotted(path, scope, receiver.split("."))
        return self.member(base, name) if base is not None else None

    # ---- a reference

    def targets(self, path: str, ref: Reference) -> list[SymbolKey]:
        receiver, scope, name = ref.receiver, ref.scope or "", ref.name
        instance_of: str | None = None  # the class the receiver is an instance (or the class) of
        cls_path = path
        if receiver == "super":
            instance_of = _enclosing(self.symbols, path, scope, frozenset({"class"}))
        elif receiver is not None and receiver != "?" and not receiver.endswith("()"):
            typed = self.instance(path, scope, receiver.split("."))
            if typed is not None:
                cls_path, instance_of = typed
        elif receiver is not None and receiver.endswith("()"):  # `Engine().start()`, `make().start()`
            made = self.result(path, scope, receiver[:-2])
            if made is not None:
                cls_path, instance_of = made
            elif receiver.split(".", 1)[0] in self.external.get(path, ()):
                return []  # `requests_mock.get().x()`: something from outside the repository
            else:
                return self._unique(name)  # a function's result: its type is unknown
        if instance_of is not None:
            hit = self.lookup((cls_path, instance_of), name, skip_self=receiver == "super")
            if hit is not None:
                return [hit]
            if receiver not in ("self", "cls") or self.mro((cls_path, instance_of))[1]:
                # set dynamically (__getattr__), or defined in a base from outside the repository
                return []
            return self._unique(name)  # a mixin calling what the classes it is mixed into define
        found = self.entity(path, scope, receiver, name)
        if found is not None:
            return [(found[1], found[2])] if found[0] == "sym" else []
        if receiver is None and name == "cls":  # `cls(...)` in a classmethod: the class being defined
            method = _enclosing(self.symbols, path, scope, frozenset({"method"}))
            if method is not None and (path, method) in self.symbols.classmethods:
                return [(path, method.rpartition(".")[0])]
            return []
        if receiver is None or receiver == "super":
            return []  # a bare name that is not the repository's: a local, a parameter, a builtin
        head = receiver.split(".", 1)[0]
        if head in self.external.get(path, ()):
            return []  # `os.path.join`, `t.cast`: bound by an import from outside the repository
        parts = receiver.split(".")
        base = self.dotted(path, scope, parts)
        if base is not None:  # a module, class or function of the repository that lacks `name`
            if base[0] == "sym" and self.kind_of.get((base[1], base[2])) not in _NAMESPACES:
                # a module-level constant (`mark = MarkGenerator()`): its class, if it was given one
                cls = self.variable(base[1], "", base[2])
                hit = self.lookup(cls, name) if cls is not None else None
                return [hit] if hit is not None else []
            return []
        if head in self.plain_heads.get(path, ()):
            return []  # `import pkg` then `pkg.a.b.m()`: a chain through the repository that breaks
        known = self.bare(path, scope, head)
        if known is not None and (known[0] == "mod" or self.kind_of.get((known[1], known[2])) in _NAMESPACES):
            # a module or class of the repository that does not define `name`, or a function (decorated
            # into some other object, like a click command, or shadowed by a parameter: either way unknown)
            return []
        return self._unique(name)  # a variable, a parameter, an attribute, a result: its type is unknown

    def _unique(self, name: str) -> list[SymbolKey]:
        hit = self.unique.get(name)
        return [hit] if hit is not None else []


# ---------------------------------------------------------------------------------------------------- go

_GO_TYPE_KINDS = frozenset({"struct", "interface", "type"})
_GO_FUNC_KINDS = frozenset({"function", "method"})
_EXTERNAL = ("", "\0external")  # a type of another module (net/http, testing): nothing of ours runs
_GoType = tuple[str, str]  # (package directory, type name)
# The standard library's interface methods and testing helpers: a call of one on a receiver of unknown
# type is most likely the library's (`w.WriteHeader`, `t.Helper`), never evidence for one of ours.
_GO_STD_METHODS = frozenset({
    "ServeHTTP", "String", "Error", "Unwrap", "Is", "As", "Len", "Less", "Swap", "Header", "WriteHeader",
    "Flush", "Hijack", "Push", "Context", "WithContext", "Value", "Done", "Err", "Deadline", "Lock",
    "Unlock", "RLock", "RUnlock", "Do", "Store", "Load", "Range", "Helper", "Fatal", "Fatalf", "Errorf",
    "Log", "Logf", "Skip", "Skipf", "Cleanup", "Parallel", "Name", "Failed", "FailNow", "ResetTimer",
    "StopTimer", "StartTimer", "ReportAllocs", "Query", "Method", "URL", "Cookie", "FormValue", "Body",
    "Next", "Scan", "Bytes", "Int", "Bool", "Float", "Duration", "Now", "Since", "Sprintf", "Printf",
})


def _go_package_name(module: str) -> str:
    """The name a Go import binds without an alias: the path's last element, skipping a major-version
    suffix (`chi/v5` -> chi, `yaml.v3` -> yaml) and a `go-` prefix (`go-chi` spelled as a package)."""
    parts = [p for p in module.split("/") if p]
    if len(parts) > 1 and re.fullmatch(r"v\d+", parts[-1]):
        parts.pop()
    last = re.sub(r"\.v\d+$", "", parts[-1] if parts else "")
    return last.removeprefix("go-").replace("-", "_")


class _Go:
    """Binds Go references by type: a selector's operand is typed from the method's receiver, the
    function's parameters, `var x T`, `x := T{}` / `&T{}` / `x.(*T)`, `x := f()` (f's declared result) and
    struct fields; a package name resolves to that package's top level. A receiver of a type from outside
    the repository (`t *testing.T`, `r *http.Request`, `p *sync.Pool`) or an external package never links.
    A call through an interface links to the interface's method, not to its implementers. A receiver of
    unknown type links only when the method name is defined once in the repository and is not one of the
    standard library's interface or helper names."""

    def __init__(self, facts: Sequence[FileFacts], symbols: Symbols,
                 resolved: Mapping[str, Mapping[str, list[str]]]) -> None:
        self.symbols = symbols
        self.kind_of = symbols.kind_of
        self.files_in: dict[str, list[str]] = defaultdict(list)
        for f in facts:
            self.files_in[_dir(f.path)].append(f.path)
        self.top: dict[str, dict[str, SymbolKey]] = defaultdict(dict)
        self.methods: dict[_GoType, dict[str, SymbolKey]] = defaultdict(dict)
        method_keys: dict[str, list[SymbolKey]] = defaultdict(list)
        for f in facts:
            d = _dir(f.path)
            for s in f.symbols:
                key = (f.path, s.qualname)
                if s.parent is None:
                    self.top[d].setdefault(s.name, key)
                elif s.kind == "method":
                    self.methods[(d, s.parent)].setdefault(s.name, key)
                    method_keys[s.name].append(key)
        self.unique = {n: keys[0] for n, keys in method_keys.items() if len(keys) == 1
                       and n not in _GO_STD_METHODS and n.lower() not in COMMON_METHOD_NAMES}
        # file -> the name an import binds -> the package directory, or None for another module's package
        self.aliases: dict[str, dict[str, str | None]] = defaultdict(dict)
        for f in facts:
            for imp in f.imports:
                named = [alias for _, alias in imp.aliases]
                alias = named[0] if named else _go_package_name(imp.module)
                if alias in ("_", "."):
                    continue
                files = resolved.get(f.path, {}).get(imp.module)
                self.aliases[f.path][alias] = _dir(files[0]) if files else None
        # (file, scope) -> variable -> [(line, type text)]; (package dir, struct) -> field -> type text
        self.variables: dict[SymbolKey, dict[str, list[tuple[int, str]]]] = defaultdict(
            lambda: defaultdict(list))
        self.fields: dict[_GoType, dict[str, tuple[str, str]]] = defaultdict(dict)
        self.returns: dict[SymbolKey, str] = {}
        for f in facts:
            for ref in f.references:
                if ref.kind == "bind" and ref.receiver:
                    self._add_binding(f.path, ref)
        self._call_cache: dict[tuple[str, str, str], _GoType | None] = {}

    def _add_binding(self, path: str, ref: Reference) -> None:
        scope, type_text = ref.scope or "", ref.receiver or ""
        if ref.name == "return":
            self.returns[(path, scope)] = type_text
            return
        kind = self.kind_of.get((path, scope))
        if kind in _GO_TYPE_KINDS and "." not in scope:
            self.fields[(_dir(path), scope)].setdefault(ref.name, (path, type_text))
            return
        while scope and self.kind_of.get((path, scope)) not in _GO_FUNC_KINDS:
            scope = scope.rpartition(".")[0]  # `var x T` at the top level: a package variable
        self.variables[(path, scope)][ref.name].append((ref.line, type_text))

    # ---- types

    def named_type(self, path: str, text: str) -> _GoType | None:
        """The type a name as written in `path` denotes: `T` of this package, `pkg.T` of an imported one."""
        head, _, rest = text.partition(".")
        if not rest:
            d = _dir(path)
            key = self.top.get(d, {}).get(head)
            return (d, head) if key is not None and self.kind_of.get(key) in _GO_TYPE_KINDS else None
        if head not in self.aliases.get(path, {}):
            return None
        d2 = self.aliases[path][head]
        if d2 is None:
            return _EXTERNAL
        key = self.top.get(d2, {}).get(rest)
        return (d2, rest) if key is not None and self.kind_of.get(key) in _GO_TYPE_KINDS else None

    def type_of(self, path: str, text: str, scope: str, line: int) -> _GoType | None:
        if text.endswith("()"):
            return self.call_result(path, scope, text[:-2], line)
        return self.named_type(path, text)

    def call_result(self, path: str, scope: str, called: str, line: int) -> _GoType | None:
        key = (path, scope, called)
        if key in self._call_cache:
            return self._call_cache[key]
        self._call_cache[key] = None  # `x := x.f()`-style cycles end here
        receiver, _, name = called.rpartition(".")
        hits = self.targets(path, Reference(path, name, line, "call", scope or None, receiver or None))
        result: _GoType | None = None
        if receiver and not hits and self._receiver_type(path, scope, receiver, line) == _EXTERNAL:
            result = _EXTERNAL
        elif not hits and receiver in self.aliases.get(path, {}) and self.aliases[path][receiver] is None:
            result = _EXTERNAL  # `httptest.NewServer()`
        elif len(hits) == 1:
            target = hits[0]
            if self.kind_of.get(target) in _GO_TYPE_KINDS:
                result = (_dir(target[0]), target[1])  # a conversion `T(x)`
            elif target in self.returns:
                result = self.named_type(target[0], self.returns[target])
        self._call_cache[key] = result
        return result

    def variable(self, path: str, scope: str, name: str, line: int) -> _GoType | None:
        """The type of `name` in `scope`: the binding nearest above the use (a closure's parameter
        shadows the function's variable below it), else a package variable."""
        q = scope
        while True:
            given = self.variables.get((path, q), {}).get(name)
            if given:
                before = [g for g in given if g[0] < line] or [g for g in given if g[0] == line]
                if not before:
                    return None
                last = max(g[0] for g in before)
                # `x, err := f()`: the typed binding of the line wins over the untyped one of the same name
                texts = {t for ln, t in before if ln == last}
                types = {self.type_of(path, t, q, last) for t in (texts - {"?"} or texts)}
                return types.pop() if len(types) == 1 else None
            if not q:
                break
            q = q.rpartition(".")[0]
        for other in self.files_in.get(_dir(path), ()):
            given = self.variables.get((other, ""), {}).get(name)
            if given:
                types = {self.type_of(other, t, "", ln) for ln, t in given}
                return types.pop() if len(types) == 1 else None
        return None

    def is_local(self, path: str, scope: str, name: str, line: int) -> bool:
        q = scope
        while q:
            if any(ln <= line for ln, _ in self.variables.get((path, q), {}).get(name, ())):
                return True
            q = q.rpartition(".")[0]
        return False

    def field(self, typ: _GoType, name: str) -> _GoType | None:
        if typ == _EXTERNAL:
            return _EXTERNAL
        given = self.fields.get(typ, {}).get(name)
        return self.named_type(given[0], given[1]) if given else None

    def _receiver_type(self, path: str, scope: str, receiver: str, line: int) -> _GoType | None:
        if receiver.endswith("()"):
            return self.call_result(path, scope, receiver[:-2], line)
        parts = receiver.split(".")
        head = parts[0]
        typ = self.variable(path, scope, head, line)
        rest = parts[1:]
        if typ is None:
            aliases = self.aliases.get(path, {})
            if head in aliases:
                if aliases[head] is None:
                    return _EXTERNAL
                if not rest:
                    return None
                d2, rest = aliases[head] or "", rest[1:]
                typ = next((self.variable(f, "", parts[1], 0) for f in self.files_in.get(d2, ())), None)
            else:
                typ = self.named_type(path, head)  # `T.Method`: a method expression
        for part in rest:
            if typ is None or typ == _EXTERNAL:
                return typ
            typ = self.field(typ, part)
        return typ

    # ---- a reference

    def targets(self, path: str, ref: Reference) -> list[SymbolKey]:
        receiver, scope, name = ref.receiver, ref.scope or "", ref.name
        if receiver is None:  # Go names another package's members only through its name
            if self.is_local(path, scope, name, ref.line):
                return []  # `for endpoints := range ...`: a local shadowing the package's type
            hit = self.top.get(_dir(path), {}).get(name)
            return [hit] if hit is not None else []
        if receiver == "?":
            return self._unique(name)
        aliases = self.aliases.get(path, {})
        if receiver in aliases and not self.is_local(path, scope, receiver, ref.line):
            d2 = aliases[receiver]
            hit = self.top.get(d2, {}).get(name) if d2 is not None else None
            return [hit] if hit is not None else []
        typ = self._receiver_type(path, scope, receiver, ref.line)
        if typ is None:
            return self._unique(name)  # a local or a field of unknown type
        if typ == _EXTERNAL:
            return []
        hit = self.methods.get(typ, {}).get(name)
        return [hit] if hit is not None else []  # a field holding a func, or a method of an embedded type

    def _unique(self, name: str) -> list[SymbolKey]:
        hit = self.unique.get(name)
        return [hit] if hit is not None else []


# ----------------------------------------------------------------------------------------- every language


def resolve_references(
    facts: Sequence[FileFacts], symbols: Symbols, depends_on: Mapping[str, list[str]],
    resolved: Mapping[str, Mapping[str, list[str]]],
) -> dict[SymbolKey, Counter[SymbolKey]]:
    """Link each reference to the symbols it names (see the module docstring for how, per language)."""
    family = {f.path: FAMILY.get(f.file.language or "") for f in facts}
    package_of = {f.path: _dir(f.path) for f in facts if family[f.path] in ("go", "jvm")}
    by_name, files_defining = symbols.by_name, symbols.files_defining
    same_package: dict[str, set[str]] = defaultdict(set)
    for p, d in package_of.items():
        same_package[d].add(p)
    # file -> imported name -> the files that import resolved to ("from .app import Flask")
    names_from: dict[str, dict[str, set[str]]] = defaultdict(lambda: defaultdict(set))
    renamed: dict[tuple[str, str], str] = {}  # (file, alias) -> the name imported under it
    for f in facts:
        for imp in f.imports:
            files = resolved.get(f.path, {}).get(imp.module, ())
            for name in imp.names:
                names_from[f.path][name].update(files)
            for name, alias in imp.aliases:
                if name in imp.names and renamed.setdefault((f.path, alias), name) == name:
                    names_from[f.path][alias].update(files)
                else:  # one alias for two names (`... as cls` in two functions): neither is trusted
                    renamed[(f.path, alias)] = ""
    python = _Python([f for f in facts if family[f.path] == "python"], symbols, names_from, renamed,
                     resolved) if any(fam == "python" for fam in family.values()) else None
    go_facts = [f for f in facts if family[f.path] == "go"]
    go = _Go(go_facts, symbols, resolved) if go_facts else None
    rust_facts = [f for f in facts if family[f.path] == "rust"]
    rust = RustBinder(rust_facts, resolved) if rust_facts else None
    typed: dict[str, ClassBinder | RustBinder] = {"rust": rust} if rust is not None else {}
    for fam_name, languages in (("jvm", ("java",)), ("js", ("javascript", "typescript", "tsx"))):
        members = [f for f in facts if f.file.language in languages]
        if members:
            binder = ClassBinder(members, resolved, fam_name)
            for lang in languages:
                typed[lang] = binder

    loose_facts = [f for f in facts if f.file.language in LOOSE_LANGUAGES]
    loose = LooseBinder(loose_facts, resolved, COMMON_METHOD_NAMES) if loose_facts else None

    calls: dict[SymbolKey, Counter[SymbolKey]] = defaultdict(Counter)
    for f in facts:
        fam = family[f.path]
        imported = set(depends_on.get(f.path, ()))
        if f.path in package_of:
            imported |= same_package[package_of[f.path]]
        by_name_in_file = functools.partial(
            _linked, cache={}, path=f.path, fam=fam, imported=imported, by_name=by_name, family=family,
            names_from=names_from, files_defining=files_defining)
        bound: dict[tuple[str | None, str | None, str], list[SymbolKey]] = {}  # the same use, once a file
        for ref in f.references:
            if ref.kind == "bind":
                continue  # what a name holds, not a use: its annotation or call is a reference of its own
            if fam == "python" and python is not None:
                use = (ref.scope, ref.receiver, ref.name)
                found = bound.get(use)
                if found is None:
                    found = bound[use] = python.targets(f.path, ref)
                targets = found
            elif fam == "go" and go is not None:
                use = (ref.scope, ref.receiver, ref.name)
                found = bound.get(use)
                if found is None or ref.receiver not in (None, "?"):
                    found = bound[use] = go.targets(f.path, ref)  # a variable's type depends on the line
                targets = found
            elif (binder_of := typed.get(f.file.language or "")) is not None:
                # a variable's type, and which local shadows a name, depend on the line: no memo
                targets = binder_of.targets(f.path, ref)
            elif loose is not None and f.file.language in LOOSE_LANGUAGES \
                    and (bound_here := loose.loose_targets(f.path, ref)) is not None:
                targets = bound_here
            elif loose is not None and f.file.language in LOOSE_LANGUAGES:
                # a bare name not in scope: by name, as below, within the language's rules (by_name)
                targets = [t for t in by_name_in_file(ref.name) if loose.by_name(f.path, ref, t)]
            else:
                own = _own_member(symbols, f.path, ref) if ref.receiver in ("this", "self") else None
                targets = [own] if own is not None else by_name_in_file(ref.name)
            source = (f.path, ref.scope or "")
            for target in targets:
                if target != source:
                    calls[source][target] += 1
    return calls


def _linked(name: str, *, cache: dict[str, list[SymbolKey]], path: str, fam: str | None, imported: set[str],
            by_name: Mapping[str, list[SymbolKey]], family: Mapping[str, str | None],
            names_from: Mapping[str, Mapping[str, set[str]]], files_defining: Mapping[str, int]
            ) -> list[SymbolKey]:
    """_link's targets for `name` in the file at `path`: they depend on the file and the name only, so a file
    asks once per name (`cache` is the file's)."""
    found = cache.get(name)
    if found is None:
        found = cache[name] = _link(name, path, fam=fam, by_name=by_name, family=family, imported=imported,
                                    names_from=names_from,
                                    generic=files_defining.get(name, 0) > COMMON_NAME_FILES)
    return found


def _own_member(symbols: Symbols, path: str, ref: Reference) -> SymbolKey | None:
    """`this.m()` / `self.m()`: the enclosing class's (struct's, impl's) own member `m`, if it has one."""
    cls = _enclosing(symbols, path, ref.scope or "", _CLASS_KINDS)
    if cls is None:
        return None
    q = symbols.members.get((path, cls), {}).get(ref.name)
    return (path, q) if q is not None else None


def _link(name: str, path: str, *, fam: str | None, by_name: Mapping[str, list[SymbolKey]],
          family: Mapping[str, str | None], imported: set[str],
          names_from: Mapping[str, Mapping[str, set[str]]], generic: bool) -> list[SymbolKey]:
    """By name alone: same file, then the imported files (and their re-exports), then a unique name."""
    candidates = [k for k in by_name.get(name, ()) if family.get(k[0]) == fam]
    targets = [k for k in candidates if k[0] == path]
    if targets or generic:
        return targets  # a generic name ("get", "__init__") is trusted only within its own file
    via = set(names_from.get(path, {}).get(name, ()))
    for mid in imported:
        via |= names_from.get(mid, {}).get(name, set())  # one re-export hop
    for pool in (via, imported):
        targets = [k for k in candidates if k[0] in pool]
        if targets and len({p for p, _ in targets}) <= MAX_IMPORTED_CANDIDATES:
            return targets
    return candidates if len(candidates) == 1 else []
