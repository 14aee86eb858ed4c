"""Which files of a repository sourcebook reads: the way git sees them, with a reason for each one skipped.

In a git work tree the list comes from `git ls-files` (tracked + untracked-not-ignored); in a plain directory
we walk it and honour every .gitignore on the way. Each candidate then passes the same filters: output dir,
config include/exclude globs, vendored/generated paths, lock and minified files, known language, symlink
safety, size (checked before reading), binary content. Accepted files are hashed (sha256 of the raw bytes).
"""

from __future__ import annotations

import hashlib
import logging
import os
import stat
import subprocess
import unicodedata
from collections.abc import Iterator
from dataclasses import dataclass, field, replace
from pathlib import Path, PurePosixPath
from typing import Literal

from pathspec import GitIgnoreSpec

from generator.analyze.facts import FileKind, Skipped, SourceFile
from generator.analyze.languages import (
    DOC_LANGUAGES,
    SHARED_EXTENSIONS,
    content_language,
    detect_language,
    shared_majority,
    shares_extension,
    spec_for,
)
from sourcebook.config import Config
from sourcebook.errors import AccessError, ConfigError, NotFoundError

log = logging.getLogger(__name__)

BINARY_SNIFF_BYTES = 8192

# Skip reasons, as they appear in the build summary.
REASON_BINARY = "binary"
REASON_TOO_LARGE = "too large"
REASON_VENDORED = "vendored or generated"
REASON_LOCKFILE = "lock file"
REASON_MINIFIED = "minified"
REASON_GENERATED = "generated"
REASON_UNSUPPORTED = "unsupported type"
REASON_EXCLUDED = "excluded by config"
REASON_NOT_INCLUDED = "not matched by include"
REASON_SYMLINK_OUTSIDE = "symlink outside repository"
REASON_SYMLINK_LOOP = "symlink loop"
REASON_SYMLINK_BROKEN = "broken symlink"
REASON_SYMLINK_DIR = "symlink to directory"
REASON_NOT_REGULAR = "not a regular file"
REASON_UNREADABLE = "unreadable"
REASON_MISSING = "missing from disk"
REASON_NON_UTF8_NAME = "file name not UTF-8"
REASON_CONTROL_NAME = "control character in file name"

# Directory names whose content is someone else's code or a build product. Reported once per directory.
# Python packages carry their copies in `_vendor` (pip, setuptools) or `vendored` (botocore)
VENDORED_DIRS = frozenset({
    "node_modules", "bower_components", "jspm_packages", "vendor", "_vendor", "vendored", "_vendored",
    "third_party", "dist", "build",
    ".venv", "venv", "site-packages", "__pycache__", ".tox", ".nox", ".mypy_cache", ".pytest_cache",
    ".ruff_cache", ".eggs", ".next", ".nuxt",
})
# Version-control internals and our own default output: never read, never worth a skip record. The default
# output name is pruned even when --out points elsewhere, so an old build's Markdown is not read as docs.
_VCS_DIRS = frozenset({".git", ".hg", ".svn", ".sourcebook"})

LOCK_FILES = frozenset({
    "package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml", "uv.lock", "poetry.lock",
    "Pipfile.lock", "Cargo.lock", "Gemfile.lock", "composer.lock", "go.sum", "pdm.lock", "bun.lockb",
    "flake.lock", "mix.lock", "packages.lock.json",
})
_MINIFIED_SUFFIXES = (".min.js", ".min.css", ".min.mjs", "-min.js", ".bundle.js")
_GENERATED_SUFFIXES = ("_pb2.py", "_pb2.pyi", "_pb2_grpc.py", ".pb.go", ".pb.cc", ".pb.h", ".g.dart",
                       ".generated.ts", ".generated.js", ".generated.cs", ".designer.cs")
_GENERATED_SNIFF_BYTES = 1024

_CONFIG_LANGUAGES = frozenset({"toml", "yaml", "json", "ini"})
_TEST_DIRS = frozenset({"tests", "test", "__tests__", "spec", "specs"})
# Test folders in any case: PHP names folders after PSR-4 namespaces, so a package's own tests live in
# `Tests/` (`Vendor\Package\Tests\`, Symfony's layout), fixtures and helpers included
# (`Tests/Fixtures/DummyCommand.php`), which are no product code. Not the singular `Test/`: that is a
# namespace a package ships for its users' tests (`Monolog\Test\TestCase`, a framework's `Test/` base cases).
_TEST_DIRS_ANY_CASE = frozenset({"tests", "__tests__", "specs"})
# .NET names a test project after the project it tests, with a suffix (`Newtonsoft.Json.Tests`,
# `FluentValidation.Tests`, `App.UnitTests`): every file of that folder is a test, whatever its own name
# (`EmptyTester.cs`, `Serialization/JsonPropertyCollectionTests.cs`'s helpers, a `Person.cs` fixture model).
_TEST_PROJECT_SUFFIXES = (".tests", ".test", ".unittests", ".integrationtests", ".functionaltests", ".specs")
_TEST_SUFFIXES = (
    "_test.py", "_test.go", "_test.rs", "_spec.rb", "_test.rb", "_test.cc", "_test.cpp", "_test.c",
    "Test.java", "Tests.java", "IT.java", "Test.kt", "Tests.kt", "Test.cs", "Tests.cs", "Test.php",
)
_TEST_INFIXES = (".test.", ".spec.")


@dataclass(frozen=True)
class ScanResult:
    files: list[SourceFile]
    skipped: list[Skipped]
    mode: Literal["git", "walk"] = "walk"
    reasons: dict[str, int] = field(default_factory=dict)  # skip reason -> count, for the build summary


# ---------------------------------------------------------------------------------------------- reading


# Byte-order marks, longest first: the UTF-32LE mark begins with the UTF-16LE one.
_BOMS: tuple[tuple[bytes, str], ...] = (
    (b"\x00\x00\xfe\xff", "utf-32-be"), (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\xef\xbb\xbf", "utf-8"), (b"\xfe\xff", "utf-16-be"), (b"\xff\xfe", "utf-16-le"),
)


def bom_encoding(source: bytes) -> tuple[str, int] | None:
    """(codec, BOM length) when `source` starts with a Unicode byte-order mark, else None."""
    for bom, codec in _BOMS:
        if source.startswith(bom):
            return codec, len(bom)
    return None


def decode(source: bytes) -> str:
    """Bytes as text for every later stage: decoded by BOM (UTF-8/16/32; UTF-8 without one), BOM stripped,
    invalid sequences replaced, CRLF made LF.

    A lone CR stays: tree-sitter counts rows by LF only, so line numbers agree with the parse stage.
    """
    found = bom_encoding(source)
    codec, skip = found if found is not None else ("utf-8", 0)
    text = source[skip:].decode(codec, errors="replace")
    return text.replace("\r\n", "\n") if "\r" in text else text


def _wide_text(content: bytes) -> bool:
    """True for UTF-16/32 text: it is full of NUL bytes, yet text when it carries its BOM and decodes."""
    found = bom_encoding(content)
    if found is None or found[0] == "utf-8":
        return False
    codec, skip = found
    try:
        text = content[skip:].decode(codec)
    except UnicodeDecodeError:
        return False
    return "\0" not in text[:BINARY_SNIFF_BYTES]


def read_source(root: Path, path: str) -> bytes:
    """The raw bytes of file `path` (POSIX, relative); refuses anything resolving outside `root`."""
    root = Path(root).resolve()
    target = (root / path).resolve()
    if not target.is_relative_to(root):
        raise AccessError(f"{path}: outside the repository")
    try:
        return target.read_bytes()
    except FileNotFoundError as exc:
        raise NotFoundError(f"{path}: no such file") from exc
    except IsADirectoryError as exc:
        raise NotFoundError(f"{path}: is a directory") from exc


# ---------------------------------------------------------------------------------------- classification


def file_kind(path: str, language: str | None) -> FileKind:
    """doc / config by language, test by path convention, code otherwise."""
    if language in DOC_LANGUAGES:
        return "doc"
    if language in _CONFIG_LANGUAGES:
        return "config"
    p = PurePosixPath(path)
    name = p.name
    if any(part in _TEST_DIRS or part.lower() in _TEST_DIRS_ANY_CASE
           or part.lower().endswith(_TEST_PROJECT_SUFFIXES) for part in p.parts[:-1]):
        return "test"
    if (name.startswith("test_") and name.endswith(".py")) or name == "conftest.py":
        return "test"
    if name.endswith(_TEST_SUFFIXES) or any(infix in name for infix in _TEST_INFIXES):
        return "test"
    return "code"


def _vendored_prefix(path: str) -> str | None:
    """'a/node_modules/' for 'a/node_modules/x/y.js'; None when no directory of the path is vendored."""
    parts = path.split("/")[:-1]
    for i, part in enumerate(parts):
        if part in VENDORED_DIRS or part.endswith(".egg-info"):
            return "/".join(parts[: i + 1]) + "/"
    return None


def _in_pruned_dir(path: str) -> bool:
    return any(part in _VCS_DIRS for part in path.split("/")[:-1])


# Characters no file name of a documented repository needs, and that break what is made from names: C0 and
# C1 controls and DEL (Cc) end lines in the nav, logs and Markdown links (`mkdocs build` failed on them), the
# line and paragraph separators (U+2028, U+2029) end lines in JavaScript and YAML, and the bidirectional
# controls make a listed name read as another one (a "Trojan Source" name).
_BIDI_CONTROLS = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def path_reason(rel: str) -> str | None:
    """Why a path (as os.fsdecode gives it) cannot be documented, or None: a name that is not UTF-8 (its
    undecodable bytes are surrogate escapes, which no page, cache or JSON file can hold) or one with a
    control character."""
    for ch in rel:
        if "\udc80" <= ch <= "\udcff":
            return REASON_NON_UTF8_NAME
    for ch in rel:
        if unicodedata.category(ch) in ("Cc", "Zl", "Zp") or ch in _BIDI_CONTROLS:
            return REASON_CONTROL_NAME
    return None


def printable_path(rel: str) -> str:
    """`rel` safe to print, log and store: undecodable bytes as \\xNN, controls as \\xNN / \\uNNNN."""
    raw = rel.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    return "".join(ch if path_reason(ch) is None else ch.encode("unicode_escape").decode("ascii")
                   for ch in raw)


def _name_reason(name: str) -> str | None:
    if name in LOCK_FILES or name.endswith(".lock"):
        return REASON_LOCKFILE
    lowered = name.lower()
    if lowered.endswith(_MINIFIED_SUFFIXES):
        return REASON_MINIFIED
    if lowered.endswith(_GENERATED_SUFFIXES):
        return REASON_GENERATED
    return None


# What API documentation generators write at the top of their HTML pages and style sheets: a checked-in
# generated reference (a project website's old javadoc, a Doxygen tree) is the build product of the
# repository's own doc comments, hundreds of pages repeating every name of the code, which drowned the code
# itself in search. Only in those languages: a source file merely mentioning javadoc keeps its place.
_DOC_GENERATOR_MARKERS: dict[str, tuple[bytes, ...]] = {
    "html": (b"generated by javadoc", b"generated by doxygen"),
    "css": (b"javadoc style sheet",),
}


def _is_generated(content: bytes, language: str | None = None) -> bool:
    """The conventional marker tools write at the top (Go's "Code generated ... DO NOT EDIT.", @generated; an
    API documentation generator's header in its HTML and CSS output)."""
    head = content[:_GENERATED_SNIFF_BYTES]
    if bom_encoding(head) is not None:  # UTF-16/32 text: look for the markers in its characters
        head = decode(content[:_GENERATED_SNIFF_BYTES * 4])[:_GENERATED_SNIFF_BYTES].encode()
    if (b"Code generated" in head and b"DO NOT EDIT" in head) or b"@generated" in head:
        return True
    markers = _DOC_GENERATOR_MARKERS.get(language or "", ())
    return bool(markers) and any(m in head.lower() for m in markers)


# Minified code under its plain name (a website's `prettify.js`, a test's copy of a Promise polyfill): one
# line of thousands of characters is no page a reader can use, and its run-together names drown real code
# in search. Told by the file's head alone, which is cheap: most of its bytes are on long lines, and those
# lines are packed code, with almost no spaces (minifiers drop them) and dense in the punctuation of
# statements and rules (`;{}()=`). Ordinary code with a long line of data (an SVG path in a component, a
# base64 font, a table of weights written as an object literal) fails the second test: data has next to
# none of that punctuation (its `:` and `,` do not count), and hand-written code is spaced out.
# The thresholds sit between the two groups as measured on the corpus' JS and CSS (the counts of files the
# rule skips are in docs/performance.md).
_MINIFIED_SNIFF_BYTES = 8192
_LONG_LINE = 300  # Closure Compiler wraps its output at 500 characters
_MIN_LONG_BYTES = 1024  # less than this is too little to judge, and costs a reader nothing
_MAX_SPACE_SHARE = 0.07  # a minifier keeps the spaces of string literals (a stemmer's stop words)
_MIN_PUNCTUATION_SHARE = 0.03
_CODE_PUNCTUATION = tuple(bytes([c]) for c in b";{}()=")


def _is_minified(content: bytes, language: str | None) -> bool:
    """Whether a JS or CSS file is minified, from its first bytes (the rule above)."""
    if not spec_for(language).minifiable:
        return False
    head = content[:_MINIFIED_SNIFF_BYTES]
    long_lines = [line for line in head.split(b"\n") if len(line) >= _LONG_LINE]
    packed = b"".join(long_lines)
    if len(packed) < _MIN_LONG_BYTES or 2 * len(packed) < len(head):
        return False
    spaces = packed.count(b" ") + packed.count(b"\t")
    punctuation = sum(packed.count(mark) for mark in _CODE_PUNCTUATION)
    return spaces < _MAX_SPACE_SHARE * len(packed) and punctuation >= _MIN_PUNCTUATION_SHARE * len(packed)


def _content_reason(content: bytes, language: str | None) -> str | None:
    """Why a readable text file is skipped for what it holds (generated, minified), else None: the one rule
    `scan` and `classify_content` apply."""
    if _is_generated(content, language):
        return REASON_GENERATED
    if _is_minified(content, language):
        return REASON_MINIFIED
    return None


def classify_content(path: str, raw: bytes) -> tuple[SourceFile | None, str | None]:
    """(the SourceFile `scan` would accept, None) or (None, the reason it would skip the file): the scan's
    rules applied to content that is not on disk (files a client pushes). Pure."""
    if _in_pruned_dir(path):
        return None, "version-control or output folder"
    if _vendored_prefix(path) is not None:
        return None, REASON_VENDORED
    reason = _name_reason(path.rsplit("/", 1)[-1])
    language = detect_language(path)
    if reason is None and language is None:
        reason = REASON_UNSUPPORTED
    if reason is not None:
        return None, reason
    if b"\0" in raw[:BINARY_SNIFF_BYTES] and not _wide_text(raw):
        return None, REASON_BINARY
    if (reason := _content_reason(raw, language)) is not None:
        return None, reason
    language = content_language(language, path, raw)  # a header holding C++ is C++, as in a scan
    return SourceFile(path=path, language=language, size=len(raw), sha=hashlib.sha256(raw).hexdigest(),
                      kind=file_kind(path, language)), None


def _compile(patterns: tuple[str, ...]) -> GitIgnoreSpec | None:
    return GitIgnoreSpec.from_lines(patterns) if patterns else None


# ------------------------------------------------------------------------------------------- listing


def _git_list(root: Path) -> list[str] | None:
    """Paths git shows (tracked + untracked-not-ignored), or None when `root` is not a usable work tree."""
    try:
        proc = subprocess.run(
            # fsmonitor can name a program to run; a repository we document must not run code through us
            ["git", "-c", "core.fsmonitor=false", "-C", str(root), "ls-files", "-z", "--cached", "--others",
             "--exclude-standard"],
            capture_output=True, check=False, timeout=120,
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        log.info("git unavailable for %s (%s): walking the directory", root, exc)
        return None
    if proc.returncode != 0:
        log.debug("git ls-files failed in %s: %s", root, proc.stderr.decode(errors="replace").strip())
        return None
    names = {os.fsdecode(raw) for raw in proc.stdout.split(b"\0") if raw}
    if not names and _git_ignores_root(root):
        return None  # a checkout placed inside another repository's ignored directory: not git's to list
    return sorted(name.rstrip("/") for name in names)


def _git_ignores_root(root: Path) -> bool:
    try:
        proc = subprocess.run(
            ["git", "-c", "core.fsmonitor=false", "-C", str(root), "check-ignore", "-q", "."],
            capture_output=True, check=False, timeout=60,
        )
    except (OSError, subprocess.TimeoutExpired):
        return False
    return proc.returncode == 0


def _load_gitignore(directory: Path) -> GitIgnoreSpec | None:
    try:
        lines = (directory / ".gitignore").read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return None
    return GitIgnoreSpec.from_lines(lines)


def _ignored(stack: list[tuple[str, GitIgnoreSpec]], rel: str, is_dir: bool) -> bool:
    """gitignore semantics across nested files: the deepest .gitignore with an opinion wins."""
    verdict = False
    for prefix, spec in stack:
        local = rel[len(prefix):] if prefix else rel
        result = spec.check_file(local + "/" if is_dir else local)
        if result.include is not None:
            verdict = result.include
    return verdict


def _walk(root: Path, out_dir: Path, skipped: list[Skipped]) -> Iterator[str]:
    """Relative POSIX paths under `root`, honouring .gitignore files; vendored directories are pruned."""

    def visit(directory: Path, rel_dir: str, stack: list[tuple[str, GitIgnoreSpec]]) -> Iterator[str]:
        spec = _load_gitignore(directory)
        if spec is not None:
            stack = [*stack, (rel_dir, spec)]
        try:
            entries = sorted(os.scandir(directory), key=lambda e: e.name)
        except OSError as exc:
            skipped.append(Skipped(rel_dir or ".", f"{REASON_UNREADABLE}: {exc.strerror or exc}"))
            return
        for entry in entries:
            rel = rel_dir + entry.name
            try:
                is_dir = entry.is_dir(follow_symlinks=False)
            except OSError:
                is_dir = False
            if is_dir:
                if entry.name in _VCS_DIRS or Path(entry.path) == out_dir:
                    continue
                if _ignored(stack, rel, is_dir=True):
                    continue
                if entry.name in VENDORED_DIRS or entry.name.endswith(".egg-info"):
                    skipped.append(Skipped(rel + "/", REASON_VENDORED))
                    continue
                yield from visit(Path(entry.path), rel + "/", stack)
            elif not _ignored(stack, rel, is_dir=False):
                yield rel

    yield from visit(root, "", [])


# ------------------------------------------------------------------------------------------- filters


def _inspect(root: Path, rel: str, max_bytes: int) -> tuple[bytes | None, int, str | None]:
    """(content, size, None) for an acceptable file, else (None, 0, skip reason). Never reads a large file."""
    full = root / rel
    try:
        st = os.lstat(full)
    except FileNotFoundError:
        return None, 0, REASON_MISSING
    except OSError as exc:
        return None, 0, f"{REASON_UNREADABLE}: {exc.strerror or exc}"
    if stat.S_ISLNK(st.st_mode):
        try:
            target = full.resolve(strict=True)
        except RuntimeError:  # Python < 3.13 signals a loop this way
            return None, 0, REASON_SYMLINK_LOOP
        except OSError as exc:
            if exc.errno == 40:  # ELOOP
                return None, 0, REASON_SYMLINK_LOOP
            return None, 0, REASON_SYMLINK_BROKEN
        if not target.is_relative_to(root):
            return None, 0, REASON_SYMLINK_OUTSIDE
        try:
            st = os.stat(target)
        except OSError as exc:
            return None, 0, f"{REASON_UNREADABLE}: {exc.strerror or exc}"
        if stat.S_ISDIR(st.st_mode):
            return None, 0, REASON_SYMLINK_DIR
        full = target
    if not stat.S_ISREG(st.st_mode):
        # FIFOs and devices would block or stream forever on read
        return None, 0, REASON_NOT_REGULAR
    if st.st_size > max_bytes:
        return None, 0, REASON_TOO_LARGE
    try:
        with open(full, "rb") as fh:
            # one byte past the limit: a file that grew since stat() is caught without reading it all
            content = fh.read(max_bytes + 1)
    except OSError as exc:
        return None, 0, f"{REASON_UNREADABLE}: {exc.strerror or exc}"
    if len(content) > max_bytes:
        return None, 0, REASON_TOO_LARGE
    if b"\0" in content[:BINARY_SNIFF_BYTES] and not _wide_text(content):
        return None, 0, REASON_BINARY
    return content, len(content), None


def _out_prefix(root: Path, out_dir: Path) -> str | None:
    try:
        rel = out_dir.resolve().relative_to(root)
    except ValueError:
        return None
    text = rel.as_posix()
    return None if text in ("", ".") else text + "/"


def check_includes(patterns: tuple[str, ...], included: list[str], files: list[SourceFile]) -> None:
    """Refuse include globs that select nothing: a typo must not read as "this repository is now empty",
    which would delete every page of the wiki and every row of the index. Raised before any stage writes."""
    unmatched = [p for p in patterns if not p.startswith("!")
                 and not any(_compile((p,)).match_file(rel) for rel in included)]  # type: ignore[union-attr]
    if unmatched or not files:
        shown = ", ".join(repr(p) for p in (unmatched or patterns))
        what = "matched no file" if unmatched or not included else "matched only files sourcebook skips"
        raise ConfigError(f"include {shown} {what}: nothing was built, and the existing wiki and index are "
                          "kept (check the glob; patterns are gitignore-style, relative to the repository)")


def settle_shared(files: list[SourceFile]) -> list[SourceFile]:
    """Files of an extension two languages share (`.h`), read as the language most of the repository's
    other files are in (languages.shared_majority)."""
    counts: dict[str, int] = {}
    for f in files:  # a header read as C++ for its syntax is not counted: only the unambiguous files are
        if f.language and not f.path.endswith(SHARED_EXTENSIONS):
            counts[f.language] = counts.get(f.language, 0) + 1
    moved = shared_majority(counts)
    if not moved:
        return files
    return [replace(f, language=moved[f.language], kind=file_kind(f.path, moved[f.language]))
            if f.language in moved and shares_extension(f.language, f.path) else f for f in files]


def scan(config: Config) -> ScanResult:
    """List, filter and hash the repository's files. Sorted by path, so every later stage is deterministic."""
    root = Path(config.root).resolve()
    out_dir = Path(config.out_dir).resolve()
    out_prefix = _out_prefix(root, out_dir)
    include = _compile(config.include)
    exclude = _compile(config.exclude)
    skipped: list[Skipped] = []

    listed = _git_list(root)
    mode: Literal["git", "walk"] = "git" if listed is not None else "walk"
    candidates = listed if listed is not None else list(_walk(root, out_dir, skipped))

    files: list[SourceFile] = []
    included: list[str] = []  # candidates an include glob accepted (for the no-match check below)
    vendored_seen: set[str] = set()
    for rel in candidates:
        if (out_prefix and rel.startswith(out_prefix)) or _in_pruned_dir(rel):
            continue
        unsafe = path_reason(rel)
        if unsafe is not None:
            # skipped by name before any stage sees it; the record holds the name escaped
            log.warning("%s: skipped (%s)", printable_path(rel), unsafe)
            skipped.append(Skipped(printable_path(rel), unsafe))
            continue
        prefix = _vendored_prefix(rel)
        if prefix is not None:
            if prefix not in vendored_seen:
                vendored_seen.add(prefix)
                skipped.append(Skipped(prefix, REASON_VENDORED))
            continue
        if exclude is not None and exclude.match_file(rel):
            skipped.append(Skipped(rel, REASON_EXCLUDED))
            continue
        if include is not None:
            if not include.match_file(rel):
                skipped.append(Skipped(rel, REASON_NOT_INCLUDED))
                continue
            included.append(rel)
        name = rel.rsplit("/", 1)[-1]
        reason = _name_reason(name)
        language = detect_language(rel)
        if reason is None and language is None:
            reason = REASON_UNSUPPORTED
        if reason is not None:
            skipped.append(Skipped(rel, reason))
            continue
        content, size, reason = _inspect(root, rel, config.max_file_bytes)
        if content is None:
            skipped.append(Skipped(rel, reason or REASON_UNREADABLE))
            continue
        if (reason := _content_reason(content, language)) is not None:
            skipped.append(Skipped(rel, reason))
            continue
        language = content_language(language, rel, content)
        files.append(SourceFile(
            path=rel, language=language, size=size, sha=hashlib.sha256(content).hexdigest(),
            kind=file_kind(rel, language),
        ))
    files = settle_shared(files)

    if include is not None:
        check_includes(config.include, included, files)
    files.sort(key=lambda f: f.path)
    skipped.sort(key=lambda s: s.path)
    reasons: dict[str, int] = {}
    for item in skipped:
        key = item.reason.split(":", 1)[0]
        reasons[key] = reasons.get(key, 0) + 1
    log.info("scan %s (%s): %d files, %d skipped", root, mode, len(files), len(skipped))
    return ScanResult(files=files, skipped=skipped, mode=mode, reasons=reasons)
