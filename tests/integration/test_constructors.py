"""A type's constructors in languages other than Python, on its section as a "Built by" line (Python's
class signature shows `__init__`'s parameters instead): TypeScript/JavaScript `constructor(...)`, Java
constructors, Go `New<Type>` functions, Rust associated functions returning Self; built for real."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from generator.analyze.facts import SourceFile
from generator.analyze.parse import extract
from generator.pages.constructors import constructors
from tests.support.repo_files import write_files

FILES: dict[str, str | bytes] = {
    "README.md": "# Shapes\n\nShapes in four languages.\n",
    "web/widget.ts": ("/** A widget. */\nexport class Widget extends Base {\n"
                      "  /** Makes one. */\n"
                      "  constructor(private readonly name: string, size = 2) { super(); }\n"
                      "  draw(): void {}\n}\nexport class Plain {}\n"),
    "go/mux.go": ("package chime\n\n// Mux routes.\ntype Mux struct{}\n\n// NewMux makes a Mux.\n"
                  "func NewMux(size int) *Mux { return &Mux{} }\n\nfunc (m *Mux) Get() {}\n"),
    # chi's shape: the package's main constructor in another file than the type
    "go/chime.go": ("package chime\n\n// NewRouter makes the default router.\n"
                    "func NewRouter() *Mux { return NewMux(0) }\n\n// NewName is no constructor.\n"
                    "func NewName() string { return \"\" }\n"),
    "rust/src/lib.rs": ("/// A client.\npub struct Client;\n\nimpl Client {\n    /// Builds one.\n"
                        "    pub fn new(url: &str) -> Self { Client }\n    /// Sends.\n"
                        "    pub fn send(&self) -> Client { Client }\n}\n"),
    "java/src/main/java/com/acme/Pool.java": (
        "package com.acme;\n\n/** A pool. */\npublic class Pool {\n  /** With a size. */\n"
        "  public Pool(int size) {}\n  private Pool() {}\n  public void close() {}\n}\n"),
}


def test_constructors_of_each_language() -> None:
    def of(path: str, language: str, name: str) -> list[str]:
        text = str(FILES[path])
        facts = extract(SourceFile(path, language, len(text), "x", "code"), text.encode())  # type: ignore[arg-type]
        s = next(s for s in facts.symbols if s.qualname == name)
        return [shown for _c, shown in constructors(s, facts.symbols, language)]

    assert of("web/widget.ts", "typescript", "Widget") == ["new Widget(name: string, size = 2)"]
    assert of("web/widget.ts", "typescript", "Plain") == []
    assert of("go/mux.go", "go", "Mux") == ["NewMux(size int) *Mux"]  # the file's own; the package's: below
    assert of("rust/src/lib.rs", "rust", "Client") == ["Client::new(url: &str) -> Self"]  # not `send(&self)`
    assert of("java/src/main/java/com/acme/Pool.java", "java", "Pool") == ["Pool(int size)"]  # not private


def test_built_by_lines_on_built_pages(tmp_path: Path) -> None:
    root = write_files(tmp_path / "repo", FILES)
    out = tmp_path / "out"
    run = subprocess.run([sys.executable, "-m", "sourcebook.cli", "build", str(root), "--out", str(out),
                          "--no-index"], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr  # mkdocs build --strict: every #anchor exists

    def page(path: str) -> str:
        return (out / "docs" / "files" / f"{path}.md").read_text(encoding="utf-8")

    ts = page("web/widget.ts")
    assert ("*Built by* [<code>new Widget(name: string, size = 2)</code>](#sym-widget-constructor)"
            in ts)
    assert ts.count("*Built by*") == 1  # Plain has no constructor
    assert ("*Built by* [<code>NewMux(size int) &#42;Mux</code>](#sym-newmux) · "
            "[<code>NewRouter() &#42;Mux</code>](chime.go.md#sym-newrouter)") in page("go/mux.go")
    assert "*Built by*" not in page("go/chime.go")
    assert "*Built by* [<code>Client::new(url: &amp;str) -&gt; Self</code>](#sym-client-new)" in page(
        "rust/src/lib.rs")
    # two constructors are overloads: the anchor names the parameter types (issue 32)
    assert "*Built by* [<code>Pool(int size)</code>](#sym-pool-pool-int)" in page(
        "java/src/main/java/com/acme/Pool.java")
    html = (out / "site" / "files" / "web" / "widget.ts.html").read_text(encoding="utf-8")
    assert '<a href="#sym-widget-constructor"><code>new Widget(name: string, size = 2)</code></a>' in html
    # another file's builder is part of the page's key: its new signature re-renders the type's page
    changed = str(FILES["go/chime.go"]).replace("NewRouter()", "NewRouter(n int)")
    (root / "go" / "chime.go").write_text(changed, encoding="utf-8")
    check = subprocess.run([sys.executable, "-m", "sourcebook.cli", "build", str(root), "--out", str(out),
                            "--no-index", "--check"], capture_output=True, text=True, check=False)
    assert "files/go/mux.go.md" in check.stdout + check.stderr
    assert "files/web/widget.ts.md" not in check.stdout + check.stderr  # what it does not build is fresh
