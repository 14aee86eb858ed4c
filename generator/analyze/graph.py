"""The repository graph: which file imports which, which symbol references which, what matters most.

Pure: FileFacts in, RepoGraph out. Imports are resolved to files per language by generator/analyze/resolve.py;
what does not resolve is external. References resolve to symbols by generator/analyze/references.py.
Importance is
PageRank over the file graph, with reference edges weighted the way Aider's repo map weights them,
computed by numpy power iteration.
"""

from __future__ import annotations

import logging
import math
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from generator.analyze.facts import FileFacts
from generator.analyze.languages import is_parsed
from generator.analyze.manifests import Manifests
from generator.analyze.references import COMMON_NAME_FILES, Symbols, resolve_references
from generator.analyze.resolve import go_modules, resolve_imports
from generator.analyze.resolve import parent_dir as _dir

__all__ = ["Module", "RepoGraph", "build_graph", "go_modules", "pagerank"]

log = logging.getLogger(__name__)

SymbolKey = tuple[str, str]  # (path, qualname); qualname "" stands for the file's top level

DAMPING = 0.85
# An import whose names the target does not define itself (a compat shim re-exporting the standard
# library) says little about the target's importance; one naming its own definitions says a lot.
IMPORT_WEIGHT = 1.0
PASS_THROUGH_IMPORT_WEIGHT = 0.1



@dataclass(frozen=True)
class Module:
    """A directory that holds code. `files` are the files it owns: those directly in it plus those in
    subdirectories that are not modules themselves (templates/, static/), so every file has one module."""

    path: str  # "" for the repository root
    files: tuple[str, ...]
    submodules: tuple[str, ...]
    parent: str | None
    rank: float = 0.0  # sum of file_rank over every file at or below this directory

    @property
    def name(self) -> str:
        return self.path.rsplit("/", 1)[-1] if self.path else ""


@dataclass
class RepoGraph:
    depends_on: dict[str, list[str]]  # file -> files it imports (resolved, sorted)
    used_by: dict[str, list[str]]  # file -> files importing it
    file_rank: dict[str, float]  # PageRank, sums to 1 over all files
    symbol_rank: dict[SymbolKey, float]
    calls: dict[SymbolKey, list[SymbolKey]]  # referrer -> referenced symbols (resolved by name)
    callers: dict[SymbolKey, list[SymbolKey]]
    modules: dict[str, Module]
    file_module: dict[str, str] = field(default_factory=dict)  # file -> owning module path
    external: dict[str, list[str]] = field(default_factory=dict)  # file -> imports that did not resolve
    resolved: dict[str, dict[str, list[str]]] = field(default_factory=dict)  # file -> import -> files

    def ranked_files(self, paths: Iterable[str] | None = None) -> list[str]:
        """`paths` (default: all files) most important first; ties by path for a stable order."""
        chosen = self.file_rank if paths is None else paths
        return sorted(chosen, key=lambda p: (-self.file_rank.get(p, 0.0), p))


# ------------------------------------------------------------------------------------------- references


def _identifier_weight(name: str, defining_files: int) -> float:
    """Aider's intuition: long, compound names are deliberate links; private and generic ones are noise."""
    weight = 1.0
    compound = "_" in name.strip("_") or any(c.isupper() for c in name[1:])
    if compound and len(name) >= 8:
        weight *= 10
    if name.startswith("_"):
        weight *= 0.1
    if defining_files > COMMON_NAME_FILES:
        weight *= 0.1
    return weight


# ------------------------------------------------------------------------------------------------- rank


def pagerank(nodes: Sequence[str], edges: Mapping[tuple[str, str], float], *, damping: float = DAMPING,
             tol: float = 1e-10, max_iter: int = 200, min_out_weight: float = 0.0) -> dict[str, float]:
    """PageRank by power iteration on sparse edge arrays (no scipy). Dangling mass is spread uniformly.

    With `min_out_weight` > 0 a node whose edges weigh less in total passes on only that fraction of its
    rank (the rest is spread uniformly): one weak edge is weak evidence, not a full vote.
    """
    n = len(nodes)
    if n == 0:
        return {}
    index = {node: i for i, node in enumerate(nodes)}
    pairs = [(index[a], index[b], w) for (a, b), w in edges.items() if w > 0 and a in index and b in index]
    src = np.fromiter((p[0] for p in pairs), dtype=np.int64, count=len(pairs))
    dst = np.fromiter((p[1] for p in pairs), dtype=np.int64, count=len(pairs))
    weight = np.fromiter((p[2] for p in pairs), dtype=np.float64, count=len(pairs))
    out_weight = np.maximum(np.bincount(src, weights=weight, minlength=n), min_out_weight)
    share = np.divide(weight, out_weight[src], out=np.zeros_like(weight), where=out_weight[src] > 0)
    passed = np.bincount(src, weights=share, minlength=n)  # fraction of each node's rank that flows on
    rank = np.full(n, 1.0 / n)
    for _ in range(max_iter):
        flow = np.bincount(dst, weights=rank[src] * share, minlength=n)
        leaked = float((rank * (1.0 - passed)).sum())
        new = damping * (flow + leaked / n) + (1.0 - damping) / n
        if np.abs(new - rank).sum() < tol:
            rank = new
            break
        rank = new
    rank /= rank.sum()
    return {node: float(rank[i]) for i, node in enumerate(nodes)}


# ------------------------------------------------------------------------------------------ module tree


def _module_tree(facts: Sequence[FileFacts], file_rank: Mapping[str, float]) -> tuple[
        dict[str, Module], dict[str, str]]:
    """Modules are the directories with parsed source at or below them, plus every ancestor and the root.

    A directory of only docs, templates or assets is not a module: its files belong to the nearest module
    above it, so documentation trees do not turn into empty module pages.
    """
    module_dirs = {""}
    for f in facts:
        if is_parsed(f.file.language):
            d = _dir(f.path)
            while d not in module_dirs:
                module_dirs.add(d)
                d = _dir(d)
    owner: dict[str, str] = {}
    owned: dict[str, list[str]] = defaultdict(list)
    for f in facts:
        d = _dir(f.path)
        while d not in module_dirs:
            d = _dir(d)
        owner[f.path] = d
        owned[d].append(f.path)
    children: dict[str, list[str]] = defaultdict(list)
    for d in module_dirs:
        if d:
            children[_dir(d)].append(d)
    subtree_rank: dict[str, float] = defaultdict(float)
    for path, home in owner.items():
        r = file_rank.get(path, 0.0)
        d = home
        while True:
            subtree_rank[d] += r
            if not d:
                break
            d = _dir(d)
    modules = {
        d: Module(path=d, files=tuple(sorted(owned.get(d, ()))),
                  submodules=tuple(sorted(children.get(d, ()))),
                  parent=None if d == "" else _dir(d), rank=subtree_rank.get(d, 0.0))
        for d in sorted(module_dirs)
    }
    return modules, owner


# ------------------------------------------------------------------------------------------------ build


def _import_edges(facts: Sequence[FileFacts], symbols: Symbols,
                  resolved: Mapping[str, Mapping[str, list[str]]]) -> dict[tuple[str, str], float]:
    top_level = symbols.top_level
    edges: dict[tuple[str, str], float] = defaultdict(float)
    for f in facts:
        weights: dict[str, float] = {}
        for imp in f.imports:
            for target in resolved.get(f.path, {}).get(imp.module, ()):
                stem = target.rsplit("/", 1)[-1].split(".", 1)[0]
                own = stem if stem not in ("__init__", "index", "mod") else _dir(target).rsplit("/", 1)[-1]
                names = [n for n in imp.names if n != "*"]
                telling = not names or any(n in top_level.get(target, ()) or n == own for n in names)
                weight = IMPORT_WEIGHT if telling else PASS_THROUGH_IMPORT_WEIGHT
                weights[target] = max(weights.get(target, 0.0), weight)
        for target, weight in weights.items():
            edges[(f.path, target)] += weight
    return edges


def build_graph(facts: Sequence[FileFacts], manifests: Manifests | None = None) -> RepoGraph:
    """Resolve imports and references, rank files and symbols, and lay out the module tree.

    `manifests` (go.mod, package.json, Cargo.toml: see manifests.py) make Go resolution exact and resolve
    imports between local JS packages and Rust crates; without go.mod the Go module path is inferred.
    Build it through analysis.analyze (or load it with the index) rather than by hand, so that every
    caller resolves the same way.
    """
    facts = sorted(facts, key=lambda f: f.path)
    paths = [f.path for f in facts]
    resolved, external = resolve_imports(facts, manifests or Manifests())
    depends_on = {p: sorted({t for targets in resolved[p].values() for t in targets}) for p in paths}
    used_by_sets: dict[str, set[str]] = {p: set() for p in paths}
    for p, targets in depends_on.items():
        for t in targets:
            used_by_sets[t].add(p)
    used_by = {p: sorted(s) for p, s in used_by_sets.items()}

    symbols = Symbols.index(facts)
    call_counts = resolve_references(facts, symbols, depends_on, resolved)

    # file graph: imports by what they name; references add sqrt(count) scaled by how telling the name is
    edges = _import_edges(facts, symbols, resolved)
    per_pair: dict[tuple[str, str, str], int] = defaultdict(int)
    for (src_path, _), counted in call_counts.items():
        for (dst_path, qual), count in counted.items():
            if dst_path != src_path:
                per_pair[(src_path, dst_path, symbols.name_of.get((dst_path, qual), qual))] += count
    for (src_path, dst_path, name), count in per_pair.items():
        defining = symbols.files_defining.get(name, 0)
        edges[(src_path, dst_path)] += math.sqrt(count) * _identifier_weight(name, defining)
    file_rank = pagerank(paths, edges, min_out_weight=IMPORT_WEIGHT)

    calls = {k: sorted(v) for k, v in sorted(call_counts.items())}
    callers_sets: dict[SymbolKey, set[SymbolKey]] = defaultdict(set)
    incoming: Counter[SymbolKey] = Counter()
    for src, counted in call_counts.items():
        for target, count in counted.items():
            callers_sets[target].add(src)
            incoming[target] += count
    callers = {k: sorted(v) for k, v in sorted(callers_sets.items())}

    # a file's rank is shared among its symbols by incoming references (+1 so unreferenced ones still count)
    symbol_rank: dict[SymbolKey, float] = {}
    for f in facts:
        keys = [(f.path, s.qualname) for s in f.symbols]
        if not keys:
            continue
        weights = [1 + incoming.get(k, 0) for k in keys]
        share = file_rank[f.path] / sum(weights)
        for k, w in zip(keys, weights, strict=True):
            symbol_rank[k] = share * w

    modules, file_module = _module_tree(facts, file_rank)
    log.info("graph: %d files, %d import edges, %d referencing symbols, %d modules", len(paths),
             sum(len(v) for v in depends_on.values()), len(calls), len(modules))
    return RepoGraph(depends_on=depends_on, used_by=used_by, file_rank=file_rank, symbol_rank=symbol_rank,
                     calls=calls, callers=callers, modules=modules, file_module=file_module,
                     external=external, resolved=resolved)
