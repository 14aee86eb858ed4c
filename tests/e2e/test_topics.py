"""Topic pages (generator/pages/topics.py, generator/pages/llm/topics.py): an Architecture page and "How it
works" flows
planned from the graph, LLM-written with validated sources; none without a model (the extractive draft is
the outline a small model fills part by part, and a failed model page's fallback)."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from pydantic import ValidationError

from generator.analyze.analysis import analyze
from generator.analyze.plan import load_state
from generator.build import build
from generator.pages.diagrams import NATURAL_SIZE
from generator.pages.llm.drafts import Catalog, Known, LLMTopicDraft
from generator.pages.llm.writer import LLMWriter
from generator.pages.topic_stage import topic_contexts
from generator.pages.topics import extractive_topic, flow_diagram
from sourcebook.config import Config, load_config
from sourcebook.provider import OpenAIChatModel
from tests.support.browser import CHROMIUM, MERMAID_CDN, mermaid_svg_texts, new_tab, open_page, svg_links
from tests.support.fake_llm import FakeLLM, Reply, page_writer_responder, request_schema_name, request_text
from tests.support.servers import static_site

TOKEN = "ghp_" + "R2d2C3poBb8Ewokz7Yoda4Luke9Han0Solo1Lei"  # a GitHub token shape the redaction rules know
REPO: dict[str, str | bytes] = {
    "README.md": "# Demo\n\nDemo serves requests.\n",
    "pyproject.toml": '[project]\nname = "demo"\n[project.scripts]\ndemo = "pkg.cli:main"\n',
    "pkg/__init__.py": '"""The demo package."""\n',
    "pkg/cli.py": ('"""Command line."""\nfrom .app import serve\n\n\ndef main():\n'
                   '    """Start the demo server."""\n    return serve(8000)\n'),
    "pkg/app.py": ('"""The application."""\nfrom .util import parse, render\n\n\ndef serve(port):\n'
                   '    """Serve requests forever."""\n    return handle(port)\n\n\ndef handle(req):\n'
                   '    """Handle one request."""\n    data = parse(req)\n    return render(data)\n'),
    "pkg/util.py": ('"""Helpers."""\n\n\ndef parse(raw):\n    """Parse a raw request."""\n'
                    f'    token = "{TOKEN}"\n    return raw, token\n\n\ndef render(data):\n'
                    '    """Render a response."""\n    return str(data)\n'),
    "tests/test_app.py": "from pkg.app import serve\n\n\ndef test_serve():\n    assert serve(1)\n",
}


def _topics(root: Path) -> list[Any]:
    config = load_config(root)
    analysis = analyze(config, save_cache=False)
    return topic_contexts(config, analysis.plan, analysis.facts, analysis.graph, {})


def test_a_flow_topic_follows_the_entry_point_through_the_calls(make_repo: Callable[..., Path]) -> None:
    topics = _topics(make_repo(REPO))
    assert [t.page_id for t in topics] == ["topics/architecture.md", "topics/how-demo-runs.md"]
    flow = topics[1]
    assert [s.qualname for s in flow.steps] == ["main", "serve", "handle", "parse", "render"]
    assert flow.steps[0].cite == "pkg/cli.py:5-7"
    assert [s.depth for s in flow.steps] == [0, 1, 2, 3, 3]
    assert (0, 1) in flow.calls
    assert (2, 3) in flow.calls
    assert (2, 4) in flow.calls
    assert all(not s.path.startswith("tests/") for s in flow.steps)  # tests call the code, they are no step

    draft = extractive_topic(flow)
    assert "`main`" in draft.summary
    assert "how `demo` starts" in draft.summary
    assert [s.heading for s in draft.sections] == ["In pkg/cli.py", "In pkg/app.py", "In pkg/util.py"]
    app = draft.sections[1]
    assert "`handle` (Handle one request) calls `parse`, `render`." in app.body
    assert app.sources == ["pkg/app.py:5-7", "pkg/app.py:10-13"]

    diagram = flow_diagram(flow, lambda path, qualname: f"../files/{path}.md#{qualname}")
    text = diagram.mermaid() if diagram else ""
    assert text.startswith(NATURAL_SIZE + "\ngraph TD")
    assert 'subgraph c0["pkg/app.py"]' in text
    assert 'click s0 href "../files/pkg/cli.py.html#main"' in text

    arch = extractive_topic(topics[0])
    headings = [s.heading for s in arch.sections]
    assert headings[0] == "pkg/"
    assert "How it is started" in headings
    started = arch.sections[headings.index("How it is started")]
    assert started.sources == ["pkg/cli.py:5-7"]
    assert all(s.sources for s in arch.sections)


CATALOG = Catalog(lines={"pkg/app.py": 13, "pkg/util.py": 12}, named={"handle": "pkg/app.py:10-13"})


def _draft(sections: list[dict[str, Any]]) -> LLMTopicDraft:
    return LLMTopicDraft.model_validate(
        {"summary": "Requests pass from `serve` to `handle`, which parses and renders them.",
         "sections": sections},
        context={"known": Known.build(paths=["pkg/app.py", "pkg/util.py"]), "catalog": CATALOG})


def test_topic_citations_are_checked_against_the_facts() -> None:
    draft = _draft([
        {"heading": "Handling", "body": "The handler parses the request and renders the answer.",
         "sources": ["pkg/app.py:10-13", "pkg/app.py:10-99", "pkg/nowhere.py:1-2", "`handle`",
                     "../etc/passwd"]},
        {"heading": "Invented", "body": "This section cites nothing the repository holds at all.",
         "sources": ["pkg/ghost.py:1-5"]},
        {"heading": "Whole file", "body": "The helpers module holds parsing and rendering.",
         "sources": ["pkg/util.py"]},
    ])
    assert [s.heading for s in draft.sections] == ["Handling", "Whole file"]
    assert draft.sections[0].sources == ["pkg/app.py:10-13"]  # the symbol's name resolved to its span
    assert draft.sections[1].sources == ["pkg/util.py:1-12"]
    assert any("outside pkg/app.py" in d for d in draft.dropped)
    assert any("no valid source" in d for d in draft.dropped)
    with pytest.raises(ValidationError, match="no section has a valid source"):
        _draft([{"heading": "Made up", "body": "Everything here cites files that do not exist.",
                 "sources": ["pkg/ghost.py:1-2"]}])


def test_topic_pages_are_written_by_a_model_or_not_at_all(make_repo: Callable[..., Path],
                                                          fake_llm: FakeLLM) -> None:
    root = make_repo(REPO)
    out = root / ".sourcebook"
    assert build(load_config(root), index=False).site_built  # no model: no topic pages, no links to them
    assert not (out / "docs/topics").exists()
    assert "## Read next" not in (out / "docs/index.md").read_text()
    assert "Architecture" not in (out / "mkdocs.yml").read_text()
    assert build(load_config(root), check=True).stale == []  # --check agrees: nothing is missing

    fake_llm.responder = page_writer_responder
    config = _configure(root, fake_llm)
    writer = LLMWriter(OpenAIChatModel(config.llm), repo_name="demo", concurrency=1)
    report = build(config, writer=writer, index=False)
    assert report.site_built  # mkdocs build --strict over the model-written topic pages
    assert load_state(config.out_dir)["topics/how-demo-runs.md"].written_by == "llm"
    flow = (out / "docs/topics/how-demo-runs.md").read_text()
    assert "```mermaid" in flow
    assert re.search(r"\*Sources:\* \[pkg/\w+\.py:\d+-\d+\]\(\.\./files/pkg/\w+\.py\.md#sym-\w+\)", flow)
    home = (out / "docs/index.md").read_text()
    assert "## Read next" in home
    assert "- [How demo runs](topics/how-demo-runs.md): " in home
    yml = (out / "mkdocs.yml").read_text()
    assert '{"Architecture": "topics/architecture.md"}, {"How it works": [{"How demo runs": ' in yml
    page = (out / "site/topics/how-demo-runs.html").read_text()
    assert 'class="mermaid"' in page
    for href in re.findall(r'href="(\.\./files/[^"#]+)', page):  # every source link lands on a built page
        assert (out / "site/topics" / href).resolve().is_file(), href
    again = build(config, writer=writer, index=False)
    assert again.pages_written == []
    assert build(config, writer=writer, check=True).stale == []  # --check agrees: topic pages are current
    util = root / "pkg/util.py"
    util.write_text(util.read_text().replace("def render(data):", "def render(data, pretty=False):"))
    stale = build(config, writer=writer, check=True).stale
    assert "topics/how-demo-runs.md" in stale  # its evidence (a signature on the flow) changed
    assert build(load_config(root), index=False).site_built  # back without a model: the topic pages go
    assert not list((out / "docs").glob("topics/*.md"))
    assert not (out / "site/topics/how-demo-runs.html").exists()


def test_dry_run_estimates_topic_pages_without_calling(make_repo: Callable[..., Path],
                                                       fake_llm: FakeLLM) -> None:
    from generator.build_llm import estimate_run

    config = _configure(make_repo(REPO), fake_llm)
    writer = LLMWriter(OpenAIChatModel(config.llm), repo_name="demo", concurrency=1)
    est = estimate_run(config, writer)
    assert est.pages["topic"] == 2
    assert {"topics/architecture.md", "topics/how-demo-runs.md"} <= set(est.stale)
    assert fake_llm.calls == 0


def _configure(root: Path, server: FakeLLM) -> Config:
    env = {"SOURCEBOOK_LLM_BASE_URL": server.base_url, "SOURCEBOOK_LLM_MODEL": "fake"}
    settings = {"retry_base_s": 0.01, "max_retries": 1, "max_reasks": 1, "concurrency": 1}
    return load_config(root, overrides={"llm": settings}, env=env)


def test_llm_topics_survive_bad_replies_and_cite_only_real_sources(make_repo: Callable[..., Path],
                                                                    fake_llm: FakeLLM) -> None:
    """Architecture: malformed JSON first, then a draft with one invented citation (dropped). The flow: a 500,
    then only invented citations on every ask, then filler when its summary is asked alone: it falls back to
    its extractive page, marked for retry."""
    asked: dict[str, int] = {"arch": 0, "flow": 0}

    def responder(body: dict[str, Any]) -> Reply:
        if request_schema_name(body) == "TopicPartOnly":
            return Reply.ok({"explanation": "N/A"})
        if request_schema_name(body) != "LLMTopicDraft":
            return page_writer_responder(body)
        text = request_text(body)
        kind = "arch" if '"Architecture" page' in text else "flow"
        asked[kind] += 1
        if kind == "arch":
            if asked[kind] == 1:
                return Reply.malformed('{"summary": "cut short')
            return Reply.ok({"summary": "The demo is a command that serves requests through `pkg/app.py`.",
                             "sections": [{"heading": "Serving", "body": "The app module serves and handles "
                                           "each request with the helpers.",
                                           "sources": ["pkg/app.py:5-7", "pkg/app.py:400-410"]}]})
        if asked[kind] == 1:
            return Reply.status(500)
        return Reply.ok({"summary": "Running the demo starts the server loop.", "sections": [
            {"heading": "Invented", "body": "It reads a config file that the code does not have.",
             "sources": ["pkg/config.py:1-9"]}]})

    fake_llm.responder = responder
    root = make_repo(REPO)
    config = _configure(root, fake_llm)
    writer = LLMWriter(OpenAIChatModel(config.llm), repo_name="demo", concurrency=1)
    report = build(config, writer=writer, index=False)
    assert report.site_built  # the real mkdocs build --strict, over model-written topic pages
    state = load_state(config.out_dir)
    arch, flow = state["topics/architecture.md"], state["topics/how-demo-runs.md"]
    assert arch.written_by == "llm"
    assert not arch.retry
    page = (config.docs_dir / "topics/architecture.md").read_text()
    assert "## Serving" in page
    assert "[pkg/app.py:5-7](../files/pkg/app.py.md#sym-serve)" in page
    assert "400-410" not in page  # the invented lines were dropped, not linked
    # one small package: the home page's diagram drawn file by file, here too, each file a link
    assert "## Files\n\nThe main package file by file" in page
    assert re.search(r'click f\d+ href "../files/pkg/app.py.html"', page)
    assert flow.written_by == "extracted"
    assert flow.retry
    assert "topics/how-demo-runs.md" in report.write_failures
    assert "In pkg/util.py" in (config.docs_dir / "topics/how-demo-runs.md").read_text()
    assert asked["flow"] >= 3  # the 500 was retried, the invalid draft re-asked
    sent = fake_llm.all_text()
    assert "def parse(raw)" in sent  # the flow's source excerpts reached the model...
    assert TOKEN not in sent  # ...through the one redaction function
    pages = {p.label: p for p in writer.chat.ledger.pages}  # the ledger counts topic pages like any page
    assert pages["topic:topics/architecture.md"].outcome == "llm"
    assert pages["topic:topics/architecture.md"].rejected >= 1  # the invented citation
    assert pages["topic:topics/how-demo-runs.md"].outcome == "fallback"
    assert any(request_schema_name(b) == "TopicPartOnly" for b in fake_llm.requests)  # tried part by part


def test_a_small_model_writes_topic_pages_part_by_part(make_repo: Callable[..., Path],
                                                       fake_llm: FakeLLM) -> None:
    """What Qwen2.5-Coder-0.5B does: every whole topic draft fails (no section cites a listed source).
    The page is then written part by part over the extractive outline: the summary, then each section's
    explanation in its own call with the code it cites; headings and sources come from the analysis,
    checked against the catalog; a section whose explanation is refused keeps its extractive text."""

    def responder(body: dict[str, Any]) -> Reply:
        name, text = request_schema_name(body), request_text(body)
        if name == "LLMTopicDraft":
            return Reply.ok({"summary": "The demo serves requests.", "sections": [
                {"heading": "Serving", "body": "It serves each request it gets.",
                 "sources": ["main.py:1-3"]}]})
        if name == "TopicPartOnly":
            if 'the part "In pkg/util.py"' in text:
                return Reply.ok({"explanation": "In pkg/util.py."})  # restates its heading: refused
            part = re.search(r'the part "([^"]+)"', text)
            return Reply.ok({"explanation": f"Here `serve` hands each request to `handle`, for "
                                            f"{part.group(1) if part else 'the page'}.\","})
        return page_writer_responder(body)

    fake_llm.responder = responder
    root = make_repo(REPO)
    config = _configure(root, fake_llm)
    writer = LLMWriter(OpenAIChatModel(config.llm), repo_name="demo", concurrency=1)
    report = build(config, writer=writer, index=False)
    assert report.site_built
    state = load_state(config.out_dir)
    flow = state["topics/how-demo-runs.md"]
    assert (flow.written_by, flow.retry) == ("llm", False)
    page = (config.docs_dir / "topics/how-demo-runs.md").read_text()
    assert "`serve` hands each request to `handle`, for the page." in page  # the summary, residue cleaned
    assert "## In pkg/app.py" in page
    assert "`serve` hands each request to `handle`, for In pkg/app.py." in page
    assert "[pkg/app.py:5-7](../files/pkg/app.py.md#sym-serve)" in page  # its sources, checked and linked
    util = page.split("## In pkg/util.py", 1)[1]
    assert "Parse a raw request" in util  # the refused explanation: its extractive text is kept
    parts = [request_text(b) for b in fake_llm.requests if request_schema_name(b) == "TopicPartOnly"]
    app_part = next(t for t in parts if 'the part "In pkg/app.py"' in t)
    assert "def handle(req)" in app_part  # the code the section cites ...
    assert "def render(data)" not in app_part  # ... and not the rest of the flow
    assert TOKEN not in fake_llm.all_text()
    assert {b["max_tokens"] for b in fake_llm.requests if request_schema_name(b) == "TopicPartOnly"} == {300}
    pages = {p.label: p for p in writer.chat.ledger.pages}
    assert pages["topic:topics/how-demo-runs.md"].outcome == "llm"
    flow_calls = [b for b in fake_llm.requests if request_schema_name(b) == "TopicPartOnly"
                  and len(b["messages"]) == 1 and "How demo runs" in request_text(b)]  # re-asks excluded
    assert pages["topic:topics/how-demo-runs.md"].single_calls == len(flow_calls) == 1 + 3  # summary + files
    assert pages["topic:topics/how-demo-runs.md"].rejected == 1  # pkg/util.py's explanation


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.skipif(not Path(CHROMIUM).exists(), reason="Debian's chromium is not installed")
def test_a_model_written_topic_page_in_the_browser(browser: str, make_repo: Callable[..., Path],
                                                    fake_llm: FakeLLM) -> None:
    """The flow diagram renders (its boxes link to the symbols' sections), the page fits 1280 px, and the
    console stays clean."""
    fake_llm.responder = page_writer_responder
    root = make_repo(REPO)
    config = _configure(root, fake_llm)
    report = build(config, writer=LLMWriter(OpenAIChatModel(config.llm), repo_name="demo", concurrency=1),
                   index=False)
    assert report.site_dir is not None
    with static_site(report.site_dir) as url:
        tools = new_tab(browser, width=1280)
        try:
            open_page(tools, url + "topics/how-demo-runs.html")
            assert "Sources:" in tools.evaluate("document.querySelector('.md-content').innerText")
            if not MERMAID_CDN:
                assert mermaid_svg_texts(tools)
                assert "../files/pkg/cli.py.html#sym-main" in svg_links(tools)
            assert tools.evaluate(
                "document.documentElement.scrollWidth - document.documentElement.clientWidth") <= 0
            assert tools.errors(allow_urls=MERMAID_CDN) == []
            open_page(tools, url + "topics/architecture.html")  # the package drawn file by file
            if not MERMAID_CDN:
                assert "app.py" in " ".join(mermaid_svg_texts(tools))
                assert "../files/pkg/app.py.html" in svg_links(tools)
            assert tools.errors(allow_urls=MERMAID_CDN) == []
        finally:
            tools.close()


def test_topic_sections_whose_claims_the_code_contradicts_are_dropped_or_sent_back(
        make_repo: Callable[..., Path], fake_llm: FakeLLM) -> None:
    """"How it works" claims are checked like answers' (sourcebook/claims.py against the evidence's code):
    a section saying `render` has a `pretty` parameter defaulting to True (it has no such parameter) or that
    `handle` calls `dispatch` (its body never does) is dropped; the true section is published. A part asked
    alone that contradicts the code is sent back, and keeps its extractive text when it stays false."""
    def responder(body: dict[str, Any]) -> Reply:
        text = request_text(body)
        if request_schema_name(body) == "TopicPartOnly":
            if 'You are explaining the part "' not in text:  # the summary: true
                return Reply.ok({"explanation": "Running the demo starts `serve`, which hands each request "
                                                "to `handle`."})
            return Reply.ok({"explanation": "Here the `pretty` parameter of `render` defaults to `True`, "
                                            "so each response is indented."})
        if request_schema_name(body) != "LLMTopicDraft" or '"Architecture" page' in text:
            return page_writer_responder(body)
        cites = dict(re.findall(r"^- \[(\S+:\d+-\d+)\] (\S+)", text, re.M))
        by_name = {v: k for k, v in cites.items()}
        sections = [
            {"heading": "Serving", "body": "`serve` calls `handle` with the port it is given.",
             "sources": [by_name["serve"]]},
            {"heading": "Rendering", "body": "The `pretty` parameter of `render` defaults to `True`, so "
             "responses are indented.", "sources": [by_name["render"]]},
            {"heading": "Dispatch", "body": "`handle` calls `dispatch` to route the parsed request.",
             "sources": [by_name["handle"]]}]
        return Reply.ok({"summary": "Running the demo starts `serve`, which hands each request to `handle`.",
                         "sections": sections})

    fake_llm.responder = responder
    root = make_repo(REPO)
    config = _configure(root, fake_llm)
    writer = LLMWriter(OpenAIChatModel(config.llm), repo_name="demo", concurrency=1)
    assert build(config, writer=writer, index=False).site_built
    flow = (config.docs_dir / "topics/how-demo-runs.md").read_text()
    assert "## Serving" in flow
    assert "`serve` calls `handle`" in flow
    assert "## Rendering" not in flow
    assert "pretty" not in flow
    assert "## Dispatch" not in flow
    assert "dispatch" not in flow
    assert writer.chat.ledger.pages
    assert any(
        p.label == "topic:topics/how-demo-runs.md" and p.rejected >= 2 for p in writer.chat.ledger.pages)

    # part by part (the small-model path): each false part is re-asked, then keeps its extractive text
    from generator.pages.llm.topics import catalog_of, code_facts, write_topic_alone
    from generator.pages.topics import bodies, excerpts

    ctx = next(t for t in _topics(root) if t.kind == "flow")

    def text_of(path: str) -> str:
        return (root / path).read_text()

    ctx = dataclasses.replace(ctx, line_counts={p: len(text_of(p).splitlines())
                                                for p in {s.path for s in ctx.evidence()}})
    ctx = dataclasses.replace(ctx, excerpts=excerpts(ctx, text_of), bodies=bodies(ctx, text_of))
    assert {f.name for f in code_facts(ctx)} >= {"serve", "handle", "render"}
    before = len(fake_llm.requests)
    draft = write_topic_alone(writer, ctx, catalog_of(ctx.line_counts, ctx))
    assert draft.summary.startswith("Running the demo starts `serve`")
    outline = extractive_topic(ctx).sections
    assert [s.body for s in draft.sections] == [s.body for s in outline[:len(draft.sections)]]
    assert not any("pretty" in s.body for s in draft.sections)
    asked = [b for b in fake_llm.requests[before:] if request_schema_name(b) == "TopicPartOnly"]
    reasks = [b for b in asked if "states what the code does not" in request_text(b)]
    assert len(reasks) == len(draft.sections) >= 1  # each section sent back once (max_reasks=1)


OVERLOADED: dict[str, str | bytes] = {
    "README.md": "# Term\n\nTerminal helpers.\n",
    "pkg/__init__.py": '"""Terminal helpers."""\n',
    "pkg/term.py": ('"""Prompting."""\nimport sys\n\n\ndef _fmt(text):\n    return text + ": "\n\n\n'
                    'def _read(shown, hide):\n    return _strip(input(shown))\n\n\n'
                    'def _strip(value):\n    return value.strip()\n\n\n'
                    'def _check(value):\n    return _strip(value) or None\n\n\n'
                    'if sys.platform == "win32":\n    def prompt(text):\n        """Ask on Windows."""\n'
                    '        return input(text)\nelse:\n    def prompt(text, hide=False):\n'
                    '        """Ask for a value."""\n        shown = _fmt(text)\n'
                    '        value = _read(shown, hide)\n        return _check(value)\n'),
    **{f"pkg/use{i}.py": f'"""User {i}."""\nfrom .term import prompt\n\n\ndef ask{i}():\n'
                         f'    return prompt("name {i}")\n' for i in range(3)},
}


def test_overload_indexes_never_reach_titles_prose_or_nav(make_repo: Callable[..., Path],
                                                         fake_llm: FakeLLM) -> None:
    """parse.py names a name's second definition `prompt~2`: a reader never sees the `~2` (issue 27: the
    title "How prompt~3 works"), neither in a topic's title, nav, extractive text, diagram nor the prompt
    the model is shown, nor in model prose that copies it."""
    root = make_repo(OVERLOADED)
    qualnames = {s.qualname for t in _topics(root) for s in t.evidence()}
    assert "prompt~2" in qualnames  # the analysis keeps both definitions apart

    def responder(body: dict[str, Any]) -> Reply:
        if request_schema_name(body) == "LLMTopicDraft":
            cites = re.findall(r"^- \[(\S+:\d+-\d+)\]", request_text(body), re.M)
            return Reply.ok({"summary": "`prompt~2` asks for a value and checks it with `_check`.",
                             "sections": [{"heading": "How prompt~2 asks", "body": "`prompt~2` formats the "
                                           "text, reads the reply and checks it.", "sources": cites[:1]}]})
        return page_writer_responder(body)

    fake_llm.responder = responder
    config = _configure(root, fake_llm)
    writer = LLMWriter(OpenAIChatModel(config.llm), repo_name="term", concurrency=1)
    assert build(config, writer=writer, index=False).site_built
    pages = sorted((config.docs_dir / "topics").glob("*.md"))
    assert any(p.name == "how-prompt-works.md" for p in pages), pages
    for path in [*config.docs_dir.rglob("*.md"), config.out_dir / "mkdocs.yml"]:
        assert not re.search(r"[A-Za-z_]~\d", path.read_text()), path
    sent = "\n".join(request_text(b) for b in fake_llm.requests if request_schema_name(b) == "LLMTopicDraft")
    assert sent
    assert not re.search(r"\] prompt~\d", sent)  # the evidence lists the name a reader sees
    state = load_state(config.out_dir)
    assert all("~" not in s.title for s in state.values())
