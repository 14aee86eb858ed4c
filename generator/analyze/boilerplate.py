"""Text at the top of files that describes nothing: tool pragmas, shebangs, encoding lines, license headers.

A description taken from the first paragraph of a comment or docstring must skip these, or 120 pages of a
repository get described as "mypy: allow-untyped-defs". Pure functions on text (comment markers removed).
"""

from __future__ import annotations

import re

# one line that only instructs a tool (type checkers, linters, formatters, coverage, build constraints)
_PRAGMA = re.compile(
    r"^(?:"
    r"#!.*"  # shebang
    r"|.*-\*-.*-\*-.*"  # emacs: -*- coding: utf-8 -*-
    r"|vim?:.*\b(?:set|ts|sw|sts|et|ft|tw|fenc)\b.*"  # modelines
    r"|(?:en)?coding[:=]\s*[\w.-]+"
    r"|(?:mypy|pyright|pylint|flake8|ruff|isort|pyre(?:-[\w-]+)?|pytype|pragma|nosec|cython|"
    r"yapf|autopep8|pycodestyle|bandit|codespell|cspell|spell-checker|rubocop|typeprof|steep|sorbet|"
    r"frozen_string_literal|typed|warn_indent|shareable_constant_value|nolint)\s*:.*"
    r"|type:\s*ignore\b.*"
    r"|noqa\b.*|nolint\b.*|NOLINT\w*\b.*|fmt:\s*(?:on|off|skip)"
    r"|(?:eslint|jshint|jslint|jscs|tslint|stylelint)(?:-[\w-]+)?\b.*"
    r"|(?:prettier|biome|deno-lint|deno-fmt)-ignore\b.*|(?:istanbul|c8|v8)\s+ignore\b.*"
    r"|@ts-(?:nocheck|check|ignore|expect-error)\b.*|@(?:flow|noflow|format|jsx|jsxImportSource|"
    r"jsxRuntime|generated|noformat|license|preserve)\b.*"
    r"|go:(?:build|generate|embed|linkname|noinline|nosplit)\b.*|\+build\b.*"
    r"|clang-format\s+(?:on|off)|IWYU\s+pragma\b.*|cppcheck-suppress\b.*|NOSONAR\b.*"
    r"|SPDX-[\w-]+\s*:.*"
    r"|#\s*(?:pragma|region|endregion)\b.*|<\?php"
    r")\s*$",
    re.IGNORECASE,
)
# a paragraph that is a license or copyright header
_LICENSE = re.compile(
    r"\bcopyright\s*(?:\(c\)|©|:|by\b|holders?\b|notice\b|the\b|[\w ,.-]{0,60}\b\d{4})|©|\(c\)\s*\d{4}|"
    r"\blicen[cs]ed\s+(?:under|to)\b|\ball rights reserved\b|"
    r"\bpermission is hereby granted\b|\bspdx-|\byou may not use this file\b|\bwithout (?:any )?warranty\b|"
    r"\bunder the terms of the\b.*\blicen[cs]e\b|\bthis (?:program|library|file) is free software\b",
    re.IGNORECASE,
)


def is_pragma(line: str) -> bool:
    return bool(_PRAGMA.match(line.strip()))


def is_boilerplate(paragraph: str) -> bool:
    """True for a paragraph that is only pragmas, or a license/copyright header."""
    lines = [ln for ln in paragraph.splitlines() if ln.strip()]
    return not lines or all(is_pragma(ln) for ln in lines) or bool(_LICENSE.search(paragraph))


def strip_boilerplate(text: str) -> str:
    """`text` minus its leading pragmas, shebang, encoding lines and license paragraphs; pragma lines at the
    start of the first real paragraph go too ("# mypy: strict" right above the description)."""
    if not text:
        return text
    paragraphs = re.split(r"\n[ \t]*\n", text.strip("\n"))
    for i, para in enumerate(paragraphs):
        lines = para.split("\n")
        k = 0
        while k < len(lines) and (not lines[k].strip() or is_pragma(lines[k])):
            k += 1
        rest = "\n".join(lines[k:])
        if not rest.strip() or _LICENSE.search(rest):
            continue
        return "\n\n".join([rest, *paragraphs[i + 1:]]).strip("\n")
    return ""


# a reST section adornment (any punctuation repeated, over- or underlining a title) or a Markdown setext rule
_ADORNMENT = re.compile(r"""^\s*([!"#$%&'()*+,\-./:;<=>?@\[\\\]^_`{|}~])\1{2,}\s*$""")
_ATX_TITLE = re.compile(r"^\s{0,3}#{1,6}\s+(\S.*?)\s*#*\s*$")
_WORD = re.compile(r"[^\W_]")  # a paragraph without a letter or digit is art (a banner), not prose


def strip_title(text: str) -> str:
    """`text` from its first real paragraph: a leading title (reST text under- or over-and-underlined,
    Markdown setext or `# Title`) and leading paragraphs holding no letter or digit (ASCII-art banners)
    are skipped, so "requests.structures / ~~~~ / Data structures that power Requests." describes itself
    by its third line. A text that is only a title gives the title's words."""
    lines = text.strip("\n").split("\n")
    title = ""
    i = 0
    while True:
        while i < len(lines) and not lines[i].strip():
            i += 1
        if i >= len(lines):
            break
        line, nxt = lines[i], lines[i + 1] if i + 1 < len(lines) else ""
        after = lines[i + 2] if i + 2 < len(lines) else ""
        if _ADORNMENT.match(line) and _WORD.search(nxt) and _ADORNMENT.match(after):
            title, i = title or nxt.strip(), i + 3
        elif _WORD.search(line) and not _ADORNMENT.match(line) and _ADORNMENT.match(nxt):
            title, i = title or line.strip(), i + 2
        elif (m := _ATX_TITLE.match(line)) and _WORD.search(m.group(1)):
            title, i = title or m.group(1), i + 1
        elif not _WORD.search(line):
            # a banner: skip the whole paragraph of lines without letters
            j = i
            while j < len(lines) and lines[j].strip() and not _WORD.search(lines[j]):
                j += 1
            if j < len(lines) and lines[j].strip():
                break  # a letterless line glued to prose (a table rule) is content
            i = j
        else:
            break
    rest = "\n".join(lines[i:]).strip("\n")
    return rest if rest.strip() else title


def lead_sentences(paragraph: str) -> str:
    """A description paragraph without its trailing lead-in to an example ("… for human beings. Basic GET
    usage:"): when it ends with a colon after a full sentence, it ends at that sentence."""
    para = paragraph.rstrip()
    if para.endswith(":"):
        ends = [m.end() for m in re.finditer(r"[.!?](?=\s)", para)]
        if ends:
            return para[: ends[-1]]
    return paragraph
