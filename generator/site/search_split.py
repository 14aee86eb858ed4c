"""A search that loads only what a query needs: Material's one search index rewritten into small shards.

Material's search plugin writes `search/search_index.json`: every section of every page with its full text
(tens of MB on a big tree), which its worker downloads and indexes in full before a first search can run;
for file:// its offline plugin writes the same as `search_index.js`. `split_site_index` rewrites both, after
the plugins ran, into a prefix tree of term shards and a store of section contents, in `search/<key>/`:

- a term's postings are scored here, once, as Material's lunr would score them (BM25 with b=0, its field
  and document boosts, idf over the whole site): `[doc, weight]` pairs, summed over a section's fields;
- node files `n<id>.js` form a tree by term prefix. A node whose terms' postings are few enough is a leaf
  holding them all; a bigger one holds, per next character, the id of its child, and a summary: the `TOP`
  sections with the highest summed weight over all terms with its prefix, which is exactly what a query of
  that prefix (Material adds a trailing wildcard to every term) ranks first. A query term walks from the
  root to the leaf or the node of its own length: it loads its path only;
- content files `c<id>.js` hold sections (page, anchor, title, text) in index order, a few KB each: a query
  loads those of the sections it shows.

The eager index (`search_index.json` and its offline `.js`) keeps Material's config plus what the worker
needs to find the rest: the shard folder, the root node, the first section of every page and of every
content file. Everything is a script (`__sourcebookShard(name, data)`) so it loads from file:// (a page's
<script>) and over http (a worker's importScripts) alike; the folder is named by the source index's
content, so a cached shard never pairs with another build's.

The worker (site/assets/sourcebook/search-worker.js) answers Material's page script in Material's own
message format: the search box, its results and highlighting look as before.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
import shutil
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from sourcebook.atomic import atomic_write_text

SEARCH_DIR = "search"
INDEX_NAME = "search_index.json"
OFFLINE_NAME = "search_index.js"  # Material's offline plugin: `var __index = <the json>`
SHARD_CALL = "__sourcebookShard"
FORMAT = 3  # bump when the shard format changes: the folder key changes with it (a cached shard of
#            another format never meets this worker)

LEAF_POSTINGS = 3000   # a node with at most this many postings under it is a leaf holding them all
TERM_POSTINGS = 3000   # a leaf keeps a term's best postings only (a term in most sections ranks nothing)
TOP = 200              # sections a summary keeps: more than the 20 pages a result list shows
CONTENT_CHARS = 3000   # a content file closes after this many characters (a query loads ~25)
TEXT_CHARS = 1500      # a section's text is shown cut to its first blocks within this many characters
K1 = 1.2               # lunr's BM25 k1 (Material sets b to 0: no length normalisation)

# lunr 2.3.9's English stop words, which Material's pipeline ("stopWordFilter") drops from the index and
# from queries; tests/e2e/test_search_split.py checks the list against Material's bundled worker
STOP_WORDS = frozenset(str.split(
    "a able about across after all almost also am among an and any are as at be because been but by can "
    "cannot could dear did do does either else ever every for from get got had has have he her hers him his "
    "how however i if in into is it its just least let like likely may me might most must my neither no nor "
    "not of off often on only or other our own rather said say says she should since so some than that the "
    "their them then there these they this tis to too twas us wants was we were what when where which while "
    "who whom why will with would yet you your"))

_TAG = re.compile(r"<[^>]*>")


def separator(config: dict[str, Any]) -> re.Pattern[str]:
    """Material's token separator from the index's config (a JavaScript regex source; the ones Material and
    sourcebook use mean the same in Python)."""
    return re.compile(str(config.get("separator") or r"[\s\-]+"))


def tokens(text: str, sep: re.Pattern[str]) -> list[str]:
    """The terms lunr indexes for a field's text, as Material's tokenizer and pipeline make them: markup
    tags skipped, the text split on the separator (zero-width splits included), lower-cased, stop words
    dropped."""
    found: list[str] = []
    for part in _TAG.split(text):
        if part:  # split, then lower-cased: the separator's camelCase boundaries read the case
            found += sep.split(part)
    return [t for t in map(str.lower, found) if t and t not in STOP_WORDS]


@dataclass
class Postings:
    """term -> (section numbers, weights): the index before sharding."""
    terms: dict[str, tuple[np.ndarray, np.ndarray]] = field(default_factory=dict)


def score(docs: list[dict[str, Any]], config: dict[str, Any]) -> Postings:
    """Every term's postings with lunr's weights: per field, idf * (k1 + 1) * tf / (k1 + tf) (b = 0) times
    the field's and the section's boost, summed over fields; idf counts a section once per field it has
    the term in, as lunr.idf does."""
    sep = separator(config)
    boosts = {name: float((spec or {}).get("boost", 1) or 1)
              for name, spec in (config.get("fields") or {"title": {}, "text": {}}).items()}
    fields = [name for name in ("title", "text") if name in boosts]
    # one entry per (term, section, field) the term is in, with its count there: the weights are then
    # worked out for all terms at once (a loop over 100k terms' small arrays was most of the time)
    term_ids: dict[str, int] = {}
    entry_term: list[int] = []
    entry_doc: list[int] = []
    entry_slot: list[int] = []
    entry_tf: list[int] = []
    for number, doc in enumerate(docs):
        for slot, name in enumerate(fields):
            for term, times in Counter(tokens(str(doc.get(name, "")), sep)).items():
                entry_term.append(term_ids.setdefault(term, len(term_ids)))
                entry_doc.append(number)
                entry_slot.append(slot)
                entry_tf.append(times)
    result = Postings()
    if not entry_term:
        return result
    total = len(docs)
    doc_boost = np.array([float(d.get("boost", 1) or 1) for d in docs])
    field_boost = np.array([boosts[name] for name in fields])
    tid = np.array(entry_term, dtype=np.int64)
    at = np.array(entry_doc, dtype=np.int64)
    tf = np.array(entry_tf, dtype=np.float64)
    # lunr's idf: a term counts once per field of a section it is in (math.log per distinct count, as before)
    with_term = np.bincount(tid, minlength=len(term_ids))
    idf_of = {int(n): math.log(1 + abs((total - float(n) + 0.5) / (float(n) + 0.5)))
              for n in np.unique(with_term)}
    idf = np.array([idf_of[int(n)] for n in with_term])
    part = idf[tid] * (K1 + 1) * tf / (K1 + tf) * field_boost[np.array(entry_slot, dtype=np.int64)]
    # summed over a section's fields (in field order, as the row sum did), then the section's boost
    keys, inverse = np.unique(tid * total + at, return_inverse=True)
    weight = np.bincount(inverse, weights=part) * doc_boost[keys % total]
    numbers = keys % total
    starts = np.flatnonzero(np.diff(keys // total, prepend=-1))
    names = list(term_ids)
    for term_at, lo, hi in zip(keys[starts] // total, starts, [*starts[1:], len(keys)], strict=True):
        result.terms[names[term_at]] = (numbers[lo:hi], weight[lo:hi])
    result.terms.update(exact_names(docs))
    return result


# A symbol section's exact name, as a term of its own: `=flagset=` for the section titled `FlagSet`, and
# `=parse=` for `FlagSet.Parse` too (its last part). The separator splits on `=`, so no word of any text is
# ever such a term; the closing `=` keeps Material's trailing wildcard from reaching a longer name. The
# worker looks a one-word query up as that term too (search-worker.js `search`): a query that is a
# declaration's whole name ranks that section first, where lunr's words alone let its members outrank it
# (`FlagSet` is the words `flag` and `set`, which every `FlagSet.X` title also holds). A last part weighs less
# the deeper its declaration (divided by the qualname's number of parts): asked `Options`, a reader means the
# type `cxxopts.Options`, not its constructor `cxxopts.Options.Options`, which carries the same last part.
EXACT_QUALNAME = 1_000_000.0
EXACT_LAST_PART = 100_000.0
_PARAMS = re.compile(r"\s*[(<\[].*$", re.DOTALL)


def exact_term(name: str) -> str:
    return f"={name.strip().lower()}="


def exact_names(docs: list[dict[str, Any]]) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """The exact-name terms of the symbol sections (anchors `#sym-…`) and of the file pages' articles: a
    section's title without its parameter list, and its last dotted (or `::`, or `/`) part, each mapped to
    the sections that carry it."""
    found: dict[str, dict[int, float]] = {}
    for number, doc in enumerate(docs):
        location = str(doc.get("location", ""))
        if "#sym-" not in location and not (location.startswith("files/") and "#" not in location):
            continue  # a symbol's section, or a file page's article (its title is the file's name)
        title = _PARAMS.sub("", _TAG.sub("", str(doc.get("title", ""))).strip())
        if not title or any(ch.isspace() for ch in title):
            continue
        names = {exact_term(title): EXACT_QUALNAME}
        qualified = title.rsplit(".", 1)[-1].rsplit("::", 1)[-1]
        last = qualified if "#" in location else title.rsplit("/", 1)[-1]
        if last and last != title:
            depth = len(re.split(r"\.|::", title)) if "#" in location else 1
            names.setdefault(exact_term(last), EXACT_LAST_PART / max(1, depth))
        for term, weight in names.items():
            sections = found.setdefault(term, {})
            sections[number] = max(sections.get(number, 0.0), weight)
    return {term: (np.array(list(sections), dtype=np.int64), np.array(list(sections.values())))
            for term, sections in found.items()}


def _pairs(numbers: np.ndarray, weights: np.ndarray) -> list[int]:
    """Postings in the shard form: sorted by section, `[section delta, weight * 100]` flattened."""
    order = np.argsort(numbers, kind="stable")
    numbers, weights = numbers[order], weights[order]
    deltas = np.diff(numbers, prepend=0)
    flat = np.empty(2 * len(numbers), dtype=np.int64)
    flat[0::2] = deltas
    flat[1::2] = np.maximum(1, np.rint(weights * 100)).astype(np.int64)
    return flat.tolist()


def _best(numbers: np.ndarray, weights: np.ndarray, keep: int) -> tuple[np.ndarray, np.ndarray]:
    if len(numbers) <= keep:
        return numbers, weights
    at = np.argpartition(-weights, keep - 1)[:keep]
    return numbers[at], weights[at]


def _summed(parts: Iterable[tuple[np.ndarray, np.ndarray]]) -> tuple[np.ndarray, np.ndarray]:
    chunks = list(parts)
    numbers = np.concatenate([n for n, _ in chunks])
    weights = np.concatenate([w for _, w in chunks])
    unique, inverse = np.unique(numbers, return_inverse=True)
    return unique, np.bincount(inverse, weights=weights)


def tree(postings: Postings) -> list[dict[str, Any]]:
    """The prefix tree's nodes, the root first: a leaf is `{"t": [[term, pairs], …]}` (a list: loaded as a
    script, an object literal would take a term `__proto__` for its prototype), an inner node
    `{"k": {char: child id}, "s": pairs}` (its summary)."""
    nodes: list[dict[str, Any]] = []
    terms = sorted(postings.terms)

    def build(prefix: str, names: list[str]) -> int:
        at = len(nodes)
        nodes.append({})
        size = sum(len(postings.terms[n][0]) for n in names)
        if size <= LEAF_POSTINGS or len(names) == 1:
            nodes[at] = {"t": [[n, _pairs(*_best(*postings.terms[n], TERM_POSTINGS))] for n in names]}
            return at
        node: dict[str, Any] = {"k": {}}
        if prefix:
            node["s"] = _pairs(*_best(*_summed(postings.terms[n] for n in names), TOP))
        depth = len(prefix)
        groups: dict[str, list[str]] = {}
        for name in names:
            if len(name) > depth:  # the term equal to the prefix itself counts in the summary only
                groups.setdefault(name[depth], []).append(name)
        nodes[at] = node
        for char, group in groups.items():
            node["k"][char] = build(prefix + char, group)
        return at

    build("", terms)
    return nodes


def cut_text(text: str, limit: int = TEXT_CHARS) -> str:
    """`text`'s leading top-level blocks (`<p>…</p>`, `<pre>…</pre>`, text between them) within `limit`
    characters, at least the first: cut only where every tag opened has closed, so the shown HTML stays
    balanced (Material shows a section's text by blocks too)."""
    if len(text) <= limit:
        return text
    depth, end = 0, 0
    for match in _TAG.finditer(text):
        tag = match.group()
        if tag.startswith("</"):
            depth = max(0, depth - 1)
        elif tag.endswith("/>"):
            continue
        else:
            depth += 1
        if depth == 0:
            if match.end() > limit and end:
                break
            end = match.end()
    if end:
        return text[:end]
    return re.sub(r"&[#\w]*$", "", text[:limit].rsplit("<", 1)[0] if "<" in text else text[:limit])


def script(name: str, data: Any) -> str:
    """A shard as a script. JSON is a JavaScript expression; ensure_ascii escapes U+2028/2029 and every
    control character, and `<\\/` keeps a `</script>` in a symbol name or a page's text from ending any
    inline script the file might be pasted into (a <script src> never could)."""
    body = json.dumps(data, ensure_ascii=True, separators=(",", ":")).replace("</", "<\\/")
    return f"{SHARD_CALL}({json.dumps(name)},{body});\n"


def shard(index: dict[str, Any]) -> tuple[dict[str, Any], dict[str, str]]:
    """Material's search index -> (the eager index, {file name: script}) (see the module docstring)."""
    docs = list(index.get("docs", []))
    config = dict(index.get("config", {}))
    nodes = tree(score(docs, config))
    files = {f"n{i}.js": script(f"n{i}", node) for i, node in enumerate(nodes)}
    page_starts: list[int] = []
    content_starts: list[int] = []
    chunk: list[list[Any]] = []
    chunk_pages: list[str] = []
    size = 0

    def close() -> None:
        nonlocal chunk, chunk_pages, size
        if chunk:
            name = f"c{len(content_starts) - 1}"
            files[name + ".js"] = script(name, {"p": chunk_pages, "d": chunk})
        chunk, chunk_pages, size = [], [], 0

    previous = None
    for number, doc in enumerate(docs):
        page, _, anchor = str(doc.get("location", "")).partition("#")
        if page != previous:
            page_starts.append(number)
            previous = page
        if not chunk or size > CONTENT_CHARS:
            close()
            content_starts.append(number)
        if page not in chunk_pages:
            chunk_pages.append(page)
        title, text = str(doc.get("title", "")), cut_text(str(doc.get("text", "")))
        chunk.append([chunk_pages.index(page), anchor, title, text])
        size += len(title) + len(text) + len(anchor) + 8
    close()
    config["sourcebook"] = {
        "pages": _deltas(page_starts), "content": _deltas(content_starts), "count": len(docs),
        "stop": sorted(STOP_WORDS),
    }
    return {"config": config, "docs": [], "options": index.get("options", {})}, files


def _deltas(numbers: list[int]) -> list[int]:
    return [b - a for a, b in zip([0, *numbers], numbers, strict=False)]


def split_site_index(site_dir: Path) -> Path | None:
    """Shard `site_dir`'s search index in place (see the module docstring); returns the shard folder, or
    None when the site has no search index (or it was sharded already)."""
    search = site_dir / SEARCH_DIR
    source = search / INDEX_NAME
    if not source.is_file():
        return None
    raw = source.read_bytes()
    index = json.loads(raw)
    if "sourcebook" in index.get("config", {}):
        return None
    key = hashlib.sha256(raw + f"\0{FORMAT}".encode()).hexdigest()[:12]
    eager, files = shard(index)
    folder = search / key
    eager["config"]["sourcebook"]["dir"] = key
    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir(parents=True)
    # a fresh folder no reader knows yet: plain writes; the eager index, written last, switches to it
    for name, text in files.items():
        (folder / name).write_text(text, encoding="utf-8")
    for old in search.iterdir():  # an earlier build's shards (a site updated in place)
        if old.is_dir() and old != folder:
            shutil.rmtree(old)
        elif old.name.startswith("text-") and old.suffix == ".js":
            old.unlink()
    body = json.dumps(eager, ensure_ascii=False, separators=(",", ":"))
    if (search / OFFLINE_NAME).is_file():
        atomic_write_text(search / OFFLINE_NAME, f"var __index = {body}")
    atomic_write_text(source, body)
    return folder
