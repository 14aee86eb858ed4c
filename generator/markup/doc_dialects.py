"""Doc-comment dialects -> the one tagged form docstrings.py renders (`@param {Type} name text`, fences,
backticks, `{@link Target label}`).

Each language's doc tool has its own markup: C# XML documentation (`<summary>`, `<see cref=""/>`), Doxygen
commands in both spellings (`\\brief`, `@param[in]`, `\\code`...`\\endcode`, `\\c word`), YARD's bracketed
types (`@param name [String]`, `@return [Hash]`), banner comments (`//////`). Each is recognised by its own
syntax, whatever the file's language, and rewritten into the conventions the block renderer and `_tagged`
already read, so a reader sees sections, code and links as the language's own documentation shows them and
never the raw tags. Pure text in, text out; the output is still untrusted text (rendered and escaped later).
"""

from __future__ import annotations

import html
import re

# -- C# XML documentation ------------------------------------------------------------------------------------

# elements only C#'s XML documentation writes (`<code>` and `<p>` are Javadoc's HTML too)
_XML_DOC = re.compile(r"</?(?:summary|param\s+name|typeparam|returns|exception\s+cref|remarks|example|value|"
                      r"see\s+(?:cref|langword|href)|seealso|paramref|typeparamref|para|inheritdoc|c)\b[^<>]*>")
_XML_BLOCKS = ("param", "typeparam", "returns", "value", "exception", "remarks", "example", "seealso",
               "permission")


def has_xml_doc(text: str) -> bool:
    return bool(_XML_DOC.search(text))


def _attr(head: str, name: str) -> str:
    m = re.search(name + r"""\s*=\s*(?:"([^"]*)"|'([^']*)')""", head)
    return (m.group(1) if m.group(1) is not None else m.group(2)) if m else ""


def _cref(cref: str) -> str:
    """`T:System.Collections.Generic.IDictionary`2` -> IDictionary; `M:Foo.Bar(System.String)` -> Foo.Bar;
    `Dictionary{TKey, TValue}` -> Dictionary<TKey, TValue> (the generic form C# writes)."""
    cref = re.sub(r"^[A-Z]:", "", cref.strip())
    cref = re.sub(r"`+\d+", "", cref)
    cref = re.sub(r"\(.*\)$", "", cref)
    return cref.replace("{", "<").replace("}", ">")


def _xml_inline(text: str) -> str:
    """Inline XML elements -> the inline conventions `Inline` reads."""

    def see(m: re.Match[str]) -> str:
        head, label = m.group(1), (m.group(2) or "").strip()
        word = _attr(head, "langword")
        if word:
            return f"`{word}`"
        href = _attr(head, "href")
        if href:
            return f"[{label or href}]({href})"
        target = _cref(_attr(head, "cref"))
        if not target:
            return label
        if "<" in target:  # a generic type: its name links, its arguments are shown as written
            return label or f"`{target}`"
        return f"{{@link {target} {label}}}" if label else f"{{@link {target}}}"

    text = re.sub(r"<(?:see|seealso)\b([^<>]*?)(?:/>|>(.*?)</(?:see|seealso)\s*>)", see, text, flags=re.S)
    text = re.sub(r"""<(?:paramref|typeparamref)\b[^<>]*?name\s*=\s*["']([^"']*)["'][^<>]*/?>""", r"`\1`",
                  text)
    text = re.sub(r"<c>(.*?)</c>", lambda m: "`" + html.unescape(m.group(1)).replace("`", "'") + "`", text,
                  flags=re.S)
    text = re.sub(r"</?(?:b|strong)>", "**", text)
    text = re.sub(r"</?(?:i|em)>", "*", text)
    text = re.sub(r"<br\s*/?>", "\n", text)
    return re.sub(r"<inheritdoc\b[^<>]*/?>(?:</inheritdoc>)?", "", text)


def _xml_list(m: re.Match[str]) -> str:
    numbered = _attr(m.group(1), "type") == "number"
    items = []
    for item in re.finditer(r"<item>(.*?)</item>", m.group(2), re.S):
        term = re.search(r"<term>(.*?)</term>", item.group(1), re.S)
        desc = re.search(r"<description>(.*?)</description>", item.group(1), re.S)
        words = " ".join((desc.group(1) if desc else re.sub(r"</?term>", "", item.group(1))).split())
        if term and desc:
            words = f"**{' '.join(term.group(1).split())}**: {words}"
        items.append(("1. " if numbered else "- ") + words)
    return "\n\n" + "\n".join(items) + "\n\n"


def _xml_code(m: re.Match[str], lang: str = "csharp") -> str:
    body = html.unescape(m.group(1)).strip("\n")
    if "\n" not in m.group(1):  # written inside a sentence: code in the line, as `<c>`
        return "`" + body.replace("`", "'") + "`"
    margins = [len(ln) - len(ln.lstrip()) for ln in body.split("\n") if ln.strip()]
    cut = min(margins, default=0)
    body = "\n".join(ln[cut:] for ln in body.split("\n"))
    return "\n\n```" + lang + "\n" + body + "\n```\n\n"


def xml_doc(text: str) -> str:
    """C# XML documentation -> the tagged form (`<param name="x">` -> `@param x`, `<code>` -> a fence)."""
    text = re.sub(r"<code>(.*?)</code>", _xml_code, text, flags=re.S)
    text = re.sub(r"<list\b([^<>]*)>(.*?)</list>", _xml_list, text, flags=re.S)
    text = re.sub(r"</?para\s*/?>", "\n\n", text)
    text = re.sub(r"<value>(\w+)</value>", r"`\1`", text)  # `<value>true</value>` written in a sentence
    text = _xml_inline(text)

    def element(m: re.Match[str]) -> str:
        tag, head, body = m.group(1).lower(), m.group(2), m.group(3).strip("\n")
        one_line = " ".join(body.split())
        if tag == "param":
            return f"\n@param {_attr(head, 'name')} {one_line}\n"
        if tag == "typeparam":
            return f"\n@typeParam {_attr(head, 'name')} {one_line}\n"
        if tag in ("returns", "value"):
            return f"\n@returns {one_line}\n"
        if tag == "exception":
            return f"\n@throws {{{_cref(_attr(head, 'cref'))}}} {one_line}\n"
        if tag == "permission":
            return ""
        # remarks and examples keep their paragraphs, lists and code
        return f"\n@{tag}\n{body}\n"

    blocks = "|".join(_XML_BLOCKS)
    text = re.sub(rf"<({blocks})\b([^<>]*)>(.*?)</\1\s*>", element, text, flags=re.S)
    text = re.sub(r"<seealso\b([^<>]*)/>", lambda m: f"\n@see {_cref(_attr(m.group(1), 'cref'))}\n", text)
    text = re.sub(r"</?summary\s*>", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text).strip("\n")


# -- Doxygen -------------------------------------------------------------------------------------------------

# commands that only file or group a comment: their line says nothing to a reader
_DOXY_STRUCTURAL = re.compile(
    r"^\s*[\\@](?:file|ingroup|defgroup|addtogroup|weakgroup|name|class|struct|union|enum|fn|def|var|typedef|"
    r"namespace|headerfile|package|interface|protocol|category|mainpage|page|subpage|dir|cond|endcond|"
    r"internal|endinternal|private|public|protected|hideinitializer|showinitializer|nosubgrouping|"
    r"callgraph|callergraph|hidecallgraph|hidecallergraph|\{|\})(?:\s.*)?$", re.M)
_AT_VAR = re.compile(r"\s*@var\b")
_DOXY_CODE = re.compile(
    r"^(\s*)[\\@](code|verbatim)(?:\{\.?(\w+)\})?[ \t]*\n(.*?)^\s*[\\@]end\2\b[^\n]*$", re.S | re.M)
_DOXY_LEAD = re.compile(r"^(\s*)[\\@](?:brief|short|details)\b[ \t]*", re.M)
_DOXY_TAG_LINE = re.compile(
    r"^(\s*)\\(param|tparam|returns?|retval|throws?|exception|note|warning|attention|remark|remarks|see|sa|"
    r"since|deprecated|pre|post|invariant|todo|bug|example|author|authors|version|date|copyright|par)\b",
    re.M)
_DOXY_INLINE = re.compile(
    r"(?<![\w\\@`])[\\@](c|p|a|e|em|b|ref|li)[ \t]+([^\s,;:)]+(?:\(\))?)([^\n]*?\"[^\"\n]*\")?")


_DOXY_INLINE_AT = re.compile(_DOXY_INLINE.pattern.replace(r"[\\@](c|p", r"@(c|p", 1))
# a comment that writes Doxygen's backslash commands: one on a line of its own, or a `\\ref`
_DOXY_BACKSLASH = re.compile(r"^\s*@(?:param|returns?|note|see|brief)\b|\\ref\b|```", re.M)


def doxygen(text: str, code_lang: str = "", var_type: bool = False) -> str:
    """Doxygen's commands, `\\` or `@` spelled, -> the tagged form and inline conventions; a `\\code` block
    without a language is in `code_lang`. `var_type`: the language's `@var` is a type tag, kept."""
    if "\\" not in text and "@" not in text:
        return text
    def code(m: re.Match[str]) -> str:
        lang = m.group(3) or ("text" if m.group(2) == "verbatim" else code_lang)
        return f"{m.group(1)}```{lang}\n{m.group(4).rstrip()}\n{m.group(1)}```"

    text = _DOXY_CODE.sub(code, text)
    text = _DOXY_STRUCTURAL.sub(lambda m: m.group(0) if var_type and _AT_VAR.match(m.group(0)) else "", text)
    text = _DOXY_LEAD.sub(r"\1", text)
    text = _DOXY_TAG_LINE.sub(r"\1@\2", text)
    text = re.sub(r"^(\s*)@sa\b", r"\1@see", text, flags=re.M)
    text = re.sub(r"^(\s*@t?param)\s*\[[\w, ]*\]", r"\1", text, flags=re.M)  # `\param[in,out] name`

    def inline(m: re.Match[str]) -> str:
        cmd, word = m.group(1), m.group(2)
        if cmd == "ref":
            label = (m.group(3) or "").strip().strip('"')
            return f"{{@link {word} {label}}}" if label else f"{{@link {word}}}"
        rest = m.group(3) or ""
        if cmd in ("c", "p"):
            return f"`{word}`{rest}"
        if cmd == "b":
            return f"**{word}**{rest}"
        if cmd == "li":
            return f"- {word}{rest}"
        return f"*{word}*{rest}"

    if "\\" in text and not _DOXY_BACKSLASH.search(text):
        # `\\b`, `\\a` and `\\e` are escapes as often as commands: only in a comment that writes Doxygen
        return _DOXY_INLINE_AT.sub(inline, text)
    return _DOXY_INLINE.sub(inline, text)


# -- YARD ----------------------------------------------------------------------------------------------------

_YARD_NAMED = re.compile(r"^(\s*)@(param|option|yieldparam|attr|attr_reader|attr_writer)[ \t]+"
                         r"(?:(\[[^\]\n]*\])[ \t]+([\w$:.]+)|([\w$.]+)[ \t]+(\[[^\]\n]*\]))", re.M)
_YARD_TYPED = re.compile(r"^(\s*)@(return|raise|yieldreturn|yield)[ \t]+\[([^\]\n]*)\]", re.M)


def yard(text: str) -> str:
    """YARD's `@param name [Type]` / `@param [Type] name` / `@return [Type]` / `@raise [Error]` -> the JSDoc
    shape `@param {Type} name` `_tagged` reads."""
    if "@" not in text:
        return text

    def named(m: re.Match[str]) -> str:
        types = (m.group(3) or m.group(6))[1:-1]
        name = m.group(4) or m.group(5)
        return f"{m.group(1)}@{m.group(2)} {{{types}}} {name}"

    # `@option opts [Integer] :timeout text`: the option's key is its name (the hash is the parameter's)
    text = re.sub(r"^(\s*)@option[ \t]+[\w$]+[ \t]+\[([^\]\n]*)\][ \t]+:?([\w$]+)", r"\1@option {\2} \3",
                  text, flags=re.M)
    text = _YARD_NAMED.sub(named, text)
    text = _YARD_TYPED.sub(lambda m: f"{m.group(1)}@{'throws' if m.group(2) == 'raise' else m.group(2)}"
                                     f" {{{m.group(3)}}}", text)
    return re.sub(r"^(\s*)@raise\b", r"\1@throws", text, flags=re.M)


# -- banners and commented-out code --------------------------------------------------------------------------

_BANNER_LINE = re.compile(r"^\s*([/*=#~+_\-])\1{3,}\s*$")
_BANNER_EDGES = re.compile(r"^\s*([/*=#~+_\-])\1{3,}\s*(\S*[^\W_].*?)\s*\1{3,}\s*$")
# a banner with words is a short line; the pattern above is quadratic in a long one (16,000 `*`: 4 s)
MAX_BANNER_LINE = 400


def drop_banners(text: str) -> str:
    """Lines that are a banner (`//////`, `======`) go; `///// Section /////` keeps its words. A banner under
    a title line (a setext or reST heading) stays: it makes the line a heading."""
    if not re.search(r"([/*=#~+_\-])\1{3}", text):
        return text
    out: list[str] = []
    fence = False
    for raw in text.split("\n"):
        line = raw
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        if not fence:
            edges = _BANNER_EDGES.match(line) if len(line) <= MAX_BANNER_LINE else None
            if edges:
                line = edges.group(2)
            elif _BANNER_LINE.match(line) and not (out and out[-1].strip() and line.strip()[0] in "=-~^"):
                continue
        out.append(line)
    return "\n".join(out).strip("\n")


# a line of C-family, script or shell code: a statement's end, a brace, an assignment or call statement
_CODE_LINE = re.compile(
    r"""^\s*(?:[{}]\s*$|.*[;{]\s*$|\#\s*(?:include|define|if|ifdef|ifndef|endif|else)\b|
    (?:return|if|for|while|else|var|let|const|int|char|void|auto|static|unsigned)\b[\s(].*[;{)]\s*$|
    [\w.\[\]>*-]+\s*(?:[+\-*/|&]?=)\s*[^=\s].*[;)]\s*$|[\w.>*-]+\(.*\)\s*;?\s*$)""", re.X)
_PROSE_WORDS = re.compile(r"[A-Za-z]{3,}\s+[a-z]{2,}\s+[a-z]{2,}")


def is_code(paragraph: str) -> bool:
    """Whether a comment paragraph is commented-out code rather than prose: every line reads as code."""
    lines = [ln for ln in paragraph.split("\n") if ln.strip()]
    if not lines or any(ln.strip().startswith(("@", "\\", "<", ">", "-", "*", "|")) for ln in lines):
        return False
    coded = sum(1 for ln in lines if _CODE_LINE.match(ln) and not _prose(ln))
    return coded == len(lines)


def _prose(line: str) -> bool:
    """A sentence that happens to end in `;` or `)`: three words in a row outside any call's parentheses."""
    outside = re.sub(r"\([^()]*\)", "", line)
    return bool(_PROSE_WORDS.search(outside)) and not re.search(r"[=;{}]", outside.rstrip(";) "))


def drop_leading_code(text: str) -> str:
    """A doc comment's leading paragraphs of commented-out code go: they are never its summary."""
    paragraphs = re.split(r"\n[ \t]*\n", text.strip("\n"))
    k = 0
    while k < len(paragraphs) and is_code(paragraphs[k]):
        k += 1
    return "\n\n".join(paragraphs[k:])


_HTML_CODE = re.compile(r"(?<!<pre>)<code>(.*?)</code>", re.S | re.I)
_INLINE_SEE = re.compile(r"(?<=\S)[ \t]+@see[ \t]+(https?://\S+)")


_BADGE_PARAGRAPH = re.compile(
    r"\s*(?:(?:\[\s*!\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])?\s*\](?:\([^)]*\)|\[[^\]]*\])"
    r"|!\[[^\]]*\](?:\([^)]*\)|\[[^\]]*\])"
    r"|\[\s*<img\b[^<>]*>\s*\]\([^)]*\)|<img\b[^<>]*>|<br\s*/?>)(?:\s|&ensp;|&nbsp;|\|)*)+")


def drop_badges(text: str) -> str:
    """Leading paragraphs of badges (`[![crates-io]](https://crates.io/...)`, `<img src=...>`) go: their
    images need the network, and a summary of them is a row of empty links."""
    if "![" not in text and "<img" not in text:
        return text
    paragraphs = re.split(r"\n[ \t]*\n", text.strip("\n"))
    k = 0
    while k < len(paragraphs) and _BADGE_PARAGRAPH.fullmatch(paragraphs[k]):
        k += 1
    return "\n\n".join(paragraphs[k:])


def normalize(text: str, code_lang: str = "", var_type: bool = False) -> str:
    """Every dialect this module knows -> the tagged form (a doc comment of any language but Python's);
    `var_type`: the language's `@var` is a type tag (LanguageSpec.doc_var_type)."""
    if has_xml_doc(text):
        text = xml_doc(text)
    elif "<code>" in text:  # PHPDoc's and Javadoc's `<code>`: a block when it spans lines, else inline
        text = _HTML_CODE.sub(lambda m: _xml_code(m, code_lang or "text"), text)
    text = _INLINE_SEE.sub(r" (see \1)", text)  # `... in all records @see https://...`
    text = doxygen(yard(text), code_lang, var_type)
    return drop_leading_code(drop_banners(drop_badges(text)))
