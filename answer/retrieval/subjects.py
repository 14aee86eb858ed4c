"""Test subjects: the source file a test file tests, by the naming conventions of each ecosystem.

A test names what it tests: `test_foo` / `foo_test` (Python), `foo_test.go`, `foo.test.ts` /
`foo.spec.js`, `FooTest.java` / `FooTests.cs` / `FooSpec.scala` / `FooSuite.scala`, `spec/foo_spec.rb`,
`FooTest.php`, `tests/foo.rs` (a Rust integration test, or any file of a test folder). The name is matched
case-insensitively and without separators (`AtFileTest.kt` tests `atfile.kt`), and among several source
files of that name the closest to the test's folder wins (`src/test/java/a/b/FooTest.java` tests
`src/main/java/a/b/Foo.java`, not `samples/Foo.java`).

Retrieval lifts a ranked test's subject (answer/retrieval/tiers.py): a change's words match its test, which
spells them out as cases and assertions, often better than the code the change was in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

# folders that hold tests: dropped from a test's folder before comparing it with source folders
TEST_DIRS = frozenset({"test", "tests", "testing", "spec", "specs", "__tests__", "t", "unit", "unittest",
                       "unittests", "integration", "e2e", "functional"})
# a dotted infix marking a test: `store.test.tsx`, `app.spec.js`, `foo.unit.test.ts`
_INFIXES = frozenset({"test", "tests", "spec", "specs", "unit", "e2e", "integration", "int"})
# affixes joined by a separator (`test_foo`, `foo_test`, `foo-spec`, `foo_unittest`), lower-cased
_SEP_PREFIXES = ("tests_", "test_", "test-", "spec_")
_SEP_SUFFIXES = ("_unittest", "_tests", "_test", "-test", "-tests", "_spec", "-spec")
# CamelCase affixes (`FooTest`, `FooTests`, `FooSpec`, `FooSuite`, `FooIT`, `FooTestCase`, `TestFoo`)
_CAMEL_SUFFIX = re.compile(r"(?<=[a-z0-9])(?:TestCase|Tests|Test|Specs|Spec|Suite|IT)$")
_CAMEL_PREFIX = re.compile(r"^Test(?=[A-Z])")
_NOT_KEY = re.compile(r"[^a-z0-9]")
MAX_SUBJECTS = 2  # equally close source files that share a test's evidence


def name_key(name: str) -> str:
    """A file or folder name compared loosely: lower-cased, without separators (`At_File` -> `atfile`)."""
    return _NOT_KEY.sub("", name.lower())


def _stem(name: str) -> str:
    """The file name without its extension; for a dotted test infix, what comes before it
    (`store.test.tsx` -> `store`, `foo.unit.test.ts` -> `foo`)."""
    parts = name.split(".")
    if len(parts) <= 1:
        return name
    for i, part in enumerate(parts[1:-1], start=1):
        if part.lower() in _INFIXES:
            return ".".join(parts[:i])
    return ".".join(parts[:-1])


def subject_stem(path: str) -> str:
    """The name a test file at `path` gives its subject, as written (`tests/test_app` -> `app`,
    `FooTests.cs` -> `Foo`, `tests/walk.rs` -> `walk`): the file's stem without the test affixes of its
    ecosystem. "" when nothing is left (`tests/test`)."""
    name = path.rsplit("/", 1)[-1]
    stem = _stem(name)
    lower = stem.lower()
    for prefix in _SEP_PREFIXES:
        if lower.startswith(prefix) and len(stem) > len(prefix):
            return stem[len(prefix):]
    for suffix in _SEP_SUFFIXES:
        if lower.endswith(suffix) and len(stem) > len(suffix):
            return stem[:-len(suffix)]
    stripped = _CAMEL_SUFFIX.sub("", stem)
    if stripped != stem:
        return stripped
    stripped = _CAMEL_PREFIX.sub("", stem)
    if stripped != stem:
        return stripped
    return "" if lower in _INFIXES else stem


def _folders(path: str) -> list[str]:
    """A path's folder names, compared loosely, without test folders and test affixes
    (`tests/CommandLine.Tests/Core/x.cs` -> ['commandline', 'core'])."""
    out = []
    for part in path.split("/")[:-1]:
        if part.lower() in TEST_DIRS:
            continue
        key = name_key(subject_stem(part + ".x") or part)
        if key:
            out.append(key)
    return out


def _closeness(test_dirs: list[str], path: str) -> tuple[int, int, int]:
    """How close a source file lies to a test's folders: the length of their common tail (the package
    path: `a/b` of `src/main/java/a/b` and `src/test/java/a/b`), the folders they share, and fewer
    folders first."""
    dirs = _folders(path)
    tail = 0
    while tail < min(len(dirs), len(test_dirs)) and dirs[-1 - tail] == test_dirs[-1 - tail]:
        tail += 1
    return tail, len(set(dirs) & set(test_dirs)), -len(dirs)


@dataclass(frozen=True)
class SubjectIndex:
    """Source files by loose name (`name_key` of their stem), to find what a test file tests."""

    by_key: Mapping[str, tuple[str, ...]]

    @classmethod
    def build(cls, paths: Iterable[str]) -> SubjectIndex:
        """Over `paths`, the repository's source files (not tests, documentation or configuration)."""
        by_key: dict[str, list[str]] = {}
        for path in paths:
            key = name_key(_stem(path.rsplit("/", 1)[-1]))
            if key:
                by_key.setdefault(key, []).append(path)
        return cls({k: tuple(sorted(v)) for k, v in by_key.items()})

    def subjects(self, test_path: str) -> list[str]:
        """The source files the test at `test_path` tests by its name: the closest of those named like
        its subject (up to MAX_SUBJECTS equally close ones), or [] when no source file has that name."""
        found: tuple[str, ...] = ()
        stem = subject_stem(test_path)
        # `command.action` (commander's tests/command.action.test.js) names `command` and one aspect of it
        while stem and not found:
            found = self.by_key.get(name_key(stem), ())
            stem = stem.rsplit(".", 1)[0] if "." in stem else ""
        if len(found) <= 1:
            return list(found)
        test_dirs = _folders(test_path)
        scored = sorted(((_closeness(test_dirs, p), p) for p in found), key=lambda t: (-t[0][0], -t[0][1],
                                                                                       -t[0][2], t[1]))
        best = scored[0][0]
        return [p for score, p in scored if score == best][:MAX_SUBJECTS]


__all__ = ["MAX_SUBJECTS", "TEST_DIRS", "SubjectIndex", "name_key", "subject_stem"]
