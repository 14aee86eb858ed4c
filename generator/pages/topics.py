"""Topic pages: one "Architecture" page and a few "How it works" pages, planned from the graph.

A flow topic starts at a seed (a declared entry point, or the method of a most-used abstraction that reaches
furthest) and follows the reference graph breadth-first through the project's own code: the symbols it
reaches, in call order, are the topic's evidence, each with its `path:lines`. The Architecture topic's
evidence is the source packages (their page summaries, the imports between them), the entry points and the
most-used abstractions. Pure: facts, graph and manifests in, TopicContexts out; the writers turn a context
into a TopicDraft (extractive here, LLM-written in llm/topics.py) whose every section cites its sources.
"""

from __future__ import annotations

import hashlib
import math
import posixpath
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, Literal

from generator.analyze.entry_points import Entry
from generator.analyze.facts import FileFacts, Symbol
from generator.analyze.groups import dir_group
from generator.markup.docmarkup import code_span
from generator.markup.docstrings import docstring_summary
from generator.pages.anchors import shown_qualname
from generator.pages.diagrams import Graph, site_href
from generator.pages.orientation import Abstraction
from generator.pages.writer import TopicDraft, TopicSection
from sourcebook.redaction import redact_text

TOPIC_DIR = "topics"
ARCHITECTURE_ID = f"{TOPIC_DIR}/architecture.md"
MAX_FLOWS = 4
MAX_STEPS = 14  # symbols in one flow: a diagram and a walk-through a reader can follow
MAX_DEPTH = 4
REACH_LIMIT = 60  # functions counted when scoring a seed
MIN_STEPS = 3  # a "flow" of one call is not a topic
MAX_OVERLAP = 0.4  # a flow sharing more of its symbols with an earlier one is the same topic
MAX_PACKAGES = 6
_CALLABLE = frozenset({"function", "method", "macro"})
_SEED_KINDS = frozenset({"class", "struct", "interface", "trait", "function"})


@dataclass(frozen=True)
class Step:
    """One symbol of a topic's evidence, with where it lives and what its docstring says."""

    path: str
    qualname: str
    kind: str
    start: int
    end: int
    signature: str
    summary: str = ""
    depth: int = 0  # calls from the seed (flows); 0 for architecture evidence

    @property
    def cite(self) -> str:
        """How the page and a model cite it: `path:start-end`."""
        return f"{self.path}:{self.start}-{self.end}"


@dataclass(frozen=True)
class Package:
    """A source package on the Architecture page: its summary and the packages it imports / is imported by."""

    path: str
    page_id: str
    summary: str
    files: int
    imports: tuple[str, ...] = ()
    imported_by: tuple[str, ...] = ()
    key: tuple[Step, ...] = ()  # its most important symbols


@dataclass(frozen=True)
class TopicContext:
    """The inputs of one topic page (plain values: its fingerprint is its page key's input)."""

    page_id: str
    kind: Literal["architecture", "flow"]
    title: str
    repo: str
    seed: str = ""  # why it is a starting point, in words: "it is how `flask` starts (console script)"
    steps: tuple[Step, ...] = ()
    calls: tuple[tuple[int, int], ...] = ()  # (caller, callee) indexes into steps
    packages: tuple[Package, ...] = ()
    entries: tuple[Entry, ...] = ()
    starts: tuple[Step, ...] = ()  # where each entry point starts (its symbol, or its whole file)
    abstractions: tuple[Step, ...] = ()
    # filled only when a model writes the page, never part of its key (like FileContext.source): the
    # evidence's source lines, and every analysed file's line count (what a citation is checked against)
    excerpts: tuple[tuple[str, str], ...] = ()
    bodies: tuple[tuple[str, str], ...] = ()  # (cite, whole source) of each evidence symbol: claims' facts
    line_counts: Mapping[str, int] = field(default_factory=dict)

    def fingerprint(self) -> str:
        return "\x1f".join(["topic", topic_version(), self.page_id, self.kind, self.title, self.repo,
                            self.seed, repr(self.steps), repr(self.calls), repr(self.packages),
                            repr(self.entries), repr(self.starts), repr(self.abstractions)])

    def evidence(self) -> tuple[Step, ...]:
        """Every symbol the page may cite, each once, in the order the page discusses them."""
        seen: dict[str, Step] = {}
        for s in (*self.steps, *(k for p in self.packages for k in p.key), *self.starts, *self.abstractions):
            seen.setdefault(s.cite, s)
        return tuple(seen.values())

    @property
    def paths(self) -> tuple[str, ...]:
        """Files and packages the page may name."""
        out = dict.fromkeys(s.path for s in self.evidence())
        out.update(dict.fromkeys(p.path for p in self.packages))
        out.update(dict.fromkeys(e.path for e in self.entries))
        return tuple(out)


@cache
def topic_version() -> str:
    """This module's hash: changing how topics are planned or written extractively rewrites topic pages."""
    return hashlib.sha256(Path(__file__).read_bytes()).hexdigest()[:8]


def slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:60] or "topic"


def _is_source(path: str, facts: Mapping[str, FileFacts]) -> bool:
    """A code file of the project itself (not tests, docs, examples or tooling)."""
    f = facts.get(path)
    if f is None or f.file.kind != "code":
        return False
    return "/" not in path or dir_group(path.split("/", 1)[0]) == "source"


def _step(s: Symbol, depth: int = 0) -> Step:
    return Step(s.path, s.qualname, s.kind, s.start_line, s.end_line, " ".join(s.signature.split())[:200],
                _first_sentence(docstring_summary(s.docstring, 200)), depth)


def _first_sentence(text: str) -> str:
    """A docstring summary's first sentence (a walk-through quotes many of them)."""
    m = re.match(r"(.+?[.!?])(?:\s|$)", text)
    return (m.group(1) if m else text).rstrip(".")


def _symbols(facts: Mapping[str, FileFacts]) -> dict[tuple[str, str], Symbol]:
    return {(f.path, s.qualname): s for f in facts.values() for s in f.symbols}


def trace(roots: Iterable[tuple[str, str]], calls: Mapping[tuple[str, str], list[tuple[str, str]]],
          symbols: Mapping[tuple[str, str], Symbol], rank: Mapping[tuple[str, str], float],
          keep: Callable[[str], bool], *, max_steps: int = MAX_STEPS,
          max_depth: int = MAX_DEPTH) -> tuple[list[Step], list[tuple[int, int]]]:
    """Breadth-first from `roots` along references to functions and methods in kept files: the steps (in
    the order a reader meets them) and the calls between them. A file's top level ("" qualname) counts as a
    step only as a root (`__main__.py`)."""
    order: list[tuple[str, str]] = []
    depth: dict[tuple[str, str], int] = {}
    frontier = [r for r in roots if r in symbols or (r[1] == "" and keep(r[0]))]
    for r in frontier:
        depth[r] = 0
        order.append(r)
    while frontier and len(order) < max_steps:
        following: list[tuple[str, str]] = []
        for node in frontier:
            if depth[node] >= max_depth:
                continue
            # calls only: a reference to a class is mostly a type annotation, and following one would
            # drag its whole body into the flow
            callees = [c for c in calls.get(node, ()) if c in symbols and c not in depth and keep(c[0])
                       and symbols[c].kind in _CALLABLE]
            # the most important callees first; a call into another file before one next door
            callees.sort(key=lambda c: (-rank.get(c, 0.0), c[0] == node[0], c))
            for c in callees:
                if len(order) >= max_steps:
                    break
                depth[c] = depth[node] + 1
                order.append(c)
                following.append(c)
        frontier = following
    index = {key: i for i, key in enumerate(order)}
    edges = sorted({(index[a], index[b]) for a in order for b in calls.get(a, ()) if b in index and a != b})
    steps = []
    for key in order:
        sym = symbols.get(key)
        if sym is None:  # a file's top level
            steps.append(Step(key[0], "", "module", 1, 1, "", "", 0))
        else:
            steps.append(_step(sym, depth[key]))
    return steps, edges


def _title_name(qualname: str) -> str:
    return shown_qualname(qualname) or "the module"


def plan_topics(*, repo: str, facts: Mapping[str, FileFacts], graph: Any, modules: Mapping[str, str],
                entries: Iterable[Entry], abstractions: Iterable[Abstraction], summaries: Mapping[str, str],
                importance: Mapping[str, float], max_flows: int = MAX_FLOWS) -> list[TopicContext]:
    """The Architecture topic, then up to `max_flows` flow topics: declared entry points first, then the
    public functions other files call most and whose flow reaches furthest (_seeds), each kept only when it
    reaches MIN_STEPS symbols and is not mostly a flow already planned."""
    symbols = _symbols(facts)
    entries, abstractions = list(entries), list(abstractions)

    def keep(path: str) -> bool:
        return _is_source(path, facts)

    def flow(roots: list[tuple[str, str]]) -> tuple[list[Step], list[tuple[int, int]]]:
        return trace(roots, graph.calls, symbols, graph.symbol_rank, keep)

    topics = [architecture_topic(repo=repo, facts=facts, graph=graph, modules=modules, entries=entries,
                                 abstractions=abstractions, summaries=summaries, importance=importance)]
    taken: list[set[str]] = []
    used_ids = {topics[0].page_id}

    def add(title: str, seed: str, steps: list[Step], edges: list[tuple[int, int]]) -> None:
        cites = {s.cite for s in steps}
        if len(steps) < MIN_STEPS or any(steps[0].cite in t or len(cites & t) > MAX_OVERLAP * len(cites)
                                         for t in taken):
            return
        page_id = f"{TOPIC_DIR}/{slug(title)}.md"
        if page_id in used_ids:
            return
        used_ids.add(page_id)
        taken.append(cites)
        topics.append(TopicContext(page_id=page_id, kind="flow", title=title, repo=repo, seed=seed,
                                   steps=tuple(steps), calls=tuple(edges)))

    for e in entries:
        if len(topics) > max_flows:
            break
        root = (e.path, e.qualname)
        # a symbol to start from, or a `__main__.py`'s top level; a command group's flow is its commands'
        if keep(e.path) and (root in symbols or e.how == "__main__.py"):
            steps, edges = flow([root])
            add(f"How {e.name} runs", f"it is how {code_span(e.name)} starts ({_plain(e.how)})", steps, edges)
    for key, users in _seeds(facts, graph, symbols, keep):
        if len(topics) > max_flows:
            break
        steps, edges = flow([key])
        why = f"{users} other files call it, and it" if users else "it"
        # `prompt~3` tells one of a name's definitions apart inside the analysis; a reader sees `prompt`
        add(f"How {shown_qualname(key[1])} works", f"{why} reaches much of the code", steps, edges)
    return topics


def _reach(root: tuple[str, str], calls: Mapping[tuple[str, str], list[tuple[str, str]]],
           follow: Callable[[tuple[str, str]], bool], limit: int = REACH_LIMIT) -> tuple[int, int]:
    """(functions, files) reachable from `root` along calls, counting at most `limit` functions."""
    seen = {root}
    frontier = [root]
    while frontier and len(seen) < limit:
        frontier = [c for node in frontier for c in calls.get(node, ()) if c not in seen and follow(c)]
        seen.update(frontier)
    return len(seen), len({p for p, _ in seen})


def _seeds(facts: Mapping[str, FileFacts], graph: Any, symbols: Mapping[tuple[str, str], Symbol],
           keep: Callable[[str], bool]) -> list[tuple[tuple[str, str], int]]:
    """Public functions and methods of the project's code worth a flow topic, best first, with how many
    other files call them. A flow is worth reading when it orchestrates much of the code: the score is the
    number of functions (and files) reachable from it, raised by how many other files call it (tests and
    examples call the public API). Name-resolved method calls miss many receivers, so reach, not callers,
    leads."""
    def follow(key: tuple[str, str]) -> bool:
        sym = symbols.get(key)
        return sym is not None and sym.kind in _CALLABLE and keep(key[0])

    scored = []
    for key, s in symbols.items():
        if s.kind not in _CALLABLE or not s.public or s.name.startswith("__") or not keep(key[0]):
            continue  # dunders (__init__, __call__) are set-up or a thin door to the real flow
        functions, files = _reach(key, graph.calls, follow)
        if functions < MIN_STEPS:
            continue
        users = len({p for p, _ in graph.callers.get(key, ()) if p != key[0]})
        scored.append((-(functions * (1 + 0.25 * files) * (1 + 0.5 * math.log1p(users))), key, users))
    scored.sort()
    return [(key, users) for _, key, users in scored]


def architecture_topic(*, repo: str, facts: Mapping[str, FileFacts], graph: Any, modules: Mapping[str, str],
                       entries: list[Entry], abstractions: list[Abstraction], summaries: Mapping[str, str],
                       importance: Mapping[str, float]) -> TopicContext:
    """The source packages (most important first), what they import from each other, their key symbols."""
    symbols = _symbols(facts)
    owners = sorted({posixpath.dirname(p) for p in facts if _is_source(p, facts)},
                    key=lambda d: (-round(importance.get(d, 0.0), 9), d))[:MAX_PACKAGES]
    chosen = set(owners)

    def owner(path: str) -> str | None:
        d = posixpath.dirname(path)
        return d if d in chosen else None

    imports: dict[str, set[str]] = {d: set() for d in owners}
    for path, deps in graph.depends_on.items():
        a = owner(path)
        for dep in deps:
            b = owner(dep)
            if a is not None and b is not None and a != b:
                imports[a].add(b)
    packages = []
    for d in owners:
        direct = [p for p in facts if posixpath.dirname(p) == d and _is_source(p, facts)]
        ranked = sorted(((k, s) for k, s in symbols.items() if k[0] in direct and s.parent is None
                         and s.public and s.kind in _SEED_KINDS),
                        key=lambda ks: (-graph.symbol_rank.get(ks[0], 0.0), ks[0]))
        packages.append(Package(
            path=d, page_id=modules.get(d, ""), summary=summaries.get(d + "/", ""), files=len(direct),
            imports=tuple(sorted(imports[d])),
            imported_by=tuple(sorted(a for a in owners if d in imports[a])),
            key=tuple(_step(s) for _, s in ranked[:3])))
    abstract = tuple(_step(symbols[(a.path, a.qualname)]) for a in abstractions
                     if (a.path, a.qualname) in symbols)
    starts = []
    for e in entries:
        if (e.path, e.qualname) in symbols:
            starts.append(_step(symbols[(e.path, e.qualname)]))
        elif e.path in facts:  # `__main__.py`, a script: the whole file is where it starts
            starts.append(Step(e.path, "", "module", 1, max(1, facts[e.path].line_count), "", ""))
    return TopicContext(page_id=ARCHITECTURE_ID, kind="architecture", title="Architecture", repo=repo,
                        packages=tuple(packages), entries=tuple(entries), starts=tuple(starts),
                        abstractions=abstract)


# -- the extractive draft ------------------------------------------------------------------------------------


def _plain(text: str) -> str:
    """Words from the repository or a manifest as Markdown that shows them as written (`__main__.py`
    would turn bold)."""
    return re.sub(r"([\\`*_{}\[\]<>#|])", r"\\\1", text)


def _cite_list(steps: Iterable[Step], limit: int = 6) -> list[str]:
    return list(dict.fromkeys(s.cite for s in steps))[:limit]


def _said(s: Step) -> str:
    name = code_span(shown_qualname(s.qualname) or s.path)
    return f"{name} ({s.summary})" if s.summary else name


def extractive_topic(ctx: TopicContext) -> TopicDraft:
    """A topic page from the evidence alone: the flow walked file by file, or the packages one by one."""
    if ctx.kind == "architecture":
        return _extractive_architecture(ctx)
    steps = list(ctx.steps)
    callees: dict[int, list[int]] = {}
    for a, b in ctx.calls:
        callees.setdefault(a, []).append(b)
    seed = steps[0]
    files = list(dict.fromkeys(s.path for s in steps))
    summary = (f"What happens when {_said(seed)} runs, traced through the code's references: it reaches "
               f"{len(steps) - 1} other functions in {len(files)} file{'s' if len(files) != 1 else ''}. "
               f"A good place to start reading: {ctx.seed}.")
    sections = []
    for path in files:
        here = [i for i, s in enumerate(steps) if s.path == path]
        sentences = []
        for i in here:
            s = steps[i]
            then = [steps[j] for j in callees.get(i, ())]
            line = f"{_said(s)}"
            if then:
                line += " calls " + ", ".join(code_span(shown_qualname(t.qualname) or t.path)
                                              for t in then[:5])
                line += f" and {len(then) - 5} more" if len(then) > 5 else ""
            sentences.append(line + ".")
        heading = f"In {path}"
        sections.append(TopicSection(heading=heading, body=" ".join(sentences),
                                     sources=_cite_list(steps[i] for i in here)))
    return TopicDraft(summary=summary, sections=sections)


def _extractive_architecture(ctx: TopicContext) -> TopicDraft:
    names = ", ".join(code_span(p.path + "/") for p in ctx.packages[:4])
    summary = (f"How {ctx.repo} is put together: its source packages, most important first ({names}), "
               "what each is for and which of them it imports.") if ctx.packages else (
        f"How {ctx.repo} is put together, from its entry points and most-used abstractions.")
    sections = []
    for p in ctx.packages:
        # the module page's own words, without its extractive "`dir/` contains N files" tail said below
        own = p.summary.split(code_span(p.path + "/") + " contains", 1)[0].strip()
        body = [own] if own else []
        body.append(f"{code_span(p.path + '/')} holds {p.files} source file{'s' if p.files != 1 else ''}.")
        if p.imports:
            body.append("It imports " + ", ".join(code_span(d + "/") for d in p.imports) + ".")
        if p.imported_by:
            body.append("It is imported by " + ", ".join(code_span(d + "/") for d in p.imported_by) + ".")
        if p.key:
            body.append("Its most referenced definitions: " + "; ".join(_said(k) for k in p.key) + ".")
        if p.key:
            sections.append(TopicSection(heading=f"{p.path}/", body=" ".join(body),
                                         sources=_cite_list(p.key)))
    if ctx.entries:
        started = "; ".join(f"{code_span(e.name)} ({_plain(e.how)}) starts in {code_span(e.path)}"
                         + (f" at {code_span(shown_qualname(e.qualname))}" if e.qualname else "")
                         for e in ctx.entries[:6])
        sections.append(TopicSection(heading="How it is started", body=started + ".",
                                     sources=_cite_list(ctx.starts)))
    if ctx.abstractions:
        leans = "The rest of the code leans on " + "; ".join(_said(a) for a in ctx.abstractions[:6]) + "."
        sections.append(TopicSection(heading="What the code leans on", body=leans,
                                     sources=_cite_list(ctx.abstractions)))
    return TopicDraft(summary=summary, sections=sections)


# -- diagrams ------------------------------------------------------------------------------------------------


def flow_diagram(ctx: TopicContext, href: Callable[[str, str], str | None]) -> Graph | None:
    """The flow as a top-down flowchart: symbols boxed by file, arrows for calls, nodes link to sections."""
    if ctx.kind != "flow" or len(ctx.steps) < 2:
        return None
    nodes = []
    for i, s in enumerate(ctx.steps):
        link = href(s.path, s.qualname)
        nodes.append((f"s{i}", shown_qualname(s.qualname) or posixpath.basename(s.path),
                      site_href(link) if link else "", s.path))
    return Graph(nodes, [(f"s{a}", f"s{b}") for a, b in ctx.calls], direction="TD")


def architecture_diagram(ctx: TopicContext, *, modules: Mapping[str, str], files: Mapping[str, str],
                         facts: Mapping[str, FileFacts], depends_on: Mapping[str, Any],
                         importance: Mapping[str, float],
                         build: frozenset[str] = frozenset()) -> Graph | None:
    """The home page's architecture diagram (orientation.overview_diagram), linked from this page; `build`:
    the folders of the build's own code (orientation.build_folders)."""
    from generator.pages.orientation import overview_diagram, own_code

    return overview_diagram(modules=modules, files=files, code=own_code(files, facts, build),
                            depends_on=depends_on, build=build,
                            importance=importance, from_page=ctx.page_id)


EXCERPT_LINES = 30  # of each cited symbol's source, at most


def excerpts(ctx: TopicContext, text_of: Callable[[str], str]) -> tuple[tuple[str, str], ...]:
    """(cite, source lines) of each evidence symbol, at most EXCERPT_LINES lines each, redacted whole-file
    first (a cut could shorten a secret below what the rules recognise)."""
    out = []
    redacted: dict[str, list[str]] = {}
    for s in ctx.evidence():
        if s.path not in redacted:
            redacted[s.path] = redact_text(text_of(s.path) or "").splitlines()
        lines = redacted[s.path][s.start - 1:min(s.end, s.start + EXCERPT_LINES - 1)]
        if lines:
            out.append((s.cite, "\n".join(lines)))
    return tuple(out)


def bodies(ctx: TopicContext, text_of: Callable[[str], str]) -> tuple[tuple[str, str], ...]:
    """(cite, whole source lines) of each evidence symbol: what the page's claims about it are checked
    against (never sent to the model, so not redacted)."""
    out = []
    lines_of: dict[str, list[str]] = {}
    for s in ctx.evidence():
        if s.path not in lines_of:
            lines_of[s.path] = (text_of(s.path) or "").splitlines()
        lines = lines_of[s.path][s.start - 1:s.end]
        if lines and s.qualname:
            out.append((s.cite, "\n".join(lines)))
    return tuple(out)
