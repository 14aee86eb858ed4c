"""Bounded load against the HTTP API on 127.0.0.1, and MCP stdio start-up, on an indexed checkout.

    .venv/bin/python bench/http_load.py [--repo /work/eval-repos/flask] [--clients 8] [--seconds 30]

The checkout is never written to: the index goes to a temporary out_dir through a workspace file. Phases:
1. cold index of the checkout (the `index` tool), 2. `sourcebook serve` in a subprocess, warmed up,
3. N clients in a closed loop for S seconds on `GET /ask` (degraded: no LLM configured), then on `/search`,
each cycling through the development questions, 4. server RSS before and after, 5. `sourcebook mcp` over
stdio: process start to the first tool answer, median of 3. Prints medians; asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
QUESTIONS = Path("/work/shared/eval/dev/swe_qa_dev.jsonl")


def _questions(repo_name: str) -> list[str]:
    if not QUESTIONS.is_file():
        return ["how is the configuration loaded", "where are errors handled", "how does routing work"]
    rows = [json.loads(line) for line in QUESTIONS.read_text().splitlines() if line.strip()]
    picked = [r["question"] for r in rows if r["repo"].endswith("/" + repo_name)]
    return picked or [r["question"] for r in rows]


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _rss_tree_mb(pid: int) -> float:
    """RSS of the server and its worker processes."""
    total = _rss_mb(pid)
    children = Path(f"/proc/{pid}/task/{pid}/children")
    if children.is_file():
        for child in children.read_text().split():
            total += _rss_tree_mb(int(child))
    return total


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


def _load(url: str, path: str, param: str, questions: list[str], clients: int, seconds: float,
          unique: bool = False) -> dict:
    """Closed loop: each client sends its next request as soon as the previous one returns.

    unique=True varies `limit` on every pass through the questions, so no request repeats an earlier one
    and the server's search cache never answers (the work measured is real retrieval).
    """
    latencies: list[float] = []
    errors: list[str] = []
    lock = threading.Lock()
    deadline = time.monotonic() + seconds

    def worker(offset: int) -> None:
        with httpx.Client(base_url=url, timeout=30) as client:
            i = offset
            while time.monotonic() < deadline:
                q = questions[i % len(questions)]
                params: dict[str, str | int] = {param: q}
                if unique and path == "/search":
                    params["limit"] = 1 + (i // len(questions)) % 100
                i += clients
                started = time.perf_counter()
                try:
                    response = client.get(path, params=params)
                    ok = response.status_code == 200
                    detail = f"{response.status_code} {response.text[:120]}"
                except httpx.HTTPError as exc:
                    ok, detail = False, repr(exc)
                elapsed = (time.perf_counter() - started) * 1000
                with lock:
                    latencies.append(elapsed)
                    if not ok:
                        errors.append(detail)

    threads = [threading.Thread(target=worker, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return {"requests": len(latencies), "errors": len(errors), "first_error": errors[0] if errors else "",
            "p50_ms": statistics.median(latencies) if latencies else float("nan"),
            "p90_ms": _pct(latencies, 0.9), "p99_ms": _pct(latencies, 0.99),
            "rps": len(latencies) / seconds}


def _single(url: str, path: str, param: str, questions: list[str]) -> float:
    """Median latency of one client, one request at a time (the service time without queueing)."""
    times = []
    with httpx.Client(base_url=url, timeout=30) as client:
        for q in questions:
            started = time.perf_counter()
            client.get(path, params={param: q}).raise_for_status()
            times.append((time.perf_counter() - started) * 1000)
    return statistics.median(times)


def _mcp_start(workspace: Path, env: dict[str, str]) -> float:
    from mcp import Client, StdioServerParameters

    params = StdioServerParameters(command=sys.executable, env=env, cwd=str(ROOT),
                                   args=["-m", "sourcebook.cli", "mcp", str(workspace)])

    async def run() -> float:
        started = time.perf_counter()
        async with Client(params) as client:
            result = await client.call_tool("search_codebase", {"query": "how is the configuration loaded"})
            elapsed = time.perf_counter() - started
            if result.is_error:
                raise RuntimeError(result.content)
        return elapsed

    return asyncio.run(run())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repo", default="/work/eval-repos/flask")
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--embedder", default=None, help="embed provider override (default: configured)")
    parser.add_argument("--workers", type=int, default=1, help="sourcebook serve --workers")
    parser.add_argument("--soak", type=int, default=0,
                        help="extra rounds of unique /ask + /search load, printing RSS after each (memory)")
    args = parser.parse_args()

    sys.path.insert(0, str(ROOT))
    from answer.serving.tools import Tools
    from answer.serving.workspace import WORKSPACE_FILE, load_workspace

    repo = Path(args.repo).resolve()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_LLM", "OPENAI_"))}
    if args.embedder:
        env["SOURCEBOOK_EMBEDDER"] = args.embedder
    questions = _questions(repo.name)
    print(f"load average at start: {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")
    with tempfile.TemporaryDirectory(prefix="sb-http-bench-") as tmp:
        workspace = Path(tmp) / WORKSPACE_FILE
        workspace.write_text(f'[repos.{repo.name}]\npath = "{repo}"\nout_dir = "{Path(tmp) / "out"}"\n')
        started = time.perf_counter()
        report = Tools(load_workspace(workspace, env=env)).index()["report"]
        print(f"cold index of {repo.name}: {report['files_indexed']} files, "
              f"{report['chunks_written']} chunks, embedder {report['embedder']}, "
              f"{time.perf_counter() - started:.1f}s")

        port = _free_port()
        url = f"http://127.0.0.1:{port}"
        server = subprocess.Popen([sys.executable, "-m", "sourcebook.cli", "serve", str(workspace),
                                   "--port", str(port), "--workers", str(args.workers)],
                                  env=env, cwd=str(ROOT), stdout=subprocess.DEVNULL,
                                  stderr=subprocess.DEVNULL)
        try:
            deadline = time.monotonic() + 60
            while True:
                try:
                    httpx.get(f"{url}/health", timeout=2).raise_for_status()
                    break
                except httpx.TransportError:
                    if time.monotonic() > deadline:
                        raise
                    time.sleep(0.1)
            rss_start = _rss_tree_mb(server.pid)
            for q in questions[:8]:  # warm: index opened, graph/symbol caches filled, first answer made
                httpx.get(f"{url}/ask", params={"q": q}, timeout=60).raise_for_status()
                httpx.get(f"{url}/search", params={"q": q}, timeout=60).raise_for_status()
            rss_warm = _rss_tree_mb(server.pid)
            print(f"server RSS: {rss_start:.0f} MB at start, {rss_warm:.0f} MB warm")
            print(f"single client: /ask p50 {_single(url, '/ask', 'q', questions[:16]):.1f} ms, "
                  f"/search p50 {_single(url, '/search', 'q', questions[:16]):.1f} ms")
            for path, unique in (("/ask", False), ("/search", False), ("/search", True)):
                stats = _load(url, path, "q", questions, args.clients, args.seconds, unique)
                label = f"{path} ({'unique requests, cache defeated' if unique else 'dev questions cycled'})"
                print(f"{label}: {args.clients} clients x {args.seconds:.0f}s: {stats['requests']} requests "
                      f"({stats['rps']:.1f}/s), errors {stats['errors']}, p50 {stats['p50_ms']:.1f} ms, "
                      f"p90 {stats['p90_ms']:.1f} ms, p99 {stats['p99_ms']:.1f} ms"
                      + (f"; first error: {stats['first_error']}" if stats["errors"] else ""))
                print(f"  server RSS after: {_rss_tree_mb(server.pid):.0f} MB")
            for n in range(args.soak):
                for path in ("/ask", "/search"):
                    varied = [f"{q} (round {n})" for q in questions]  # new text: no cache can answer
                    stats = _load(url, path, "q", varied, args.clients, args.seconds, unique=True)
                    print(f"soak {n + 1} {path}: {stats['requests']} requests, errors {stats['errors']}, "
                          f"p50 {stats['p50_ms']:.1f} ms; server RSS {_rss_tree_mb(server.pid):.0f} MB")
        finally:
            server.terminate()
            server.wait(timeout=10)

        runs, cpu = [], []
        for _ in range(3):
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            runs.append(_mcp_start(workspace, env))
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            cpu.append(after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime)
        # CPU seconds of the server process (start, first answer, shutdown): the wall time on an idle machine
        print(f"mcp stdio start to first answer: median {statistics.median(runs):.2f}s wall "
              f"(runs: {', '.join(f'{r:.2f}' for r in runs)}); "
              f"server CPU median {statistics.median(cpu):.2f}s; "
              f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs")


if __name__ == "__main__":
    main()
