"""Cold CLI latency: `sourcebook ask --json` as an agent shelling out pays it, one new process per question.

    .venv/bin/python bench/cold_ask.py [--repo PATH ...] [--runs 5] [--questions 3] [--keep DIR] [--code DIR]
        [--ask QUESTION ...]

Each repository is cloned (git clone --shared, the checkout is never written to) into a temp dir and
indexed once with `sourcebook index`; then each of the first N development-set questions of that repository
is asked `runs` times in a fresh `python -m sourcebook.cli ask --json --no-cache` process. Prints the wall
time median / p90 per repository, plus the median of the engine's own `timings_ms.total` (the rest is
interpreter start, imports and opening the index) and the median CPU seconds of the ask process (user +
system: steadier than wall time on a busy machine). No provider is configured: the degraded path.
`--code DIR` runs another checkout of sourcebook (e.g. main before a change) for a side-by-side figure.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
DEV = Path("/work/shared/eval/dev/swe_qa_dev.jsonl")
DEFAULT_REPOS = [Path("/work/eval-repos/flask"), Path("/work/eval-repos/requests")]


def _questions(repo_name: str, n: int) -> list[str]:
    rows = [json.loads(line) for line in DEV.read_text().splitlines() if line.strip()]
    mine = [r["question"] for r in rows if r["repo"].split("/")[-1] == repo_name]
    return mine[:n]


def _env(code: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_LLM", "OPENAI"))}
    env["PYTHONPATH"] = str(code) + os.pathsep + env.get("PYTHONPATH", "")
    return env


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def bench_repo(source: Path, work: Path, runs: int, questions: list[str], code: Path) -> dict[str, float]:
    clone = work / source.name
    if not clone.exists():
        subprocess.run(["git", "-c", "advice.detachedHead=false", "clone", "-q", "--shared", str(source),
                        str(clone)], check=True)
    env = _env(code)
    started = time.perf_counter()
    # cwd outside any checkout: `python -m` puts the working directory before PYTHONPATH
    subprocess.run([sys.executable, "-m", "sourcebook.cli", "index", str(clone)], check=True, env=env,
                   capture_output=True, cwd=work)
    index_s = time.perf_counter() - started
    walls: list[float] = []
    cpus: list[float] = []
    engine: list[float] = []
    for question in questions:
        for _ in range(runs):
            t0 = time.perf_counter()
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            done = subprocess.run([sys.executable, "-m", "sourcebook.cli", "ask", "--json", "--no-cache",
                                   "--path", str(clone), question],
                                  check=False, env=env, capture_output=True, text=True, cwd=work)
            walls.append(time.perf_counter() - t0)
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
            if done.returncode != 0:
                raise SystemExit(f"ask failed on {source.name}: {done.stderr.strip()[-500:]}")
            reply = json.loads(done.stdout)
            engine.append(float(reply["_meta"]["timings_ms"].get("total", 0.0)) / 1000)
    return {"index_s": index_s, "median_s": statistics.median(walls), "p90_s": _pct(walls, 0.9),
            "cpu_median_s": statistics.median(cpus),
            "engine_median_s": statistics.median(engine), "asks": len(walls)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repo", action="append", type=Path, help="checkout to measure (repeatable)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="work in DIR and keep the clones/indexes")
    parser.add_argument("--code", type=Path, default=HERE, help="the sourcebook checkout to run")
    parser.add_argument("--ask", action="append", default=[],
                        help="a question to ask (repeatable) instead of the development set's")
    args = parser.parse_args()
    repos = args.repo or DEFAULT_REPOS
    with tempfile.TemporaryDirectory(prefix="cold-ask-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        print(f"{'repo':<12} {'asks':>5} {'median s':>9} {'p90 s':>7} {'cpu s':>6} {'engine s':>9} "
              f"{'index s':>8}")
        for repo in repos:
            asked = args.ask or _questions(repo.name, args.questions)
            if not asked:
                raise SystemExit(f"no development questions for {repo.name}: pass --ask QUESTION")
            r = bench_repo(repo, work, args.runs, asked, args.code.resolve())
            print(f"{repo.name:<12} {r['asks']:>5.0f} {r['median_s']:>9.3f} {r['p90_s']:>7.3f} "
                  f"{r['cpu_median_s']:>6.2f} {r['engine_median_s']:>9.3f} {r['index_s']:>8.1f}")


if __name__ == "__main__":
    main()
