"""Benchmark: what a search downloads on a built site, in a headless chromium, over http and from file://.

Usage:
    .venv/bin/python bench/search_bytes.py SITE_DIR [--query NAME ...] [--page PATH]

For each query and each way of opening the site (served by a local HTTP server that logs every request, and
from file://), in a fresh tab of a fresh browser profile (nothing cached):
- `page load`: the search files a page loads before anything is typed (search/…);
- `one query`: the search files loaded once the whole query is put in the box at once (one query) until its
  result list stops changing;
- `typed`: the same, typing the query one key at a time as a user does (every keystroke is a query).
Sizes are the files' sizes on disk (the server sends them uncompressed). From file:// the search worker runs
in iframe-worker-shim.js's frame: the files are that frame's and the page's loaded resources.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from pathlib import Path
from typing import Any

from tests.support.browser import CHROMIUM, DevTools, new_tab, open_page, type_text

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


# from file:// every search file is a <script> (the offline index in the page, the shards or texts in the
# worker's frame); resource timing does not list file:// loads
_RESOURCES = """(() => {
  const names = Array.from(document.querySelectorAll('script[src]')).map(s => s.src);
  const frame = document.querySelector('iframe');
  if (frame && frame.contentDocument) {
    names.push(...Array.from(frame.contentDocument.querySelectorAll('script[src]')).map(s => s.src));
  }
  return names;
})()"""


def _chromium(profile: Path) -> tuple[subprocess.Popen[bytes], str]:
    proc = subprocess.Popen(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-sync",
         "--disable-background-networking", "--disable-component-update", "--disable-dev-shm-usage",
         f"--user-data-dir={profile}", "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
         "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    port_file = profile / "DevToolsActivePort"
    deadline = time.monotonic() + 60
    while not (port_file.is_file() and port_file.read_text().strip()):
        if proc.poll() is not None or time.monotonic() > deadline:
            raise SystemExit("chromium did not start its DevTools endpoint")
        time.sleep(0.2)
    return proc, f"http://127.0.0.1:{port_file.read_text().split()[0]}"


class _Log:
    def __init__(self) -> None:
        self.paths: list[str] = []


def _serve(site: Path, log: _Log) -> http.server.ThreadingHTTPServer:
    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            log.paths.append(urllib.parse.unquote(self.path.split("?", 1)[0]))

    handler = functools.partial(Handler, directory=str(site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _results(tools: DevTools) -> list[str]:
    return tools.evaluate("Array.from(document.querySelectorAll('.md-search-result__item a'))"
                          ".map(a => a.getAttribute('href'))")


def _settle(tools: DevTools, quiet: float = 3.0, limit: float = 90.0) -> list[str]:
    """The result links once they have not changed for `quiet` seconds (a split index re-renders when its
    texts arrive)."""
    links, since, start = _results(tools), time.monotonic(), time.monotonic()
    while time.monotonic() - start < limit:
        tools.pump(0.5)
        now = _results(tools)
        if now != links:
            links, since = now, time.monotonic()
        elif links and time.monotonic() - since >= quiet:
            break
    return links


def _search_files(site: Path, paths: list[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for path in paths:
        rel = path.lstrip("/")
        if rel.startswith("search/") and (site / rel).is_file():
            found[rel] = (site / rel).stat().st_size
    return found


def _file_paths(site: Path, urls: list[str]) -> list[str]:
    root = site.resolve().as_uri()
    return [urllib.parse.unquote(u[len(root):]) for u in urls if u.startswith(root)]


def measure(site: Path, query: str, page: str, served: bool, typed: bool,
            limit: float = 90.0) -> dict[str, Any]:
    profile = Path(tempfile.mkdtemp(prefix="search-bytes-"))
    proc, browser = _chromium(profile)
    log = _Log()
    server = _serve(site, log) if served else None
    try:
        base = f"http://127.0.0.1:{server.server_address[1]}/" if server else site.resolve().as_uri() + "/"
        tools = new_tab(browser)
        open_page(tools, base + page)
        tools.pump(2.0)

        def seen() -> dict[str, int]:
            return _search_files(site, log.paths if served else _file_paths(site, tools.evaluate(_RESOURCES)))

        # Material's meta line reads "Initializing search" until its worker answered the index
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and "nitializ" in tools.evaluate(
                "(document.querySelector('.md-search-result__meta') || {}).textContent || 'Initializing'"):
            tools.pump(0.3)
        before = seen()
        offline = site / "search" / "search_index.js"
        if not served and offline.is_file():  # loaded by a <script> Material removes once it ran
            before["search/search_index.js"] = offline.stat().st_size
        tools.evaluate("(() => { const i = document.querySelector('.md-search__input'); i.focus(); "
                       "return true; })()")
        if typed:
            type_text(tools, query)
        else:  # all but the last character without events, then one real key: one query
            tools.evaluate(f"(() => {{ document.querySelector('.md-search__input').value = "
                           f"{json.dumps(query[:-1])}; return true; }})()")
            type_text(tools, query[-1])
        links = _settle(tools, limit=limit)
        after = seen()
        tools.close()
        loaded = {k: v for k, v in after.items() if k not in before}
        return {"page_load": sum(before.values()), "query": sum(loaded.values()), "files": len(loaded),
                "first": links[:1]}
    finally:
        if server:
            server.shutdown()
            server.server_close()
        proc.terminate()
        proc.wait(timeout=10)
        shutil.rmtree(profile, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("site", type=Path)
    parser.add_argument("--query", action="append", default=[])
    parser.add_argument("--page", default="index.html")
    parser.add_argument("--limit", type=float, default=90.0, help="seconds to wait for a result list")
    args = parser.parse_args()
    print(f"{'query':24} {'how':6} {'typing':8} {'page load':>12} {'query bytes':>12} {'files':>6}"
          "  first result")
    for query in args.query or ["Blueprint"]:
        for served in (True, False):
            for typed in (False, True):
                got = measure(args.site, query, args.page, served, typed, args.limit)
                print(f"{query:24} {'http' if served else 'file':6} {'typed' if typed else 'at once':8} "
                      f"{got['page_load']:>12,} {got['query']:>12,} {got['files']:>6}  {got['first']}",
                      flush=True)


if __name__ == "__main__":
    main()
