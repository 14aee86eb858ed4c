"""Diagrams people can read: the package-level architecture (at most 25 nodes, clustered by parent package,
clickable), edge lists capped at ~60 (the strongest first, with what was left out said in words), and class
hierarchies (split into diagrams of at most 25 classes, file by file and subtree by subtree). Mermaid text
only; labels are escaped so `__init__` stays `__init__` and nothing becomes markup.

Every diagram is drawn at its natural size (NATURAL_SIZE): Mermaid's default fits an SVG to the column, so a
wide diagram shrank until its labels were 2-7 px; drawn full size its labels keep Mermaid's 16 px and a wide
one pans and zooms in its box (site/assets/sourcebook/diagram-zoom.js).
"""

from __future__ import annotations

import posixpath
import re
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import quote

from generator.analyze.facts import FileFacts
from generator.pages.anchors import page_href, shown_qualname

MAX_NODES = 25
MAX_EDGES = 60
# Mermaid's front matter: the diagram at its own size, not shrunk to the column (`useMaxWidth` is no key
# Mermaid's `secure` list guards, and front matter is no `%%` directive: the wiki's diagrams hold none)
NATURAL_SIZE = "---\nconfig:\n  flowchart:\n    useMaxWidth: false\n---"

# Mermaid reads `#code;` as a character: quotes and angle brackets would end the label or become markup, and
# `_`/`*` runs become bold/italics in its Markdown-aware labels (`__init__.py` showed as a bold "init.py").
_LABEL_CODES = {"#": "#35;", '"': "#quot;", "<": "#lt;", ">": "#gt;", "_": "#95;", "*": "#42;", "`": "#96;",
                "&": "#38;", "[": "#91;", "]": "#93;", "|": "#124;", "{": "#123;", "}": "#125;",
                "%": "#37;"}  # %%{init: …}%% is a directive wherever it stands, a label included


def mermaid_label(text: str) -> str:
    """A quoted Mermaid label: every character Mermaid could read as syntax or markup as an entity code."""
    text = " ".join(text.split())
    return '"' + "".join(_LABEL_CODES.get(c, c) for c in text) + '"'


def click_url(url: str) -> str:
    """A page URL for a Mermaid `click` line: percent-encoded (the same link to a browser), so a file name's
    `%%{init: …}%%` or quote cannot become a directive or end the string."""
    return quote(url, safe="/#.-_~")


def page_url(page_id: str, from_page: str) -> str:
    """The built site's URL of a page (use_directory_urls: false), relative to `from_page`: Mermaid's links
    are not rewritten by MkDocs, so they point at the .html directly."""
    return site_href(page_href(from_page, page_id))


def cap_edges(edges: Mapping[tuple[str, str], int],
              limit: int = MAX_EDGES) -> tuple[list[tuple[str, str]], int]:
    """The `limit` strongest edges (weight, then the degree of their ends), and how many were left out."""
    degree: Counter[str] = Counter()
    for a, b in edges:
        degree[a] += 1
        degree[b] += 1
    ranked = sorted(edges, key=lambda e: (-edges[e], -(degree[e[0]] + degree[e[1]]), e))
    return sorted(ranked[:limit]), max(0, len(ranked) - limit)


CLUSTER = "cluster:"  # an edge's target written CLUSTER + a cluster's label: the arrow ends at that box


@dataclass(frozen=True)
class Graph:
    """A flowchart: nodes (id, label, url or "", cluster or ""), weighted edges, and words on what was cut."""

    nodes: Sequence[tuple[str, str, str, str]]
    edges: Sequence[tuple[str, str]]
    left_out: str = ""
    direction: str = "LR"
    unit: str = ""  # what a node is when a caption must say it: "files" for file_architecture
    title: str = ""  # what this part of a split diagram shows ("errors.py, part 1 of 2"); "" when whole

    def mermaid(self) -> str:
        lines = [NATURAL_SIZE, f"graph {self.direction}"]
        clusters: dict[str, list[tuple[str, str, str, str]]] = defaultdict(list)
        for node in self.nodes:
            clusters[node[3]].append(node)
        box = {cluster: f"c{n}" for n, cluster in enumerate(sorted(clusters))}
        for cluster, members in sorted(clusters.items()):
            indent = "  "
            if cluster:
                lines.append(f"  subgraph {box[cluster]}[{mermaid_label(cluster)}]")
                indent = "    "
            lines += [f"{indent}{nid}[{mermaid_label(label)}]" for nid, label, _, _ in members]
            if cluster:
                lines.append("  end")
        # an edge to CLUSTER + a box's label points at the box (a Go file imports a package, not its files)
        # (a label is repository text: only a box's own id ever reaches the diagram, never the label)
        lines += [f"  {a} --> {box[b.removeprefix(CLUSTER)] if b.startswith(CLUSTER) else b}"
                  for a, b in self.edges if not b.startswith(CLUSTER) or b.removeprefix(CLUSTER) in box]
        lines += [f'  click {nid} href "{click_url(url)}"' for nid, _, url, _ in self.nodes if url]
        return "\n".join(lines)


def architecture(modules: Mapping[str, str], depends_on: Mapping[str, Iterable[str]],
                 importance: Mapping[str, float], file_module: Callable[[str], str], from_page: str, *,
                 keep: Callable[[str], bool] = lambda _d: True, max_nodes: int = MAX_NODES,
                 max_edges: int = MAX_EDGES) -> Graph | None:
    """Packages (directories with pages) and the imports between them, file imports folded into the most
    important `max_nodes` packages (a file in an unshown package counts for its nearest shown ancestor)."""
    holders = {file_module(p) for p in depends_on}
    holders |= {file_module(q) for deps in depends_on.values() for q in deps}
    # folders that hold code themselves: a bare `src/` would only be a box around its one package
    candidates = sorted((d for d in modules if d and keep(d) and d in holders),
                        key=lambda d: (-importance.get(d, 0.0), d))
    chosen = set(candidates[:max_nodes])
    if len(chosen) < 2:
        return None

    def owner(directory: str) -> str | None:
        while directory:
            if directory in chosen:
                return directory
            directory = posixpath.dirname(directory)
        return None

    weights: Counter[tuple[str, str]] = Counter()
    for path, deps in depends_on.items():
        a = owner(file_module(path))
        if a is None:
            continue
        for dep in deps:
            b = owner(file_module(dep))
            if b is not None and b != a and not b.startswith(a + "/"):
                weights[(a, b)] += 1
    edges, cut = cap_edges(weights, max_edges)
    linked = {x for e in edges for x in e}
    shown = sorted(chosen if len(linked) < 2 else linked | set(candidates[:8]) & chosen)
    ids = {d: f"p{i}" for i, d in enumerate(shown)}
    nodes = []
    for d in shown:
        parent = posixpath.dirname(d)
        cluster = parent if parent in chosen else ""  # a subpackage sits in a box named after its parent
        label = (posixpath.basename(d) if cluster else d) + "/"
        nodes.append((ids[d], label, page_url(modules[d], from_page), cluster))
    omitted = len(candidates) - len(shown)
    return Graph(nodes, [(ids[a], ids[b]) for a, b in edges if a in ids and b in ids],
                 left_out_words(omitted, "smaller package", cut, "weaker import link"))


_PY_BASES = re.compile(r"^\s*class\s+\w+\s*(?:\[[^\]]*\])?\s*\((.*)\)\s*:?\s*$")
_EXTENDS = re.compile(r"\b(?:extends|implements)\s+([\w.$<>, ]+?)(?=\{|$|\bimplements\b)")


def base_names(signature: str, language: str | None) -> list[str]:
    """The base classes a class signature names (last dotted part), without generics or keywords."""
    names: list[str] = []
    m = _PY_BASES.match(signature) if language == "python" else None
    if m:
        for raw in m.group(1).split(","):
            part = raw.strip()
            if part and "=" not in part and not part.startswith("*"):
                names.append(part.split("[")[0].split(".")[-1])
    else:
        for m2 in _EXTENDS.finditer(signature):
            for part in re.sub(r"<[^<>]*>", "", m2.group(1)).split(","):
                if part.strip():
                    names.append(part.strip().split(".")[-1])
    return [n for n in names if n.isidentifier() and n not in {"object", "Generic", "Protocol"}]


ClassIndex = Mapping[str, list[tuple[str, str]]]  # class name -> (path, qualname) of its definitions


def class_index(all_facts: Mapping[str, FileFacts]) -> ClassIndex:
    out: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for f in all_facts.values():
        for s in f.symbols:
            if s.kind in {"class", "interface", "struct", "trait"}:
                out[s.name].append((f.path, s.qualname))
    return dict(out)


def site_href(markdown_href: str) -> str:
    """A Markdown link to a page (`../a.py.md#x`) as the built site's URL (`../a.py.html#x`)."""
    path, sep, anchor = markdown_href.partition("#")
    if path.endswith(".md"):
        path = path[: -len(".md")] + ".html"
    return path + sep + anchor


def class_hierarchy(files: Iterable[FileFacts], classes_by_name: ClassIndex,
                    href: Callable[[str, str], str | None], *,
                    max_nodes: int = MAX_NODES) -> list[Graph]:
    """Classes of `files` and the repository classes they inherit from (resolved by name: the same file
    first, then a name defined once in the repository); `href` gives a node's site URL. One diagram when
    it has at most `max_nodes` classes; else one per file (a big file's hierarchy cut into subtrees, each
    under the base it hangs from), small ones packed together, each diagram at most `max_nodes` classes
    and titled with what it shows. [] when nothing inherits."""
    edges: dict[tuple[str, str], str] = {}  # (class key, base key) -> the file of the subclass
    for f in files:
        for s in f.symbols:
            if s.kind not in {"class", "interface"}:
                continue
            for base in base_names(s.signature, f.file.language):
                targets = classes_by_name.get(base, [])
                same = [t for t in targets if t[0] == f.path]
                target = same[0] if same else (targets[0] if len(targets) == 1 else None)
                if target and target != (f.path, s.qualname):
                    edges[(f"{f.path}::{s.qualname}", f"{target[0]}::{target[1]}")] = f.path
    if not edges:
        return []
    every = {x for e in edges for x in e}
    if len(every) <= max_nodes:
        return [_hierarchy_graph(every, edges, href)]
    parts: list[tuple[frozenset[str], str]] = []  # node set, the file it is drawn for
    by_file: dict[str, list[tuple[str, str]]] = defaultdict(list)
    for edge, path in edges.items():
        by_file[path].append(edge)
    for path in sorted(by_file):
        parts += [(piece, path) for piece in tree_pieces(sorted(by_file[path]), max_nodes)]
    packed: list[tuple[set[str], list[str]]] = []
    for piece, path in parts:
        if packed and len(packed[-1][0] | piece) <= max_nodes:
            packed[-1][0].update(piece)
            if packed[-1][1][-1] != path:
                packed[-1][1].append(path)
        else:
            packed.append((set(piece), [path]))
    pieces_of: Counter[str] = Counter(p for _, paths in packed for p in paths)
    seen: Counter[str] = Counter()
    graphs = []
    for nodes, paths in packed:
        words = []
        for p in paths:
            seen[p] += 1
            name = posixpath.basename(p)
            words.append(f"{name}, part {seen[p]} of {pieces_of[p]}" if pieces_of[p] > 1 else name)
        graphs.append(_hierarchy_graph(nodes, {e: f for e, f in edges.items() if e[0] in nodes
                                               and e[1] in nodes and f in paths}, href, "; ".join(words)))
    return graphs


def tree_pieces(edges: Sequence[tuple[str, str]], max_nodes: int = MAX_NODES) -> list[frozenset[str]]:
    """The classes of an inheritance graph (`edges`: subclass -> base) in pieces of at most `max_nodes`:
    each class hangs from its first base (a tree); a tree that fits is one piece, a bigger one is cut into
    its subtrees, each drawn under the base it hangs from (a base with 40 direct subclasses: two pieces of
    the base and 24 of them). Every tree edge is in some piece; small pieces are packed together."""
    parent: dict[str, str] = {}
    for child, base in edges:
        if child not in parent and not _reaches(parent, base, child):
            parent[child] = base
    nodes = sorted({x for e in edges for x in e})
    children: dict[str, list[str]] = defaultdict(list)
    for child in nodes:
        if child in parent:
            children[parent[child]].append(child)
    size: dict[str, int] = {}

    def measure(node: str) -> int:
        if node not in size:  # recursive: inheritance chains are a few classes deep, never hundreds
            size[node] = 1 + sum(measure(c) for c in children[node])
        return size[node]

    def subtree(node: str) -> set[str]:
        out, todo = set(), [node]
        while todo:
            n = todo.pop()
            out.add(n)
            todo += children[n]
        return out

    def pieces(node: str, above: str | None) -> list[frozenset[str]]:
        context = {above} if above is not None else set()
        if measure(node) + len(context) <= max_nodes:
            return [frozenset(subtree(node) | context)]
        found = [frozenset({node} | context)] if context else []
        for c in children[node]:
            found += pieces(c, node)
        return _pack(found, max_nodes)

    out: list[frozenset[str]] = []
    for root in nodes:
        if root not in parent:
            out += pieces(root, None)
    return _pack(out, max_nodes)


def _reaches(parent: Mapping[str, str], start: str, goal: str) -> bool:
    """Whether following first bases from `start` reaches `goal` (an edge to it would close a loop)."""
    seen = set()
    while start not in seen:
        if start == goal:
            return True
        seen.add(start)
        if start not in parent:
            return False
        start = parent[start]
    return False


def _pack(pieces: Sequence[frozenset[str]], max_nodes: int) -> list[frozenset[str]]:
    """Consecutive pieces merged while their union stays within `max_nodes` (siblings share their base)."""
    out: list[frozenset[str]] = []
    for piece in pieces:
        if out and len(out[-1] | piece) <= max_nodes:
            out[-1] = out[-1] | piece
        else:
            out.append(piece)
    return out


def _hierarchy_graph(nodes: Iterable[str], edges: Iterable[tuple[str, str]],
                     href: Callable[[str, str], str | None], title: str = "") -> Graph:
    names = sorted(nodes)
    ids = {k: f"k{i}" for i, k in enumerate(names)}
    shown = []
    for k in names:
        path, qualname = k.split("::", 1)
        shown.append((ids[k], shown_qualname(qualname), href(path, qualname) or "", posixpath.basename(path)))
    return Graph(shown, [(ids[a], ids[b]) for a, b in sorted(edges)], direction="BT", title=title)


MAX_OUTSIDE = 8  # other packages on a module's import diagram: the most linked ones


def module_imports(directory: str, *, files: Sequence[str], subdirs: Sequence[str],
                   depends_on: Mapping[str, Iterable[str]], pages: Mapping[str, str],
                   modules: Mapping[str, str], from_page: str, max_nodes: int = MAX_NODES,
                   max_edges: int = MAX_EDGES) -> Graph | None:
    """A module's import diagram a reader can take in: its files and subpackages (each subpackage one node,
    its files folded into it), and the other packages they import, boxed by where they are. At most
    `max_nodes` boxes (the most linked first; at most MAX_OUTSIDE other packages) and `max_edges` arrows (the
    strongest first); what was left out is said in words. `depends_on` is the whole repository's import
    graph (`pages`: file page ids, `modules`: module page ids, `from_page`: the module's page)."""
    inside = set(files)
    prefixes = tuple(sub + "/" for sub in subdirs)
    own = directory + "/" if directory else ""

    def node(path: str) -> str | None:
        """The box a file belongs to: itself, its subpackage, or (outside) its folder; None = not drawn."""
        if path in inside:
            return path
        for sub, prefix in zip(subdirs, prefixes, strict=True):
            if path.startswith(prefix):
                return sub + "/"
        folder = posixpath.dirname(path)
        if directory and (folder == directory or folder.startswith(own)):
            return None  # a file of this module not on the page (cannot happen for a scanned tree)
        return "ext:" + folder

    weights: Counter[tuple[str, str]] = Counter()
    for path, deps in depends_on.items():
        if not (path in inside or path.startswith(prefixes)):
            continue
        a = node(path)
        for dep in deps:
            b = node(dep)
            if a is not None and b is not None and a != b:
                weights[(a, b)] += 1
    if not weights:
        return None
    degree: Counter[str] = Counter()
    for (a, b), w in weights.items():
        degree[a] += w
        degree[b] += w
    ranked = sorted(degree, key=lambda n: (-degree[n], n))
    outside = [n for n in ranked if n.startswith("ext:")][:MAX_OUTSIDE]
    kept = [n for n in ranked if not n.startswith("ext:")][: max_nodes - len(outside)] + outside
    chosen = set(kept)
    edges, cut = cap_edges({e: w for e, w in weights.items() if e[0] in chosen and e[1] in chosen}, max_edges)
    drawn = sorted({n for e in edges for n in e})
    ids = {n: f"n{i}" for i, n in enumerate(drawn)}
    nodes = []
    for n in drawn:
        if n.startswith("ext:"):
            folder = n[4:]
            parent = posixpath.dirname(folder)
            label, cluster = (posixpath.basename(folder) or ".") + "/", f"elsewhere: {parent or '.'}/"
            url = page_url(modules[folder], from_page) if folder in modules else ""
        elif n.endswith("/"):
            label, cluster = posixpath.basename(n[:-1]) + "/", "subpackages"
            url = page_url(modules[n[:-1]], from_page) if n[:-1] in modules else ""
        else:
            label, cluster = posixpath.basename(n), ""
            url = page_url(pages[n], from_page) if n in pages else ""
        nodes.append((ids[n], label, url, cluster))
    hidden = len(degree) - len(drawn)
    words = []
    if hidden > 0:
        words.append(f"{hidden} less linked file{'s' if hidden != 1 else ''} or package"
                     f"{'s' if hidden != 1 else ''} not shown")
    if cut:
        words.append(f"{cut} weaker import arrow{'s' if cut != 1 else ''} left out")
    return Graph(nodes, [(ids[a], ids[b]) for a, b in edges], "; ".join(words))


def file_architecture(paths: Iterable[str], depends_on: Mapping[str, Iterable[str]],
                      pages: Mapping[str, str], from_page: str, *, max_nodes: int = MAX_NODES,
                      max_edges: int = MAX_EDGES) -> Graph | None:
    """The main package drawn file by file, for a repository whose package-level diagram would be a few
    boxes: its files and the imports between them, boxed by folder when there are several, at most
    `max_nodes` files (the most connected) and `max_edges` arrows (the strongest); the rest said in words.
    `pages`: file page ids (each node opens its file's page)."""
    inside = set(paths)
    weights: Counter[tuple[str, str]] = Counter()
    for a in inside:
        for b in depends_on.get(a, ()):
            if b in inside and b != a:
                weights[(a, b)] += 1
    if not weights:
        return None
    chosen, edges, cut = most_connected(weights, max_nodes, max_edges)
    drawn = sorted(chosen)
    folders = {posixpath.dirname(p) for p in drawn}
    ids = {p: f"f{i}" for i, p in enumerate(drawn)}
    nodes = [(ids[p], posixpath.basename(p), page_url(pages[p], from_page) if p in pages else "",
              (posixpath.dirname(p) or ".") + "/" if len(folders) > 1 else "") for p in drawn]
    hidden = len(inside) - len(drawn)
    arrows = [(ids[a], ids[b]) for a, b in edges]
    if len(folders) > 1:
        arrows = _to_boxes(arrows, {ids[p]: (posixpath.dirname(p) or ".") + "/" for p in drawn})
    return Graph(nodes, arrows,
                 left_out_words(hidden, "less connected file", cut, "weaker import arrow"), unit="files")


def most_connected(weights: Mapping[tuple[str, str], int], max_nodes: int, max_edges: int
                   ) -> tuple[set[str], list[tuple[str, str]], int]:
    """(the `max_nodes` nodes with the most arrows, the strongest `max_edges` arrows between them, how many
    of those were cut): what a capped diagram draws."""
    degree: Counter[str] = Counter()
    for a, b in weights:
        degree[a] += 1
        degree[b] += 1
    chosen = set(sorted(degree, key=lambda n: (-degree[n], n))[:max_nodes])
    edges, cut = cap_edges({e: w for e, w in weights.items() if e[0] in chosen and e[1] in chosen}, max_edges)
    return chosen, edges, cut


def _to_boxes(arrows: Sequence[tuple[str, str]], box_of: Mapping[str, str]) -> list[tuple[str, str]]:
    """Arrows with every file's arrows to all of another box's files (two or more) drawn as one arrow to that
    box: a Go file imports a package, so it depends on each of its files, and drawn file by file that is
    a hairball of identical fans."""
    members: dict[str, set[str]] = defaultdict(set)
    for node, box in box_of.items():
        members[box].add(node)
    targets: dict[str, set[str]] = defaultdict(set)
    for a, b in arrows:
        targets[a].add(b)
    whole = {(a, box) for a, bs in targets.items() for box, inside in members.items()
             if len(inside) > 1 and box != box_of.get(a) and inside <= bs}
    out: list[tuple[str, str]] = []
    for a, b in arrows:
        if (a, box_of.get(b)) in whole:
            if (a, CLUSTER + box_of[b]) not in out:
                out.append((a, CLUSTER + box_of[b]))
        else:
            out.append((a, b))
    return out


def left_out_words(nodes: int, node_noun: str, edges: int, edge_noun: str) -> str:
    """What a diagram does not draw, in words ("3 smaller packages not shown; 1 weaker link left out")."""
    words = []
    if nodes > 0:
        words.append(f"{nodes} {node_noun}{'s' if nodes != 1 else ''} not shown")
    if edges:
        words.append(f"{edges} {edge_noun}{'s' if edges != 1 else ''} left out")
    return "; ".join(words)
