"""The semantic tier's approximate-nearest-neighbour index, built by a publish once a table is big enough.

Why a threshold: below it a query is a flat scan of the vectors (or, in a server, one matrix-vector product
in memory, answer/retrieval/tiers.py), exact and fast enough; above it the scan's cost grows with the table
while an
IVF_HNSW_SQ index's stays nearly flat (bench/ann_bench.py measures both). Training the index is the
expensive part of a publish at that size, so small repositories never pay it.

Why IVF_HNSW_SQ (LanceDB's IVF partitions, an HNSW graph inside each, 8-bit scalar-quantised vectors): of the
two LanceDB vector indexes, IVF_PQ's product codes (32 sub-vectors of a 256-dim vector) lost more of the
ranking than a refine step gave back; HNSW over scalar-quantised vectors keeps the order closer to the
exact one, and the refine step re-ranks its shortlist with the stored float32 vectors (exact L2 distances,
the same metric as the flat search, so the scores keep their meaning across the threshold).

A publish adds new rows to an existing index (`optimize()` folds them into its partitions); a rebuilt or
restored index, or one with no vector index yet, trains it from scratch. Readers (generator/index/reader.py)
see whether a table has the index and then search it with the probe settings below.
"""

from __future__ import annotations

import logging
import math
import time
from typing import Any

from sourcebook.config import DEFAULT_ANN_MIN_ROWS

log = logging.getLogger(__name__)

ANN_MIN_ROWS = DEFAULT_ANN_MIN_ROWS  # config.ann_min_rows / SOURCEBOOK_ANN_MIN_ROWS override it
VECTOR_TABLES = ("chunks", "pages")  # the tables with a vector column
ROWS_PER_PARTITION = 4096  # IVF partitions: fewer than LanceDB's sqrt(rows) default, each a small HNSW graph
PROBE_FRACTION = 0.1  # of the partitions a query visits
MIN_PROBES = 4
EF = 120  # HNSW candidates kept per visited partition
REFINE_FACTOR = 4  # the shortlist (k x this) is re-ranked with the stored float32 vectors


def partitions(rows: int) -> int:
    """IVF partitions for a table of `rows` rows."""
    return max(1, rows // ROWS_PER_PARTITION)


def probe_settings(rows: int, limit: int) -> dict[str, int]:
    """What a query for `limit` rows on an indexed table of about `rows` rows passes to Lance's nearest
    search (HNSW needs ef at least the shortlist it returns: limit x the refine factor)."""
    nprobes = max(MIN_PROBES, math.ceil(partitions(rows) * PROBE_FRACTION))
    return {"nprobes": min(nprobes, partitions(rows)), "ef": max(EF, limit * REFINE_FACTOR),
            "refine_factor": REFINE_FACTOR}


def has_vector_index(tbl: Any) -> bool:
    """Whether LanceDB table `tbl` has an index on its vector column."""
    return any("vector" in (getattr(ix, "columns", None) or []) for ix in tbl.list_indices())


def ensure_vector_index(tbl: Any, name: str, min_rows: int, rebuild: bool) -> bool:
    """Give `tbl` (table `name`) an ANN index on `vector` when it holds at least `min_rows` rows: trained
    anew when it has none or `rebuild` (a fresh index), else left for `optimize()` to extend. Returns
    whether the table has the index afterwards. A table without a vector column (no embedder) has none."""
    if name not in VECTOR_TABLES or tbl.schema.get_field_index("vector") < 0:
        return False
    rows = tbl.count_rows()
    has = has_vector_index(tbl)
    if rows < min_rows:
        return has  # an index built when the table was bigger still serves; dropping it would cost a rebuild
    if has and not rebuild:
        return True
    started = time.perf_counter()
    # LanceDB's own arguments (no import of its index configuration: store.py alone imports lancedb)
    tbl.create_index(metric="l2", index_type="IVF_HNSW_SQ", num_partitions=partitions(rows),
                     vector_column_name="vector", replace=True)
    log.info("index: ANN index on %s (%d rows, %d partitions) in %.1fs", name, rows, partitions(rows),
             time.perf_counter() - started)
    return True
