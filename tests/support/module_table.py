"""The module table of docs/architecture.md, generated from the module docstrings so that it cannot drift.

For each package of sourcebook/, generator/ and answer/: a heading, the first paragraph of the package's
docstring, and a table of its modules, each with the first sentence of its own docstring. The table sits
between two marker comments in docs/architecture.md; everything else in that file is written by hand.

    python -m tests.support.module_table           # exit 1 when the committed table is not the generated one
    python -m tests.support.module_table --write   # rewrite it (what `make docs` runs)

tests/unit/test_module_table.py fails when the committed table differs from the generated one.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "architecture.md"
PACKAGES = ("sourcebook", "generator", "answer")
BEGIN = ("<!-- module table: generated from the module docstrings by `make docs`"
         " (tests/support/module_table.py); edit the docstrings, not the table -->")
END = "<!-- end of the module table -->"
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z`(\"'])")


def first_paragraph(docstring: str) -> str:
    return " ".join(docstring.strip().split("\n\n")[0].split())


def first_sentence(docstring: str) -> str:
    return _SENTENCE_END.split(first_paragraph(docstring), maxsplit=1)[0]


def _docstring(path: Path) -> str:
    return ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def packages(root: Path = ROOT) -> list[Path]:
    """Every package folder (one holding __init__.py): the core, the generator, the answer side; parents
    before children."""
    found = [init.parent for top in PACKAGES for init in (root / top).rglob("__init__.py")]
    return sorted(found, key=lambda folder: (PACKAGES.index(folder.relative_to(root).parts[0]),
                                             folder.relative_to(root).parts))


def table(root: Path = ROOT) -> str:
    """The generated Markdown, markers included."""
    out = [BEGIN]
    for package in packages(root):
        where = package.relative_to(root).as_posix()
        out += ["", f"### `{where}/`", "", first_paragraph(_docstring(package / "__init__.py"))]
        modules = sorted(p for p in package.glob("*.py") if p.name != "__init__.py")
        if modules:
            out += ["", "| module | what |", "|---|---|"]
        for module in modules:
            summary = first_sentence(_docstring(module)) or "(no docstring)"
            out.append(f"| `{where}/{module.name}` | {_cell(summary)} |")
    return "\n".join([*out, "", END])


def committed(text: str) -> str:
    """The table between the markers of `text` (architecture.md), markers included."""
    start, end = text.index(BEGIN), text.index(END) + len(END)
    return text[start:end]


def write(root: Path = ROOT) -> bool:
    """Rewrite the table in docs/architecture.md; True when it changed."""
    doc = root / "docs" / "architecture.md"
    text = doc.read_text(encoding="utf-8")
    new = text.replace(committed(text), table(root))
    if new != text:
        doc.write_text(new, encoding="utf-8")
    return new != text


def main(argv: list[str]) -> int:
    if "--write" in argv:
        changed = write()
        print("docs/architecture.md: module table " + ("rewritten" if changed else "unchanged"))
        return 0
    if committed(DOC.read_text(encoding="utf-8")) != table():
        print("docs/architecture.md: the module table is stale; run `make docs`", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
