"""MkDocs' build, page by page through a render cache and across worker processes: `mkdocs build --strict`'s
output, paying only for the pages whose inputs changed.

Run as `python -m generator.site.material.engine CONFIG SITE_DIR [--cache DIR] [--workers N]`
(generator/site/publish.py
does, into a fresh directory it then swaps in). The steps are mkdocs.commands.build.build's, in its order and
with its plugin events (so Material, its search and offline plugins and sourcebook's hooks run unchanged),
with a page's two renders split apart and keyed:

1. every page's Markdown is read and its *content key* made: the Markdown, its place, the Markdown/hook
   configuration and the code of the hooks (the sanitizer among them). A page whose entry exists, and whose
   links still resolve to the same files, takes its content from the cache; the others are rendered
   (Markdown -> HTML -> on_page_content: the sanitizer) by the workers and stored;
2. every page's *page key* adds what the theme shows around the content: its title, URL, previous/next
   pages, ancestors and the navigation it displays (generator/site/light_nav.py's nav_key), plus the config,
   the theme's templates and the code. A page whose finished HTML is cached is hard-linked into the new site;
   the others are rendered through the theme (on_page_context, the template, on_post_page: the audit) by the
   workers, and their output kept;
3. static files, theme templates (404, sitemap), anchor validation, the search index (assembled from each
   page's entries, made when its content is rendered and cached with it:
   generator/site/material/search_sections.py)
   and on_post_build run as in mkdocs.

Log lines a render printed are stored with its entry and replayed, in page order, whenever the entry is
reused: the log, and `--strict` (any warning fails the build), are those of a clean build. Workers are forked
after the navigation exists; each page's output depends only on its own inputs, so the bytes are the same
whatever the worker count. Pages are streamed: the process holds titles, anchors and search entries, never
every page's HTML.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import json
import logging
import os
import re
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePath
from typing import Any

from generator.markup.doc_budget import RenderBudgetExceeded, cpu_budget
from sourcebook.settings import PAGE_CPU_ENV  # noqa: F401 - its name, for the tests

ENGINE_VERSION = "2"  # part of every key: a change in what the engine stores renders everything again
_PACKAGES = ("mkdocs", "mkdocs-material", "markdown", "pymdown-extensions", "pygments", "jinja2", "nh3")
# config keys only the theme reads: a change re-wraps every page but keeps their rendered Markdown
_TEMPLATE_ONLY = frozenset({"site_name", "site_url", "site_description", "site_author", "copyright", "extra",
                            "extra_css", "extra_javascript", "theme", "repo_url", "repo_name", "edit_uri",
                            "edit_uri_template", "remote_branch", "remote_name", "nav", "site_dir"})
LAST_BUILD = "last-build.json"  # what the last build rendered (for tests and the bench)

log = logging.getLogger("mkdocs.sourcebook.engine")
budget_log = logging.getLogger("sourcebook.site_engine")  # not counted by --strict (see _Relay.show)
# Python-Markdown over one page's Markdown: its costs that grow with the square of a hostile input (a
# docstring of 300,000 `&#91;`, thousands of same headings) held the site stage for hours. A real page
# takes well under a second; over this, in the process's main thread (the engine's, or a forked worker's:
# generator/markup/doc_budget.py), the page is shown as text.
PAGE_CPU_SECONDS = 10.0
# SOURCEBOOK_PAGE_CPU_SECONDS (sourcebook/settings.py): another budget (seconds), e.g. a test's
AS_TEXT_CLASS = "sb-md-text"
# of such a page's Markdown: escaped, <= ~500 KB (generator/site/page_budget.py: 900 KB)
AS_TEXT_CHARS = 100_000


def default_workers() -> int:
    """The CPUs this process may run on (its affinity, e.g. a container's share), else os.cpu_count()."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


# -- logging: one relay that prints, counts for --strict, or records a render's lines for its cache entry ----


class _Relay(logging.Handler):
    def __init__(self, stream: Any) -> None:
        super().__init__(logging.INFO)
        self.stream = stream
        self.warnings = 0
        self.capture: list[list[Any]] | None = None

    def emit(self, record: logging.LogRecord) -> None:
        line = [record.levelno, record.name, record.getMessage()]
        if self.capture is not None:
            self.capture.append(line)
            return
        self.show(line)

    def show(self, line: Sequence[Any]) -> None:
        level, name, message = line
        if level >= logging.WARNING and str(name).startswith("mkdocs"):
            self.warnings += 1  # what mkdocs' CountHandler counts in strict mode
        self.stream.write(f"{logging.getLevelName(level):<7} -  {message}\n")
        self.stream.flush()


class _Process:
    """This process's relay, (while a build runs) the state its forked workers inherit, and the Markdown
    converter it reuses from page to page."""

    relay: _Relay | None = None
    state: _State | None = None
    markdown: tuple[Any, Any] | None = None  # (the config it was made for, markdown.Markdown)


_here = _Process()


def _replay(lines: Iterable[Sequence[Any]]) -> None:
    assert _here.relay is not None
    for line in lines:
        _here.relay.show(line)


class _Captured:
    """Within the block, log lines are recorded (into `lines`) instead of printed."""

    def __enter__(self) -> list[list[Any]]:
        assert _here.relay is not None
        self.before, _here.relay.capture = _here.relay.capture, []
        return _here.relay.capture

    def __exit__(self, *exc: object) -> None:
        assert _here.relay is not None
        _here.relay.capture = self.before


# -- keys ----------------------------------------------------------------------------------------------------


def _digest(*parts: Any) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=_stable, ensure_ascii=False)
                          .encode()).hexdigest()


def _stable(value: Any) -> Any:
    """What JSON cannot hold, stably: a set sorted, a `!!python/name:` function by its name, a date by its
    value."""
    if isinstance(value, (set, frozenset)):
        return sorted(value, key=str)
    name = getattr(value, "__qualname__", None)
    if name is not None:
        return f"{getattr(value, '__module__', '')}.{name}"
    return f"{type(value).__qualname__}:{value}"


def _versions() -> dict[str, str]:
    found = {}
    for name in _PACKAGES:
        try:
            found[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            found[name] = ""
    return found


def _code_digest(hook_files: Iterable[str]) -> str:
    """The engine's and the hooks' code: a project hook by its import closure (the sanitizer, light_nav...),
    any other hook file by its bytes."""
    from sourcebook.code_version import module_name, stage_version

    roots, others = [__spec__.name if __spec__ else __name__], []
    for file in sorted({Path(p).resolve() for p in hook_files}):
        name = module_name(file)
        if name is None:
            others.append(file)
        else:
            roots.append(name)
    digest = hashlib.sha256(stage_version(*sorted(set(roots))).encode())
    for path in others:
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _config_digest(config: Any, *, template_keys: bool) -> str:
    """The validated config without the nav (each page's key covers what it shows of it), where the site
    goes, strictness (the log replay keeps it) and, for content keys, what only the theme reads."""
    drop = {"nav", "site_dir", "strict"} if template_keys else _TEMPLATE_ONLY | {"strict"}
    settings: dict[str, Any] = {}
    for name, raw in config.items():
        if name in drop:
            continue
        if name == "plugins":
            settings[name] = [[p, dict(getattr(raw[p], "config", None) or {})] for p in raw]
        elif name == "theme":
            settings[name] = [raw.name, dict(raw.items())]
        elif name == "hooks":
            settings[name] = sorted(raw)
        else:
            settings[name] = raw
    return _digest(settings)


def _theme_digest(dirs: Sequence[str]) -> str:
    """Installed themes (Material, mkdocs' own) by their package versions (in _versions); any other template
    directory (sourcebook's theme layer) by its files."""
    import material
    import mkdocs

    installed = [Path(material.__file__).resolve().parent, Path(mkdocs.__file__).resolve().parent]
    digest = hashlib.sha256()
    for directory in dirs:
        root = Path(directory).resolve()
        if any(root.is_relative_to(p) for p in installed):
            digest.update(f"installed:{root.name}\0".encode())
            continue
        for path in sorted(p for p in root.rglob("*") if p.is_file()):
            digest.update(path.relative_to(root).as_posix().encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def _fast_yaml() -> None:
    """MkDocs reads its config with PyYAML's pure-Python loader; use that loader's libyaml twin when PyYAML
    has it (same documents, same tags): the generated nav is one flow sequence of every page, slow to
    parse in Python on a big tree."""
    import yaml
    from mkdocs.utils import yaml as mkdocs_yaml

    fast = getattr(yaml, "CLoader", None)
    defaults = mkdocs_yaml.get_yaml_loader.__defaults__
    if fast is not None and defaults and defaults[0] is yaml.Loader:
        mkdocs_yaml.get_yaml_loader.__defaults__ = (fast, *defaults[1:])


def _fast_raw_html_ids() -> None:
    """MkDocs looks for anchor ids in a page's raw HTML by feeding its whole Markdown through html.parser
    (~8% of a cold build of pytest's tree, whose source sections are raw HTML): take the same ids from
    generator/markup/html_tokens.py's cut when it applies (it gives up, and html.parser runs as before, on any
    text html.parser could read differently). Patched in the engine's process only, before any render."""
    from mkdocs.structure import pages

    from generator.markup.html_tokens import anchor_ids

    scan = getattr(pages, "_RawHTMLPreprocessor", None)
    if scan is None or getattr(scan.run, "sourcebook", False):
        return
    original = scan.run

    def run(self: Any, lines: list[str]) -> list[str]:
        found = anchor_ids("\n".join(lines))
        if found is None:
            return original(self, lines)
        self.present_anchor_ids = found
        return lines

    run.sourcebook = True  # type: ignore[attr-defined]
    scan.run = run


def _fast_getattr(env: Any) -> None:
    """Jinja's `a.b` (Environment.getattr) with the same result for less CPU: the theme's templates look up
    ~230 attributes a page that its objects lack (a Section's `meta`, a Page's `typeset` or `encrypted`, a
    dict's `icon`...), each of which Jinja answers by raising and catching AttributeError and then a
    TypeError or KeyError from `obj[name]`. Here the attribute is looked up with a default, a dict with
    `get`, and an object whose type has no `__getitem__` (where `obj[name]` could only raise TypeError) gets
    its Undefined at once. Only for Jinja's own Environment.getattr (a sandbox keeps its rules)."""
    from jinja2 import Environment

    if type(env).getattr is not Environment.getattr or "getattr" in vars(env):
        return
    missing = object()

    def lookup(obj: Any, attribute: str) -> Any:
        value = getattr(obj, attribute, missing)
        if value is not missing:
            return value
        kind = type(obj)
        if kind is dict:
            value = obj.get(attribute, missing)
            return value if value is not missing else env.undefined(obj=obj, name=attribute)
        if not hasattr(kind, "__getitem__"):
            return env.undefined(obj=obj, name=attribute)
        try:
            return obj[attribute]
        except (TypeError, LookupError, AttributeError):
            return env.undefined(obj=obj, name=attribute)

    env.getattr = lookup


# -- the build -----------------------------------------------------------------------------------------------


@dataclass
class BuildStats:
    pages: int = 0
    contents_rendered: list[str] = field(default_factory=list)
    pages_rendered: list[str] = field(default_factory=list)
    workers: int = 1
    seconds: float = 0.0


@dataclass
class _State:
    """What the workers inherit at fork: the loaded config, files, navigation and per-page keys."""

    config: Any
    files: Any
    nav: Any
    env: Any
    doc_files: list[Any]
    cache: Any
    content_names: list[str] = field(default_factory=list)
    page_names: list[str] = field(default_factory=list)
    search_entries: list[Any] | None = None
    search: Any = None  # Material's search plugin when its entries are made with each page's content


class _Failed(Exception):
    """A render failed in a worker: its log lines (already replayed) say why."""


def build(config_file: Path, site_dir: Path, cache_root: Path | None, *, strict: bool = True,
          workers: int = 1, within: Path | None = None) -> BuildStats:
    """Build the site of `config_file` into `site_dir` (expected new and empty), reusing `cache_root`'s
    entries (None: no cache kept). Raises mkdocs' Abort when the build fails (strict warnings included)."""
    from mkdocs.config import load_config
    from mkdocs.exceptions import Abort, BuildError

    from generator.site.render_cache import RenderCache, ephemeral_cache
    from sourcebook.local_key import local_key

    started = time.monotonic()
    _fast_yaml()
    _fast_raw_html_ids()
    config = load_config(str(config_file), site_dir=str(site_dir), strict=strict)
    config.plugins.on_startup(command="build", dirty=False)
    key = local_key() if cache_root is not None else None
    if cache_root is not None and key is not None:
        cache = RenderCache(cache_root, key, within=within)
    else:
        site_dir.mkdir(parents=True, exist_ok=True)
        cache = ephemeral_cache(site_dir.parent)
    stats = BuildStats(workers=workers)
    relay = _here.relay
    assert relay is not None
    warnings_before = relay.warnings
    try:
        _run(config, cache, stats, workers)
        if config.strict and relay.warnings > warnings_before:
            raise Abort(f"Aborted with {relay.warnings - warnings_before} warnings in strict mode!")
    except Exception as exc:
        config.plugins.on_build_error(error=exc)
        if isinstance(exc, _Failed):
            raise Abort("Aborted with a BuildError!") from exc
        if isinstance(exc, BuildError):
            log.error(str(exc))
            raise Abort("Aborted with a BuildError!") from exc
        raise
    finally:
        config.plugins.on_shutdown()
        cache.discard()
    stats.seconds = time.monotonic() - started
    log.info("Documentation built in %.2f seconds (%d pages: %d rendered from Markdown, %d through the "
             "theme, the rest from the render cache; %d workers)", stats.seconds, stats.pages,
             len(stats.contents_rendered), len(stats.pages_rendered), workers)
    return stats


def _run(config: Any, cache: Any, stats: BuildStats, workers: int) -> None:
    from mkdocs.commands import build as mkbuild
    from mkdocs.structure.files import InclusionLevel, get_files, set_exclusions
    from mkdocs.structure.nav import get_navigation
    from mkdocs.structure.pages import Page

    from generator.site.material import nav_items, theme_blocks

    config = config.plugins.on_config(config)
    config.plugins.on_pre_build(config=config)
    log.info("Building documentation to directory: %s", config.site_dir)
    files = get_files(config)
    env = config.theme.get_env()
    files.add_files_from_theme(env, config)
    files = config.plugins.on_files(files, config=config)
    set_exclusions(files, config)
    nav = get_navigation(files, config)
    nav = config.plugins.on_nav(nav, config=config, files=files)
    doc_files = list(files.documentation_pages(inclusion=InclusionLevel.is_included))
    state = _here.state = _State(config, files, nav, env, doc_files, cache)
    state.search = _own_search(config)
    manifest = cache.load_manifest()
    hooks = [str(getattr(m, "__file__", "")) for m in (config.get("hooks") or {}).values()]
    code = _code_digest(hooks)
    versions = _versions()
    content_global = _digest(ENGINE_VERSION, versions, code, _config_digest(config, template_keys=False))
    page_global = _digest(ENGINE_VERSION, versions, code, _config_digest(config, template_keys=True),
                          _theme_digest(config.theme.dirs))
    own_hooks = Path(__file__).resolve().parent.parent / "hooks" / "mkdocs_hooks.py"
    light = any(Path(h).resolve() == own_hooks for h in hooks)

    # 1. content: read every page, reuse or render its Markdown
    stats.pages = len(doc_files)
    content_meta: dict[str, Any] = {}
    content_keys: list[str] = []
    stale: list[int] = []
    for number, file in enumerate(doc_files):
        if file.page is None and file.inclusion.is_not_in_nav():
            Page(None, file, config)
        page = config.plugins.on_pre_page(file.page, config=config, files=files)
        page.read_source(config)
        page.markdown = config.plugins.on_page_markdown(page.markdown, page=page, config=config, files=files)
        # the nav's title for the page: a search section with no heading is titled by it
        # the Markdown by its own hash: JSON-escaping every page's text into the key cost more than hashing
        text = hashlib.sha256(page.markdown.encode("utf-8", "surrogatepass")).hexdigest()
        ckey = _digest(content_global, file.src_uri, file.url, text, page.meta, vars(page).get("title"))
        name = cache.name(ckey)
        content_keys.append(ckey)
        state.content_names.append(name)
        page.markdown = ""  # streamed: a worker reads it again when it renders the page
        meta = manifest["content"].get(name)
        if meta is not None and _lookups_hold(files, meta) and cache.content_path(name).is_file():
            content_meta[name] = meta
        else:
            stale.append(number)
    for number, meta in zip(stale, _map(_render_content, stale, workers), strict=True):
        content_meta[state.content_names[number]] = meta
        stats.contents_rendered.append(doc_files[number].src_uri)
    failed = False
    for number, file in enumerate(doc_files):
        meta = content_meta[state.content_names[number]]
        _replay(meta["logs"])
        failed = failed or meta.get("failed", False)
        _restore_page_meta(file.page, meta, files)
    if failed:
        raise _Failed("a page's Markdown could not be rendered")

    env = config.plugins.on_env(env, config=config, files=files)
    _fast_getattr(env)
    nav_items.install(env)  # Material's nav entries rendered once per folder
    theme_blocks.install(env)  # and its blocks that print only the page's folder
    state.env = env
    files.copy_static_files(dirty=False, inclusion=InclusionLevel.is_included)
    for template in config.theme.static_templates:
        mkbuild._build_theme_template(template, env, files, config, nav)
    for template in config.extra_templates:
        mkbuild._build_extra_template(template, files, config, nav)

    # 2. pages: reuse or render each page through the theme
    from generator.site.light_nav import NavKeys, nav_key

    whole_nav = nav_key(nav.items) if not light else ""
    shows = NavKeys(nav)
    page_meta: dict[str, Any] = {}
    to_render: list[int] = []
    for number, file in enumerate(doc_files):
        page = file.page
        shown = shows(page) if light else whole_nav
        pkey = _digest(page_global, content_keys[number], _page_context(page), shown)
        name = cache.name(pkey)
        state.page_names.append(name)
        meta = manifest["pages"].get(name)
        if meta is not None and (meta.get("empty") or cache.place_page(name, Path(file.abs_dest_path))):
            page_meta[name] = meta
        else:
            to_render.append(number)
    state.search_entries = _search_entries(config)
    for number, meta in zip(to_render, _map(_render_page, to_render, workers), strict=True):
        page_meta[state.page_names[number]] = meta
        stats.pages_rendered.append(doc_files[number].src_uri)
    fragments: list[str] = []
    for number in range(len(doc_files)):
        meta = page_meta[state.page_names[number]]
        _replay(meta["logs"])
        failed = failed or meta.get("failed", False)
        search = content_meta[state.content_names[number]] if state.search is not None else meta
        if search.get("search"):
            fragments.append(search["search"])
    if failed:
        raise _Failed("a page could not be rendered")

    # 3. what mkdocs does after the pages; the search index from the pages' entries, in page order
    level = config.validation.links.anchors
    for file in doc_files:
        file.page.validate_anchor_links(files=files, log_level=level)
    _search_index(config, fragments)
    config.plugins.on_post_build(config=config)
    cache.save({n: m for n, m in content_meta.items() if not m.get("failed")},
               {n: m for n, m in page_meta.items() if not m.get("failed")})
    _here.state = None


def render_markdown(page: Any, config: Any, files: Any) -> None:
    """mkdocs' Page.render with one Markdown converter per process, reset between pages, instead of a new
    one per page: building it (loading every extension, compiling their patterns) was a sixth of Markdown's
    time on flask's pages. The page gets what Page.render sets, from the same processors; with an MkDocs
    whose Page.render is not the one this mirrors (its helpers renamed), Page.render itself runs."""
    from mkdocs.structure import pages

    helpers = ("_RawHTMLPreprocessor", "_ExtractAnchorsTreeprocessor", "_RelativePathTreeprocessor",
               "_ExtractTitleTreeprocessor", "get_toc")
    budget = _page_budget()
    try:
        with cpu_budget(budget):
            if not all(hasattr(pages, name) for name in helpers):
                page.render(config, files)
                return
            _convert(page, config, files)
    except RenderBudgetExceeded:
        _here.markdown = None  # stopped mid-page: the next page gets a new converter
        _as_text(page, budget)


def _page_budget() -> float:
    from sourcebook.settings import current

    seconds = current().page_cpu_seconds or PAGE_CPU_SECONDS
    return seconds if 0 < seconds < 1e6 else PAGE_CPU_SECONDS


def _as_text(page: Any, budget: float) -> None:
    """A page over its CPU budget: its Markdown as escaped text, after a note, and a warning naming it (not
    one of mkdocs', which `--strict` would turn into a failed build: one hostile file must not stop it)."""
    import html

    from mkdocs.structure.toc import TableOfContents

    budget_log.warning("page '%s' took over %g s of CPU time to render: shown as the text of its Markdown",
                       page.file.src_uri, budget)
    text = page.markdown
    cut = len(text) > AS_TEXT_CHARS
    note = (f"This page took too long to render; its text is shown as written"
            f"{f', its first {AS_TEXT_CHARS:,} characters' if cut else ''}.")
    page.content = (f'<p class="{AS_TEXT_CLASS}"><em>{note}</em></p>\n<pre class="{AS_TEXT_CLASS}">'
                    f"{html.escape(text[:AS_TEXT_CHARS], quote=False)}</pre>")
    page.toc = TableOfContents([])
    page._title_from_render = None
    page.present_anchor_ids = set()
    page.links_to_anchors = {}


def _convert(page: Any, config: Any, files: Any) -> None:
    import markdown
    from mkdocs.structure import pages

    if page.markdown is None:
        raise RuntimeError("`markdown` field hasn't been set (via `read_source`)")
    if _here.markdown is None or _here.markdown[0] is not config:
        md = markdown.Markdown(extensions=config["markdown_extensions"],
                               extension_configs=config["mdx_configs"] or {})
        _here.markdown = (config, md)
    md = _here.markdown[1]
    md.reset()
    # per page, as Page.render registers them (by name: each replaces the previous page's)
    raw_html = pages._RawHTMLPreprocessor()
    raw_html._register(md)
    anchors = pages._ExtractAnchorsTreeprocessor(page.file, files, config)
    anchors._register(md)
    relative = pages._RelativePathTreeprocessor(page.file, files, config)
    relative._register(md)
    title = pages._ExtractTitleTreeprocessor()
    title._register(md)
    page.content = md.convert(page.markdown)
    page.toc = pages.get_toc(getattr(md, "toc_tokens", []))
    page._title_from_render = title.title
    page.present_anchor_ids = anchors.present_anchor_ids | raw_html.present_anchor_ids
    if pages.log.getEffectiveLevel() > logging.DEBUG:
        page.links_to_anchors = relative.links_to_anchors


def _page_context(page: Any) -> list[Any]:
    """What the theme prints about a page besides its content and nav (Material's templates read these)."""
    def ref(other: Any) -> list[Any] | None:
        return [other.title, other.url] if other is not None else None

    return [page.url, page.title, page.meta, page.edit_url, page.canonical_url, page.is_homepage,
            ref(page.previous_page), ref(page.next_page), [a.title for a in page.ancestors]]


def _resolution(files: Any, paths: Iterable[str]) -> str:
    """What `paths` resolve to among `files` (URL and exclusion of each), as one digest."""
    digest = hashlib.sha256()
    for path in paths:
        found = files.get_file_from_path(path)
        digest.update(f"{path}\x1f{found.url}\x1f{found.inclusion.is_excluded()}\x1e".encode()
                      if found is not None else f"{path}\x1f\x1e".encode())
    return digest.hexdigest()[:32]


def _lookups_hold(files: Any, meta: dict[str, Any]) -> bool:
    """The files a page's links resolved to when it was rendered are still the same (URL, exclusion)."""
    paths = meta["lookups"].split("\n") if meta["lookups"] else []
    return _resolution(files, paths) == meta["resolved"]


def _restore_page_meta(page: Any, meta: dict[str, Any], files: Any) -> None:
    """The page as a render leaves it, minus the content (loaded again only if the theme must wrap it)."""
    page.content = ""  # not None: Page.title then reads as after a render
    page._title_from_render = meta["title"]
    page.present_anchor_ids = set(meta["anchors"])
    links: dict[Any, dict[str, str]] = {}
    for src_uri, anchors in meta["links"].items():
        target = files.get_file_from_path(src_uri)
        if target is not None:
            links[target] = dict(anchors)
    page.links_to_anchors = links


def _own_search(config: Any) -> Any:
    """Material's search plugin, enabled, with its page event reduced to what it does to the page (drop
    the `data-search-*` attributes it reads): the engine makes each page's entries when it renders the
    page's content (generator/site/material/search_sections.py, the same sections for less CPU), so they are
    cached
    with the content and a page re-wrapped for a new nav or theme is not parsed again. None: another
    search plugin (or none) runs as MkDocs runs it."""
    from material.plugins.search.plugin import SearchPlugin

    import generator.site.material.search_sections  # noqa: F401 - loaded before the code digest: part of every key

    search = next((p for p in config.plugins.values() if isinstance(p, SearchPlugin)), None)
    if search is None or not search.config.enabled:
        return None
    events = config.plugins.events["page_context"]
    for number, event in enumerate(events):
        if getattr(event, "__self__", None) is search:
            events[number] = _drop_search_attributes
    return search


# Material's on_page_context removes r'\s?data-search-\w+="[^"]+"'; that pattern's optional first character
# keeps the regex engine from skipping ahead to its literal part, so it tries every position of the page. The
# same matches, found from the literal part.
_SEARCH_ATTRIBUTE = re.compile(r"data-search-\w+=\"[^\"]+\"")


def _drop_search_attributes(context: Any, *, page: Any, **_: Any) -> None:
    page.content = without_search_attributes(page.content)


def without_search_attributes(html: str) -> str:
    r"""`re.sub(r'\s?data-search-\w+="[^"]+"', "", html)`: each attribute with the one whitespace character
    before it, if any."""
    if "data-search-" not in html:
        return html
    out: list[str] = []
    pos = 0
    for m in _SEARCH_ATTRIBUTE.finditer(html):
        start = m.start()
        if start > pos and html[start - 1].isspace():
            start -= 1
        out.append(html[pos:start])
        pos = m.end()
    out.append(html[pos:])
    return "".join(out)


def _content_search(search: Any, page: Any) -> str:
    """The page's search entries, as Material's plugin would add them on_page_context, as the JSON text
    its index holds them in (json.dumps, compact, default=str)."""
    from generator.site.material.search_sections import sections

    if (page.meta.get("search") or {}).get("exclude"):
        return ""
    index = search.search_index
    before = len(index.entries)
    try:
        for section in sections(page.content):
            if not section.is_excluded():
                index.create_entry_for_section(section, page.toc, page.url, page)
        return ",".join(json.dumps(e, separators=(",", ":"), default=str) for e in index.entries[before:])
    finally:
        del index.entries[before:]


def _search_entries(config: Any) -> list[Any] | None:
    """The list a search plugin (Material's, or mkdocs' own) collects each page's entries into."""
    for plugin in config.plugins.values():
        index = getattr(plugin, "search_index", None)
        for attr in ("entries", "_entries"):
            if isinstance(getattr(index, attr, None), list):
                return getattr(index, attr)
    return None


def _search_index(config: Any, fragments: list[str]) -> None:
    """Material's search plugin writes `{"config": …, "docs": [every entry]}` after the build: write those
    bytes from the pages' stored entries (never parsing them all back into objects) and drop its writer for
    this build; another search plugin gets the entries back into its list and writes its own index."""
    from material.plugins.search.plugin import SearchPlugin

    search = next((p for p in config.plugins.values() if isinstance(p, SearchPlugin)), None)
    if search is None or not search.config.enabled:
        entries = _search_entries(config)
        if entries is not None and fragments:
            entries[:] = json.loads("[" + ",".join(fragments) + "]")
        return
    settings = {key: search.search_index.config[key] for key in ("lang", "separator", "pipeline", "fields")}
    head = json.dumps({"config": settings}, separators=(",", ":"), default=str)[:-1]
    path = Path(config.site_dir) / "search" / "search_index.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w", encoding="utf-8") as out:
        out.write(head + ',"docs":[')
        for number, fragment in enumerate(fragments):
            out.write(("," if number else "") + fragment)
        out.write("]}")
    events = config.plugins.events["post_build"]
    events[:] = [e for e in events if getattr(e, "__self__", None) is not search]


# -- the two renders (in a worker, or in the build's own process) --------------------------------------------


def _render_content(number: int) -> dict[str, Any]:
    assert _here.state is not None
    state = _here.state
    config, files, file = state.config, state.files, state.doc_files[number]
    page = file.page
    lookups: dict[str, Any] = {}

    def recorded(path: str) -> Any:
        found = type(files).get_file_from_path(files, path)
        lookups[PurePath(path).as_posix()] = found
        return found

    with _Captured() as lines:
        config._current_page = page
        try:
            page.read_source(config)
            page.markdown = config.plugins.on_page_markdown(page.markdown, page=page, config=config,
                                                            files=files)
            setattr(files, "get_file_from_path", recorded)  # noqa: B010 - the links this render resolves
            try:
                render_markdown(page, config, files)
            finally:
                delattr(files, "get_file_from_path")
            page.content = config.plugins.on_page_content(page.content, page=page, config=config,
                                                          files=files)
            search = _content_search(state.search, page) if state.search is not None else ""
        except Exception as exc:  # noqa: BLE001 - reported like mkdocs, then the build fails
            from mkdocs.exceptions import BuildError

            message = f"Error reading page '{file.src_uri}':"
            log.error(message if isinstance(exc, BuildError) else f"{message} {exc}")
            if isinstance(exc, BuildError):
                log.error(str(exc))
            return {"failed": True, "logs": lines, "title": None, "anchors": [], "links": {}, "lookups": "",
                    "resolved": ""}
        finally:
            config._current_page = None
    first = page.toc.items[0] if page.toc.items else None
    state.cache.write_content(state.content_names[number],
                              {"content": page.content, "toc": [_toc_item(i) for i in page.toc],
                               "toc_active": bool(getattr(first, "active", False))})
    paths = sorted(lookups)
    anchors = sorted(a for a in page.present_anchor_ids or () if a)  # MkDocs records None for a bare <a>
    meta = {"title": page._title_from_render, "anchors": anchors,
            "links": {f.src_uri: dict(a) for f, a in (page.links_to_anchors or {}).items()},
            "lookups": "\n".join(paths), "resolved": _resolution(files, paths), "logs": lines,
            "search": search}
    page.markdown, page.content = "", ""
    page.toc = _toc_from([])
    return meta


def _render_page(number: int) -> dict[str, Any]:
    assert _here.state is not None
    from mkdocs.commands import build as mkbuild

    state = _here.state
    file = state.doc_files[number]
    page = file.page
    entry = state.cache.read_content(state.content_names[number])
    if entry is None:
        return {"failed": True, "logs": [[logging.ERROR, log.name,
                                           f"render cache: the content of '{file.src_uri}' went missing"]]}
    page.content = entry["content"]
    page.toc = _toc_from(entry["toc"])
    if entry.get("toc_active") and page.toc.items:
        page.toc.items[0].active = True
    search = state.search_entries
    before = len(search) if search is not None else 0
    with _Captured() as lines:
        try:
            mkbuild._build_page(page, state.config, state.doc_files, state.nav, state.env)
        except Exception as exc:  # noqa: BLE001 - mkdocs logged "Error building page"; the build fails
            from mkdocs.exceptions import BuildError

            if isinstance(exc, BuildError):
                log.error(str(exc))
            return {"failed": True, "logs": lines}
    dest = Path(file.abs_dest_path)
    empty = not dest.exists()
    if not empty:
        state.cache.keep_page(state.page_names[number], dest)
    # the page's search entries as Material's index writes them (json.dumps, compact, default=str)
    fragment = ",".join(json.dumps(e, separators=(",", ":"), default=str) for e in search[before:]) \
        if search is not None else ""
    if search is not None:
        del search[before:]
    page.content = ""
    page.toc = _toc_from([])
    return {"search": fragment, "logs": lines, "empty": empty}


def _toc_item(item: Any) -> list[Any]:
    return [item.title, item.id, item.level, [_toc_item(c) for c in item.children]]


def _toc_from(items: Sequence[Sequence[Any]]) -> Any:
    from mkdocs.structure.toc import AnchorLink, TableOfContents

    def one(raw: Sequence[Any]) -> AnchorLink:
        link = AnchorLink(raw[0], raw[1], raw[2])
        link.children = [one(c) for c in raw[3]]
        return link

    return TableOfContents([one(i) for i in items])


# -- fan-out -------------------------------------------------------------------------------------------------


def _map(render: Callable[[int], dict[str, Any]], numbers: list[int],
         workers: int) -> Iterator[dict[str, Any]]:
    """`render` over `numbers` in order: in this process for one worker or a handful of pages, else in
    `workers` processes forked now (they inherit the loaded config, files and navigation; see
    sourcebook/workers.py's chunked_map for when it does not fork, and how a failed worker is reported)."""
    if workers <= 1 or len(numbers) < 2 * workers:
        yield from map(render, numbers)
        return
    from sourcebook.workers import chunked_map

    chunk = max(1, min(16, len(numbers) // (workers * 8)))
    yield from chunked_map(render, numbers, workers, chunk=chunk, initializer=_worker_started,
                           describe=_page_name)


def _page_name(number: int) -> str:
    state = _here.state
    if state is None or not 0 <= number < len(state.doc_files):
        return f"page {number}"
    return str(state.doc_files[number].src_uri)


def _worker_started(parent: int) -> None:
    if _here.relay is not None:
        _here.relay.capture = []  # a worker prints nothing itself: its lines travel with its results
    from sourcebook.workers import die_with_parent

    die_with_parent(parent)


# -- command line --------------------------------------------------------------------------------------------


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m generator.site.material.engine",
                                     description="Build an MkDocs site incrementally (see its docstring).")
    parser.add_argument("config", type=Path)
    parser.add_argument("site_dir", type=Path)
    parser.add_argument("--cache", type=Path, help="render cache directory (default: none kept)")
    parser.add_argument("--within", type=Path, help="the output folder the cache must lie in")
    parser.add_argument("--workers", type=int, default=0, help="render processes (default: the usable CPUs)")
    parser.add_argument("--no-strict", action="store_true")
    parser.add_argument("--parent", type=int, help="a process to die with (the build that started this one)")
    args = parser.parse_args(argv)
    if args.parent:
        from sourcebook.workers import die_with_parent

        die_with_parent(args.parent)  # a killed build must not leave its site engine rendering on
    _here.relay = _Relay(sys.stderr)
    root = logging.getLogger()
    root.handlers[:] = [_here.relay]
    root.setLevel(logging.INFO)
    from mkdocs.exceptions import Abort, ConfigurationError

    from sourcebook.errors import SourcebookError

    try:
        stats = build(args.config, args.site_dir, args.cache, strict=not args.no_strict,
                      workers=args.workers or default_workers(), within=args.within)
    except (Abort, ConfigurationError, SourcebookError) as exc:
        sys.stderr.write(f"{exc}\n")
        return 1
    if args.cache is not None and args.cache.is_dir():
        report = {"pages": stats.pages, "contents_rendered": stats.contents_rendered,
                  "pages_rendered": stats.pages_rendered, "workers": stats.workers, "seconds": stats.seconds}
        (args.cache / LAST_BUILD).write_text(json.dumps(report, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
