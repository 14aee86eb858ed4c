"""The build's own code and folders of notes stay out of orientation (issue 32): sbt's `project/` beside a
`build.sbt` is the build definition, a `notes/` folder of release notes holds no package."""

from __future__ import annotations

from pathlib import Path

from generator.analyze.facts import FileFacts, SourceFile
from generator.pages.orientation import build_folders, overview_diagram, own_code, source_in

PACKAGES = ["core/src/main/scala/acme", "core/src/main/scala/acme/read", "core/src/main/scala/acme/render",
            "cli/src/main/scala/acme/cli", "js/src/main/scala/acme", "native/src/main/scala/acme"]


def _layout() -> tuple[dict[str, FileFacts], dict[str, str], dict[str, list[str]]]:
    code = [f"{d}/Main.scala" for d in PACKAGES] + ["project/Dependencies.scala"]
    docs = ["notes/1.0.0.markdown", "notes/about.markdown"]
    facts = {p: FileFacts(SourceFile(p, "scala", 10, "x")) for p in code}
    facts |= {p: FileFacts(SourceFile(p, "markdown", 10, "x", kind="doc")) for p in docs}
    # each package imports the first; the release notes link to it; the build definition names the next
    first = code[0]
    depends_on = {p: [first] for p in code[1:-1]} | {p: [first] for p in docs}
    depends_on["project/Dependencies.scala"] = [code[1]]
    return facts, {p: p + ".md" for p in facts}, depends_on


def test_sbt_project_folder_is_the_builds_code(tmp_path: Path) -> None:
    assert build_folders(tmp_path) == frozenset()
    (tmp_path / "build.sbt").write_text('lazy val root = project.in(file("."))\n')
    build = build_folders(tmp_path)
    assert build == {"project"}
    facts, files, _ = _layout()
    assert "project/Dependencies.scala" in own_code(files, facts)
    assert own_code(files, facts, build) == [f"{d}/Main.scala" for d in PACKAGES]
    source = source_in(build)
    assert source("core/src/main/scala/acme/Main.scala")
    assert not source("project/Dependencies.scala")


def test_diagram_leaves_out_the_build_and_a_folder_of_notes() -> None:
    facts, files, depends_on = _layout()
    modules = {d: f"modules/{d}/index.md" for d in [*PACKAGES, "project", "notes"]}
    importance = dict.fromkeys(modules, 1.0)

    def boxes(build: frozenset[str]) -> list[str]:
        diagram = overview_diagram(modules=modules, files=files, code=own_code(files, facts, build),
                                   depends_on=depends_on, importance=importance, from_page="index.md")
        assert diagram is not None
        return sorted(label for _, label, _, _ in diagram.nodes)

    everything = boxes(frozenset())
    assert "project/" in everything
    assert "notes/" not in everything
    assert len(everything) == len(PACKAGES) + 1
    shown = boxes(frozenset({"project"}))
    assert len(shown) == len(PACKAGES)
    assert not {"project/", "notes/"} & set(shown)
