"""Ruby, PHP, C#, Kotlin and C++ calls bound through the receiver's type, not by the method's name.

Pure: the files' facts and their resolved imports in, a target list per reference out
(generator/analyze/references.py routes these languages' references here). Built on ClassBinder
(generator/analyze/references_oo.py), with what these languages add:

- `self.m` / `this.m()` / `$this->m()` / `self::m()` / `static::m()` / `this->m()`: the enclosing class's
  method, else its bases' (superclasses, interfaces, Ruby's `include`d modules, PHP's traits);
  `super` / `parent::m()`: the bases' only. A C++ method defined out of line (`void Logger::flush()`)
  belongs to its class wherever the class is declared.
- `x.m()`: `x`'s type from a typed parameter, local or field (`T x`, `T* p`, `x: T`, `Loader $x`,
  `std::unique_ptr<T> p`), `x = T.new` / `new T()` / `T()` / `var x = new T()`, or a declared return
  type; a field named without `this` in C#, Kotlin and C++ (`_sink.Emit()`), Ruby's `@x.m`.
- `T.m` / `T::m()` / `Klass.new.m`: `T`'s member, `T` found lexically, through the file's imports, or as
  the only type of that name in the repository (a type reopened in several files, Ruby's `module Rack`,
  is one type).
- A receiver of unknown type links only to a method name defined on exactly one type of the language in
  the repository, and not one the language's standard types answer to (`to_s`, `ToString`, `size`) or
  every library reuses; a known type without that method links nowhere (it may come from a base outside
  the repository).
- Kotlin's extension functions (`fun RawOption.flag()`) and C#'s extension methods (`F(this Parser p)`):
  a call on the receiver's type or a base of it. Inside a Kotlin extension (named `RawOption.flag` by
  parse.py), `this` and a bare name are first the receiver type's, as inside a method of that type. A
  capitalised receiver that names nothing of the repository (`Enumerable.Empty()`, `File.read`) is a type
  from outside: no edge.
- A bare name is looked up in the enclosing classes (in PHP only through `$this`), the file and its
  imports, then as the only type or top-level function of that name (in the file's directory first);
  what is not found there is left to the name-based linking of references.py (None), which then links
  to a method only a Ruby call (see by_name).
An honest "no edge" is preferred to a plausible wrong one: a reader follows these links.
"""

from __future__ import annotations

import posixpath
import re
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import replace

from generator.analyze.facts import FileFacts, Reference
from generator.analyze.references_oo import ClassBinder
from generator.analyze.resolve import parent_dir as _dir
from generator.analyze.resolve import scope_chain as _scopes

__all__ = ["LOOSE_LANGUAGES", "LooseBinder"]

_Key = tuple[str, str]
_Entity = tuple[str, str, str]
LOOSE_LANGUAGES = frozenset({"ruby", "php", "csharp", "kotlin", "cpp"})
_TYPE_KINDS = frozenset({"class", "interface", "enum", "type", "struct", "trait"})
# where a bare name inside a class may be one of its methods (PHP reaches them through $this only)
_IMPLICIT_THIS = frozenset({"ruby", "csharp", "kotlin", "cpp"})
_SELF = frozenset({"this", "self", "static"})
_OUTSIDE: _Entity = ("ext", "", "")


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


# what every Ruby class and object answers to without a receiver (Module's and Kernel's methods)
_RUBY_KERNEL = _words("""
    include extend prepend require require_relative load attr_reader attr_writer attr_accessor private
    protected public module_function define_method alias_method raise fail puts print p pp loop lambda
    proc format sprintf catch throw sleep rand srand exit abort at_exit warn freeze autoload
    """)
_CS_EXTENSION = re.compile(r"\(\s*this\s+([\w.]+)")  # C#'s `static T F(this Parser p)`
_EXTENSION = re.compile(r"\bfun\s+(?:<[^>]*>\s*)?([\w.]+)(?:<[^>]*>)?\??\.(\w+)\s*[(<]")
# Methods the standard types of each language answer to: a repository class that defines one (overrides
# `to_s`, `ToString`, `size`) is not the only candidate for a call on a receiver of unknown type.
_STANDARD_METHODS: dict[str, frozenset[str]] = {
    "ruby": _words("""
        to_s to_str to_h to_hash to_a to_ary to_i to_int to_f to_sym to_proc to_json inspect nil? tap then
        length size count each each_pair each_with_index each_with_object each_key each_value map collect
        select filter reject find detect include? key? has_key? fetch dig merge merge! update keys values
        first last empty? any? all? none? sum min max sort sort_by group_by reduce inject flat_map zip join
        split strip chomp gsub sub match match? == eql? equal? hash freeze frozen? dup clone call read write
        close closed? puts print flush rewind seek pos bytesize encoding force_encoding valid_encoding?
        start_with? end_with? downcase upcase delete push pop shift unshift << [] []= is_a? kind_of?
        instance_of? respond_to? respond_to_missing? method_missing send public_send class name message
        backtrace new lines chars bytes slice compact uniq flatten reverse concat replace clear to_path
        getc gets each_line eof? binmode set_encoding
        """),
    "php": _words("""
        __construct __destruct __toString __get __set __isset __unset __call __callStatic __invoke
        __clone __serialize __unserialize count getIterator offsetGet offsetSet offsetExists offsetUnset
        jsonSerialize current key next rewind valid getMessage getCode getPrevious getTrace format
        """),
    "csharp": _words("""
        ToString Equals GetHashCode GetType Dispose DisposeAsync Add Remove Contains ContainsKey TryGetValue
        Clear Count Select Where First FirstOrDefault Any All ToList ToArray ToDictionary Append Insert
        IndexOf Split Trim Substring StartsWith EndsWith Replace Format Write WriteLine Read ReadLine Flush
        Close GetEnumerator MoveNext Reset Invoke CompareTo Clone Wait ConfigureAwait Get Set Concat Empty
        OrderBy OrderByDescending ThenBy GroupBy Skip Take SkipWhile TakeWhile Aggregate Sum Max Min Zip
        Distinct Union Intersect Except Reverse Single SingleOrDefault Last LastOrDefault Cast OfType
        AsEnumerable SelectMany Join
        """),
    "kotlin": _words("""
        toString equals hashCode let also apply run with takeIf takeUnless map filter forEach first last
        firstOrNull lastOrNull isEmpty isNotEmpty size get set put add remove contains containsKey
        joinToString toList toSet toMap plus minus invoke compareTo copy iterator hasNext next close use
        getValue setValue provideDelegate
        """),
    "cpp": _words("""
        size begin end cbegin cend rbegin rend empty push_back emplace_back pop_back insert emplace erase
        find clear data c_str length at front back reserve resize swap count get reset release lock unlock
        try_lock load store exchange write read flush close open append substr compare str what value
        has_value operator() operator[] operator= operator== operator!= operator< operator<<
        """),
}


class LooseBinder(ClassBinder):
    """Binds the references of the Ruby, PHP, C#, Kotlin and C++ files of a repository."""

    def __init__(self, facts: Sequence[FileFacts], resolved: Mapping[str, Mapping[str, list[str]]],
                 common_names: frozenset[str]) -> None:
        # a Ruby module holds methods and constants like a class, and is reached the same way
        facts = [replace(f, symbols=[replace(s, kind="class") if s.kind == "module" else s
                                     for s in f.symbols]) for f in facts]
        super().__init__(facts, resolved, "loose")
        self.language = {f.path: f.file.language or "" for f in facts}
        self.common = common_names
        # (language, qualname) -> its definitions: a type reopened in several files is one type
        self.same_qual: dict[tuple[str, str], list[_Key]] = defaultdict(list)
        self.types_named: dict[tuple[str, str], list[_Key]] = defaultdict(list)  # (language, name) -> types
        self.functions_named: dict[tuple[str, str], list[_Key]] = defaultdict(list)  # top-level functions
        methods_named: dict[tuple[str, str], set[str]] = defaultdict(set)  # (language, name) -> owners
        self.method_of: dict[tuple[str, str], _Key] = {}
        # Kotlin's extension functions (`fun RawOption.flag()`): name -> [(function, receiver type's name)]
        self.extensions: dict[str, list[tuple[_Key, str]]] = defaultdict(list)
        for f in facts:
            lang = self.language[f.path]
            for s in f.symbols:
                key = (f.path, s.qualname)
                kotlin_function = lang == "kotlin" and s.kind == "function"
                extension = _EXTENSION.search(s.signature) if kotlin_function else None
                if extension is not None and extension.group(2) == s.name:
                    self.extensions[s.name].append((key, extension.group(1).rsplit(".", 1)[-1]))
                this_parameter = _CS_EXTENSION.search(s.signature) if lang == "csharp" else None
                if this_parameter is not None and s.kind == "method":
                    self.extensions[s.name].append((key, this_parameter.group(1).rsplit(".", 1)[-1]))
                if s.kind in _TYPE_KINDS or s.kind == "namespace":
                    self.same_qual[(lang, s.qualname)].append(key)
                if s.kind in _TYPE_KINDS:
                    self.types_named[(lang, s.name)].append(key)
                elif s.kind == "function" and s.parent is None:
                    self.functions_named[(lang, s.name)].append(key)
                elif s.kind == "method" and s.parent:
                    methods_named[(lang, s.name)].add(s.parent.rsplit(".", 1)[-1])
                    self.method_of.setdefault((lang, s.name), key)
        # a method name only one type defines (however many files declare and define it)
        self.unique_method = {k: v for k, v in self.method_of.items()
                              if len(methods_named[k]) == 1 and k[1].lower() not in common_names
                              and k[1] not in _STANDARD_METHODS.get(k[0], ())}
        self.unique_links = 0  # how many references the unique-name rule bound (for measuring)
        self._module_cache: dict[tuple[str, str, int], _Entity | None] = {}
        self._reopened: set[_Key] = set()
        self._nearest: dict[_Key, list[_Key]] = {}
        self._reopened_names: dict[tuple[str, str], set[str]] = {}
        # bindings of "?" at a class's level say nothing about a field: drop them so the typed one counts
        for fields in self.fields.values():
            for name in [n for n, t in fields.items() if t == "?"]:
                del fields[name]
        self._retype_fields(facts)

    def _retype_fields(self, facts: Sequence[FileFacts]) -> None:
        """A field's first typed binding wins over an earlier untyped one (`val x: T = ...` binds both);
        a PHP constructor's typed parameter types the property of its name (promoted, or assigned
        `$this->x = $x`) when no declaration says otherwise."""
        for f in facts:
            for ref in f.references:
                if ref.kind != "bind" or not ref.receiver or ref.receiver == "?" or "." in ref.name:
                    continue
                scope = ref.scope or ""
                kind = self.kind.get((f.path, scope))
                if kind in _TYPE_KINDS and ref.name != scope.rsplit(".", 1)[-1]:
                    self.fields[(f.path, scope)].setdefault(ref.name, ref.receiver)
                elif self.language[f.path] == "php" and scope.endswith(".__construct"):
                    self.fields[(f.path, scope.rpartition(".")[0])].setdefault(ref.name, ref.receiver)

    # ---- definitions

    def member(self, owner: _Key, name: str, line: int = 0, args: object = None) -> _Key | None:
        hit = super().member(owner, name, 0)  # overloads, not redefinitions: the first (all, see below)
        if hit is not None or not owner[1]:
            return hit
        same = (self.language.get(owner[0], ""), owner[1])
        names = self._reopened_names.get(same)
        if names is None:  # what any of its definitions holds: many namesakes (tests' `Project`) all miss
            names = self._reopened_names[same] = {n for k in self.same_qual.get(same, ())
                                                  for n in self.members.get(k, ())}
        if name not in names:
            return None
        others = self._nearest.get(owner)
        if others is None:  # the same namespace (reopened module, partial class) elsewhere: nearest first
            others = self._nearest[owner] = sorted(
                self.same_qual.get(same, ()), key=lambda k: -len(posixpath.commonpath([k[0], owner[0]])))
        for other in others:
            if other != owner:
                hit = super().member(other, name, 0)
                if hit is not None:
                    return hit
        return None

    def mro(self, cls: _Key) -> list[_Key]:
        order = super().mro(cls)
        reopened = self.same_qual.get((self.language.get(cls[0], ""), cls[1]), ()) if cls[1] else ()
        if len(reopened) > 1 and cls not in self._reopened:
            self._reopened.add(cls)  # the bases a reopened type declares in its other files, once
            for other in reopened:
                if other not in order:
                    order += [k for k in super().mro(other) if k not in order]
        return order

    def named_type(self, path: str, name: str) -> _Entity | None:
        """The type `name` names when nothing in scope does: the only type of that name in the language
        (several definitions of one qualified name count as one), else the one in this file."""
        found = self.types_named.get((self.language.get(path, ""), name), [])
        if not found:
            return None
        if len({q for _, q in found}) == 1:
            # one type reopened in several files (Ruby's modules, C#'s partial classes), or namesakes
            # in separate projects of the repository (two test suites' `Some`): the nearest one
            own = [k for k in found if k[0] == path]
            nearest = max(found, key=lambda k: (len(posixpath.commonpath([k[0], path])), k))
            return ("sym", *(own[0] if own else nearest))
        own = [k for k in found if k[0] == path]
        if own:
            return ("sym", *own[0]) if len(own) == 1 else None
        # the ones the file sees: in its own directory or a file its imports name (`using`, `require`)
        seen = set(self.globs.get(path, ()))
        seen |= {f for files, _ in self.uses.get(path, {}).values() for f in files}
        near = [k for k in found if k[0] in seen or _dir(k[0]) == _dir(path)]
        return ("sym", *near[0]) if len({q for _, q in near}) == 1 else None

    def in_module(self, file: str, name: str, line: int = 0, hops: int = 0,
                  args: object = None) -> _Entity | None:
        # `line` picks among a file's same-named definitions only in JavaScript (ClassBinder.member); this
        # binder's member() ignores it, so a name is looked up once per file, not once per line using it
        key = (file, name, hops)
        if key not in self._module_cache:
            self._module_cache[key] = None  # include cycles end here
            self._module_cache[key] = super().in_module(file, name, 0, hops)
        return self._module_cache[key]

    def bare(self, path: str, scope: str, name: str, line: int, args: object = None) -> _Entity | None:
        if self.is_local(path, scope, name, line):
            return None
        implicit = self.language.get(path) in _IMPLICIT_THIS
        for q in _scopes(scope):
            key = (path, q)
            if self.kind.get(key) in _TYPE_KINDS:
                hit = self.lookup(key, name)
                if hit is not None and (implicit or self.kind.get(hit) in _TYPE_KINDS):
                    return ("sym", *hit)
                continue
            hit = self.member(key, name, line)
            if hit is not None:
                return ("sym", *hit)
        cls = self.enclosing_class(path, scope)
        if implicit and cls is not None and cls[0] != path:  # a C++ method defined out of line
            hit = self.lookup(cls, name)
            if hit is not None:
                return ("sym", *hit)
        found = self.in_module(path, name, line)
        return found if found is not None else self.named_type(path, name) or self._function(path, name)

    def own_package(self, path: str, name: str) -> _Entity | None:
        """A Kotlin file's package (its directory): the one top-level type or function of that name in
        another file there, which Kotlin finds before what a star import brings (a nested type needs its
        outer one's name)."""
        if self.language.get(path) != "kotlin":
            return None
        key = (self.language[path], name)
        near = {k for k in self.types_named.get(key, []) + self.functions_named.get(key, [])
                if k[0] != path and _dir(k[0]) == _dir(path) and self.parent.get(k) is None}
        return ("sym", *near.pop()) if len({q for _, q in near}) == 1 and len(near) == 1 else None

    def _function(self, path: str, name: str) -> _Entity | None:
        """A top-level function of another file: the only one of that name in the file's directory (a
        Kotlin package, a C# namespace's folder), else in the language."""
        found = self.functions_named.get((self.language.get(path, ""), name), [])
        near = [k for k in found if _dir(k[0]) == _dir(path)]
        for pool in (near, found):
            if len(pool) == 1:
                return ("sym", *pool[0])
            if pool:
                return None
        return None

    def resolve_type(self, path: str, scope: str, text: str, line: int) -> _Entity | None:
        if text in _SELF:  # PHP's `self` / `static` as a type
            cls = self.enclosing_class(path, scope)
            return ("sym", *cls) if cls is not None else None
        if text.startswith("std.") and self.language.get(path) == "cpp":
            return _OUTSIDE  # `std::exception`: not the repository's `exception`
        found = super().resolve_type(path, scope, text, line)
        if found is None and text != "?":
            found = self.named_type(path, text.rsplit(".", 1)[-1])
        return found

    def enclosing_class(self, path: str, scope: str) -> _Key | None:
        found = super().enclosing_class(path, scope)
        if found is not None or "." not in scope:
            return found
        if self.language.get(path) == "kotlin":
            return self._extended(path, scope)
        owner = scope.rpartition(".")[0]  # `void Logger::flush()`: Logger's, declared elsewhere
        if self.kind.get((path, scope)) != "method" or (path, owner) in self.kind:
            return None
        typ = self.named_type(path, owner.rsplit(".", 1)[-1])
        return (typ[1], typ[2]) if typ is not None else None

    def _extended(self, path: str, scope: str) -> _Key | None:
        """The type a Kotlin extension's body runs on (its implicit `this`): the receiver that names the
        top-level declaration around `scope` (`fun Context.greet()` is `Context.greet`)."""
        top = next((q for q in reversed(_scopes(scope)) if (path, q) in self.kind), None)
        if top is None or self.parent.get((path, top)) is not None or "." not in top \
                or self.kind.get((path, top)) in _TYPE_KINDS:
            return None
        typ = self.resolve_type(path, "", top.rpartition(".")[0], 0)
        return (typ[1], typ[2]) if typ is not None and typ[0] == "sym" else None

    # ---- values

    def call_result(self, path: str, scope: str, called: str, line: int) -> _Entity | None:
        receiver, _, name = called.rpartition(".")
        if name == "new" and receiver and self.language.get(path) == "ruby":  # `Klass.new`: a Klass
            typ = self.resolve_type(path, scope, receiver, line)
            return ("obj", typ[1], typ[2]) if typ is not None and typ[0] == "sym" else typ
        return super().call_result(path, scope, called, line)

    def receiver(self, path: str, scope: str, receiver: str, line: int) -> _Entity | None:
        if receiver.endswith("()"):
            return self.call_result(path, scope, receiver[:-2], line)
        parts = receiver.split(".")
        if len(parts) > 1 and parts[0] != "this" and self.language.get(path) == "ruby" \
                and not parts[-1][:1].isupper():
            return self.call_result(path, scope, receiver, line)  # `Klass.new.m`: Ruby calls without ()
        head = parts[0]
        entity: _Entity | None
        if head in _SELF:
            cls = self.enclosing_class(path, scope)
            entity = ("obj", *cls) if cls is not None else None
        elif self.is_local(path, scope, head, line):
            entity = self.variable(path, scope, head, line)
        else:
            entity = None
            cls = self.enclosing_class(path, scope)
            if cls is not None and self.language.get(path) in _IMPLICIT_THIS \
                    and any(head in self.fields.get(c, {}) for c in self.mro(cls)):
                # a field named without `this`; of a type this reading cannot tell, it is still the field
                entity = self.field(("obj", *cls), head)
                if entity is None:
                    return None
            if head == "std" and self.language.get(path) == "cpp":
                return _OUTSIDE  # the C++ standard library's namespace
            if entity is None and self.variables.get((path, ""), {}).get(head):
                entity = self.variable(path, "", head, line)
            elif entity is None and all(p[:1].isupper() for p in parts) \
                    and (typ := self.resolve_type(path, scope, ".".join(parts), line)) is not None:
                return typ  # `Rack::Utils.escape`
            elif entity is None:
                entity = self.bare(path, scope, head, line)
                if entity is not None and entity[0] == "sym" \
                        and self.kind.get((entity[1], entity[2])) not in _TYPE_KINDS:
                    entity = None
        for part in parts[1:]:
            if entity is None or entity[0] == "ext":
                return entity
            entity = self.field(entity, part)
        return entity

    # ---- a reference

    def loose_targets(self, path: str, ref: Reference) -> list[_Key] | None:
        """The definitions `ref` names, a method's overloads all (which one a call picks takes its
        arguments' types); None for a bare name not found in scope (name-based linking decides, see
        references.py)."""
        found = self._bound(path, ref)
        if not found:
            return found
        out: list[_Key] = []
        for key in found:
            if self.kind.get(key) != "method":
                out.append(key)
                continue
            owner = self.parent.get(key)  # a method's overloads; not top-level namesakes (extensions)
            if ref.kind == "name":  # a type's name is no call: its constructor stands for the class
                cls = (key[0], owner or "")
                if cls[1].rsplit(".", 1)[-1] == ref.name and cls in self.kind:
                    out.append(cls)
                continue
            same = self.members.get((key[0], owner), {}).get(ref.name, ()) if owner is not None else ()
            out += [(key[0], q) for _, q in same] if key in {(key[0], q) for _, q in same} else [key]
        return list(dict.fromkeys(out))

    def _bound(self, path: str, ref: Reference) -> list[_Key] | None:
        receiver = ref.receiver
        if receiver is None:
            found = self.bare(path, ref.scope or "", ref.name, ref.line)
            if found is None or found[0] != "sym":
                return None if found is None else []
            return self.targets(path, ref)
        if receiver == "parent":  # PHP's parent::m()
            ref = replace(ref, receiver="super")
            receiver = "super"
        if receiver in ("super", "?"):
            return self.targets(path, ref) if receiver == "super" else self._unique(path, ref.name)
        entity = self.receiver(path, ref.scope or "", receiver, ref.line)
        if entity is None and all(p[:1].isupper() for p in receiver.split(".")):
            return []  # `Enumerable.Empty()`, `File.read`: a type from outside the repository
        if entity is None:
            return self._unique(path, ref.name) or self._extension(ref.name, None)
        return self.targets(path, ref) or (self._extension(ref.name, entity) if entity[0] != "ext" else [])

    def by_name(self, path: str, ref: Reference, target: _Key) -> bool:
        """Whether a bare name not found in scope may still link by name to `target`: never a type's name
        to a method (a constructor), and a call to a method only in Ruby, where a module may be mixed in
        where this reading does not see it, and not for the names its standard types and Kernel answer to
        (`include`, `raise`, `to_s`). In the other languages the enclosing classes and their bases, looked
        up before, hold every method a bare call can mean."""
        if self.kind.get(target) != "method":
            return True
        language = self.language.get(path, "")
        return ref.kind == "call" and language == "ruby" \
            and ref.name not in _STANDARD_METHODS["ruby"] and ref.name not in _RUBY_KERNEL

    def _extension(self, name: str, entity: _Entity | None) -> list[_Key]:
        """The Kotlin extension functions `name` a call on `entity` may mean: those on its type or one of
        its bases (or on a type parameter); on an unknown receiver, the only one of that name."""
        found = self.extensions.get(name, [])
        if entity is None:
            return [found[0][0]] if len(found) == 1 else []
        types = {q.rsplit(".", 1)[-1] for _, q in self.mro((entity[1], entity[2]))}
        return [k for k, receiver in found if receiver in types or len(receiver) == 1]

    def _unique(self, path: str, name: str) -> list[_Key]:
        hit = self.unique_method.get((self.language.get(path, ""), name))
        if hit is None:
            return []
        # an extension of that name is a candidate too, unless it extends the method's own type
        owner = (self.parent.get(hit) or "").rsplit(".", 1)[-1]
        if any(receiver != owner for _, receiver in self.extensions.get(name, ())):
            return []
        self.unique_links += 1
        return [hit]


