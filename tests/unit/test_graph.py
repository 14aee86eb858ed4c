"""graph: import resolution per language, reference links, PageRank and the module tree (hand-built facts)."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import pytest

from generator.analyze.facts import FileFacts, FileKind, Import, Reference, SourceFile, Symbol
from generator.analyze.graph import build_graph, go_modules, pagerank
from generator.analyze.languages import detect_language
from generator.analyze.manifests import Manifests


def ff(path: str, imports: Sequence[str | tuple[str, tuple[str, ...]]] = (),
       symbols: Sequence[str] = (), refs: Sequence[tuple[str | None, str]] = (),
       kind: FileKind = "code") -> FileFacts:
    """FileFacts for `path`: imports as "module" or ("module", names); symbols as qualnames;
    refs as (scope qualname or None, referenced name)."""
    imps = [Import(path=path, module=i, line=n + 1) if isinstance(i, str)
            else Import(path=path, module=i[0], names=i[1], line=n + 1) for n, i in enumerate(imports)]
    syms = [Symbol(name=q.rsplit(".", 1)[-1], qualname=q, kind="method" if "." in q else "function",
                   path=path, start_line=n + 1, end_line=n + 1, signature=q,
                   parent=q.rsplit(".", 1)[0] if "." in q else None)
            for n, q in enumerate(symbols)]
    references = [Reference(path=path, name=name, line=n + 1, scope=scope)
                  for n, (scope, name) in enumerate(refs)]
    sf = SourceFile(path=path, language=detect_language(path), size=1, sha="0" * 64, kind=kind)
    return FileFacts(file=sf, symbols=syms, imports=imps, references=references)


def deps(facts: list[FileFacts], **kw: object) -> dict[str, list[str]]:
    return build_graph(facts, **kw).depends_on  # type: ignore[arg-type]


# ------------------------------------------------------------------------------------------------ python


def test_python_src_layout_relative_and_absolute_imports() -> None:
    facts = [
        ff("src/pkg/__init__.py", [(".app", ("App",))]),
        ff("src/pkg/app.py", [(".helpers", ("h",)), (".", ("sub",)), "logging", "logging.handlers", "os"]),
        ff("src/pkg/helpers.py"),
        ff("src/pkg/sub/__init__.py"),
        ff("src/pkg/sub/deep.py", [("..helpers", ("h",)), ("...", ("x",)), ("....", ("y",))]),
        ff("tests/conftest.py", ["pkg.app"]),
        ff("tests/test_app.py", [("pkg", ("helpers",)), ("pkg", ("App",)), "pkg.sub.deep", "conftest",
                                 "pkg.helpers.not_a_module", "requests"]),
        ff("scripts/logging.py"),  # a loose script must not shadow the standard library
    ]
    g = build_graph(facts)
    assert g.depends_on["src/pkg/__init__.py"] == ["src/pkg/app.py"]
    assert g.depends_on["src/pkg/app.py"] == ["src/pkg/helpers.py", "src/pkg/sub/__init__.py"]
    assert g.external["src/pkg/app.py"] == ["logging", "logging.handlers", "os"]
    # "..." from src/pkg/sub/deep.py is src/, which is no package: unresolved, as is anything above the root
    assert g.depends_on["src/pkg/sub/deep.py"] == ["src/pkg/helpers.py"]
    assert g.external["src/pkg/sub/deep.py"] == ["...", "...."]
    assert g.depends_on["tests/conftest.py"] == ["src/pkg/app.py"]
    assert g.depends_on["tests/test_app.py"] == [
        "src/pkg/__init__.py", "src/pkg/helpers.py", "src/pkg/sub/deep.py", "tests/conftest.py"]
    assert g.external["tests/test_app.py"] == ["requests"]
    assert g.used_by["src/pkg/helpers.py"] == ["src/pkg/app.py", "src/pkg/sub/deep.py", "tests/test_app.py"]
    assert g.resolved["tests/test_app.py"]["pkg"] == ["src/pkg/__init__.py", "src/pkg/helpers.py"]


def test_python_namespace_package_resolves_by_unique_suffix() -> None:
    facts = [ff("lib/ns/tool/run.py"), ff("app/main.py", ["ns.tool.run", "tool.missing"])]
    assert deps(facts)["app/main.py"] == ["lib/ns/tool/run.py"]


def test_python_same_name_prefers_closest_package() -> None:
    facts = [ff("a/pkg/__init__.py"), ff("a/pkg/util.py"), ff("b/pkg/__init__.py"), ff("b/pkg/util.py"),
             ff("b/main.py", ["pkg.util"])]
    assert deps(facts)["b/main.py"] == ["b/pkg/util.py"]


# ------------------------------------------------------------------------------------------------ js / ts


def test_js_ts_relative_paths_extension_probing_and_index_files() -> None:
    facts = [
        ff("web/app.ts", ["./util", "./components", "../lib/x.js", "react", "./missing", "@/alias",
                          "@/hooks/use", "../../outside"]),
        ff("src/hooks/use.ts"),
        ff("web/util.ts"),
        ff("web/components/index.tsx"),
        ff("lib/x.ts"),
        ff("web/old.js", ["./legacy", "../web/util"]),
        ff("web/legacy.jsx"),
    ]
    g = build_graph(facts)
    assert g.depends_on["web/app.ts"] == ["lib/x.ts", "src/hooks/use.ts", "web/components/index.tsx",
                                          "web/util.ts"]
    assert g.external["web/app.ts"] == ["../../outside", "./missing", "@/alias", "react"]
    assert g.depends_on["web/old.js"] == ["web/legacy.jsx", "web/util.ts"]


# ------------------------------------------------------------------------------------------------------ go


@pytest.mark.parametrize("with_go_mod", [True, False])
def test_go_import_resolves_to_every_file_of_the_package(with_go_mod: bool) -> None:
    facts = [
        ff("cmd/tool/main.go", ["example.com/proj/internal/util", "example.com/proj", "fmt",
                                "github.com/other/util"]),
        ff("internal/util/a.go"),
        ff("internal/util/b.go"),
        ff("internal/util/b_test.go"),
        ff("internal/util/sub/c.go"),
        ff("version.go"),
        ff("internal/store/s.go", ["example.com/proj/internal/util"]),
    ]
    mods = go_modules({"go.mod": "module example.com/proj\n\ngo 1.22\n"}) if with_go_mod else None
    g = build_graph(facts, Manifests(go=mods or {}))
    assert g.depends_on["cmd/tool/main.go"] == ["internal/util/a.go", "internal/util/b.go", "version.go"]
    assert g.external["cmd/tool/main.go"] == ["fmt", "github.com/other/util"]
    assert g.used_by["internal/util/a.go"] == ["cmd/tool/main.go", "internal/store/s.go"]


def test_go_modules_reads_module_lines() -> None:
    assert go_modules({"go.mod": "// c\nmodule example.com/a\n", "tools/go.mod": 'module "x.io/t"\n'}) == {
        "": "example.com/a", "tools": "x.io/t"}


# ---------------------------------------------------------------------------------------------------- rust


def test_rust_mod_and_use_within_the_crate() -> None:
    facts = [
        ff("src/lib.rs", ["mod::net", "mod::util", "net::Conn"]),
        ff("src/net/mod.rs", ["mod::tcp", "self::tcp::Stream"]),
        ff("src/net/tcp.rs", ["crate::util::helper", "super::Conn", "std::io", "serde::Serialize"]),
        ff("src/util.rs", [("crate::net", ("tcp", "Conn"))]),
        ff("src/main.rs", ["mod::missing"]),
    ]
    g = build_graph(facts)
    assert g.depends_on["src/lib.rs"] == ["src/net/mod.rs", "src/util.rs"]
    assert g.depends_on["src/net/mod.rs"] == ["src/net/tcp.rs"]
    assert g.depends_on["src/net/tcp.rs"] == ["src/net/mod.rs", "src/util.rs"]
    assert g.external["src/net/tcp.rs"] == ["serde::Serialize", "std::io"]
    assert g.depends_on["src/util.rs"] == ["src/net/mod.rs", "src/net/tcp.rs"]
    assert g.external["src/main.rs"] == ["mod::missing"]


def test_rust_mod_declared_in_a_non_mod_file_looks_in_its_own_directory() -> None:
    facts = [ff("src/lib.rs", ["mod::net"]), ff("src/net.rs", ["mod::tcp"]), ff("src/net/tcp.rs")]
    assert deps(facts)["src/net.rs"] == ["src/net/tcp.rs"]


# ---------------------------------------------------------------------------------------------------- java


def test_java_packages_classes_and_wildcards() -> None:
    base = "src/main/java/com/x"
    facts = [
        ff(f"{base}/App.java", ["com.x.util.Strings", "com.x.model.*", "java.util.List",
                                "static com.x.util.Strings.trim", "com.x.model.User.Role"]),
        ff(f"{base}/util/Strings.java"),
        ff(f"{base}/model/User.java"),
        ff(f"{base}/model/Order.java"),
    ]
    g = build_graph(facts)
    assert g.depends_on[f"{base}/App.java"] == [
        f"{base}/model/Order.java", f"{base}/model/User.java", f"{base}/util/Strings.java"]
    assert g.external[f"{base}/App.java"] == ["java.util.List"]


def test_c_includes_resolve_relative_then_by_path_suffix() -> None:
    facts = [ff("src/main.c", ['"util.h"', '"net/sock.h"', "<stdio.h>"]), ff("src/util.h"),
             ff("include/net/sock.h")]
    assert deps(facts)["src/main.c"] == ["include/net/sock.h", "src/util.h"]


# -------------------------------------------------------------------------------------------- references


def test_typescript_references_bind_lexically_and_through_imports() -> None:
    """A TypeScript name links to what is in scope: the file's own definitions and what it imports (through
    a package's re-export); a name it neither defines nor imports links nowhere, however unique it is
    (tests/unit/test_oo_calls.py has the typed rules)."""
    facts = [
        ff("pkg/index.ts", [("./core", ("Engine",))]),
        ff("pkg/core.ts", symbols=["Engine", "Engine.run", "helper"], refs=[("Engine.run", "helper")]),
        ff("pkg/other.ts", symbols=["helper", "lonely"]),
        ff("pkg/user.ts", [("./core", ("Engine",))], symbols=["main"],
           refs=[("main", "Engine"), ("main", "helper"), ("main", "lonely"), (None, "main"),
                 ("main", "nothing")]),
        ff("app.ts", ["./pkg"], refs=[(None, "Engine")]),  # through the package's re-export
        ff("web/x.go", symbols=["lonely2"], refs=[(None, "helper")]),  # another language never links
    ]
    g = build_graph(facts)
    assert g.calls[("pkg/core.ts", "Engine.run")] == [("pkg/core.ts", "helper")]
    assert g.calls[("pkg/user.ts", "main")] == [("pkg/core.ts", "Engine")]
    assert g.calls[("pkg/user.ts", "")] == [("pkg/user.ts", "main")]
    assert g.calls[("app.ts", "")] == [("pkg/core.ts", "Engine")]
    assert ("web/x.go", "") not in g.calls
    assert g.callers[("pkg/core.ts", "helper")] == [("pkg/core.ts", "Engine.run")]


def test_reference_resolution_by_name_prefers_same_file_then_package_then_unique_name() -> None:
    """Languages without binding rules of their own (Kotlin here) link by name."""
    facts = [
        ff("app/Main.kt", symbols=["main", "local"], refs=[("main", "local"), ("main", "helper"),
                                                          ("main", "lonely"), ("main", "nothing")]),
        ff("app/Util.kt", symbols=["helper"]),
        ff("lib/Other.kt", symbols=["helper", "lonely"]),
    ]
    g = build_graph(facts)
    assert g.calls[("app/Main.kt", "main")] == [
        ("app/Main.kt", "local"), ("app/Util.kt", "helper"), ("lib/Other.kt", "lonely")]


def test_generic_names_link_only_within_their_own_file() -> None:
    facts = [ff(f"m{i}.py", symbols=["get"]) for i in range(8)]
    facts.append(ff("user.py", ["m1"], refs=[(None, "get")]))
    facts.append(ff("m0b.py", symbols=["get", "caller"], refs=[("caller", "get")]))
    g = build_graph(facts)
    assert ("user.py", "") not in g.calls
    assert g.calls[("m0b.py", "caller")] == [("m0b.py", "get")]


def test_symbol_rank_follows_incoming_references_and_sums_to_file_rank() -> None:
    facts = [
        ff("lib.py", symbols=["popular", "quiet"]),
        ff("a.py", [("lib", ("popular",))], refs=[(None, "popular")] * 3),
        ff("b.py", [("lib", ("popular",))], refs=[(None, "popular")]),
    ]
    g = build_graph(facts)
    popular, quiet = g.symbol_rank[("lib.py", "popular")], g.symbol_rank[("lib.py", "quiet")]
    assert popular > quiet > 0
    assert popular + quiet == pytest.approx(g.file_rank["lib.py"])


# ------------------------------------------------------------------------------------------------ ranking


def test_pagerank_puts_the_most_imported_file_first() -> None:
    facts = [ff("core.py"), ff("util.py", ["core"])]
    facts += [ff(f"feature{i}.py", ["core", "util"] if i < 2 else ["core"]) for i in range(5)]
    facts.append(ff("README.md", kind="doc"))
    g = build_graph(facts)
    order = g.ranked_files()
    assert order[:2] == ["core.py", "util.py"]
    assert sum(g.file_rank.values()) == pytest.approx(1.0)
    assert g.file_rank["feature0.py"] == pytest.approx(g.file_rank["README.md"])  # nobody points at either


def test_reference_counts_weigh_the_file_graph() -> None:
    # both are imported by the same file; one is referenced many times, the other never
    facts = [ff("used.py", symbols=["compute_totals"]), ff("idle.py", symbols=["other_thing"]),
             ff("main.py", [("used", ("compute_totals",)), "idle"], refs=[(None, "compute_totals")] * 9)]
    g = build_graph(facts)
    assert g.file_rank["used.py"] > g.file_rank["idle.py"]


def test_pagerank_handles_cycles_dangling_nodes_and_empty_input() -> None:
    ranks = pagerank(["a", "b", "c"], {("a", "b"): 1.0, ("b", "a"): 1.0})
    assert sum(ranks.values()) == pytest.approx(1.0)
    assert ranks["a"] == pytest.approx(ranks["b"])
    assert ranks["a"] > ranks["c"]
    assert pagerank([], {}) == {}
    g = build_graph([])
    assert g.file_rank == {}
    assert list(g.modules) == [""]


# ------------------------------------------------------------------------------------------------ modules


def test_module_tree() -> None:
    facts = [
        ff("README.md", kind="doc"),
        ff("setup.py"),
        ff("src/app/__init__.py"),
        ff("src/app/core.py"),
        ff("src/app/templates/page.html"),  # not code: owned by src/app
        ff("src/app/db/models.py"),
        ff("docs/index.md", kind="doc"),
        ff("docs/guide/intro.rst", kind="doc"),
    ]
    g = build_graph(facts)
    assert sorted(g.modules) == ["", "src", "src/app", "src/app/db"]
    root, src, app = g.modules[""], g.modules["src"], g.modules["src/app"]
    assert root.parent is None
    assert root.files == ("README.md", "docs/guide/intro.rst", "docs/index.md", "setup.py")
    assert root.submodules == ("src",)
    assert src.files == ()
    assert src.submodules == ("src/app",)
    assert src.parent == ""
    assert app.files == ("src/app/__init__.py", "src/app/core.py", "src/app/templates/page.html")
    assert app.submodules == ("src/app/db",)
    assert g.modules["src/app/db"].parent == "src/app"
    assert g.file_module["docs/guide/intro.rst"] == ""
    assert root.rank == pytest.approx(1.0)
    assert app.rank == pytest.approx(sum(g.file_rank[p] for p in g.file_rank if p.startswith("src/app/")))


def test_ruby_php_and_csharp_resolve_by_path_suffix() -> None:
    facts = [
        ff("lib/app.rb", ["./util", "app/models/user", "json"]),
        ff("lib/util.rb"),
        ff("lib/app/models/user.rb"),
        ff("src/Http/Controller.php", ["App\\Models\\User", "Psr\\Log\\LoggerInterface", "helpers.php"]),
        ff("src/Models/User.php"),
        ff("src/Http/helpers.php"),
        ff("App/Program.cs", ["App.Services", "System.Text", "static App.Util.Strings"]),
        ff("App/Services/Mailer.cs"),
        ff("App/Services/Queue.cs"),
        ff("App/Util/Strings.cs"),
    ]
    g = build_graph(facts)
    assert g.depends_on["lib/app.rb"] == ["lib/app/models/user.rb", "lib/util.rb"]
    assert g.external["lib/app.rb"] == ["json"]
    assert g.depends_on["src/Http/Controller.php"] == ["src/Http/helpers.php", "src/Models/User.php"]
    assert g.depends_on["App/Program.cs"] == ["App/Services/Mailer.cs", "App/Services/Queue.cs",
                                              "App/Util/Strings.cs"]
    assert g.external["App/Program.cs"] == ["System.Text"]


def test_facts_from_the_real_scan_and_parse_stages_resolve(tmp_path: Path) -> None:
    """The formats parse writes (Import.module as in the source) are the ones graph resolves."""
    from generator.analyze.parse import extract
    from generator.analyze.scan import read_source, scan
    from sourcebook.config import Config

    files = {
        "py/pkg/__init__.py": "from .core import run\n",
        "py/pkg/core.py": "from . import util\n\ndef run():\n    return util.helper()\n",
        "py/pkg/util.py": "def helper():\n    return 1\n",
        "web/main.ts": "import { f } from './lib';\nexport const x = f();\n",
        "web/lib/index.ts": "export function f() { return 1; }\n",
        "go.mod": "module example.com/demo\n",
        "cmd/main.go": ('package main\n\nimport "example.com/demo/internal/util"\n\n'
                        "func main() { util.Do() }\n"),
        "internal/util/util.go": "package util\n\nfunc Do() {}\n",
        "src/lib.rs": "mod net;\nuse crate::net::Conn;\n",
        "src/net.rs": "pub struct Conn;\n",
        "j/com/x/App.java": "package com.x;\nimport com.x.util.Strings;\nclass App {}\n",
        "j/com/x/util/Strings.java": "package com.x.util;\npublic class Strings {}\n",
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    scanned = scan(Config(root=tmp_path, out_dir=tmp_path / ".sourcebook"))
    facts = [extract(f, read_source(tmp_path, f.path)) for f in scanned.files]
    g = build_graph(facts, Manifests(go=go_modules({"go.mod": files["go.mod"]})))
    assert g.depends_on["py/pkg/__init__.py"] == ["py/pkg/core.py"]
    assert g.depends_on["py/pkg/core.py"] == ["py/pkg/util.py"]
    assert g.calls[("py/pkg/core.py", "run")] == [("py/pkg/util.py", "helper")]
    assert g.depends_on["web/main.ts"] == ["web/lib/index.ts"]
    assert g.depends_on["cmd/main.go"] == ["internal/util/util.go"]
    assert g.depends_on["src/lib.rs"] == ["src/net.rs"]
    assert g.depends_on["j/com/x/App.java"] == ["j/com/x/util/Strings.java"]
    assert g.calls[("cmd/main.go", "main")] == [("internal/util/util.go", "Do")]
    # `export const x = f()`: an exported binding is a symbol, its initializer's calls are its own
    assert g.calls[("web/main.ts", "x")] == [("web/lib/index.ts", "f")]
    assert g.ranked_files()[0] == "py/pkg/util.py"  # the end of the longest import chain


def test_pass_through_imports_count_less_than_imports_of_own_definitions() -> None:
    # every file imports both; from `shim` only names it re-exports, from `model` names it defines
    facts = [ff("shim.py", symbols=["_detect"]), ff("model.py", symbols=["Model", "Field"])]
    facts += [ff(f"use{i}.py", [("shim", ("urlparse", "str")), ("model", ("Model",))]) for i in range(4)]
    g = build_graph(facts)
    assert g.file_rank["model.py"] > g.file_rank["shim.py"]


def test_weak_edges_pass_on_only_part_of_the_rank() -> None:
    strong = pagerank(["a", "b"], {("a", "b"): 1.0}, min_out_weight=1.0)
    weak = pagerank(["a", "b"], {("a", "b"): 0.1}, min_out_weight=1.0)
    assert strong["b"] > weak["b"] > weak["a"]
    assert sum(weak.values()) == pytest.approx(1.0)


def test_scala_imports_resolve_across_the_jvm_languages() -> None:
    from generator.analyze.parse import extract

    sources = {
        "src/main/scala/example/greet/Greeter.scala": (
            "package example.greet\n\nimport example.util.Strings\nimport example.util.{Texts, Other => O}\n"
            "import example.model._\n\nclass Greeter { def hi(): String = Strings.upper(Texts.x) }\n"),
        "src/main/scala/example/util/Strings.scala": "package example.util\n\nobject Strings {}\n",
        "src/main/scala/example/util/Texts.scala": "package example.util\n\nobject Texts {}\n",
        "src/main/java/example/util/Other.java": "package example.util;\n\npublic class Other {}\n",
        "src/main/scala/example/model/Person.scala": "package example.model\n\ncase class Person()\n",
        "src/main/scala/example/model/Team.scala": "package example.model\n\ncase class Team()\n",
    }
    facts = [extract(SourceFile(p, detect_language(p), len(t), ""), t.encode()) for p, t in sources.items()]
    got = build_graph(facts, Manifests()).depends_on["src/main/scala/example/greet/Greeter.scala"]
    assert sorted(got) == sorted(p for p in sources if "/greet/" not in p)
