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
from typing import TYPE_CHECKING, Any

from generator.analyze.facts import FileFacts, Symbol
from generator.analyze.plan import PageState, draft_key, page_key
from generator.pages.constructors import package_builders
from generator.pages.contexts import file_context
from generator.pages.stages import PageRun, _map, _readme_resolver, _safely, _source_text
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
                    builders: Sequence[Symbol] = ()) -> str:
    """The rendering part of a file page's key: a new commit (links), a new caller (refs), a docstring
    name now naming another section (doc_links) or a file a document includes changing (`document`:
    document_key) re-renders the page from its stored draft; none is part of the draft key, so no prose is
    rewritten. With doc_links in the key a page never keeps a link to a page that is gone."""
    docs = repr(sorted((doc_links or {}).items()))
    built = repr([(s.path, s.qualname, s.signature) for s in builders])  # `builders`: package_builders
    return "\x1f".join([base, links.key() if links else "", refs.key(), docs, document, built])


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


def write_file_pages(run: PageRun) -> None:
    from generator.pages.name_links import NameIndex, page_resolver
    from generator.pages.render_markdown import relative_link, render_file_page, render_version
    from sourcebook.workers import ordered_map

    config, plan, facts, graph, texts, writer, pages, notify = (
        run.config, run.plan, run.facts, run.graph, run.texts, run.writer, run.pages, run.notify)

    version = render_version()
    links, xref = file_render_inputs(config, facts, graph)
    index = run.symbols
    extractive = ExtractiveWriter()
    names = NameIndex.build(facts, plan.files)
    doc_links: dict[str, dict[str, Target]] = {}
    todo = []

    def source_text(path: str) -> str:
        return _source_text(config.root, texts, path)

    documents = document_cache(config)
    read = repository_reader(facts, source_text)
    doc_keys: dict[str, str] = {}
    builders = package_builders(facts)
    for path in sorted(facts):
        ctx = file_context(facts[path], plan, graph)
        refs = xref.file_refs(facts[path])
        doc_links[path] = page_links(names, facts[path], source_text, read)
        if is_rendered_document(facts[path]):
            doc_keys[path] = document_key(facts[path], source_text(path), read)
            # an unchanged doc's page is not re-rendered: its entry stays
            documents.keep(source_text(path), doc_keys[path])
        fingerprint = ctx.fingerprint()  # once: it writes out every symbol (3% of a cold files stage)
        key = page_key(fingerprint, writer.id, file_render_key(version, links, refs, doc_links[path],
                                                               doc_keys.get(path, ""),
                                                               builders=builders.get(path, ())))
        if not pages.fresh(ctx.page_id, key):
            # a file page's draft key is also its stable key (plan.stable_key): what its prose was about
            todo.append((ctx, key, refs, draft_key(fingerprint, writer.id)))
    notify("files", 0, len(todo))

    # the extractive writer's drafts are made where the page is rendered (a forked worker too): it is
    # deterministic and reads only the page's context; a model's are asked here, its threads in this process
    local = drafts_where_rendered(writer)

    def write(item: tuple[Any, str, FileRefs, str]) -> tuple[FileDraft, dict[str, str]] | None:
        """(draft, generated docstrings): the draft re-used from the state when only the rendering changed;
        None when the render makes it (`local`)."""
        ctx, dkey = item[0], item[3]
        stored = pages.stored(ctx.page_id, dkey, FileDraft)
        if stored is not None:
            return stored[0], dict(stored[1].docstrings)
        earlier = pages.model_draft(ctx.page_id, dkey, FileDraft)
        if earlier is not None:
            notes = pages.state[ctx.page_id].llm_draft.get("docstrings") or []
            return earlier, {str(n["qualname"]): str(n["explanation"]) for n in notes}
        if local:
            return None
        # the source is no part of the fingerprint
        ctx = dataclasses.replace(ctx, source=source_text(ctx.path))
        draft = _safely(writer.file_page, extractive.file_page, ctx, ctx.page_id, pages.report)
        if draft.fallback:
            kept = pages.settle(ctx.page_id, draft, FileDraft, dkey, dkey)
            if kept is not draft:
                notes = pages.state[ctx.page_id].llm_draft.get("docstrings") or []
                return kept, {str(n["qualname"]): str(n["explanation"]) for n in notes}
        return draft, generated_docstrings(draft)

    made: dict[int, tuple[FileDraft, dict[str, str]]] = {}  # drafts handed to render, until their page is put

    def drafts() -> Iterator[tuple[int, FileDraft | None, dict[str, str]]]:
        for n, written in enumerate(_map(write, todo, writer.concurrency, lambda item: item[0].path)):
            if written is None:
                yield n, None, {}
            else:
                made[n] = written
                yield n, *written

    def render(item: tuple[int, FileDraft | None, dict[str, str]]
               ) -> tuple[int, str, tuple[FileDraft, dict[str, str]] | None]:
        """(n, "hit"/"miss" of its reST document in the cache or "", the draft made here if any): run by
        this process or a forked worker (workers.py), which inherits all it reads and writes the page's
        Markdown itself (only its row is kept here)."""
        n, draft, generated = item
        ctx, _key, refs, _dkey = todo[n]
        text = source_text(ctx.path)
        made_here = None
        if draft is None:  # the local writer's, as `write` above would have made it
            draft = writer.file_page(dataclasses.replace(ctx, source=text))
            generated = generated_docstrings(draft)
            made_here = (draft, generated)
        # generated docstrings are shown (marked as generated) on the page only; the key stays on the facts
        shown = dataclasses.replace(ctx, facts=apply_docstrings(ctx.facts, generated), source=text)
        resolve = page_resolver(names, ctx.path, ctx.page_id, doc_links[ctx.path], relative_link)
        document, cached = "", ""
        if is_rendered_document(ctx.facts):
            misses = documents.misses
            paths = line_link_resolver(_readme_resolver(plan, ctx.path, ctx.page_id), ctx.path, ctx.page_id,
                                       doc_links[ctx.path])
            document = documents.render(text, paths, resolve,
                                        salt=doc_keys[ctx.path], render=document_renderer(ctx.facts, read))
            cached = "miss" if documents.misses > misses else "hit"
            document = autodoc_summaries(document, doc_links[ctx.path])
        markdown = render_file_page(shown, draft, writer_id=writer.id, links=links, refs=refs, index=index,
                                    module_page=plan.modules[ctx.module], resolve_symbol=resolve,
                                    document=document, builders=builders.get(ctx.path, ()))
        pages.write_markdown(ctx.page_id, markdown)
        return n, cached, made_here

    def heavy(item: tuple[int, FileDraft | None, dict[str, str]]) -> bool:
        return todo[item[0]][0].facts.file.size > HEAVY_PAGE_BYTES

    tally = {"hit": 0, "miss": 0, "": 0}
    def name(item: tuple[int, FileDraft | None, dict[str, str]]) -> str:
        return f"the page of {todo[item[0]][0].path}"

    for n, cached, made_here in ordered_map(render, drafts(), run.processes, expected=len(todo), heavy=heavy,
                                            describe=name):
        (ctx, key, _refs, dkey), (draft, generated) = todo[n], made_here or made.pop(n)
        tally[cached] += 1
        pages.put(ctx.page_id, key, None, PageState(
            key=key, kind="file", title=posixpath.basename(ctx.path), target_path=ctx.path,
            summary=draft.summary, written_by=draft.written_by, retry=draft.fallback,
            symbols=[s.qualname for s in ctx.facts.symbols], docstrings=generated,
            source_sha=ctx.facts.file.sha),
            dkey=dkey, draft=draft, stable=dkey)
        notify("files", n + 1, len(todo))
    documents.prune()
    if tally["hit"] or tally["miss"]:
        log.info("documents (reST, Markdown): %d rendered, %d from the cache", tally["miss"], tally["hit"])


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
