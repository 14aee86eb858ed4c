"""One hostile organisation (and clients without a token) against `sourcebook serve --orgs`, while another
organisation's latency is measured, on 127.0.0.1.

    PYTHONPATH=$PWD .venv/bin/python bench/hostile_load.py [--seconds 5] [--attackers 16]

Two organisations: acme attacks, globex is measured. A victim client (one keep-alive connection, a closed
loop, in a process of its own) alternates globex's `/health` and a small lexical `/search` over its pushed
repository, through every phase; each phase runs SECONDS seconds:

  baseline    nothing else
  tar-bombs   ATTACKERS threads POST gzip, bzip2 and xz tars of 60 MB of zeros (a few KB each)
  regex       ATTACKERS threads search with `(?:(?:x{1000}){1000}){30}` and a backtracking `(\\w+\\s?)*Z`
  long-text   ATTACKERS threads ask with a 128 KB question and a 10,000-character one of " and "s
  slowloris   3,000 connections without a token, each sending half a request line, held open
  slow-asks   45 /ask calls at once from acme, each answered by a model that takes 5 s
  sighup      a SIGHUP to the server every 20 ms
  bad-pushes  ATTACKERS threads push tars cut at a member boundary with prune=true, non-UTF-8 names,
              `%2e%2e` paths and repository names ending in a newline

For each phase it prints the victim's calls, p50/p99/max in milliseconds and errors, and the attacker's
calls by status; then PASS/FAIL for "every phase's victim p99 under 1 s and no victim error", and for the
server still stopping on SIGTERM within 15 s. Run it under `nice -n 10` on a shared machine.
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import io
import lzma
import os
import signal
import socket
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from answer.serving.orgs import token_sha256  # noqa: E402
from tests.support.fake_llm import FakeLLM, Reply  # noqa: E402

ATTACKER = "acme-hostile-token-0123456789"
VICTIM = "globex-victim-token-987654321"
FILES = {f"pkg/mod{n}.py": (f'"""Module {n}."""\n\n\ndef handler_{n}(request):\n'
                            f"    return route_{n}(request)\n\n\n"
                            f"def route_{n}(request):\n    return request.path + '{n}'\n") for n in range(40)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _tar(files: dict[str, bytes], fmt: int = tarfile.PAX_FORMAT) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as archive:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            archive.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _bombs() -> list[bytes]:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as archive:
        info = tarfile.TarInfo("big.py")
        info.size = 60_000_000
        archive.addfile(info, io.BytesIO(bytes(info.size)))
    raw = buf.getvalue()
    return [gzip.compress(raw), bz2.compress(raw), lzma.compress(raw)]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))] if ordered else float("nan")


class Server:
    def __init__(self, base: Path, llm_url: str) -> None:
        self.base = base
        orgs = base / "orgs.toml"
        orgs.write_text(f'[orgs.acme]\ntoken_sha256 = "{token_sha256(ATTACKER)}"\n'
                        f'index_root = "{base / "a"}"\n\n'
                        f'[orgs.globex]\ntoken_sha256 = "{token_sha256(VICTIM)}"\n'
                        f'index_root = "{base / "b"}"\n', encoding="utf-8")
        self.port = _free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}
        env.update({"XDG_STATE_HOME": str(base / "state"), "SOURCEBOOK_EMBEDDER": "none",
                    "SOURCEBOOK_LLM_BASE_URL": llm_url, "SOURCEBOOK_LLM_MODEL": "fake-model",
                    "SOURCEBOOK_LLM_API_KEY": "bench-key", "SOURCEBOOK_LLM_MAX_RETRIES": "0",
                    "SOURCEBOOK_LLM_MAX_REASKS": "0", "SOURCEBOOK_LLM_TIMEOUT": "60"})
        self.log_path = base / "server.log"
        self._log = self.log_path.open("wb")
        self.proc = subprocess.Popen([sys.executable, "-m", "sourcebook.cli", "serve", "--orgs", str(orgs),
                                      "--port", str(self.port)], env=env, cwd=base, stdout=self._log,
                                     stderr=self._log)
        deadline = time.monotonic() + 60
        while True:
            try:
                httpx.get(self.url + "/health", timeout=2)
                break
            except httpx.TransportError:
                if self.proc.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(self.log_path.read_text(errors="replace")) from None
                time.sleep(0.2)

    def stop(self) -> float:
        """SIGTERM; the seconds until the process ended (inf when it had to be killed)."""
        started = time.monotonic()
        self.proc.terminate()
        try:
            self.proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return float("inf")
        finally:
            self._log.close()
        return time.monotonic() - started


def _auth(token: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {token}"}


def _victim(url: str, seconds: float) -> None:
    """The victim's closed loop, in a process of its own (the attackers' threads would otherwise share its
    GIL and be measured with it): prints one line per call, `seconds ok`."""
    out: list[tuple[float, bool]] = []
    until = time.monotonic() + seconds
    with httpx.Client(base_url=url, headers=_auth(VICTIM), timeout=30) as client:
        n = 0
        while time.monotonic() < until:
            started = time.perf_counter()
            try:
                if n % 2:
                    reply = client.get("/search", params={"q": f"route_{n % 40}", "type": "lexical",
                                                          "repo": "site", "limit": 5})
                else:
                    reply = client.get("/health")
                ok = reply.status_code == 200
            except httpx.HTTPError:
                ok = False
            out.append((time.perf_counter() - started, ok))
            n += 1
    print("\n".join(f"{t:.6f} {int(ok)}" for t, ok in out), flush=True)


def _flood(threads: int, stop: threading.Event, call: Callable[[httpx.Client, int], int],
           statuses: Counter[str]) -> list[threading.Thread]:
    def run(k: int) -> None:
        with httpx.Client(timeout=60) as client:
            n = 0
            while not stop.is_set():
                try:
                    statuses[str(call(client, k * 1000 + n))] += 1
                except httpx.HTTPError as exc:
                    statuses[type(exc).__name__] += 1
                n += 1

    workers = [threading.Thread(target=run, args=(k,), daemon=True) for k in range(threads)]
    for worker in workers:
        worker.start()
    return workers


def _attacks(server: Server, attackers: int) -> dict[str, Callable[[threading.Event, Counter[str]], None]]:
    url, auth = server.url, _auth(ATTACKER)
    bombs = _bombs()
    tar_headers = {**auth, "Content-Type": "application/x-tar"}
    whole = _tar({"pkg/a.py": b"x = 1\n"})
    bad_tars = [whole[:1024], _tar({b"pkg/caf\xe9.py".decode("utf-8", "surrogateescape"): b"x\n"},
                                   fmt=tarfile.GNU_FORMAT), _tar({"%2e%2e/x.py": b"x\n"})]

    def threaded(call: Callable[[httpx.Client, int], int]) -> Callable[[threading.Event, Counter[str]], None]:
        def attack(stop: threading.Event, statuses: Counter[str]) -> None:
            for worker in _flood(attackers, stop, call, statuses):
                worker.join()
        return attack

    def bomb(c: httpx.Client, n: int) -> int:
        return c.post(url + "/index", params={"repo": "bombed"}, content=bombs[n % 3],
                      headers=tar_headers).status_code

    def regex(c: httpx.Client, n: int) -> int:
        pattern = "(?:(?:x{1000}){1000}){30}" if n % 2 else r"(\w+\s?)*Z"
        return c.get(url + "/search", params={"q": pattern, "type": "regex", "repo": "site"},
                     headers=auth).status_code

    def long_text(c: httpx.Client, n: int) -> int:
        question = ("how does a and " * 700)[:10_000] if n % 2 else "a and " * 21_000
        return c.post(url + "/ask", json={"question": question, "repo": "site"}, headers=auth).status_code

    def bad_push(c: httpx.Client, n: int) -> int:
        if n % 4 == 3:
            return c.post(url + "/index", json={"repo": "x\n", "files": [{"path": "a.py", "content": "1"}]},
                          headers=auth).status_code
        return c.post(url + "/index", params={"repo": "site", "prune": "true"}, content=bad_tars[n % 3],
                      headers=tar_headers).status_code

    def slowloris(stop: threading.Event, statuses: Counter[str]) -> None:
        held: list[socket.socket] = []
        try:
            while not stop.is_set() and len(held) < 3000:
                try:
                    sock = socket.create_connection(("127.0.0.1", server.port), timeout=2)
                    sock.sendall(b"GET /health HTTP/1.1\r\nHost: x\r\nX-a: ")
                    held.append(sock)
                    statuses["held"] += 1
                except OSError as exc:
                    statuses[type(exc).__name__] += 1
            stop.wait()
        finally:
            for sock in held:
                sock.close()

    def slow_asks(stop: threading.Event, statuses: Counter[str]) -> None:
        def ask(_k: int) -> None:
            with httpx.Client(timeout=120) as c:
                try:
                    reply = c.post(url + "/ask", headers=auth,
                                   json={"question": "How does handler_3 route?", "repo": "site"})
                    statuses[str(reply.status_code)] += 1
                except httpx.HTTPError as exc:
                    statuses[type(exc).__name__] += 1

        callers = [threading.Thread(target=ask, args=(k,), daemon=True) for k in range(45)]
        for caller in callers:
            caller.start()
        stop.wait()

    def sighup(stop: threading.Event, statuses: Counter[str]) -> None:
        while not stop.is_set():
            server.proc.send_signal(signal.SIGHUP)
            statuses["SIGHUP"] += 1
            time.sleep(0.02)

    return {"tar-bombs": threaded(bomb), "regex": threaded(regex), "long-text": threaded(long_text),
            "slowloris": slowloris, "slow-asks": slow_asks, "sighup": sighup,
            "bad-pushes": threaded(bad_push)}


def _phase(server: Server, name: str, seconds: float,
           attack: Callable[[threading.Event, Counter[str]], None] | None) -> tuple[float, int]:
    stop = threading.Event()
    victim_times: list[tuple[float, bool]] = []
    statuses: Counter[str] = Counter()
    attacker = threading.Thread(target=attack, args=(stop, statuses), daemon=True) if attack else None
    if attacker:
        attacker.start()
        time.sleep(0.5)  # the attack is under way before the victim's calls are counted
    victim = subprocess.run([sys.executable, __file__, "--victim", server.url, "--seconds", str(seconds)],
                            capture_output=True, text=True, timeout=seconds + 120, check=True)
    for line in victim.stdout.split("\n"):
        if line.strip():
            took, ok = line.split()
            victim_times.append((float(took), ok == "1"))
    stop.set()
    if attacker:
        attacker.join(timeout=5)
    times = [t * 1000 for t, _ok in victim_times]
    errors = sum(1 for _t, ok in victim_times if not ok)
    p99 = _pct(times, 0.99)
    print(f"{name:11s} victim {len(times):5d} calls  p50 {_pct(times, 0.5):7.1f} ms  p99 {p99:7.1f} ms  "
          f"max {max(times, default=float('nan')):7.1f} ms  errors {errors}   attacker "
          f"{dict(sorted(statuses.items()))}", flush=True)
    return p99, errors


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--attackers", type=int, default=16)
    parser.add_argument("--victim", metavar="URL", help=argparse.SUPPRESS)  # the victim's own process
    args = parser.parse_args()
    if args.victim:
        _victim(args.victim, args.seconds)
        return 0
    slow_model = FakeLLM(responder=lambda _body: Reply.ok({"answer": "It routes.", "citations": []},
                                                          delay_s=5))
    with tempfile.TemporaryDirectory(prefix="sourcebook-hostile-") as tmp, slow_model as llm:
        server = Server(Path(tmp), llm.base_url)
        body = _tar({k: v.encode() for k, v in FILES.items()})
        for token in (ATTACKER, VICTIM):
            reply = httpx.post(server.url + "/index", params={"repo": "site"}, content=body, timeout=120,
                               headers={**_auth(token), "Content-Type": "application/x-tar"})
            reply.raise_for_status()
        log_before = server.log_path.stat().st_size
        worst = 0.0
        failures = 0
        attacks = _attacks(server, args.attackers)
        for name, attack in [("baseline", None), *attacks.items()]:
            p99, errors = _phase(server, name, args.seconds, attack)
            worst, failures = max(worst, p99), failures + errors
            time.sleep(1.0)  # let the previous phase's requests drain
        log_growth = server.log_path.stat().st_size - log_before
        stopped = server.stop()
    print(f"server log grew {log_growth:,} bytes over all phases; "
          f"SIGTERM ended the server in {stopped:.1f} s")
    ok = worst < 1000 and failures == 0
    print(f"{'PASS' if ok else 'FAIL'}: the victim's p99 stayed under 1 s in every phase "
          f"(worst {worst:.0f} ms), "
          f"{failures} victim errors")
    print(f"{'PASS' if stopped < 15 else 'FAIL'}: SIGTERM stopped the server ({stopped:.1f} s)")
    return 0 if ok and stopped < 15 else 1


if __name__ == "__main__":
    raise SystemExit(main())
