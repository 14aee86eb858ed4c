"""Every language sourcebook reads, one LanguageSpec each: the registry the rest of the code asks.

A spec says how a file is recognised (extensions, file names), how it is parsed (the tree-sitter-language-pack
grammar, whose queries are generator/analyze/queries/<id>.scm, and the LanguageRules around them), how its
imports
resolve to files (a resolver family of generator/analyze/resolve.py), and how its code and docstrings are
shown (code
fence language, docstring flavor). Adding a language is one spec here plus its .scm file (and a golden
fixture in tests/fixtures/languages/).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import PurePosixPath

from generator.analyze.parse_rules import (
    GO_BUILTINS,
    JS_BUILTINS,
    JS_DOC_WRAPPERS,
    JS_WRAPPERS,
    PYTHON_BUILTINS,
    LanguageRules,
    blank_declaration_macros,
    module_as_written,
    module_compact,
    module_csharp,
    module_java,
    module_kotlin,
    public_c,
    public_cpp,
    public_go,
    public_modifiers,
    public_php,
    public_rust,
    separate_call_signatures,
)

ResolverFamily = str  # python | js | go | rust | jvm | c | suffix (generator/analyze/resolve.py)


@dataclass(frozen=True)
class LanguageSpec:
    id: str
    extensions: tuple[str, ...]
    filenames: tuple[str, ...] = ()
    grammar: str | None = None  # tree-sitter-language-pack name; None: not parsed for symbols
    rules: LanguageRules = field(default_factory=LanguageRules)
    resolver: ResolverFamily | None = None
    fence: str | None = None  # code fence / Pygments language (default: the id)
    doc_flavor: str = "markdown"  # docstrings: rst | markdown | godoc | javadoc (markup/docmarkup.py)
    doc_tags: bool = False  # docstrings may carry @param-style tag lines
    # `@var Type $name text` gives a property's type and words (phpDoc), not the name of what a detached
    # comment documents (Doxygen's structural `@var`, dropped as noise)
    doc_var_type: bool = False
    # shipped minified for browsers: a checked-in copy may be minified under its plain name (`prettify.js`),
    # which the scan tells by its content (generator/analyze/scan.py)
    minifiable: bool = False
    doc: bool = False  # a document (markdown, rst, text), not code
    # an extension this language shares with another (C's `.h` with C++): (the other language, the shared
    # extensions, syntax only the other language has); settle_shared decides each such file
    shared: tuple[str, tuple[str, ...], re.Pattern[bytes]] | None = None
    # a name may be declared several times with other parameters (overloads): a page tells them apart by
    # their parameter types. Python's repeated names are a property's setter or an @overload stub, which the
    # page tells apart by their kind.
    overloads: bool = True

    @property
    def code_fence(self) -> str:
        return self.fence or self.id


def _module_scala(text: str) -> str:
    """`import a.b.C` -> a.b.C; `import a.b._` -> a.b.* (a wildcard); `import a.b.{C, D => E}` -> a.b
    (the selected names are the import's names, captured by scala.scm)."""
    text = re.sub(r"^\s*import\s+", "", text).strip()
    text = re.sub(r"\s+", "", text.split("{", 1)[0]).rstrip(".")
    return text[:-2] + ".*" if text.endswith("._") else text


_TS_RULES = LanguageRules(
    wrappers=JS_DOC_WRAPPERS | {"ambient_declaration"},
    signature_wrappers=JS_WRAPPERS | {"ambient_declaration"},
    public=public_modifiers, builtin_names=JS_BUILTINS, signature_skip=frozenset({"decorator"}),
    lowercase_types=True, prepare=separate_call_signatures)

# what only C++ writes, at the start of a line: a namespace, a template, a class with a body, an access label
_CPP_SYNTAX = re.compile(rb"^[ \t]*(?:namespace(?:[ \t]+[\w:]+)?[ \t]*\{|template[ \t]*<|"
                         rb"class[ \t]+\w+[^;()\n]*\{|(?:public|private|protected)[ \t]*:|"
                         rb"using[ \t]+namespace[ \t])", re.M)

LANGUAGES: tuple[LanguageSpec, ...] = (
    LanguageSpec(
        "python", (".py", ".pyi"), grammar="python", resolver="python", doc_flavor="rst", overloads=False,
        rules=LanguageRules(doc_style="python", wrappers=frozenset({"decorated_definition"}),
                            module_text=module_as_written, signature_tail=":", comment_markers=(b"#",),
                            builtin_names=PYTHON_BUILTINS)),
    LanguageSpec(
        "javascript", (".js", ".mjs", ".cjs", ".jsx"), grammar="javascript", resolver="js", fence="js",
        doc_tags=True, minifiable=True,
        rules=LanguageRules(wrappers=JS_DOC_WRAPPERS, signature_wrappers=JS_WRAPPERS, public=public_modifiers,
                            builtin_names=JS_BUILTINS, signature_skip=frozenset({"decorator"}),
                            lowercase_types=True)),
    LanguageSpec("typescript", (".ts", ".mts", ".cts"), grammar="typescript", resolver="js", fence="ts",
                 doc_tags=True, rules=_TS_RULES),
    LanguageSpec("tsx", (".tsx",), grammar="tsx", resolver="js", doc_tags=True, rules=_TS_RULES),
    LanguageSpec(
        "go", (".go",), grammar="go", resolver="go", doc_flavor="godoc",
        rules=LanguageRules(
            wrappers=frozenset({"type_declaration", "const_declaration", "var_declaration"}),
            signature_wrappers=frozenset({"type_declaration", "const_declaration", "var_declaration"}),
            public=public_go, builtin_names=GO_BUILTINS, lowercase_types=True)),
    LanguageSpec(
        "rust", (".rs",), grammar="rust", resolver="rust",
        rules=LanguageRules(comment_types=frozenset({"line_comment", "block_comment"}),
                            attribute_types=frozenset({"attribute_item"}), public=public_rust,
                            module_text=module_compact, lowercase_types=True)),
    LanguageSpec(
        "java", (".java",), grammar="java", resolver="jvm", doc_flavor="javadoc", doc_tags=True,
        rules=LanguageRules(comment_types=frozenset({"line_comment", "block_comment"}),
                            signature_skip=frozenset({"marker_annotation", "annotation"}),
                            public=public_modifiers, module_text=module_java, lowercase_types=True,
                            call_arity=True)),
    LanguageSpec(
        "kotlin", (".kt", ".kts"), grammar="kotlin", resolver="jvm", doc_flavor="javadoc", doc_tags=True,
        rules=LanguageRules(comment_types=frozenset({"line_comment", "multiline_comment", "comment"}),
                            public=public_modifiers, module_text=module_kotlin,
                            implicit_names={"object": "Companion"})),
    LanguageSpec(
        "scala", (".scala", ".sc"), grammar="scala", resolver="jvm", doc_flavor="javadoc", doc_tags=True,
        rules=LanguageRules(comment_types=frozenset({"comment", "block_comment"}),
                            attribute_types=frozenset({"annotation"}),
                            signature_skip=frozenset({"annotation"}),
                            signature_tail="{=:", public=public_modifiers, module_text=_module_scala)),
    LanguageSpec("c", (".c", ".h"), grammar="c", resolver="c", doc_tags=True, fence="c",
                 rules=LanguageRules(public=public_c, prepare=blank_declaration_macros, conditionals=True),
                 shared=("cpp", (".h",), _CPP_SYNTAX)),
    LanguageSpec(
        "cpp", (".cc", ".cpp", ".cxx", ".hpp", ".hh", ".hxx"), grammar="cpp", resolver="c", doc_tags=True,
        rules=LanguageRules(wrappers=frozenset({"template_declaration"}),
                            signature_wrappers=frozenset({"template_declaration"}), public=public_cpp,
                            prepare=blank_declaration_macros, lowercase_types=True, conditionals=True)),
    LanguageSpec(
        "csharp", (".cs",), grammar="csharp", resolver="suffix", doc_tags=True,
        rules=LanguageRules(attribute_types=frozenset({"attribute_list"}),
                            signature_skip=frozenset({"attribute_list"}), public=public_modifiers,
                            module_text=module_csharp,
                            file_scopes=frozenset({"file_scoped_namespace_declaration"}),
                            conditionals=True)),
    LanguageSpec("ruby", (".rb",), grammar="ruby", resolver="suffix", doc_tags=True,
                 rules=LanguageRules(signature_tail="", comment_markers=(b"#",),
                                     symbol_literals=frozenset({"simple_symbol"}),
                                     # `attr_reader :name` of one name: the call is its span, signature, doc
                                     wrappers=frozenset({"argument_list", "call"}),
                                     signature_wrappers=frozenset({"argument_list", "call"}))),
    LanguageSpec(
        "php", (".php",), grammar="php", resolver="suffix", doc_tags=True, doc_var_type=True,
        rules=LanguageRules(attribute_types=frozenset({"attribute_list"}),
                            signature_skip=frozenset({"attribute_list"}),
                            comment_markers=(b"#", b"//", b"/*"),
                            public=public_php, module_text=module_as_written)),
    # read, chunked and searched, but not parsed for symbols
    LanguageSpec("markdown", (".md", ".markdown"), doc=True),
    LanguageSpec("rst", (".rst",), doc=True),
    LanguageSpec("text", (".txt",), filenames=("README", "LICENSE", "CHANGES", "AUTHORS"), doc=True),
    LanguageSpec("toml", (".toml",)),
    LanguageSpec("ini", (".cfg", ".ini")),
    LanguageSpec("yaml", (".yaml", ".yml")),
    LanguageSpec("json", (".json",)),
    LanguageSpec("shell", (".sh", ".bash"), fence="bash"),
    LanguageSpec("html", (".html",)),
    LanguageSpec("css", (".css",), minifiable=True),
    LanguageSpec("sql", (".sql",)),
    LanguageSpec("make", (), filenames=("Makefile",)),
    LanguageSpec("docker", (), filenames=("Dockerfile",)),
)

SPECS: dict[str, LanguageSpec] = {spec.id: spec for spec in LANGUAGES}
_DEFAULT = LanguageSpec("", (), fence="text")

# language id -> the tree-sitter-language-pack grammar name
GRAMMARS: dict[str, str] = {s.id: s.grammar for s in LANGUAGES if s.grammar}
_EXTENSIONS: dict[str, str] = {ext: s.id for s in LANGUAGES for ext in s.extensions}
_FILENAMES: dict[str, str] = {name: s.id for s in LANGUAGES for name in s.filenames}
DOC_LANGUAGES = frozenset(s.id for s in LANGUAGES if s.doc)
SHARED_EXTENSIONS = tuple(sorted({ext for s in LANGUAGES if s.shared for ext in s.shared[1]}))


def spec_for(language: str | None) -> LanguageSpec:
    """The spec of `language`; an unknown or absent one gets defaults (not parsed, fenced as text)."""
    return SPECS.get(language or "", _DEFAULT)


def detect_language(path: str) -> str | None:
    """Return the language id for `path`, or None when it is not a kind of file we read."""
    p = PurePosixPath(path)
    if p.name in _FILENAMES:
        return _FILENAMES[p.name]
    return _EXTENSIONS.get(p.suffix.lower())


def content_language(language: str | None, path: str, content: bytes) -> str | None:
    """`language` (detect_language's), or the language that shares the file's extension when the content
    holds syntax only that one has (a `.h` with a namespace or a template is C++)."""
    shared = spec_for(language).shared
    if shared is not None and path.endswith(shared[1]) and shared[2].search(content):
        return shared[0]
    return language


def shared_majority(counts: dict[str, int]) -> dict[str, str]:
    """language -> the language its shared-extension files are read as in a repository whose own files
    (`counts`: files per language, shared extensions left out) are mostly of the other one: a C++
    repository's `.h` files are C++ even when they hold no C++-only syntax."""
    out = {}
    for spec in LANGUAGES:
        if spec.shared is not None and counts.get(spec.shared[0], 0) > counts.get(spec.id, 0):
            out[spec.id] = spec.shared[0]
    return out


def shares_extension(language: str | None, path: str) -> bool:
    shared = spec_for(language).shared
    return shared is not None and path.endswith(shared[1])


def is_parsed(language: str | None) -> bool:
    """True when tree-sitter extracts symbols for this language."""
    return language in GRAMMARS
