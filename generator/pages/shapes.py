"""A type's shape on its file page: its fields and its variants, each with its declaration and the first
sentence of its doc comment, in one compact table under the type's section.

The language's own documentation shows these first (godoc prints a struct's fields, rustdoc an enum's
variants, Javadoc a record's components and an enum's constants); in a source view alone a reader has to
find them. Members are no symbols (parse.py keeps them apart), so they never become call targets.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from generator.analyze.facts import Member
from generator.markup.docstrings import docstring_summary
from generator.markup.safe_markdown import inline_text

_HEADERS = {"field": "Field", "variant": "Variant"}
MAX_ROWS = 200  # a generated enum of thousands of values is cut, with a count of what was left out


def members_by_type(members: Iterable[Member]) -> dict[str, list[Member]]:
    """qualname of a type -> its members in source order."""
    out: dict[str, list[Member]] = {}
    for m in members:
        out.setdefault(m.parent, []).append(m)
    return out


def shape_table(members: Sequence[Member]) -> str:
    """The members of one type as an HTML table (raw HTML survives Markdown and mkdocs as is). Every
    repository string is escaped."""
    if not members:
        return ""
    kinds = {m.kind for m in members}
    head = " / ".join(_HEADERS[k] for k in ("field", "variant") if k in kinds)
    rows = []
    for m in members[:MAX_ROWS]:
        summary = inline_text(" ".join(docstring_summary(m.docstring, 160).split())) if m.docstring else ""
        shown = m.declaration if m.declaration != m.name else ""
        declaration = f"<code>{inline_text(shown)}</code>" if shown else ""
        rows.append(f"<tr><td><code>{inline_text(m.name)}</code></td><td>{declaration}</td>"
                    f"<td>{summary}</td></tr>")
    more = len(members) - MAX_ROWS
    if more > 0:
        rows.append(f'<tr><td colspan="3">and {more} more</td></tr>')
    return (f'<div class="sb-shape"><table class="sb-shape-table"><thead><tr><th>{head}</th>'
            f"<th>Declaration</th><th>Description</th></tr></thead><tbody>{''.join(rows)}</tbody></table></div>")
