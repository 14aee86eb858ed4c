"""Turn a path someone else typed into a path inside the repository, or refuse it.

Every tool that touches the filesystem on behalf of a caller (read_file, index, get_symbol's live body) goes
through `resolve_in_root`; every `scope` argument (search, ask, context, structure, remember; CLI, HTTP and
MCP alike) goes through `normalize_scope`, which applies the same text checks.

The path check is done twice: once on the text (absolute paths, `..`, NUL bytes, and the
same after URL-decoding, because a front end may decode once and a file name may be decoded again further
down), and once on the filesystem (a symlink inside the tree may point anywhere).
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path
from urllib.parse import unquote

from sourcebook.errors import AccessError, UsageError

MAX_PATH_CHARS = 4096
_DRIVE = re.compile(r"^[A-Za-z]:")
# Decode at most this many times: "%252e" -> "%2e" -> "."; anything deeper is refused as suspicious.
_MAX_DECODE_ROUNDS = 4


def _variants(raw: str) -> list[str]:
    """The raw text, each distinct URL-decoding of it, and their NFKC forms (fullwidth dots fold to dots)."""
    seen = [raw]
    current = raw
    for _ in range(_MAX_DECODE_ROUNDS):
        decoded = unquote(current, errors="replace")
        if decoded == current:
            break
        seen.append(decoded)
        current = decoded
    else:
        if unquote(current, errors="replace") != current:
            raise AccessError(f"{raw!r}: path is URL-encoded too many times")
    for text in list(seen):
        folded = unicodedata.normalize("NFKC", text)
        if folded != text:
            seen.append(folded)
    return seen


def _check_text(raw: str, text: str) -> None:
    if "\x00" in text:
        raise AccessError(f"{raw!r}: NUL byte in path")
    unified = text.replace("\\", "/")
    if unified.startswith(("/", "~")) or _DRIVE.match(unified):
        raise AccessError(f"{raw!r}: absolute paths are refused; give a path relative to the repository root")
    if any(part == ".." for part in unified.split("/")):
        raise AccessError(f"{raw!r}: '..' is refused; give a path inside the repository")


def normalize_rel_path(raw: str, *, allow_root: bool = False) -> str:
    """Check `raw` as text and return it as a clean POSIX relative path ("" means the root).

    Pure: no filesystem access. Raises AccessError for anything that could leave the root, UsageError for
    an empty or oversized path.
    """
    if not isinstance(raw, str):
        raise UsageError("path must be a string")
    if len(raw) > MAX_PATH_CHARS:
        raise UsageError(f"path is longer than {MAX_PATH_CHARS} characters")
    for text in _variants(raw):
        _check_text(raw, text)
    parts = [p for p in raw.replace("\\", "/").split("/") if p not in ("", ".")]
    rel = "/".join(parts)
    if not rel and not allow_root:
        raise UsageError("path is empty")
    return rel


def resolve_in_root(root: Path, raw: str, *, allow_root: bool = False) -> tuple[Path, str]:
    """Return (absolute resolved path, POSIX path relative to root) for `raw`, refusing escapes.

    The file need not exist; if it (or a directory on the way) is a symlink, its target must stay under root.
    """
    rel = normalize_rel_path(raw, allow_root=allow_root)
    base = root.resolve()
    candidate = base.joinpath(*rel.split("/")) if rel else base
    try:
        resolved = candidate.resolve(strict=False)
    except (OSError, RuntimeError) as exc:  # RuntimeError: a symlink loop on older Pythons
        raise AccessError(f"{raw!r}: cannot resolve path ({exc})") from exc
    if resolved != base and not resolved.is_relative_to(base):
        raise AccessError(f"{raw!r}: resolves outside the repository (symlink)")
    return resolved, rel


def normalize_scope(raw: str | None) -> str:
    """A caller's scope (a path prefix) checked like any path it types; "" is the whole repository.

    The one scope check of every tool and surface: `..`, absolute paths, NUL bytes and their URL-encoded
    forms (`%2e%2e/`) are refused the same way everywhere, as a UsageError naming the scope. A trailing "/"
    is kept, because a scope is a prefix: "src/" means the directory, "src" also matches "src_old/".
    """
    if raw is None:
        return ""
    if not isinstance(raw, str):
        raise UsageError("scope must be a string")
    text = raw.strip()
    if text in ("", ".", "./"):
        return ""
    try:
        rel = normalize_rel_path(text, allow_root=True)
    except (AccessError, UsageError) as exc:
        raise UsageError(f"invalid scope: {exc}") from exc
    return rel + "/" if rel and text.endswith(("/", "\\")) else rel


def under_scope(path: str, scope: str | None) -> bool:
    """True when POSIX `path` starts with the path prefix `scope` (None or "" = everything)."""
    if not scope:
        return True
    prefix = scope[2:] if scope.startswith("./") else scope
    return path.startswith(prefix.lstrip("/"))
