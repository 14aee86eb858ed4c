"""`.. include::` in a repository's reST documents, resolved inside the repository and nowhere else.

docutils' own inclusion is off for untrusted text (it would read any path: `/etc/passwd`, `../../secret`).
A wiki page of `docs/changes.rst` that only says `.. include:: ../CHANGES.rst` would render empty, so the
include directive (generator/markup/rst.py) asks this module instead: a path relative to the including file
that
stays inside the repository once normalised (no `..` past the root, no `<standard>` include, no URL; a
path starting with `/` is never read from the filesystem's root: as Sphinx reads it, it is relative to the
documentation's source folder, the nearest folder above the document that holds a conf.py, and without one
it is refused), and a file the scan knows as text (the reader returns None for anything else: the scan
already refused symlinks that point out of the repository, binaries and oversized files). Inclusion nests at
most MAX_DEPTH files deep, never includes a file into itself (directly or round a loop), and stops after
MAX_TEXT characters per document: what is left out becomes a link to the file's page.

`included_files` walks the same rules over the text ahead of rendering, for the keys: a page (and its cached
rendering) changes when an included file does.
"""

from __future__ import annotations

import hashlib
import posixpath
import re
from collections.abc import Callable, Mapping

Reader = Callable[[str], str | None]  # a repository path -> its text, None when it is not a known text file

MAX_DEPTH = 4  # files included into included files ... at most this deep
MAX_TEXT = 1_000_000  # characters included into one document, all inclusions together
MAX_INCLUDES = 64  # inclusions in one document

INCLUDE_LINE = re.compile(r"^[ \t]*\.\.[ \t]+(?:literal)?include::[ \t]*(\S[^\n]*?)[ \t]*$", re.M)


def include_path(including: str, argument: str, source: str | None = None) -> str | None:
    """The repository path `argument` names from the file `including`, or None when it leaves the
    repository or is not a plain relative path. `source`: the Sphinx source folder (sphinx_source) a
    `/path` is relative to; None refuses such a path."""
    arg = argument.strip()
    base = posixpath.dirname(including)
    if arg.startswith("/") and not arg.startswith("//") and source is not None:
        base, arg = source, arg.lstrip("/")
    if not arg or arg.startswith(("/", "\\", "<", "~")) or "\x00" in arg or "\\" in arg or \
            re.match(r"^[A-Za-z][A-Za-z0-9+.-]*:", arg):
        return None
    joined = posixpath.normpath(posixpath.join(base, arg))
    if joined in ("", ".", "..") or joined.startswith(("../", "/")):
        return None
    return joined


def sphinx_source(path: str, read: Reader) -> str | None:
    """The Sphinx source folder of the document at `path`: the nearest folder above it (the repository's
    root included) holding a conf.py the scan knows; None when there is none."""
    folder = posixpath.dirname(path)
    while True:
        if read(posixpath.join(folder, "conf.py") if folder else "conf.py") is not None:
            return folder
        if not folder:
            return None
        folder = posixpath.dirname(folder)


def clip(text: str, options: Mapping[str, str]) -> str | None:
    """The part of `text` the include options select: docutils' start-line/end-line (a slice of its
    lines) and start-after/end-before (after/before the first occurrence of a marker), Sphinx
    literalinclude's lines (`1,3,5-9,20-`, 1-based) and start-at/end-at (the marker's line kept). None when
    a marker is missing or a number is not one."""
    try:
        start = int(options["start-line"]) if options.get("start-line") else None
        end = int(options["end-line"]) if options.get("end-line") else None
        if start is not None or end is not None:
            text = "".join(text.splitlines(keepends=True)[start:end])
        if options.get("lines"):
            text = _pick_lines(text, options["lines"])
    except ValueError:
        return None
    for key in ("start-after", "start-at"):
        if options.get(key):
            at = text.find(options[key])
            if at < 0:
                return None
            text = text[at + len(options[key]):] if key == "start-after" else \
                text[text.rfind("\n", 0, at) + 1:]
    for key in ("end-before", "end-at"):
        if options.get(key):
            at = text.find(options[key])
            if at < 0:
                return None
            line_end = text.find("\n", at)
            text = text[:at] if key == "end-before" else text[:line_end + 1 if line_end >= 0 else len(text)]
    return text


def _pick_lines(text: str, spec: str) -> str:
    """Sphinx's `:lines:` selection (`1,3,5-9,20-`, 1-based, inclusive); ValueError for a malformed one, or
    for one that repeats lines into more text than the file has (`1-,1-,1-,...` would make a few kilobytes
    of option gigabytes of page)."""
    lines = text.splitlines(keepends=True)
    picked: list[str] = []
    size = 0
    for part in spec.replace(" ", "").split(","):
        first, dash, last = part.partition("-")
        low = int(first) if first else 1
        high = (int(last) if last else len(lines)) if dash else low
        if low < 1 or high < low:
            raise ValueError(spec)
        chosen = lines[low - 1:high]
        size += sum(map(len, chosen))
        if size > len(text):
            raise ValueError(spec)
        picked += chosen
    return "".join(picked)


def included_files(path: str, text: str, read: Reader) -> dict[str, str]:
    """Every file `text` (the document at `path`) may include, nested too, under the rules above: its path
    -> a digest of its text ("" when it cannot be read). A superset of what rendering includes (an
    include inside a literal block counts here), never less."""
    found: dict[str, str] = {}
    source = sphinx_source(path, read)
    todo: list[tuple[str, str, tuple[str, ...]]] = [(path, text, (path,))]
    while todo and len(found) < MAX_INCLUDES:
        including, body, chain = todo.pop()
        if len(chain) > MAX_DEPTH:
            continue
        for argument in INCLUDE_LINE.findall(body):
            target = include_path(including, argument, source)
            if target is None or target in chain or target in found:
                continue
            content = read(target)
            found[target] = hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()[:16] \
                if content is not None else ""
            if content is not None and "include::" in content:
                todo.append((target, content, (*chain, target)))
    return found


def includes_key(path: str, text: str, read: Reader) -> str:
    """`included_files` as one string for a key ('' for the common document that includes nothing)."""
    if "include::" not in text:
        return ""
    return repr(sorted(included_files(path, text, read).items()))
