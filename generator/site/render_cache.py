"""The site's render cache: what rendering a page produced, stored under keys of what it was rendered from.

Two kinds of entries, each named by a keyed hash (HMAC under the per-user local key, sourcebook/local_key.py)
of its render key, never by the key itself:

- content/<name>.z: a page's Markdown rendered to (sanitized) HTML and its table of contents, zlib-compressed
  JSON. The key covers the Markdown, where the page sits, the Markdown configuration and the code that
  renders and sanitizes (generator/site/material/engine.py builds it);
- pages/<name>.html: the finished page as the theme wrapped it. The site's copy of an unchanged page is a
  hard link to this file, so keeping the cache costs no second copy of the site.

What each entry needs besides its bytes (title, anchors, the links it resolved, the log lines its render
printed, its search-index entries) is kept in one `manifest.json`, written after each successful build with a
keyed mark over its text. The output folder belongs to the repository (it may be committed): a planted entry
would be served as a rendered page without passing the sanitizer, so names and the manifest are keyed, a
manifest without this user's mark is ignored, and without a local key a build uses a throw-away key (nothing
it renders is trusted by the next build).
"""

from __future__ import annotations

import json
import logging
import os
import secrets
import shutil
import tempfile
import zlib
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sourcebook.atomic import PRIVATE, atomic_write_bytes, replace_with
from sourcebook.errors import NotOwnedError
from sourcebook.local_key import keyed

log = logging.getLogger(__name__)

MANIFEST = "manifest.json"
CONTENT_DIR = "content"
PAGES_DIR = "pages"
_FORMAT = 1  # the manifest's layout; another value is ignored (and the cache refilled)


class RenderCache:
    """Entries of one output folder's render cache (see the module docstring).

    `key` None: an ephemeral cache (a random key nobody keeps): entries still pass content between a build's
    stages, but no later build trusts them."""

    def __init__(self, root: Path, key: bytes | None, *, within: Path | None = None) -> None:
        """`within`: the output folder the cache must lie in, with no symbolic link on the way (a committed
        `cache/site -> ~` would otherwise have the pruning delete someone's files)."""
        self.root = root
        self.persistent = key is not None
        self._key = key if key is not None else secrets.token_bytes(32)
        if within is not None:
            try:
                inside = Path(os.path.abspath(root)).relative_to(os.path.abspath(within))
            except ValueError:
                raise NotOwnedError(str(root), f"is not inside {within}") from None
            if Path(os.path.realpath(root)) != Path(os.path.realpath(within)) / inside:
                raise NotOwnedError(str(root), f"leads out of {within} through a symbolic link")
        for directory in (root / CONTENT_DIR, root / PAGES_DIR):
            if directory.is_symlink():
                raise NotOwnedError(str(directory), "is a symbolic link")
            directory.mkdir(parents=True, exist_ok=True)

    def name(self, render_key: str) -> str:
        mark = keyed(render_key.encode(), self._key)
        assert mark is not None  # the key is never empty
        return mark[:40]

    # -- content entries --------------------------------------------------------------------------------

    def content_path(self, name: str) -> Path:
        return self.root / CONTENT_DIR / f"{name}.z"

    def write_content(self, name: str, entry: dict[str, Any]) -> None:
        data = zlib.compress(json.dumps(entry, ensure_ascii=False, separators=(",", ":")).encode(), 1)
        atomic_write_bytes(self.content_path(name), data, mode=PRIVATE)

    def read_content(self, name: str) -> dict[str, Any] | None:
        try:
            entry = json.loads(zlib.decompress(self.content_path(name).read_bytes()))
        except (OSError, zlib.error, ValueError):
            return None
        return entry if isinstance(entry, dict) else None

    # -- finished pages ---------------------------------------------------------------------------------

    def page_path(self, name: str) -> Path:
        return self.root / PAGES_DIR / f"{name}.html"

    def keep_page(self, name: str, built: Path) -> None:
        """Make `built` (a page just written into the new site) this entry: a hard link, else a copy."""
        target = self.page_path(name)
        replace_with(target, lambda tmp: _link_or_copy(built, tmp), mode=None)

    def place_page(self, name: str, dest: Path) -> bool:
        """Put the cached page `name` at `dest` (a hard link when the filesystem allows); False if missing."""
        source = self.page_path(name)
        dest.parent.mkdir(parents=True, exist_ok=True)
        try:
            _link_or_copy(source, dest)
        except FileNotFoundError:
            return False
        return True

    # -- the manifest -----------------------------------------------------------------------------------

    def load_manifest(self) -> dict[str, Any]:
        """The last build's manifest, or an empty one when absent, unreadable or not marked by this user."""
        empty: dict[str, Any] = {"content": {}, "pages": {}}
        if not self.persistent:
            return empty
        try:
            mark, _, body = (self.root / MANIFEST).read_text(encoding="utf-8").partition("\n")
        except (OSError, UnicodeDecodeError):
            return empty
        if mark != keyed(body.encode(), self._key):
            log.info("render cache: %s is not this user's (or is damaged): every page is rendered again",
                     self.root / MANIFEST)
            return empty
        try:
            manifest = json.loads(body)
        except ValueError:
            return empty
        if not isinstance(manifest, dict) or manifest.get("format") != _FORMAT:
            return empty
        return {"content": dict(manifest.get("content") or {}), "pages": dict(manifest.get("pages") or {})}

    def save(self, content: dict[str, Any], pages: dict[str, Any]) -> None:
        """Record this build's entries and delete every other one (entries of earlier builds, of a failed
        run, or planted)."""
        if not self.persistent:
            return
        body = json.dumps({"format": _FORMAT, "content": content, "pages": pages}, ensure_ascii=False,
                          separators=(",", ":"))
        atomic_write_bytes(self.root / MANIFEST, f"{keyed(body.encode(), self._key)}\n{body}".encode(),
                           mode=PRIVATE)
        self._prune(CONTENT_DIR, {f"{n}.z" for n in content})
        self._prune(PAGES_DIR, {f"{n}.html" for n in pages})

    def _prune(self, sub: str, keep: Iterable[str]) -> None:
        wanted = set(keep)
        with os.scandir(self.root / sub) as entries:
            for entry in entries:
                if entry.name not in wanted:
                    try:
                        os.unlink(entry.path)
                    except IsADirectoryError:
                        shutil.rmtree(entry.path, ignore_errors=True)
                    except FileNotFoundError:
                        pass

    def discard(self) -> None:
        """Remove an ephemeral cache (a persistent one stays for the next build)."""
        if not self.persistent:
            shutil.rmtree(self.root, ignore_errors=True)


def ephemeral_cache(parent: Path) -> RenderCache:
    return RenderCache(Path(tempfile.mkdtemp(prefix=".render-cache-", dir=parent)), None)


def _link_or_copy(source: Path, dest: Path) -> None:
    try:
        os.link(source, dest)
    except FileExistsError:
        os.unlink(dest)
        os.link(source, dest)
    except OSError as exc:
        if isinstance(exc, FileNotFoundError):
            raise
        shutil.copyfile(source, dest)  # another filesystem, or one without hard links


