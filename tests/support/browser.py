"""Debian's headless chromium driven over the DevTools protocol, for the browser tests (the `browser`
fixture in tests/conftest.py starts one per test module) and bench/search_bytes.py.

`new_tab(browser)` opens a fresh tab whose console errors and exceptions `DevTools.errors()` lists;
`open_page`, `type_text`, `mermaid_svg_texts`, `svg_links` and `result_links` are what a user does and sees.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from generator.site.publish import mermaid_asset

CHROMIUM = "/usr/bin/chromium"


class DevTools:
    """The smallest DevTools-protocol client: send a command, collect events while waiting for its reply."""

    def __init__(self, ws_url: str) -> None:
        from websockets.sync.client import connect

        self.ws = connect(ws_url, max_size=None, open_timeout=20)
        self.next_id = 0
        self.events: list[dict[str, Any]] = []

    def call(self, method: str, timeout: float = 30.0, **params: Any) -> dict[str, Any]:
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while True:
            message = json.loads(self.ws.recv(timeout=max(0.1, deadline - time.monotonic())))
            if message.get("id") == self.next_id:
                if "error" in message:
                    raise AssertionError(f"{method}: {message['error']}")
                return dict(message.get("result", {}))
            self.events.append(message)

    def pump(self, seconds: float) -> None:
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            try:
                self.events.append(json.loads(self.ws.recv(timeout=left)))
            except TimeoutError:
                return

    def wait_for(self, event: str, timeout: float = 30.0) -> dict[str, Any]:
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            for e in self.events:
                if e.get("method") == event:
                    self.events.remove(e)
                    return e
            self.pump(0.2)
        raise AssertionError(f"no {event} within {timeout}s")

    def evaluate(self, expression: str) -> Any:
        result = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in result:
            raise AssertionError(f"{expression}: {result['exceptionDetails']}")
        return result["result"].get("value")

    def errors(self, allow_urls: tuple[str, ...] = ()) -> list[str]:
        out = []
        for e in self.events:
            method, params = e.get("method"), e.get("params", {})
            if method == "Log.entryAdded" and params.get("entry", {}).get("url", "").startswith(allow_urls):
                continue
            if method == "Runtime.exceptionThrown":
                details = json.dumps(params.get("exceptionDetails", {}))
                if not any(url in details for url in allow_urls):
                    out.append(details[:1500])
            elif method == "Runtime.consoleAPICalled" and params.get("type") in {"error", "assert"}:
                out.append(json.dumps(params.get("args", []))[:500])
            elif method == "Log.entryAdded" and params.get("entry", {}).get("level") == "error":
                out.append(json.dumps(params["entry"])[:500])
        return out

    def close(self) -> None:
        from websockets.exceptions import ConnectionClosed

        try:
            self.call("Page.close", timeout=5)
        except (ConnectionClosed, TimeoutError):
            pass  # the tab may drop the socket before it answers: it is closed either way
        finally:
            self.ws.close()


@contextmanager
def chromium(profile: Path) -> Iterator[str]:
    """Start chromium with a DevTools port on 127.0.0.1 and a fresh profile; yield the DevTools HTTP base
    URL; stop it and remove the profile afterwards. RuntimeError when it does not start within a minute."""
    proc = subprocess.Popen(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--disable-dev-shm-usage", f"--user-data-dir={profile}", "--remote-debugging-address=127.0.0.1",
         "--remote-debugging-port=0", "about:blank"],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        port_file = profile / "DevToolsActivePort"
        deadline = time.monotonic() + 60
        while not (port_file.is_file() and port_file.read_text().strip()):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("chromium did not start its DevTools endpoint")
            time.sleep(0.2)
        yield f"http://127.0.0.1:{port_file.read_text().split()[0]}"
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
        shutil.rmtree(profile, ignore_errors=True)


def new_tab(browser: str, width: int | None = None) -> DevTools:
    """A fresh tab: events (console, exceptions, log) from other tests' pages cannot leak in. With `width`,
    a desktop window that wide (900 px high)."""
    request = urllib.request.Request(f"{browser}/json/new?about:blank", method="PUT")
    with urllib.request.urlopen(request, timeout=10) as resp:
        page = json.load(resp)
    tools = DevTools(page["webSocketDebuggerUrl"])
    for domain in ("Page", "Runtime", "Log"):
        tools.call(f"{domain}.enable")
    if width is not None:
        tools.call("Emulation.setDeviceMetricsOverride", width=width, height=900, deviceScaleFactor=1,
                   mobile=False)
    return tools


def open_page(tools: DevTools, url: str) -> None:
    tools.call("Page.navigate", url=url)
    tools.wait_for("Page.loadEventFired")
    tools.pump(1.0)  # let the theme's scripts start (search worker, palette)


def type_text(tools: DevTools, text: str) -> None:
    for ch in text:
        tools.call("Input.dispatchKeyEvent", type="keyDown", text=ch, key=ch, unmodifiedText=ch)
        tools.call("Input.dispatchKeyEvent", type="keyUp", key=ch)


# With `make setup`'s local mermaid.js the site loads no CDN script, so no console error is tolerated.
# Without it (a plain pip install) Material fetches mermaid from its CDN, which fails on this offline machine:
# that one request is then the only allowed error, and the diagram stays as source text.
MERMAID = mermaid_asset()
MERMAID_CDN = () if MERMAID else ("https://unpkg.com/mermaid",)


def mermaid_svg_texts(tools: DevTools, timeout: float = 20.0) -> list[str]:
    """Text inside the SVG of each rendered diagram. Material renders into a *closed* shadow root, which page
    scripts cannot read; the DevTools DOM (pierce=true) can."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline and tools.evaluate("document.querySelectorAll('pre.mermaid').length"):
        tools.pump(0.2)
    tools.call("DOM.enable")
    root = tools.call("DOM.getDocument", depth=-1, pierce=True)["root"]

    def texts(node: dict[str, Any], in_svg: bool) -> Iterator[str]:
        if node.get("nodeName") == "style":
            return  # mermaid's CSS, not the diagram
        in_svg = in_svg or node.get("nodeName") == "svg"
        if in_svg and node.get("nodeType") == 3:
            yield str(node.get("nodeValue", ""))
        for child in [*node.get("children", []), *node.get("shadowRoots", [])]:
            yield from texts(child, in_svg)

    def diagrams(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
        attrs = node.get("attributes", [])
        classes = dict(zip(attrs[::2], attrs[1::2], strict=True)).get("class", "").split()
        if node.get("nodeName") == "DIV" and "mermaid" in classes:
            yield node
        for child in node.get("children", []):
            yield from diagrams(child)

    return [" ".join(texts(d, False)) for d in diagrams(root)]


def svg_links(tools: DevTools) -> list[str]:
    """The link targets inside rendered diagrams (a closed shadow root: read through the DevTools DOM)."""
    tools.call("DOM.enable")
    root = tools.call("DOM.getDocument", depth=-1, pierce=True)["root"]
    found: list[str] = []

    def walk(node: dict[str, Any]) -> None:
        attrs = node.get("attributes", [])
        href = dict(zip(attrs[::2], attrs[1::2], strict=True)).get("xlink:href")
        if node.get("nodeName", "").lower() == "a" and href:
            found.append(href)
        for child in [*node.get("children", []), *node.get("shadowRoots", [])]:
            walk(child)

    walk(root)
    return found


def result_links(tools: DevTools, query: str, items: int = 3) -> list[str]:
    """Type `query` into the search box; the links (page and sections) of the first `items` results."""
    tools.evaluate("(() => { const i = document.querySelector('.md-search__input'); i.focus(); i.value = '';"
                   " return true; })()")
    for ch in query:
        tools.call("Input.dispatchKeyEvent", type="keyDown", text=ch, key=ch, unmodifiedText=ch)
        tools.call("Input.dispatchKeyEvent", type="keyUp", key=ch)
    # results update after every keystroke: read them once they stop changing (the final query's)
    links: list[str] = []
    previous: list[str] | None = None
    for _ in range(100):
        tools.pump(0.5)
        links = tools.evaluate(
            f"Array.from(document.querySelectorAll('.md-search-result__item')).slice(0, {items})"
            ".flatMap(li => Array.from(li.querySelectorAll('a')).map(a => {"
            " const u = new URL(a.href); return u.pathname.slice(1) + u.hash; }))")
        if links and links == previous:
            break
        previous = links
    return links

