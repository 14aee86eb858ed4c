"""The pipeline end to end on small repositories: every file gets a page, re-runs are incremental."""

from __future__ import annotations

import html
import re
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from generator.analyze.plan import file_page_ids, load_state
from generator.build import build
from generator.pages.writer import (
    FileContext,
    FileDraft,
    ModuleContext,
    ModuleDraft,
    OverviewContext,
    OverviewDraft,
)
from sourcebook.config import load_config
from sourcebook.errors import ProviderError, SiteBuildError

REPO: dict[str, str | bytes] = {
    "README.md": "# Demo\n\nDemo does things.\n",
    "pkg/__init__.py": '"""The package."""\nfrom .core import Engine\n',
    "pkg/core.py": ('"""The engine."""\nfrom .util import helper\n\n\nclass Engine:\n'
                    '    """Runs jobs."""\n\n    def start(self, n: int) -> bool:\n'
                    '        """Start `n` jobs."""\n        return helper(n)\n\n\n'
                    'def make_engine(name: str = "e") -> Engine:\n'
                    '    """Build one."""\n    return Engine()\n'),
    "pkg/util.py": 'def helper(x):\n    """Help."""\n    return x\n\n\ndef _hidden():\n    pass\n',
    "web/app.js": "/** App. */\nexport function mount(el) { return el; }\n",
    "web/lib/dom.ts": "export class Dom {\n  render(): void {}\n}\n",
    "docs/guide.md": "# Guide\n\n## Setup\n\nText.\n",
    "setup.cfg": "[metadata]\nname = demo\n",
    "bad.py": "def broken(:\n    pass\n",
    "blob.bin": b"\x00\x01\x02" * 100,
    "odd/empty.py": "",
    "odd/crlf.py": b"\xef\xbb\xbfdef crlf_fn():\r\n    \"\"\"Windows doc.\"\"\"\r\n    return 1\r\n",
    "odd/latin1.py": b"# caf\xe9\ndef latin_fn():\n    pass\n",
}


def _build(root: Path, **kwargs: object):  # type: ignore[no-untyped-def]
    return build(load_config(root), site=False, index=False, **kwargs)  # type: ignore[arg-type]


def test_every_file_has_a_page_with_its_public_symbols(make_repo: Callable[..., Path]) -> None:
    root = make_repo(REPO)
    report = _build(root)
    docs = root / ".sourcebook" / "docs"
    scanned = sorted(p for p in REPO if p != "blob.bin")
    assert report.files == len(scanned)
    assert [s.path for s in report.skipped] == ["blob.bin"]
    ids = file_page_ids(scanned)
    for path in scanned:
        assert (docs / ids[path]).is_file(), path
    core = (docs / ids["pkg/core.py"]).read_text()
    shown = html.unescape(re.sub(r"<[^>]+>", "", core))  # signatures are highlighted HTML blocks
    for signature in ("class Engine", "def start(self, n: int) -> bool",
                      'def make_engine(name: str = "e") -> Engine'):
        assert signature in shown
    assert "[pkg/util.py](util.py.md)" in core  # depends on
    assert "[pkg/&#95;&#95;init&#95;&#95;.py](__init__.py.md)" in core  # used by (`_` escaped in text)
    util = (docs / ids["pkg/util.py"]).read_text()
    assert "helper" in util
    assert "_hidden" not in util.split("## API")[0]  # private symbols stay out of the table
    assert report.warnings >= 1
    assert "## Extraction warnings" in (docs / ids["bad.py"]).read_text()
    for module in ("modules/index.md", "modules/pkg/index.md", "modules/web/index.md",
                   "modules/web/lib/index.md", "modules/docs/index.md", "modules/odd/index.md"):
        assert (docs / module).is_file(), module
    assert ">crlf_fn</span>" in (docs / ids["odd/crlf.py"]).read_text()  # BOM + CRLF
    assert "Windows doc." in (docs / ids["odd/crlf.py"]).read_text()
    assert ">latin_fn</span>" in (docs / ids["odd/latin1.py"]).read_text()  # invalid UTF-8
    assert "Source file (python)" in (docs / ids["odd/empty.py"]).read_text()
    overview = (docs / "index.md").read_text()
    assert "Demo does things." in overview
    # files, 6 modules and the overview (topic pages need a model)
    assert len(report.pages_written) == report.pages_total == len(scanned) + 6 + 1
    assert not (docs / "topics").exists()


def test_rerun_rewrites_nothing_and_reparses_nothing(make_repo: Callable[..., Path]) -> None:
    root = make_repo(REPO)
    _build(root)
    docs = root / ".sourcebook" / "docs"
    mtimes = {p: p.stat().st_mtime_ns for p in docs.rglob("*.md")}
    again = _build(root)
    assert again.pages_written == []
    assert again.parsed == 0
    assert again.parse_cached == again.files
    assert again.pages_unchanged == again.pages_total
    assert {p: p.stat().st_mtime_ns for p in docs.rglob("*.md")} == mtimes


def test_one_changed_file_rewrites_only_what_depends_on_it(make_repo: Callable[..., Path]) -> None:
    root = make_repo(REPO)
    _build(root)
    # a new docstring changes util's own page and its summary, hence its module's page and the overview's
    # "most important files" table; nothing in web/ or docs/ may change
    (root / "pkg/util.py").write_text('"""Small helpers."""\n' + str(REPO["pkg/util.py"]))
    report = _build(root)
    assert report.parsed == 1
    written = set(report.pages_written)
    assert "files/pkg/util.py.md" in written
    assert written <= {"files/pkg/util.py.md", "modules/pkg/index.md", "modules/index.md", "index.md"}
    assert not any(p.startswith(("files/web", "modules/web", "files/docs", "modules/docs")) for p in written)
    assert "Small helpers." in (root / ".sourcebook/docs/files/pkg/util.py.md").read_text()


def test_body_only_change_keeps_module_pages(make_repo: Callable[..., Path]) -> None:
    root = make_repo(REPO)
    _build(root)
    (root / "web/app.js").write_text("/** App. */\nexport function mount(el) { return el || null; }\n")
    report = _build(root)
    assert report.pages_written == ["files/web/app.js.md"]


def test_deleted_file_page_is_removed(make_repo: Callable[..., Path]) -> None:
    root = make_repo(REPO)
    _build(root)
    (root / "web/lib/dom.ts").unlink()
    report = _build(root)
    docs = root / ".sourcebook" / "docs"
    assert set(report.pages_deleted) == {"files/web/lib/dom.ts.md", "modules/web/lib/index.md"}
    assert not (docs / "files/web/lib").exists()
    assert not (docs / "modules/web/lib").exists()
    assert "files/web/lib/dom.ts.md" not in load_state(root / ".sourcebook")


def test_check_lists_stale_pages_without_writing(make_repo: Callable[..., Path]) -> None:
    root = make_repo(REPO)
    first = build(load_config(root), check=True, site=False, index=False)
    assert first.stale  # nothing built yet
    assert not (root / ".sourcebook" / "docs").exists()
    _build(root)
    assert build(load_config(root), check=True, site=False, index=False).stale == []
    (root / "pkg/util.py").write_text("def helper(y):\n    return y\n")
    stale = build(load_config(root), check=True, site=False, index=False).stale
    assert "files/pkg/util.py.md" in stale
    assert "files/web/app.js.md" not in stale


def test_empty_repository_builds(make_repo: Callable[..., Path]) -> None:
    root = make_repo({})
    report = _build(root)
    assert report.files == 0
    assert (root / ".sourcebook/docs/index.md").is_file()
    assert (root / ".sourcebook/docs/modules/index.md").is_file()


def test_hostile_names_never_become_markup_in_the_site(make_repo: Callable[..., Path]) -> None:
    # the repository's directory name is the site name; file and directory names are nav titles, which
    # Material prints as HTML (and the site name inside a double-quoted attribute)
    root = make_repo({
        "pkg/<img src=x onerror=alert(1)>.py": '"""Doc."""\n',
        "<b onclick=alert(2)>/m.py": "def f():\n    pass\n",
        "README.md": "See `x\n<script>alert(3)</script>\ny` here.\n",
    }, name='r" onmouseover="alert(4)<svg onload=alert(5)>')
    report = build(load_config(root), index=False)
    assert report.site_built
    pages = list((root / ".sourcebook/site").rglob("*.html"))
    assert len(pages) >= 5
    for page in pages:
        # <title> is raw text to a browser (Material unescapes it with striptags; no name holds "</")
        text = re.sub(r"<title>(?:(?!</).)*</title>", "", page.read_text(encoding="utf-8"))
        assert not re.search(r"<(img|b|svg|script)\b[^>]*\bon\w+=", text), page
        assert not re.search(r'<[^<>]*" onmouseover=', text), page  # no break-out of an attribute
        assert "<script>alert" not in text, page


class _FlakyWriter:
    """A writer that fails on one page: the build must fall back and retry that page next run."""

    id = "test/1"
    concurrency = 2

    def __init__(self, fail: str) -> None:
        self.fail = fail
        self.calls: list[str] = []

    def file_page(self, ctx: FileContext) -> FileDraft:
        self.calls.append(ctx.path)
        if ctx.path == self.fail:
            raise ProviderError("fake", "down", 503)
        return FileDraft(summary=f"LLM summary of {ctx.path}.", written_by="llm")

    def module_page(self, ctx: ModuleContext) -> ModuleDraft:
        return ModuleDraft(summary="LLM module.", written_by="llm")

    def overview(self, ctx: OverviewContext) -> OverviewDraft:
        return OverviewDraft(summary="LLM overview.", written_by="llm")


def test_writer_failure_falls_back_and_is_retried(make_repo: Callable[..., Path]) -> None:
    root = make_repo({k: v for k, v in REPO.items() if k.startswith("pkg/")})
    writer = _FlakyWriter("pkg/util.py")
    report = _build(root, writer=writer)
    assert report.write_failures == ["files/pkg/util.py.md"]
    docs = root / ".sourcebook" / "docs"
    assert "extracted from the code" in (docs / "files/pkg/util.py.md").read_text()
    assert "written by an LLM" in (docs / "files/pkg/core.py.md").read_text()
    writer.fail = ""
    writer.calls.clear()
    again = _build(root, writer=writer)
    assert writer.calls == ["pkg/util.py"]  # only the failed page is asked for again
    assert "files/pkg/util.py.md" in again.pages_written


def test_interrupted_run_resumes(make_repo: Callable[..., Path]) -> None:
    root = make_repo({k: v for k, v in REPO.items() if k.startswith("pkg/")})

    class Interrupting(_FlakyWriter):
        def file_page(self, ctx: FileContext) -> FileDraft:
            if ctx.path == "pkg/util.py":
                raise KeyboardInterrupt
            return super().file_page(ctx)

    writer = Interrupting("")
    writer.concurrency = 1
    with pytest.raises(KeyboardInterrupt):
        _build(root, writer=writer)
    written_before = set(load_state(root / ".sourcebook"))
    assert "files/pkg/__init__.py.md" in written_before  # saved despite the interrupt
    resumed = _FlakyWriter("")
    _build(root, writer=resumed)
    assert "pkg/__init__.py" not in resumed.calls
    assert "pkg/util.py" in resumed.calls


def test_cli_build_summary_check_and_globs(make_repo: Callable[..., Path], tmp_path: Path) -> None:
    from click.testing import CliRunner

    from sourcebook.cli import cli

    root = make_repo(REPO)
    out = tmp_path / "wiki"
    runner = CliRunner()
    env = {"SOURCEBOOK_LLM_BASE_URL": "", "SOURCEBOOK_LLM_MODEL": "", "OPENAI_API_KEY": "",
           "OPENAI_BASE_URL": ""}
    result = runner.invoke(cli, ["build", str(root), "--out", str(out), "--no-site", "--no-index",
                                 "--exclude", "web/**"], env=env)
    assert result.exit_code == 0, result.output
    assert "Pages" in result.output
    assert "2 excluded by config" in result.output  # skipped files are grouped by reason
    assert str(out / "docs") in "".join(result.output.split())  # where the pages are, wrapped but never cut
    assert (out / "docs" / "files" / "pkg" / "core.py.md").is_file()
    assert not (out / "docs" / "files" / "web").exists()
    assert not (root / ".sourcebook").exists()  # --out is honoured
    args = ["build", str(root), "--out", str(out), "--exclude", "web/**", "--check"]
    check = runner.invoke(cli, args, env=env)
    assert check.exit_code == 0, check.output
    assert "up to date" in check.output
    (root / "pkg/util.py").write_text('"""Changed."""\n')
    stale = runner.invoke(cli, args, env=env)
    assert stale.exit_code == 1
    assert "files/pkg/util.py.md" in stale.output


def test_template_change_rerenders_from_stored_drafts_without_the_writer(
        make_repo: Callable[..., Path], monkeypatch: pytest.MonkeyPatch) -> None:
    import generator.pages.render_markdown

    root = make_repo({k: v for k, v in REPO.items() if k.startswith("pkg/")})
    writer = _FlakyWriter("")
    first = _build(root, writer=writer)
    assert writer.calls  # file pages were written by the writer
    writer.calls.clear()
    monkeypatch.setattr(generator.pages.render_markdown, "render_version", lambda: "another template")
    again = _build(root, writer=writer)
    assert writer.calls == []  # prose is re-used: a template change costs no LLM call
    assert sorted(again.pages_written) == sorted(first.pages_written)
    page = (root / ".sourcebook" / "docs" / "files" / "pkg" / "core.py.md").read_text()
    assert "LLM summary of pkg/core.py." in page
    assert "written by an LLM" in page


KILLED_BUILD = """
import os, sys
import generator.pages.page_sink as pages
from generator.pages.writer import FileDraft
from sourcebook.config import load_config

class DiesOnUtil:
    id = "test/1"
    concurrency = 1
    def file_page(self, ctx):
        if ctx.path == "pkg/util.py":
            os._exit(9)  # like SIGKILL: no finally block, no atexit
        return FileDraft(summary="ok", written_by="llm")
    def module_page(self, ctx): raise AssertionError
    def overview(self, ctx): raise AssertionError

pages.SAVE_EVERY_S = 0.0
from generator.build import build
build(load_config(sys.argv[1]), writer=DiesOnUtil(), site=False, index=False)
"""


def test_killed_run_keeps_the_pages_it_wrote(make_repo: Callable[..., Path]) -> None:
    import subprocess
    import sys

    root = make_repo({k: v for k, v in REPO.items() if k.startswith("pkg/")})
    proc = subprocess.run([sys.executable, "-c", KILLED_BUILD, str(root)], capture_output=True, text=True,
                          timeout=120, check=False)
    assert proc.returncode == 9, proc.stderr
    saved = load_state(root / ".sourcebook")
    assert {"files/pkg/__init__.py.md", "files/pkg/core.py.md"} <= set(saved)  # written before the kill
    resumed = _FlakyWriter("")
    _build(root, writer=resumed)
    assert resumed.calls == ["pkg/util.py"]


def test_changes_are_recorded_as_dated_facts_for_the_answer_engine(make_repo: Callable[..., Path]) -> None:
    from click.testing import CliRunner

    from answer.answering.episodes import EpisodeStore
    from sourcebook.cli import cli

    def _build(root: Path) -> None:  # the command records them: the build only reports what changed
        result = CliRunner().invoke(cli, ["build", str(root), "--no-site", "--no-index"])
        assert result.exit_code == 0, result.output

    root = make_repo(REPO)
    _build(root)
    store = EpisodeStore(root / ".sourcebook")
    assert store.all() == []  # a first build records nothing: every file would be "new"
    (root / "pkg/util.py").write_text('"""Changed."""\n')
    (root / "web/lib/dom.ts").unlink()
    (root / "pkg/extra.py").write_text("X = 1\n")
    _build(root)
    facts = {(e.text, e.scope) for e in store.all()}
    assert facts == {("pkg/util.py changed; its wiki page was regenerated", "pkg/util.py"),
                     ("pkg/extra.py was added to the repository and the wiki", "pkg/extra.py"),
                     ("web/lib/dom.ts was deleted; its wiki page was removed", "web/lib")}
    _build(root)
    assert len(store.all()) == 3  # an unchanged re-run records nothing new


def test_a_utf16_source_gets_its_symbols_and_its_page(make_repo: Callable[..., Path]) -> None:
    # Windows editors still save UTF-16 with a BOM: such a file is text, not "binary".
    source = ('"""Greetings, saved as UTF-16."""\r\n\r\n\r\ndef greet_wide(name: str) -> str:\r\n'
              '    """Say hello to name."""\r\n    return "hello " + name\r\n')
    root = make_repo({"pkg/__init__.py": "", "pkg/wide.py": b"\xff\xfe" + source.encode("utf-16-le")})
    report = build(load_config(root), site=False, index=True)
    assert [s.path for s in report.skipped] == []
    page = (root / ".sourcebook" / "docs" / file_page_ids(["pkg/wide.py"])["pkg/wide.py"]).read_text()
    assert "greet_wide" in page
    assert "Say hello to name." in page
    assert "\x00" not in page
    from answer.serving.tools import Tools
    from answer.serving.workspace import load_workspace

    found = Tools(load_workspace(root, env={})).get_symbol("greet_wide")["definitions"]
    assert [(d["path"], d["start_line"], d["verified"]) for d in found] == [("pkg/wide.py", 4, True)]
    assert "return \"hello \" + name" in found[0]["body"]


def test_page_kinds_are_one_registry_the_build_and_the_check_walk(make_repo: Callable[..., Path]) -> None:
    """generator/pages/kinds.py: every page the build writes is of a registered kind, each kind's stage is
    timed, and --check finds a page of each kind stale when its inputs change."""
    from generator.pages.kinds import PAGE_KINDS

    root = make_repo(REPO)
    report = _build(root)
    kinds = {k.name for k in PAGE_KINDS}
    state = load_state(root / ".sourcebook")
    # extractive builds write no topics; the Public API page is written when the home page cannot list every
    # name (tests/e2e/test_public_api.py checks it and its staleness)
    assert {row.kind for row in state.values()} == kinds - {"topic", "api"}
    assert {k.stage for k in PAGE_KINDS} <= set(report.timings)
    assert _build(root, check=True).stale == []
    (root / "pkg/util.py").write_text('"""Changed."""\n\n\ndef helper():\n    return 2\n')
    stale = _build(root, check=True).stale
    assert {state[pid].kind for pid in stale} == {"file", "module", "overview"}
    assert set(_build(root).pages_written) <= set(stale)  # a parent whose summary came out the same is kept


def test_an_incremental_build_runs_its_site_and_index_steps_side_by_side(
        make_repo: Callable[..., Path]) -> None:
    from answer.serving.tools import Tools
    from answer.serving.workspace import load_workspace
    from generator.build import _small_update

    modules = {f"pkg/m{i}.py": f"def f{i}():\n    pass\n" for i in range(30)}
    root = make_repo({"pkg/__init__.py": "", **modules})
    assert build(load_config(root)).site_built  # cold: one step after the other
    (root / "pkg/m7.py").write_text("def f7():\n    pass\n\n\ndef overlapped_edit():\n    pass\n")
    report = build(load_config(root))
    assert report.site_built
    assert _small_update(load_config(root), report)  # the path taken: the engine ran in its thread
    assert {"site", "index"} <= set(report.timings)
    assert report.cpu["site"] >= 0.0
    assert report.cpu["index"] >= 0.0
    assert "overlapped_edit" in (root / ".sourcebook/site/files/pkg/m7.py.html").read_text()
    found = Tools(load_workspace(root, env={})).get_symbol("overlapped_edit")["definitions"]
    assert [d["path"] for d in found] == ["pkg/m7.py"]
    assert not [t for t in threading.enumerate() if t.name == "sourcebook-site"]


def test_a_step_beside_the_build_reports_its_error_and_time_when_joined() -> None:
    from generator.build import _Beside
    from generator.build_report import BuildReport

    def failing() -> None:
        time.sleep(0.05)
        raise SiteBuildError("mkdocs build failed")

    report = BuildReport(root=Path("."), out_dir=Path("."), writer_id="x")
    beside = _Beside(failing)
    with pytest.raises(SiteBuildError, match="mkdocs build failed"):
        beside.join(report)
    assert report.timings["site"] >= 0.05
    assert not beside.thread.is_alive()
