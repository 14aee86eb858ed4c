"""The Public API page: every name the package's users import (orientation.api_names), when there are more
than the home page's "Public API" section shows (MAX_API_SHOWN); none otherwise.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator.analyze.facts import FileFacts
from generator.analyze.plan import PagePlan, PageState
from generator.pages.stages import PageRun, Planning, file_text
from sourcebook.config import Config

if TYPE_CHECKING:
    from generator.pages.anchors import SymbolIndex
    from generator.pages.orientation import ApiName

API_TITLE = "Public API"


def api_names_of(config: Config, plan: PagePlan, facts: Mapping[str, FileFacts], graph: Any) -> list[ApiName]:
    """The repository's public API as the home page orders it (the same inputs as overview_orientation)."""
    from generator.analyze.plan import module_importance
    from generator.pages.orientation import api_names, build_folders, manifest_texts
    from generator.pages.overview_stage import root_readme
    from generator.pages.type_parts import split_types

    def read(path: str) -> str | None:  # only the files the scan accepted
        return file_text(config.root, path) if path in facts else None

    return api_names(facts, graph, module_importance(plan, graph), manifest_texts(config.root, plan.files),
                     read, split=split_types(facts.values()), readme=root_readme(config, plan)[1],
                     build=build_folders(config.root))


def api_key(version: str, names: list[ApiName], pages: Mapping[str, str], index: SymbolIndex) -> str:
    """The page's key: the renderer's version, the names and the pages and sections they link to."""
    links = [(pages.get(n.path), index.anchors.get((n.path, n.qualname))) for n in names]
    return hashlib.sha256(repr((version, names, links)).encode()).hexdigest()


def writes_api_page(names: list[ApiName]) -> bool:
    from generator.pages.orientation import MAX_API_SHOWN

    return len(names) > MAX_API_SHOWN


@dataclass(frozen=True)
class ApiJob:
    """The Public API page as planned: the names it lists and its key."""

    names: list[ApiName]
    key: str


def plan_api_page(inputs: Planning) -> ApiJob | None:
    """The page's names and key, for the build and for `--check`; None when the home page lists them all."""
    names = api_names_of(inputs.config, inputs.plan, inputs.facts, inputs.graph)
    if not writes_api_page(names):
        return None
    return ApiJob(names, api_key(inputs.version, names, inputs.plan.files, inputs.symbols))


def write_api_page(run: PageRun) -> list[tuple[str, str]]:
    """The Public API page, when the home page does not list every name; its nav entry."""
    from generator.pages.render_markdown import API_PAGE, render_api_page

    job = plan_api_page(run.planning())
    if job is None:
        return []
    if not run.pages.fresh(API_PAGE, job.key):
        markdown = render_api_page(job.names, index=run.symbols, file_pages=run.plan.files)
        run.pages.put(API_PAGE, job.key, markdown, PageState(
            key=job.key, kind="api", title=API_TITLE, target_path="",
            summary=f"The {len(job.names)} names the package's users import, each linked to its definition."))
    return [(API_TITLE, API_PAGE)]
