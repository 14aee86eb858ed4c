"""Markdown from a repository or a writer made safe for the site: the one sanitizer every page goes through.

`inline_text` escapes untrusted text for one line of Markdown; `sanitize_markdown` keeps Markdown but strips
raw HTML, keeps fenced code verbatim and routes relative links through a resolver. Leaf module (no
sourcebook imports): render, docstrings and the topic pages all use it without importing each other.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from urllib.parse import urlsplit

# Characters Markdown would interpret inside a line (emphasis, code, links, attr lists, table cells); written
# as numeric entities they display literally. Line-start syntax (#, -, +, 1.) cannot occur: every inline
# value follows template text on its line.
_MD_SPECIALS = {c: f"&#{ord(c)};" for c in "\\`*_{}[]|"}
_MD_SPECIALS_RE = re.compile("[" + re.escape("".join(_MD_SPECIALS)) + "]")


def escape_markdown(text: str) -> str:
    return _MD_SPECIALS_RE.sub(lambda m: _MD_SPECIALS[m.group(0)], html.escape(text, quote=False))


def inline_text(value: object) -> str:
    """Untrusted text for a line of Markdown: HTML escaped, Markdown syntax neutralised, one line."""
    return escape_markdown(" ".join(str(value).split()))


# An opening fence the sanitizer keeps verbatim must be one pymdownx.superfences opens a code block with
# whatever surrounds it: at column 0, followed by at most a language word. Anything laxer (indented, a tab,
# an info string it rejects) stays text there, and raw HTML after it would reach the page.
_FENCE = re.compile(r"^(`{3,}|~{3,})[ \t]*\.?[\w#.+-]*[ \t]*$")
_MERMAID_INFO = re.compile(r"^([`~]{3,}[ \t]*\.?)mermaid\b", re.I)
# One line only, and not opened by an escaped backtick: a span the sanitizer keeps verbatim must be one that
# Markdown also reads as code. Across lines it is not (a tag at the start of the next line opens an HTML
# block first), and `\`` is a literal backtick, so either would shield raw HTML from the tag stripping.
CODE_SPAN = re.compile(r"(?<!\\)(`+)(?:.+?)(?<!`)\1(?!`)")
_DANGEROUS_BLOCK = re.compile(r"<(script|style|iframe|object|embed|template|noscript)\b.*?</\1\s*>",
                              re.S | re.I)
_COMMENT = re.compile(r"<!--.*?(-->|$)", re.S)
_TAG = re.compile(r"</?[A-Za-z][A-Za-z0-9-]*(?:\s[^<>]*)?/?>")
_INLINE_LINK = re.compile(r"(!?)\[((?:[^\[\]]|\[[^\[\]]*\])*)\]"
                          r"\(\s*<?([^()\s<>]*(?:\([^()\s]*\)[^()\s<>]*)*)>?"
                          r"(?:\s+(?:\"[^\"]*\"|'[^']*'))?\s*\)")
# also inside block quotes and list items, where Markdown reads reference definitions too
_REF_DEF = re.compile(r"^((?:[ \t>*+-]|\d+[.)])*\[[^\[\]]*\]:\s*)(<?)(\S+?)(>?)([ \t].*)?$", re.M)
_ATX = re.compile(r"^(#{1,5})(\s)", re.M)

LinkResolver = Callable[[str], str | None]


def _is_external(url: str) -> bool:
    parts = urlsplit(url)
    return bool(parts.scheme or parts.netloc) or url.startswith(("#", "mailto:"))


# Stands for the `(` after `]` of an inline link checked here. Markdown reads some links _INLINE_LINK does
# not (a newline inside the URL: `[x](jav\nascript:…)`, and browsers drop that newline), so every other `](`
# left in the text is neutralised rather than trusted; likewise `]:` outside a checked reference definition.
_CHECKED_LINK = "\x02"
_CHECKED_REF = "\x03"


def _rewrite_links(text: str, resolve: LinkResolver, images: bool = True) -> str:
    def inline(m: re.Match[str]) -> str:
        bang, url = m.group(1), m.group(3)
        label = _INLINE_LINK.sub(inline, m.group(2))  # a badge: an image link inside the link text
        if bang and not images:
            return inline_text(label)  # the alt text; a badge's link keeps it as its label
        if _is_external(url):
            if urlsplit(url).scheme.lower() in {"javascript", "data", "vbscript"}:
                return label if not bang else inline_text(label)
            rest = m.group(0)[m.end(2) - m.start(0) + 2:]  # after the label's "]("
            return f"{bang}[{label}]{_CHECKED_LINK}{rest}"
        target = resolve(url)
        if target is None:
            return inline_text(label) if bang else label  # keep the words, drop the dead link
        return f"{bang}[{label}]{_CHECKED_LINK}{target})"

    def ref(m: re.Match[str]) -> str:
        url = m.group(3)
        if _is_external(url) and urlsplit(url).scheme.lower() not in {"javascript", "data", "vbscript"}:
            return m.group(0).replace("]:", "]" + _CHECKED_REF, 1)
        target = resolve(url) if not _is_external(url) else None
        return f"{m.group(1).replace(']:', ']' + _CHECKED_REF, 1)}{target or '#'}{m.group(5) or ''}"

    text = _INLINE_LINK.sub(inline, text.replace(_CHECKED_LINK, "").replace(_CHECKED_REF, ""))
    if not images:
        text = text.replace("![", "&#33;[")  # `![alt][ref]`: a plain link to the image, never loaded
    text = text.replace("](", "&#93;(").replace(_CHECKED_LINK, "(")
    text = _REF_DEF.sub(ref, text)
    return text.replace("]:", "&#93;:").replace(_CHECKED_REF, ":")


def _sanitize_segment(text: str, resolve: LinkResolver, images: bool = True) -> str:
    """Outside code: drop dangerous blocks, comments and tags; escape stray `<`; fix links."""
    spans: list[str] = []

    def keep(m: re.Match[str]) -> str:
        spans.append(m.group(0))
        return f"\x00{len(spans) - 1}\x00"

    text = CODE_SPAN.sub(keep, text.replace("\x00", ""))  # NUL marks the placeholders below
    text = _DANGEROUS_BLOCK.sub("", text)
    text = _COMMENT.sub("", text)
    text = _TAG.sub("", text)
    # what is left of `<` cannot start a tag any more, except autolinks <https://…>
    text = re.sub(r"<(?!(?:https?|mailto):[^<>\s]+>)", "&lt;", text)
    text = _inert_brackets(_rewrite_links(text, resolve, images))
    return re.sub(r"\x00(\d+)\x00", lambda m: spans[int(m.group(1))], text)


# Python-Markdown looks for the `]` that closes each `[` (to the end of its paragraph when none does), so a
# long run of `[` in a README or a docstring held the site stage for minutes, and a megabyte of them for
# days (docs/performance.md). Brackets nested deeper than this, and any `[` that nothing closes, are written
# as `&#91;`: the same character on the page, one Markdown never scans from. A text with fewer `[` than the
# threshold is left as it is: its scans are short.
MAX_BRACKET_DEPTH = 4
_BRACKET_THRESHOLD = 100


def _inert_brackets(text: str) -> str:
    if text.count("[") < _BRACKET_THRESHOLD:
        return text
    open_at: list[int] = []
    pairs: list[tuple[int, int]] = []  # (position, +1 for a `[` some `]` closes, -1 for that `]`)
    for m in re.finditer(r"[\[\]]", text):
        if m.group() == "[":
            open_at.append(m.start())
        elif open_at:
            pairs += [(open_at.pop(), 1), (m.start(), -1)]
    inert = open_at  # closed by nothing
    depth = 0
    for at, step in sorted(pairs):
        depth += step
        if step > 0 and depth > MAX_BRACKET_DEPTH:
            inert.append(at)  # its `]` stays: to Markdown a stray one, which only ends a scan sooner
    if not inert:
        return text
    parts, last = [], 0
    for at in sorted(inert):
        parts += [text[last:at], "&#91;"]
        last = at + 1
    return "".join(parts) + text[last:]


def sanitize_markdown(text: str, resolve: LinkResolver | None = None, demote: int = 0,
                      images: bool = True) -> str:
    """Markdown from the repository or a writer, made safe for the site.

    Raw HTML is stripped (script/style blocks with their content), fenced code is kept verbatim, relative
    links go through `resolve` (page link, or None to drop the link but keep its text), and ATX headings are
    demoted by `demote` levels so a README's `#` does not compete with the page title. With `images` off,
    an image becomes its alt text (a badge: its link, labelled by it): the site loads nothing remote.
    """
    resolver: LinkResolver = resolve or (lambda _url: None)
    out: list[str] = []
    buffer: list[str] = []
    fence: str | None = None

    def flush() -> None:
        if buffer:
            chunk = _sanitize_segment("\n".join(buffer), resolver, images)
            if demote:
                chunk = _ATX.sub(lambda m: "#" * min(6, len(m.group(1)) + demote) + m.group(2), chunk)
            out.append(chunk)
            buffer.clear()

    closed = False  # the line before was a closing fence
    for line in text.replace("\r\n", "\n").split("\n"):
        m = _FENCE.match(line)
        if closed and line.strip() and fence is None:
            # a fenced block is a block of its own (CommonMark, GitHub): Python-Markdown reads a `---` right
            # after the closing fence as a setext underline, and the whole code block becomes an <h2>
            (buffer if not m else out).append("")
        closed = False
        if fence is None and m:
            flush()
            fence = m.group(1)[0] * len(m.group(1))
            # a ```mermaid fence would be drawn by Mermaid, %%{init}%% directives and all (a full-window
            # themeCSS overlay): from a repository or a writer it is shown as the code it is
            out.append(_MERMAID_INFO.sub(r"\1text", line))
        elif fence is not None:
            out.append(line)
            if line.strip().startswith(fence) and line.strip().strip(fence[0]) == "":
                fence = None
                closed = True
        else:
            buffer.append(line)
    flush()
    if fence is not None:
        out.append(fence)  # close a fence the source left open, or the rest of the page becomes code
    return "\n".join(out)
