"""Parse a snippet of source text the way the build parses a file, for tests of the parser's rules."""

from __future__ import annotations

from generator.analyze.facts import FileFacts, SourceFile
from generator.analyze.parse import extract


def parse(path: str, text: str, language: str) -> FileFacts:
    data = text.encode()
    return extract(SourceFile(path=path, language=language, size=len(data), sha=""), data)
