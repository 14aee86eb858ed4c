"""Cold CLI latency: `sourcebook ask --json` as an agent shelling out pays it, one new process per question.

    .venv/bin/python bench/cold_ask.py [--repo PATH ...] [--runs 5] [--questions 3] [--keep DIR]
        [--code DIR ...] [--ask QUESTION ...] [--as-is]

Each repository is cloned (git clone --shared, the checkout is never written to) into a temp dir and
indexed once with `sourcebook index`; then each of the first N development-set questions of that repository
is asked `runs` times in a fresh `python -m sourcebook.cli ask --json --no-cache` process. Prints the wall
time median / p90 per repository, plus the median of the engine's own `timings_ms.total` (the rest is
interpreter start, imports and opening the index) and the median CPU seconds of the ask process (user +
system: steadier than wall time on a busy machine). No provider is configured: the degraded path.
`--code DIR` (repeatable) runs that checkout of sourcebook (e.g. main before a change, then a branch): the
checkouts take turns question by question and run by run, so a busy machine slows them alike; one line
each. `--as-is` asks each --repo in place, against the index it already has (e.g. from `sourcebook build`):
nothing is cloned or indexed.
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


def _env(code: Path, work: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("SOURCEBOOK_LLM", "OPENAI")) and k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPATH"] = str(code) + os.pathsep + env.get("PYTHONPATH", "")
    # sourcebook's own modules compiled once, as an installed package has them (pip writes .pyc), kept out of
    # the checkout; otherwise every ask would recompile them from source (~0.1 s) when bytecode is off
    env["PYTHONPYCACHEPREFIX"] = str(work / "pycache")
    return env


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def _index(source: Path, work: Path, code: Path) -> tuple[Path, float]:
    clone = work / source.name
    if not clone.exists():
        subprocess.run(["git", "-c", "advice.detachedHead=false", "clone", "-q", "--shared", str(source),
                        str(clone)], check=True)
    started = time.perf_counter()
    # cwd outside any checkout: `python -m` puts the working directory before PYTHONPATH
    subprocess.run([sys.executable, "-m", "sourcebook.cli", "index", str(clone)], check=True,
                   env=_env(code, work), capture_output=True, cwd=work)
    return clone, time.perf_counter() - started


def _ask(repo: Path, question: str, code: Path, work: Path) -> tuple[float, float, float]:
    """One fresh `ask --json` process: (wall s, CPU s, the engine's own total s)."""
    t0 = time.perf_counter()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = subprocess.run([sys.executable, "-m", "sourcebook.cli", "ask", "--json", "--no-cache",
                           "--path", str(repo), question],
                          check=False, env=_env(code, work), capture_output=True, text=True, cwd=work)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise SystemExit(f"ask failed on {repo.name} with {code}: {done.stderr.strip()[-500:]}")
    reply = json.loads(done.stdout)
    return (wall, after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime,
            float(reply["_meta"]["timings_ms"].get("total", 0.0)) / 1000)


def bench_repo(source: Path, work: Path, runs: int, questions: list[str], codes: list[Path],
               as_is: bool = False) -> list[dict[str, float]]:
    """Figures per checkout in `codes`, which take turns on every question and run."""
    repo, index_s = (source, 0.0) if as_is else _index(source, work, codes[-1])
    samples: list[list[tuple[float, float, float]]] = [[] for _ in codes]
    for code in codes:
        _ask(repo, questions[0], code, work)  # untimed: writes the bytecode (and warms the page cache)
    for question in questions:
        for _ in range(runs):
            for i, code in enumerate(codes):
                samples[i].append(_ask(repo, question, code, work))
    out = []
    for sample in samples:
        walls, cpus, engine = ([s[k] for s in sample] for k in range(3))
        out.append({"index_s": index_s, "median_s": statistics.median(walls), "p90_s": _pct(walls, 0.9),
                    "cpu_median_s": statistics.median(cpus), "engine_median_s": statistics.median(engine),
                    "asks": len(walls)})
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--repo", action="append", type=Path, help="checkout to measure (repeatable)")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--questions", type=int, default=3)
    parser.add_argument("--keep", type=Path, default=None, help="work in DIR and keep the clones/indexes")
    parser.add_argument("--code", type=Path, action="append", default=[],
                        help="a sourcebook checkout to run (repeatable; default: this one)")
    parser.add_argument("--ask", action="append", default=[],
                        help="a question to ask (repeatable) instead of the development set's")
    parser.add_argument("--as-is", action="store_true",
                        help="ask each --repo in place, on the index it has (no clone, no indexing)")
    args = parser.parse_args()
    codes = [c.resolve() for c in args.code] or [HERE]
    repos = args.repo or DEFAULT_REPOS
    with tempfile.TemporaryDirectory(prefix="cold-ask-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        print(f"{'repo':<12} {'code':<24} {'asks':>5} {'median s':>9} {'p90 s':>7} {'cpu s':>6} "
              f"{'engine s':>9} {'index s':>8}")
        for repo in repos:
            asked = args.ask or _questions(repo.name, args.questions)
            if not asked:
                raise SystemExit(f"no development questions for {repo.name}: pass --ask QUESTION")
            figures = bench_repo(repo, work, args.runs, asked, codes, args.as_is)
            for code, r in zip(codes, figures, strict=True):
                print(f"{repo.name:<12} {str(code)[-24:]:<24} {r['asks']:>5.0f} {r['median_s']:>9.3f} "
                      f"{r['p90_s']:>7.3f} {r['cpu_median_s']:>6.2f} {r['engine_median_s']:>9.3f} "
                      f"{r['index_s']:>8.1f}")


if __name__ == "__main__":
    main()
