"""FileFacts cached by (path, content hash, parser version), so an unchanged file is never parsed twice.

Stored as JSON (not pickle) under `<out_dir>/cache/facts.json`: an output directory restored from a CI cache
must never be able to run code. The parser version is a hash of the extraction code and its query files, so a
change to the parser invalidates every entry without anyone remembering to bump a number.
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from typing import Any

from generator.analyze.facts import FileFacts, Heading, Import, Member, Reference, SourceFile, Symbol
from sourcebook.atomic import atomic_write_text

log = logging.getLogger(__name__)

CACHE_FORMAT = 1


@cache
def parser_version() -> str:
    """The parser's code (its import closure and tree-sitter queries) and this cache's format: the facts
    kept are those this code would extract again."""
    from sourcebook.code_version import module_file, stage_version

    # the queries beside the parser (read, not imported: the answer side asks this without tree-sitter)
    parser = module_file("generator.analyze.parse")
    queries = (parser.parent / "queries",) if parser is not None else ()
    version = stage_version("generator.analyze.parse", "generator.analyze.factcache", data=queries)
    return hashlib.sha256(f"{CACHE_FORMAT}\0{version}".encode()).hexdigest()[:16]


def cache_path(out_dir: Path) -> Path:
    return out_dir / "cache" / "facts.json"


def facts_to_json(f: FileFacts) -> dict[str, Any]:
    s = f.file
    return {
        "file": [s.path, s.language, s.size, s.sha, s.kind],
        "symbols": [[y.name, y.qualname, y.kind, y.path, y.start_line, y.end_line, y.signature, y.docstring,
                     y.parent, y.public, y.docstring_source, y.implements] for y in f.symbols],
        "imports": [[i.path, i.module, list(i.names), i.line, [list(a) for a in i.aliases]]
                    for i in f.imports],
        "references": [[r.path, r.name, r.line, r.kind, r.scope, r.receiver]
                       + ([list(r.args)] if r.args is not None else []) for r in f.references],
        "docstring": f.docstring, "title": f.title,
        "headings": [[h.level, h.text, h.line] for h in f.headings],
        "line_count": f.line_count, "warnings": list(f.warnings),
        "members": [[m.name, m.kind, m.parent, m.line, m.declaration, m.docstring] for m in f.members],
    }


def facts_from_json(d: Mapping[str, Any]) -> FileFacts:
    return FileFacts(
        file=SourceFile(*d["file"]),
        symbols=[Symbol(*row) for row in d["symbols"]],
        imports=[Import(p, m, tuple(n), line, tuple((a, b) for a, b in aliases))
                 for p, m, n, line, aliases in d["imports"]],
        references=[Reference(row[0], row[1], row[2], row[3], row[4], row[5],
                              tuple(row[6]) if len(row) > 6 else None) for row in d["references"]],
        docstring=d["docstring"], title=d["title"],
        headings=[Heading(*row) for row in d["headings"]],
        line_count=d["line_count"], warnings=list(d["warnings"]),
        members=[Member(*row) for row in d.get("members", ())])


def load_facts_cache(out_dir: Path) -> dict[tuple[str, str], FileFacts]:
    """{(path, sha): FileFacts} from the last build with the same parser version; {} when there is none."""
    path = cache_path(out_dir)
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("%s: unreadable facts cache (%s); files will be re-parsed", path, exc)
        return {}
    if not isinstance(data, dict) or data.get("parser") != parser_version():
        return {}
    out: dict[tuple[str, str], FileFacts] = {}
    for row in data.get("files", []):
        try:
            facts = facts_from_json(row)
        except (KeyError, TypeError, ValueError):
            continue  # a damaged entry: that file is re-parsed
        out[(facts.file.path, facts.file.sha)] = facts
    return out


def save_facts_cache(out_dir: Path, facts: Mapping[str, FileFacts]) -> None:

    data = {"parser": parser_version(), "files": [facts_to_json(f) for _, f in sorted(facts.items())]}
    atomic_write_text(cache_path(out_dir), json.dumps(data, ensure_ascii=False, separators=(",", ":")))
