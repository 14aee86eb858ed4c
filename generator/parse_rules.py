"""Per-language rules the parse engine applies around the tree-sitter queries.

The queries (generator/queries/<language>.scm) say *what* is a definition, an import or a reference; these
rules say how a language writes the surrounding conventions: where doc comments live, which nodes wrap a
definition (decorators, `export`), how visibility is spelled, and how an import path is written.
"""

from __future__ import annotations

import builtins
import re
from collections.abc import Callable
from dataclasses import dataclass, field

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


def _public_by_name(name: str, node: Node) -> bool:
    if name.startswith("__") and name.endswith("__"):
        return True
    return not name.startswith(("_", "#"))


def _public_go(name: str, node: Node) -> bool:
    return name[:1].isupper()


def _public_rust(name: str, node: Node) -> bool:
    if any(c.type == "visibility_modifier" for c in node.children):
        return True
    # trait items and trait-impl methods are as visible as the trait itself
    parent = node.parent
    while parent is not None and parent.type in ("declaration_list", "attribute_item"):
        parent = parent.parent
    if parent is not None and parent.type == "trait_item":
        return True
    return bool(parent is not None and parent.type == "impl_item" and parent.child_by_field_name("trait"))


def _public_modifiers(name: str, node: Node) -> bool:
    mods = _modifier_text(node)
    if _PRIVATE.search(mods):
        return False
    return _public_by_name(name, node)


def _public_php(name: str, node: Node) -> bool:
    return not _PRIVATE_OR_PROTECTED.search(_modifier_text(node))


def _public_c(name: str, node: Node) -> bool:
    return "static" not in _modifier_text(node) and not name.startswith("_")


def _strip_quotes(text: str) -> str:
    return text.strip().strip("\"'`<>")


def _module_as_written(text: str) -> str:
    return text.strip()


def _module_compact(text: str) -> str:
    return re.sub(r"\s+", "", text)


def _module_java(text: str) -> str:
    text = re.sub(r"^\s*import\s+(static\s+)?", "", text).strip().rstrip(";").strip()
    return re.sub(r"\s+", "", text)


def _module_kotlin(text: str) -> str:
    text = re.sub(r"^\s*import\s+", "", text).strip().split("\n", 1)[0]
    text = re.sub(r"\s*(/[/*].*)?$", "", text)
    return re.sub(r"\s+as\s+\w+$", "", text).strip()


def _module_csharp(text: str) -> str:
    text = re.sub(r"^\s*(global\s+)?using\s+(static\s+)?", "", text).strip().rstrip(";").strip()
    return text.split("=", 1)[-1].strip()


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
    public: Callable[[str, Node], bool] = _public_by_name
    module_text: Callable[[str], str] = _strip_quotes
    # characters stripped from the end of a signature ("{" of a body, ":" of a Python block)
    signature_tail: str = "{:"
    # nodes left out of a signature (decorators of an exported class, Java annotations)
    signature_skip: frozenset[str] = frozenset()
    # names a reference never resolves to inside a repository (the language's builtins): not recorded
    builtin_names: frozenset[str] = frozenset()
    class_kinds: frozenset[str] = field(
        default_factory=lambda: frozenset({"class", "struct", "interface", "trait", "enum", "impl", "type"})
    )


_PYTHON_BUILTINS = frozenset(n for n in dir(builtins) if not n.startswith("_"))
_JS_BUILTINS = frozenset({
    "require", "parseInt", "parseFloat", "isNaN", "setTimeout", "clearTimeout", "setInterval",
    "clearInterval", "Promise", "Error", "TypeError", "Array", "Object", "String", "Number", "Boolean",
    "Map", "Set", "Date", "RegExp", "Symbol", "JSON", "Math", "console",
})
_GO_BUILTINS = frozenset({
    "append", "cap", "clear", "close", "complex", "copy", "delete", "imag", "len", "make", "max", "min",
    "new", "panic", "print", "println", "real", "recover",
})

_JS_WRAPPERS = frozenset({"export_statement", "lexical_declaration", "variable_declaration"})
_JS_DOC_WRAPPERS = _JS_WRAPPERS | {"expression_statement"}  # `exports.f = function` and `namespace X`

RULES: dict[str, LanguageRules] = {
    "python": LanguageRules(
        doc_style="python",
        wrappers=frozenset({"decorated_definition"}),
        module_text=_module_as_written,
        signature_tail=":",
        comment_markers=(b"#",),
        builtin_names=_PYTHON_BUILTINS,

    ),
    "javascript": LanguageRules(
        wrappers=_JS_DOC_WRAPPERS, signature_wrappers=_JS_WRAPPERS, public=_public_modifiers,
        builtin_names=_JS_BUILTINS,
        signature_skip=frozenset({"decorator"}),
    ),
    "typescript": LanguageRules(
        wrappers=_JS_DOC_WRAPPERS | {"ambient_declaration"},
        signature_wrappers=_JS_WRAPPERS | {"ambient_declaration"},
        public=_public_modifiers,
        builtin_names=_JS_BUILTINS,
        signature_skip=frozenset({"decorator"}),
    ),
    "tsx": LanguageRules(
        wrappers=_JS_DOC_WRAPPERS | {"ambient_declaration"},
        signature_wrappers=_JS_WRAPPERS | {"ambient_declaration"},
        public=_public_modifiers,
        builtin_names=_JS_BUILTINS,
        signature_skip=frozenset({"decorator"}),
    ),
    "go": LanguageRules(
        wrappers=frozenset({"type_declaration", "const_declaration", "var_declaration"}),
        signature_wrappers=frozenset({"type_declaration", "const_declaration", "var_declaration"}),
        public=_public_go,
        builtin_names=_GO_BUILTINS,
    ),
    "rust": LanguageRules(
        comment_types=frozenset({"line_comment", "block_comment"}),
        attribute_types=frozenset({"attribute_item"}),
        public=_public_rust,
        module_text=_module_compact,
    ),
    "java": LanguageRules(
        comment_types=frozenset({"line_comment", "block_comment"}),
        signature_skip=frozenset({"marker_annotation", "annotation"}),
        public=_public_modifiers,
        module_text=_module_java,
    ),
    "c": LanguageRules(public=_public_c),
    "cpp": LanguageRules(
        wrappers=frozenset({"template_declaration"}),
        signature_wrappers=frozenset({"template_declaration"}),
        public=_public_modifiers,
    ),
    "csharp": LanguageRules(
        attribute_types=frozenset({"attribute_list"}),
        signature_skip=frozenset({"attribute_list"}),
        public=_public_modifiers,
        module_text=_module_csharp,
    ),
    "ruby": LanguageRules(signature_tail="", comment_markers=(b"#",)),
    "php": LanguageRules(
        attribute_types=frozenset({"attribute_list"}),
        signature_skip=frozenset({"attribute_list"}),
        comment_markers=(b"#", b"//", b"/*"),
        public=_public_php,
        module_text=_module_as_written,
    ),
    "kotlin": LanguageRules(
        comment_types=frozenset({"line_comment", "multiline_comment", "comment"}),
        public=_public_modifiers,
        module_text=_module_kotlin,
    ),
}
