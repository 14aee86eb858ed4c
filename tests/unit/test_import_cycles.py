"""No two modules of sourcebook import each other, directly or around a loop: read from the source with ast,
counting imports inside functions and under TYPE_CHECKING too (a lazy import hides a cycle, it does not
remove it)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("generator", "answer", "sourcebook")


def _modules() -> dict[str, Path]:
    """Every module of the packages, subpackages included (a glob of the top folder would drop a whole
    subpackage out of every check below without a word)."""
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            parts = path.relative_to(ROOT).with_suffix("").parts
            found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph: dict[str, set[str]] = {}
    for name, path in modules.items():
        edges: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
            elif isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            else:
                continue
            edges.update(t for t in targets if t in modules and t != name)
        graph[name] = edges
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_the_checker_finds_a_cycle() -> None:
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_module_imports_itself_around_a_loop() -> None:
    graph = import_graph()
    assert {"generator.pages.render_markdown", "generator.site.publish", "generator.build",
            "generator.pages.stages"} <= set(graph)
    assert cycles(graph) == []


# The stages, as packages: each may import its own package and the stages it lists, nothing else (a module
# belongs to the stage of the longest prefix below that names it). Lowest first:
#   core       sourcebook/ but the CLI: config, errors, atomic writes, retry, lock, local key, redaction,
#              provider, ledger, workers, code versions
#   analyze    scan -> parse -> manifests -> graph, and the page plan (page ids, page state: what pages and
#              the index's build-cache table both read)
#   markup     docstrings, reST, Markdown -> safe Markdown and HTML
#   pages      page contexts, the extractive writer, the page stages, the page Markdown
#   pages.llm  the LLM writer: a plug-in of pages (it implements pages' PageWriter); pages never import it,
#              the build chooses the writer and passes it in
#   site       MkDocs/Material: the nav, the render cache, the engine; it reads the Markdown pages wrote, not
#              their code
#   index      the search index (LanceDB) and the build-cache table: a sibling of pages and site, reading
#              the analysis (build -> analysis -> {pages, index})
#   build      generator/build.py composes the stages (and build_report.py, the run's report)
#   answer     reads what the build wrote: the index, the analysis it holds, the site's headers; in three
#              layers, lowest first: retrieval (query, tiers, packing), answering (get_answer, evidence,
#              grading, cache, episodes, the reply models), serving (tools, contracts, HTTP, MCP, orgs,
# pushes)
#   cli        the command line composes both halves
STAGE_PREFIXES = {
    "sourcebook": "core",
    "generator.analyze": "analyze",
    "generator.markup": "markup",
    "generator.pages": "pages",
    "generator.pages.llm": "pages.llm",
    "generator.site": "site",
    "generator.index": "index",
    "generator": "build",
    "answer": "answer",
    "answer.retrieval": "answer.retrieval",
    "answer.answering": "answer.answering",
    "answer.serving": "answer.serving",
    "sourcebook.cli": "cli",
}
_GENERATOR = {"analyze", "markup", "pages", "pages.llm", "site", "index", "build"}
MAY_IMPORT: dict[str, set[str]] = {
    "core": set(),
    "analyze": {"core"},
    "markup": {"core", "analyze"},
    "pages": {"core", "analyze", "markup"},
    "pages.llm": {"core", "analyze", "markup", "pages"},
    "site": {"core", "analyze", "markup"},
    "index": {"core", "analyze", "markup"},
    "build": {"core"} | (_GENERATOR - {"build"}),
    "answer.retrieval": {"core"} | _GENERATOR,
    "answer.answering": {"core", "answer.retrieval"} | _GENERATOR,
    "answer.serving": {"core", "answer.retrieval", "answer.answering"} | _GENERATOR,
    "answer": {"core"} | _GENERATOR,
    "cli": {"core", "answer", "answer.retrieval", "answer.answering", "answer.serving"} | _GENERATOR,
}
# Wrong-way imports kept for now, each with why; the test fails on any other one, and on an entry here that
# is no longer imported (the list only shrinks).
ALLOWED: dict[str, str] = {}


def stage_of(module: str) -> str:
    parts = module.split(".")
    for n in range(len(parts), 0, -1):
        stage = STAGE_PREFIXES.get(".".join(parts[:n]))
        if stage is not None:
            return stage
    raise AssertionError(f"{module}: in no stage (add its package to STAGE_PREFIXES)")


def wrong_way_imports(graph: dict[str, set[str]]) -> list[str]:
    """Every import of a module whose stage the importer's stage may not import."""
    return sorted(f"{a} -> {b}" for a, targets in graph.items() for b in targets
                  if stage_of(a) != stage_of(b) and stage_of(b) not in MAY_IMPORT[stage_of(a)])


def test_the_stage_checker_finds_a_wrong_way_import() -> None:
    assert [stage_of(m) for m in ("generator.build_report", "generator.pages.llm.writer",
                                  "generator.pages.stages", "sourcebook.cli.build", "sourcebook.config")] == [
        "build", "pages.llm", "pages", "cli", "core"]
    assert wrong_way_imports({"generator.pages.stages": {"answer.answering.episodes", "sourcebook.atomic",
                                                         "generator.pages.llm.writer",
                                                         "generator.pages.anchors"},
                              "generator.pages.llm.writer": {"generator.pages.writer", "generator.build"},
                              "generator.index.store": {"generator.pages.remote", "generator.analyze.facts"},
                              "sourcebook.config": {"generator.pages.remote"},
                              "sourcebook.cli": {"answer.answering.get_answer"},
                              "answer.answering.get_answer": {"generator.index.store"}}) == [
        "generator.index.store -> generator.pages.remote",
        "generator.pages.llm.writer -> generator.build",
        "generator.pages.stages -> answer.answering.episodes",
        "generator.pages.stages -> generator.pages.llm.writer",
        "sourcebook.config -> generator.pages.remote"]


def test_the_stages_form_no_loop() -> None:
    """MAY_IMPORT itself is an order: no stage reaches back to itself through the stages it may import."""
    allowed = {stage: set(targets) for stage, targets in MAY_IMPORT.items()}
    assert set(STAGE_PREFIXES.values()) == set(MAY_IMPORT)
    assert cycles(allowed) == []
    assert [stage for stage, targets in allowed.items() if stage in targets] == []


def test_stages_import_only_the_stages_below_them() -> None:
    graph = import_graph()
    assert {stage_of(m) for m in graph} == set(MAY_IMPORT)
    found = wrong_way_imports(graph)
    assert [f for f in found if f not in ALLOWED] == []
    assert [a for a in ALLOWED if a not in found] == [], "no longer imported: drop it from ALLOWED"


def test_the_analysis_and_the_index_know_nothing_of_pages_or_the_build() -> None:
    """build -> analysis -> {pages, index}: the front half and the index never import the page stages."""
    graph = import_graph()
    later = {"generator.build", "generator.pages.stages", "generator.pages.page_sink",
             "generator.pages.file_stage", "generator.pages.module_stage", "generator.pages.overview_stage",
             "generator.pages.topic_stage", "generator.build_llm", "generator.site.publish",
             "generator.pages.render_markdown"}
    index = [m for m in graph if m.startswith("generator.index.")]
    assert {"generator.index.store", "generator.index.writer", "generator.index.command"} <= set(index)
    for module in ("generator.analyze.analysis", *index):
        reachable, todo = set(), [module]
        while todo:
            for target in graph[todo.pop()] - reachable:
                reachable.add(target)
                todo.append(target)
        assert reachable & later == set(), module


def test_the_answer_side_reads_the_index_through_its_reader_methods() -> None:
    """answer/ asks IndexStore (rows, fts, nearest, columns, count, ...) and never holds a LanceDB table:
    no `.table(...)` / `.tables` there, and nothing outside generator/index/store.py imports lancedb."""
    raw = []
    for name, path in _modules().items():
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if (name.startswith("answer.") and isinstance(node, ast.Attribute)
                    and node.attr in {"table", "tables"}):
                raw.append(f"{name}:{node.lineno}")
            imported = ([a.name for a in node.names] if isinstance(node, ast.Import)
                        else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
            if name != "generator.index.store" and any(m.split(".")[0] == "lancedb" for m in imported):
                raw.append(f"{name}:{node.lineno} imports lancedb")
    assert raw == []


def test_no_module_is_named_like_a_standard_library_module() -> None:
    """MkDocs puts the hooks' folder first on sys.path: a generator module named `secrets` there made every
    `import secrets` of the build find it (plain `mkdocs build` crashed). No module of ours is named like a
    standard-library one, and the hooks' folder holds nothing but the hooks module (no package or module
    there may shadow a library the build imports)."""
    import sys

    root = Path(__file__).resolve().parents[2]
    ours = [p for package in ("generator", "answer", "sourcebook", "tests", "bench")
            for p in (root / package).rglob("*.py")]
    assert len(ours) > 100
    assert sorted(str(p.relative_to(root)) for p in ours
                  if p.stem in sys.stdlib_module_names) == []
    hooks = root / "generator" / "site" / "hooks"
    assert sorted(p.name for p in hooks.iterdir() if p.name != "__pycache__") == [
        "__init__.py", "mkdocs_hooks.py"]
