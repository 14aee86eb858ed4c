"""The rules the parse engine applies around the tree-sitter queries, and the helpers languages share.

The queries (generator/analyze/queries/<language>.scm) say *what* is a definition, an import or a reference; a
language's LanguageRules say how it writes the surrounding conventions: where doc comments live, which
nodes wrap a definition (decorators, `export`), how visibility is spelled, and how an import path is
written. Each language's rules are part of its LanguageSpec (generator/analyze/languages.py).
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:
    from tree_sitter import Node

DocStyle = str  # "python" (first string in the body) or "comment" (comments right above)


def _text(node: Node) -> str:
    raw = node.text
    return raw.decode("utf-8", errors="replace") if raw is not None else ""


def _modifier_text(node: Node) -> str:
    """The text of a definition's modifier children (Java/C#/Kotlin/PHP/TS spell visibility there)."""
    parts = []
    for child in node.children:
        if child.type in _MODIFIER_TYPES:
            parts.append(_text(child))
        elif child.type in ("body", "block", "class_body", "declaration_list"):
            break
    return " ".join(parts)


_MODIFIER_TYPES = frozenset({
    "modifiers", "modifier", "accessibility_modifier", "visibility_modifier", "visibility_modifier_list",
    "storage_class_specifier", "private", "protected", "public", "static",
})


_PRIVATE = re.compile(r"\b(private|internal|fileprivate)\b")
_PRIVATE_OR_PROTECTED = re.compile(r"\b(private|protected)\b")


def public_by_name(name: str, node: Node) -> bool:
    if name.startswith("__") and name.endswith("__"):
        return True
    return not name.startswith(("_", "#"))


def public_go(name: str, node: Node) -> bool:
    return name[:1].isupper()


def public_rust(name: str, node: Node) -> bool:
    if any(c.type == "visibility_modifier" for c in node.children):
        return True
    # trait items and trait-impl methods are as visible as the trait itself
    parent = node.parent
    while parent is not None and parent.type in ("declaration_list", "attribute_item"):
        parent = parent.parent
    if parent is not None and parent.type == "trait_item":
        return True
    return bool(parent is not None and parent.type == "impl_item" and parent.child_by_field_name("trait"))


def public_modifiers(name: str, node: Node) -> bool:
    mods = _modifier_text(node)
    if _PRIVATE.search(mods):
        return False
    return public_by_name(name, node)


def public_php(name: str, node: Node) -> bool:
    return not _PRIVATE_OR_PROTECTED.search(_modifier_text(node))


def public_c(name: str, node: Node) -> bool:
    return "static" not in _modifier_text(node) and not name.startswith("_")


# what wraps a member inside a C++ class body: `template <…>` before it, the field_declaration that holds a
# nested `class B {…};`
_CPP_MEMBER_WRAPPERS = frozenset({"template_declaration", "field_declaration"})


def public_cpp(name: str, node: Node) -> bool:
    """C++: a class member is as visible as the last access label above it (`private:`, `protected:`,
    `public:`), or, before any label, as its class keyword makes it (`class` private, `struct`/`union`
    public). Protected members are not the class's public API either: a user of the class cannot call them."""
    if not public_modifiers(name, node):
        return False
    member = node
    while member.parent is not None and member.parent.type in _CPP_MEMBER_WRAPPERS:
        member = member.parent
    body = member.parent
    if body is None or body.type != "field_declaration_list":
        return True
    sibling = member.prev_sibling
    while sibling is not None:
        if sibling.type == "access_specifier":
            return _text(sibling).strip().startswith("public")
        sibling = sibling.prev_sibling
    owner = body.parent
    return owner is None or owner.type != "class_specifier"


def _strip_quotes(text: str) -> str:
    return text.strip().strip("\"'`<>")


def module_as_written(text: str) -> str:
    return text.strip()


def module_compact(text: str) -> str:
    return re.sub(r"\s+", "", text)


def module_java(text: str) -> str:
    text = re.sub(r"^\s*import\s+(static\s+)?", "", text).strip().rstrip(";").strip()
    return re.sub(r"\s+", "", text)


def module_kotlin(text: str) -> str:
    text = re.sub(r"^\s*import\s+", "", text).strip().split("\n", 1)[0]
    text = re.sub(r"\s*(/[/*].*)?$", "", text)
    return re.sub(r"\s+as\s+\w+$", "", text).strip()


def module_csharp(text: str) -> str:
    text = re.sub(r"^\s*(global\s+)?using\s+(static\s+)?", "", text).strip().rstrip(";").strip()
    return text.split("=", 1)[-1].strip()


_MACRO = rb"[A-Z][A-Z0-9_]{2,}"
# `class SPDLOG_API logger {`, `struct FOO_EXPORT bar : base`: a bare upper-case word between the keyword and
# the name is an export macro (a class has one name)
_CLASS_MACRO = re.compile(rb"\b(?:class|struct|union)[ \t]+(" + _MACRO
                          + rb")[ \t]+(?=[A-Za-z_]\w*\s*(?:final\b|[:{]))")
# `SPDLOG_API void f(`, `SPDLOG_INLINE logger::logger(`: a bare upper-case word that starts a declaration
# and is followed, before the `(`, by a type and a declarator or by a qualified name. A return type spelled
# in upper case (`FILE *open(`) has only a declarator after it, so it is never the word taken. The type may
# be a template's (`FMT_CONSTEXPR ansi_color_escape<Char> make_emphasis(`); several macros may follow each
# other (`FMT_NORETURN FMT_API void assert_fail(`) or a keyword (`constexpr FMT_INLINE auto f(`).
# Source is untrusted: every part has one way to match and the look-ahead is bounded, so a long line of
# upper-case words (no declaration) costs a bounded scan per word, not a cubic search (8,000 characters of
# `FOO FOO …` took 33 s). The head a macro starts is at most _HEAD characters before its `(`, a run of at most
# 8 macros; `[ \t*&]++` is `[ \t*&]+[*&]*[ \t]*` (the same strings) read once.
_HEAD = rb"{0,512}"
_LEAD_MACRO = re.compile(rb"^[ \t]*(?:template[ \t]*<[^;{}\n]*>[ \t]*)?"
                         rb"(?:(?:static|inline|constexpr|virtual|explicit|extern|friend)[ \t]+)*"
                         rb"(" + _MACRO + rb"(?:[ \t]+" + _MACRO + rb"){0,7})[ \t]+"
                         rb"(?=(?>[^;=(){}#\n]" + _HEAD + rb")\()"
                         rb"(?=[^;=(){}#\n]" + _HEAD + rb"?(?:[\w>][ \t*&]++~?\w|::))", re.M)
# `FMT_MODULE_EXPORT template <typename Char>`: an export macro before a template (no type is followed by one)
_TEMPLATE_MACRO = re.compile(rb"^[ \t]*(" + _MACRO + rb")[ \t]+(?=template[ \t]*<)", re.M)
# `CJSON_PUBLIC(cJSON *) cJSON_Parse(`: a macro call in return-type position, its argument the type
_CALL_MACRO = re.compile(rb"^[ \t]*(" + _MACRO + rb"\()([^()\n]*)(\))[ \t]+(?=~?[A-Za-z_][\w:]*[ \t]*\()",
                         re.M)


# `#ifdef __cplusplus` / `extern "C" {` / `#endif` and its closing `}` block: a brace each side of the file
# that a grammar which does not run the preprocessor reads as unbalanced (a syntax error on valid code)
_CPLUSPLUS_BRACE = re.compile(
    rb"^[ \t]*#[ \t]*if(?:def[ \t]+__cplusplus|[ \t]+defined[ \t]*\(?[ \t]*__cplusplus\)?)[^\n]*\n"
    rb"([ \t]*(?:extern[ \t]+\"C\"\s*\{|\})[ \t]*(?://[^\n]*)?)\n[ \t]*#[ \t]*endif", re.M)


# `#if __has_include(<optional>)`: a header name in angle brackets inside a condition, which the grammar
# reads as comparisons and fails on (the rest of a big header then parses as errors). A quoted name fails
# too (a condition holds no string), so the name becomes one identifier of the same length:
# `( optional )`, `( sys_stat_h )`
_IF_LINE = re.compile(rb"^[ \t]*#[ \t]*(?:el)?if\b[^\n]*", re.M)
_ANGLE_HEADER = re.compile(rb"\(([<\"])([^<>()\"\n]*)[>\"]\)")
_NOT_WORD = re.compile(rb"\W")


def _header_identifier(m: re.Match[bytes]) -> bytes:
    return b"( " + _NOT_WORD.sub(b"_", m.group(2)) + b" )"


# `FMT_BEGIN_NAMESPACE` alone on a line at column 0: a macro that expands to code (often an opening or a
# closing brace). No C or C++ statement is a bare word; the grammar would glue it to the next declaration.
# So is a macro call alone at column 0 with no `;` (`CXXOPTS_IGNORE_WARNING("-Wshadow")`), unless a `{`
# opens on the next line (a function whose name a macro makes). A line after a `\` belongs to a #define.
_LONE_MACRO = re.compile(rb"(?<!\\\n)^(" + _MACRO + rb"(?:\((?:[^()\n]|\([^()\n]*\))*\))?)"
                         rb"[ \t]*$(?!\n[ \t]*\{)", re.M)
# An indented one (`  CXXOPTS_NODISCARD` above a member function, `  FMT_MSC_WARNING(suppress : 26495)`) is
# a specifier macro or a pragma when a declaration ended before it (the line above ends with `;`, `{`, `}`
# or `:`, or is blank, a comment or a directive) and another follows (the next line starts no `}`, `,` or
# `=`): an enum's last value is left alone.
_INDENTED_MACRO = re.compile(rb"^[ \t]+(" + _MACRO + rb"(?:\([^()\n]*\))?)[ \t]*$", re.M)
_ENDS_DECLARATION = re.compile(rb"(?:[;{}:]|\*/|^[ \t]*(?://.*|#.*)?)[ \t]*$")


def _indented_macros(data: bytes) -> list[tuple[int, int]]:
    spans = []
    for m in _INDENTED_MACRO.finditer(data):
        line_start = m.start()
        prev_end = line_start - 1
        prev_start = data.rfind(b"\n", 0, max(prev_end, 0)) + 1
        before = data[prev_start:prev_end] if prev_end > 0 else b""
        after = data[m.end() + 1:data.find(b"\n", m.end() + 1) if b"\n" in data[m.end() + 1:] else len(data)]
        if _ENDS_DECLARATION.search(before) and not before.endswith(b"\\") \
                and not after.lstrip().startswith((b"}", b",", b"=")):
            spans.append(m.span(1))
    return spans


# `FMT_CONSTEXPR basic_string_view(const Char* s)`: an upper-case word before a constructor (a name a
# `class`/`struct` of the file declares, followed by `(`) is a specifier macro. Only a class's own name
# tells a constructor from a function whose return type is an upper-case word (`BOOL open(`, `SOCKET s(`).
_CTOR_MACRO = re.compile(rb"^[ \t]*(?:template[ \t]*<[^;{}\n]*>[ \t]*)?"
                         rb"(?:(?:constexpr|inline|explicit)[ \t]+)*"
                         rb"(" + _MACRO + rb"(?:[ \t]+" + _MACRO + rb")*)[ \t]+"
                         rb"(?:(?:explicit|constexpr|inline|virtual)[ \t]+)*~?([A-Za-z_]\w*)[ \t]*\(", re.M)
_CLASS_NAME = re.compile(rb"\b(?:class|struct)[ \t]+(?:" + _MACRO + rb"[ \t]+)?([A-Za-z_]\w*)")


def _constructor_macros(data: bytes) -> list[tuple[int, int]]:
    found = list(_CTOR_MACRO.finditer(data))
    if not found:
        return []
    classes = set(_CLASS_NAME.findall(data))
    return [m.span(1) for m in found if m.group(2) in classes]


# `logger(logger &&other) SPDLOG_NOEXCEPT;`, `f() FOO_OVERRIDE {`: an upper-case word between a parameter
# list and what ends a declarator is a specifier macro (noexcept, override, an attribute); a space after the
# `)` is asked for, so a cast of a constant (`(void*)REDIS_REPLY_INTEGER;`) is left alone
_TRAILING_MACRO = re.compile(rb"\)[ \t]+(?:const[ \t]+)?(" + _MACRO
                             + rb")(?=[ \t]*(?:[;{=]|const\b|override\b|final\b|->|\n))")


def _quote_header_names(data: bytes) -> bytes:
    if b"(<" not in data and b'("' not in data:
        return data
    return _IF_LINE.sub(lambda m: _ANGLE_HEADER.sub(_header_identifier, m.group(0)), data)


def blank_declaration_macros(data: bytes) -> bytes:
    """C and C++ source with the export macros of declarations blanked out (spaces, so every byte keeps its
    offset): a grammar that does not expand macros reads `SPDLOG_API void f();` as an error and
    `class SPDLOG_API logger {` as a function. Which words are macros is told by position, never by name.
    The `extern "C" {` of a header that C++ may include goes too (see _CPLUSPLUS_BRACE)."""
    data = _quote_header_names(data)
    spans: list[tuple[int, int]] = []
    if b"__cplusplus" in data:
        spans += [m.span(1) for m in _CPLUSPLUS_BRACE.finditer(data)]
    for m in _CLASS_MACRO.finditer(data):
        spans.append(m.span(1))
    for m in _LEAD_MACRO.finditer(data):
        spans.append(m.span(1))
    for m in _CALL_MACRO.finditer(data):
        spans += [m.span(1), m.span(3)]
    if b"template" in data:
        spans += [m.span(1) for m in _TEMPLATE_MACRO.finditer(data)]
    spans += [m.span(1) for m in _LONE_MACRO.finditer(data)]
    spans += _indented_macros(data)
    spans += _constructor_macros(data)
    spans += [m.span(1) for m in _TRAILING_MACRO.finditer(data)]
    return blank_spans(data, spans)


# A conditional directive of the preprocessor (C, C++, C#: the same syntax), at the start of a line. Its line
# goes on through a `\` at its end (C); group 1 is the directive.
_CONDITIONAL = re.compile(rb"^[ \t]*#[ \t]*(if|ifdef|ifndef|elif|elifdef|elifndef|else|endif)\b"
                          rb"(?:[^\n]*\\\r?\n)*[^\n]*", re.M)
_OPENS = frozenset({b"if", b"ifdef", b"ifndef"})
# `#ifndef X` / `#if !defined(X)` then `#define X`: an include guard, around the whole header
_GUARD = re.compile(rb"[ \t]*#[ \t]*(?:ifndef[ \t]+(\w+)|if[ \t]+!\s*defined[ \t]*\(?[ \t]*(\w+)[ \t]*\)?)"
                    rb"[ \t]*(?://[^\n]*|/\*[^\n]*?\*/)?[ \t]*\r?\n(?:[ \t]*\r?\n)*"
                    rb"[ \t]*#[ \t]*define[ \t]+(\w+)")


def conditional_starts(data: bytes) -> list[int]:
    """Where each `#if`/`#ifdef`/`#ifndef` of a file starts (the offset of its `#`)."""
    if b"#" not in data:
        return []
    return [data.index(b"#", m.start()) for m in _CONDITIONAL.finditer(data) if m.group(1) in _OPENS]


class FirstBranches(NamedTuple):
    data: bytes  # the source with only the first branches, every offset kept
    dropped: list[tuple[int, int]]  # the byte ranges of the branches blanked (after their `#else` line)
    blanked: list[tuple[int, int]]  # every byte range blanked: those branches and the directive lines


def keep_first_branches(data: bytes, whole: Collection[int] = ()) -> FirstBranches:
    """C, C++ or C# source as if each preprocessor conditional held only its first branch: the `#elif` and
    `#else` branches and the directive lines are blanked with spaces (newlines kept, so every byte keeps its
    offset and every line its number). Tree-sitter runs no preprocessor: a conditional inside a declaration
    (`class Logger : ILogger` then `#if NET6` `, IDisposable` `#endif`, an initializer split between
    branches) is read, with both branches as one text, as a syntax error. Nested conditionals inside a kept
    branch are flattened the same way. An include guard stays as written, and so does each conditional
    whose `#` offset is in `whole` (one the grammar reads as a conditional: its branches keep their symbols;
    the conditionals nested in it are judged on their own)."""
    spans: list[tuple[int, int]] = []
    dropped: list[tuple[int, int]] = []
    # per open conditional: (written as is, in a dropped branch: its own or an outer one's)
    stack: list[tuple[bool, bool]] = []
    drop_from = body_from = 0  # where the outermost dropped branch began: its directive, the line after
    for m in _CONDITIONAL.finditer(data):
        word, start, end = m.group(1), m.start(), m.end()
        as_is, dropping = stack[-1] if stack else (False, False)
        if word in _OPENS:
            # an include guard's own lines stay; what it holds is flattened as any other text
            as_is = data.index(b"#", start) in whole or (not stack and _is_guard(data, start, word))
            stack.append((as_is, dropping))
            if not as_is and not dropping:
                spans.append((start, end))
        elif not stack:  # an `#else` or `#endif` without its `#if` (a fragment of a file): left as written
            continue
        elif word == b"endif":
            stack.pop()
            outer_dropping = bool(stack) and stack[-1][1]
            if dropping and not outer_dropping:
                spans.append((drop_from, start))
                dropped.append((body_from, start))
            if not as_is and not outer_dropping:
                spans.append((start, end))
        elif not as_is:  # `#elif`, `#else`: what follows up to the `#endif` is dropped
            if not dropping:
                drop_from, body_from = start, end
            stack[-1] = (False, True)
    if stack and stack[-1][1]:  # a conditional the file never closes
        spans.append((drop_from, len(data)))
        dropped.append((body_from, len(data)))
    return FirstBranches(blank_spans(data, spans), dropped, spans)


def blank_spans(data: bytes, spans: list[tuple[int, int]]) -> bytes:
    """`data` with the bytes of each span but newlines turned to spaces: every offset and line stays."""
    if not spans:
        return data
    out = bytearray(data)
    for start, end in spans:
        out[start:end] = bytes(b if b == 0x0A else 0x20 for b in data[start:end])
    return bytes(out)


def _is_guard(data: bytes, start: int, word: bytes) -> bool:
    """Whether the conditional at `start` is an include guard: `#ifndef X` or `#if !defined(X)`, then
    `#define X`."""
    if word not in (b"ifndef", b"if"):
        return False
    m = _GUARD.match(data, start)
    return m is not None and (m.group(1) or m.group(2)) == m.group(3)


# TypeScript: a generic call signature on its own line in a type literal (`(): T` then `<U>(s: U): U`) is
# valid, but the grammar reads `T\n<U>(…)` as one type (a syntax error); a `;` in place of the first
# indentation space separates the members as the compiler does, keeping every offset and line. Only after
# a line that ends a type (a name, `)`, `]`, `}`, `>`), never after `=`, `=>` or an operator.
_GENERIC_CALL_SIGNATURE = re.compile(rb"((?:[\w$)\]}]|(?<!=)>)[ \t]*\n(?:[ \t]*\n)*)[ \t]"
                                     rb"(?=[ \t]*<[A-Za-z_$][\w$]*(?:\s*(?:,|extends|=)[^>\n]*)?>\()")


def separate_call_signatures(data: bytes) -> bytes:
    """TypeScript source with `;` before each generic call signature that starts a line (see above)."""
    if b"\n" not in data or b">(" not in data:
        return data
    return _GENERIC_CALL_SIGNATURE.sub(rb"\1;", data)


@dataclass(frozen=True)
class LanguageRules:
    doc_style: DocStyle = "comment"
    # node types that wrap a definition: the doc comment sits above them and the span includes them
    wrappers: frozenset[str] = frozenset()
    # wrappers whose text belongs in the signature ("export function f(...)")
    signature_wrappers: frozenset[str] = frozenset()
    comment_types: frozenset[str] = frozenset({"comment"})
    # how a comment starts: a signature containing none of these has no comment to drop
    comment_markers: tuple[bytes, ...] = (b"//", b"/*")
    # siblings between a doc comment and its definition that do not break the link (attributes)
    attribute_types: frozenset[str] = frozenset()
    # container node types a nested definition is a member of, even if not captured as a symbol
    public: Callable[[str, Node], bool] = public_by_name
    module_text: Callable[[str], str] = _strip_quotes
    # characters stripped from the end of a signature ("{" of a body, ":" of a Python block)
    signature_tail: str = "{:"
    # nodes left out of a signature (decorators of an exported class, Java annotations)
    signature_skip: frozenset[str] = frozenset()
    # names a reference never resolves to inside a repository (the language's builtins): not recorded
    builtin_names: frozenset[str] = frozenset()
    # whether a lower-case type name may be one of the repository's (Go's unexported `node`), so a binding
    # `n *node` tells the call graph something; in Python `x: int` never does. Also whether a local of
    # unknown type is kept, to shadow the definitions of the same name (the languages bound by type)
    lowercase_types: bool = False
    # whether a call records its number of arguments (Java: which overload of a method it calls)
    call_arity: bool = False
    # a definition whose @name is a keyword node of these types is named by the language: Kotlin's
    # companion object without a name is `Companion`
    implicit_names: Mapping[str, str] = field(default_factory=dict)
    # name nodes written as a symbol literal (Ruby's `attr_reader :name`): the name is the text after the `:`
    symbol_literals: frozenset[str] = frozenset()
    # rewrites a file's bytes before parsing, keeping every offset (C/C++: blank_declaration_macros)
    prepare: Callable[[bytes], bytes] | None = None
    # whether the language has the C preprocessor's conditionals (`#if`/`#else`/`#endif`): a file they break
    # is parsed again with only their first branches (keep_first_branches)
    conditionals: bool = False
    # declarations whose scope is the rest of the file, not a block (C#'s file-scoped `namespace Foo.Bar;`):
    # what follows is inside them, as in a block, and named under them
    file_scopes: frozenset[str] = frozenset()
    class_kinds: frozenset[str] = field(
        default_factory=lambda: frozenset({"class", "struct", "interface", "trait", "enum", "impl", "type"})
    )


PYTHON_BUILTINS = frozenset(n for n in dir(builtins) if not n.startswith("_"))
JS_BUILTINS = frozenset({
    "require", "parseInt", "parseFloat", "isNaN", "setTimeout", "clearTimeout", "setInterval",
    "clearInterval", "Promise", "Error", "TypeError", "Array", "Object", "String", "Number", "Boolean",
    "Map", "Set", "Date", "RegExp", "Symbol", "JSON", "Math", "console",
})
GO_BUILTINS = frozenset({
    "append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make", "max", "min",
    "new", "panic", "print", "println", "real", "recover",
})

JS_WRAPPERS = frozenset({"export_statement", "lexical_declaration", "variable_declaration"})
JS_DOC_WRAPPERS = JS_WRAPPERS | {"expression_statement"}  # `exports.f = function` and `namespace X`
