"""Load and isolation of `sourcebook serve --orgs` on 127.0.0.1, then one big organisation's per-tier latency.

    PYTHONPATH=$PWD .venv/bin/python bench/orgs_load.py [--clients 8] [--seconds 60] [--big-files 20000]
        [--embedder default|none] [--workers 1]

Phase 1 (isolation): two organisations (own tokens, own index folders), each with a pushed corpus whose
files carry that organisation's unique marker string. CLIENTS clients per organisation run a closed loop for
SECONDS seconds: about one call in ten pushes a changed file (JSON push), the rest are /search (each tier),
/file, /structure, /context and /symbol, some of them asking for the other organisation's marker or its
repository by name. Every reply is checked for the other organisation's marker. Prints throughput, p50/p99
per endpoint, the error count and the leak count, and ends with PASS/FAIL lines for "0 errors" and
"0 cross-org leaks".

Phase 2 (scale): a third organisation gets BIG_FILES synthetic Python files pushed as tar archives (the
streamed upload, in batches under the push limits: each batch a POST /index of the real server), then each
search tier, /file and /context are timed on 100 calls each (p50/p99; the first call of each apart, as it
may load a table or build an in-memory ranking; for the symbolic tier, the first calls naming an existing
function, which load the reference graph). Then one changed file is pushed and the first call of each is
timed at once (what a client querying right after a push waits), then how long until the change is served,
and the first call of each on the new version. Prints the push time per batch and the figures. Run it
under `nice -n 10` on a shared machine.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from answer.serving.orgs import token_sha256  # noqa: E402

# name: (token, the marker string every file of its corpus carries)
ORGS = {"acme": ("acme-bench-token-0123456789", "quetzalmarmot_acme_secret"),
        "globex": ("globex-bench-token-987654321", "axolotlibex_globex_secret")}
BIG = ("initech", "initech-bench-token-5555555555")
TIERS = ("lexical", "symbolic", "semantic", "hybrid")
_WORDS = ("parse", "render", "cache", "token", "session", "route", "config", "loader", "buffer",
          "stream", "socket", "retry", "queue", "worker", "schema", "record", "ledger", "invoice",
          "engine", "signal", "filter", "matrix", "vector", "graph", "index", "shard")


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _module(rng: random.Random, n: int, marker: str = "") -> str:
    """A synthetic Python module: a docstring, a class and a few functions named from a small vocabulary."""
    a, b, c = rng.sample(_WORDS, 3)
    funcs = "".join(
        f"\n\ndef {rng.choice(_WORDS)}_{rng.choice(_WORDS)}_{n}_{k}(value, limit=10):\n"
        f'    """{rng.choice(_WORDS).capitalize()} the {rng.choice(_WORDS)} of a {rng.choice(_WORDS)}."""\n'
        f"    total = 0\n    for item in range(limit):\n        total += {a}_helper_{n}(item) * value\n"
        f"    return total\n" for k in range(4))
    return (f'"""The {a} {b} module {n}{(" of " + marker) if marker else ""}."""\n\n\n'
            f"class {a.capitalize()}{b.capitalize()}{n}:\n    \"\"\"Keeps the {c} state.\"\"\"\n\n"
            f"    def {c}(self, key):\n        return {a}_helper_{n}(key)\n\n\n"
            f"def {a}_helper_{n}(item):\n    return item + {n}\n{funcs}")


def _tar(files: dict[str, str]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as archive:
        for name, text in files.items():
            data = text.encode()
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q / 100 * len(ordered)))] * 1000 if ordered else float("nan")


class Server:
    def __init__(self, base: Path, embedder: str, workers: int, ann_min_rows: int | None = None) -> None:
        orgs = base / "orgs.toml"
        lines = []
        for name, (token, _marker) in [*ORGS.items(), (BIG[0], (BIG[1], ""))]:
            lines.append(f'[orgs.{name}]\ntoken_sha256 = "{token_sha256(token)}"\n'
                         f'index_root = "{base / name}"\n')
        orgs.write_text("\n".join(lines), encoding="utf-8")
        self.ann_min_rows = ann_min_rows
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}
        env.update({"XDG_STATE_HOME": str(base / "state"), "SOURCEBOOK_EMBEDDER": embedder,
                    "PYTHONPATH": str(ROOT), "LANCE_LOG": "error"})
        if ann_min_rows:
            env["SOURCEBOOK_ANN_MIN_ROWS"] = str(ann_min_rows)
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "sourcebook.cli", "serve", "--orgs", str(orgs), "--port", str(self.port),
             *(["--workers", str(workers)] if workers > 1 else [])],
            env=env, cwd=base, stdout=subprocess.DEVNULL, stderr=open(base / "server.log", "wb"))  # noqa: SIM115
        deadline = time.monotonic() + 120
        while True:
            try:
                httpx.get(f"{self.url}/health", timeout=2)
                return
            except httpx.TransportError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError((base / "server.log").read_text()[-3000:]) from None
                time.sleep(0.2)

    def stop(self) -> None:
        self.proc.terminate()
        self.proc.wait(timeout=30)


def _client(url: str, token: str) -> httpx.Client:
    return httpx.Client(base_url=url, headers={"Authorization": f"Bearer {token}"}, timeout=120)


def _leaked(reply: httpx.Response, needles: tuple[str, ...]) -> bool:
    """Whether the reply carries any of `needles`, the echo of the caller's own query aside (a search for the
    other organisation's marker repeats it under "query")."""
    try:
        payload = reply.json()
    except ValueError:
        return any(n in reply.text for n in needles)
    if isinstance(payload, dict):
        payload = {k: v for k, v in payload.items() if k not in {"query", "q"}}
    text = json.dumps(payload)
    return any(n in text for n in needles)


def phase_isolation(server: Server, clients: int, seconds: float) -> bool:
    rng = random.Random(1)
    corpora: dict[str, dict[str, str]] = {}
    for org, (token, marker) in ORGS.items():
        corpora[org] = {f"src/{org}/mod{i}.py": _module(rng, i, marker) for i in range(40)}
        with _client(server.url, token) as c:
            files = [{"path": p, "content": t} for p, t in corpora[org].items()]
            reply = c.post("/index", json={"repo": f"{org}-repo", "files": files})
            reply.raise_for_status()
    latencies: dict[str, list[float]] = defaultdict(list)
    errors: list[str] = []
    leaks: list[str] = []
    calls = [0]
    lock = threading.Lock()
    stop_at = time.monotonic() + seconds

    def loop(org: str, seed: int) -> None:
        token, marker = ORGS[org]
        other = next(o for o in ORGS if o != org)
        other_marker = ORGS[other][1]
        r = random.Random(seed)
        repo = f"{org}-repo"
        paths = sorted(corpora[org])
        with _client(server.url, token) as c:
            while time.monotonic() < stop_at:
                roll = r.random()
                params: dict[str, Any] = {"repo": repo}
                body: dict[str, Any] | None = None
                method, path, expected = "GET", "", (200,)
                if roll < 0.1:
                    n = r.randrange(1000)
                    method, path, name = "POST", "/index", "POST /index"
                    body = {"repo": repo, "files": [{"path": f"src/{org}/live{n % 20}.py",
                                                     "content": _module(r, n, marker)}]}
                    params = {}
                elif roll < 0.5:
                    tier = r.choice(TIERS)
                    q = other_marker if r.random() < 0.2 else f"{r.choice(_WORDS)} {r.choice(_WORDS)}"
                    path, name = "/search", f"GET /search {tier}"
                    params.update(q=q, type=tier)
                elif roll < 0.65:
                    path, name = "/file", "GET /file"
                    params["path"] = r.choice(paths)
                elif roll < 0.75:
                    path, name = "/structure", "GET /structure"
                elif roll < 0.85:
                    path, name = "/context", "GET /context"
                    params["q"] = r.choice(_WORDS)
                elif roll < 0.95:
                    path, name, expected = "/symbol", "GET /symbol", (200, 404)
                    params["name"] = f"{r.choice(_WORDS)}_helper_{r.randrange(40)}"
                else:  # the other organisation's repository by name: must look like no repository at all
                    path, name, expected = "/file", "GET /file (other org's repo)", (404,)
                    params = {"repo": f"{other}-repo", "path": f"src/{other}/mod0.py"}
                started = time.perf_counter()
                try:
                    reply = c.request(method, path, params=params, json=body)
                except httpx.HTTPError as exc:
                    with lock:
                        errors.append(f"{name}: {type(exc).__name__}")
                    continue
                took = time.perf_counter() - started
                with lock:
                    calls[0] += 1
                    latencies[name].append(took)
                    if reply.status_code not in expected:
                        errors.append(f"{name}: HTTP {reply.status_code} {reply.text[:120]}")
                    if _leaked(reply, (other_marker, f"src/{other}/")):
                        leaks.append(f"{org} {name}: {reply.text[:200]}")

    threads = [threading.Thread(target=loop, args=(org, i * 31 + k)) for k, org in enumerate(ORGS)
               for i in range(clients)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - started
    print(f"\n== phase 1: {len(ORGS)} orgs x {clients} clients, {wall:.0f} s on 127.0.0.1 ==")
    print(f"calls {calls[0]}, throughput {calls[0] / wall:.1f} req/s")
    print(f"{'endpoint':34s} {'n':>6s} {'p50 ms':>9s} {'p99 ms':>9s}")
    for name in sorted(latencies):
        v = latencies[name]
        print(f"{name:34s} {len(v):6d} {_pct(v, 50):9.1f} {_pct(v, 99):9.1f}")
    for line in errors[:10]:
        print("  error:", line)
    for line in leaks[:10]:
        print("  leak:", line)
    print(f"{'PASS' if not errors else 'FAIL'}: {len(errors)} errors")
    print(f"{'PASS' if not leaks else 'FAIL'}: {len(leaks)} replies of one org contained the other org's "
          f"marker ({calls[0]} replies checked)")
    return not errors and not leaks


def phase_scale(server: Server, files: int, batch: int) -> None:
    rng = random.Random(7)
    token = BIG[1]
    pushed_s = 0.0
    with _client(server.url, token) as c:
        for start in range(0, files, batch):
            tree = {f"pkg{n // 500}/mod{n}.py": _module(rng, n)
                    for n in range(start, min(files, start + batch))}
            body = _tar(tree)
            began = time.perf_counter()
            reply = c.post("/index", params={"repo": "big"}, content=body,
                           headers={"Content-Type": "application/x-tar"}, timeout=1800)
            pushed_s += time.perf_counter() - began
            reply.raise_for_status()
            print(f"  pushed {min(files, start + batch)} files ({len(body) / 1e6:.1f} MB tar) "
                  f"in {pushed_s:.0f} s so far", flush=True)
        structure = c.get("/structure", params={"repo": "big"}).json()
        print(f"\n== phase 2: one org, {structure['files']} files, {structure['symbols']} symbols; "
              f"pushed as tar in {pushed_s:.0f} s; ANN index from "
              f"{server.ann_min_rows or 'the default'} rows ==")
        q_rng = random.Random(3)
        queries = [f"{q_rng.choice(_WORDS)} the {q_rng.choice(_WORDS)} of a {q_rng.choice(_WORDS)}"
                   for _ in range(100)]
        symbols = [f"{q_rng.choice(_WORDS)}_helper_{q_rng.randrange(files)}" for _ in range(100)]
        print(f"{'call':18s} {'n':>5s} {'p50 ms':>9s} {'p99 ms':>9s}")
        calls: list[tuple[str, str, list[dict[str, Any]]]] = [
            (f"search {tier}", "/search", [{"q": sym if tier == "symbolic" else q, "type": tier}
                                           for q, sym in zip(queries, symbols, strict=True)])
            for tier in TIERS]
        calls.append(("file", "/file", [{"path": f"pkg{n // 500}/mod{n}.py"}
                                        for n in (q_rng.randrange(files) for _ in range(100))]))
        calls.append(("context", "/context", [{"q": q} for q in queries]))
        # module 0's helper is one of these: a symbolic query naming a function that exists also loads the
        # reference graph (its callers), once per index version
        warm_symbolic = [{"q": f"{w}_helper_0", "type": "symbolic"} for w in _WORDS]
        for name, path, params in calls:
            began = time.perf_counter()  # the first call may build an in-memory ranking or load a table
            for warm in (warm_symbolic if name == "search symbolic" else params[:1]):
                c.get(path, params={"repo": "big", **warm}).raise_for_status()
            first_ms = 1000 * (time.perf_counter() - began)
            took = []
            for p in params:
                began = time.perf_counter()
                reply = c.get(path, params={"repo": "big", **p})
                took.append(time.perf_counter() - began)
                reply.raise_for_status()
            print(f"{name:18s} {len(took):5d} {_pct(took, 50):9.1f} {_pct(took, 99):9.1f}   "
                  f"max {1000 * max(took):.0f} ms (first call{'s' if name == 'search symbolic' else ''} "
                  f"{first_ms:.0f} ms, not counted)", flush=True)
        _after_push(c, rng, calls, warm_symbolic)


def _after_push(c: httpx.Client, rng: random.Random, calls: list[tuple[str, str, list[dict[str, Any]]]],
                warm_symbolic: list[dict[str, str]]) -> None:
    """One changed file pushed to the repository the server answers from, then the first call of each tier
    at once (what a client querying right after a push waits), then how long until the change is served."""
    marker = f"repushed{rng.randrange(10**9)}marker"
    began = time.perf_counter()
    changed = [{"path": "pkg0/mod0.py", "content": _module(rng, 0, marker)}]
    c.post("/index", json={"repo": "big", "files": changed}, timeout=1800).raise_for_status()
    pushed = time.perf_counter()
    print(f"\n== a push of one changed file ({pushed - began:.1f} s), then the first call of each ==",
          flush=True)
    for name, path, params in calls:
        began = time.perf_counter()
        for p in (warm_symbolic[:1] if name == "search symbolic" else params[:1]):
            c.get(path, params={"repo": "big", **p}, timeout=1800).raise_for_status()
        print(f"{name:18s} first call after the push {1000 * (time.perf_counter() - began):9.0f} ms",
              flush=True)
    # the marker is a word of the changed file only: no hit until the new version is served
    while not c.get("/search", params={"repo": "big", "q": marker, "type": "lexical"},
                    timeout=1800).json()["hits"]:
        time.sleep(0.2)
    print(f"the pushed change served {time.perf_counter() - pushed:.1f} s after the push's reply; "
          "then the first call of each again:", flush=True)
    for name, path, params in calls:
        began = time.perf_counter()
        for p in (warm_symbolic[1:2] if name == "search symbolic" else params[1:2]):
            c.get(path, params={"repo": "big", **p}, timeout=1800).raise_for_status()
        print(f"{name:18s} first call on the new version {1000 * (time.perf_counter() - began):9.0f} ms",
              flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--big-files", type=int, default=20_000)
    parser.add_argument("--batch", type=int, default=5000)
    parser.add_argument("--embedder", default="default")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--skip-scale", action="store_true")
    parser.add_argument("--skip-isolation", action="store_true")
    parser.add_argument("--ann-min-rows", type=int, default=None,
                        help="the server's SOURCEBOOK_ANN_MIN_ROWS (default: the config's 100k)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="sb-orgs-load-") as tmp:
        server = Server(Path(tmp), args.embedder, args.workers, args.ann_min_rows)
        try:
            ok = args.skip_isolation or phase_isolation(server, args.clients, args.seconds)
            if not args.skip_scale and args.big_files:
                phase_scale(server, args.big_files, args.batch)
        finally:
            server.stop()
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
