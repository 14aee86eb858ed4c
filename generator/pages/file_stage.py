"""File pages: each file's key (its facts, links, cross-references, a rendered document's includes), its draft
(asked here, or made where the page is rendered for the extractive writer), and its Markdown, rendered in
forked workers when the build has them.
"""

from __future__ import annotations

import dataclasses
import html
import logging
import posixpath
import re
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from generator.analyze.facts import FileFacts, Symbol
from generator.analyze.plan import PageState, draft_key, page_key
from generator.pages.constructors import package_builders
from generator.pages.contexts import file_context
from generator.pages.stages import PageRun, Planning, map_pages, readme_resolver, safely
from generator.pages.type_parts import SplitType, parts_by_path, parts_key, split_types
from generator.pages.writer import (
    ExtractiveWriter,
    FileDraft,
    PageWriter,
    apply_docstrings,
    generated_docstrings,
)
from sourcebook.config import Config

if TYPE_CHECKING:
    from generator.markup.doc_html import DocumentCache, DocumentRender
    from generator.pages.call_links import FileRefs, XrefIndex
    from generator.pages.name_links import NameIndex, Target
    from generator.pages.remote import SourceLinks
    from generator.pages.writer import FileContext


log = logging.getLogger(__name__)

# a file page rendered by a forked worker only (workers.ordered_map's `heavy`): on the monorepo the pages of
# larger files (reST changelogs, 400 kB modules) were the slow ones to render (docs/performance.md)
HEAVY_PAGE_BYTES = 50_000


def file_render_inputs(config: Config, facts: Mapping[str, FileFacts], graph: Any) -> tuple[
        SourceLinks | None, XrefIndex]:
    """What file pages render besides their draft and the symbol index: source links, cross-references."""
    from generator.pages.call_links import XrefIndex
    from generator.pages.remote import source_links

    return source_links(config.root, config.repo_url), XrefIndex.build(facts, graph.calls, graph.callers)


def file_render_key(base: str, links: SourceLinks | None, refs: FileRefs,
                    doc_links: Mapping[str, Target] | None = None, document: str = "", *,
                    builders: Sequence[Symbol] = (), parts: Mapping[str, SplitType] | None = None) -> str:
    """The rendering part of a file page's key: a new commit (links), a new caller (refs), a docstring
    name now naming another section (doc_links) or a file a document includes changing (`document`:
    document_key) re-renders the page from its stored draft; none is part of the draft key, so no prose is
    rewritten. With doc_links in the key a page never keeps a link to a page that is gone. `parts`: the
    types the file declares a part of (type_parts.py), whose other files' parts it lists or links to."""
    docs = repr(sorted((doc_links or {}).items()))
    built = repr([(s.path, s.qualname, s.signature) for s in builders])  # `builders`: package_builders
    split = parts_key(parts) if parts else ""
    return "\x1f".join([base, links.key() if links else "", refs.key(), docs, document, built, split])


def docstring_links(names: NameIndex, f: FileFacts) -> dict[str, Target]:
    """Every name in the file's docstrings that names a symbol in another file, with that symbol."""
    from generator.markup.docmarkup import xref_names

    asked: set[str] = set()
    for text in [f.docstring, *(s.docstring for s in f.symbols)]:
        if text and ("`" in text or "{@" in text or "[" in text or "<see" in text or "ref" in text):
            asked |= xref_names(text)
    out: dict[str, Target] = {}
    for name in asked:
        target = names.lookup(name, f.path)
        if target is not None and target.path != f.path:
            out[name] = target
    return out


@dataclass(frozen=True)
class FileJob:
    """One file page as planned: its context, its key (what `--check` compares too), its draft key, and what
    its rendering reads besides the draft."""

    ctx: FileContext
    key: str
    dkey: str  # a file page's draft key is also its stable key (plan.stable_key): what its prose was about
    refs: FileRefs
    doc_links: dict[str, Target]  # page_links: the names it links to other pages' symbols
    doc_key: str  # document_key of a rendered document, else ""

    @property
    def page_id(self) -> str:
        return self.ctx.page_id


@dataclass(frozen=True)
class FilePlan:
    """Every file page of a build, and the repository-wide inputs their rendering shares."""

    jobs: list[FileJob]
    links: SourceLinks | None
    names: NameIndex
    builders: Mapping[str, Sequence[Symbol]]  # package_builders
    read: Callable[[str], str | None]  # repository_reader
    parts: Mapping[str, Mapping[str, SplitType]]  # type_parts.parts_by_path: types declared in several files


def plan_file_pages(inputs: Planning) -> FilePlan:
    """Each file's page id, context and key, computed once for the build and for `--check`."""
    from generator.pages.name_links import NameIndex

    config, plan, facts, graph, writer = inputs.config, inputs.plan, inputs.facts, inputs.graph, inputs.writer
    links, xref = file_render_inputs(config, facts, graph)
    names = NameIndex.build(facts, plan.files)
    read = repository_reader(facts, inputs.text)
    builders = package_builders(facts)
    parts = parts_by_path(split_types(facts.values()))
    jobs = []
    for path in sorted(facts):
        f = facts[path]
        ctx = file_context(f, plan, graph)
        refs = xref.file_refs(f)
        doc_links = page_links(names, f, inputs.text, read)
        doc_key = document_key(f, inputs.text(path), read) if is_rendered_document(f) else ""
        fingerprint = ctx.fingerprint()  # once: it writes out every symbol (3% of a cold files stage)
        key = page_key(fingerprint, writer.id, file_render_key(inputs.version, links, refs, doc_links,
                                                               doc_key, builders=builders.get(path, ()),
                                                               parts=parts.get(path)))
        jobs.append(FileJob(ctx, key, draft_key(fingerprint, writer.id), refs, doc_links, doc_key))
    return FilePlan(jobs, links, names, builders, read, parts)


Drafted = tuple[FileDraft, dict[str, str]]  # a draft and the docstrings it generated (qualname -> text)
# (job number, its draft or None when the render makes it, the docstrings it generated)
Handed = tuple[int, FileDraft | None, dict[str, str]]


def write_file_pages(run: PageRun) -> None:
    """The planned file pages whose key is not fresh: drafted, rendered (in forked workers when the build has
    them) and put in the page state."""
    from sourcebook.workers import ordered_map

    inputs = run.planning()
    planned = plan_file_pages(inputs)
    documents = document_cache(run.config)
    todo = []
    for job in planned.jobs:
        if job.doc_key:
            # an unchanged doc's page is not re-rendered: its entry stays
            documents.keep(inputs.text(job.ctx.path), job.doc_key)
        if not run.pages.fresh(job.page_id, job.key):
            todo.append(job)
    run.notify("files", 0, len(todo))
    pages = FilePages(run, inputs, planned, todo, documents)
    tally = {"hit": 0, "miss": 0, "": 0}
    for n, cached, made_here in ordered_map(pages.render, pages.drafts(), run.processes, expected=len(todo),
                                            heavy=pages.heavy, describe=pages.describe):
        job, (draft, generated) = todo[n], made_here or pages.made.pop(n)
        ctx, key, dkey = job.ctx, job.key, job.dkey
        tally[cached] += 1
        run.pages.put(ctx.page_id, key, None, PageState(
            key=key, kind="file", title=posixpath.basename(ctx.path), target_path=ctx.path,
            summary=draft.summary, written_by=draft.written_by, retry=draft.fallback,
            symbols=[s.qualname for s in ctx.facts.symbols], docstrings=generated,
            source_sha=ctx.facts.file.sha),
            dkey=dkey, draft=draft, stable=dkey)
        run.notify("files", n + 1, len(todo))
    documents.prune()
    if tally["hit"] or tally["miss"]:
        log.info("documents (reST, Markdown): %d rendered, %d from the cache", tally["miss"], tally["hit"])


class FilePages:
    """The drafting and rendering of one build's file pages (`todo`, in order): drafts are asked in this
    process (`draft`, threaded by `drafts`), pages rendered by `render` here or in a forked worker, which
    inherits this object."""

    def __init__(self, run: PageRun, inputs: Planning, planned: FilePlan, todo: list[FileJob],
                 documents: DocumentCache) -> None:
        self.run, self.inputs, self.planned, self.todo, self.documents = run, inputs, planned, todo, documents
        self.extractive = ExtractiveWriter()
        # the extractive writer's drafts are made where the page is rendered (a forked worker too): it is
        # deterministic and reads only the page's context; a model's are asked here, its threads in this
        # process
        self.local = drafts_where_rendered(run.writer)
        self.made: dict[int, Drafted] = {}  # drafts handed to render, until their page is put

    def draft(self, job: FileJob) -> Drafted | None:
        """(draft, generated docstrings): the draft re-used from the state when only the rendering changed;
        None when the render makes it (`local`)."""
        pages, writer = self.run.pages, self.run.writer
        ctx, dkey = job.ctx, job.dkey
        stored = pages.stored(ctx.page_id, dkey, FileDraft)
        if stored is not None:
            return stored[0], dict(stored[1].docstrings)
        earlier = pages.model_draft(ctx.page_id, dkey, FileDraft)
        if earlier is not None:
            notes = pages.state[ctx.page_id].llm_draft.get("docstrings") or []
            return earlier, {str(n["qualname"]): str(n["explanation"]) for n in notes}
        if self.local:
            return None
        # the source is no part of the fingerprint
        ctx = dataclasses.replace(ctx, source=self.inputs.text(ctx.path))
        draft = safely(writer.file_page, self.extractive.file_page, ctx, ctx.page_id, pages.report)
        if draft.fallback:
            kept = pages.settle(ctx.page_id, draft, FileDraft, dkey, dkey)
            if kept is not draft:
                notes = pages.state[ctx.page_id].llm_draft.get("docstrings") or []
                return kept, {str(n["qualname"]): str(n["explanation"]) for n in notes}
        return draft, generated_docstrings(draft)

    def drafts(self) -> Iterator[Handed]:
        """Each job's draft, in order, as the writer's threads finish them."""
        for n, written in enumerate(map_pages(self.draft, self.todo, self.run.writer.concurrency,
                                              lambda job: job.ctx.path)):
            if written is None:
                yield n, None, {}
            else:
                self.made[n] = written
                yield n, *written

    def render(self, item: Handed) -> tuple[int, str, Drafted | None]:
        """(n, "hit"/"miss" of its reST document in the cache or "", the draft made here if any): run by
        this process or a forked worker (workers.py), which inherits all it reads and writes the page's
        Markdown itself (only its row is kept here)."""
        from generator.pages.name_links import page_resolver
        from generator.pages.render_markdown import relative_link, render_file_page

        run, planned, documents = self.run, self.planned, self.documents
        n, draft, generated = item
        job = self.todo[n]
        ctx, doc_links = job.ctx, job.doc_links
        text = self.inputs.text(ctx.path)
        made_here = None
        if draft is None:  # the local writer's, as `draft` above would have made it
            draft = run.writer.file_page(dataclasses.replace(ctx, source=text))
            generated = generated_docstrings(draft)
            made_here = (draft, generated)
        # generated docstrings are shown (marked as generated) on the page only; the key stays on the facts
        shown = dataclasses.replace(ctx, facts=apply_docstrings(ctx.facts, generated), source=text)
        resolve = page_resolver(planned.names, ctx.path, ctx.page_id, doc_links, relative_link)
        document, cached = "", ""
        if is_rendered_document(ctx.facts):
            misses = documents.misses
            paths = line_link_resolver(readme_resolver(run.plan, ctx.path, ctx.page_id), ctx.path,
                                       ctx.page_id, doc_links)
            document = documents.render(text, paths, resolve, salt=job.doc_key,
                                        render=document_renderer(ctx.facts, planned.read))
            cached = "miss" if documents.misses > misses else "hit"
            document = autodoc_summaries(document, doc_links)
        markdown = render_file_page(shown, draft, writer_id=run.writer.id, links=planned.links, refs=job.refs,
                                    index=run.symbols, module_page=run.plan.modules[ctx.module],
                                    resolve_symbol=resolve, document=document,
                                    builders=planned.builders.get(ctx.path, ()),
                                    parts=planned.parts.get(ctx.path))
        run.pages.write_markdown(ctx.page_id, markdown)
        return n, cached, made_here

    def heavy(self, item: Handed) -> bool:
        return self.todo[item[0]].ctx.facts.file.size > HEAVY_PAGE_BYTES

    def describe(self, item: Handed) -> str:
        return f"the page of {self.todo[item[0]].ctx.path}"


def drafts_where_rendered(writer: PageWriter) -> bool:
    """Whether file pages' drafts may be made where they are rendered, a forked worker included: the
    extractive writer's (deterministic, local, no threads, never a fallback). A model's drafts are asked
    by this process, with its threads, and its fallbacks and retries kept in this process's state."""
    return type(writer) is ExtractiveWriter


def page_links(names: NameIndex, f: FileFacts, text: Callable[[str], str],
               read: Callable[[str], str | None] | None = None) -> dict[str, Target]:
    """The names a file page links to other pages' symbols (part of its key): its docstrings', and for a
    rendered reST document those its API roles and autodoc directives give, in the files it includes too
    (`read`: repository_reader)."""
    out = docstring_links(names, f)
    if is_rendered_document(f):
        out.update(line_links(names, f.path, text(f.path)))
    if is_rendered_document(f) and f.file.language == "rst":
        body = text(f.path)
        if read is not None and "include::" in body:
            from generator.markup.doc_includes import included_files

            body = "\n\n".join([body, *(read(p) or "" for p in included_files(f.path, body, read))])
        out.update(document_links(names, f.path, body))
        out.update(autodoc_links(names, f.path, body, rst=True))
    elif is_rendered_document(f) and f.file.language == "markdown":
        out.update(autodoc_links(names, f.path, text(f.path)))
    return out


# a GitHub line link in a document, `main.go#L69` or `../x.py#L3-L9`: where it lands is part of the page's key
_LINE_LINK = re.compile(r"[^\s()<>\[\]\"'`|]+#L\d+(?:-L?\d+)?")


def line_link_key(document: str, url: str) -> str | None:
    """`path#L<n>` for a repository-relative link of `document` to line n of a file, else None."""
    from urllib.parse import unquote, urlsplit

    try:
        parts = urlsplit(url)
    except ValueError:
        return None
    line = re.fullmatch(r"L(\d+)(?:-L?\d+)?", parts.fragment)
    if parts.scheme or parts.netloc or line is None or not parts.path:
        return None
    target = posixpath.normpath(posixpath.join(posixpath.dirname(document), unquote(parts.path))).strip("/")
    return f"{target}#L{int(line.group(1))}"


def line_links(names: NameIndex, path: str, text: str) -> dict[str, Target]:
    """The symbol sections a document's line links land on (`mux.go#L69` -> the symbol holding line 69)."""
    out: dict[str, Target] = {}
    for m in _LINE_LINK.finditer(text):
        key = line_link_key(path, m.group(0))
        if key is None or key in out:
            continue
        target_path, line = key.rsplit("#L", 1)
        target = names.at_line(target_path, int(line))
        if target is not None:
            out[key] = target
    return out


def line_link_resolver(resolve: Callable[[str], str | None], path: str, page_id: str,
                       links: Mapping[str, Target]) -> Callable[[str], str | None]:
    """`resolve` (a document's links to repository paths), with line links sent to the section of the
    symbol holding that line instead of the top of the file's page."""
    from generator.pages.render_markdown import relative_link

    def line_first(url: str) -> str | None:
        key = line_link_key(path, url)
        target = links.get(key) if key is not None else None
        if target is None:
            return resolve(url)
        if target.page_id == page_id:
            return f"#{target.anchor}"
        return f"{relative_link(page_id, target.page_id)}#{target.anchor}"

    return line_first


def autodoc_links(names: NameIndex, path: str, text: str, *, rst: bool = False) -> dict[str, Target]:
    """The symbols a document's autodoc directives document (Markdown's `::: name`, reST's
    `.. autoclass:: name` and the like), each with its summary (the page shows it after the link, so a new
    summary re-renders the page)."""
    from generator.markup.docstrings import docstring_summary

    if rst:
        from generator.markup.rst import autodoc_names as rst_autodoc_names

        used = rst_autodoc_names(text) if "auto" in text else {}
    else:
        from generator.markup.md_html import autodoc_names

        used = {name: (name,) for name in (autodoc_names(text) if ":::" in text else ())}
    out = {}
    for name, candidates in sorted(used.items()):
        target = next((t for t in (names.lookup(c, path) for c in candidates) if t is not None), None)
        if target is not None:
            doc = names.docstrings.get((target.path, target.anchor), "")
            out[name] = dataclasses.replace(target, summary=docstring_summary(doc, 160)) if doc else target
    return out


_AUTODOC_PARAGRAPH = re.compile(
    r'(<p class="sb-autodoc">(?:<a(?: class="[^"]*")? href="[^"]*">)?<code>([^<]*)</code>(?:</a>)?)</p>')


def autodoc_summaries(document: str, targets: Mapping[str, Target]) -> str:
    """A rendered document with each autodoc directive's link (`::: name`, `.. autoclass:: name`: both
    render as `<p class="sb-autodoc">`) followed by that symbol's summary (autodoc_links), as mkdocstrings
    or Sphinx would show its docstring: after the document cache, which keeps links, not summaries."""
    from generator.pages.render_markdown import rich_cell

    def one(m: re.Match[str]) -> str:
        target = targets.get(html.unescape(m.group(2)))
        return f"{m.group(1)}: {rich_cell(target.summary)}</p>" if target and target.summary else m.group(0)

    return _AUTODOC_PARAGRAPH.sub(one, document) if 'class="sb-autodoc"' in document else document


def document_links(names: NameIndex, path: str, text: str) -> dict[str, Target]:
    """Every name a rendered document's API roles and autodoc directives give that names a symbol."""
    from generator.markup.rst import xref_targets

    found = {name: names.lookup(name, path) for name in xref_targets(text)}
    return {name: target for name, target in found.items() if target is not None}


def is_rendered_document(f: FileFacts) -> bool:
    """A documentation file whose page shows it rendered: reST (what a reader cannot read as typed) and
    Markdown."""
    return f.file.kind == "doc" and f.file.language in ("rst", "markdown")


def repository_reader(facts: Mapping[str, FileFacts],
                      text: Callable[[str], str]) -> Callable[[str], str | None]:
    """A reST include's view of the repository: the text of a file the scan accepted (a text file inside
    the repository: symlinks out, binaries and oversized files never are), None for any other path."""
    def read(path: str) -> str | None:
        return text(path) if path in facts else None

    return read


def document_key(f: FileFacts, text: str, read: Callable[[str], str | None]) -> str:
    """What a rendered document's HTML depends on beyond its own text and links: its language, and the
    files a reST document includes (generator/markup/doc_includes.py)."""
    from generator.markup.doc_includes import includes_key

    language = f.file.language or ""
    return language + ("\x1f" + includes_key(f.path, text, read) if language == "rst" else "")


def document_renderer(f: FileFacts, read: Callable[[str], str | None]) -> DocumentRender:
    """How the document cache renders `f` on a miss: (text, link resolver, symbol resolver) -> HTML."""
    if f.file.language == "markdown":
        from generator.markup.md_html import render_markdown

        return lambda text, link, symbol: render_markdown(text, link, symbol=symbol)
    from generator.markup.rst import render_rst

    return lambda text, link, symbol: render_rst(text, link, symbol=symbol, path=f.path, read=read)


def document_cache(config: Config) -> DocumentCache:
    from generator.markup.doc_html import CACHE_SUBDIR, DocumentCache
    from sourcebook.local_key import local_key

    return DocumentCache(config.out_dir / "cache" / CACHE_SUBDIR, local_key())
