"""The semantic tier's ANN index: built by a publish past config.ann_min_rows, extended by later publishes,
and searched by the semantic tier (one-shot and in-memory readers alike), still finding the right file."""

from __future__ import annotations

import hashlib
import re
from pathlib import Path

import numpy as np
import pytest

from answer.retrieval.tiers import search_codebase, use_in_memory_ranking
from generator.index.command import index_repository
from generator.index.store import open_index
from generator.index.vectors import ensure_vector_index, has_vector_index, probe_settings
from sourcebook.config import DEFAULT_ANN_MIN_ROWS, load_config
from tests.support.index_repos import FakeEmbedder

# 60 files x 5 functions, each named by its own made-up word: a query of that word has one right file, and
# the chunks table gets a few hundred rows
FILES, FUNCS = 60, 5
THRESHOLD = 250


def _token(i: int, j: int) -> str:
    n = i * FUNCS + j
    return "tok" + chr(97 + n // 26) + chr(97 + n % 26)


class WordVectorEmbedder(FakeEmbedder):
    """Each word a fixed random direction (seeded by its hash), a text the normalised sum of its words': dense
    vectors like a real model's (a hashed bag of words collides; one-hot vectors are all equally far apart,
    which no graph index navigates), where a function's own word makes its chunk the exact nearest."""

    def __init__(self) -> None:
        super().__init__(dim=64, name="wordvec")

    def embed(self, texts: list[str]) -> np.ndarray:
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for i, text in enumerate(texts):
            for word in re.findall(r"[a-z]+", text.lower()):
                seed = int(hashlib.md5(word.encode()).hexdigest()[:8], 16)
                weight = 1.0 if word.startswith("tok") else 0.2
                out[i] += weight * np.random.default_rng(seed).standard_normal(self.dim).astype(np.float32)
            norm = np.linalg.norm(out[i])
            out[i] = out[i] / norm if norm else out[i]
        return out


def _files(n: int = FILES) -> dict[str, str]:
    files = {}
    for i in range(n):
        funcs = []
        for j in range(FUNCS):
            tok = _token(i, j)
            body = "".join(f"    x = x * {k} + {i * 10 + j}\n" for k in range(12))  # long enough not to merge
            funcs.append(f"def {tok}(x):\n    \"\"\"{tok} handles one case.\"\"\"\n{body}    return x\n")
        files[f"pkg/mod{i:02d}.py"] = "\n\n".join(funcs)
    return files


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("annrepo")
    _write(root, _files())
    return root


def test_threshold_is_a_config_and_env_knob(tmp_path: Path) -> None:
    assert load_config(tmp_path).ann_min_rows == DEFAULT_ANN_MIN_ROWS == 100_000
    assert load_config(tmp_path, env={"SOURCEBOOK_ANN_MIN_ROWS": "300"}).ann_min_rows == 300
    assert load_config(tmp_path, {"ann_min_rows": 42}).ann_min_rows == 42


def test_no_index_below_the_threshold(repo: Path, tmp_path: Path) -> None:
    config = load_config(repo, {"out_dir": str(tmp_path / "small")})
    index_repository(config, embedder=WordVectorEmbedder())
    store = open_index(config, embedder=WordVectorEmbedder())
    assert store.count("chunks") < DEFAULT_ANN_MIN_ROWS
    assert not store.vector_indexed("chunks")
    assert not has_vector_index(store.table("chunks"))


def test_index_built_past_the_threshold_and_queries_find_the_file(repo: Path) -> None:
    config = load_config(repo, {"ann_min_rows": THRESHOLD})
    index_repository(config, embedder=WordVectorEmbedder())
    store = open_index(config, embedder=WordVectorEmbedder())
    assert store.count("chunks") >= THRESHOLD
    assert store.vector_indexed("chunks")
    assert not store.vector_indexed("pages") or store.count("pages") >= THRESHOLD
    # the reader's own query plan goes through the index (a flat scan has no ANN node)
    reader = store.tables["chunks"]
    query = {"column": "vector", "q": [0.0] * store.dim, "k": 10, **probe_settings(store.count("chunks"), 10)}
    assert "ANNSubIndex" in reader._ds.scanner(columns=["id"], nearest=query).explain_plan()
    for i, j in ((3, 1), (17, 4), (42, 0), (59, 2)):
        result = search_codebase(store, f"{_token(i, j)} handles", type="semantic")
        assert (result.hits[0].path, result.hits[0].symbol) == (f"pkg/mod{i:02d}.py", _token(i, j))
        assert f"pkg/mod{i:02d}.py" in [f.path for f in result.files[:3]]
    # a server (in-memory ranking) also goes through the index, not a matrix of the whole table
    served = open_index(config, embedder=WordVectorEmbedder())
    use_in_memory_ranking(served)
    result = search_codebase(served, f"{_token(6, 0)} handles", type="semantic")
    assert (result.hits[0].path, result.hits[0].symbol) == ("pkg/mod06.py", _token(6, 0))
    assert not served.memos.get(_vector_memo())


def _vector_memo():  # the semantic tier's matrix memo: None (not built) when the table has its ANN index
    from generator.index.memos import Memo

    return Memo("vectors:chunks")


def test_a_later_publish_extends_the_index(repo: Path, tmp_path: Path) -> None:
    root = tmp_path / "grow"
    _write(root, _files())
    config = load_config(root, {"ann_min_rows": THRESHOLD})
    index_repository(config, embedder=WordVectorEmbedder())
    (root / "pkg/extra.py").write_text(_files()["pkg/mod07.py"], encoding="utf-8")  # mod07's words again
    (root / "pkg/mod00.py").unlink()
    index_repository(config, embedder=WordVectorEmbedder())
    store = open_index(config, embedder=WordVectorEmbedder())
    assert store.vector_indexed("chunks")
    indices = store.table("chunks").list_indices()
    vector_ix = next(ix for ix in indices if "vector" in ix.columns)
    assert vector_ix.num_unindexed_rows == 0  # optimize() folded the new rows into the index
    found = {h.path for h in search_codebase(store, f"{_token(7, 2)} handles", type="semantic").hits[:2]}
    assert found == {"pkg/extra.py", "pkg/mod07.py"}
    gone = search_codebase(store, f"{_token(0, 1)} handles", type="semantic")
    assert gone.hits
    assert all(h.path != "pkg/mod00.py" for h in gone.hits)


def test_a_table_without_vectors_gets_no_index(tmp_path: Path) -> None:
    import lancedb
    import pyarrow as pa

    ids = pa.table({"id": [str(i) for i in range(500)]})
    tbl = lancedb.connect(str(tmp_path)).create_table("chunks", ids)
    assert ensure_vector_index(tbl, "chunks", 10, rebuild=True) is False
    assert ensure_vector_index(tbl, "symbols", 10, rebuild=True) is False
