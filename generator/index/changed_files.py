"""The changed files of a run, read (and parsed when the caller had no facts) one file at a time for each
table's pass over them.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from generator.analyze.facts import FileFacts, SourceFile
from generator.index.report import IndexReport
from sourcebook.errors import SourcebookError

if TYPE_CHECKING:
    from sourcebook.config import Config


def _facts_and_text(config: Config, f: SourceFile, fx: FileFacts | None, text: str | None
                    ) -> tuple[FileFacts, str]:
    """The facts and text of a changed file, reading and parsing it here when the caller had none."""
    if fx is not None and text is not None:
        return fx, text
    from generator.analyze.scan import decode, read_source

    source = read_source(config.root, f.path)
    if fx is None:
        from generator.analyze.parse import extract

        fx = extract(f, source)
    return fx, decode(source) if text is None else text


class ChangedSources:
    """The changed files' facts and text, one file at a time, for each table's pass over them.

    A text the caller did not supply is read again by each pass that needs it (holding every file's text
    for the later passes is what streaming avoids); facts parsed here are kept (they are small). A file
    unreadable in the first pass is left out of every later one, as if it had failed once for all tables:
    its old rows are gone and, without a `files` row, the next run indexes it again."""

    def __init__(self, config: Config, files: list[SourceFile], facts: dict[str, FileFacts],
                 texts: dict[str, str], report: IndexReport) -> None:
        self.config, self.files, self.facts, self.texts, self.report = config, files, facts, texts, report
        self._parsed: dict[str, FileFacts] = {}
        self._unreadable: set[str] = set()

    def _facts(self, f: SourceFile) -> FileFacts | None:
        return self.facts.get(f.path) or self._parsed.get(f.path)

    def _read(self, f: SourceFile) -> tuple[FileFacts, str] | None:
        if f.path in self._unreadable:
            return None
        try:
            fx, text = _facts_and_text(self.config, f, self._facts(f), self.texts.get(f.path))
        except (OSError, SourcebookError) as exc:
            self._unreadable.add(f.path)
            self.report.warnings.append(f"{f.path}: cannot read ({exc})")
            return None
        if f.path not in self.facts:
            self._parsed[f.path] = fx
        return fx, text

    def __iter__(self) -> Iterator[tuple[FileFacts, str]]:
        for f in self.files:
            got = self._read(f)
            if got is not None:
                yield got

    def items(self, size: int) -> Iterator[list[tuple[str, FileFacts | None, str | None]]]:
        """The readable files in groups of `size` for forked workers: (path, facts, text), with None for the
        facts and text a worker finds in the dicts it inherited (only what was read or parsed here since is
        sent to it)."""
        group: list[tuple[str, FileFacts | None, str | None]] = []
        for fx, text in self:
            path = fx.file.path
            group.append((path, None if self.facts.get(path) is fx else fx,
                          None if self.texts.get(path) is text else text))
            if len(group) == size:
                yield group
                group = []
        if group:
            yield group

    def facts_only(self) -> Iterator[FileFacts]:
        """The facts of each readable file, without reading its text when the facts are at hand."""
        for f in self.files:
            fx = self._facts(f)
            if f.path in self._unreadable:
                continue
            if fx is None:
                got = self._read(f)
                if got is None:
                    continue
                fx = got[0]
            yield fx
