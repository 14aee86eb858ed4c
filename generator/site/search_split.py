"""A search that loads: Material's one search index split into what the first search needs and the rest.

Material's search plugin writes `search/search_index.json`: every section of every page with its full text
(tens of MB on a big tree), which every page fetched before a first search could run, plus, for file://,
an identical `search_index.js` from the offline plugin. `split_site_index` rewrites it, after both plugins
ran, into:

- `search_index.json` (eager; the offline plugin's `.js` copy is rewritten to match): the section titles
  and locations only, compacted: one table of page URLs in `config.sourcebook.pages`, and each section as
  `[page number, anchor, title, boost]`. Symbol names are section titles, so symbol searches work from it.
- `search/text-<sha12>.js` (lazy, one copy for http and file://): the body texts in section order, as a
  script (a worker's importScripts and a file:// page's <script> both load it; a .json could not be
  loaded from file://). Named by content: a cached copy never pairs with another build's titles.

The search worker (site/assets/sourcebook/search-worker.js, which the theme names instead of Material's)
expands the titles into Material's own worker, answers from them, and on the first query loads the texts,
rebuilds Material's index with them and answers that query again.

Why the eager part still exists twice on disk (`.json` and `.js`): Material's page script fetches the
`.json` over http but can only load a script from file:// (browsers refuse fetch there), and it chooses
by protocol; both are small now.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from sourcebook.atomic import atomic_write_text

SEARCH_DIR = "search"
INDEX_NAME = "search_index.json"
OFFLINE_NAME = "search_index.js"  # Material's offline plugin: `var __index = <the json>`
TEXT_GLOBAL = "__sourcebookSearchText"


def split_index(index: dict[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Material's search index -> (the eager index in compact form, the body texts in the same order)."""
    pages: list[str] = []
    number: dict[str, int] = {}
    docs: list[list[Any]] = []
    texts: list[str] = []
    for doc in index.get("docs", []):
        page, _, anchor = str(doc.get("location", "")).partition("#")
        if page not in number:
            number[page] = len(pages)
            pages.append(page)
        entry: list[Any] = [number[page], anchor, str(doc.get("title", ""))]
        if doc.get("boost") not in (None, 1):
            entry.append(doc["boost"])
        docs.append(entry)
        texts.append(str(doc.get("text", "")))
    config = dict(index.get("config", {}))
    config["sourcebook"] = {"pages": pages}
    return {"config": config, "docs": docs}, texts


def text_script(texts: list[str]) -> str:
    # JSON is a JavaScript expression; ensure_ascii keeps U+2028/2029 and every control character escaped
    return f"self.{TEXT_GLOBAL} = {json.dumps(texts, ensure_ascii=True, separators=(',', ':'))};\n"


def split_site_index(site_dir: Path) -> Path | None:
    """Split `site_dir`'s search index in place (see the module docstring); returns the text file, or None
    when the site has no search index (or it was split already)."""
    search = site_dir / SEARCH_DIR
    source = search / INDEX_NAME
    if not source.is_file():
        return None
    index = json.loads(source.read_text(encoding="utf-8"))
    if "sourcebook" in index.get("config", {}):
        return None
    eager, texts = split_index(index)
    script = text_script(texts)
    text_file = search / f"text-{hashlib.sha256(script.encode()).hexdigest()[:12]}.js"
    eager["config"]["sourcebook"]["text"] = text_file.name
    _write(text_file, script)
    for old in search.glob("text-*.js"):  # an earlier build's texts (a site updated in place)
        if old != text_file:
            old.unlink()
    body = json.dumps(eager, ensure_ascii=False, separators=(",", ":"))
    if (search / OFFLINE_NAME).is_file():
        _write(search / OFFLINE_NAME, f"var __index = {body}")
    _write(source, body)
    return text_file


def _write(path: Path, text: str) -> None:
    atomic_write_text(path, text)
