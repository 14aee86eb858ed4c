"""The inputs of each page (FileContext, ModuleContext, OverviewContext), made from the page plan, the facts
and the graph, and the stable key of what a page's prose is about. Page ids, keys and state are the plan's
(generator/analyze/plan.py), which the index's build-cache table reads too."""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from generator.analyze.facts import FileFacts
from generator.analyze.groups import file_group
from generator.analyze.plan import (
    GraphView,
    PagePlan,
    digest_of,
    draft_key,
    module_importance,
    module_title,
    page_title,
    parent_dir,
)
from generator.pages.anchors import shown_qualname
from generator.pages.orientation import orientation_folders, path_group
from generator.pages.topics import TopicContext
from generator.pages.type_parts import secondary_parts, split_types
from generator.pages.writer import (
    ROOT_FILE_TABLES,
    EntryPoint,
    FileContext,
    ModuleContext,
    OverviewContext,
    PageLink,
    first_paragraph,
)


def _cross_file(edges: Mapping[tuple[str, str], list[tuple[str, str]]], path: str, qualname: str,
                limit: int = 8) -> tuple[tuple[str, str], ...]:
    return tuple(sorted({e for e in edges.get((path, qualname), ()) if e[0] != path})[:limit])


def file_context(facts: FileFacts, plan: PagePlan, graph: GraphView) -> FileContext:
    """The inputs of one file page. Neighbours are linked by title only (summaries would couple pages)."""
    path = facts.path

    def link(other: str) -> PageLink:
        return PageLink(other, plan.files[other], page_title(other), "")

    ranked = sorted(facts.symbols, key=lambda s: (-graph.symbol_rank.get((path, s.qualname), 0.0),
                                                  s.start_line, s.qualname))
    callers = tuple((s.qualname, c) for s in facts.symbols
                    if (c := _cross_file(graph.callers, path, s.qualname)))
    calls = tuple((s.qualname, c) for s in facts.symbols if (c := _cross_file(graph.calls, path, s.qualname)))
    return FileContext(
        facts=facts, page_id=plan.files[path], module=plan.module_of(path),
        depends_on=tuple(link(p) for p in sorted(set(graph.depends_on.get(path, ()))) if p in plan.files),
        used_by=tuple(link(p) for p in sorted(set(graph.used_by.get(path, ()))) if p in plan.files),
        symbol_order=tuple(s.qualname for s in ranked), callers=callers, calls=calls)


def _owner(path: str, module: str, subdirs: list[str]) -> str | None:
    """The node of `module`'s diagram holding `path`: the file itself, a submodule, or None (outside)."""
    if posixpath.dirname(path) == module:
        return path
    for sub in subdirs:
        if path.startswith(sub + "/"):
            return sub
    return None


def _top_entry_points(facts: Iterable[FileFacts], graph: GraphView, limit: int,
                      first: Callable[[str], bool] | None = None) -> tuple[EntryPoint, ...]:
    """The most referenced public top-level symbols; `first(path)` true puts a file's symbols ahead (the
    overview's: the project's own code before docs themes and test helpers). A type declared in several
    files (type_parts.py) is one entry point, its main part."""
    facts = list(facts)
    secondary = secondary_parts(split_types(facts))
    candidates = []
    for f in facts:
        if f.file.kind != "code":
            continue
        ahead = 0 if first is None or first(f.path) else 1
        for s in f.symbols:
            if (s.public and s.parent is None and s.kind not in {"module", "variable", "field", "impl"}
                    and (f.path, s.qualname) not in secondary):
                rank = graph.symbol_rank.get((f.path, s.qualname), 0.0)
                candidates.append((ahead, -rank, f.path, s.start_line, s))
    candidates.sort(key=lambda c: c[:4])
    # overloads of one name (`int`, `int~2`) are one entry point to a reader: the best-ranked stands for all
    seen: set[tuple[str, str]] = set()
    chosen = []
    for _, _, path, _, s in candidates:
        name = (path, shown_qualname(s.qualname))
        if name not in seen:
            seen.add(name)
            summary = first_paragraph(s.docstring, 200)
            chosen.append(EntryPoint(path, s.qualname, s.kind, s.signature, summary))
    return tuple(chosen[:limit])


def root_title(plan: PagePlan, facts: Mapping[str, FileFacts], root_name: str) -> str:
    """The repository root's folder title: `chi/` when its files are a package's sources (a Go module's root
    package: the nav's folder node has that name too, generator/site/nav.py), `flask (repository root)` when
    they are only its papers and config; "(repository root)" without a name."""
    if not root_name:
        return module_title("")
    if any(_root_group(p, facts) == "source" for p in plan.children[""][0]):
        return root_name + "/"
    return f"{root_name} (repository root)"


def _root_group(path: str, facts: Mapping[str, FileFacts]) -> str:
    return file_group(path, facts[path].file.kind if path in facts else "code")


_ROOT_TABLES = {"source": ROOT_FILE_TABLES[0], "tests": ROOT_FILE_TABLES[1]}


def module_context(directory: str, plan: PagePlan, facts: Mapping[str, FileFacts], graph: GraphView, *,
                   summaries: Mapping[str, str], readme: str = "", edge_limit: int = 60,
                   root_name: str = "") -> ModuleContext:
    """The inputs of one module page; `summaries` maps file paths and dir paths to their page summaries.
    `root_name`: the project's name (manifests.project_name), which names the repository root's page."""
    files, subdirs = plan.children[directory]
    parent = parent_dir(directory)

    def title(d: str) -> str:
        return module_title(d) if d else root_title(plan, facts, root_name)
    internal: set[tuple[str, str]] = set()
    external: set[tuple[str, str]] = set()
    prefix = directory + "/" if directory else ""
    for path in files:
        for dep in graph.depends_on.get(path, ()):
            if dep == path or dep not in plan.files:
                continue
            node = _owner(dep, directory, subdirs)
            if node is not None:
                internal.add((path, node))
            elif not dep.startswith(prefix) or not directory:
                external.add((path, posixpath.dirname(dep)))
    for sub in subdirs:
        # a submodule's files reaching its siblings or the module's own files
        for path in plan.files_under(sub):
            for dep in graph.depends_on.get(path, ()):
                node = _owner(dep, directory, subdirs)
                if node is not None and node != sub:
                    internal.add((sub, node))
    return ModuleContext(
        path=directory, page_id=plan.modules[directory], title=title(directory),
        parent=(PageLink(parent, plan.modules[parent], title(parent), "")
                if parent is not None else None),
        files=tuple(PageLink(p, plan.files[p], page_title(p), summaries.get(p, "")) for p in files),
        file_tables=(tuple(_ROOT_TABLES.get(_root_group(p, facts), ROOT_FILE_TABLES[2]) for p in files)
                     if not directory else ()),
        submodules=tuple(PageLink(d, plan.modules[d], module_title(d), summaries.get(d + "/", ""))
                         for d in subdirs),
        entry_points=_top_entry_points((facts[p] for p in files if p in facts), graph, 6),
        internal_edges=tuple(sorted(internal))[:edge_limit],
        external_edges=tuple(sorted(external))[:edge_limit], readme=readme)


def _ancestors(path: str) -> list[str]:
    out = []
    d = posixpath.dirname(path)
    while d:
        out.append(d)
        d = posixpath.dirname(d)
    return out


def overview_context(repo_name: str, plan: PagePlan, facts: Mapping[str, FileFacts], graph: GraphView, *,
                     summaries: Mapping[str, str], readme: str, readme_path: str,
                     skipped_count: int = 0, description: str = "",
                     build: frozenset[str] = frozenset()) -> OverviewContext:
    """`build`: the folders of the build's own code (orientation.build_folders), none of the project's."""
    importance = module_importance(plan, graph)
    code_dirs = {d for p, f in facts.items() if f.file.kind == "code" and p.split("/", 1)[0] not in build
                 for d in _ancestors(p)}
    top_dirs = orientation_folders(plan.children, importance, graph.file_rank, code_dirs)

    def group(path: str) -> bool:  # the project's own code before its tests, docs, tooling and data
        kind = facts[path].file.kind if path in facts else ""
        return kind != "code" or path_group(path, kind) != "source" or path.split("/", 1)[0] in build

    top_files = sorted(plan.files, key=lambda p: (group(p), -round(graph.file_rank.get(p, 0.0), 9), p))[:10]
    languages: dict[str, int] = defaultdict(int)
    for f in facts.values():
        languages[f.file.language or "other"] += 1
    return OverviewContext(
        repo_name=repo_name, readme=readme, readme_path=readme_path,
        top_modules=tuple(PageLink(d, plan.modules[d], module_title(d), summaries.get(d + "/", ""))
                          for d in top_dirs),
        top_files=tuple(PageLink(p, plan.files[p], page_title(p), summaries.get(p, "")) for p in top_files),
        languages=tuple(sorted(languages.items(), key=lambda kv: (-kv[1], kv[0]))),
        entry_points=_top_entry_points(facts.values(), graph, 10, first=lambda p: not group(p)),
        file_count=len(facts), symbol_count=sum(len(f.symbols) for f in facts.values()),
        skipped_count=skipped_count, description=description)


def stable_key(ctx: Any, writer_id: str) -> str:
    """What a page's model-written prose is about, for keeping it when the model fails later.

    A file page's prose is about its whole input (the draft key): any change and the old prose may be wrong.
    A module or overview page's prose is about which children it has; its children's summaries are reworded
    on every rewrite, so prose written for the same set of children is kept over extractive text."""
    if isinstance(ctx, FileContext):
        return draft_key(ctx.fingerprint(), writer_id)
    if isinstance(ctx, ModuleContext):
        return digest_of("module-structure", writer_id, ctx.path, *(f.path for f in ctx.files),
                       *(m.path + "/" for m in ctx.submodules))
    if isinstance(ctx, OverviewContext):
        return digest_of("overview-structure", writer_id, *(m.path + "/" for m in ctx.top_modules),
                       *(f.path for f in ctx.top_files))
    if isinstance(ctx, TopicContext):  # a topic's prose is about the symbols it cites
        return digest_of("topic-structure", writer_id, ctx.page_id, *(s.cite for s in ctx.evidence()))
    raise TypeError(f"no stable key for {type(ctx).__name__}")
