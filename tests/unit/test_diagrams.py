"""Class hierarchies split into diagrams a reader can take in at 1280 px: at most 25 classes each, file by
file, a big file's tree cut into subtrees under the base they hang from, every inheritance link drawn
somewhere, and every diagram drawn at its natural size (not shrunk to the column: labels keep Mermaid's 16
px)."""

from __future__ import annotations

import re

from generator.analyze.facts import FileFacts, SourceFile, Symbol
from generator.pages.diagrams import NATURAL_SIZE, class_hierarchy, class_index, tree_pieces


def _file(path: str, classes: dict[str, str]) -> FileFacts:
    """A Python file defining `classes` (name -> its bases, as written)."""
    symbols = [Symbol(name, name, "class", path, n + 1, n + 1, f"class {name}({bases}):" if bases
                      else f"class {name}:") for n, (name, bases) in enumerate(classes.items())]
    return FileFacts(SourceFile(path, "python", 1, path), symbols)


def _edges(text: str) -> int:
    return len(re.findall(r"^\s*k\d+ --> k\d+$", text, re.M))


def test_a_52_class_hierarchy_is_split_into_readable_diagrams() -> None:
    # errors.py: a base, 40 direct subclasses, 3 of them with 2 subclasses each; models.py: 5 small classes
    classes = {"Error": ""} | {f"E{i:02}": "Error" for i in range(40)}
    classes |= {f"S{i}{j}": f"E{i:02}" for i in range(3) for j in range(2)}
    models = {"Model": "", "User": "Model", "Team": "Model", "Admin": "User", "Bot": "User"}
    files = [_file("pkg/errors.py", classes), _file("pkg/models.py", models)]
    graphs = class_hierarchy(files, class_index({f.file.path: f for f in files}),
                             lambda path, qualname: f"../files/{path}.html#{qualname.lower()}")
    assert len(graphs) >= 3
    assert all(len(g.nodes) <= 25 for g in graphs)
    # every inheritance link is in some diagram, and none twice
    assert sum(len(g.edges) for g in graphs) == 46 + 4
    texts = [g.mermaid() for g in graphs]
    assert all(t.startswith(NATURAL_SIZE + "\ngraph BT\n") for t in texts)
    assert sum(_edges(t) for t in texts) == 50
    titles = [g.title for g in graphs]
    assert titles[0] == "errors.py, part 1 of 2"
    assert any(t.endswith("models.py") for t in titles)
    # a subtree stays whole, drawn under the base it hangs from: S00 and S01 with E00, and E00 with Error
    holder = next(g for g in graphs if any(label == "S00" for _, label, _, _ in g.nodes))
    assert {"S00", "S01", "E00", "Error"} <= {label for _, label, _, _ in holder.nodes}
    assert 'click k0 href "../files/pkg/errors.py.html#' in texts[0]


def test_a_small_hierarchy_is_one_untitled_diagram() -> None:
    f = _file("a.py", {"Shape": "", "Circle": "Shape", "Square": "Shape"})
    graphs = class_hierarchy([f], class_index({"a.py": f}), lambda p, q: None)
    assert [(g.title, len(g.nodes), len(g.edges)) for g in graphs] == [("", 3, 2)]
    assert class_hierarchy([_file("b.py", {"Lone": ""})], {}, lambda p, q: None) == []


def test_tree_pieces_cut_chains_stars_and_loops() -> None:
    chain = [(f"c{i + 1}", f"c{i}") for i in range(60)]  # c60 -> c59 -> ... -> c0
    pieces = tree_pieces(chain, 25)
    assert all(len(p) <= 25 for p in pieces)
    assert all(any(a in p and b in p for p in pieces) for a, b in chain)  # every link drawn
    star = [(f"s{i}", "root") for i in range(48)]
    assert sorted(len(p) for p in tree_pieces(star, 25)) == [25, 25]  # the root and 24 subclasses, twice
    loop = [("a", "b"), ("b", "a")]  # broken code: a base cycle must not hang the build
    assert tree_pieces(loop, 25) == [frozenset({"a", "b"})]


def test_a_file_importing_a_whole_package_gets_one_arrow_to_its_box() -> None:
    from generator.pages.diagrams import file_architecture

    root = ["chi.go", "mux.go", "tree.go"]
    middleware = ["middleware/logger.go", "middleware/strip.go"]
    # Go: a file importing the root package depends on each of its files; strip.go also uses logger.go
    depends_on = {m: set(root) for m in middleware}
    depends_on["middleware/strip.go"].add("middleware/logger.go")
    depends_on["mux.go"] = {"tree.go"}
    pages = {p: f"files/{p}.md" for p in root + middleware}
    graph = file_architecture(root + middleware, depends_on, pages, "index.md")
    assert graph is not None
    text = graph.mermaid()
    boxes = dict(re.findall(r"subgraph (c\d+)\[\"?([^\]\"]+)\"?\]", text))
    root_box = next(b for b, label in boxes.items() if label == "./")
    ids = {label.strip('"'): nid for nid, label in re.findall(r"(f\d+)\[(\"?[^\]]+\"?)\]", text)}
    arrows = re.findall(r"^\s+(\w+) --> (\w+)$", text, re.M)
    for m in ("logger.go", "strip.go"):
        assert (ids[m], root_box) in arrows  # one arrow to the package's box
        assert not any(a == ids[m] and b in (ids["chi.go"], ids["mux.go"], ids["tree.go"]) for a, b in arrows)
    assert (ids["strip.go"], ids["logger.go"]) in arrows  # a file-to-file import stays one
    assert (ids["mux.go"], ids["tree.go"]) in arrows
