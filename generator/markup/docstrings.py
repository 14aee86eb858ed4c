"""A docstring -> Markdown for its symbol's section: parameter tables, admonitions, examples, linked names.

Python docstrings are parsed by griffe's Google, NumPy and Sphinx parsers (the style is detected from the
text; nothing is imported or run). Doc comments of other languages get the same structures where their
conventions are simple: JSDoc/TSDoc and Javadoc tags (`@param`, `@returns`, `@throws`, `@example`,
`{@link}`), RustDoc sections (`# Examples`, `# Panics`, `# Errors`) and GoDoc paragraphs and code.

`render_docstring` is pure: text in, Markdown out. The output has been through
safe_markdown.sanitize_markdown, whose only trusted links are the ones made here (resolver URLs and http(s)
links).
"""

from __future__ import annotations

import html
import logging
import re
from collections.abc import Sequence
from functools import cache
from typing import Any

from generator.analyze.boilerplate import lead_sentences, strip_title
from generator.analyze.languages import spec_for
from generator.markup.doc_dialects import normalize
from generator.markup.docmarkup import (
    ADMONITIONS,
    Block,
    BlockRenderer,
    Flavor,
    Inline,
    Resolver,
    admonition,
    code_block,
    code_span,
    escape,
    label_block,
    plain_line,
    reference_definitions,
)
from generator.markup.safe_markdown import sanitize_markdown

log = logging.getLogger(__name__)



def render_docstring(text: str, language: str | None, resolve: Resolver | None = None) -> str:
    """Markdown for a docstring written in `language`'s conventions; `resolve(name)` -> URL or None."""

    text = text.strip("\n")
    if not text.strip():
        return ""
    if _too_costly(text):
        return _verbatim(text)
    lang = language or ""
    spec = spec_for(lang)  # its docstring flavor and code fence (generator/analyze/languages.py)
    flavor: Flavor = spec.doc_flavor
    text, definitions = reference_definitions(text)
    inline = Inline(resolve or (lambda _name: None), flavor, definitions=definitions)
    renderer = BlockRenderer(inline, flavor, spec.code_fence)
    if lang != "python":
        # C# XML, Doxygen, YARD, banners -> the tagged form (markup/doc_dialects.py)
        text = normalize(text, spec.code_fence, spec.doc_var_type)
    if lang == "python":
        blocks = _python(text, renderer)
    elif spec.doc_tags and _TAG_LINE.search(text):
        blocks = _tagged(text, renderer)
    elif lang == "rust":
        blocks = _rust(text, renderer)
    else:
        blocks = renderer.render(_javadoc_html(text, renderer.code_lang) if flavor == "javadoc" else text)
    markdown = "\n\n".join(b.markdown for b in blocks if b.markdown.strip())
    links = inline.links
    return sanitize_markdown(markdown, lambda url: url if url in links else None).strip()


# Python-Markdown's inline pass rebuilds a paragraph's text at each match (an entity, a bracket, an emphasis
# mark, a backslash escape...): a docstring of 300,000 `[` (each written as &#91;) held the site stage for
# hours. A docstring this long, or this full of such characters, is shown as written, escaped, in a <pre>
# block Markdown leaves alone (generator/site/material/raw_blocks.py): its reader loses the formatting, not
# the text.
# Real docstrings are far under both (docs/performance.md).
MAX_RENDERED_CHARS = 100_000
MAX_MARKUP_CHARS = 5_000
# of such a docstring shown: escaped, <= ~500 KB (generator/site/page_budget.py: 900 KB)
VERBATIM_CHARS = 100_000
_MARKUP_CHARS = re.compile(r"[\[\]*_`\\&<>#|~{}]")


def _too_costly(text: str) -> bool:
    return len(text) > MAX_RENDERED_CHARS or len(_MARKUP_CHARS.findall(text)) > MAX_MARKUP_CHARS


def _verbatim(text: str) -> str:
    cut = len(text) > VERBATIM_CHARS
    note = f", its first {VERBATIM_CHARS:,} characters" if cut else ""
    body = html.escape(text[:VERBATIM_CHARS], quote=False)
    return (f"*This docstring is shown as written{note}: it is too long or too full of markup to format.*"
            f'\n\n<pre class="sb-docstring"><code>{body}</code></pre>')


_BRIEF = re.compile(r"^\s*[\\@](?:brief|short)\b[ \t]*", re.M)
_SUMMARY_END = re.compile(r"^\s*(?:[@\\][A-Za-z]+\b|:[A-Za-z][\w ]*:(?!`)|\.\. )", re.M)


def docstring_summary(text: str, limit: int = 200) -> str:
    """The first paragraph of a docstring as one Markdown line: roles shown as code, never raw."""
    # every dialect's markup as the renderer reads it (markup/doc_dialects.py); a banner or commented-out
    # code is never a summary; a Doxygen `\brief` is one, without its command
    text = normalize(reference_definitions(_BRIEF.sub("", text))[0])
    if _TEXT_HTML_TAG.search(text):  # Javadoc's HTML: `<p>` ends the first paragraph, `<code>` is code
        text = _javadoc_html(text, "", _TEXT_HTML_TAG)
    para = re.split(r"\n\s*\n", strip_title(text).strip(), maxsplit=1)[0]  # a title is not the summary
    para = _SUMMARY_END.split(para, maxsplit=1)[0]  # tags and fields are not the summary
    line = plain_line(lead_sentences(para))
    if len(line) > limit:
        line = line[: limit - 1].rsplit(" ", 1)[0]
        if line.count("`") % 2:  # cut inside a code span: end before it, never leave its backtick open
            line = line[: line.rfind("`")].rstrip(" ,;:")
        line += "…"
    return line


# -- Python: griffe ------------------------------------------------------------------------------------------


@cache
def _griffe() -> Any:
    import griffe

    return griffe


def _python(text: str, renderer: BlockRenderer) -> list[Block]:
    griffe = _griffe()
    text, trailing = _split_sphinx_trailer(text)
    docstring = griffe.Docstring(text)
    style, _ = griffe.infer_docstring_style(docstring)
    if style is None:
        return renderer.render(text) + renderer.render(trailing)
    parse = {"google": griffe.parse_google, "numpy": griffe.parse_numpy, "sphinx": griffe.parse_sphinx}
    options: dict[str, Any] = {"warnings": False}
    if style.value == "google":
        options["returns_named_value"] = False  # `Returns: str: text` names a type more often than a value
    try:
        sections = parse[style.value](docstring, **options)
    except Exception as exc:  # noqa: BLE001 -- a docstring griffe cannot read is shown as prose, not lost
        log.debug("griffe could not parse a docstring (%s): %s", style.value, exc)
        return renderer.render(text) + renderer.render(trailing)
    blocks: list[Block] = []
    rtype = _sphinx_rtype_only(style.value, text, sections, renderer)
    for section in sections:
        blocks += _section(section, renderer)
        if section.kind.value == "parameters":
            blocks, rtype = blocks + rtype, []
    return blocks + rtype + renderer.render(trailing)


def _sphinx_rtype_only(style: str, text: str, sections: Sequence[Any],
                       renderer: BlockRenderer) -> list[Block]:
    """`:rtype:` without `:returns:` (requests does this) still says what is returned; griffe drops it."""
    if style != "sphinx" or any(s.kind.value == "returns" for s in sections):
        return []
    m = re.search(r"^:rtype:\s*(.+)$", text, re.M)
    return [parameter_table("Returns", [("", m.group(1).strip(), "", "")], renderer)] if m else []


_SPHINX_FIELD = re.compile(r"^:(param|parameter|arg|argument|key|keyword|type|returns?|rtype|raises?|except|"
                           r"exception|var|ivar|cvar|vartype|yields?|ytype|meta)\b", re.M)


def _split_sphinx_trailer(text: str) -> tuple[str, str]:
    """Directives after a Sphinx field list (`.. note::` at the end) -> rendered after the sections, not
    swallowed into the last field's description."""
    first = _SPHINX_FIELD.search(text)
    if not first:
        return text, ""
    lines = text[first.start():].split("\n")
    head = text[:first.start()]
    kept: list[str] = []
    trailer: list[str] = []
    in_trailer = False
    for line in lines:
        if line.startswith(".. "):
            in_trailer = True
        elif line.startswith(":") and _SPHINX_FIELD.match(line):
            in_trailer = False
        (trailer if in_trailer else kept).append(line)
    return head + "\n".join(kept), "\n".join(trailer)


_TABLE_TITLES = {"parameters": "Parameters", "other parameters": "Other parameters",
                 "attributes": "Attributes", "returns": "Returns", "yields": "Yields",
                 "receives": "Receives", "raises": "Raises", "warns": "Warns",
                 "type parameters": "Type parameters", "type aliases": "Type aliases",
                 "classes": "Classes", "functions": "Functions", "modules": "Modules"}


def _section(section: Any, renderer: BlockRenderer) -> list[Block]:
    kind = section.kind.value.replace("-", " ")
    if kind == "text":
        return renderer.render(section.value)
    if kind == "examples":
        blocks: list[Block] = [label_block(section.title or "Examples")]
        for part_kind, part in section.value:
            if part_kind.value == "examples":
                blocks.append(Block(code_block(part, "pycon"), code=True))
            else:
                blocks += renderer.render(part)
        return blocks
    if kind == "admonition":
        value = section.value
        name = (value.annotation or "note").lower()
        if name in ("example", "examples"):  # Google's singular `Example:` is an admonition to griffe
            return [label_block(section.title or "Example"), *renderer.render(value.description or "")]
        title = section.title or name.capitalize()
        return admonition(ADMONITIONS.get(name, "note"), title, renderer.render(value.description or ""))
    if kind == "deprecated":
        value = section.value
        title = f"Deprecated since version {value.version}" if value.version else "Deprecated"
        return admonition("warning", title, renderer.render(value.description or ""))
    title = section.title or _TABLE_TITLES.get(kind, kind.capitalize())
    rows = []
    for item in section.value:
        name = getattr(item, "name", "") or ""
        annotation = getattr(item, "annotation", None)
        default = getattr(item, "value", None) if kind in ("parameters", "other parameters") else None
        description = getattr(item, "description", "") or ""
        rows.append((name, str(annotation) if annotation else "", str(default) if default else "",
                     description))
    if kind in ("raises", "warns"):
        rows = [("", a or n, d, desc) for n, a, d, desc in rows]
    return [parameter_table(title, rows, renderer)]


def parameter_table(title: str, rows: Sequence[tuple[str, str, str, str]], renderer: BlockRenderer) -> Block:
    """(name, type, default, description) rows -> a labelled Markdown table; empty columns are left out."""
    has_name = any(r[0] for r in rows)
    has_type = any(r[1] for r in rows)
    header = (["Name"] if has_name else []) + (["Type"] if has_type else []) + ["Description"]
    lines = [f"**{escape(title)}**", "", "| " + " | ".join(header) + " |",
             "|" + "---|" * len(header)]
    for name, annotation, default, description in rows:
        cells = []
        if has_name:
            cells.append(code_span(name) if name else "")
        if has_type:
            cells.append(_type_cell(annotation, renderer.inline) if annotation else "")
        text = renderer.inline.text(" ".join(_cell_source(description, renderer.flavor).split()))
        if default:
            text = (text + " " if text else "") + "Default: " + code_span(default) + "."
        cells.append(text)
        lines.append("| " + " | ".join(c or " " for c in cells) + " |")
    return Block("\n".join(lines))


_CELL_DIRECTIVE = re.compile(r"^\.\.[ \t]+([\w:-]+)::[ \t]*(.*)$")
_CELL_WORDS = {"versionadded": "Added in version", "versionchanged": "Changed in version",
               "deprecated": "Deprecated since version", "versionremoved": "Removed in version"}


def _cell_source(description: str, flavor: str) -> str:
    """A reST parameter description's blocks as one line of words for its table cell, where Markdown holds
    no block: `.. versionadded:: 0.1` -> *Added in version 0.1.*, `.. note::` -> its words after "Note:",
    a `::` literal block -> a literal, a list -> its items, each after a `;`. Joined as they were, each
    would show as typed (`.. versionadded::`, `* (2 ** n)`)."""
    if flavor != "rst" or ("::" not in description and "\n" not in description):
        return description
    lines = description.expandtabs(4).split("\n")
    out: list[str] = []
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        directive = _CELL_DIRECTIVE.match(stripped)
        body_start = i + 1
        if not stripped:
            i += 1
            continue
        if directive and out and out[-1][-1:].isalnum():
            out[-1] += "."  # the directive is a sentence of its own
        if directive or stripped.endswith("::"):
            end = body_start
            while end < len(lines) and (not lines[end].strip() or lines[end][:1].isspace()):
                end += 1
            while end > body_start and not lines[end - 1].strip():
                end -= 1
            body = [ln.strip() for ln in lines[body_start:end] if ln.strip()]
            if directive:
                name, arg = directive.group(1).lower(), directive.group(2).strip()
                if name in _CELL_WORDS:
                    version, _, rest = arg.partition(" ")
                    words = " ".join(x for x in (rest, *body) if x)
                    out.append(f"*{_CELL_WORDS[name]} {version}*" + (f": {words}" if words else "."))
                elif name in ("code-block", "code", "sourcecode"):
                    out.append(_literal(" ".join(body)))
                else:  # an admonition (note, warning, seealso...) or anything else: its words
                    title = name.rsplit(":", 1)[-1].replace("-", " ").capitalize()
                    words = " ".join(x for x in (arg, *body) if x)
                    out.append(f"{title}: {words}" if words else "")
            else:
                lead = stripped[:-2].rstrip()
                out.append(lead + (":" if lead and not stripped[:-2].endswith(" ") else ""))
                out.append(_literal(" ".join(body)))
            i = end
            continue
        bullet = re.match(r"^[-*+•]\s+(.*)$", stripped)
        if bullet and out and out[-1] and not out[-1].endswith((":", ";")):
            out[-1] += ";"
        out.append(bullet.group(1) if bullet else stripped)
        i += 1
    return "\n".join(x for x in out if x)


def _literal(code: str) -> str:
    """A reST inline literal holding `code` on one line (its own backticks, which would end it, go)."""
    code = " ".join(code.replace("`", " ").split())
    return f"``{code}``" if code else ""


_TYPE_NAME = re.compile(r"[A-Za-z_][\w.]*")


def _type_cell(annotation: str, inline: Inline) -> str:
    """A type as code; a bare (dotted) name links to its symbol when the resolver knows it."""
    annotation = " ".join(annotation.split())
    if _TYPE_NAME.fullmatch(annotation):
        return inline.xref(annotation)
    return code_span(annotation)


# -- JSDoc / TSDoc / Javadoc / Doxygen tags ------------------------------------------------------------------

_TAG_LINE = re.compile(r"^\s*[@\\](param|arg|argument|returns?|throws?|exception|example|deprecated|see|"
                       r"since|yields?|remarks|note|typeParam|template|property|prop|brief|retval|raise|option|"
                       r"yieldparam|yieldreturn|sample|receiver|constructor|internal|final|api|author|var|"
                       r"warning|attention|todo|pre|post|version|inheritDoc|abstract|override|private|"
                       r"extends|augments|implements|(?:phpstan|psalm|phan)-[a-z]+)\b",
                       re.M)
# a tag's name may be hyphenated (`@property-read`, `@template-covariant`, `@phpstan-param`): read whole, or
# `@template-implements X` would be a `@template` whose type parameter is "-implements"
_ANY_TAG = re.compile(r"^\s*[@\\]([A-Za-z]+(?:-[A-Za-z]+)*)\b[ \t]?(.*)$")
_JS_TYPE = re.compile(r"^\{((?:[^{}]|\{[^{}]*\})*)\}\s*")


def _tagged(text: str, renderer: BlockRenderer) -> list[Block]:
    javadoc = renderer.flavor == "javadoc"
    lines = (_javadoc_html(text, renderer.code_lang) if javadoc else text).split("\n")
    description: list[str] = []
    tags: list[tuple[str, list[str]]] = []
    in_example = False
    fence = ""
    for line in lines:
        stripped = line.strip()
        m = _ANY_TAG.match(line) if not fence else None
        # inside @example a line starting with `@` is code (a decorator), unless it is a known tag
        if m and not (in_example and not _TAG_LINE.match(line)):
            tags.append((m.group(1), [m.group(2)]))
            in_example = m.group(1) == "example"
        elif tags:
            if stripped.startswith(("```", "~~~")) and not fence and tags[-1][0].lower() in _TABLE_TAGS:
                tags.append(("", []))  # a code block after a parameter is the description's, not a cell's
            tags[-1][1].append(line)
        else:
            description.append(line)
        if stripped.startswith(("```", "~~~")):
            fence = "" if fence and stripped.startswith(fence) else (fence or stripped[:3])
    blocks = renderer.render("\n".join(description))
    tables: dict[str, list[tuple[str, str, str, str]]] = {}
    after: list[Block] = []
    aliases: list[str] = []
    for tag_name, body_lines in _reader_tags(tags):
        body = "\n".join(body_lines).strip()
        if tag_name == "brief":
            blocks = renderer.render(body) + blocks
        elif tag_name in _TABLE_TAGS and tag_name not in _RETURN_TAGS and tag_name not in _RAISE_TAGS:
            row = _param_row(body, bound=tag_name == "template")
            title = _PARAM_TITLES.get(tag_name, "Parameters")
            if row[0].startswith("<") and row[0].endswith(">"):  # Javadoc's `@param <T> the type`
                title, row = "Type parameters", (row[0][1:-1], *row[1:])
            tables.setdefault(title, []).append(row)
        elif tag_name in _RETURN_TAGS:
            kind, rest = _js_type(body)
            if not kind and renderer.code_lang == "php":  # phpDoc: `@return Type description`
                kind, rest = _leading_type(rest)
            if tag_name == "var":  # `@var Type $name desc`: the name is the property's own, shown above it
                rest = re.sub(r"^&?\$\w+\s*", "", rest)
            title = "Yields" if tag_name.startswith("yield") else "Type" if tag_name == "var" else "Returns"
            tables.setdefault(title, []).append(("", kind, "", rest))
        elif tag_name in _RAISE_TAGS:
            kind, rest = _js_type(body)
            if not kind and not javadoc and renderer.code_lang not in ("java", "kotlin", "php"):
                tables.setdefault("Raises", []).append(("", "", "", rest))
                continue
            if not kind:
                kind, _, rest = rest.partition(" ")
            tables.setdefault("Raises", []).append(("", kind, "", rest))
        elif tag_name == "example":
            after += _example(body_lines, renderer)
        elif tag_name == "deprecated":
            after += admonition("warning", "Deprecated", renderer.render(body))
        elif tag_name == "since":
            version = body.split()[0] if body else ""
            after.append(Block("*" + escape(f"Added in version {version}".strip()) + "*"))
        elif tag_name in _NOTE_TAGS:
            kind, title = _NOTE_TAGS[tag_name]
            after += admonition(kind, title, renderer.render(body))
        elif tag_name in ("remarks", ""):  # TSDoc's and C#'s longer description; a code block after a tag
            after += renderer.render(body)
        elif tag_name == "see":
            after.append(Block("**See also**: " + renderer.inline.text(_see_target(body))))
        elif tag_name in ("sample", "receiver", "constructor") and body:
            words = renderer.inline.text(_see_target(body) if tag_name == "sample" else body)
            after.append(Block(f"**{tag_name.capitalize()}**: {words}"))
        elif tag_name in _PARENT_TAGS and body:
            # `@extends Collection<int, User>`, `@implements ArrayAccess<'key', Value>`: the declaration names
            # the parent; the tag gives its type arguments, which tell a reader what the class holds (the
            # keys `$record['level']` reads): shown as written, as code
            kind = _js_type(body)[0] or _leading_type(body)[0]
            after.append(Block(f"**{_PARENT_TAGS[tag_name]}**: {_type_cell(kind, renderer.inline)}"))
        elif tag_name in ("type-alias", "import-type") and body:
            aliases.append(_alias_line(tag_name, body_lines))
        # anything else (@author, @version, @final, @api, @psalm-suppress, @override...) is for tools, not
        # readers
    for title in ("Type parameters", "Parameters", "Options", "Block parameters", "Properties", "Type",
                  "Returns", "Yields", "Raises"):
        if title in tables:
            blocks.append(parameter_table(title, tables[title], renderer))
    if aliases:
        # a type alias (`@phpstan-type Options array{host: string, ...}`) is a definition the rest of the
        # comments use by name (`@param Options $options`): shown as code, one per paragraph, its shape laid
        # out on lines as its author wrote it, which a table cell would fold into one long line
        blocks += [label_block("Type aliases"), Block(code_block("\n\n".join(aliases), renderer.code_lang),
                                                      code=True)]
    return blocks + after


# PHPStan, Psalm and Phan read their own spelling of a phpDoc tag first (`@phpstan-param`, `@psalm-return`),
# so a comment may say a thing twice: once for readers and IDEs, once again with a type only the analyser
# reads (`@param mixed[] $options Options` then `@phpstan-param InputOptions $options`). Such a tag means what
# its plain spelling means. A reader wants one row per parameter: the plain tag's words, with the refined type
# (the precise contract the code is checked against: `InputOptions`, an alias the page shows, says more than
# `mixed[]`); alone, the refined tag is shown as the plain tag would be. Tags with no type to refine
# (`@template`) keep the plain one.
_ANALYSER_PREFIX = re.compile(r"^(?:phpstan|psalm|phan)-")
# hyphenated spellings of tags the renderer reads: variance and parents of generics, read-only properties
_TAG_SPELLINGS = {"template-covariant": "template", "template-contravariant": "template",
                  "template-implements": "implements", "template-extends": "extends", "template-use": "use",
                  "property-read": "property", "property-write": "property", "augments": "extends"}
_PARENT_TAGS = {"extends": "Extends", "implements": "Implements", "use": "Uses"}
_TYPED_TAGS = frozenset({"param", "return", "returns", "var", "property"})


def _reader_tags(tags: list[tuple[str, list[str]]]) -> list[tuple[str, list[str]]]:
    """(tag as written, body lines) -> (tag name the renderer reads, body lines): analyser spellings read as
    their plain tag; where a plain tag documents the same subject, one tag: its words, the refined type."""
    read: list[tuple[str, list[str], bool]] = []
    for tag, body_lines in tags:
        name = tag.lower()
        prefix = _ANALYSER_PREFIX.match(name)
        if prefix:
            name = name[prefix.end():]
            # `@phpstan-type Name Type` defines an alias; a plain `@type` is JSDoc's, and means another thing
            name = {"type": "type-alias"}.get(name, name)
        read.append((_TAG_SPELLINGS.get(name, name), body_lines, bool(prefix)))
    plain = {_subject(name, body) for name, body, refined in read if not refined}
    refined_types = {_subject(name, body): _leading_type("\n".join(body))[0]
                     for name, body, refined in read if refined and name in _TYPED_TAGS}
    out: list[tuple[str, list[str]]] = []
    for name, body, refined in read:
        subject = _subject(name, body)
        if refined and subject in plain:
            continue
        text = "\n".join(body).strip()
        kind = None if refined or _js_type(text)[0] else refined_types.get(subject)
        if kind:
            # the plain tag's type goes, its words stay (a type-less `@param $x words` gets the type)
            words = text if re.match(r"&?(?:\.\.\.)?\$", text) else _leading_type(text)[1]
            out.append((name, [f"{kind} {words}".rstrip()]))
        else:
            out.append((name, body))
    return out


def _subject(tag_name: str, body_lines: list[str]) -> tuple[str, str]:
    """What a tag is about: a parameter's (property's, type parameter's) name; the one return value."""
    if tag_name in _TABLE_TAGS and tag_name not in _RETURN_TAGS and tag_name not in _RAISE_TAGS:
        return tag_name, _param_row("\n".join(body_lines))[0]
    return tag_name, ""


def _alias_line(tag_name: str, body_lines: list[str]) -> str:
    """`@phpstan-type Options array{...}` (or `Options = array{...}`) -> `Options = array{...}`; an imported
    alias (`@psalm-import-type Options from Handler`) as written."""
    text = "\n".join(body_lines).strip()
    if tag_name == "import-type":
        return text
    m = re.match(r"([\w\\]+)\s*=?\s*(.*)$", text, re.S)
    return f"{m.group(1)} = {m.group(2)}" if m and m.group(2) else text


_PARAM_TITLES = {"property": "Properties", "prop": "Properties", "typeparam": "Type parameters",
                 "template": "Type parameters", "option": "Options", "yieldparam": "Block parameters"}
_RETURN_TAGS = frozenset({"return", "returns", "retval", "yield", "yields", "yieldreturn", "var"})
_RAISE_TAGS = frozenset({"throws", "throw", "exception"})
_TABLE_TAGS = frozenset({"param", "arg", "argument", "property", "prop", "typeparam", "template", "option",
                         "yieldparam"}) | _RETURN_TAGS | _RAISE_TAGS
_NOTE_TAGS = {"note": ("note", "Note"), "warning": ("warning", "Warning"),
              "attention": ("warning", "Attention"), "todo": ("note", "To do"),
              "pre": ("note", "Precondition"), "post": ("note", "Postcondition"),
              "internal": ("note", "Internal")}


def _example(body_lines: list[str], renderer: BlockRenderer) -> list[Block]:
    """`@example`: JSDoc's `<caption>`, YARD's title on the tag's line (its code indented under it); code
    written as a fence, or prose with a fence (C#'s `<example>`), is rendered as written."""
    first, rest = (body_lines[0] if body_lines else ""), body_lines[1:]
    body = "\n".join(body_lines).strip("\n")
    caption = re.match(r"\s*<caption>(.*?)</caption>\s*", body, re.S)
    title = "Example"
    if caption:
        title, body = caption.group(1), body[caption.end():]
    elif first.strip() and rest and all(ln[:1].isspace() or not ln.strip() for ln in rest) and any(
            ln.strip() for ln in rest):
        title, body = first.strip(), "\n".join(rest)
    if "```" in body or "~~~" in body:
        return [label_block(title), *renderer.render(body)]
    return [label_block(title), Block(code_block(_dedent_code(body), renderer.code_lang), code=True)]


def _js_type(body: str) -> tuple[str, str]:
    m = _JS_TYPE.match(body.strip())
    if m:
        return m.group(1).strip(), body.strip()[m.end():]
    return "", body.strip()


def _param_row(body: str, bound: bool = False) -> tuple[str, str, str, str]:
    kind, rest = _js_type(body)
    php_type, after = _leading_type(rest)
    php = re.match(r"(&?\.{0,3}\$\w+)\s*(.*)$", after, re.S)  # phpDoc: `Type $name desc`
    if php and php_type and not kind:
        return (php.group(1), php_type, "", php.group(2))
    bounded = re.match(r"(\w+)\s+(?:of|as)\s+(.*)$", rest, re.S) if bound and not kind else None
    if bounded:  # a bounded type parameter: `@template T of Model` (Psalm also writes `as`), its bound a type
        bound_type, desc = _leading_type(bounded.group(2))
        return (bounded.group(1), bound_type, "", desc)
    m = re.match(r"(\[[^\]]*\]|<[^>]*>|[\w$.]+)\s*(?:-\s+)?(.*)$", rest, re.S)
    if not m:
        return ("", kind, "", rest)
    name, desc = m.group(1), m.group(2)
    default = ""
    if name.startswith("["):  # JSDoc optional parameter: [name] or [name=default]
        name, _, default = name[1:-1].partition("=")
    return (name.strip(), kind, default.strip(), desc)


_OPEN = {"<": ">", "{": "}", "(": ")", "[": "]"}
_SPACES = re.compile(r"\s+")


def _leading_type(text: str) -> tuple[str, str]:
    """A phpDoc type at the start of `text` and the words after it: `array<string, mixed> $ctx the
    context` -> (`array<string, mixed>`, `$ctx the context`). Generics, shapes and callables hold spaces
    (`callable(int): void`, `array{host: string}`): the type ends at the first space outside brackets and
    quotes."""
    text = text.strip()
    closers: list[str] = []
    quote = ""
    i = 0
    while i < len(text):
        ch = text[i]
        if quote:
            quote = "" if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in _OPEN:
            closers.append(_OPEN[ch])
        elif closers and ch == closers[-1]:
            closers.pop()
        elif ch.isspace() and not closers:
            # a union or a callable's return type goes on past a space (`int | null`, `callable(): void`);
            # each run of spaces is looked at once, so a long comment costs a pass, never a pass per space
            run = _SPACES.match(text, i)
            end = run.end() if run else i + 1
            if not (text[i - 1] in "|&" or text[i - 2:i] == "):" or text[end:end + 1] in ("|", "&")):
                return text[:i], text[end:]
            i = end
            continue
        i += 1
    if closers or quote:  # brackets never closed: not a type this reads; its first word is
        word, _, rest = text.partition(" ")
        return word, rest.strip()
    return text, ""


def _see_target(body: str) -> str:
    body = body.strip()
    if body.startswith(("{@link", "http", "<a ", "[", "`")):
        return body
    # `@see #parse(String, String) the label`: a member's parameter list holds spaces, and stays its target's
    m = re.match(r"([^\s(]*(?:\([^)]*\))?)\s*(.*)$", body, re.S)
    target, rest = (m.group(1), m.group(2)) if m and m.group(1) else body.partition(" ")[::2]
    return f"{{@link {target}}} {rest}".strip()


def _dedent_code(text: str) -> str:
    lines = text.split("\n")
    margins = [len(ln) - len(ln.lstrip()) for ln in lines if ln.strip()]
    margin = min(margins, default=0)
    return "\n".join(ln[margin:] for ln in lines).strip("\n")


_PRE = re.compile(r"<pre[^>]*>(.*?)</pre>", re.S | re.I)
# the HTML Javadoc writes; anything else in angle brackets (`List<MyType>`, `<T>`) is the author's text
_HTML_NAMES = ("a|p|br|b|i|em|strong|code|tt|pre|ul|ol|li|div|span|h[1-6]|table|tr|td|th|thead|tbody|"
               "blockquote|dl|dt|dd|sup|sub|u|s|small|big|font|hr|img|center|var|cite|dfn|kbd|samp|caption")
_HTML_TAG = re.compile(rf"</?({_HTML_NAMES})\b[^<>]*>", re.I)
# a summary is one line of words: only the tags that shape words are read; anything else (an `<img>`) stays
# as the text it is, escaped
_TEXT_HTML_TAG = re.compile(r"</?(a|p|br|b|i|em|strong|code|tt|var|pre)\b[^<>]*>", re.I)
_HTML_INLINE = {"code": "``", "tt": "``", "b": "**", "strong": "**", "i": "*", "em": "*"}
# what HTML stripping leaves alone: `{@code ...}` (balanced braces one deep), code spans, fenced blocks
_VERBATIM = re.compile(r"\{@(?:code|literal)\b(?:[^{}]|\{[^{}]*\})*\}|(`+)[^`]+?\1|^```.*?^```",
                       re.S | re.M)
_ANCHOR = re.compile(r"""<a\s[^<>]*?href\s*=\s*["']([^"']+)["'][^<>]*>(.*?)</a\s*>""", re.S | re.I)


def _javadoc_html(text: str, lang: str, tags: re.Pattern[str] = _HTML_TAG) -> str:
    """The HTML Javadoc allows -> the plain conventions the block renderer reads; other tags dropped.
    `{@code List<MyType>}` and generics in code spans keep their angle brackets."""
    import html as html_lib

    def pre(inner: str) -> str:
        body = re.sub(r"^\s*\{@code\s?(.*)\}\s*$", r"\1", inner, flags=re.S)
        return f"\n```{lang}\n" + html_lib.unescape(body).strip("\n") + "\n```\n"

    def tag(m: re.Match[str]) -> str:
        name = m.group(1).lower()
        if name == "p" or name in ("ul", "ol", "br", "div", "dl", "table", "tr"):
            return "\n\n" if name == "p" else "\n"
        if name == "li":
            return "" if m.group(0).startswith("</") else "\n- "
        return _HTML_INLINE.get(name, "")

    def prose(part: str) -> str:
        out, pos = [], 0
        for m in _VERBATIM.finditer(part):
            out.append(html_lib.unescape(tags.sub(tag, _ANCHOR.sub(r"[\2](\1)", part[pos:m.start()]))))
            out.append(m.group(0))
            pos = m.end()
        out.append(html_lib.unescape(tags.sub(tag, _ANCHOR.sub(r"[\2](\1)", part[pos:]))))
        return "".join(out)

    parts = _PRE.split(text)
    return "".join(pre(part) if i % 2 else prose(part) for i, part in enumerate(parts))


# -- RustDoc -------------------------------------------------------------------------------------------------

_RUST_SECTIONS = {"panics": ("warning", "Panics"), "safety": ("danger", "Safety")}


def _rust(text: str, renderer: BlockRenderer) -> list[Block]:
    """Markdown with `# Heading` sections: Panics and Safety become admonitions, the rest labelled."""
    chunks: list[tuple[str, list[str]]] = [("", [])]
    fence = ""
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fence = "" if fence and stripped.startswith(fence) else (fence or stripped[:3])
        heading = re.match(r"^#\s+(.+?)\s*$", line) if not fence else None
        if heading:
            chunks.append((heading.group(1), []))
        else:
            chunks[-1][1].append(line)
    blocks = renderer.render("\n".join(chunks[0][1]))
    for title, body_lines in chunks[1:]:
        body = "\n".join(body_lines)
        special = _RUST_SECTIONS.get(title.strip().lower())
        if special:
            blocks += admonition(special[0], special[1], renderer.render(body))
        else:
            blocks.append(label_block(title))
            blocks += renderer.render(body)
    return blocks

