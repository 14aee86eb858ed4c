"""Outputs unchanged: a build of flask's pinned sdist (tests/support/real_repos.py, extractive) writes the
docs/, site/ and index rows recorded in tests/fixtures/golden/flask_build.json.

What it covers: every file under docs/ and site/, byte for byte (a gzip file by its uncompressed bytes: its
header carries the build's date), and every row of the index's chunks, files, pages and symbols tables (in
id order, vectors rounded to 5 decimals so a CPU's last bit does not count). What it does not: the index's
meta row and build-cache table (code versions, the checkout's path, random ids and timestamps: they change
with any edit of the code, by design), site/.sourcebook-owned (a mark keyed by this machine and folder),
mkdocs.yml (it names the hooks' absolute path), theme/, state/ and cache/ (inputs of the next build, covered
by the build's own tests).

A change that alters the output on purpose records the new output in the same commit:
`SOURCEBOOK_UPDATE_GOLDEN=1 pytest tests/e2e/test_build_golden.py`; the failure lists what differs.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path
from typing import Any

import pytest

GOLDEN = Path(__file__).resolve().parents[1] / "fixtures" / "golden" / "flask_build.json"
TABLES = ("chunks", "files", "pages", "symbols")
UNRECORDED = {"site/.sourcebook-owned"}
ROW_ID = {"chunks": "id", "files": "path", "pages": "id", "symbols": "id"}


def _file_digest(path: Path) -> str:
    data = path.read_bytes()
    if path.suffix == ".gz":
        data = gzip.decompress(data)
    return hashlib.sha256(data).hexdigest()[:16]  # 64 bits: enough to tell files apart, half the record


def _plain(value: Any) -> Any:
    """A row's value as JSON can hold it: arrays as lists, floats rounded."""
    if hasattr(value, "tolist"):
        value = value.tolist()
    if isinstance(value, float):
        return round(value, 5)
    if isinstance(value, list):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    return value


def outputs(out_dir: Path) -> dict[str, Any]:
    """The digest of each recorded output file and index table of a build's output folder."""
    import lancedb

    record: dict[str, Any] = {"files": {}, "tables": {}}
    for folder in ("docs", "site"):
        for path in sorted((out_dir / folder).rglob("*")):
            name = path.relative_to(out_dir).as_posix()
            if path.is_file() and name not in UNRECORDED:
                record["files"][name] = _file_digest(path)
    db = lancedb.connect(str(out_dir / "index"))
    for table in TABLES:
        rows = sorted(db.open_table(table).to_arrow().to_pylist(), key=lambda row: row[ROW_ID[table]])
        digest = hashlib.sha256()
        for row in rows:
            digest.update(json.dumps(_plain(row), sort_keys=True).encode() + b"\n")
        record["tables"][table] = {"rows": len(rows), "sha256": digest.hexdigest()}
    return record


def differences(golden: dict[str, Any], now: dict[str, Any]) -> list[str]:
    out = []
    for name in sorted(set(golden["files"]) | set(now["files"])):
        if name not in now["files"]:
            out.append(f"{name}: no longer written")
        elif name not in golden["files"]:
            out.append(f"{name}: new")
        elif golden["files"][name] != now["files"][name]:
            out.append(f"{name}: other bytes")
    for table in TABLES:
        if golden["tables"].get(table) != now["tables"][table]:
            out.append(f"index table {table}: {golden['tables'].get(table)} -> {now['tables'][table]}")
    return out


@pytest.mark.slow
def test_a_real_repository_build_writes_the_recorded_outputs(flask_repo: Path, tmp_path: Path) -> None:
    from generator.build import build
    from sourcebook.config import load_config

    out = tmp_path / "out"
    report = build(load_config(flask_repo, overrides={"out_dir": str(out)}))
    assert report.index is not None
    assert report.site_built
    now = outputs(out)
    if os.environ.get("SOURCEBOOK_UPDATE_GOLDEN"):
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(json.dumps(now, indent=0, sort_keys=True) + "\n")
    golden = json.loads(GOLDEN.read_text())
    assert len(now["files"]) > 500  # docs and site of some 250 pages
    assert differences(golden, now) == []


def test_a_changed_byte_or_row_is_a_difference(tmp_path: Path) -> None:
    golden = {"files": {"docs/a.md": "1", "site/a.html": "2"},
              "tables": {t: {"rows": 1, "sha256": t} for t in TABLES}}
    now = json.loads(json.dumps(golden))
    assert differences(golden, now) == []
    now["files"]["docs/a.md"] = "3"
    now["files"]["site/b.html"] = "4"
    del now["files"]["site/a.html"]
    now["tables"]["pages"] = {"rows": 2, "sha256": "x"}
    assert differences(golden, now) == [
        "docs/a.md: other bytes", "site/a.html: no longer written", "site/b.html: new",
        "index table pages: {'rows': 1, 'sha256': 'pages'} -> {'rows': 2, 'sha256': 'x'}"]
    gz = tmp_path / "s.xml.gz"
    with gzip.GzipFile(gz, "wb", mtime=1) as f:
        f.write(b"<urlset/>")
    first = _file_digest(gz)
    with gzip.GzipFile(gz, "wb", mtime=2) as f:  # another day's build: the same sitemap
        f.write(b"<urlset/>")
    assert _file_digest(gz) == first
