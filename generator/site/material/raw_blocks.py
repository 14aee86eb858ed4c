"""Markdown extension: the HTML blocks sourcebook renders itself, handed to Markdown's stash whole.

A file page is mostly HTML that sourcebook wrote (highlighted signatures and source, the symbol index, a
rendered reST document). Python-Markdown finds raw HTML blocks by running html.parser over the whole page,
tag by tag, only to store each block unchanged: on flask's pages that scan was a third of Markdown's time.
This preprocessor stores the blocks of the exact shapes the templates write, recognised whole at column 0
between blank lines, the way Markdown's own block parser would have stored them, so its parser only reads
the rest. The HTML that comes out is the same (tests/integration/test_raw_blocks.py compares whole sites): a
raw block is passed through verbatim either way, and then through the sanitizer
(mkdocs_hooks.on_page_content).

No repository text can take one of these shapes: every string the templates take from a repository is
escaped (`<` as `&lt;`), and Markdown from a repository or a writer has its raw HTML stripped
(generator/markup/safe_markdown.py), so a line that starts with `<` is the templates' own.

The same extension spares Markdown's inline pass the text it cannot change: a text with none of the
characters any of its inline patterns starts with (no backtick, bracket, `<`, `&`, emphasis delimiter,
backslash or line break) is marked atomic, which that pass skips. About half the texts of flask's pages
(names, kinds, plain sentences and table cells), a tenth of Markdown's time.

And it spares pymdownx.superfences' preprocessor the pages without a fence: that preprocessor walks every
line of a page in Python looking for one (a seventh of Markdown's time on the 12k-file bench tree, whose
pages are mostly source lines), and returns the very lines it was given when none opens. A page none of
whose lines holds ``` or ~~~ (every fence opens with one) is handed on without the walk.
"""

from __future__ import annotations

import re
from typing import Any

from markdown import Extension
from markdown.preprocessors import Preprocessor
from markdown.treeprocessors import InlineProcessor, Treeprocessor
from markdown.util import AtomicString

# Each shape ends at its own first closing mark: code in them is escaped, so the mark cannot occur inside.
_BLOCK = re.compile(
    r"(?:(?<=\n\n)|\A)(?:"
    # a signature (render.signature_block): one line
    r'<div class="language-[\w+-]+ highlight(?: sb-signature)?"><pre><span></span><code>[^\n]*?</code>'
    r"</pre></div>"
    # a symbol's source (source_view.source_block): its code lines, to the first </details>
    r'|<details class="note sb-source" data-search-exclude>[^<]*(?:<(?!/details>)[^<]*)*</details>'
    # a source block left out (source_view.source_left_out): one line
    r'|<p class="sb-more" data-search-exclude>[^\n]*</p>'
    # a section's calls, callers or tests (render._ref_html): one line
    r'|<p class="sb-refs" data-search-exclude><strong>[^\n]*</p>'
    # the symbol index (render._index_rows): one line
    r'|<div class="sb-index" data-search-exclude>[^\n]*</div>'
    # a rendered document (templates/file.md.j2): to the comment that closes it (its sanitized HTML has none)
    r'|<section class="sb-document[\w -]*" data-search-exclude>\n(?:[^\n]*\n)*?<!-- /sb-document -->'
    r"</section>"
    r")(?=\n\n)")


def _guard_fences(md: Any) -> None:
    """superfences' fenced-block preprocessor walks a page's lines only when the page holds a fence's opening
    characters; everything else its run does (the highlighter settings its indented-code processor reads)
    is done as before. Only for the preprocessor this guard knows (not its preserve_tabs variant, which
    rewrites lines before it looks for fences)."""
    try:
        from pymdownx.superfences import SuperFencesBlockPreprocessor
    except ImportError:
        return
    name = "fenced_code_block"
    if name not in md.preprocessors or "fenced_raw_block" in md.preprocessors:
        return
    fenced = md.preprocessors[name]
    if type(fenced) is not SuperFencesBlockPreprocessor or getattr(fenced.search_nested, "guarded", False):
        return
    walk = fenced.search_nested

    def search_nested(lines: list[str]) -> list[str]:
        text = "\n".join(lines)
        if "```" not in text and "~~~" not in text:
            return lines  # what the walk returns when no fence opens: the same list
        return walk(lines)

    search_nested.guarded = True  # type: ignore[attr-defined]
    fenced.search_nested = search_nested


class RawBlockPreprocessor(Preprocessor):
    def run(self, lines: list[str]) -> list[str]:
        text = "\n".join(lines)
        if "<" not in text:
            return lines
        stash = self.md.htmlStash

        def store(m: re.Match[str]) -> str:
            # Markdown's block parser stores a block followed by a blank line with a newline (htmlparser.py)
            return stash.store(m.group(0) + "\n")

        return _BLOCK.sub(store, text).split("\n")


# Python-Markdown's inline patterns (and pymdownx.inlinehilite's backtick) by name, with the characters a
# match of each must contain. Any other pattern registered: nothing is marked, every text is parsed.
_PATTERN_TRIGGERS = {
    "backtick": "`", "escape": "\\", "reference": "[", "link": "[", "image_link": "[", "image_reference": "[",
    "short_reference": "[", "short_image_ref": "[", "autolink": "<", "automail": "<", "linebreak": "\n",
    "html": "<", "entity": "&", "em_strong": "*_", "em_strong2": "_", "not_strong": "*_", "strong": "*",
    "emphasis": "*", "strong_em": "*", "em_strong_": "_",
}


class PlainTextTreeprocessor(Treeprocessor):
    """Marks atomic (Markdown's own "leave this text alone") every text of the tree no inline pattern can
    match in: the inline pass then skips it, with the same result."""

    def run(self, root: Any) -> None:
        triggers = _triggers(self.md)
        if triggers is None:
            return
        for element in root.iter():
            text = element.text
            if text and type(text) is str and not triggers.search(text):
                element.text = AtomicString(text)
            tail = element.tail
            if tail and type(tail) is str and not triggers.search(tail):
                element.tail = AtomicString(tail)


class PatternListTreeprocessor(Treeprocessor):
    """Hands Markdown's inline pass its patterns as a list, in the registry's order, taken afresh before each
    conversion: the pass looks a pattern up by position for every text it tries (tens per text), and a
    Registry sorts itself and resolves the name on each such look-up."""

    def run(self, root: Any) -> None:
        if "inline" not in self.md.treeprocessors:  # a Registry: no get()
            return
        inline = self.md.treeprocessors["inline"]
        if isinstance(inline, InlineProcessor) and hasattr(inline, "inlinePatterns"):
            inline.inlinePatterns = list(self.md.inlinePatterns)


def _triggers(md: Any) -> re.Pattern[str] | None:
    known = [name for name in _PATTERN_TRIGGERS if name in md.inlinePatterns]
    if len(known) != len(md.inlinePatterns):
        return None
    chars = {c for name in known for c in _PATTERN_TRIGGERS[name]}
    delimiters = getattr(getattr(md, "delimiters", None), "delimiters", None)  # emphasis characters
    if isinstance(delimiters, dict):
        chars.update(str(d) for d in delimiters)
    elif delimiters is not None:
        return None
    return re.compile("[" + re.escape("".join(sorted(chars))) + "]")


class RawBlocksExtension(Extension):
    def extendMarkdown(self, md: Any) -> None:  # Python-Markdown's name
        # after whitespace normalisation (30: it strips any placeholder characters a page carries) and after
        # MkDocs' scan of raw HTML for anchor ids (21), before Markdown's own raw HTML blocks (20)
        md.preprocessors.register(RawBlockPreprocessor(md), "sourcebook_raw_blocks", 20.5)
        # just before the inline pass (20), after the block parser made the tree
        md.treeprocessors.register(PlainTextTreeprocessor(md), "sourcebook_plain_text", 20.5)
        md.treeprocessors.register(PatternListTreeprocessor(md), "sourcebook_pattern_list", 20.4)
        _guard_fences(md)


def makeExtension(**kwargs: Any) -> RawBlocksExtension:  # Python-Markdown's entry point
    return RawBlocksExtension(**kwargs)
