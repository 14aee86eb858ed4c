"""Descriptions skip what describes nothing: pragmas, shebangs, encoding lines, license headers."""

from __future__ import annotations

import pytest

from generator.boilerplate import is_boilerplate, strip_boilerplate
from generator.docs import read_document
from generator.facts import SourceFile
from generator.parse import extract
from generator.write import ExtractiveWriter, FileContext


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
