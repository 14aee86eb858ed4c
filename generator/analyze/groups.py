"""Which part of a repository a folder or file belongs to, by its name: the source code, the docs, the
tests, the examples, or the tooling (dot-folders, scripts, CI, root config files).

The navigation orders the site by these groups (generator/site/nav.py), the overview and the topics pick
the project's own code by them, and entry points are looked for in the source group.
"""

from __future__ import annotations

import posixpath
from typing import Literal

Group = Literal["source", "docs", "tests", "examples", "tooling"]

_DOCS = frozenset({"docs", "doc", "documentation", "manual", "guide", "guides", "website", "site-docs"})
_TESTS = frozenset({"tests", "test", "testing", "spec", "specs", "__tests__", "t", "e2e", "integration"})
_EXAMPLES = frozenset({"examples", "example", "samples", "sample", "demo", "demos", "tutorial", "tutorials",
                       "cookbook", "benchmarks", "benchmark", "bench", "playground"})
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
    return "source"


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
