"""The extractive writer and the draft models the LLM writer shares."""

from __future__ import annotations

from generator.analyze.facts import FileFacts, Heading, Import, SourceFile, Symbol
from generator.pages.writer import (
    EntryPoint,
    ExtractiveWriter,
    FileContext,
    FileDraft,
    ModuleContext,
    OverviewContext,
    PageLink,
    PageWriter,
    code_span,
    first_paragraph,
)


def _facts(path: str = "pkg/app.py", docstring: str = "", symbols: list[Symbol] | None = None,
           kind: str = "code", language: str = "python") -> FileFacts:
    return FileFacts(file=SourceFile(path, language, 10, "sha-" + path, kind),  # type: ignore[arg-type]
                     symbols=symbols or [], docstring=docstring, line_count=10)


def _sym(qualname: str, kind: str = "function", parent: str | None = None, public: bool = True) -> Symbol:
    return Symbol(qualname.rsplit(".", 1)[-1], qualname, kind, "pkg/app.py", 1, 2,  # type: ignore[arg-type]
                  f"def {qualname}()", "", parent, public)


def test_extractive_writer_satisfies_the_protocol() -> None:
    writer = ExtractiveWriter()
    assert isinstance(writer, PageWriter)
    assert writer.id.startswith("extractive/1-")  # the version plus a hash of the writer's own code


def test_file_summary_combines_docstring_and_definitions_in_rank_order() -> None:
    facts = _facts(docstring="The app object.\n\nMore detail here.",
                   symbols=[_sym("helper"), _sym("App", "class"), _sym("App.run", "method", "App"),
                            _sym("_private", public=False)])
    ctx = FileContext(facts=facts, page_id="files/pkg/app.py.md", module="pkg",
                      symbol_order=("App", "helper"))
    draft = ExtractiveWriter().file_page(ctx)
    assert draft.summary.startswith("The app object.")
    assert "More detail" not in draft.summary
    assert "1 class (`App`)" in draft.summary
    assert "1 function (`helper`)" in draft.summary
    assert draft.summary.index("class") < draft.summary.index("function")  # most important first
    assert "_private" not in draft.summary
    assert "run" not in draft.summary
    assert draft.written_by == "extracted"


def test_file_summary_without_symbols_or_docstring_names_the_file_kind() -> None:
    draft = ExtractiveWriter().file_page(
        FileContext(facts=_facts("setup.cfg", kind="config", language="ini"), page_id="x", module=""))
    assert draft.summary == "Configuration file (ini), 10 lines."


def test_file_without_symbols_says_what_it_imports() -> None:
    facts = _facts("pkg/__init__.py")
    facts.imports = [Import("pkg/__init__.py", ".app", ("App",)), Import("pkg/__init__.py", ".app", ("run",)),
                     Import("pkg/__init__.py", "os")]
    draft = ExtractiveWriter().file_page(FileContext(facts=facts, page_id="x", module="pkg"))
    assert draft.summary == "Source file (python), 10 lines. It imports `.app` and `os`."


def test_doc_file_summary_lists_sections() -> None:
    facts = _facts("README.md", docstring="A tool.", kind="doc", language="markdown")
    facts.title = "Tool"
    facts.headings = [Heading(1, "Tool", 1), Heading(2, "Install", 3), Heading(3, "Deep", 5)]
    draft = ExtractiveWriter().file_page(FileContext(facts=facts, page_id="x", module=""))
    assert draft.summary == "A tool. Sections: `Install`."


def test_module_and_overview_summaries() -> None:
    writer = ExtractiveWriter()
    ctx = ModuleContext(path="pkg", page_id="modules/pkg/index.md", title="pkg",
                        files=(PageLink("pkg/__init__.py", "f1", "__init__.py", "The package."),
                               PageLink("pkg/app.py", "f2", "app.py", "It defines 1 class (`App`).")),
                        entry_points=(EntryPoint("pkg/app.py", "App", "class", "class App"),))
    draft = writer.module_page(ctx)
    assert draft.summary == "The package. `pkg/` contains 2 files. Main entry points: `App`."
    over = writer.overview(OverviewContext(repo_name="r", readme="# R\n\n[![b](x)](y)\n\nR does things.\n",
                                           languages=(("python", 3),), file_count=3, symbol_count=7))
    # the home page shows the README's opening right below the summary: it is not repeated in the lead
    assert over.summary == "The repository has 3 files and 7 symbols in python (3)."
    described = writer.overview(OverviewContext(repo_name="r", readme="# R\n\nR does things.\n",
                                                description="A library that does **things**.",
                                                languages=(("python", 3),), file_count=3, symbol_count=7))
    assert described.summary.startswith("A library that does things. The repository has 3 files")


def test_draft_provenance_is_hidden_from_the_llm_schema() -> None:
    schema = FileDraft.model_json_schema()
    assert "written_by" not in schema["properties"]
    assert "fallback" not in schema["properties"]
    assert {"summary", "purpose", "how_it_works", "key_symbols", "relationships", "caveats"} <= set(
        schema["properties"])


def test_helpers() -> None:
    assert code_span("a`b") == "``a`b``"
    assert code_span("`x`") == "`` `x` ``"
    assert first_paragraph("one\ntwo\n\nthree") == "one two"
    assert first_paragraph("x " * 500, limit=20).endswith("…")


def test_fingerprint_changes_with_inputs_but_not_with_source_text() -> None:
    facts = _facts(symbols=[_sym("f")])
    a = FileContext(facts=facts, page_id="p", module="", source="print(1)")
    b = FileContext(facts=facts, page_id="p", module="", source="print(2)")
    c = FileContext(facts=facts, page_id="p", module="", used_by=(PageLink("x.py", "q", "x.py"),))
    assert a.fingerprint() == b.fingerprint() != c.fingerprint()


def test_module_summary_skips_headings_and_generated_init_summaries() -> None:
    writer = ExtractiveWriter()
    rst = ModuleContext(path="ex", page_id="m", title="ex/", readme="Flaskr\n======\n\nThe basic blog app.\n")
    assert writer.module_page(rst).summary.startswith("The basic blog app.")
    md = ModuleContext(path="s", page_id="m", title="s/", readme="# Sansio\n\nNo I/O [here][ref].\n")
    assert writer.module_page(md).summary.startswith("No I/O here.")
    init = PageLink("p/__init__.py", "f", "__init__.py", "Source file (python), 39 lines.")
    bare = ModuleContext(path="p", page_id="m", title="p/", files=(init,))
    assert writer.module_page(bare).summary == "`p/` contains 1 file."
    documented = PageLink("p/__init__.py", "f", "__init__.py", "Helpers. It defines 1 function (`f`).")
    assert writer.module_page(ModuleContext(path="p", page_id="m", title="p/", files=(documented,))).summary \
        == "Helpers. `p/` contains 1 file."
