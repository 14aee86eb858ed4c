"""A documentation file (reST: generator/markup/rst.py; Markdown: generator/markup/md_html.py) as the
sanitized HTML its
wiki page shows, rendered once per content: kept in the output folder's cache so a build that re-renders the
page (a new commit changes every page's source links) does not run docutils or Markdown again.

An entry is named by a keyed hash (HMAC under the per-user local key, sourcebook/local_key.py) of the text,
the rendering code and a salt (the language, the included files' digests), never by the text: the output
folder belongs to the repository (it may be committed), and a planted entry would be shown as the page's body.
Without a local key nothing is cached. An entry records the relative links its document resolved and to what;
it is used only while each still resolves the same (a page added or gone renders the document again).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path

from generator.markup.rst import LinkResolver, render_rst
from sourcebook.atomic import PRIVATE, atomic_write_text
from sourcebook.local_key import keyed

log = logging.getLogger(__name__)

# (text, relative-link resolver, symbol-name resolver) -> sanitized HTML
DocumentRender = Callable[[str, LinkResolver, LinkResolver], str]

CACHE_SUBDIR = "documents"


def _code_version() -> bytes:
    """The rendering code: a change to it (or to the sanitizer) renders every document again. The Markdown
    renderer is handed in (generator/pages/file_stage.py), so named here beside this module's own closure
    (reST, the sanitizer)."""
    from sourcebook.code_version import stage_version

    return bytes.fromhex(stage_version("generator.markup.doc_html", "generator.markup.md_html",
                                       "generator.markup.rst"))


class DocumentCache:
    """`render(text, resolve, symbol)`: the document's HTML (render_rst's unless told otherwise), from the
    cache when the same text resolved the same links and names. `directory` None, or no `key`: nothing is
    read or kept. `prune()` drops the entries this build did not keep."""

    def __init__(self, directory: Path | None, key: bytes | None,
                 render: DocumentRender | None = None) -> None:
        self._dir = directory if key is not None else None
        self._key = key
        self._render = render or (lambda text, link, name: render_rst(text, link, symbol=name))
        self._version = _code_version()
        self._used: set[str] = set()
        self.hits = 0
        self.misses = 0

    def keep(self, text: str, salt: str = "") -> Path | None:
        """Where `text`'s entry lives, kept by this build's prune (a page not re-rendered keeps its entry).
        `salt`: what else the HTML depends on (pages.document_key)."""
        name = keyed(self._version + salt.encode("utf-8", "surrogatepass") + b"\0" +
                     text.encode("utf-8", "surrogatepass"), self._key)
        if self._dir is None or name is None:
            return None
        path = self._dir / f"{name[:40]}.json"
        self._used.add(path.name)
        return path

    def render(self, text: str, resolve: LinkResolver, symbol: LinkResolver | None = None, *, salt: str = "",
               render: DocumentRender | None = None) -> str:
        """`resolve`: relative links -> page URLs; `symbol`: names -> symbol sections (render_rst's);
        `salt`: as keep's; `render`: this document's renderer (default: the cache's)."""
        named: LinkResolver = symbol or (lambda _name: None)
        path = self.keep(text, salt)
        entry = _read(path) if path is not None else None
        if entry is not None and all(resolve(uri) == target for uri, target in entry[0].items()) and \
                all(named(name) == target for name, target in entry[1].items()):
            self.hits += 1
            return entry[2]
        links: dict[str, str | None] = {}
        names: dict[str, str | None] = {}

        def link(uri: str) -> str | None:
            links[uri] = resolve(uri)
            return links[uri]

        def name(text: str) -> str | None:
            names[text] = named(text)
            return names[text]

        html = (render or self._render)(text, link, name)
        self.misses += 1
        if path is not None:
            _write(path, json.dumps({"links": links, "symbols": names, "html": html}))
        return html

    def prune(self) -> None:
        """Drops the entries of documents no longer in the repository (or of older rendering code)."""
        if self._dir is None or not self._dir.is_dir():
            return
        for entry in self._dir.iterdir():
            if entry.suffix == ".json" and entry.name not in self._used:
                entry.unlink(missing_ok=True)


def _read(path: Path) -> tuple[dict[str, str | None], dict[str, str | None], str] | None:
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("links"), dict) or \
            not isinstance(data.get("symbols"), dict) or not isinstance(data.get("html"), str):
        return None
    return data["links"], data["symbols"], data["html"]


def _write(path: Path, text: str) -> None:
    """Atomic, and a cache that cannot be written only costs the next build a render."""
    try:
        atomic_write_text(path, text, mode=PRIVATE)
    except OSError as exc:
        log.info("document cache not written (%s): the next build renders it again", exc.strerror or exc)
