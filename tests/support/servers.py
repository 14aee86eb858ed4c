"""Real servers on 127.0.0.1 for the browser tests: `sourcebook serve` as a subprocess, and a static site."""

from __future__ import annotations

import functools
import http.server
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def sourcebook_serve(root: Path | None, timeout_s: float = 60.0, *, args: tuple[str, ...] = (),
                     cwd: Path | None = None, env: dict[str, str] | None = None) -> Iterator[str]:
    """`sourcebook serve ROOT` (real uvicorn, loopback, no token, no provider settings); yields its URL once
    /health answers. A server that dies while starting fails at once instead of waiting out the timeout.
    root None: no PATH (with `--index-uri` in `args` and an empty `cwd`: a server with no checkout);
    `env` is added to the environment."""
    port = free_port()
    full_env = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}
    full_env.update(env or {})
    target = [] if root is None else [str(root)]
    proc = subprocess.Popen([sys.executable, "-m", "sourcebook.cli", "serve", *target, "--port", str(port),
                             *args], env=full_env, cwd=cwd, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_until_healthy(proc, url, timeout_s)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def wait_until_healthy(proc: subprocess.Popen[bytes], url: str, timeout_s: float = 60.0) -> None:
    """Return once the server at `url` answers /health (any status: a server with tokens answers 401); a
    server that dies first fails at once, with what it wrote to stderr when that is piped."""
    deadline = time.monotonic() + timeout_s
    while True:
        try:
            with urllib.request.urlopen(f"{url}/health", timeout=2):
                return
        except urllib.error.HTTPError:
            return
        except OSError:
            if proc.poll() is not None:
                raise RuntimeError(proc.stderr.read().decode() if proc.stderr else "server died") from None
            if time.monotonic() > deadline:
                raise
            time.sleep(0.2)


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextmanager
def static_site(site_dir: Path) -> Iterator[str]:
    """A built site served as plain files (what GitHub Pages does); yields its root URL."""
    handler = functools.partial(_QuietHandler, directory=str(site_dir))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()
