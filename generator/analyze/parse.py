"""Facts from one source file: symbols, imports and references, extracted with tree-sitter.

`extract` is pure: bytes in, FileFacts out. What counts as a definition, an import or a reference is data
(generator/analyze/queries/<language>.scm); the conventions around them (doc comments, wrappers, visibility)
are in
generator/analyze/parse_rules.py; documentation files (Markdown, RST, text) are read by
generator/analyze/documents.py.
A syntax error never raises: the tree-sitter tree still holds everything outside the broken region, and the
file gets a "path:line: syntax error" warning.
"""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterable
from dataclasses import dataclass, replace
from functools import cache
from importlib import resources

from tree_sitter import Node, Parser, Query, QueryCursor, Tree
from tree_sitter_language_pack import get_language, get_parser

from generator.analyze import documents as docs
from generator.analyze.boilerplate import strip_boilerplate
from generator.analyze.facts import FileFacts, Import, Member, Reference, SourceFile, Symbol, SymbolKind
from generator.analyze.languages import DOC_LANGUAGES, GRAMMARS, spec_for
from generator.analyze.parse_rules import LanguageRules, blank_spans, conditional_starts, keep_first_branches
from generator.analyze.scan import decode

log = logging.getLogger(__name__)

_MAX_SIGNATURE = 1200  # a constructor of 15 typed parameters fits: a page wraps it, never cuts it
# only big files pay for the progress callback; pathological input parses far slower than normal code
_BUDGET_FROM = 256_000
_BUDGET_BASE = 2.0
_BUDGET_PER_MB = 8.0
_KINDS: frozenset[str] = frozenset(SymbolKind.__args__)  # type: ignore[attr-defined]
_LICENSE = re.compile(r"copyright|license|spdx-license|all rights reserved", re.IGNORECASE)
# the kinds of a declaration that may name several (`int A = 1, B = 2;`): each name is a symbol
_DECLARED = frozenset({"constant", "variable", "field"})
_CALLABLE = frozenset({"function", "method"})
_PREAMBLE = frozenset({"php_tag", "text"})  # nodes before a file's first comment that say nothing
# the nodes of a preprocessor conditional (C, C++, C#), which start at its `#if`
_CONDITIONAL_NODES = frozenset({"preproc_if", "preproc_ifdef"})


def count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


@dataclass(frozen=True)
class _Tools:
    parser: Parser
    # One query for definitions, imports and references: one walk of the tree is cheaper than two,
    # and matches keep a definition's name and body together.
    query: Query


@cache
def _tools(language: str) -> _Tools | None:
    """The parser and the compiled query of a language, built once per process."""
    grammar = GRAMMARS.get(language)
    if grammar is None:
        return None
    source = query_source(language)
    if source is None:
        return None
    lang = get_language(grammar)  # type: ignore[arg-type]
    return _Tools(get_parser(grammar), Query(lang, source))  # type: ignore[arg-type]


def query_source(name: str, _seen: frozenset[str] = frozenset()) -> str | None:
    """The text of queries/<name>.scm with its `; inherits: a, b` files prepended (shared patterns)."""
    query_file = resources.files("generator.analyze") / "queries" / f"{name}.scm"
    if not query_file.is_file() or name in _seen:
        return None
    text = query_file.read_text(encoding="utf-8")
    first = text.split("\n", 1)[0]
    parts = []
    if first.startswith("; inherits:"):
        for parent in first.split(":", 1)[1].split(","):
            inherited = query_source(parent.strip(), _seen | {name})
            if inherited:
                parts.append(inherited)
    parts.append(text)
    return "\n".join(parts)


def extract(file: SourceFile, source: bytes) -> FileFacts:
    """Everything we can learn about one file from its bytes. Never raises on malformed input."""
    text = decode(source)
    facts = FileFacts(file=file, line_count=count_lines(text))
    if not text:
        return facts
    if file.language in DOC_LANGUAGES:
        doc = docs.read_document(text, file.language or "text")
        facts.title, facts.headings, facts.docstring = doc.title, doc.headings, doc.first_paragraph
        return facts
    tools = _tools(file.language) if file.language else None
    if tools is None:
        return facts
    language = file.language or ""
    data = text.encode("utf-8")
    prepare = spec_for(language).rules.prepare
    parsed = prepare(data) if prepare is not None else data
    tree = _parse(tools.parser, parsed)
    shared = spec_for(language).shared
    if tree is not None and tree.root_node.has_error and shared is not None and file.path.endswith(shared[1]):
        # a file of a shared extension (a C `.h`) that the other language reads cleanly is of that language
        other = _tools(shared[0])
        other_prepare = spec_for(shared[0]).rules.prepare
        other_data = other_prepare(data) if other_prepare is not None else data
        other_tree = _parse(other.parser, other_data) if other is not None else None
        if other is not None and other_tree is not None and not other_tree.root_node.has_error:
            tools, tree, language, parsed = other, other_tree, shared[0], other_data
    if tree is not None and tree.root_node.has_error and spec_for(language).rules.conditionals:
        tree, parsed, cut = _first_branches(tools.parser, tree, parsed)
        # the text of the branches cut and of the directives is no part of a signature either
        data = blank_spans(data, cut)
    if tree is None:
        facts.warnings.append(f"{file.path}:1: parsing took too long; symbols not extracted")
        log.warning("%s: tree-sitter parse exceeded its time budget", file.path)
        return facts
    # the tree is of the prepared bytes, whose offsets are the original's: names, signatures and comments
    # are read from the original, as written
    extraction = _Extraction(file, data, spec_for(language).rules, facts)
    extraction.prepared = parsed if parsed != data else None
    extraction.run(tree.root_node, tools)
    return facts


def _first_branches(parser: Parser, tree: Tree, data: bytes) -> tuple[Tree, bytes, list[tuple[int, int]]]:
    """The tree of `data` with some preprocessor conditionals cut to their first branches
    (keep_first_branches), those bytes and the ranges blanked, when it holds fewer errors than `tree` in the
    text both keep; else `tree` and `data` unchanged (and no range). First cut only the conditionals the
    grammar did not read as one (a `#if` inside a base list or an initializer), then also those it read with
    an error inside; the one with fewest errors wins, the fewer cut on a tie. A conditional read cleanly
    stays whole: each of its branches keeps its symbols."""
    starts = conditional_starts(data)
    if not starts:
        return tree, data, []
    root = tree.root_node
    read, clean = set(), set()  # the conditionals the grammar read as one; those of them without an error
    for start in starts:
        token = root.descendant_for_byte_range(start, start + 1)
        node = token.parent if token is not None else None
        if node is not None and node.type in _CONDITIONAL_NODES and node.start_byte == start:
            read.add(start)
            if not node.has_error:
                clean.add(start)
    errors = _errors(root)
    best, best_data, best_count, best_cut = tree, data, len(errors), []
    for whole in (read, clean):
        flat, dropped, cut = keep_first_branches(data, whole)
        if flat in (best_data, data):
            continue
        # an error inside a dropped branch is not fixed by the cut, only hidden: it is not counted (a
        # conditional whose other branch is broken on its own keeps that branch's symbols)
        before = sum(1 for at in errors if not any(start <= at < end for start, end in dropped))
        flat_tree = _parse(parser, flat)
        if flat_tree is None:
            continue
        after = len(_errors(flat_tree.root_node))
        if after < min(before, best_count):
            best, best_data, best_count, best_cut = flat_tree, flat, after, cut
        if best_count == 0:
            break
    return best, best_data, best_cut


def _errors(root: Node) -> list[int]:
    """Where the ERROR and MISSING nodes of a tree start (only the subtrees with an error are walked)."""
    found, stack = [], [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            found.append(node.start_byte)
        stack.extend(c for c in node.children if c.has_error or c.is_missing)
    return found


def _parse(parser: Parser, data: bytes) -> Tree | None:
    """Parse, giving up (None) on pathological input after a budget that grows with the file size."""
    if len(data) < _BUDGET_FROM:
        return parser.parse(data)
    view = memoryview(data)
    deadline = time.monotonic() + _BUDGET_BASE + _BUDGET_PER_MB * len(data) / 1e6

    def past_deadline(_offset: int, _has_error: bool) -> bool:
        return time.monotonic() > deadline

    try:
        tree = parser.parse(lambda offset, _point: view[offset:], progress_callback=past_deadline)
    except ValueError:  # py-tree-sitter reports a cancelled parse as "Parsing failed"
        tree = None
    if tree is None:
        parser.reset()  # a cancelled parse would otherwise resume on the next call
        return None
    # A tree built from a callback has no source attached, and text predicates (#match?) need it:
    # re-parse from bytes reusing the finished tree, which costs a tenth of the first parse.
    return parser.parse(data, old_tree=tree)


@dataclass
class _Def:
    node: Node  # the definition node the query captured
    name: str
    kind: str
    body: Node | None
    receiver: str | None
    pattern: int = 0  # index of the query pattern that produced it
    outer: Node | None = None  # node including decorators/export/attributes
    implements: str = ""  # the trait of the impl block that holds it (@implements)
    # the type a top-level declaration extends without being its member (a Kotlin extension's receiver,
    # @qualifier): part of the qualname (`Context.obj`), so two extensions of one name stay apart
    qualifier: str = ""
    name_at: int = 0  # where its name starts: one declaration may declare several names
    merged: bool = False  # a reopened namespace: its members belong to the first block's symbol
    qualname: str = ""
    parent: str | None = None
    public: bool = True
    # where what it holds ends: its node's end, or the file's for a declaration that scopes the rest of
    # the file (C#'s `namespace Foo.Bar;`)
    end: int = 0


class _Extraction:
    """One pass over one tree: collect query matches, then turn them into facts."""

    def __init__(self, file: SourceFile, data: bytes, rules: LanguageRules, facts: FileFacts) -> None:
        self.file = file
        self.path = file.path
        self.data = data
        self.rules = rules
        self.facts = facts
        self.name_ids: set[int] = set()  # definition names are not references to themselves
        self.prepared: bytes | None = None  # the bytes parsed, when rules.prepare blanked some of them

    def text(self, node: Node) -> str:
        return self.data[node.start_byte:node.end_byte].decode("utf-8", errors="replace")

    def run(self, root: Node, tools: _Tools) -> None:
        if root.has_error:
            self.facts.warnings.append(f"{self.path}:{_first_error_line(root)}: syntax error")
        defs: dict[int, _Def] = {}
        imports: dict[tuple[int, str], tuple[int, list[str], list[tuple[str, str]]]] = {}
        calls: list[Node] = []
        used: list[Node] = []
        bases: list[Node] = []
        # a name (`x`, `self.x`; "return" for a function's result) and the type it is given
        binds: list[tuple[Node, str, str | None]] = []
        # a type's fields and variants: name node -> (declaration, name, kind)
        members: dict[int, tuple[Node, Node, str]] = {}
        for pattern, caps in QueryCursor(tools.query).matches(root):
            found = caps.get("ref.call")
            if found is not None:
                calls += found
                continue
            found = caps.get("ref.name")
            if found is not None:
                used += found
                continue
            found = caps.get("ref.base")
            if found is not None:
                bases += found
                continue
            found = caps.get("bind.name") or caps.get("bind.returns") or caps.get("bind.local")
            if found is not None:
                fixed = "return" if "bind.returns" in caps else None  # `def f() -> Cls`
                annotation = caps.get("bind.type")
                made = caps.get("bind.call")
                if annotation:  # `x: Cls`: an instance of Cls
                    binds.append((found[0], receiver_text(self.text(annotation[0])), fixed))
                elif made:  # `x = Cls()`: an instance of Cls if Cls is a class, else what it returns
                    binds.append((found[0], receiver_text(self.text(made[0])) + "()", fixed))
                elif "bind.local" in caps:  # a local of unknown type: it shadows the package's names
                    binds += [(n, "?", None) for n in found]
                continue
            member = caps.get("member.field") or caps.get("member.variant")
            if member is not None and "name" in caps:
                # by its name: one declaration may declare several (`int a, b;`, `protected $x, $y;`)
                members.setdefault(caps["name"][0].id, (member[0], caps["name"][0],
                                                        "field" if "member.field" in caps else "variant"))
                continue
            if "name" in caps:
                kind = next((k[4:] for k in caps if k.startswith("def.")), None)
                if kind is not None:
                    self._add_def(defs, kind, caps, pattern)
            elif "import.module" in caps or "import.mod" in caps:
                self._add_import(imports, caps)
        ordered = self._resolve(defs)
        refs: list[tuple[int, Node, str, tuple[str | None, str] | None]] = []
        name_ids = self.name_ids
        for found, ref_kind in ((calls, "call"), (used, "name"), (bases, "base")):
            seen: set[int] = set()
            for n in found:
                # several patterns may name the same node (a base class is also an argument)
                node_id = n.id
                if node_id not in seen and node_id not in name_ids:
                    seen.add(node_id)
                    refs.append((n.start_byte, n, ref_kind, None))
        for n, type_text, fixed in binds:
            refs.append((n.start_byte, n, "bind", (fixed, type_text)))
        self.facts.symbols = [self._symbol(d) for d in ordered if not d.merged]
        self.facts.members = self._members(members.values(), ordered)
        self.facts.imports = [
            Import(path=self.path, module=module, names=tuple(dict.fromkeys(names)), line=line,
                   aliases=tuple(dict.fromkeys(aliases)))
            for (_key, module), (line, names, aliases) in imports.items()
        ]
        self.facts.references = self._references(refs, ordered)
        self.facts.docstring = self._module_docstring(root, {(d.outer or d.node).start_byte for d in ordered})

    # ---- collecting

    def _add_def(self, defs: dict[int, _Def], kind: str, caps: dict[str, list[Node]], pattern: int) -> None:
        node = caps[f"def.{kind}"][0]
        name_nodes = caps.get("name")
        if not name_nodes or kind not in _KINDS:
            return
        receiver = _type_name(self.text(caps["receiver"][0])) if "receiver" in caps else None
        qualifier = _qualifier(self.text(caps["qualifier"][0])) if "qualifier" in caps else ""
        body = caps["body"][0] if "body" in caps else None
        key = node.id
        existing = defs.get(key)
        if existing is not None and existing.name_at != name_nodes[0].start_byte and kind in _DECLARED \
                and existing.kind in _DECLARED and name_nodes[0].type not in self.rules.implicit_names \
                and existing.name not in self.rules.implicit_names.values():
            # another name of one declaration (`static final int MAX = 1, MIN = 0;`, `const A, B = 1, 2`):
            # a symbol of its own, not a second pattern's reading of the first
            key = name_nodes[0].id
            existing = defs.get(key)
        if existing is not None:
            # a node several patterns match: the pattern written first in the .scm file is the more specific,
            # and a constant (the catch-all of exported bindings) gives way to any other kind
            existing.receiver = existing.receiver or receiver
            existing.qualifier = existing.qualifier or qualifier
            # a name written beats an implied one
            if existing.name in self.rules.implicit_names.values() and \
                    name_nodes[0].type not in self.rules.implicit_names:
                existing.name = self.text(name_nodes[0]).strip() or existing.name
            if "implements" in caps and not existing.implements:
                existing.implements = _type_name(self.text(caps["implements"][0]))
            if (pattern < existing.pattern and kind != "constant") or (
                    existing.kind == "constant" and kind != "constant"):
                existing.kind, existing.body, existing.pattern = kind, body or existing.body, pattern
            return
        self.name_ids.add(name_nodes[0].id)
        name = self.rules.implicit_names.get(name_nodes[0].type) or self.text(name_nodes[0]).strip()
        if name_nodes[0].type == "qualified_identifier" and name_nodes[0].has_error:
            name = _unglued(name)  # `void SPDLOG_INLINE sink<M>::flush()`: the macro is no scope of the name
            if "::" not in name and kind == "method":
                kind = "function"  # not out of line after all: a member only if a class holds it
        if name_nodes[0].type in self.rules.symbol_literals:
            name = name.removeprefix(":")
        if "::" in name and receiver is None:  # C++ out of line: `ns::Cls<T>::name` is Cls's `name`
            scope, operator, rest = name.partition("operator")
            if operator and scope.rstrip().endswith("::"):  # `A::operator std::string()`: `::` in the type
                parts = _scope_parts(scope)
                name, receiver = operator + rest, (parts[-1] if parts else None)
            else:
                parts = _scope_parts(name)
                name, receiver = parts[-1], (parts[-2] if len(parts) > 1 else None)
        if name.startswith("operator") and "(" in name:  # a C++ conversion operator: `operator bool() const`
            name = _operator_name(name)
        if name:
            trait = caps.get("implements")
            defs[key] = _Def(node, name, kind, body, receiver, pattern,
                             implements=_type_name(self.text(trait[0])) if trait else "", qualifier=qualifier,
                             name_at=name_nodes[0].start_byte,
                             end=len(self.data) if node.type in self.rules.file_scopes else node.end_byte)

    def _add_import(self, imports: dict[tuple[int, str], tuple[int, list[str], list[tuple[str, str]]]],
                    caps: dict[str, list[Node]]) -> None:
        if "import.mod" in caps:  # a module declaration (`mod foo;`) imports the file that holds it
            module_node = caps["import.mod"][0]
            module = "mod::" + self.text(module_node).strip()
        else:
            module_node = caps["import.module"][0]
            module = self.rules.module_text(self.text(module_node))
        stmt = caps["import"][0] if "import" in caps else module_node
        if not module:
            return
        if "import.wildcard" in caps and not module.endswith("*"):
            module += ".*"
        key = (stmt.id, module)
        _line, names, aliases = imports.setdefault(key, (stmt.start_point.row + 1, [], []))
        named = [_last_name(self.text(n)) for n in caps.get("import.name", ())]
        names.extend(named)
        alias = caps.get("import.alias")
        if alias:  # `from m import a as b`, `import a.b as c`: the name the file uses instead
            aliases.append((named[0] if named else module, self.text(alias[0]).strip()))

    # ---- symbols

    def _resolve(self, defs: dict[int, _Def]) -> list[_Def]:
        """Parents, qualified names (unique per file), kinds and visibility, in source order."""
        ordered = sorted(defs.values(), key=lambda d: (d.node.start_byte, -d.end, d.name_at))
        by_qualname: dict[str, _Def] = {}
        seen: dict[str, int] = {}
        stack: list[_Def] = []  # enclosing definitions: syntax nodes nest, so byte ranges do too
        scope_of: dict[int, _Def | None] = {}  # a definition's node -> the definition it is declared in
        for d in ordered:
            d.outer = self._outer(d.node, self.rules.wrappers)
            start = d.node.start_byte
            while stack and (stack[-1].end <= start or stack[-1].node.id == d.node.id):
                stack.pop()  # the names of one declaration are siblings, not nested in the first
            parent = stack[-1] if stack else None
            if parent is not None and _chained(d, parent):
                parent = scope_of[parent.node.id]  # `A = B = 1`: B is declared where A is
            scope_of[d.node.id] = parent
            stack.append(d)
            if d.receiver and (parent is None or parent.kind not in self.rules.class_kinds):
                d.parent = d.receiver
                recv = by_qualname.get(d.receiver)
                parent = recv
            elif parent is not None:
                d.parent = parent.qualname
            if d.kind == "function" and d.parent is not None and (
                d.receiver or (parent is not None and parent.kind in self.rules.class_kinds)
            ):
                d.kind = "method"
            scope = d.parent or d.qualifier  # a top-level extension: named by its receiver type
            base = f"{scope}.{d.name}" if scope else d.name
            first = by_qualname.get(base)
            if d.kind == "namespace" and first is not None and first.kind == "namespace":
                # a namespace reopened (C++ `namespace a {` in every header section, TypeScript's merged
                # namespaces) is the same namespace: its members are the first block's, and it is no
                # second symbol (`5 namespaces (a, a, a…)`, members under `a~2.X`)
                d.qualname, d.merged, d.public = base, True, first.public
                continue
            count = seen.get(base, 0) + 1
            seen[base] = count
            # overloads, property setters and conditional definitions share a name: keep each, unambiguously
            d.qualname = base if count == 1 else f"{base}~{count}"
            d.public = self.rules.public(d.name, d.node) and (parent is None or parent.public)
            by_qualname[d.qualname] = d
        return ordered

    def _members(self, found: Iterable[tuple[Node, Node, str]], defs: list[_Def]) -> list[Member]:
        """Each field or variant under the innermost definition around it (the type that holds it); one
        outside every definition is dropped."""
        out: list[Member] = []
        symbols = {d.name_at for d in defs}  # a Java constant is a symbol already, not also a member
        stack: list[_Def] = []  # the definitions open at the member (defs is in source order, outer first)
        i = 0
        for node, name, kind in sorted(found, key=lambda m: m[0].start_byte):
            if name.start_byte in symbols:
                continue
            while i < len(defs) and defs[i].node.start_byte <= node.start_byte:
                while stack and stack[-1].end <= defs[i].node.start_byte:
                    stack.pop()
                stack.append(defs[i])
                i += 1
            while stack and (stack[-1].end < node.end_byte or stack[-1].node.id == node.id):
                stack.pop()  # a declaration's constant is no holder of its other names (`int MAX = 1, n;`)
            if not stack:
                continue
            holder = stack[-1]
            lists = node.parent.parent if node.parent is not None else None  # a parameter's: its function
            if holder.kind in _CALLABLE and len(stack) > 1 and stack[-2].kind in self.rules.class_kinds \
                    and lists is not None and lists.id == holder.node.id:
                # a constructor's parameter property (TypeScript, PHP) is its class's (a field of a
                # parameter's object type stays the function's)
                holder = stack[-2]
            self.name_ids.add(name.id)
            doc = self._leading_comment(node) or self._trailing_comment(node)
            out.append(Member(self.text(name).strip(), kind, holder.qualname,  # type: ignore[arg-type]
                              node.start_point.row + 1, clean_signature(self.text(node), ""), doc))
        return out

    def _trailing_comment(self, node: Node) -> str:
        """A comment after the node on its own last line (`a int // the count`)."""
        after = node.next_sibling
        while after is not None and after.type in (",", ";"):
            after = after.next_sibling
        if after is not None and after.type in self.rules.comment_types \
                and after.start_point.row == node.end_point.row:
            return strip_boilerplate(clean_comment(self.text(after)))
        return ""

    @staticmethod
    def _outer(node: Node, wrappers: frozenset[str]) -> Node:
        """Climb through wrapper nodes (decorators, export, a lone declarator's declaration)."""
        while node.parent is not None and node.parent.type in wrappers:
            siblings = [c for c in node.parent.named_children if c.type == node.type]
            if len(siblings) > 1:
                break
            node = node.parent
        return node

    def _symbol(self, d: _Def) -> Symbol:
        outer = d.outer or d.node
        start_row = outer.start_point.row
        if self.rules.attribute_types:  # `#[derive(...)]`, `[Serializable]` belong to the item's span
            before = outer.prev_sibling
            while before is not None and before.type in self.rules.attribute_types:
                start_row = before.start_point.row
                before = before.prev_sibling
        return Symbol(
            name=d.name,
            qualname=d.qualname,
            kind=d.kind,  # type: ignore[arg-type]
            path=self.path,
            start_line=start_row + 1,
            end_line=_end_line(outer),
            signature=self._signature(d),
            docstring=self._docstring(d),
            parent=d.parent,
            public=d.public,
            implements=d.implements,
        )

    def _signature(self, d: _Def) -> str:
        start_node = self._outer(d.node, self.rules.signature_wrappers)
        start = start_node.start_byte
        if self.prepared is not None:  # a signature shows the export macro blanked before its start
            before = start
            while before > 0 and self.prepared[before - 1] in (0x20, 0x09):
                before -= 1
            if self.data[before:start] != self.prepared[before:start]:
                start = before
        if d.body is not None and d.body.start_byte > start:
            end, tail = d.body.start_byte, self.rules.signature_tail
        else:
            newline = self.data.find(b"\n", d.node.start_byte, d.node.end_byte)
            # a first line that opens a block ends where the block begins ("type Shape interface {")
            end = newline if newline != -1 else d.node.end_byte
            tail = "{" if "{" in self.rules.signature_tail else ""
        # comments in a multi-line parameter list and decorators of an exported class are not signature
        pieces, pos = [], start
        raw = self.data[start:end].rstrip()
        search = (b"\n" in raw and any(m in raw for m in self.rules.comment_markers)) or bool(
            self.rules.signature_skip and (b"@" in raw or b"[" in raw))
        for comment in self._skipped_between(start_node, start, end) if search else ():
            pieces.append(self.data[pos:comment.start_byte])
            pos = comment.end_byte
        pieces.append(self.data[pos:end])
        return clean_signature(b"".join(pieces).decode("utf-8", errors="replace"), tail)

    def _skipped_between(self, node: Node, start: int, end: int) -> list[Node]:
        found: list[Node] = []
        stack = [node]
        while stack:
            current = stack.pop()
            for child in current.children:
                if child.start_byte >= end or child.end_byte <= start:
                    continue
                if child.type in self.rules.comment_types or child.type in self.rules.signature_skip:
                    found.append(child)
                elif child.child_count:
                    stack.append(child)
        return sorted(found, key=lambda n: n.start_byte)

    def _docstring(self, d: _Def) -> str:
        if self.rules.doc_style == "python" and d.body is not None:
            return _python_docstring(self, d.body)
        return self._leading_comment(d.outer or d.node)

    def _leading_comment(self, anchor: Node) -> str:
        comment_types = self.rules.comment_types
        # a definition first in a body (Ruby) has its comment before the body node
        while anchor.prev_sibling is None and anchor.parent is not None \
                and anchor.parent.start_byte == anchor.start_byte:
            anchor = anchor.parent
        node = anchor.prev_sibling
        expect_row = anchor.start_point.row
        # some grammars attach a comment to the end of the node before (Kotlin's import list)
        while node is not None and node.type not in comment_types and node.child_count \
                and node.type not in self.rules.attribute_types and node.end_point.row >= expect_row - 1:
            node = node.children[-1]
        while node is not None and node.type in self.rules.attribute_types:
            expect_row = node.start_point.row
            node = node.prev_sibling
        block: list[Node] = []
        while node is not None and node.type in comment_types and node.end_point.row >= expect_row - 1:
            before = node.prev_sibling
            if before is not None and before.type not in comment_types \
                    and before.end_point.row == node.start_point.row:
                break  # a trailing comment on a line of code belongs to that line
            block.append(node)
            expect_row = node.start_point.row
            node = before
        if not block and node is not None and node.type in comment_types and self._doc_block(node):
            # a `/** */` doc comment is the next declaration's even across blank lines (Javadoc, JSDoc,
            # KDoc, Doxygen, PHPDoc): the nearest one before it, its annotations and modifiers
            block.append(node)
        block.reverse()
        return strip_boilerplate(clean_comment(self._comment_lines(block))) if block else ""

    def _doc_block(self, node: Node) -> bool:
        """Whether a comment is a `/** ... */` doc block of its own (not after code on its line, not a
        licence header)."""
        text = self.text(node)
        before = node.prev_sibling
        return text.startswith("/**") and not text.startswith("/**/") and not (
            before is not None and before.end_point.row == node.start_point.row) \
            and not _LICENSE.search(text)

    def _comment_lines(self, block: list[Node]) -> str:
        """A block of line comments as one text, a line each: Rust's and Ruby's line-comment nodes hold their
        newline, and a second one between them read as a blank line, a paragraph break after every line."""
        return "\n".join(self.text(n).rstrip("\r\n") for n in block)

    def _module_docstring(self, root: Node, def_starts: set[int]) -> str:
        if self.rules.doc_style == "python":
            doc = _python_docstring(self, root)
            if doc:
                return doc
        children = root.children
        comment_types = self.rules.comment_types
        i = 0
        while i < len(children) and children[i].type in _PREAMBLE:
            i += 1
        while i < len(children):
            if children[i].type not in comment_types:
                return ""
            block = [children[i]]
            while i + 1 < len(children) and children[i + 1].type in comment_types \
                    and children[i + 1].start_point.row <= block[-1].end_point.row + 1:
                i += 1
                block.append(children[i])
            i += 1
            first = self.text(block[0])
            text = strip_boilerplate(clean_comment(self._comment_lines(block)))
            if not text or first.startswith("#!") or _LICENSE.search(text):
                continue
            if first.startswith(("//!", "/*!")):  # Rust inner doc comments document the module itself
                return text
            following = children[i] if i < len(children) else None
            # a comment glued to the first definition documents that definition, not the file
            if following is not None and following.start_byte in def_starts \
                    and following.start_point.row <= block[-1].end_point.row + 1:
                return ""
            return text
        return ""

    # ---- references

    def _references(self, refs: list[tuple[int, Node, str, tuple[str | None, str] | None]],
                    defs: list[_Def]) -> list[Reference]:
        """Each reference with the qualname of the innermost definition around it."""
        refs.sort(key=lambda r: r[0])
        spans = [(d.node.start_byte, d.end, d.qualname) for d in defs]
        out: list[Reference] = []
        stack: list[tuple[int, int, str]] = []
        i, n_spans, data, path = 0, len(spans), self.data, self.path
        builtin_names, arity = self.rules.builtin_names, self.rules.call_arity
        binds: list[Reference] = []
        for pos, node, kind, bound_to in refs:
            while i < n_spans and spans[i][0] <= pos:
                while stack and stack[-1][1] <= spans[i][0]:
                    stack.pop()
                stack.append(spans[i])
                i += 1
            while stack and stack[-1][1] <= pos:
                stack.pop()
            text = data[pos:node.end_byte].decode("utf-8", errors="replace")
            if bound_to is not None:  # a binding: the name as written ("x", "self.x") and its type
                bound = bound_to[0] or receiver_text(text)
                if bound != "?":
                    binds.append(Reference(path, bound, node.start_point.row + 1, "bind",
                                           stack[-1][2] if stack else None, bound_to[1]))
                continue
            name = text if text.isidentifier() else _last_name(text)
            receiver = self._receiver(node)
            # a bare builtin (`len(x)`) is never the repository's; a method of the name (`self.open()`) may be
            if name and (receiver is not None or name not in builtin_names):
                args = self._arguments(node) if arity and kind == "call" else None
                out.append(Reference(path, name, node.start_point.row + 1, kind,  # type: ignore[arg-type]
                                     stack[-1][2] if stack else None, receiver, args))
        return out + _telling_binds(binds, builtin_names, self.rules.lowercase_types)

    def _arguments(self, name: Node) -> tuple[str, ...] | None:
        """The arguments of the call whose callee `name` is (`m` of `x.m(a, b)`, `T` of `new T<>(a)`), each
        as the type its syntax shows (see Reference.args); None when `name` is not a call's callee."""
        node = name
        for _ in range(2):
            below, up = node, node.parent
            if up is None:
                return None
            node = up
            arguments = node.child_by_field_name("arguments")
            if arguments is not None and arguments.id != below.id:
                return tuple(self._shown_type(c) for c in arguments.named_children if "comment" not in c.type)
        return None

    def _shown_type(self, arg: Node) -> str:
        shown = _LITERAL_TYPES.get(arg.type)
        if shown is not None:
            return shown
        typed = arg.type in ("cast_expression", "object_creation_expression")
        typ = arg.child_by_field_name("type") if typed else None
        return re.sub(r"<.*|\s+", "", self.text(typ)) if typ is not None else ""

    def _receiver(self, node: Node) -> str | None:
        """What a referenced name is accessed on (`obj` of `obj.name`), normalised; None for a bare name."""
        parent = node.parent
        if parent is None:
            return None
        if parent.type == "navigation_suffix":  # Kotlin `x.m()`: the grammar names no fields
            nav = parent.parent
            obj = nav.named_children[0] if nav is not None and nav.named_children else None
            if obj is None or obj.id == parent.id:
                return None
            if obj.type == "call_expression" and obj.named_children:  # `make().m()`: what make returns
                called = receiver_text(self.text(obj.named_children[0]))
                return called + "()" if called not in ("?", "super") else "?"
            return receiver_text(self.text(obj))
        for field in _RECEIVER_FIELDS.get(parent.type, ()):
            obj = parent.child_by_field_name(field)
            if obj is not None and obj.start_byte < node.start_byte:
                text = receiver_text(self.text(obj))
                callee = _CALLEE_FIELD.get(obj.type)
                fn = obj.child_by_field_name(callee) if callee and text != "super" else None
                if fn is not None:  # `Engine().start()`: what was called tells the receiver's type
                    called = receiver_text(self.text(fn))
                    return called + "()" if called not in ("?", "super") else "?"
                return text
        return None


# ---- small pure helpers


def _may_tell(type_text: str, builtin_names: frozenset[str], lowercase_types: bool = False) -> bool:
    """Whether a binding may tell a repository class: a CapWords name (`Cls`, `Cls()`), or a call of a
    function that may declare what it returns (`make()`, not `dict()`); `x: int` never does (in Go, whose
    unexported types are lower case, any named type may: the predeclared ones are never captured)."""
    last = type_text.removesuffix("()").rsplit(".", 1)[-1]
    if last[:1].isupper() or (lowercase_types and last != "?" and last.isidentifier()):
        return True
    return type_text.endswith("()") and last != "?" and last not in builtin_names


def _telling_binds(binds: list[Reference], builtin_names: frozenset[str],
                   lowercase_types: bool = False) -> list[Reference]:
    """The bindings that may tell a variable's class (see _may_tell): a variable none of whose bindings
    may is left out (except in Go, whose call graph also reads which names are locals). One that also
    holds something else keeps that binding as "?" / "?()", so its type
    stays unknown, not wrong."""
    by_variable: dict[tuple[str | None, str], list[Reference]] = {}
    for b in binds:  # an attribute (`self.x`) is one variable across the methods that assign it
        by_variable.setdefault((None if b.name.startswith("self.") else b.scope, b.name), []).append(b)
    out: list[Reference] = []
    for group in by_variable.values():
        if lowercase_types or any(_may_tell(b.receiver or "", builtin_names, lowercase_types) for b in group):
            out += [b if _may_tell(b.receiver or "", builtin_names, lowercase_types) else replace(
                b, receiver="?()" if (b.receiver or "").endswith("()") else "?") for b in group]
    return out

# literal node types -> the type a call's argument of that syntax has ("" for null: it fits any)
_LITERAL_TYPES = {
    "string_literal": "String", "text_block": "String", "class_literal": "Class", "null_literal": "",
    "decimal_integer_literal": "int", "hex_integer_literal": "int", "character_literal": "char",
    "decimal_floating_point_literal": "double", "true": "boolean", "false": "boolean",
}
# member-access node types -> the fields that may hold what the member is accessed on, across the grammars
_RECEIVER_FIELDS: dict[str, tuple[str, ...]] = {
    "attribute": ("object",),  # Python
    "member_expression": ("object",),  # JavaScript, TypeScript
    "method_invocation": ("object",),  # Java
    "field_access": ("object",),
    "selector_expression": ("operand",),  # Go
    "qualified_type": ("package",),  # Go `http.Handler`: a type of another package
    "field_expression": ("value", "argument"),  # Rust and Scala; C and C++
    "scoped_identifier": ("path",),  # Rust a::b()
    "scoped_type_identifier": ("path",),  # Rust io::Error (a type of another module)
    "qualified_identifier": ("scope",),  # C++ a::b()
    "member_access_expression": ("expression",),  # C#
    "member_call_expression": ("object",),  # PHP
    "nullsafe_member_call_expression": ("object",),
    "scoped_call_expression": ("scope",),
    "call": ("receiver",),  # Ruby (Python's call has no such field)
}
# call node types -> the field naming what is called (a receiver `Engine()` is an Engine if Engine is a class)
_CALLEE_FIELD = {"call": "function", "call_expression": "function", "new_expression": "constructor",
                 "object_creation_expression": "type"}
_DOTTED = re.compile(r"[A-Za-z_$][\w$]*(?:(?:\.|::|->)[A-Za-z_$][\w$]*)*")
_SUPER_CALL = re.compile(r"super\s*\([^()]*\)")
_MAX_RECEIVER = 120


def receiver_text(text: str) -> str:
    """A receiver as the call graph reads it: a dotted name ("self", "os.path", "this"), "super", or "?".
    (A call's result is the called dotted name plus "()", see _Extraction._receiver.)"""
    if text.isidentifier():  # the common case: `self`, `cls`, `os`, `this`
        return text
    text = text.strip()
    if _SUPER_CALL.fullmatch(text):
        return "super"
    text = text.removeprefix("$")  # PHP's $this
    if "\\" in text:  # a PHP namespaced name (`\App\Loader`): dotted like any other
        text = text.lstrip("\\").replace("\\", "::")
    if text[:1] == "@" and text[1:].isidentifier():
        return "this." + text[1:]  # Ruby's instance variable `@x`: the object's own field
    if len(text) <= _MAX_RECEIVER and _DOTTED.fullmatch(text):
        return text.replace("::", ".").replace("->", ".")
    return "?"

_WS = re.compile(r"\s+")
_OPEN_SPACE = re.compile(r"([(\[]) ")
_CLOSE_SPACE = re.compile(r",? ([)\]])")


def clean_signature(raw: str, tail: str = "") -> str:
    """One line, as written: whitespace collapsed, the body opener dropped, overly long text cut."""
    sig = _WS.sub(" ", raw).strip() if ("\n" in raw or "  " in raw or "\t" in raw) else raw.strip()
    if "( " in sig or "[ " in sig:
        sig = _OPEN_SPACE.sub(r"\1", sig)
    if " )" in sig or " ]" in sig:
        sig = _CLOSE_SPACE.sub(r"\1", sig)
    sig = sig.rstrip("; ")
    if tail:
        sig = sig.rstrip(tail + " ")
    if len(sig) > _MAX_SIGNATURE:
        sig = sig[:_MAX_SIGNATURE - 1].rstrip() + "…"
    return sig


_BLOCK_END = re.compile(r"(?<=\*/)\s*\n")
_STAR_PREFIX = re.compile(r"^\s*\*+ ?")
_LINE_PREFIX = re.compile(r"^\s*(//[/!]?|#+|--)\s?")


def clean_comment(text: str) -> str:
    """The prose of a comment block, comment markers removed, indentation normalised."""
    text = text.strip()
    lines: list[str] = []
    for raw_chunk in _BLOCK_END.split(text):
        chunk = raw_chunk.strip()
        if chunk.startswith("/*"):
            body = chunk[2:].lstrip("*!")
            body = body.removesuffix("*/")
            lines.extend(_STAR_PREFIX.sub("", line) for line in body.splitlines())
        else:
            lines.extend(_LINE_PREFIX.sub("", line) for line in chunk.splitlines())
    cleaned = cleandoc("\n".join(lines)).strip()
    if cleaned.startswith("<summary>"):  # C# XML docs: the summary element is the prose
        cleaned = re.sub(r"</?summary>", "", cleaned).strip()
    return cleaned


_INDENT = re.compile(r"^[ \t]*(?=\S)", re.MULTILINE)
_LEADING_BLANK_LINES = re.compile(r"^(?:[ \t]*\n)+")


def cleandoc(text: str) -> str:
    """inspect.cleandoc without a Python loop per line: docstrings are many and long."""
    if "\n" not in text:
        return text.strip()
    first, rest = text.expandtabs().split("\n", 1)
    # the indentation of the first non-blank line is the margin unless some line is indented less
    found = _INDENT.search(rest)
    margin = len(found.group()) if found else 0
    if margin and re.search(f"(?m)^[ ]{{0,{margin - 1}}}\\S", rest):
        margin = min(len(m) for m in _INDENT.findall(rest))
    if margin:
        rest = re.sub(f"(?m)^[ ]{{0,{margin}}}", "", rest)
    return _LEADING_BLANK_LINES.sub("", first.strip() + "\n" + rest).rstrip()


def _python_docstring(ex: _Extraction, body: Node) -> str:
    child = body.named_child(0) if body.named_child_count else None
    while child is not None and child.type == "comment":
        child = child.next_named_sibling
    if child is not None and child.type == "expression_statement" and child.named_child_count == 1:
        child = child.named_child(0)
    if child is not None and child.type == "string":
        return _string_value(ex.text(child))
    return ""


def _string_value(literal: str) -> str:
    body = literal.lstrip("rRuUbBfF")
    for quote in ('"""', "'''", '"', "'"):
        if body.startswith(quote) and body.endswith(quote) and len(body) >= 2 * len(quote):
            body = body[len(quote):-len(quote)]
            break
    return cleandoc(body)


def _last_name(text: str) -> str:
    text = text.strip()
    for sep in ("::", "->", ".", "\\", "/"):
        if sep in text:
            text = text.rsplit(sep, 1)[-1]
    return text.strip()


def _chained(inner: _Def, outer: _Def) -> bool:
    """Whether `inner` is the value of `outer`, both declarations: `A = B = 1` (Ruby) assigns both names in
    the scope around them, and the second is no member of the first. A declaration further inside the
    value (a block's, a class's) is not chained: only parentheses may stand between them."""
    if inner.kind not in _DECLARED or outer.kind not in _DECLARED:
        return False
    node = inner.node.parent
    while node is not None and node.id != outer.node.id and node.type.startswith("parenthesized"):
        node = node.parent
    return node is not None and node.id == outer.node.id


_OPERATOR_WORD = re.compile(r"\boperator\b")
_MACRO_WORD = re.compile(r"[A-Z][A-Z0-9_]{2,}")
_NON_SPACE = re.compile(r"\S")


def _unglued(name: str) -> str:
    """A C++ qualified name without the words the grammar glued to it: tree-sitter runs no preprocessor, and
    reads a macro between a return type and a declarator (`void SPDLOG_INLINE sink<M>::flush()`,
    `std::string FOO_API getenv(`), a return type after a macro on the line above (`FOO_NODISCARD` then
    `static json parse(`) or a macro after the name (`localtime_r FMT_NOMACRO(`) as one name, with a `::` it
    reports missing or a word in an ERROR node. No name is two words side by side (outside its template
    arguments and an operator's type): the name is the last word that is not an upper-case macro's."""
    found = _OPERATOR_WORD.search(name)
    head = name[:found.start()] if found else name
    words, depth, begin = [], 0, 0  # (start, end) of each word of the head outside template arguments
    for i, ch in enumerate(head):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth = max(depth - 1, 0)
        elif ch.isspace() and depth == 0 and i and (head[i - 1].isalnum() or head[i - 1] == "_"):
            after = _NON_SPACE.search(head, i)  # found from here, not by slicing: a long name stays linear
            if after is not None and (after.group().isalnum() or after.group() in ("_", "~")):
                words.append((begin, i))
                begin = after.start()
    if not words:
        return name
    words.append((begin, len(name)))
    named = [w for w in words if not _MACRO_WORD.fullmatch(name[w[0]:w[1]].strip())]
    start, stop = (named or words)[-1]
    return name[start:stop].strip()


_TEMPLATE_ARGS = re.compile(r"<[^<>]*>")


def _scope_parts(qualified: str) -> list[str]:
    """`ns::Cls<std::string>::name` -> ["ns", "Cls", "name"] (template arguments dropped, whitespace too)."""
    text = re.sub(r"\s+", "", qualified)
    head, sep, op = text.partition("operator")  # `Cls::operator<<`: the operator's own `<` are no arguments
    while "<" in head and _TEMPLATE_ARGS.search(head):
        head = _TEMPLATE_ARGS.sub("", head)
    return [p for p in (head + sep + op).split("::") if p]


_CALL_OPERATOR = re.compile(r"operator\s*\(\s*\)")


def _operator_name(text: str) -> str:
    """`operator const Char*() const` -> `operator const Char*`; `operator()(int) const` -> `operator()`."""
    call = _CALL_OPERATOR.match(text)
    if call:
        return "operator()"
    return _WS.sub(" ", text.split("(", 1)[0]).strip()


def _qualifier(text: str) -> str:
    """A Kotlin extension's receiver type as its qualname reads it: `Context.Builder`, `BaseCommand<*>` ->
    `BaseCommand`, `String?` -> `String`; "" for one that is no dotted name (a function type)."""
    text = re.sub(r"\s+", "", text)
    while "<" in text and _TEMPLATE_ARGS.search(text):
        text = _TEMPLATE_ARGS.sub("", text)
    text = text.rstrip("?")
    return text if _TYPE_PATH.fullmatch(text) else ""


_TYPE_PATH = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def _type_name(text: str) -> str:
    """`*Server`, `Foo<T>`, `&mut Bar` -> the bare type name used in qualnames."""
    text = re.sub(r"<.*|\[.*", "", text.strip())
    text = re.sub(r"^[&*\s]*(mut\s+|dyn\s+)?", "", text)
    return _last_name(text)


def _end_line(node: Node) -> int:
    """1-based last line; a node that ends with its newline (a #define) ends on the line before."""
    end = node.end_point
    last = end.row + 1 if end.column > 0 else end.row
    return max(last, node.start_point.row + 1)


def _first_error_line(root: Node) -> int:
    stack = [root]
    while stack:
        node = stack.pop()
        if node.is_error or node.is_missing:
            return node.start_point.row + 1
        stack.extend(reversed([c for c in node.children if c.has_error or c.is_missing]))
    return root.start_point.row + 1
