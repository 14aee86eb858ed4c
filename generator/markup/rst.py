"""reStructuredText (a README.rst, a doc page) -> sanitized HTML for a page, offline and inert.

docutils parses and writes the HTML; the text is untrusted, so: no raw HTML, no file insertion (`include`,
`raw`, `csv-table :file:`), no config files read, no messages printed. Sphinx's roles and directives, which
docutils does not know, are registered as harmless stand-ins (a role shows its text as code, `versionadded`
and friends become admonitions, `toctree`/`autoclass`/... disappear) so they never show as raw markup or
as error boxes. Images are dropped (a badge becomes its link, labelled by its alt text): the site works
offline. Relative links go through a resolver (to a page, or dropped keeping their words), other links must
be http(s)/mailto. The HTML then passes the site's allowlist sanitizer (html_sanitize).
"""

from __future__ import annotations

import copy
import io
import logging
import posixpath
import re
from collections.abc import Callable
from functools import cache
from html import escape as html_escape
from typing import Any, ClassVar

from generator.markup.doc_budget import RenderBudgetExceeded, cpu_budget
from generator.markup.doc_links import LinkResolver, link_target

log = logging.getLogger(__name__)

Reader = Callable[[str], str | None]

# Sphinx roles that name an API object or a document: shown as code (a README has no symbol context)
_SPHINX_CODE_ROLES = ("class", "func", "meth", "attr", "mod", "exc", "data", "obj", "const", "type", "any",
                      "envvar", "option", "program", "command", "file", "samp", "kbd", "makevar", "confval",
                      "setting", "regexp", "mimetype", "token", "keyword", "function", "method", "member",
                      "struct", "enum", "macro", "var", "prop", "attribute", "module", "exception")
_SPHINX_TEXT_ROLES = ("ref", "doc", "term", "abbr", "dfn", "guilabel", "menuselection", "numref", "download",
                      "manpage", "issue", "pr", "user", "gh", "bug", "commit", "pypi", "sub", "sup")
_VERSION_DIRECTIVES = {"versionadded": "Added in version", "versionchanged": "Changed in version",
                       "deprecated": "Deprecated since version", "versionremoved": "Removed in version"}
_ADMONITION_LIKE = {"seealso": "See also", "todo": "To do", "versionadded": "", "versionchanged": "",
                    "deprecated": "", "versionremoved": ""}
_CODE_DIRECTIVES = ("code-block", "sourcecode", "doctest", "testcode", "testoutput", "ipython", "console")

_API_ROLES = frozenset({"class", "func", "meth", "attr", "mod", "exc", "data", "obj", "const", "any",
                        "function", "method", "attribute", "module", "exception", "decorator", "property"})
_AUTODOC = frozenset({"autoclass", "autofunction", "automethod", "autoexception", "autodata", "autoattribute",
                      "automodule", "autodecorator", "autoproperty", "function", "class", "method",
                      "exception", "attribute", "data", "decorator", "property"})
_ROLE_USE = re.compile(r"(?<![\w`]):(?:[A-Za-z][\w.+-]*:)?([A-Za-z][\w.+-]*):`([^`]+)`")
# line-bound ([ \t], not \s): `^\s*` ran across blank lines from every line start, quadratic in a run of them
# (a hostile megabyte of blank lines took minutes: docs/performance.md)
_AUTODOC_USE = re.compile(r"^[ \t]*\.\.[ \t]+(?:py:)?(?:auto\w+|class|function|method|exception|data"
                          r"|attribute|decorator|property)::[ \t]*([\w.]+)", re.M)
_MODULE_USE = re.compile(r"^[ \t]*\.\.[ \t]+(?:py:)?(?:current)?module::[ \t]*([\w.]+)", re.M)
_ROLE_NAME = re.compile(r"(?<![\w`]):((?:[A-Za-z][\w.+-]*:)?[A-Za-z][\w.+-]*):`")
_DIRECTIVE_NAME = re.compile(r"^[ \t]*\.\.[ \t]+([A-Za-z][\w:.+-]*)::", re.M)


def render_rst(text: str, resolve: LinkResolver | None = None, *, heading_level: int = 3,
               symbol: LinkResolver | None = None, path: str = "", read: Reader | None = None) -> str:
    """HTML for a reST document's body (its title left out: the page has one), sanitized.

    `resolve`: a relative link -> a page's URL (None: the link goes, its words stay). `symbol`: a dotted name
    (`flask.Flask`, `Flask.route`) -> the URL of its symbol's section; API roles (`:class:`) and autodoc
    directives (`.. autoclass::`) it resolves become links, the rest plain code. `path`: the document's
    repository path and `read` the repository's text files, for `.. include::`
    (generator/markup/doc_includes.py;
    without them an include shows a note)."""
    _register(tuple(sorted(set(_ROLE_NAME.findall(text)))), tuple(sorted(set(_DIRECTIVE_NAME.findall(text)))))
    settings = _settings(heading_level)
    settings.sb_symbol = symbol
    settings.sb_path, settings.sb_read = path, read
    settings.sb_source = None
    if read is not None and path and "include::" in text:
        from generator.markup.doc_includes import sphinx_source

        settings.sb_source = sphinx_source(path, read)
    resolver: LinkResolver = resolve or (lambda _url: None)
    try:
        with cpu_budget():
            return _render(text, settings, resolver)
    except (Exception, RenderBudgetExceeded) as exc:  # noqa: BLE001 -- any docutils failure on untrusted
        # text (RecursionError; over the CPU budget: generator/markup/doc_budget.py...)
        # the text stays readable, escaped; never a traceback, never the build's end (docutils' own report
        # would print and sys.exit: settings.traceback makes it raise instead)
        log.warning("a reST document was shown as text: docutils failed on it (%s)", type(exc).__name__)
        return f'<pre class="sb-rst-text">{html_escape(text, quote=False)}</pre>'


def _render(text: str, settings: Any, resolver: LinkResolver) -> str:
    from docutils import nodes
    from docutils.core import publish_doctree, publish_from_doctree

    from generator.markup.html_sanitize import sanitize_document

    doctree = publish_doctree(text, settings=settings)
    if len(doctree) == 1 and isinstance(doctree[0], nodes.system_message) and text.strip():
        # docutils gave up on the whole text (a line over its line_length_limit): shown as text instead
        raise ValueError(doctree[0].astext())
    for node in list(doctree.findall(nodes.system_message)) + list(doctree.findall(nodes.problematic)):
        if node.parent is not None:
            node.parent.remove(node)
    for image in list(doctree.findall(nodes.image)):
        _drop_image(image, nodes)
    for ref in list(doctree.findall(nodes.reference)):
        uri = ref.get("refuri")
        if uri is None or ref.get("sb_symbol"):  # a symbol link: resolved by `symbol`, already a page URL
            continue
        target = link_target(uri, resolver)
        if target is None:
            ref.replace_self(ref.children or [nodes.Text(ref.astext())])
        else:
            ref["refuri"] = target
    for marked in list(doctree.findall(lambda n: isinstance(n, (nodes.strong, nodes.emphasis)))):
        _nested_literals(marked, nodes)
    for raw in list(doctree.findall(nodes.raw)):  # belt and braces: raw_enabled is already off
        raw.parent.remove(raw)
    for section in doctree.findall(nodes.section):
        # the sanitizer keeps headings, not <section>: a section's id moves to its heading, so the page's
        # outline (and any #link) can point at it
        if section["ids"] and section.children and isinstance(section[0], nodes.title):
            section[0]["ids"], section["ids"] = list(section["ids"]), []
    body = publish_from_doctree(doctree, writer="html5", settings=settings)
    html = _body_of(body if isinstance(body, str) else body.decode("utf-8"))
    return sanitize_document(html).strip()


_NESTED_LITERAL = re.compile(r"``(?=\S)(.+?)(?<=\S)``")


def _nested_literals(marked: Any, nodes: Any) -> None:
    """``code`` inside **bold** or *emphasis*: reST has no nested inline markup, so docutils leaves its
    backticks as text (`**Starting in v2.0: a ``DeprecationWarning`` will fail**`); the author meant code."""
    for child in list(marked.children):
        if not isinstance(child, nodes.Text) or "``" not in child.astext():
            continue
        text, parts, last = child.astext(), [], 0
        for m in _NESTED_LITERAL.finditer(text):
            parts += [nodes.Text(text[last:m.start()]), nodes.literal(m.group(1), m.group(1))]
            last = m.end()
        if parts:
            marked.replace(child, [*parts, nodes.Text(text[last:])])


def xref_targets(text: str) -> set[str]:
    """The names a document's API roles and autodoc directives may link to, each also under the modules the
    document declares (`.. module:: flask` then `.. autoclass:: Flask` is `flask.Flask`): the names whose
    targets are part of its page's key."""
    names = {_target_name(t) for role, t in _ROLE_USE.findall(text) if role in _API_ROLES}
    names |= {_target_name(t) for t in _AUTODOC_USE.findall(text)}
    names.discard("")
    modules = set(_MODULE_USE.findall(text)) - {"None"}  # `currentmodule:: None` resets it
    return names | {f"{m}.{n}" for m in modules for n in names}


_AUTO_USE = re.compile(r"^[ \t]*\.\.[ \t]+(?:py:)?auto\w+::[ \t]*([\w.]+)", re.M)


def autodoc_names(text: str) -> dict[str, tuple[str, ...]]:
    """The names a document's `.. autoclass::`-like directives show (as written), each with the full
    names it may stand for, the modules the document declares first (`.. currentmodule:: flask` then
    `.. autoclass:: Flask`: flask.Flask, then Flask): the symbols whose summaries the page shows."""
    modules = sorted(set(_MODULE_USE.findall(text)) - {"None"})
    return {name: (*(f"{m}.{name}" for m in modules), name) for name in set(_AUTO_USE.findall(text))}


def _target_name(text: str) -> str:
    _title, target = _title_target(text)
    return target.lstrip("~!").strip().rstrip("()")


def _symbol_link(settings: Any, target: str) -> str | None:
    """The URL of `target`'s section (tried under the document's current module first), as raw HTML needs
    it (the built .html: MkDocs does not rewrite links in raw HTML)."""
    symbol = getattr(settings, "sb_symbol", None)
    if symbol is None:
        return None
    name = _target_name(target)
    module = getattr(settings, "sb_module", "")
    url = (symbol(f"{module}.{name}") if module else None) or symbol(name)
    return re.sub(r"\.md(?=$|#)", ".html", url) if url else None


def _settings(heading_level: int) -> Any:
    """docutils' runtime settings for one document: a copy of ones built once per heading level (building
    them from the components' option specs was ~15% of rendering flask's docs), with its own message sink."""
    settings = copy.copy(_base_settings(heading_level))
    settings.warning_stream = io.StringIO()
    return settings


@cache
def _base_settings(heading_level: int) -> Any:
    from docutils.frontend import get_default_settings
    from docutils.parsers.rst import Parser
    from docutils.readers.standalone import Reader
    from docutils.writers.html5_polyglot import Writer

    settings = get_default_settings(Parser, Reader, Writer)  # no config file is read (docutils.conf)
    for name, value in {
        "raw_enabled": False, "file_insertion_enabled": False,  # untrusted input: no HTML, no files read
        "_disable_config": True,
        "report_level": 5, "halt_level": 5, "traceback": True,  # raise, never print and exit
        "initial_header_level": heading_level, "doctitle_xform": True, "sectsubtitle_xform": False,
        "syntax_highlight": "none", "id_prefix": "rst-", "auto_id_prefix": "rst-%",
        "embed_stylesheet": False,
        "input_encoding": "unicode", "output_encoding": "unicode",
        "footnote_backlinks": False, "language_code": "en",
    }.items():
        setattr(settings, name, value)
    return settings


def _body_of(document: str) -> str:
    m = re.search(r"<main[^>]*>\s*(.*?)\s*</main>", document, re.S) or re.search(
        r'<body>\s*(.*?)\s*</body>', document, re.S)
    body = m.group(1) if m else document
    # the document title (doctitle_xform) is the page's business, not the fragment's
    # (after the targets' empty spans, when labels precede it: pytest's `.. _fixtures:` above the title)
    body = re.sub(r'^((?:<span id="[^"<>]*"></span>\s*)*)<h1 class="title">.*?</h1>\s*', r"\1", body,
                  flags=re.S)
    body = re.sub(r'<span class="docutils literal">(.*?)</span>', r"<code>\1</code>", body, flags=re.S)
    # docutils' html5 writer puts admonitions and footnotes in <aside>, which the sanitizer does not keep
    # (and with it a footnote's id, its references' target); Material styles <div class="admonition">
    return re.sub(r"<(/?)aside\b", r"<\1div", body)


def _drop_image(image: Any, nodes: Any) -> None:
    """An image is not shown (remote: the site works offline; local: not in the site); its alt text stays
    when it is a link's label (a badge), else it goes."""
    parent = image.parent
    if parent is None:
        return
    alt = image.get("alt", "")
    if isinstance(parent, nodes.reference) and alt:
        image.replace_self(nodes.Text(alt))
    elif isinstance(parent, nodes.reference) and parent.parent is not None:
        parent.parent.remove(parent)
    else:
        parent.remove(image)


@cache
def _register(roles_used: tuple[str, ...], directives_used: tuple[str, ...]) -> None:
    """Stand-ins for the Sphinx roles and directives this text uses that docutils does not know.

    docutils keeps roles and directives in process-wide registries; only names it does not know are added
    (it never loses a role it has), and each stand-in only produces plain nodes.
    """
    from docutils.parsers.rst import directives, roles
    from docutils.parsers.rst.languages import en

    # docutils' own include reads any path (and is off); this one reads only the repository's files
    directives.register_directive("include", _include_directive())
    directives.register_directive("literalinclude", _include_directive(literal=True))
    for name in roles_used:
        short = name.rsplit(":", 1)[-1]
        if name.lower() in en.roles or name in roles._roles or name in roles._role_registry:
            continue  # known to docutils
        if short in _SPHINX_TEXT_ROLES:
            roles.register_local_role(name, _text_role)
        else:
            roles.register_local_role(name, _code_role)  # any other role: its text as code
    for name in directives_used:
        lower = name.lower()
        if lower in en.directives or lower in directives._directives or \
                lower in directives._directive_registry:
            continue
        short = lower.rsplit(":", 1)[-1]
        if short in ("module", "currentmodule"):
            directives.register_directive(lower, _module_directive())
        elif short in _AUTODOC:  # a bare `.. class::` is docutils' own (known above), `py:class` is not
            directives.register_directive(lower, _autodoc_directive())
        elif short in _CODE_DIRECTIVES:
            directives.register_directive(lower, _code_directive())
        elif short in _ADMONITION_LIKE or short in ("note", "warning", "tip", "hint", "important"):
            directives.register_directive(lower, _admonition_directive(short))
        else:
            directives.register_directive(lower, _dropped_directive())


def _title_target(text: str) -> tuple[str, str]:
    m = re.fullmatch(r"\s*(.*?)\s*<([^<>]+)>\s*", text, re.S)
    if m and m.group(1):
        return m.group(1), m.group(2)
    return "", text.strip()


def _code_role(name: str, rawtext: str, text: str, lineno: int, inliner: Any,  # noqa: PLR0917 -- docutils
               options: Any = None, content: Any = None) -> tuple[list[Any], list[Any]]:
    from docutils import nodes

    title, target = _title_target(text)
    shown = title or (re.split(r"[.#:]+", target.lstrip("~!"))[-1] if target.startswith("~")
                      else target.lstrip("!"))
    code = nodes.literal(rawtext, shown)
    url = _symbol_link(inliner.document.settings, target) if name.rsplit(":", 1)[-1] in _API_ROLES and \
        not target.startswith("!") else None
    return [nodes.reference("", "", code, refuri=url, sb_symbol=True) if url else code], []


def _text_role(name: str, rawtext: str, text: str, lineno: int, inliner: Any,  # noqa: PLR0917 -- docutils
               options: Any = None, content: Any = None) -> tuple[list[Any], list[Any]]:
    from docutils import nodes

    title, target = _title_target(text)
    return [nodes.Text(title or target)], []


def _code_directive() -> Any:
    from docutils import nodes
    from docutils.parsers.rst import Directive

    class Code(Directive):
        optional_arguments = 1
        final_argument_whitespace = True
        has_content = True
        option_spec: ClassVar[dict[str, Any]] = {}

        def run(self) -> list[Any]:
            code = "\n".join(self.content)
            lang = (self.arguments[0] if self.arguments else "").split()[0:1]
            return [nodes.literal_block(code, code, classes=["code", *lang])]

    Code.option_spec = _any_options()
    return Code


def _admonition_directive(kind: str) -> Any:
    from docutils import nodes
    from docutils.parsers.rst import Directive

    class Admonition(Directive):
        optional_arguments = 1
        final_argument_whitespace = True
        has_content = True

        def run(self) -> list[Any]:
            words = _VERSION_DIRECTIVES.get(kind)
            arg = self.arguments[0] if self.arguments else ""
            if words is not None:
                version, rest = ([*arg.split(None, 1), ""])[:2]
                title, extra = f"{words} {version}".strip(), " ".join(rest.split())
            else:
                title, extra = _ADMONITION_LIKE.get(kind) or kind.capitalize(), arg
            node = nodes.admonition(classes=["admonition", "warning" if kind == "deprecated" else
                                             "info" if words is not None else "note"])
            node += nodes.title(title, title)
            if extra:
                # the argument is text with roles (`.. seealso:: :ref:`fixtures``), not as typed
                words, _messages = self.state.inline_text(extra, self.lineno)
                node += nodes.paragraph(extra, "", *words)
            self.state.nested_parse(self.content, self.content_offset, node)
            return [node]

    Admonition.option_spec = _any_options()
    return Admonition


def _module_directive() -> Any:
    """`.. module:: flask` / `.. currentmodule::`: shows nothing, names the module later names live in."""
    from docutils.parsers.rst import Directive

    class Module(Directive):
        required_arguments = 1
        has_content = True

        def run(self) -> list[Any]:
            name = self.arguments[0].strip()
            self.state.document.settings.sb_module = "" if name == "None" else name
            return []

    Module.option_spec = _any_options()
    return Module


def _autodoc_directive() -> Any:
    """`.. autoclass:: flask.Flask` (Sphinx would insert its docstring): the name as code, linked to its
    section when the wiki has one; the directive's own content (a hand-written description) is kept."""
    from docutils import nodes
    from docutils.parsers.rst import Directive

    class Autodoc(Directive):
        required_arguments = 1
        optional_arguments = 99
        final_argument_whitespace = True
        has_content = True

        def run(self) -> list[Any]:
            target = self.arguments[0].split("(", 1)[0].strip()
            code = nodes.literal(target, target)
            url = _symbol_link(self.state.document.settings, target)
            para = nodes.paragraph("", "", nodes.reference("", "", code, refuri=url, sb_symbol=True)
                                   if url else code, classes=["sb-autodoc"])
            out: list[Any] = [para]
            if self.content:
                box = nodes.container()
                self.state.nested_parse(self.content, self.content_offset, box)
                out.extend(box.children)
            return out

    Autodoc.option_spec = _any_options()
    return Autodoc


# the source name of lines an include inserted: the chain of files that included them, outermost first
_INCLUDED = "sourcebook-include:"


def _include_directive(literal: bool = False) -> Any:
    """`.. include:: path`: the file's text parsed in place, when doc_includes' rules allow it; otherwise a
    note (a path out of the repository, a loop) or a link to the file's page (too deep, too much).
    `literal`: Sphinx's `.. literalinclude::`, the file (or the :lines: chosen) as a code block."""
    from docutils import nodes, statemachine
    from docutils.parsers.rst import Directive

    from generator.markup.doc_includes import MAX_DEPTH, MAX_INCLUDES, MAX_TEXT, clip, include_path

    class Include(Directive):
        required_arguments = 1
        final_argument_whitespace = True
        has_content = False

        def run(self) -> list[Any]:
            document = self.state.document
            settings = document.settings
            read, top = getattr(settings, "sb_read", None), getattr(settings, "sb_path", "")
            if read is None or not top:
                return [_note("An included file is not shown here.")]
            # the file this directive's line came from (docutils' own include asks the same way; the
            # document's current_source can lag on a padding line of an earlier inclusion)
            source = self.state_machine.input_lines.source(
                self.lineno - self.state_machine.input_offset - 1) or ""
            chain = source[len(_INCLUDED):].split("\x1f") if source.startswith(_INCLUDED) else [top]
            target = include_path(chain[-1], self.arguments[0], getattr(settings, "sb_source", None))
            if target is None:
                return [_note("An included file is not shown: its path is not one inside the repository.")]
            if target in chain:
                return [_note("An included file is not shown: it would include itself.")]
            text = read(target)
            if text is None:
                # missing (often generated when the docs are built), excluded, binary, or a symlink out
                return [_note("An included file is not shown: it is not among the repository's text files "
                              "this wiki read.")]
            used = document.__dict__.setdefault("sb_included", [0, 0])  # inclusions, characters
            if len(chain) > MAX_DEPTH or used[0] >= MAX_INCLUDES or used[1] + len(text) > MAX_TEXT:
                return [_link_to(target, top)]
            text = clip(text, {k: str(v) for k, v in self.options.items() if v is not None})
            if text is None:  # a start-after/end-before marker it does not have
                return [_link_to(target, top)]
            used[0], used[1] = used[0] + 1, used[1] + len(text)
            if literal or "literal" in self.options or "code" in self.options:
                lang = str(self.options.get("code") or self.options.get("language") or "").split()[:1]
                return [nodes.literal_block(text, text, classes=["code", *lang] if lang else [])]
            # its roles and directives get their stand-ins too: else what it shows would depend on which
            # document this process rendered before (docutils' registries are process-wide)
            _register(tuple(sorted(set(_ROLE_NAME.findall(text)))),
                      tuple(sorted(set(_DIRECTIVE_NAME.findall(text)))))
            lines = statemachine.string2lines(text, settings.tab_width, convert_whitespace=True)
            self.state_machine.insert_input([*lines, ""], _INCLUDED + "\x1f".join([*chain, target]))
            return []

    Include.option_spec = _any_options()
    return Include


def _note(words: str) -> Any:
    from docutils import nodes

    return nodes.paragraph("", "", nodes.emphasis(words, words), classes=["sb-include-note"])


def _link_to(target: str, top: str) -> Any:
    """A paragraph linking to an included file's page (resolved like any relative link of the document)."""
    from docutils import nodes

    relative = posixpath.relpath(target, posixpath.dirname(top) or ".")
    return nodes.paragraph("", "", nodes.emphasis("Included from ", "Included from "),
                           nodes.reference("", target, refuri=relative),
                           nodes.emphasis(" (not shown here).", " (not shown here)."),
                           classes=["sb-include-note"])


def _dropped_directive() -> Any:
    from docutils.parsers.rst import Directive

    class Dropped(Directive):
        optional_arguments = 99
        final_argument_whitespace = True
        has_content = True

        def run(self) -> list[Any]:
            return []

    Dropped.option_spec = _any_options()
    return Dropped


class _AnyOptions(dict[str, Any]):
    """Accepts every option name (Sphinx directives have many); values are kept as text and unused."""

    def __contains__(self, key: object) -> bool:
        return True

    def __bool__(self) -> bool:
        # docutils parses a directive's options only when its option_spec is truthy; an empty dict is not,
        # and the option lines were read as part of the argument (`snippet.py :literal:`)
        return True

    def __getitem__(self, key: str) -> Any:
        return lambda value: value


def _any_options() -> dict[str, Any]:
    return _AnyOptions()
