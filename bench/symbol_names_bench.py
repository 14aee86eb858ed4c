"""The symbolic tier's name lookups (exact, prefix, fuzzy) on a synthetic symbol table, without LanceDB.

    PYTHONPATH=$PWD .venv/bin/python bench/symbol_names_bench.py [--files 20000] [--queries 100]

Symbols shaped like bench/orgs_load.py's synthetic modules (7 a file: a class, its method, a helper and four
functions); the queries name a helper that mostly does not exist (the fuzzy path) plus a few prefixes and
typos. Prints the name index's build time and p50/p99 of answer.retrieval.tiers._name_matches.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from answer.retrieval import tiers as search
from generator.index.memos import Memos

WORDS = ("parse", "render", "cache", "token", "session", "route", "config", "loader", "buffer", "stream",
         "socket", "retry", "queue", "worker", "schema", "record", "ledger", "invoice", "engine", "signal",
         "filter", "matrix", "vector", "graph", "index", "shard")


def symbols(files: int) -> list[dict[str, Any]]:
    rng = random.Random(7)
    out = []

    def sym(path: str, qualname: str, kind: str) -> dict[str, Any]:
        return {"path": path, "qualname": qualname, "name": qualname.rsplit(".", 1)[-1], "kind": kind,
                "start_line": 1, "end_line": 2, "signature": "", "docstring": "", "docstring_source": ""}

    for n in range(files):
        a, b, c = rng.sample(WORDS, 3)
        path = f"pkg{n // 500}/mod{n}.py"
        cls = f"{a.capitalize()}{b.capitalize()}{n}"
        out += [sym(path, cls, "class"), sym(path, f"{cls}.{c}", "method"),
                sym(path, f"{a}_helper_{n}", "function")]
        out += [sym(path, f"{rng.choice(WORDS)}_{rng.choice(WORDS)}_{n}_{k}", "function") for k in range(4)]
    return out


class _Store:
    def __init__(self) -> None:
        self.memos = Memos()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=20_000)
    parser.add_argument("--queries", type=int, default=100)
    args = parser.parse_args()
    store: Any = _Store()
    rows = store.memos.put(search._SYMBOL_ROWS, symbols(args.files))
    began = time.perf_counter()
    search._name_index(store)
    print(f"{len(rows)} symbols; name index built in {time.perf_counter() - began:.2f} s")
    rng = random.Random(3)
    queries = [f"{rng.choice(WORDS)}_helper_{rng.randrange(args.files)}" for _ in range(args.queries)]
    queries += ["Cache", "parse_rend", "ConfigLoader12", "tokn_helper", "retry the queue", "TokenSessin5"]
    took = []
    for query in queries:
        began = time.perf_counter()
        search._name_matches(store, query, None)
        took.append(time.perf_counter() - began)
    took.sort()
    print(f"{len(took)} queries: p50 {1000 * took[len(took) // 2]:.1f} ms, "
          f"p99 {1000 * took[min(len(took) - 1, int(0.99 * len(took)))]:.1f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
