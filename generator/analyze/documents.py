"""Documentation files (Markdown, reStructuredText, plain text) read as title, headings and first paragraph.

The overview page opens with the README, and file pages of docs need their outline; nothing here renders:
text is returned as written and escaping is the renderer's job.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from generator.analyze.boilerplate import is_boilerplate
from generator.analyze.facts import Heading

_ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
_SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
_RST_ADORNMENT = re.compile(r"^([=\-~^\"'`#*+:.<>_!$%&,;?@|\\/])\1{2,}\s*$")
_HTML_HEADING = re.compile(r"<h([1-6])[^>]*>(.*?)</h\1>", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(r"<[^>]+>")
# a list item's first line (CommonMark: a bullet, or `1.`, opens a list even right after a paragraph line)
_LIST_ITEM = re.compile(r"^ {0,3}(?:[-*+]|\d{1,9}[.)])[ \t]+\S")


@dataclass
class Document:
    title: str = ""
    headings: list[Heading] = field(default_factory=list)
    first_paragraph: str = ""


def read_document(text: str, language: str) -> Document:
    if language == "markdown":
        return _markdown(text)
    if language == "rst":
        return _rst(text)
    return _plain(text)


def _is_prose(paragraph: list[str]) -> bool:
    """A paragraph a reader would call the introduction: not markup, badges, tables or directives."""
    first = paragraph[0].lstrip()
    if _LIST_ITEM.match(paragraph[0]):
        return False  # a list is not an introduction: joined onto one line its marks would show as text
    if first.startswith(("<", "![", "[![", "|", "..", ":", "```", "~~~", "---", "===", "{")):
        return False
    if is_boilerplate("\n".join(paragraph)):  # a license header or a pragma describes nothing
        return False
    return any(ch.isalpha() for ch in " ".join(paragraph))


def _markdown(text: str) -> Document:
    doc = Document()
    lines = text.split("\n")
    i = 0
    if lines and lines[0].strip() == "---":  # YAML front matter
        end = next((j for j in range(1, len(lines)) if lines[j].strip() in ("---", "...")), None)
        if end is not None:
            i = end + 1
    fence: str | None = None
    paragraph: list[str] = []
    para_done = False

    def flush() -> None:
        nonlocal paragraph, para_done
        if paragraph and not para_done and _is_prose(paragraph):
            doc.first_paragraph = " ".join(s.strip() for s in paragraph)
            para_done = True
        paragraph = []

    while i < len(lines):
        line = lines[i]
        if fence is not None:
            if line.lstrip().startswith(fence):
                fence = None
            i += 1
            continue
        if line.lstrip().startswith("<!--"):  # an HTML comment is not content, however long
            flush()
            while i < len(lines) and "-->" not in lines[i]:
                i += 1
            i += 1
            continue
        m = _FENCE.match(line)
        if m:
            flush()
            fence = m.group(1)[:3]
            i += 1
            continue
        atx = _ATX.match(line)
        if atx:
            flush()
            _add_heading(doc, len(atx.group(1)), atx.group(2) or "", i + 1)
            i += 1
            continue
        html = _HTML_HEADING.search(line)
        if html and line.lstrip().startswith("<"):
            flush()
            _add_heading(doc, int(html.group(1)), _TAG.sub("", html.group(2)), i + 1)
            i += 1
            continue
        setext = _SETEXT.match(line) if paragraph and len(paragraph) == 1 else None
        if setext:
            heading = paragraph[0].strip()
            paragraph = []
            _add_heading(doc, 1 if setext.group(1)[0] == "=" else 2, heading, i)
            i += 1
            continue
        if line.strip():
            if _LIST_ITEM.match(line) and paragraph and not _LIST_ITEM.match(paragraph[0]):
                flush()  # the paragraph ends where a list starts ("Learn more:" / "* Docs: ...")
            paragraph.append(line)
        else:
            flush()
        i += 1
    flush()
    return doc


def _add_heading(doc: Document, level: int, text: str, line: int) -> None:
    text = text.strip()
    if not text:
        return
    # the title is the first top-level heading; a document without one is titled by its first heading
    if not doc.title or (level == 1 and all(h.level != 1 for h in doc.headings)):
        doc.title = text
    doc.headings.append(Heading(level=level, text=text, line=line))


def _rst(text: str) -> Document:
    doc = Document()
    lines = text.split("\n")
    styles: list[tuple[str, bool]] = []  # (adornment char, has overline) in order of first use
    paragraph: list[str] = []
    para_done = False
    in_directive = False
    i = 0
    while i < len(lines):
        line = lines[i]
        stripped = line.strip()
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        # overline + title + underline
        if _RST_ADORNMENT.match(line) and i + 2 < len(lines) and lines[i + 1].strip() \
                and _RST_ADORNMENT.match(lines[i + 2]) and lines[i + 2].strip()[0] == stripped[0]:
            _rst_heading(doc, styles, (stripped[0], True), lines[i + 1].strip(), i + 2)
            paragraph, i = [], i + 3
            continue
        if stripped and not line[0].isspace() and _RST_ADORNMENT.match(nxt) \
                and len(nxt.strip()) >= len(stripped) and not _RST_ADORNMENT.match(line):
            _rst_heading(doc, styles, (nxt.strip()[0], False), stripped, i + 1)
            paragraph, i = [], i + 2
            continue
        if stripped.startswith(".."):
            in_directive = True
        elif stripped and not line[0].isspace():
            in_directive = False
        if not stripped:
            if paragraph and not para_done and _is_prose(paragraph):
                doc.first_paragraph = " ".join(s.strip() for s in paragraph)
                para_done = True
            paragraph = []
        elif not in_directive:
            paragraph.append(line)
        i += 1
    if paragraph and not para_done and _is_prose(paragraph):
        doc.first_paragraph = " ".join(s.strip() for s in paragraph)
    return doc


def _rst_heading(doc: Document, styles: list[tuple[str, bool]], style: tuple[str, bool],
                 text: str, line: int) -> None:
    if style not in styles:
        styles.append(style)
    level = min(styles.index(style) + 1, 6)
    doc.headings.append(Heading(level=level, text=text, line=line))
    if not doc.title:
        doc.title = text


def _plain(text: str) -> Document:
    doc = Document()
    paragraphs = [p.strip() for p in re.split(r"\n\s*\n", text) if p.strip()]
    if paragraphs:
        first_line = paragraphs[0].split("\n", 1)[0].strip()
        doc.title = first_line[:120]
        doc.first_paragraph = " ".join(line.strip() for line in paragraphs[0].split("\n"))
    return doc
