"""One analysis for every command: build, `--check` and `--dry-run` agree on stale pages in each ecosystem,
and the index holds the analysis (facts + manifests): the answer side gets the build's graph, unparsed."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from generator.analyze.analysis import analyze
from generator.analyze.manifests import Manifests, read_manifests
from generator.build import build
from generator.build_llm import estimate_run, writer_from_config
from generator.index.store import open_index
from generator.index.stored_analysis import load_analysis
from sourcebook.cli import cli
from sourcebook.config import load_config
from tests.support.fake_llm import FakeLLM, page_writer_responder

# Each repository: its files, an import that only its manifest resolves (importer -> imported), and a file
# to change afterwards.
ECOSYSTEMS: dict[str, tuple[dict[str, str | bytes], tuple[str, str], str]] = {
    "python": ({
        "README.md": "# Py\n\nA package.\n",
        "pkg/__init__.py": '"""The package."""\n',
        "pkg/core.py": "from pkg.util import helper\n\n\ndef run():\n    return helper()\n",
        "pkg/util.py": "def helper():\n    return 1\n",
    }, ("pkg/core.py", "pkg/util.py"), "pkg/util.py"),
    "go": ({
        "go.mod": "module example.com/greet\n\ngo 1.22\n",
        "greet.go": 'package greet\n\n// Hello greets.\nfunc Hello(name string) string {\n'
                    '\treturn "hi " + name\n}\n',
        "cmd/app/main.go": 'package main\n\nimport (\n\t"fmt"\n\n\t"example.com/greet"\n)\n\n'
                           'func main() {\n\tfmt.Println(greet.Hello("x"))\n}\n',
    }, ("cmd/app/main.go", "greet.go"), "greet.go"),
    "js": ({
        "package.json": '{"name": "root", "private": true, "workspaces": ["packages/*"]}\n',
        "packages/ui/package.json": '{"name": "@acme/ui", "main": "src/index.ts"}\n',
        "packages/ui/src/index.ts": "export function button(label: string): string {\n  return label;\n}\n",
        "packages/app/package.json": '{"name": "@acme/app"}\n',
        "packages/app/src/main.ts": 'import { button } from "@acme/ui";\n\n'
                                    'export const view = button("ok");\n',
    }, ("packages/app/src/main.ts", "packages/ui/src/index.ts"), "packages/ui/src/index.ts"),
    "rust": ({
        "Cargo.toml": '[workspace]\nmembers = ["crates/*"]\n',
        "crates/core-lib/Cargo.toml": '[package]\nname = "core-lib"\nversion = "0.1.0"\n',
        "crates/core-lib/src/lib.rs": "pub mod shapes;\n",
        "crates/core-lib/src/shapes.rs": "pub fn area(w: u32, h: u32) -> u32 {\n    w * h\n}\n",
        "crates/cli/Cargo.toml": '[package]\nname = "cli"\nversion = "0.1.0"\n',
        "crates/cli/src/main.rs": "use core_lib::shapes::area;\n\n"
                                  "fn main() {\n    println!(\"{}\", area(2, 3));\n}\n",
    }, ("crates/cli/src/main.rs", "crates/core-lib/src/shapes.rs"), "crates/core-lib/src/shapes.rs"),
}


@pytest.mark.parametrize("ecosystem", sorted(ECOSYSTEMS))
def test_dry_run_check_and_build_agree_on_stale_pages(
        ecosystem: str, make_repo: Callable[..., Path], fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch,
) -> None:
    files, (importer, imported), changed = ECOSYSTEMS[ecosystem]
    fake_llm.responder = page_writer_responder
    monkeypatch.setenv("SOURCEBOOK_LLM_BASE_URL", fake_llm.base_url)
    monkeypatch.setenv("SOURCEBOOK_LLM_MODEL", "fake")
    root = make_repo(files)
    runner = CliRunner()

    full = runner.invoke(cli, ["build", str(root), "--no-site"])
    assert full.exit_code == 0, full.output
    dry = runner.invoke(cli, ["build", str(root), "--dry-run"])
    assert dry.exit_code == 0, dry.output
    assert ": 0 stale pages" in dry.output  # the Go repository once reported 6 here
    check = runner.invoke(cli, ["build", str(root), "--check"])
    assert check.exit_code == 0, check.output

    config = load_config(root)
    analysis = analyze(config, save_cache=False)
    assert imported in analysis.graph.depends_on[importer]  # the manifest-only import resolved
    # the index holds that analysis: the answer side's graph is the build's, and nothing is re-parsed
    stored = load_analysis(open_index(config, embedder=None))
    assert stored.manifests == analysis.manifests
    assert stored.graph.depends_on == analysis.graph.depends_on
    assert stored.graph.file_rank == analysis.graph.file_rank

    target = root / changed
    target.write_text(target.read_text() + "\n// changed\n" if not changed.endswith(".py")
                      else target.read_text() + "\n\ndef extra():\n    return 2\n")
    writer = writer_from_config(config)
    assert writer is not None
    estimated = estimate_run(config, writer).stale
    checked = build(config, writer=writer, check=True, site=False, index=False).stale
    assert estimated == checked
    assert estimated  # the changed file's page at least
    written = build(config, writer=writer, site=False, index=False)
    # a parent whose child is stale counts as stale (its children's summaries are not written yet); the
    # build skips it when they come out the same, so what it writes is within what was predicted
    assert f"files/{changed}.md" in written.pages_written
    assert set(written.pages_written + written.pages_deleted) <= set(checked)
    assert build(config, writer=writer, check=True, site=False, index=False).stale == []


def test_manifests_read_go_js_and_cargo_and_survive_bad_ones() -> None:
    m = read_manifests({
        "go.mod": "// c\nmodule example.com/a\n",
        "web/package.json": '{"name": "@x/web", "module": "lib/index.js"}',
        "bad/package.json": "{not json",
        "crates/a/Cargo.toml": '[package]\nname = "a-b"\n[lib]\npath = "lib.rs"\n',
        "Cargo.toml": "[workspace]\nmembers = []\n",
        "broken/Cargo.toml": "[package\n",
    })
    assert m.go == {"": "example.com/a"}
    assert m.js == {"@x/web": ("web", "web/lib/index.js")}
    assert m.rust == {"a_b": "crates/a/lib.rs"}
    assert Manifests.from_json(m.to_json()) == m
    assert Manifests.from_json({"go": 3}) == Manifests()
