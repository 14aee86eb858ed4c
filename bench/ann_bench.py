"""The semantic tier's ANN index against a flat scan, on a synthetic chunks table.

    PYTHONPATH=$PWD .venv/bin/python bench/ann_bench.py [--rows 200000] [--dim 256] [--queries 200]

Writes ROWS vectors of DIM float32 (clustered: 200 topics, ROWS/20 sub-topics around them, points around
those, each normalised, like sentence embeddings of code rather than uniform noise, on which no index can
beat a scan) to a LanceDB table in a temp dir, builds the index with the code a publish runs
(generator/index/vectors.py: ensure_vector_index), then queries both versions of the table through the
reader the answer engine uses (generator/index/reader.py: the version before the index is a flat scan, the
one after probes the index). Queries are table rows moved by a little noise. Prints the build time, p50/p99
latency of each, and the ANN's recall@10 against the flat scan's top 10.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import numpy as np
import pyarrow as pa

from generator.index.reader import open_table
from generator.index.vectors import ensure_vector_index, partitions, probe_settings


def _vectors(rows: int, dim: int, rng: np.random.Generator) -> np.ndarray:
    topics = rng.standard_normal((200, dim)).astype(np.float32)
    subs = topics[rng.integers(0, 200, max(1, rows // 20))] + 0.7 * rng.standard_normal(
        (max(1, rows // 20), dim)).astype(np.float32)
    out = np.empty((rows, dim), dtype=np.float32)
    for start in range(0, rows, 50_000):  # in slices: the noise of 500k x 256 at once is 0.5 GB
        n = min(50_000, rows - start)
        out[start:start + n] = subs[rng.integers(0, len(subs), n)] + 0.35 * rng.standard_normal(
            (n, dim)).astype(np.float32)
    out /= np.linalg.norm(out, axis=1, keepdims=True)
    return out


def _pct(values: list[float], q: float) -> float:
    return float(np.percentile(np.asarray(values) * 1000.0, q))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=200_000)
    parser.add_argument("--dim", type=int, default=256)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--k", type=int, default=10)
    args = parser.parse_args()
    import lancedb

    rng = np.random.default_rng(0)
    vectors = _vectors(args.rows, args.dim, rng)
    with tempfile.TemporaryDirectory(prefix="sb-ann-") as tmp:
        db = lancedb.connect(tmp)
        ids = pa.array([f"c{i}" for i in range(args.rows)])
        paths = pa.array([f"src/pkg{i % 500}/mod{i % 5000}.py" for i in range(args.rows)])
        column = pa.FixedSizeListArray.from_arrays(pa.array(vectors.ravel()), args.dim)
        started = time.perf_counter()
        tbl = db.create_table("chunks", pa.table({"id": ids, "path": paths, "vector": column}))
        write_s = time.perf_counter() - started
        flat_version = int(tbl.version)
        started = time.perf_counter()
        ensure_vector_index(tbl, "chunks", min_rows=1, rebuild=True)
        build_s = time.perf_counter() - started
        flat = open_table(tmp, "chunks", flat_version, {})
        ann = open_table(tmp, "chunks", int(tbl.version), {})
        assert ann.vector_indexed
        assert not flat.vector_indexed
        picks = rng.integers(0, args.rows, args.queries)
        queries = vectors[picks] + 0.05 * rng.standard_normal((args.queries, args.dim)).astype(np.float32)
        flat_s, ann_s, recall = [], [], []
        for q in queries:
            started = time.perf_counter()
            exact = flat.nearest(q.tolist(), ["id"], limit=args.k).column("id").to_pylist()
            flat_s.append(time.perf_counter() - started)
            started = time.perf_counter()
            approx = ann.nearest(q.tolist(), ["id"], limit=args.k).column("id").to_pylist()
            ann_s.append(time.perf_counter() - started)
            recall.append(len(set(exact) & set(approx)) / len(exact))
        # the server's in-memory ranking below the threshold: one matrix-vector product over every row
        mem_s = []
        for q in queries[:50]:
            started = time.perf_counter()
            d = (vectors @ q) * -2.0
            np.argpartition(d, args.k)[:args.k]
            mem_s.append(time.perf_counter() - started)
    print(f"rows={args.rows} dim={args.dim} partitions={partitions(args.rows)} "
          f"probe={probe_settings(args.rows, args.k)} queries={args.queries} k={args.k}")
    print(f"write table: {write_s:.1f}s   build ANN index (IVF_HNSW_SQ): {build_s:.1f}s")
    print(f"flat scan (LanceDB) : p50 {_pct(flat_s, 50):7.1f} ms   p99 {_pct(flat_s, 99):7.1f} ms")
    print(f"ANN index           : p50 {_pct(ann_s, 50):7.1f} ms   p99 {_pct(ann_s, 99):7.1f} ms")
    print(f"in-memory matrix    : p50 {_pct(mem_s, 50):7.1f} ms   p99 {_pct(mem_s, 99):7.1f} ms"
          "  (numpy, no I/O)")
    print(f"recall@{args.k} of ANN vs flat scan: mean {statistics.fmean(recall):.3f}, "
          f"min {min(recall):.1f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
