"""The map the served wiki's ask box reads (site/assets/sourcebook/ask.js): which page documents each source
path, where each symbol's section starts and ends, and where source lines live on the forge, so an answer's
citations (`path` or `path:12-30`) become links to wiki sections and source lines.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from generator.analyze.facts import FileFacts
from generator.pages.anchors import anchor_ids, has_section
from generator.pages.remote import SourceLinks
from sourcebook.atomic import atomic_write_text

MAP_PATH = "assets/sourcebook/wiki-map.json"


def site_url(page_id: str) -> str:
    """A page id (`files/a.py.md`) as its site-root-relative URL (use_directory_urls: false)."""
    return page_id[: -len(".md")] + ".html" if page_id.endswith(".md") else page_id


def wiki_map(files: Mapping[str, str], facts: Mapping[str, FileFacts],
             links: SourceLinks | None) -> dict[str, Any]:
    symbols: dict[str, list[list[Any]]] = {}
    for path, f in facts.items():
        ids = anchor_ids(f.symbols)
        rows = [[s.start_line, s.end_line, ids[s.qualname]] for s in f.symbols
                if has_section(s, f.file.language)]
        if rows:
            symbols[path] = rows
    return {"pages": {p: site_url(pid) for p, pid in files.items()}, "symbols": symbols,
            "source": {"base": links.base, "forge": links.forge} if links else None}


def write_wiki_map(docs_dir: Path, data: Mapping[str, Any]) -> None:
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    target = docs_dir / MAP_PATH
    if not target.is_file() or target.read_text(encoding="utf-8") != text:
        target.parent.mkdir(parents=True, exist_ok=True)
        atomic_write_text(target, text)
