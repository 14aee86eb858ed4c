"""Repositories and an embedder for the index tests: a small package with docs and a test (SMALL_REPO), a
bigger one whose rows stream in many batches (STREAM_REPO, `edit_stream_repo`), a deterministic hashing
embedder that counts its calls, and `published`: everything an index publishes, as a reader opens it."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from generator.index import rows as index_rows
from generator.index import store as ix
from generator.index.reader import open_table
from generator.index.store import open_index
from generator.index.tokens import token_text
from sourcebook.config import Config

SMALL_REPO = {
    "pkg/config.py": '"""Configuration loading."""\n\n\nclass Config(dict):\n    """Holds settings."""\n\n'
                     "    def from_file(self, filename, load):\n        with open(filename) as fh:\n"
                     "            return self.update(load(fh))\n",
    "pkg/app.py": "from pkg.config import Config\n\n\ndef create_app():\n    app = {}\n"
                  "    app['config'] = Config()\n    return app\n",
    "docs/usage.md": ("# Usage\n\nCall create_app to build the application.\n\n## Settings\n\n"
                      "Use from_file.\n"),
    "tests/test_app.py": "from pkg.app import create_app\n\n\ndef test_create_app():\n"
                         "    assert create_app()\n",
}


class FakeEmbedder:
    """Deterministic bag-of-words hashing vectors; counts what it is asked to embed."""

    def __init__(self, dim: int = 32, name: str = "fake") -> None:
        self._dim = dim
        self._name = name
        self.calls: list[str] = []

    @property
    def id(self) -> str:
        return f"{self._name}-{self._dim}"

    @property
    def dim(self) -> int:
        return self._dim

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.extend(texts)
        out = np.zeros((len(texts), self._dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"[a-z]+", text.lower()):
                out[i, int(hashlib.md5(word.encode()).hexdigest(), 16) % self._dim] += 1.0
            norm = np.linalg.norm(out[i])
            out[i] = out[i] / norm if norm else out[i]
        return out


def _module(n: int) -> str:
    body = "\n\n".join(
        f"def handler_{n}_{k}(request, retries={k}):\n"
        f"    \"\"\"Handle request {k} of module {n}: parse the payload and retry.\"\"\"\n"
        f"    payload = request.get('payload_{k}')\n"
        f"    return [payload] * retries\n" for k in range(6))
    return f'"""Module {n}: request handlers for the zone{n % 3} service."""\n\n{body}\n'


STREAM_REPO = {
    **{f"svc/mod_{n}.py": _module(n) for n in range(14)},
    **{f"docs/guide_{n}.md": f"# Guide {n}\n\nHow to configure zone{n} retries.\n\n## Payloads\n\n"
                               f"Payload {n} is parsed by handler_{n}_0.\n" for n in range(5)},
    "README.md": "# Service\n\nRequest handlers with retries.\n",
}
STREAM_QUERIES = ("retries payload", "zone1 service", "handler_3_2", "configure guide", "quokka added")


def published(config: Config, embedder: Any = "config", *, ordered: bool = True) -> str:
    """Everything the index publishes, as a reader opens it: every table's rows (vectors included; in
    storage order, or sorted by key when not `ordered`: an incremental run appends what it rewrote), the
    meta row but for what each run draws afresh, every full-text hit with its score, and the nearest rows."""
    store = open_index(config, embedder=embedder)
    out: dict[str, Any] = {"meta": {k: v for k, v in store.meta.items()
                                    if k not in ("updated_at", "index_id", "owner", "versions", "fts_drift",
                                                 "sums")}}
    for name in ix.DATA_TABLES:
        key = index_rows.KEY_COLUMN[name]
        rows = store.rows(name, store.tables[name].schema.names)
        for row in rows:
            if row.get("vector") is not None:
                row["vector"] = np.asarray(row["vector"], dtype=np.float32).tobytes().hex()
        out[name] = rows if ordered else sorted(rows, key=lambda row: row[key])
        out[f"fts:{name}"] = {q: sorted((r[key], round(r["_score"], 4))
                                        for r in store.fts(name, token_text(q), [key], limit=1000))
                              for q in STREAM_QUERIES}
        if store.vector_dim(name) and store.embedder is not None:
            out[f"near:{name}"] = {q: sorted((r[key], round(r["_distance"], 4)) for r in store.nearest(
                name, store.embedder.embed([q])[0].tolist(), [key], limit=1000)) for q in STREAM_QUERIES}
    version = store.meta["versions"].get(ix.CACHE_TABLE)
    if version is not None:
        cache = open_table(store.uri, ix.CACHE_TABLE, int(version), {})
        out["cache"] = cache.scan(["id", "key", "value", "sha"]).to_pylist()
    return json.dumps(out, sort_keys=True)


def edit_stream_repo(repo: Path) -> None:
    """Seven of STREAM_REPO's modules changed (each gains a function), one deleted."""
    for n in range(0, 14, 2):
        path = repo / f"svc/mod_{n}.py"
        path.write_text(path.read_text() + f"\n\ndef added_{n}():\n    return 'quokka {n}'\n")
    (repo / "svc/mod_13.py").unlink()
