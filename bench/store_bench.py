"""The index on object storage vs on local disk, same tree: build time and warm get_answer latency.

    .venv/bin/python bench/store_bench.py [--repo /work/eval-repos/flask] [--questions N] [--rounds R]
        [--embedder default|none]

The object store is moto's S3 server on 127.0.0.1 (tests/support/object_store.py: the one the tests use), so
the figures are the S3 protocol's overhead over loopback, not a cloud bucket's network latency. Three readers:
  local         index on disk, checkout present (today's default)
  s3            index in the bucket, checkout present (CI-built index, developer's machine)
  s3-detached   index in the bucket, no checkout (a stateless server: bodies from the index)
Build: `sourcebook build --no-llm --no-site` into each location, then a no-change rebuild (own processes).
Answers: one warm server-like process per reader (Tools.warm, as `sourcebook serve` does), no LLM provider
(the degraded path: everything but synthesis, which does not touch the index), answer cache off; the first
round warms, later rounds are timed. Medians side by side; the issue's target: s3 p50 <= 2x local.
The checkout is never written to (output folders in a temp dir).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from answer.serving.tools import Tools
from answer.serving.workspace import detached, single
from tests.support.object_store import AWS_KEYS, MotoS3

QA = Path("/work/shared/eval/dev/swe_qa_dev.jsonl")
FALLBACK_QUESTIONS = ["How does the app dispatch a request to a view function?",
                      "Where are blueprints registered?", "How is the JSON provider chosen?",
                      "What does url_for do when building an external URL?",
                      "How are session cookies signed?"]


def _questions(repo: Path, limit: int) -> list[str]:
    name = repo.name
    if QA.is_file():
        rows = [json.loads(line) for line in QA.read_text().splitlines() if line.strip()]
        picked = [r["question"] for r in rows if r.get("repo", "").endswith("/" + name)][:limit]
        if picked:
            return picked
    return FALLBACK_QUESTIONS[:limit]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _build(repo: Path, out: Path, index_uri: str, embedder: str) -> tuple[float, float]:
    """Wall seconds of a full `sourcebook build` and of a no-change rebuild into `index_uri`, each in its
    own interpreter (the CLI a CI job runs), so neither pays or saves the other's imports and caches."""
    env = {**os.environ, "SOURCEBOOK_EMBEDDER": embedder, "NO_MKDOCS_2_WARNING": "1",
           "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    command = [sys.executable, "-m", "sourcebook.cli", "build", str(repo), "--out", str(out), "--index-uri",
               index_uri, "--no-site", "--no-llm"]
    times = []
    for _ in range(2):
        started = time.perf_counter()
        subprocess.run(command, env=env, check=True, capture_output=True)
        times.append(time.perf_counter() - started)
    return times[0], times[1]


def _answers(tools: Tools, questions: list[str], rounds: int) -> dict[str, Any]:
    started = time.perf_counter()
    tools.warm(graph=True)
    warm_s = time.perf_counter() - started
    timed: list[float] = []
    retrieve: list[float] = []
    for round_no in range(rounds + 1):
        for question in questions:
            t0 = time.perf_counter()
            reply = tools.get_answer(question)
            took = (time.perf_counter() - t0) * 1000
            if round_no:  # round 0 warms every code path and cache
                timed.append(took)
                retrieve.append(float(reply["_meta"]["timings_ms"].get("retrieve", 0.0)))
    return {"warm_s": warm_s, "p50": statistics.median(timed), "p90": _pct(timed, 0.9),
            "retrieve_p50": statistics.median(retrieve), "n": len(timed)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--repo", default="/work/eval-repos/flask")
    parser.add_argument("--questions", type=int, default=12)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--embedder", default="default", choices=["default", "none"])
    args = parser.parse_args()
    repo = Path(args.repo).resolve()
    questions = _questions(repo, args.questions)
    for key in AWS_KEYS:
        os.environ.pop(key, None)
    for key in [k for k in os.environ if k.startswith(("SOURCEBOOK_", "OPENAI_"))]:
        os.environ.pop(key)  # no LLM provider: the degraded path, the same on every reader
    with tempfile.TemporaryDirectory(prefix="store-bench-") as tmp, MotoS3() as s3:
        base = Path(tmp)
        os.environ["XDG_STATE_HOME"] = str(base / "state")
        os.environ.update(s3.env)
        local_uri = str(base / "local-index")
        s3_uri = s3.bucket() + f"/{repo.name}/index"
        builds = {"local": _build(repo, base / "out-local", local_uri, args.embedder),
                  "s3": _build(repo, base / "out-s3", s3_uri, args.embedder)}
        readers = {
            "local": Tools(single(repo, overrides={"out_dir": str(base / "out-local"), "index_uri": local_uri,
                                                   "embed": {"provider": args.embedder}})),
            "s3": Tools(single(repo, overrides={"out_dir": str(base / "out-s3"), "index_uri": s3_uri,
                                                "embed": {"provider": args.embedder}})),
        }
        os.environ["SOURCEBOOK_EMBEDDER"] = args.embedder
        readers["s3-detached"] = Tools(detached(s3_uri))
        results = {name: _answers(tools, questions, args.rounds) for name, tools in readers.items()}

    print(f"tree: {repo} ({len(questions)} questions x {args.rounds} timed rounds, embedder {args.embedder}; "
          f"S3 = moto on 127.0.0.1)")
    print(f"{'':14}{'full build':>12}{'no-change':>12}")
    for name, (full, again) in builds.items():
        print(f"{name:14}{full:>11.2f}s{again:>11.2f}s")
    print(f"\n{'warm get_answer':16}{'open+warm':>10}{'p50 ms':>9}{'p90 ms':>9}{'retrieve p50':>14}"
          f"{'x local':>9}")
    base_p50 = results["local"]["p50"]
    for name, r in results.items():
        print(f"{name:16}{r['warm_s']:>9.2f}s{r['p50']:>9.1f}{r['p90']:>9.1f}{r['retrieve_p50']:>14.1f}"
              f"{r['p50'] / base_p50:>8.2f}x")


if __name__ == "__main__":
    main()
