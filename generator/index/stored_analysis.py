"""The persisted analysis: the files' facts and the manifests stored in the index, read back for a build
(facts it need not parse again) and for the answer side (the graph the build used).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from generator.analyze.facts import FileFacts, SourceFile
from generator.analyze.manifests import Manifests
from generator.index.store import IndexStore, open_index, outage_errors
from sourcebook.errors import IndexStoreError
from sourcebook.sql import in_list

if TYPE_CHECKING:
    from generator.analyze.analysis import Analysis
    from sourcebook.config import Config


log = logging.getLogger(__name__)


def _stored_facts(rows: Iterable[dict[str, Any]]) -> tuple[list[FileFacts], list[dict[str, Any]]]:
    """Facts decoded from `files` rows, with generated docstrings taken off again; rows that do not decode."""
    import dataclasses

    from generator.analyze.factcache import facts_from_json

    out: list[FileFacts] = []
    bad: list[dict[str, Any]] = []
    for row in rows:
        try:
            fx = facts_from_json(json.loads(row["facts"] or "null"))
        except (KeyError, TypeError, ValueError):
            bad.append(row)
            continue
        if any(s.docstring_source == "llm" for s in fx.symbols):  # the build stores them for search only
            fx = dataclasses.replace(fx, symbols=[
                dataclasses.replace(s, docstring="", docstring_source="code") if s.docstring_source == "llm"
                else s for s in fx.symbols])
        out.append(fx)
    return out, bad


def indexed_facts(config: Config) -> dict[tuple[str, str], FileFacts]:
    """{(path, sha): facts} the index holds under this parser version ({} when none is usable)."""
    from generator.analyze.factcache import parser_version

    try:
        store = open_index(config, embedder=None)
    except IndexStoreError:
        return {}
    if store.meta.get("parser") != parser_version():
        return {}
    try:
        rows = store.rows("files", ["path", "sha", "facts"])
    except outage_errors() as exc:  # a damaged index reuses nothing (the run's writer sets it aside)
        log.info("no facts reused from the index: %s", exc)
        return {}
    facts, _ = _stored_facts(rows)
    return {(f.file.path, f.file.sha): f for f in facts}


def load_analysis(store: IndexStore) -> Analysis:
    """The analysis the index was written from: its files' facts and the manifests, nothing re-parsed.

    A row whose stored facts do not decode (written by another facts format) is parsed from its indexed
    text instead. Reads of a damaged table raise what LanceDB raises; callers turn that into an outage.
    """
    from generator.analyze.analysis import Analysis

    rows = store.rows("files", ["path", "sha", "language", "kind", "size", "facts"])
    facts, bad = _stored_facts(rows)
    if bad:
        from generator.analyze.parse import extract

        texts = {r["path"]: r["text"] or "" for r in store.rows(
            "files", ["path", "text"], in_list("path", [r["path"] for r in bad]))}
        for row in bad:
            source = SourceFile(row["path"], row["language"] or None, int(row.get("size") or 0), row["sha"],
                                row.get("kind") or "code")
            facts.append(extract(source, texts.get(row["path"], "").encode("utf-8")))
    root = store.root or Path(".")
    return Analysis.from_facts(root, facts, Manifests.from_json(store.meta.get("manifests")))
