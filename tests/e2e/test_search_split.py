"""The sharded search index (generator/site/search_split.py) through a real `mkdocs build --strict` and a real
chromium: pages load a small eager index; a query loads only the prefix-tree nodes of its terms and the
content files of the sections it shows, and finds the right page over http and from file://. Symbol names
and page text stay inert in the shards."""

from __future__ import annotations

import functools
import http.server
import json
import re
import shutil
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import material
import pytest

from generator.build import build
from generator.site import search_split
from sourcebook.config import load_config
from tests.support.browser import CHROMIUM, DevTools, new_tab, open_page, type_text
from tests.support.repo_files import write_files

HOSTILE = "</script><script>window.__pwned=1</script>"
REPO = {
    "pkg/widgets.py": ('"""Widgets."""\n\n\ndef assemble_widget(parts):\n'
                       '    """Bolt the parts together with the frobnicator, then polish."""\n'
                       '    return parts\n\n\n'
                       'class WidgetFactory:\n    """Makes widgets in batches."""\n'),
    "pkg/gears.py": '"""Gears."""\n\n\ndef turn(n):\n    """Rotate by quarterturns."""\n    return n\n',
    "docs/evil.md": (f"# Evil\n\n## {HOSTILE}\n\n"
                     "A hostile heading about zanzibarite, its `__proto__` and `constructor`.\n"),
    **{f"pkg/filler{i}.py": (f'"""Filler module {i} about cogs and sprockets."""\n\n\n'
                             + "".join(f'def sprocket_{i}_{j}(x):\n    """Sprocket {j} turns cogs."""\n'
                                       "    return x\n\n\n" for j in range(6)))
       for i in range(8)},
}
BODY_ONLY = "frobnicator"  # in a docstring: no title, no symbol name


def _shards(folder: Path) -> dict[str, Any]:
    found: dict[str, Any] = {}
    for path in folder.iterdir():
        match = re.fullmatch(r'__sourcebookShard\("(\w+)",(.*)\);\n', path.read_text(encoding="utf-8"), re.S)
        assert match, path
        found[match.group(1)] = json.loads(match.group(2))
    return found


def _unsharded(search: Path) -> dict[str, Any]:
    """Material's index again, from a sharded one's content files (texts as shown, which is what this test
    needs: sections to shard anew with smaller limits)."""
    eager = json.loads((search / "search_index.json").read_text(encoding="utf-8"))
    extra = eager["config"].pop("sourcebook")
    shards = _shards(search / extra["dir"])
    docs = []
    for number in range(len(extra["content"])):
        chunk = shards[f"c{number}"]
        for page_no, anchor, title, text in chunk["d"]:
            page = chunk["p"][page_no]
            docs.append({"location": page + ("#" + anchor if anchor else ""), "title": title, "text": text})
    assert len(docs) == extra["count"]
    return {"config": eager["config"], "docs": docs, "options": eager.get("options", {})}


@pytest.fixture(scope="module")
def site_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built site, re-sharded with small limits so that even this small site has a tree of nodes and
    several content files (the limits are sized for sites of thousands of pages)."""
    root = write_files(tmp_path_factory.mktemp("split") / "repo", REPO)
    report = build(load_config(root), index=False)
    assert report.site_dir is not None
    site = tmp_path_factory.mktemp("resharded") / "site"
    shutil.copytree(report.site_dir, site)
    search = site / "search"
    index = _unsharded(search)
    (site.parent / "material_index.json").write_text(json.dumps(index), encoding="utf-8")
    (search / "search_index.json").write_text(json.dumps(index), encoding="utf-8")
    (search / "search_index.js").write_text("var __index = " + json.dumps(index), encoding="utf-8")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(search_split, "LEAF_POSTINGS", 12)
        patch.setattr(search_split, "CONTENT_CHARS", 400)
        assert search_split.split_site_index(site) is not None
    return site


def _eager(site: Path) -> dict[str, Any]:
    return json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))


def _walk(shards: dict[str, Any], term: str) -> tuple[list[str], dict[int, float]]:
    """The worker's walk (search-worker.js `postings`), in Python: (node files read, section -> weight)."""
    read: list[str] = []
    name, depth = "n0", 0
    while True:
        read.append(name)
        node = shards[name]
        if "t" in node:
            break
        if depth == len(term):
            return read, _decode(node.get("s", []))
        child = node["k"].get(term[depth])
        if child is None:
            return read, {}
        name, depth = f"n{child}", depth + 1
    total: dict[int, float] = {}
    for key, value in shards[read[-1]]["t"]:
        if key.startswith(term):  # each term's pairs decode on their own: deltas restart per list
            for doc, weight in _decode(value).items():
                total[doc] = total.get(doc, 0.0) + weight
    return read, total


def _decode(pairs: list[int]) -> dict[int, float]:
    doc, out = 0, {}
    for i in range(0, len(pairs), 2):
        doc += pairs[i]
        out[doc] = pairs[i + 1] / 100
    return out


def test_stop_words_are_materials() -> None:
    workers = Path(material.__file__).parent / "templates/assets/javascripts/workers"
    bundled = next(workers.glob("search.*.min.js")).read_text(encoding="utf-8")
    words = re.search(r"generateStopWordFilter\((\[[^\]]*\])\)", bundled)
    assert words is not None
    assert frozenset(json.loads(words.group(1))) == search_split.STOP_WORDS


def test_tokens_follow_materials_separator() -> None:
    sep = search_split.separator({"separator": r'[\s\-,:!=\[\]()"/]+|\.(?!\d)|(?!\b)(?=[A-Z][a-z])'})
    assert search_split.tokens("<p>ConnectionPool.pool_size is 1.5</p> <code>the x</code>", sep) == [
        "connection", "pool", "pool_size", "1.5", "x"]


def test_summaries_rank_a_prefix_as_its_terms_summed(site_dir: Path) -> None:
    """An inner node's summary is the prefix query's exact top: every section's weights summed over the
    terms with that prefix (Material's trailing wildcard), the best TOP kept."""
    eager = _eager(site_dir)
    shards = _shards(site_dir / "search" / eager["config"]["sourcebook"]["dir"])
    inner = [name for name, node in shards.items() if name.startswith("n") and "k" in node]
    assert len(inner) > 3  # the small limits made a tree
    index = json.loads((site_dir.parent / "material_index.json").read_text(encoding="utf-8"))
    postings = search_split.score(index["docs"], index["config"]).terms
    for term in ("s", "sp", "spr", "sprocket", "sprocket_3"):
        read, got = _walk(shards, term)
        want: dict[int, float] = {}
        for key, (docs, weights) in postings.items():
            if key.startswith(term):
                for doc, weight in zip(docs.tolist(), weights.tolist(), strict=True):
                    want[doc] = want.get(doc, 0.0) + weight
        assert want, term
        assert len(read) <= len(term) + 1  # one node per character at most, the root included
        best = sorted(want, key=lambda d: -want[d])[:search_split.TOP]
        assert set(got) == set(best), term
        for doc in got:  # weights are rounded to 1/100
            assert abs(got[doc] - want[doc]) <= 0.01, (term, doc)


def test_eager_index_is_small_and_holds_no_text(site_dir: Path) -> None:
    search = site_dir / "search"
    eager = _eager(site_dir)
    offline = (search / "search_index.js").read_text(encoding="utf-8")
    assert json.loads(offline.removeprefix("var __index = ")) == eager
    assert eager["docs"] == []
    assert BODY_ONLY not in json.dumps(eager)
    extra = eager["config"]["sourcebook"]
    assert sorted(p.name for p in search.iterdir()) == sorted(["search_index.json", "search_index.js",
                                                               extra["dir"]])
    assert len(extra["content"]) > 3


def test_names_and_text_stay_inert_in_shards(site_dir: Path) -> None:
    shards_dir = site_dir / "search" / _eager(site_dir)["config"]["sourcebook"]["dir"]
    shards = _shards(shards_dir)
    shown = [d[2] + d[3] for name, c in shards.items() if name.startswith("c") for d in c["d"]]
    assert any("&lt;/script&gt;&lt;script&gt;window.__pwned=1&lt;/script&gt;" in t for t in shown)  # as text
    assert not any("<script" in t for t in shown)
    for path in shards_dir.iterdir():
        assert "</" not in path.read_text(encoding="utf-8"), path
    # and a raw name (were one ever unescaped upstream) cannot end a script or break the JSON either
    text = search_split.script("c9", {"d": [[0, "", HOSTILE, "\u2028"]]})
    assert "</script" not in text
    assert "\u2028" not in text
    assert json.loads(text[text.index(",") + 1:-3]) == {"d": [[0, "", HOSTILE, "\u2028"]]}


def test_cut_text_keeps_whole_blocks() -> None:
    text = "<p>" + "a " * 10 + "</p> <pre><code>" + "b" * 50 + "</code></pre> <p>tail</p>"
    assert search_split.cut_text(text, 30) == "<p>" + "a " * 10 + "</p>"
    assert search_split.cut_text(text, 1000) == text
    assert search_split.cut_text("<p>" + "c" * 100 + "</p><p>d</p>", 10) == "<p>" + "c" * 100 + "</p>"


class _Recorder:
    def __init__(self) -> None:
        self.paths: list[str] = []


@pytest.fixture(scope="module")
def served(site_dir: Path) -> Iterator[tuple[str, _Recorder]]:
    recorder = _Recorder()

    class Handler(http.server.SimpleHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            recorder.paths.append(self.path)

    server = http.server.ThreadingHTTPServer(
        ("127.0.0.1", 0), functools.partial(Handler, directory=str(site_dir)))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/", recorder
    finally:
        server.shutdown()
        server.server_close()


def _results_with(tools: DevTools, query: str, wanted: str) -> list[str]:
    """Type `query`; the result links, once one of them contains `wanted` (or after 30 s)."""
    tools.evaluate("(() => { const i = document.querySelector('.md-search__input'); i.focus(); i.value = '';"
                   " return true; })()")
    type_text(tools, query)
    links: list[str] = []
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not any(wanted in link for link in links):
        tools.pump(0.3)
        links = tools.evaluate("Array.from(document.querySelectorAll('.md-search-result__item a'))"
                               ".map(a => a.getAttribute('href'))")
    return links


def _needed(site: Path, query: str) -> set[str]:
    """The tree nodes a typed query may load: those on the path of every prefix the typing sent (each
    keystroke is a query), for each of its terms."""
    extra = _eager(site)["config"]["sourcebook"]
    shards = _shards(site / "search" / extra["dir"])
    sep = search_split.separator(_eager(site)["config"])
    needed: set[str] = set()
    for end in range(1, len(query) + 1):
        for term in search_split.tokens(query[:end], sep):  # the worker splits queries as pages
            needed.update(_walk(shards, term)[0])
        if not any(ch.isspace() for ch in query[:end].strip()):  # and looks a word up as an exact name
            needed.update(_walk(shards, search_split.exact_term(query[:end]))[0])
    return needed


def _content_files(site: Path) -> set[str]:
    extra = _eager(site)["config"]["sourcebook"]
    return {f"c{i}" for i in range(len(extra["content"]))}


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed")
def test_served_query_loads_only_its_shards(
        browser: str, served: tuple[str, _Recorder], site_dir: Path) -> None:
    url, recorder = served
    tools = new_tab(browser)
    try:
        open_page(tools, url + "files/pkg/gears.py.html")
        tools.pump(1.0)
        assert any(p.endswith("/search/search_index.json") for p in recorder.paths)
        assert not any(re.search(r"/search/\w+/[nc]\d+\.js", p) for p in recorder.paths)  # not before
        del recorder.paths[:]
        links = _results_with(tools, "WidgetFactory", "sym-widgetfactory")  # a symbol
        assert any("sym-widgetfactory" in link for link in links), links
        loaded = {m.group(1) for p in recorder.paths if (m := re.search(r"/search/\w+/([nc]\d+)\.js$", p))}
        nodes = {n for n in loaded if n.startswith("n")}
        assert nodes <= _needed(site_dir, "WidgetFactory")
        assert nodes, recorder.paths
        contents = {n for n in loaded if n.startswith("c")}
        assert contents
        assert contents < _content_files(site_dir)  # some, never all
        assert len(recorder.paths) == len(set(recorder.paths))  # each file once
        del recorder.paths[:]
        links = _results_with(tools, BODY_ONLY, "sym-assemble-widget")  # only the body text holds it
        assert any("sym-assemble-widget" in link for link in links), links
        assert tools.errors() == []
    finally:
        tools.close()


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed")
def test_query_works_from_file_urls_and_loads_only_its_shards(browser: str, site_dir: Path) -> None:
    tools = new_tab(browser)
    try:
        open_page(tools, (site_dir / "index.html").as_uri())
        links = _results_with(tools, BODY_ONLY, "sym-assemble-widget")
        assert any("sym-assemble-widget" in link for link in links), links
        # from file:// the worker runs in iframe-worker-shim.js's hidden frame and loads shards as scripts
        loaded = tools.evaluate("Array.from(document.querySelector('iframe').contentDocument"
                                ".querySelectorAll('script[src]')).map(s => s.src)")
        names = {m.group(1) for s in loaded if (m := re.search(r"/search/\w+/([nc]\d+)\.js$", s))}
        assert {n for n in names if n.startswith("n")} <= _needed(site_dir, BODY_ONLY)
        assert {n for n in names if n.startswith("c")} < _content_files(site_dir)
        # the hostile heading is found and shown as text: no script of it ran
        links = _results_with(tools, "zanzibarite", "evil.md")
        assert any("evil.md" in link for link in links), links
        # terms named like Object's own properties are terms like any other (the shards are scripts)
        for name in ("__proto__", "constructor"):
            links = _results_with(tools, name, "evil.md")
            assert any("evil.md" in link for link in links), (name, links)
        assert tools.evaluate("window.__pwned === undefined && "
                              "document.querySelector('iframe').contentWindow.__pwned === undefined")
        shown = tools.evaluate("document.querySelector('.md-search-result').textContent")
        assert "window.__pwned=1" in shown
        assert tools.errors() == []
    finally:
        tools.close()
