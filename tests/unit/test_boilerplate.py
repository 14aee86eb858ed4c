"""Descriptions skip what describes nothing: pragmas, shebangs, encoding lines, license headers."""

from __future__ import annotations

import pytest

from generator.analyze.boilerplate import is_boilerplate, lead_sentences, strip_boilerplate, strip_title
from generator.analyze.documents import read_document
from generator.analyze.facts import SourceFile
from generator.analyze.parse import extract
from generator.pages.writer import ExtractiveWriter, FileContext


@pytest.mark.parametrize("text", [
    "mypy: allow-untyped-defs", "type: ignore", "pylint: disable=invalid-name", "noqa: E501", "flake8: noqa",
    "eslint-disable no-console", "eslint-disable-next-line", "@ts-nocheck", "-*- coding: utf-8 -*-",
    "#!/usr/bin/env python3", "coding: utf-8", "SPDX-License-Identifier: MIT", "go:build linux",
    "frozen_string_literal: true", "pragma: no cover", "isort: skip_file", "prettier-ignore",
    "Copyright 2010 Pallets\nLicensed under the BSD-3-Clause license.",
    "Copyright (c) Meta Platforms, Inc. and affiliates.",
    "Licensed under the Apache License, Version 2.0 (the \"License\");\nyou may not use this file except",
    "Permission is hereby granted, free of charge, to any person obtaining a copy",
])
def test_boilerplate_is_recognised(text: str) -> None:
    assert is_boilerplate(text)
    assert strip_boilerplate(text + "\n\nThe real description.") == "The real description."


@pytest.mark.parametrize("text", [
    "Type checking helpers.", "Copyright headers are added by this tool.", "Global state for the app.",
    "Lint rules for the project.", "The coding style guide.", "License file parsing.",
])
def test_real_descriptions_are_kept(text: str) -> None:
    assert not is_boilerplate(text)
    assert strip_boilerplate(text) == text


def test_pragma_lines_above_a_description_go() -> None:
    assert strip_boilerplate("mypy: strict\nReal text here.\n\nMore.") == "Real text here.\n\nMore."


def _page_summary(path: str, source: str) -> str:
    facts = extract(SourceFile(path, "python" if path.endswith(".py") else "javascript", len(source), "x"),
                    source.encode())
    ctx = FileContext(facts=facts, page_id=f"files/{path}.md", module="")
    return ExtractiveWriter().file_page(ctx).summary


def test_file_descriptions_skip_pragmas_and_license_headers() -> None:
    pyfile = "# mypy: allow-untyped-defs\nfrom __future__ import annotations\n\n\ndef f():\n    pass\n"
    assert "mypy" not in _page_summary("a.py", pyfile)
    licensed = ("#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n# Copyright 2024 ACME\n"
                "# SPDX-License-Identifier: MIT\n\n# Tools that frob widgets.\nimport os\n")
    assert _page_summary("b.py", licensed).startswith("Tools that frob widgets.")
    doc = '"""Copyright 2020 X. All rights reserved.\n\nParses :class:`Widget` things."""\n'
    assert _page_summary("c.py", doc).startswith("Parses `Widget` things.")
    js = "/* eslint-disable no-console */\n// Widget rendering helpers.\n\nexport function w() {}\n"
    assert _page_summary("d.js", js).startswith("Widget rendering helpers.")


def test_docs_first_paragraph_skips_license() -> None:
    doc = read_document("Title\n=====\n\nCopyright 2020 ACME. All rights reserved.\n\nThe real intro.\n",
                        "rst")
    assert doc.first_paragraph == "The real intro."


@pytest.mark.parametrize(("text", "lead"), [
    ("requests.structures\n~~~~~~~~~~~~~~~~~~~\n\nData structures that power Requests.", "Data structures"),
    ("requests._internal_utils\n~~~~~~~~~~~~~~\n\nProvides utility functions.", "Provides utility"),
    ("=====\nTitle\n=====\nBody text here.", "Body text"),
    ("# Crate\n\nDoes things.", "Does things"),
    ("Title\n-----\n\nSubtitle\n^^^^^^^^\n\nThe text.", "The text"),
    (".-. .-. .-.\n|(  |- |.|\n' ' `-'\n\nA banner, then prose.", "A banner"),
])
def test_a_leading_title_or_banner_is_not_the_description(text: str, lead: str) -> None:
    from generator.markup.docstrings import docstring_summary
    from generator.pages.writer import first_paragraph

    assert strip_title(text).startswith(lead)
    assert first_paragraph(text).startswith(lead)
    assert docstring_summary(text).startswith(lead)


def test_title_only_text_and_plain_text_keep_their_words() -> None:
    assert strip_title("Only a title\n============") == "Only a title"
    assert strip_title("Plain text.\nMore.") == "Plain text.\nMore."
    assert strip_title("a | b\n--|--\nx | y") == "a | b\n--|--\nx | y"  # a table's rule is not a title
    assert strip_title("-----\n") == ""
    assert lead_sentences("An HTTP library, for humans. Basic GET usage:") == "An HTTP library, for humans."
    assert lead_sentences("Use it like this:") == "Use it like this:"
