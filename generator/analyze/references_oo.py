"""Java and JavaScript/TypeScript references bound by scope and type, not by name.

Pure: the files' facts and their resolved imports in, a target list per reference out
(generator/analyze/references.py routes Java, JavaScript, TypeScript and TSX references here).

- A bare name is looked up lexically: a local, parameter or type parameter of that name shadows everything
  (no link); then the definitions nested in the enclosing functions; in Java the enclosing classes'
  members, inherited ones included (`m()`, a nested class, a constant); the file's top level (in
  JavaScript/TypeScript the definition of that name nearest above the use, when a file defines it in
  several callbacks); what the file imports (named imports followed through re-exports, Java single-type
  and static imports, `require` destructuring); Java's own package and wildcard imports.
- `new T()`, a type `T`: the class (interface, enum, type) `T` found that way.
- `this.m()` / `super.m()`: the enclosing class's method, else its bases' (resolved like any type).
- `x.m()`: `x`'s type from a typed parameter or variable (`T x`, `x: T`), `x = new T()`, a field's
  declared type (`this.f.m()`, Java's bare `f.m()`), or what a called method declares it returns
  (`T.builder().m()`); `T.m()` is `T`'s static member. A call through an interface links to the
  interface's method, not to its implementers.
- A receiver of unknown type or bound by an import from outside the repository links nowhere.
An honest "no edge" is preferred to a plausible wrong one: a reader follows these links.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Mapping, Sequence

from generator.analyze.facts import FileFacts, Reference
from generator.analyze.resolve import parent_dir as _dir
from generator.analyze.resolve import scope_chain as _scopes

__all__ = ["ClassBinder"]

_Key = tuple[str, str]  # (path, qualname)
# ("sym", path, qual): a definition; ("obj", path, qual): an instance of the class (path, qual);
# ("ext", "", ""): something from outside the repository
_Entity = tuple[str, str, str]
_EXTERNAL: _Entity = ("ext", "", "")
_TYPE_KINDS = frozenset({"class", "interface", "enum", "type", "struct", "trait"})
_FUNC_KINDS = frozenset({"function", "method"})
_MAX_HOPS = 4
Call = tuple[str, tuple[str, ...]] | None  # (the calling file, its arguments' shown types: Reference.args)
# the parameter types a literal argument fits
_NUMBERS = frozenset({"int", "long", "float", "double", "short", "byte", "Integer", "Long", "Float", "Double",
                      "Number"})
_LITERAL_FITS = {
    "String": frozenset({"String", "CharSequence", "Comparable"}), "Class": frozenset({"Class", "Type"}),
    "int": _NUMBERS, "double": frozenset({"double", "Double", "Number"}),
    "char": frozenset({"char", "Character"}), "boolean": frozenset({"boolean", "Boolean"}),
}
_TYPE_PARAMETER_LIKE = frozenset({"T", "E", "K", "V", "R", "U"})  # a generic parameter takes anything


def _package(path: str) -> str:
    """A Java file's package as its directory below the source root: src/main/java/a/b and
    src/test/java/a/b are the same package `a.b`."""
    d = _dir(path) + "/"
    return d.rsplit("/java/", 1)[-1] if "/java/" in d else d.removeprefix("java/")


def _parameters(signature: str, name: str) -> tuple[list[str], bool]:
    """A method's parameter types as written, without type arguments (`Map<K, V> m` -> Map,
    `final @A a.T... xs` -> a.T), and whether the last is variadic."""
    start = signature.find(name + "(")
    if start < 0:
        return [], False
    depth, current, parts = 0, "", []
    for ch in signature[start + len(name) + 1:]:
        if ch in "(<[":
            depth += 1
            continue
        if ch in ")>]":
            if depth == 0:
                break
            depth -= 1
            continue
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
            continue
        if depth == 0:
            current += ch
    if current.strip():
        parts.append(current)
    types = []
    for part in parts:
        words = [w for w in re.sub(r"@\w+(\.\w+)*", " ", part).replace("...", " ").split() if w != "final"]
        types.append(words[-2] if len(words) >= 2 else "")
    return types, "..." in signature[start:]


def _stem(path: str) -> str:
    return path.rsplit("/", 1)[-1].split(".", 1)[0]


class ClassBinder:
    """Binds the references of one language family's files: "jvm" (Java) or "js" (JS/TS)."""

    def __init__(self, facts: Sequence[FileFacts], resolved: Mapping[str, Mapping[str, list[str]]],
                 family: str) -> None:
        self.java = family == "jvm"
        self.files = {f.path for f in facts}
        self.kind: dict[_Key, str] = {}
        self.parent: dict[_Key, str | None] = {}
        # (file, parent or "") -> name -> [(start line, qualname)] in source order
        self.members: dict[_Key, dict[str, list[tuple[int, str]]]] = defaultdict(lambda: defaultdict(list))
        # Java: package -> top-level name -> its first definition
        self.package_types: dict[str, dict[str, _Key]] = defaultdict(dict)
        # method -> (its parameters' type names, whether the last is variadic)
        self.params: dict[_Key, tuple[list[str], bool]] = {}
        self.imported_as: dict[str, dict[str, str]] = defaultdict(dict)  # Java: file -> simple name -> module
        for f in facts:
            for s in f.symbols:
                if s.parent is None:
                    self.package_types[_package(f.path)].setdefault(s.name, (f.path, s.qualname))
                key = (f.path, s.qualname)
                self.kind[key], self.parent[key] = s.kind, s.parent
                if s.kind == "method" and self.java:
                    self.params[key] = _parameters(s.signature, s.name)
                if s.kind != "module":
                    self.members[(f.path, s.parent or "")][s.name].append((s.start_line, s.qualname))
        # file -> name an import binds -> (files, the name in them as a dotted path); () files: external
        self.uses: dict[str, dict[str, tuple[list[str], list[str]]]] = defaultdict(dict)
        self.globs: dict[str, list[str]] = defaultdict(list)  # wildcard imports, re-exports: files
        self.static_globs: dict[str, list[_Key]] = defaultdict(list)  # `import static a.B.*`: classes
        for f in facts:
            for imp in f.imports:
                self.imported_as[f.path].setdefault(imp.module.rsplit(".", 1)[-1], imp.module)
                files = [p for p in resolved.get(f.path, {}).get(imp.module, []) if p in self.files]
                if self.java:
                    self._add_java_import(f.path, imp.module, files)
                else:
                    self._add_js_import(f.path, imp.names, dict(imp.aliases), files)
        self.variables: dict[_Key, dict[str, list[tuple[int, str]]]] = defaultdict(lambda: defaultdict(list))
        self.fields: dict[_Key, dict[str, str]] = defaultdict(dict)
        self.bases: dict[_Key, list[str]] = defaultdict(list)
        self.returns: dict[_Key, str] = {}
        for f in facts:
            for ref in f.references:
                if ref.kind == "bind" and ref.receiver:
                    self._add_binding(f.path, ref)
        self._mro_cache: dict[_Key, list[_Key]] = {}
        self._result_cache: dict[tuple[str, str, str], _Entity | None] = {}
        self._binders: dict[str, dict[str, int]] = {}  # name -> the files that may bind it (_may_bind)
        self._bound_in: dict[str, set[str]] | None = None
        self._globbed_by: dict[str, set[str]] = defaultdict(set)
        self._glob_list: dict[str, int] = {}  # file -> its wildcard imports' list, numbered: shared lists
        self._glob_hits: dict[tuple[int, str, int], _Entity | None] = {}  # (list, name, hops) -> found
        self._glob_order: dict[int, dict[str, int]] = {}  # list -> its targets' positions

    # ---- indexing

    def _add_java_import(self, path: str, module: str, files: list[str]) -> None:
        segments = module.split(".")
        if module.endswith(".*"):
            owner = segments[-2] if len(segments) > 1 else ""
            cls = next(((f, owner) for f in files if _stem(f) == owner), None)
            if cls is not None and len(files) == 1:
                self.static_globs[path].append(cls)  # `import static a.B.*`
            else:
                self.globs[path] += files
            return
        name = segments[-1]
        if not files:
            self.uses[path][name] = ([], [])
            return
        stem = _stem(files[0])
        chain = segments[segments.index(stem):] if stem in segments else [name]
        self.uses[path][name] = (files[:1], chain)

    def _add_js_import(self, path: str, names: Sequence[str], aliases: Mapping[str, str],
                       files: list[str]) -> None:
        if not names:
            self.globs[path] += files  # `export * from`, a bare `require`: its names may be used
            return
        for name in names:
            self.uses[path][aliases.get(name, name)] = (files, [name])

    def _add_binding(self, path: str, ref: Reference) -> None:
        scope, text = ref.scope or "", ref.receiver or ""
        while scope and self.kind.get((path, scope)) not in _FUNC_KINDS | _TYPE_KINDS:
            scope = scope.rpartition(".")[0]  # a Java constant's field: bound in its class
        kind = self.kind.get((path, scope))
        if ref.name == "return":
            self.returns[(path, scope)] = text
        elif kind in _TYPE_KINDS and ref.name == scope.rsplit(".", 1)[-1]:
            self.bases[(path, scope)].append(text)  # `class A extends B`: bound to A's own name
        elif kind in _TYPE_KINDS:
            self.fields[(path, scope)].setdefault(ref.name, text)
        elif ref.name.startswith("this.") and "." not in ref.name[5:]:
            cls = self.enclosing_class(path, scope)
            if cls is not None:
                self.fields[cls].setdefault(ref.name[5:], text)
        else:
            self.variables[(path, scope)][ref.name].append((ref.line, text))

    # ---- definitions

    def member(self, owner: _Key, name: str, line: int = 0, args: Call = None) -> _Key | None:
        """The definition `name` directly inside `owner` (a file's top level when its qualname is "");
        of Java's overloads the one `args` fit (see _overload); in JavaScript/TypeScript the one nearest
        above `line` when several share the name."""
        found = self.members.get(owner, {}).get(name)
        if not found:
            return None
        if args is not None and len(found) > 1:
            return (owner[0], self._overload(owner[0], [q for _, q in found], args))
        if not self.java and line and len(found) > 1:
            above = [q for ln, q in found if ln <= line]
            return (owner[0], above[-1] if above else found[0][1])
        return (owner[0], found[0][1])

    def _overload(self, path: str, overloads: list[str], call: tuple[str, tuple[str, ...]]) -> str:
        """Of a method's overloads, the first whose parameters the call's arguments fit, by number and by
        the types their syntax shows (a string literal, `X.class`, `new T()`, a cast), one taking exactly
        that many arguments before a variadic one; the first overload when none fits."""
        caller, args = call
        fitting: list[tuple[bool, str]] = []
        for q in overloads:
            params, variadic = self.params.get((path, q), ([], False))
            fixed = params[:-1] if variadic else params
            if len(args) != len(params) and not (variadic and len(args) >= len(fixed)):
                continue
            if all(self._fits(caller, a, path, p) for a, p in zip(args, fixed, strict=False)):
                fitting.append((len(args) != len(params) or variadic, q))
        return min(fitting, key=lambda f: f[0])[1] if fitting else overloads[0]

    def _fits(self, caller: str, arg: str, callee: str, param: str) -> bool:
        simple = param.rsplit(".", 1)[-1]
        if not arg or simple == "Object" or simple in _TYPE_PARAMETER_LIKE:
            return True
        if arg in _LITERAL_FITS:
            return simple in _LITERAL_FITS[arg]
        given = self.resolve_type(caller, "", arg, 0)
        if given is not None and given[0] == "sym":  # a class of the repository: it or one of its bases
            return simple in {q.rsplit(".", 1)[-1] for _, q in self.mro((given[1], given[2]))}
        if arg.rsplit(".", 1)[-1] != simple:
            return False
        ours = arg if "." in arg else self.imported_as[caller].get(arg)
        theirs = param if "." in param else self.imported_as[callee].get(param)
        return ours is None or theirs is None or ours == theirs  # javax's TypeVariable is not reflect's

    def enclosing_class(self, path: str, scope: str) -> _Key | None:
        for q in _scopes(scope):
            if self.kind.get((path, q)) in _TYPE_KINDS:
                return (path, q)
        return None

    def mro(self, cls: _Key) -> list[_Key]:
        """The class and its bases of the repository, depth first."""
        cached = self._mro_cache.get(cls)
        if cached is not None:
            return cached
        self._mro_cache[cls] = [cls]  # a cycle ends here
        order = [cls]
        outer = cls[1].rpartition(".")[0]
        for text in self.bases.get(cls, ()):
            base = self.resolve_type(cls[0], outer, text, 0)
            if base is not None and base[0] == "sym":
                order += [k for k in self.mro((base[1], base[2])) if k not in order]
        self._mro_cache[cls] = order
        return order

    def lookup(self, cls: _Key, name: str, *, skip_self: bool = False, args: Call = None) -> _Key | None:
        order = self.mro(cls)
        for c in order[1:] if skip_self else order:
            hit = self.member(c, name, 0, args)
            if hit is not None:
                return hit
        return None

    def _may_bind(self, name: str) -> dict[str, int]:
        """The files whose in_module may find `name`, each with the fewest wildcard hops it takes them
        (a superset): 0 for those that define it at their top level or import it by name, and those
        with a static wildcard import; n + 1 for the files that wildcard-import one at n. A wildcard
        search visits only the files that can reach the name within the hops it has left: without this
        a name the repository never defines (Kotlin's `println`, `listOf`) walked every globbed file at
        every hop, for every file using it (minutes on a large Kotlin repository whose files all
        `import a.b.*` one another), and a name it does define walked the files that cannot reach it."""
        found = self._binders.get(name)
        if found is not None:
            return found
        if self._bound_in is None:  # indexed on first use: a subclass's __init__ may add members
            self._bound_in = defaultdict(set)
            for (path, owner), names in self.members.items():
                for n in names if not owner else ():
                    self._bound_in[n].add(path)
            for path, used in self.uses.items():
                for n in used:
                    self._bound_in[n].add(path)
            numbers: dict[tuple[str, ...], int] = {}
            for path, targets in self.globs.items():
                number = self._glob_list[path] = numbers.setdefault(tuple(targets), len(numbers))
                self._glob_order.setdefault(number, {t: i for i, t in reversed(list(enumerate(targets)))})
                for target in targets:
                    self._globbed_by[target].add(path)
        # `import static a.B.*` may find any name among B's members and its bases' (and resolving those
        # bases has effects on caches a skipped search must not lack): such files always search
        found = dict.fromkeys([*self._bound_in.get(name, ()), *self.static_globs], 0)
        layer = list(found)
        for hops in range(1, _MAX_HOPS):  # a search at hops 0 visits its globs at 1: they have 3 left
            layer = list(dict.fromkeys(user for path in layer for user in self._globbed_by.get(path, ())
                                       if user not in found))
            found.update(dict.fromkeys(layer, hops))
        self._binders[name] = found
        return found

    def in_module(self, file: str, name: str, line: int = 0, hops: int = 0,
                  args: Call = None) -> _Entity | None:
        """`name` at the top level of `file`: its own definition, or what it imports under that name."""
        hit = self.member((file, ""), name, line)
        if hit is not None:
            return ("sym", *hit)
        used = self.uses.get(file, {}).get(name)
        if used is not None:
            files, chain = used
            if not files:
                return _EXTERNAL
            for target in files:
                found = self.in_module(target, chain[0], 0, hops + 1) if hops < _MAX_HOPS else None
                for n, part in enumerate(chain[1:], 2):
                    if found is None or found[0] != "sym":
                        break
                    sub = self.lookup((found[1], found[2]), part, args=args if n == len(chain) else None)
                    found = ("sym", *sub) if sub is not None else None
                if found is not None:
                    return found
            return None
        for cls in self.static_globs.get(file, ()):
            sub = self.lookup(cls, name, args=args)
            if sub is not None:
                return ("sym", *sub)
        if hops == 0 and (own := self.own_package(file, name)) is not None:
            # Java and Kotlin look in the file's own package before its wildcard imports: a name both
            # define is the package's
            return own
        if hops < _MAX_HOPS and self.globs.get(file) and (binders := self._may_bind(name)):
            # what the wildcard imports find depends on their list alone, not on the importing file nor
            # the line: the files of one package often share the list
            memo = (self._glob_list[file], name, hops)
            if memo not in self._glob_hits:
                left = _MAX_HOPS - hops - 1  # what a target has left: one farther from the name finds None
                # the targets that can reach the name, in the list's order (the searches fill caches and
                # cut cycles, so the order is kept): intersected in C, since a package's wildcard list
                # is long and the name's binders are mostly elsewhere (a Kotlin repository spent seconds
                # walking the lists)
                order = self._glob_order[memo[0]]
                reach = sorted((t for t in binders.keys() & order.keys() if binders[t] <= left),
                               key=order.__getitem__)
                hits = {found for target in reach
                        if (found := self.in_module(target, name, 0, hops + 1)) is not None
                        and found[0] == "sym"}
                self._glob_hits[memo] = hits.pop() if len(hits) == 1 else None
            through = self._glob_hits[memo]
            if through is not None:
                return through
        return None

    def own_package(self, file: str, name: str) -> _Entity | None:
        """`name` defined at the top level of another file of `file`'s package (Java's classes)."""
        if not self.java:
            return None
        hit = self.package_types.get(_package(file), {}).get(name)
        return ("sym", *hit) if hit is not None and hit[0] != file else None

    def is_local(self, path: str, scope: str, name: str, line: int) -> bool:
        return any(ln <= line for q in _scopes(scope)
                   for ln, _ in self.variables.get((path, q), {}).get(name, ()))

    def bare(self, path: str, scope: str, name: str, line: int, args: Call = None) -> _Entity | None:
        """A name used on its own, looked up lexically (see the module docstring)."""
        if self.is_local(path, scope, name, line):
            return None
        for q in _scopes(scope):
            key = (path, q)
            if self.kind.get(key) in _TYPE_KINDS:
                if self.java:
                    hit = self.lookup(key, name, args=args)
                    if hit is not None:
                        return ("sym", *hit)
                continue  # a JavaScript class's members are reached through `this` only
            hit = self.member(key, name, line)
            if hit is not None:
                return ("sym", *hit)
        return self.in_module(path, name, line, args=args)

    def resolve_type(self, path: str, scope: str, text: str, line: int) -> _Entity | None:
        """The class a type as written (`T`, `Outer.Inner`, `pkg.T`) denotes in `scope`."""
        parts = text.split(".")
        found = self.bare(path, scope, parts[0], line)
        for part in parts[1:]:
            if found is None or found[0] != "sym":
                return found
            sub = self.lookup((found[1], found[2]), part)
            found = ("sym", *sub) if sub is not None else None
        if found is not None and found[0] == "sym" and self.kind.get((found[1], found[2])) not in _TYPE_KINDS:
            return None
        return found

    # ---- values

    def variable(self, path: str, scope: str, name: str, line: int) -> _Entity | None:
        """The type of a local, parameter or top-level variable: its binding nearest above the use."""
        for q in [*_scopes(scope), ""]:
            given = self.variables.get((path, q), {}).get(name)
            if given:
                before = [g for g in given if g[0] <= line]
                if not before:
                    return None
                last = max(g[0] for g in before)
                texts = {t for ln, t in before if ln == last}
                types = {self.instance(path, q, t, last) for t in (texts - {"?"} or texts)}
                return types.pop() if len(types) == 1 else None
        return None

    def instance(self, path: str, scope: str, text: str, line: int) -> _Entity | None:
        """An instance of the type written `text`."""
        if text == "?":
            return None
        if text.endswith("()"):  # `x = f()`: what f declares it returns
            return self.call_result(path, scope, text[:-2], line) if text != "?()" else None
        typ = self.resolve_type(path, scope, text, line)
        return ("obj", typ[1], typ[2]) if typ is not None and typ[0] == "sym" else typ

    def field(self, obj: _Entity, name: str) -> _Entity | None:
        if obj[0] == "ext":
            return _EXTERNAL
        cls = (obj[1], obj[2])
        if obj[0] == "sym":  # `T.x`: a nested class or a static field of T
            nested = self.lookup(cls, name)
            if nested is not None and self.kind.get(nested) in _TYPE_KINDS:
                return ("sym", *nested)
        for c in self.mro(cls):
            text = self.fields.get(c, {}).get(name)
            if text is not None:
                return self.instance(c[0], c[1], text, 0)
        return None

    def call_result(self, path: str, scope: str, called: str, line: int) -> _Entity | None:
        """What calling `called` gives: an instance of the class it constructs, or of the type the
        method or function declares it returns."""
        key = (path, scope, called)
        if key in self._result_cache:
            return self._result_cache[key]
        self._result_cache[key] = None  # cycles end here
        receiver, _, name = called.rpartition(".")
        targets, external = self._targets(path, Reference(path, name, line, "call", scope or None,
                                                          receiver or None))
        result: _Entity | None = _EXTERNAL if external else None
        if len(targets) == 1:
            target = targets[0]
            if self.kind.get(target) in _TYPE_KINDS:
                result = ("obj", *target)
            elif target in self.returns:
                result = self.instance(target[0], target[1], self.returns[target], 0)
        self._result_cache[key] = result
        return result

    def receiver(self, path: str, scope: str, receiver: str, line: int) -> _Entity | None:
        """What a member is accessed on: an instance ("obj"), a class ("sym", static access), outside."""
        if receiver.endswith("()"):
            return self.call_result(path, scope, receiver[:-2], line)
        parts = receiver.split(".")
        head = parts[0]
        entity: _Entity | None
        if head == "this":
            cls = self.enclosing_class(path, scope)
            entity = ("obj", *cls) if cls is not None else None
        elif self.is_local(path, scope, head, line):
            entity = self.variable(path, scope, head, line)
        else:
            entity = None
            cls = self.enclosing_class(path, scope) if self.java else None
            if cls is not None:  # Java: a field of the enclosing class, named without `this.`
                entity = self.field(("obj", *cls), head)
            if entity is None and self.variables.get((path, ""), {}).get(head):
                entity = self.variable(path, "", head, line)  # a top-level `const x = new T()`
            elif entity is None:
                entity = self.bare(path, scope, head, line)
                if entity is not None and entity[0] == "sym" \
                        and self.kind.get((entity[1], entity[2])) not in _TYPE_KINDS:
                    entity = None  # a function used as an object (`fn.call()`), a constant
        for part in parts[1:]:
            if entity is None or entity[0] == "ext":
                return entity
            entity = self.field(entity, part)
        return entity

    # ---- a reference

    def targets(self, path: str, ref: Reference) -> list[_Key]:
        return self._targets(path, ref)[0]

    def _targets(self, path: str, ref: Reference) -> tuple[list[_Key], bool]:
        """The definitions `ref` names, and whether it names something from outside the repository."""
        receiver, scope, name = ref.receiver, ref.scope or "", ref.name
        call = (path, ref.args) if ref.args is not None else None
        if receiver == "?":
            return [], False
        if receiver is None:
            found = self.bare(path, scope, name, ref.line, call)
            if found is None or found[0] != "sym":
                return [], found is not None
            key = (found[1], found[2])
            kind = self.kind.get(key)
            if kind == "method" and name == key[1].rpartition(".")[0].rsplit(".", 1)[-1]:
                return [(key[0], key[1].rpartition(".")[0])], False  # a constructor's name: its class
            if self.java and ref.kind == "name" and kind in _FUNC_KINDS:
                return [], False  # a variable or field of that name, not the method
            return [key], False
        if receiver == "super":
            cls = self.enclosing_class(path, scope)
            hit = self.lookup(cls, name, skip_self=True, args=call) if cls is not None else None
            return ([hit] if hit is not None else []), False
        entity = self.receiver(path, scope, receiver, ref.line)
        if entity is None or entity[0] == "ext":
            return [], entity is not None
        hit = self.lookup((entity[1], entity[2]), name, args=call)
        if hit is None:
            return [], False
        if self.kind.get(hit) == "method" and name == hit[1].rpartition(".")[0].rsplit(".", 1)[-1]:
            return [(hit[0], hit[1].rpartition(".")[0])], False  # `new Outer.Inner()`: the class
        return [hit], False
