"""Docstring prose (reST, Markdown, GoDoc, Javadoc HTML) -> safe Markdown blocks for a Material page.

Pure text in, text out. Everything from the repository is untrusted: words are HTML-escaped and Markdown
syntax in them is neutralised as numeric entities; only structures built here (code spans, emphasis, links
whose URL came from the resolver or is http(s), code blocks, lists, admonitions) reach the page as Markdown.
Cross-reference roles and backticked names go through a resolver (name -> URL of the symbol's section);
a name it does not know becomes a code span, so a raw `:class:` never shows.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from urllib.parse import quote, urlsplit

from generator.markup.doc_dialects import is_code

Resolver = Callable[[str], str | None]
Flavor = str  # "rst" (Python docstrings), "markdown" (Rust, JS, most C-family), "godoc", "javadoc"

# -- escaping ------------------------------------------------------------------------------------------------

_MD_SPECIALS = {c: f"&#{ord(c)};" for c in "\\`*_{}[]|<>!"}  # `!` too: `![` would be an image
_MD_SPECIALS_RE = re.compile("[" + re.escape("".join(_MD_SPECIALS)) + "]")
# a line of prose must not open a block Markdown or its extensions would read: heading, admonition,
# collapsible (`???`), fence, quote, list, setext/hr line, table
_LINE_START = re.compile(r"^(\s*)([#!?~=+>:-])")


def escape(text: str) -> str:
    """Untrusted words for inline Markdown: `&` escaped, HTML and Markdown syntax as numeric entities."""
    text = text.replace("&", "&amp;")
    return _MD_SPECIALS_RE.sub(lambda m: _MD_SPECIALS[m.group(0)], text)


def code_span(text: str) -> str:
    """A code span Markdown shows verbatim (it escapes HTML in it itself), on one line."""
    text = " ".join(text.split())
    if not text:
        return ""
    longest = max((len(m) for m in re.findall(r"`+", text)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if text.startswith("`") or text.endswith("`") else ""
    return f"{fence}{pad}{text}{pad}{fence}"


def code_block(text: str, lang: str = "text") -> str:
    """A fenced block at column 0 whose fence no line inside can close."""
    body = text.strip("\n")
    longest = max((len(m) for m in re.findall(r"`{3,}", body)), default=2)
    fence = "`" * (longest + 1)
    lang = re.sub(r"[^a-z0-9+#-]", "", lang.lower()) or "text"
    return f"{fence}{lang}\n{body}\n{fence}"


_SAFE_SCHEMES = ("http", "https", "mailto")


def safe_url(url: str) -> str | None:
    """An external URL a page may link to (http, https, mailto), percent-encoded; None for anything else."""
    url = url.strip()
    try:
        scheme = urlsplit(url).scheme.lower()
    except ValueError:
        return None
    if scheme not in _SAFE_SCHEMES:
        return None
    return quote(url, safe=":/?#@!$&'*+,;=%~.-_")


def _link(label_md: str, url: str) -> str:
    return f"[{label_md}]({quote(url, safe=':/?#@!$&*+,;=%~.-_')})"


# -- inline markup -------------------------------------------------------------------------------------------

# roles that name an API object (Sphinx's Python, JS, C and C++ domains share these)
_XREF_ROLES = frozenset({"class", "func", "meth", "attr", "mod", "exc", "data", "obj", "const", "ref",
                         "type", "any", "function", "method", "member", "struct", "enum", "macro",
                         "var", "prop", "attribute", "module", "exception", "interface", "property"})
_CALLABLE_ROLES = frozenset({"func", "meth", "function", "method"})
_CODE_ROLES = frozenset({"code", "samp", "file", "envvar", "kbd", "program", "option", "command", "makevar",
                         "regexp", "mimetype", "literal", "math", "token", "keyword", "guilabel",
                         "menuselection", "newsgroup", "manpage", "rst:dir", "confval", "setting"})

_INLINE = re.compile(
    r"(?P<role>:(?P<rname>[A-Za-z][\w.+-]*(?::[A-Za-z][\w+-]*)?):`(?P<rbody>[^`\n]+?)`)"
    r"|(?P<lit>``(?P<litbody>.+?)``(?!`))"
    r"|(?P<ext>`(?P<etext>[^`<\n]*?)\s*<(?P<eurl>[^`>\n]+)>`__?)"
    r"|(?P<named>`(?P<nbody>[^`\n]+?)`__?)"
    r"|(?P<jdoc>\{@(?P<jtag>link|linkplain|linkcode|code|literal|value|inheritDoc|inheritdoc|docRoot|summary|"
    r"index|systemProperty|return|see)\s*(?P<jbody>(?:[^{}]|\{[^{}]*\})*)\})"
    r"|(?P<tick>(?P<ticks>`+)(?P<tbody>.+?)(?<!`)(?P=ticks)(?!`))"
    r"|(?P<mdlink>\[(?P<mdtext>[^\[\]\n]+)\]\((?P<mdurl>[^()\s]+)(?:\s+\"[^\"\n]*\")?\))"
    r"|(?P<mdref>\[(?P<mrtext>[^\[\]\n]+)\]\[(?P<mrtarget>[^\[\]\n]*)\])"
    r"|(?P<short>\[(?P<sbody>`?[A-Za-z_][\w.:#!~]*(?:\(\))?`?)\](?![(\[:]))"
    r"|(?P<anyref>\[(?P<artext>[^\[\]\n]+)\](?![(\[:]))"
    r"|(?P<strong>\*\*(?=\S)(?P<sbold>[^*\n]+?)(?<=\S)\*\*)"
    r"|(?P<em>(?<![\w*])\*(?=\S)(?P<ebody>[^*\n]+?)(?<=\S)\*(?![\w*]))"
    r"|(?P<url>\bhttps?://[^\s<>`'\"]+[^\s<>`'\".,;:!?)\]])",
    re.S,
)


@dataclass
class Inline:
    """Renders inline markup for one docstring; remembers the links it made (for the sanitizer)."""

    resolve: Resolver
    flavor: Flavor = "rst"
    links: set[str] = field(default_factory=set)
    # Markdown reference definitions of the text (`[label]: url`, see reference_definitions), by label
    definitions: dict[str, str] = field(default_factory=dict)

    def _defined(self, label: str) -> str | None:
        """The external URL a reference label is defined as, when it is one a page may link to."""
        url = self.definitions.get(_ref_key(label))
        return safe_url(url) if url else None

    def xref(self, target: str, label: str | None = None, *, call: bool = False,
             prose_title: bool = False) -> str:
        """A cross-reference: a link to the symbol's section, else the label as code."""
        target = target.strip()
        no_link = target.startswith("!")
        short = target.startswith("~")
        name = target.lstrip("!~").strip()
        name = re.sub(r"\(.*\)$", "", name)  # Javadoc `Foo#bar(int)`
        if label is None:
            shown = re.split(r"[.#:]+", name.rstrip("."))[-1] if short else name.lstrip(".")
            if call and shown and not shown.endswith(")"):
                shown += "()"
            label_md = code_span(shown or name)
        else:
            # Sphinx shows an object's explicit title as code too; a :ref:/:doc: title is prose
            label_md = self.text(label) if prose_title else code_span(label)
        url = None if no_link or not name else self.resolve(_normal_name(name))
        if url is None:
            return label_md if label is None else code_span(label)  # unknown target: code, never a role
        self.links.add(url)
        return _link(label_md, url)

    def text(self, text: str) -> str:
        """Inline markup of one line (or a paragraph joined into one) -> Markdown."""
        out: list[str] = []
        pos = 0
        for m in _INLINE.finditer(text):
            out.append(escape(text[pos:m.start()]))
            out.append(self._token(m))
            pos = m.end()
        out.append(escape(text[pos:]))
        return "".join(out)

    def _token(self, m: re.Match[str]) -> str:
        if m.group("role"):
            return self._role(m.group("rname"), m.group("rbody"))
        if m.group("lit") is not None:
            return code_span(m.group("litbody"))
        if m.group("ext"):
            url = safe_url(m.group("eurl"))
            label = m.group("etext").strip() or m.group("eurl")
            return self._external(label, url) if url else self.text(label)
        if m.group("named"):
            # reST: `name`_ is a hyperlink reference (its target is elsewhere: keep the words);
            # `name` alone is interpreted text, Sphinx's default role: a cross-reference
            if m.group(0).endswith("_"):
                return self.text(m.group("nbody"))
            return self.xref(m.group("nbody"))
        if m.group("jdoc"):
            return self._javadoc(m.group("jtag"), m.group("jbody").strip())
        if m.group("tick"):
            body = m.group("tbody")
            if len(m.group("ticks")) == 1 and _looks_like_name(body):
                return self.xref(body)
            return code_span(body)
        if m.group("mdlink"):
            url = safe_url(m.group("mdurl"))
            if url:
                return self._external(m.group("mdtext"), url)
            target = self.resolve(_normal_name(m.group("mdurl"))) if _looks_like_name(
                m.group("mdurl")) else None
            return self._resolved(m.group("mdtext"), target)
        if m.group("mdref"):
            target_name = m.group("mrtarget").strip() or m.group("mrtext").strip("` ")
            defined = self._defined(m.group("mrtarget").strip() or m.group("mrtext"))
            if defined:
                return self._external(m.group("mrtext"), defined)
            target = self.resolve(_normal_name(target_name)) if _looks_like_name(target_name) else None
            return self._resolved(m.group("mrtext"), target)
        if m.group("anyref"):
            defined = self._defined(m.group("artext"))
            if defined:
                return self._external(m.group("artext"), defined)
            if _ref_key(m.group("artext")) in self.definitions:
                return self.text(m.group("artext"))  # defined as a relative URL of another site: the words
            return escape("[") + self.text(m.group("artext")) + escape("]")
        if m.group("short"):
            body = m.group("sbody")
            name = body.strip("`")
            if self.flavor == "rst" and not body.startswith("`") and _ref_key(body) not in self.definitions:
                return escape(m.group(0))  # `[x]` in reST prose is usually an index or a citation
            url = self.resolve(_normal_name(name))
            # KDoc's `[name]` names a declaration (Dokka shows it as code); GoDoc's too
            code = body.startswith("`") or self.flavor in ("godoc", "javadoc")
            label = code_span(name) if code else escape(name)
            if url is None:
                url = self._defined(body)
            if url is None:
                return label
            self.links.add(url)
            return _link(label, url)
        if m.group("strong"):
            return f"**{self.text(m.group('sbold'))}**"
        if m.group("em"):
            return f"*{self.text(m.group('ebody'))}*"
        if m.group("url"):
            url = safe_url(m.group("url"))
            return _link(escape(m.group("url")), url) if url else escape(m.group("url"))
        return escape(m.group(0))

    def _external(self, label: str, url: str) -> str:
        self.links.add(url)
        return _link(self.text(label), url)

    def _resolved(self, label: str, url: str | None) -> str:
        if url is None:
            return self.text(label)
        self.links.add(url)
        return _link(self.text(label), url)

    def _role(self, name: str, body: str) -> str:
        role = name.rsplit(":", 1)[-1].lower()  # `py:class` -> `class`
        title, target = _title_target(body)
        if role in _XREF_ROLES or role == "doc":
            return self.xref(target, title, call=role in _CALLABLE_ROLES, prose_title=role in ("ref", "doc"))
        if role in ("pep", "rfc"):
            number = target.split("#", 1)[0].strip()
            return escape(title or f"{role.upper()} {number}")
        if role == "abbr":
            return escape(re.sub(r"\s*\(.*\)$", "", body.strip()))
        if role in ("term", "dfn", "sub", "sup", "title-reference", "t"):
            return self.text(title or target)
        if role in ("emphasis",):
            return f"*{escape(body)}*"
        if role in ("strong",):
            return f"**{escape(body)}**"
        if role in _CODE_ROLES:
            return code_span(body)
        return code_span(title or target)  # an unknown role: its text as code, never the raw role

    def _javadoc(self, tag: str, body: str) -> str:
        if tag in ("code", "literal", "value", "systemProperty"):
            return code_span(body) if body else ""
        if tag in ("summary", "index", "return"):
            return self.text(body)
        if tag.lower() in ("inheritdoc", "docroot"):
            return ""
        # {@link Target label}, {@link #member(Type, Type) label} and JSDoc's {@link Target|label}
        target, label = link_parts(body)
        url = safe_url(target) if "://" in target else None
        if url:
            return self._external(label or target, url)
        if label:
            return self.xref(target, label, prose_title=True)
        shown = member_label(target)
        bare = re.sub(r"\(.*\)$", "", target).lstrip("#")
        name = self.resolve(_normal_name(bare)) if _looks_like_name(bare) else None
        if name is None:
            return code_span(shown)
        self.links.add(name)
        return _link(code_span(shown), name)


_LINK_TARGET = re.compile(r"\s*([^\s(|]*(?:\([^)]*\))?)\s*\|?\s*(.*)$", re.S)


def link_parts(body: str) -> tuple[str, str]:
    """`#fromJson(String, Class) the label` -> ("#fromJson(String, Class)", "the label"): a member's
    parameter list holds spaces and stays with its target."""
    m = _LINK_TARGET.match(body)
    if not m:
        return body.strip(), ""
    return m.group(1), " ".join(m.group(2).split())


def member_label(target: str) -> str:
    """A link target as Javadoc shows it: `#fromJson(String, Class)` -> `fromJson(String, Class)`,
    `Gson#toJson(Object)` -> `Gson.toJson(Object)`."""
    return target.lstrip("#").replace("#", ".")


def _ref_key(label: str) -> str:
    """A reference label as Markdown matches it: case and runs of spaces do not count."""
    return " ".join(label.split()).lower()


_REF_DEFINITION = re.compile(r"^ {0,3}\[([^\[\]\n]+)\]:[ \t]*<?([^\s>]+)>?"
                             r"(?:[ \t]+(?:\"[^\"\n]*\"|'[^'\n]*'|\([^()\n]*\)))?[ \t]*$")


def reference_definitions(text: str) -> tuple[str, dict[str, str]]:
    """The text without its Markdown reference definitions (`[label]: url "title"`, outside code fences),
    and the definitions by label: a reader sees the links they define, never the definition lines."""
    if "]:" not in text:
        return text, {}
    kept: list[str] = []
    found: dict[str, str] = {}
    fence = ""
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith(("```", "~~~")):
            fence = "" if fence and stripped.startswith(fence) else (fence or stripped[:3])
        m = None if fence else _REF_DEFINITION.match(line)
        if m:
            found.setdefault(_ref_key(m.group(1)), m.group(2))
        else:
            kept.append(line)
    return "\n".join(kept), found


def _title_target(body: str) -> tuple[str | None, str]:
    """`title <target>` -> (title, target); `target` -> (None, target)."""
    m = re.fullmatch(r"\s*(.*?)\s*<([^<>]+)>\s*", body, re.S)
    if m and m.group(1):
        return m.group(1), m.group(2)
    return None, body.strip()


_NAME = re.compile(r"[~!.]?[A-Za-z_$][\w$]*(?:(?:\.|::|#)[A-Za-z_$~][\w$]*)*(?:\(\))?")


def _looks_like_name(text: str) -> bool:
    return bool(_NAME.fullmatch(text.strip()))


def _normal_name(name: str) -> str:
    """`Foo::bar`, `Foo#bar`, `.Foo`, `foo()` -> the dotted form resolvers look up."""
    name = re.sub(r"\(.*\)$", "", name.strip().lstrip("~!"))
    return re.sub(r"::|#", ".", name).strip(".")


def xref_names(text: str) -> set[str]:
    """Every name rendering `text` may ask a resolver about (whatever its flavor), normalised."""
    asked: set[str] = set()

    def record(name: str) -> None:
        asked.add(name)

    from generator.markup.doc_dialects import normalize  # C# `<see cref>`, Doxygen `\\ref`: links too

    Inline(record, "markdown").text(" ".join(normalize(text).split()))
    return asked


def plain_line(text: str) -> str:
    """A docstring's first paragraph for a summary: roles and literals become code spans, on one line."""
    words = " ".join(text.split())
    out, pos = [], 0
    for m in _INLINE.finditer(words):
        out.append(words[pos:m.start()])
        pos = m.end()
        if m.group("role"):
            title, target = _title_target(m.group("rbody"))
            out.append(title if title else code_span(re.split(r"[.#]+", target.lstrip("~!"))[-1]
                                                     if target.startswith("~") else target.lstrip("!")))
        elif m.group("lit") is not None:
            out.append(code_span(m.group("litbody")))
        elif m.group("ext"):
            out.append(m.group("etext").strip() or m.group("eurl"))
        elif m.group("named"):
            body = m.group("nbody")
            out.append(body if m.group(0).endswith("_") else code_span(body))
        elif m.group("jdoc"):
            tag = m.group("jtag")
            if tag in ("code", "literal", "value", "systemProperty"):
                out.append(code_span(m.group("jbody").strip()))
            elif tag in ("summary", "index", "return"):
                out.append(m.group("jbody").strip())
            elif tag in ("link", "linkplain", "linkcode", "see"):
                target, label = link_parts(m.group("jbody"))
                out.append(label or code_span(member_label(target)))
        elif m.group("mdlink"):  # a summary is one line of text: a link's words, never its markup
            out.append(m.group("mdtext"))
        elif m.group("mdref"):
            out.append(m.group("mrtext"))
        elif m.group("strong"):
            out.append(m.group("sbold"))
        elif m.group("short"):  # KDoc's `[name]`, rustdoc's [`Name`]: a declaration's name, as code
            out.append(code_span(m.group("sbody").strip("`")))
        else:
            out.append(m.group(0))
    out.append(words[pos:])
    return "".join(out).strip()


# -- blocks --------------------------------------------------------------------------------------------------


@dataclass
class Block:
    """A rendered block: prose (may sit inside an admonition) or a code block (always at column 0)."""

    markdown: str
    code: bool = False


_FENCE_OPEN = re.compile(r"^(\s{0,3})(`{3,}|~{3,})\s*([\w#+.,-]*)")
_DIRECTIVE = re.compile(r"^\.\.\s+([A-Za-z][\w:-]*)::(.*)$")
_RST_COMMENT = re.compile(r"^\.\.(\s|$)")
_BULLET = re.compile(r"^(\s*)([-*+•]|\d{1,3}[.)]|#\.)\s+(.*)$")
_MAX_LIST_DEPTH = 8  # lists nested deeper are their items' words (untrusted text: no unbounded recursion)
_ATX = re.compile(r"^\s{0,3}#{1,6}\s+(.+?)\s*#*\s*$")
_UNDERLINE = re.compile(r"^([=\-~^\"'`#*+:._])\1{2,}\s*$")
_FIELD = re.compile(r"^:([^:\s][^:]*):\s*(.*)$")
_TABLE_LINE = re.compile(r"^\s*(\+[-=+]+\+|\|.*\||={2,}(\s+={2,})+)\s*$")

ADMONITIONS = {
    "note": "note", "notes": "note", "warning": "warning", "warnings": "warning", "tip": "tip",
    "hint": "tip", "important": "important", "caution": "warning", "attention": "warning",
    "danger": "danger", "error": "danger", "seealso": "info", "see-also": "info", "see also": "info",
    "todo": "note", "example": "example", "examples": "example", "admonition": "note", "info": "info",
}
_ADMONITION_TITLES = {"seealso": "See also", "see-also": "See also", "todo": "To do"}
_VERSION_DIRECTIVES = {"versionadded": ("info", "Added in version"),
                       "versionchanged": ("info", "Changed in version"),
                       "deprecated": ("warning", "Deprecated since version"),
                       "versionremoved": ("warning", "Removed in version")}
_CODE_DIRECTIVES = frozenset({"code-block", "code", "sourcecode", "doctest", "testcode", "testoutput",
                              "ipython", "literalinclude-text", "jupyter-execute", "highlight-block"})


def admonition(kind: str, title: str, blocks: list[Block]) -> list[Block]:
    """`!!! kind "title"` with the prose indented under it; code blocks follow it at column 0, where the
    sanitizer keeps them verbatim."""
    safe_title = escape(" ".join(title.split())).replace('"', "&quot;")
    head = f'!!! {kind} "{safe_title}"' if safe_title else f"!!! {kind}"
    prose = [b.markdown for b in blocks if not b.code]
    body = "\n\n".join(prose) or escape(title) or kind
    indented = "\n".join(("    " + line) if line.strip() else "" for line in body.split("\n"))
    return [Block(head + "\n" + indented), *[b for b in blocks if b.code]]


def label_block(title: str) -> Block:
    return Block(f"**{escape(title)}**")


class BlockRenderer:
    """Splits prose into blocks by the conventions of one flavor and renders each."""

    def __init__(self, inline: Inline, flavor: Flavor, code_lang: str) -> None:
        self.inline = inline
        self.flavor = flavor
        self.code_lang = code_lang

    def render(self, text: str) -> list[Block]:
        lines = text.expandtabs(4).replace("\r\n", "\n").split("\n")
        return list(self._blocks(lines))

    def _blocks(self, lines: list[str]) -> Iterator[Block]:
        i, n = 0, len(lines)
        after_list = False  # an indented paragraph after a list continues its last item
        while i < n:
            line = lines[i]
            stripped = line.strip()
            if not stripped:
                i += 1
                continue
            fence = _FENCE_OPEN.match(line)
            if fence:
                i, block = self._fence(lines, i, fence)
                yield block
                continue
            if self.flavor == "rst":
                directive = _DIRECTIVE.match(stripped) if not line[0].isspace() else None
                if directive:
                    i, blocks = self._directive(lines, i, directive.group(1).lower(), directive.group(2))
                    yield from blocks
                    continue
                if _RST_COMMENT.match(stripped) and not line[0].isspace():
                    i = _skip_indented(lines, i + 1)  # comments, `.. _label:` targets, substitutions
                    continue
            if stripped.startswith(">>>"):
                j = i
                while j < n and lines[j].strip():
                    j += 1
                yield Block(code_block(_dedent(lines[i:j]), "pycon"), code=True)
                i = j
                continue
            if _TABLE_LINE.match(line):
                j = i
                while j < n and lines[j].strip():
                    j += 1
                yield Block(code_block(_dedent(lines[i:j]), "text"), code=True)
                i = j
                continue
            indent = len(line) - len(line.lstrip())
            if indent and self.flavor == "godoc" and not _BULLET.match(line):
                j = i
                while j < n and (not lines[j].strip() or lines[j][:1].isspace()):
                    if not lines[j].strip() and j + 1 < n and _BULLET.match(lines[j + 1]):
                        break  # an indented list after the code is its own block
                    j += 1
                yield Block(code_block(_dedent(lines[i:j]), "go"), code=True)
                i = j
                continue
            if self.flavor != "rst" and stripped.startswith(">"):
                i, blocks = self._quote(lines, i)
                yield from blocks
                continue
            if self.flavor in ("markdown", "javadoc") and indent >= 4 and not after_list and (
                    i == 0 or not lines[i - 1].strip()):
                # Markdown's indented code block (PHPDoc, KDoc, rustdoc and JSDoc examples are written so)
                j = i
                while j < n and (not lines[j].strip() or len(lines[j]) - len(lines[j].lstrip()) >= 4):
                    j += 1
                yield Block(code_block(_dedent(lines[i:j]), self.code_lang), code=True)
                i = j
                continue
            after_list = False
            heading = self._heading(lines, i)
            if heading is not None:
                title, i = heading
                yield label_block(title)
                continue
            bullet = _BULLET.match(line)
            if bullet:
                i, block = self._list(lines, i)
                yield block
                after_list = True
                continue
            if self.flavor in ("rst", "markdown") and indent and i > 0 and not lines[i - 1].strip():
                # reST: a block quote; Markdown: a list item's further paragraphs and fences (indented to
                # its text, where a fence at 4 spaces is no fence at the margin): their content, one level up
                j = _skip_indented(lines, i)
                yield from self._blocks([ln[indent:] if ln[:indent].isspace() else ln.lstrip()
                                         for ln in lines[i:j]])
                i = j
                continue
            if self.flavor == "rst" and _FIELD.match(stripped):
                field_match = _FIELD.match(stripped)
                assert field_match is not None
                j = i + 1
                body = [field_match.group(2)]
                while j < n and lines[j].strip() and lines[j][:1].isspace():
                    body.append(lines[j].strip())
                    j += 1
                yield Block(f"**{escape(field_match.group(1))}**: {self.inline.text(' '.join(body))}")
                i = j
                continue
            i, blocks = self._paragraph(lines, i)
            yield from blocks

    def _quote(self, lines: list[str], i: int) -> tuple[int, list[Block]]:
        """A `>` quote: a GitHub alert (`> [!NOTE]`) becomes the admonition GitHub shows; any other quote
        its own blocks (its words, without the marks)."""
        j = i
        inner: list[str] = []
        while j < len(lines) and lines[j].strip().startswith(">"):
            inner.append(re.sub(r"^\s*> ?", "", lines[j]))
            j += 1
        alert = _ALERT.match(inner[0]) if inner else None
        if alert:
            kind = alert.group(1).lower()
            rest = [inner[0][alert.end():], *inner[1:]]
            return j, admonition(_ALERT_KINDS[kind], kind.capitalize(), self.render("\n".join(rest)))
        return j, self.render("\n".join(inner))

    def _heading(self, lines: list[str], i: int) -> tuple[str, int] | None:
        line = lines[i]
        if self.flavor in ("markdown", "godoc", "javadoc"):
            m = _ATX.match(line)
            if m and (self.flavor != "godoc" or line.startswith("# ")):
                return m.group(1), i + 1
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if (line.strip() and not line[0].isspace() and _UNDERLINE.match(nxt)
                and len(nxt.strip()) >= len(line.strip()) * 0.6 and not _UNDERLINE.match(line)):
            return line.strip(), i + 2
        return None

    def _fence(self, lines: list[str], i: int, m: re.Match[str]) -> tuple[int, Block]:
        marker = m.group(2)
        info = m.group(3)
        body: list[str] = []
        j = i + 1
        indent = len(m.group(1))
        while j < len(lines):
            if lines[j].strip().startswith(marker[0] * len(marker)) and \
                    lines[j].strip().strip(marker[0]) == "":
                j += 1
                break
            # the fence's own indentation comes off each line, the code's own stays (a fence at column 0
            # keeps every line as written)
            body.append(lines[j][indent:] if not indent or lines[j][:indent].isspace() else lines[j].lstrip())
            j += 1
        lang = info.split(",")[0].strip()
        if self.flavor == "markdown" and self.code_lang == "rust" and (
                not lang or lang in _RUSTDOC_ATTRIBUTES):
            lang = "rust"
            # rustdoc hides lines starting with `# ` (setup code) from the rendered example
            body = [ln for ln in body if not (ln.strip() == "#" or ln.lstrip().startswith("# "))]
        # an unlabelled fence is shown as text: it may hold output or shell as often as code
        return j, Block(code_block("\n".join(body), lang or "text"), code=True)

    def _list(self, lines: list[str], i: int, depth: int = 0) -> tuple[int, Block]:
        items: list[str] = []
        numbered = False
        j = i
        n = len(lines)
        base = -1
        while j < n:
            m = _BULLET.match(lines[j])
            # a sublist ends where an item less indented than its own starts (its parent's next item)
            if not m or (base >= 0 and (len(m.group(1)) > base or (depth and len(m.group(1)) < base))):
                break
            numbered = numbered or m.group(2)[0].isdigit() or m.group(2) == "#."
            base = len(m.group(1))
            text = [m.group(3)]
            nested: list[str] = []
            j += 1
            # an item's lines: indented under it, or (Markdown's lazy continuation) wrapped to any margin
            # right after it, as `* **auth** - An authentication class to use when sending\nrequests.`;
            # a list indented under it is its sublist (`- Codes:` / `   * GL: Global`), not its words
            while j < n and lines[j].strip() and (
                    len(lines[j]) - len(lines[j].lstrip()) > base or not (
                        _BULLET.match(lines[j]) or self._opens_block(lines[j]))):
                sub = _BULLET.match(lines[j])
                if sub and len(sub.group(1)) > base and depth < _MAX_LIST_DEPTH:
                    j, block = self._list(lines, j, depth + 1)
                    nested.append(block.markdown)
                    continue
                text.append(lines[j].strip())
                j += 1
            while j < n and not lines[j].strip() and j + 1 < n and (after := _BULLET.match(lines[j + 1])) \
                    and (not depth or len(after.group(1)) >= base):
                j += 1
            item = self.inline.text(" ".join(text))
            for sublist in nested:
                item += "\n" + "\n".join("    " + line for line in sublist.split("\n"))
            items.append(item)
        marker = "1." if numbered else "-"
        return j, Block("\n".join(f"{marker} {item}" for item in items))

    def _opens_block(self, line: str) -> bool:
        """Whether a line at the list's margin starts a block of its own rather than continuing an item."""
        stripped = line.strip()
        return bool(_FENCE_OPEN.match(line) or stripped.startswith(">>>") or _TABLE_LINE.match(line) or (
            self.flavor == "rst" and (_DIRECTIVE.match(stripped) or _FIELD.match(stripped))) or (
            self.flavor != "rst" and _ATX.match(line)))

    def _paragraph(self, lines: list[str], i: int) -> tuple[int, list[Block]]:
        n = len(lines)
        para = [lines[i].strip()]
        j = i + 1
        while j < n and lines[j].strip():
            nxt = lines[j]
            if _FENCE_OPEN.match(nxt) or nxt.strip().startswith(">>>") or (
                    self.flavor == "rst" and _DIRECTIVE.match(nxt.strip()) and not nxt[0].isspace()) or (
                    _BULLET.match(nxt) and (self.flavor != "rst" or para[-1].endswith(":"))) or (
                    self.flavor in ("markdown", "javadoc") and _ATX.match(nxt)):
                break
            if _UNDERLINE.match(nxt) and j == i + 1:
                break  # a heading, handled by the caller
            para.append(nxt.strip())
            j += 1
        if self.flavor != "rst" and is_code("\n".join(para)):
            # code written between paragraphs without a fence (C and PHP comments do): shown as code
            return j, [Block(code_block(_dedent(lines[i:j]), self.code_lang), code=True)]
        text = " ".join(para)
        blocks: list[Block] = []
        literal = self.flavor == "rst" and text.endswith("::")
        if literal:
            text = text[:-2].rstrip() + (":" if not text[:-2].endswith(" ") and text[:-2].strip() else "")
        if text.strip():
            blocks.append(Block(self._prose_line(text)))
        if literal:
            k = j
            while k < n and not lines[k].strip():
                k += 1
            if k < n and lines[k][:1].isspace():
                end = _skip_indented(lines, k)
                blocks.append(Block(code_block(_dedent(lines[k:end]), self.code_lang), code=True))
                j = end
        return j, blocks

    def _prose_line(self, text: str) -> str:
        rendered = self.inline.text(text)
        return _LINE_START.sub(lambda m: m.group(1) + f"&#{ord(m.group(2))};", rendered)

    def _directive(self, lines: list[str], i: int, name: str, arg: str) -> tuple[int, list[Block]]:
        j = i + 1
        options: dict[str, str] = {}
        while j < len(lines) and lines[j].strip().startswith(":") and lines[j][:1].isspace():
            m = _FIELD.match(lines[j].strip())
            if not m:
                break
            options[m.group(1).strip().lower()] = m.group(2).strip()
            j += 1
        end = _skip_indented(lines, j)
        body = _dedent(lines[j:end])
        arg = arg.strip()
        if name in _CODE_DIRECTIVES:
            lang = arg or ("pycon" if name in ("doctest", "ipython") else self.code_lang)
            return end, [Block(code_block(body, lang), code=True)] if body.strip() else []
        if name in _VERSION_DIRECTIVES:
            kind, words = _VERSION_DIRECTIVES[name]
            version, _, rest = arg.partition(" ")
            inner = self.render("\n".join(x for x in (rest, body) if x.strip()))
            return end, admonition(kind, f"{words} {version}".strip(), inner)
        if name.removeprefix("py:") in ("function", "class", "method", "attribute", "data", "module",
                                        "exception", "decorator"):
            return end, [label_block(arg), *self.render(body)] if arg else self.render(body)
        if name in ADMONITIONS or name == "admonition":
            title = arg if name == "admonition" else _ADMONITION_TITLES.get(name, name.capitalize())
            inner = self.render(body if name == "admonition" or not arg else arg + "\n" + body)
            return end, admonition(ADMONITIONS.get(name, "note"), title, inner)
        if name == "rubric":
            return end, [label_block(arg)]
        # images, figures, raw, include, toctree, autodoc and anything unknown: not shown
        return end, []


# GitHub's alerts and the admonition Material styles for each (as md_html.py shows them in documents)
_ALERT_KINDS = {"note": "note", "tip": "tip", "important": "info", "warning": "warning", "caution": "danger"}
_ALERT = re.compile(r"\s*\[!(NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]\s*", re.I)
_RUSTDOC_ATTRIBUTES = frozenset({"rust", "ignore", "no_run", "should_panic", "compile_fail", "edition2015",
                                 "edition2018", "edition2021", "edition2024"})


def _skip_indented(lines: list[str], i: int) -> int:
    """Index after an indented body (blank lines inside it included) starting at `i`."""
    j = i
    last = i
    while j < len(lines):
        if lines[j].strip():
            if not lines[j][:1].isspace():
                break
            last = j + 1
        j += 1
    return last


def _dedent(lines: list[str]) -> str:
    margins = [len(ln) - len(ln.lstrip()) for ln in lines if ln.strip()]
    margin = min(margins, default=0)
    return "\n".join(ln[margin:] for ln in lines).strip("\n")
