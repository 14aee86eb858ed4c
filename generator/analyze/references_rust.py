"""Rust references bound by type: which definition of the repository a call or a type name in Rust names.

Pure: the Rust files' facts and their resolved `use` imports in, a target list per reference out
(generator/analyze/references.py routes Rust references here).

- A bare name (`f()`, `Quoted(..)`, a type `DirEntry`) is the enclosing functions' and modules' own item,
  the file's top level, what a `use` binds (followed to the file the path resolves to), or an item of a
  glob-imported module of the repository; a name none of these define (a local, a prelude name, a generic
  parameter) links nowhere.
- A path `T::f` / `Self::f` / `module::f`: the method `f` of the type `T` (its inherent or trait impls), of
  the trait `T` (a call through a trait links to the trait's declaration, not to every impl), or the item
  `f` of a module of the repository. A path into another crate (`io::Error::new`, `Box::new`) never links.
- A method call `x.f()`: the type of `x` from `self` (the impl's type), a typed parameter, a `let` with a
  type or a value whose type is known (`T::new(..)` when `new` declares it returns `Self` or `T`, `T {..}`),
  or a struct field's declared type (`self.opts.f()`); the method of that type. A receiver of unknown type
  or of a type from outside the repository (`Vec`, `PathBuf`) never links.
- A macro `m!` links to the repository's `macro_rules! m` (by name: macros are textually scoped).
An honest "no edge" is preferred to a plausible wrong one: a reader follows these links.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from generator.analyze.facts import FileFacts, Reference
from generator.analyze.resolve import parent_dir as _dir
from generator.analyze.resolve import scope_chain as _scopes

__all__ = ["RustBinder"]

_Key = tuple[str, str]  # (path, qualname)
_Entity = tuple[str, str, str]  # ("sym", path, qualname) | ("mod", path, "") | _EXTERNAL
_EXTERNAL: _Entity = ("ext", "", "")
_TYPE_KINDS = frozenset({"struct", "enum", "trait", "type"})
_BLOCK_KINDS = frozenset({"function", "method", "module"})
_CRATE_ROOTS = ("lib.rs", "main.rs")
# Names every Rust file may use without a `use`: the prelude's types and traits and the primitive types.
# They are the standard library's even when the repository defines an item of the same name elsewhere.
_PRELUDE = frozenset({
    "Box", "Vec", "String", "Option", "Some", "None", "Result", "Ok", "Err", "Self", "Clone", "Copy",
    "Default", "Drop", "Eq", "PartialEq", "Ord", "PartialOrd", "Fn", "FnMut", "FnOnce", "From", "Into",
    "Iterator", "IntoIterator", "Send", "Sync", "Sized", "ToString", "ToOwned", "AsRef", "AsMut",
    "DoubleEndedIterator", "ExactSizeIterator", "Extend", "TryFrom", "TryInto", "FromIterator",
    "str", "char", "bool", "u8", "u16", "u32", "u64", "u128", "usize", "i8", "i16", "i32", "i64",
    "i128", "isize", "f32", "f64",
})


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].removesuffix(".rs")


class RustBinder:
    """Binds the references of a repository's Rust files (rules in the module docstring)."""

    def __init__(self, facts: Sequence[FileFacts], resolved: Mapping[str, Mapping[str, list[str]]]) -> None:
        self.files = {f.path for f in facts}
        self.kind: dict[_Key, str] = {}
        self.parent: dict[_Key, str | None] = {}
        self.members: dict[_Key, dict[str, str]] = defaultdict(dict)  # (file, parent or "") -> name -> qual
        # a type's methods may be implemented in another file than the type: by the type's name
        self.methods_named: dict[str, dict[str, _Key]] = defaultdict(dict)
        types_named: dict[str, list[_Key]] = defaultdict(list)
        self.macros: dict[str, list[_Key]] = defaultdict(list)
        for f in facts:
            for s in f.symbols:
                key = (f.path, s.qualname)
                self.kind[key], self.parent[key] = s.kind, s.parent
                self.members[(f.path, s.parent or "")].setdefault(s.name, s.qualname)
                if s.kind in _TYPE_KINDS:
                    types_named[s.name].append(key)
                elif s.kind == "macro":
                    self.macros[s.name].append(key)
                elif s.kind == "method" and s.parent:
                    self.methods_named[s.parent.rsplit(".", 1)[-1]].setdefault(s.name, key)
        self.unique_type = {name for name, keys in types_named.items() if len(keys) == 1}
        # file -> name a `use` binds -> the files it resolved to (empty: another crate)
        self.uses: dict[str, dict[str, tuple[str, list[str]]]] = defaultdict(dict)
        self.globs: dict[str, list[str]] = defaultdict(list)
        for f in facts:
            for imp in f.imports:
                files = [p for p in resolved.get(f.path, {}).get(imp.module, []) if p in self.files]
                self._add_use(f.path, imp.module, imp.names, dict(imp.aliases), files)
        self.variables: dict[_Key, dict[str, list[tuple[int, str]]]] = defaultdict(lambda: defaultdict(list))
        self.fields: dict[_Key, dict[str, str]] = defaultdict(dict)
        self.returns: dict[_Key, str] = {}
        for f in facts:
            for ref in f.references:
                if ref.kind == "bind" and ref.receiver:
                    self._add_binding(f.path, ref)
        self._result_cache: dict[tuple[str, str, str], _Entity | None] = {}

    # ---- indexing

    def _add_use(self, path: str, module: str, names: Sequence[str], aliases: Mapping[str, str],
                 files: list[str]) -> None:
        if module.startswith("mod::"):  # `mod foo;`: the child module's file
            self.uses[path][module[5:]] = (module[5:], files)
            return
        segments = [s for s in module.split("{", 1)[0].split("::") if s]
        if not names:
            if segments and segments[-1] not in ("self", "super", "crate"):
                original = segments[-1]
                self.uses[path][aliases.get(module, original)] = (original, files)
            return
        for name in names:
            if name == "*":
                self.globs[path] += files
            elif name == "self" and segments:
                self.uses[path][aliases.get("self", segments[-1])] = (segments[-1], files)
            else:
                self.uses[path][aliases.get(name, name)] = (name, files)

    def _add_binding(self, path: str, ref: Reference) -> None:
        scope, text = ref.scope or "", ref.receiver or ""
        if ref.name == "return":
            self.returns[(path, scope)] = text
        elif self.kind.get((path, scope)) in ("struct", "enum"):
            self.fields[(path, scope)].setdefault(ref.name, text)
        else:
            self.variables[(path, scope)][ref.name].append((ref.line, text))

    # ---- names in modules

    def _crate_root(self, path: str) -> str | None:
        d = _dir(path)
        while True:
            for root in _CRATE_ROOTS:
                candidate = f"{d}/{root}" if d else root
                if candidate in self.files:
                    return candidate
            if not d:
                return None
            d = _dir(d)

    def in_module(self, file: str, name: str, hops: int = 0) -> _Entity | None:
        """What `name` is at the top level of module `file`: its own item, or what its `use`s bind."""
        q = self.members.get((file, ""), {}).get(name)
        if q is not None and self.kind.get((file, q)) != "module":
            return ("sym", file, q)
        if q is not None:
            return ("mod", file, q)  # an inline `mod name { .. }`
        used = self.uses.get(file, {}).get(name)
        if used is not None:
            original, files = used
            if not files:
                return _EXTERNAL
            for target in files:
                if hops < 3:
                    found = self.in_module(target, original, hops + 1)
                    if found is not None and found != _EXTERNAL:
                        return found
            for target in files:
                if _stem(target) == original or (_stem(target) == "mod" and _dir(target).endswith(original)):
                    return ("mod", target, "")
            return None
        if name in _PRELUDE:
            return None  # `Ok(..)` is the prelude's even after a `use super::*` in some inner module
        for target in self.globs.get(file, ()):
            q = self.members.get((target, ""), {}).get(name)
            if q is not None:
                return ("sym", target, q)
        return None

    def member(self, entity: _Entity, name: str) -> _Entity | None:
        """`entity::name`: an item of a module, or a method (or associated item) of a type or trait."""
        kind, path, qual = entity
        if kind == "ext":
            return _EXTERNAL
        if kind == "mod":
            if qual:  # an inline module
                q = self.members.get((path, qual), {}).get(name)
                return ("sym", path, q) if q is not None else None
            return self.in_module(path, name)
        hit = self.method((path, qual), name)
        return ("sym", hit[0], hit[1]) if hit is not None else None

    def method(self, typ: _Key, name: str) -> _Key | None:
        """The method `name` of a type (its impls, in its own file first) or of a trait (its declaration)."""
        q = self.members.get(typ, {}).get(name)
        if q is not None:
            return (typ[0], q)
        type_name = typ[1].rsplit(".", 1)[-1]
        if self.kind.get(typ) != "trait" and type_name in self.unique_type:
            return self.methods_named.get(type_name, {}).get(name)
        return None

    def bare(self, path: str, scope: str, name: str) -> _Entity | None:
        """A name used without a path: the enclosing items' own, the file's top level, its imports."""
        for q in _scopes(scope):
            if self.kind.get((path, q)) in _BLOCK_KINDS:  # a nested fn or item, an inline module's item
                hit = self.members.get((path, q), {}).get(name)  # (a sibling method is not in scope)
                if hit is not None:
                    return ("sym", path, hit)
        found = self.in_module(path, name)
        if found is None and name in _PRELUDE:
            return _EXTERNAL
        return found

    def self_type(self, path: str, scope: str) -> _Entity | None:
        """The type `Self` / `self` denotes in `scope`: the type of the impl (or the trait) around it."""
        q = scope
        while q:
            key = (path, q)
            if self.kind.get(key) in _TYPE_KINDS:
                return ("sym", path, q)
            if self.kind.get(key) == "method":
                owner = self.parent.get(key) or ""
                if self.kind.get((path, owner)) in _TYPE_KINDS:
                    return ("sym", path, owner)
                found = self.in_module(path, owner)  # `impl Imported { .. }`
                return found if found is not None else ("sym", path, owner)
            q = q.rpartition(".")[0]
        return None

    def path_entity(self, path: str, scope: str, parts: Sequence[str]) -> _Entity | None:
        """What a path `a::b::c` names."""
        head, rest = parts[0], parts[1:]
        entity: _Entity | None
        if head == "Self":
            entity = self.self_type(path, scope)
        elif head == "crate":
            root = self._crate_root(path)
            entity = ("mod", root, "") if root is not None else None
        elif head == "self":
            entity = ("mod", path, "")
        elif head == "super":
            return None
        else:
            entity = self.bare(path, scope, head)
        for part in rest:
            if entity is None or entity == _EXTERNAL:
                return entity
            entity = self.member(entity, part)
        return entity

    def type_entity(self, path: str, scope: str, text: str) -> _Entity | None:
        """The type a type as written (`Self`, `Opts`, `io::Error`) denotes; None when unknown."""
        entity = self.path_entity(path, scope, text.split("."))
        if entity is None or entity == _EXTERNAL or entity[0] == "ext":
            return entity
        if entity[0] == "sym" and self.kind.get((entity[1], entity[2])) in _TYPE_KINDS:
            return entity
        if entity[0] == "sym" and (entity[1], entity[2]) not in self.kind:
            return entity  # `impl Foreign { .. }`'s type, named but defined elsewhere
        return None

    # ---- values

    def variable(self, path: str, scope: str, name: str, line: int) -> _Entity | None:
        """The type of a local or parameter: its binding nearest above the use (shadowing `let`s)."""
        q = scope
        while q:
            given = self.variables.get((path, q), {}).get(name)
            if given:
                before = [g for g in given if g[0] <= line]
                if not before:
                    return None
                last = max(g[0] for g in before)
                # `let x: T = ..` is also a local of unknown type: the typed binding of the line wins
                texts = {t for ln, t in before if ln == last}
                types = {self.value_type(path, q, t, last) for t in (texts - {"?"} or texts)}
                return types.pop() if len(types) == 1 else None
            q = q.rpartition(".")[0]
        return None

    def is_local(self, path: str, scope: str, name: str, line: int) -> bool:
        given = self.variables
        return any(g[0] <= line for q in _scopes(scope) for g in given.get((path, q), {}).get(name, ()))

    def value_type(self, path: str, scope: str, text: str, line: int) -> _Entity | None:
        if text == "?":
            return None
        if text.endswith("()"):
            return self.call_result(path, scope, text[:-2], line)
        return self.type_entity(path, scope, text)

    def call_result(self, path: str, scope: str, called: str, line: int) -> _Entity | None:
        """The type of what calling `called` gives: a tuple struct's constructor gives the struct; a
        function or method gives what it declares it returns (`-> Self` in an impl: that impl's type)."""
        key = (path, scope, called)
        if key in self._result_cache:
            return self._result_cache[key]
        self._result_cache[key] = None  # `let x = x.f()`-style cycles end here
        receiver, _, name = called.rpartition(".")
        ref = Reference(path, name, line, "call", scope or None, receiver or None)
        targets, external = self._targets(path, ref)
        result: _Entity | None = _EXTERNAL if external else None
        if len(targets) == 1:
            target = targets[0]
            if self.kind.get(target) in _TYPE_KINDS:
                result = ("sym", target[0], target[1])
            elif target in self.returns:
                result = self.type_entity(target[0], target[1], self.returns[target])
        self._result_cache[key] = result
        return result

    def field(self, typ: _Entity, name: str) -> _Entity | None:
        if typ[0] != "sym":
            return _EXTERNAL if typ == _EXTERNAL else None
        key = (typ[1], typ[2])
        text = self.fields.get(key, {}).get(name)
        return self.type_entity(key[0], key[1], text) if text is not None else None

    def receiver_type(self, path: str, scope: str, receiver: str, line: int) -> _Entity | None:
        """The type of the value a method is called on: `self`, a local, a field chain, a call."""
        if receiver.endswith("()"):
            return self.call_result(path, scope, receiver[:-2], line)
        parts = receiver.split(".")
        if parts[0] == "self":
            typ = self.self_type(path, scope)
        else:
            typ = self.variable(path, scope, parts[0], line)
        for part in parts[1:]:
            if typ is None or typ == _EXTERNAL:
                return typ
            typ = self.field(typ, part)
        return typ

    # ---- a reference

    def targets(self, path: str, ref: Reference) -> list[_Key]:
        return self._targets(path, ref)[0]

    def _targets(self, path: str, ref: Reference) -> tuple[list[_Key], bool]:
        """The definitions `ref` names, and whether it names something from outside the repository."""
        receiver, scope, name = ref.receiver, ref.scope or "", ref.name
        if receiver == "?":
            return [], False
        if receiver is None:
            if self.is_local(path, scope, name, ref.line):
                return [], False  # a local (holding a closure), a parameter, a generic parameter
            found = self.bare(path, scope, name)
            if found is None and name in self.macros:
                return self._macro(path, name), False
            return self._entity_keys(found)
        head = receiver.split(".", 1)[0]
        is_value = receiver.endswith("()") or head == "self" or self.is_local(path, scope, head, ref.line)
        if is_value:  # `x.f()`, `self.opts.f()`, `T::new().f()`
            typ = self.receiver_type(path, scope, receiver, ref.line)
            if typ is None or typ[0] != "sym":
                return [], typ == _EXTERNAL
            hit = self.method((typ[1], typ[2]), name)
            return ([hit] if hit is not None else []), False
        base = self.path_entity(path, scope, receiver.split("."))
        if base is None:
            return [], False
        return self._entity_keys(self.member(base, name))

    def _entity_keys(self, found: _Entity | None) -> tuple[list[_Key], bool]:
        if found is None:
            return [], False
        if found[0] == "ext":
            return [], True
        if found[0] == "sym" and (found[1], found[2]) in self.kind:
            return [(found[1], found[2])], False
        return [], False

    def _macro(self, path: str, name: str) -> list[_Key]:
        keys = self.macros[name]
        own = [k for k in keys if k[0] == path]
        return own[:1] if own else keys[:1] if len(keys) == 1 else []


