"""Which part of a repository a folder or file belongs to, by its name: the source code, the docs, the
tests, the examples, or the tooling (dot-folders, scripts, CI, root config files).

The navigation orders the site by these groups (generator/site/nav.py), the overview and the topics pick
the project's own code by them, and entry points are looked for in the source group.
"""

from __future__ import annotations

import posixpath
import re
from typing import Literal

Group = Literal["source", "docs", "tests", "examples", "tooling"]

_DOCS = frozenset({"docs", "doc", "documentation", "manual", "guide", "guides", "website", "site-docs"})
_TESTS = frozenset({"tests", "test", "testing", "spec", "specs", "__tests__", "t", "e2e", "integration"})
_EXAMPLES = frozenset({"examples", "example", "samples", "sample", "demo", "demos", "tutorial", "tutorials",
                       "cookbook", "benchmarks", "benchmark", "bench", "benches", "playground"})
_TOOLING = frozenset({"scripts", "script", "tools", "tool", "ci", "build", "dist", "config", "configs",
                      "etc", "hack", "contrib", "deploy", "deployment", "docker", "requirements", "vendor",
                      "third_party", "thirdparty", "extern", "external", "artwork", "assets", "changelog",
                      "changes", "news", "licenses"})
_DOC_EXT = (".md", ".rst", ".txt", ".adoc", ".markdown", "license", "copying", "authors", "notice")
_TOOLING_FILES = frozenset({"setup.py", "conftest.py", "noxfile.py", "tasks.py", "fabfile.py", "manage.py",
                            "dodo.py", "gulpfile.js", "gruntfile.js", "webpack.config.js", "rollup.config.js",
                            "vite.config.js", "vite.config.ts", "jest.config.js", "babel.config.js",
                            "eslint.config.js", "build.rs", "makefile", "dockerfile", "justfile"})

def dir_group(name: str) -> Group:
    """The group of a top-level folder, by its name."""
    low = name.lower()
    if low.startswith("_") and not low.startswith("__"):
        low = low[1:]  # `_examples/`, `_docs/`: kept out of Go's build (and Jekyll's) by the underscore
    if low.startswith(".") or low in _TOOLING:
        return "tooling"
    if low in _DOCS:
        return "docs"
    if low in _TESTS or low.startswith(("test_", "tests_")):
        return "tests"
    if low in _EXAMPLES:
        return "examples"
    return named_group(name) or "source"


# below the top level, only unmistakable names: `_pytest/config/` is code, `src/test/` is not
_NESTED_TESTS = frozenset({"tests", "test", "testing", "__tests__", "testfixtures", "testdata", "fuzz",
                           "fuzzing", "fuzzer", "fuzzers", "oss-fuzz", "integration-tests", "e2e"})
_NESTED_EXAMPLES = frozenset({"examples", "example", "samples", "sample", "benchmarks", "benchmark", "bench",
                              "benches", "jmh", "demo", "demos"})
_NESTED_DOCS = frozenset({"docs", "doc", "documentation"})
# another project's code carried along (spdlog's `include/spdlog/fmt/bundled/`): not this project's surface
_NESTED_VENDORED = frozenset({"bundled", "vendor", "vendored", "third_party", "thirdparty", "3rdparty",
                              "third-party", "external", "extern"})
# what a build names its test and benchmark projects or source sets: `Serilog.Tests`, `moshi-kotlin-tests`,
# Kotlin's `commonTest`/`jvmTest`, `Foo.Benchmarks`, `records-tests`
_TEST_SUFFIX = re.compile(r"(?:(?i:[.\-_](?:tests?|specs?|fuzz|fuzzing|fuzzers?))|(?<=[a-z])Tests?|"
                          r"(?<=[a-z])Fuzz)$")
_EXAMPLE_SUFFIX = re.compile(r"(?:(?i:[.\-_](?:benchmarks?|samples?|examples?|demos?|perf))|"
                             r"(?<=[a-z])(?:Benchmarks?|Samples?|Examples?|Demos?))$")


def named_group(name: str) -> Group | None:
    """The group a folder's own name puts it in at any depth (tests, examples, docs; vendored code is
    tooling), None when its name says nothing: a test, fuzz or benchmark project is never the project's own
    code, wherever it sits."""
    low = name.lower()
    if low in _NESTED_TESTS or _TEST_SUFFIX.search(name):
        return "tests"
    if low in _NESTED_EXAMPLES or _EXAMPLE_SUFFIX.search(name):
        return "examples"
    if low in _NESTED_DOCS:
        return "docs"
    if low in _NESTED_VENDORED:
        return "tooling"
    return None


def file_group(path: str, kind: str = "code") -> Group:
    """The group of a file at the repository root, by its name and kind (code, doc, test, config); root
    documents (README, CHANGES, LICENSE) go with the repository's papers at the end."""
    name = posixpath.basename(path).lower()
    if kind == "test" or name.startswith("test_"):
        return "tests"
    if name in _TOOLING_FILES or name.startswith(".") or kind == "config":
        return "tooling"
    if kind == "doc" or name.endswith(_DOC_EXT):
        return "tooling"  # README, CHANGES, LICENSE at the root: the repository's papers, not its docs/
    return "source"
