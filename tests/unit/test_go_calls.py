"""Go call links bound by type, not by name (generator/analyze/references.py, _Go): the real parser's facts
of a small module in, the call graph's edges out."""

from __future__ import annotations

from generator.analyze.facts import SourceFile
from generator.analyze.graph import build_graph, go_modules
from generator.analyze.manifests import Manifests
from generator.analyze.parse import extract

GO_MOD = "module example.com/web\n"
SOURCES = {
    "mux.go": """package web

import (
\t"net/http"
\t"sync"
)

type Router interface {
\tGet(pattern string)
}

type Mux struct {
\tpool *sync.Pool
\ttree *node
}

type Context struct{}

func (c *Context) Get(key string) string { return key }

func (c *Context) Reset() {}

func NewMux() *Mux { return &Mux{} }

func (mx *Mux) ServeHTTP(w http.ResponseWriter, r *http.Request) {
\trctx := mx.pool.Get().(*Context)
\trctx.Reset()
\tmx.tree.find()
\tw.WriteHeader(200)
}

func (mx *Mux) Get(pattern string) {}

func (mx *Mux) Run() {}

const colorRed = 31

func paint(x int) int { return x }

func use(next http.Handler, r Router) {
\tnext.ServeHTTP(nil, nil)
\tr.Get("/")
\tpaint(colorRed)
\tfor node := range []int{1} {
\t\tpaint(node)
\t}
}
""",
    "tree.go": """package web

type node struct{}

func (n *node) find() {}
""",
    "mux_test.go": """package web

import "testing"

func TestMux(t *testing.T) {
\tt.Run("x", func(t *testing.T) {})
\tm := NewMux()
\tm.Get("/")
}

func BenchmarkMux(b *testing.B) {
\tb.Run("y", func(b *testing.B) {})
}
""",
    "cmd/main.go": """package main

import (
\t"net/http"

\tweb "example.com/web"
)

func main() {
\tm := web.NewMux()
\tm.Run()
\tvar h http.Handler
\th.ServeHTTP(nil, nil)
}
""",
}


def _calls() -> dict[tuple[str, str], set[tuple[str, str]]]:
    facts = [extract(SourceFile(p, "go", len(t), "", "test" if p.endswith("_test.go") else "code"),
                     t.encode()) for p, t in SOURCES.items()]
    graph = build_graph(facts, Manifests(go=go_modules({"go.mod": GO_MOD})))
    return {k: set(v) for k, v in graph.calls.items()}


def test_a_receiver_of_an_outside_type_never_links_to_a_method_of_the_same_name() -> None:
    calls = _calls()
    serve = calls[("mux.go", "Mux.ServeHTTP")]
    assert ("mux.go", "Context.Get") not in serve  # `mx.pool.Get()`: sync.Pool's Get
    assert ("mux.go", "Context.Reset") in serve  # `rctx := ....(*Context)`: a type assertion types it
    assert ("tree.go", "node.find") in serve  # `mx.tree`: a field of a known struct type
    assert ("mux.go", "Mux.ServeHTTP") not in calls.get(("mux.go", "use"), set())  # next is an http.Handler
    assert ("mux.go", "Mux.ServeHTTP") not in calls.get(("cmd/main.go", "main"), set())


def test_testing_helpers_do_not_make_tests_of_the_apps_methods() -> None:
    calls = _calls()
    assert ("mux.go", "Mux.Run") not in calls.get(("mux_test.go", "TestMux"), set())
    assert ("mux.go", "Mux.Run") not in calls.get(("mux_test.go", "BenchmarkMux"), set())
    assert ("mux.go", "Mux.Get") in calls[("mux_test.go", "TestMux")]  # m := NewMux(): *Mux


def test_packages_interfaces_and_locals_bind_by_type() -> None:
    calls = _calls()
    main = calls[("cmd/main.go", "main")]
    assert ("mux.go", "NewMux") in main
    assert ("mux.go", "Mux.Run") in main
    used = calls[("mux.go", "use")]
    assert ("mux.go", "Router.Get") in used
    assert ("mux.go", "Mux.Get") not in used
    assert ("mux.go", "paint") in used
    assert ("mux.go", "colorRed") in used
    assert ("tree.go", "node") not in used  # `for node := range`: a local shadowing the type


def test_a_constant_is_not_listed_as_a_call_nor_as_called() -> None:
    from generator.pages.call_links import XrefIndex

    facts = {p: extract(SourceFile(p, "go", len(t), ""), t.encode()) for p, t in SOURCES.items()}
    graph = build_graph(list(facts.values()), Manifests(go=go_modules({"go.mod": GO_MOD})))
    refs = XrefIndex.build(facts, graph.calls, graph.callers).file_refs(facts["mux.go"])
    assert ("mux.go", "paint") in refs.symbols["use"].calls
    assert ("mux.go", "colorRed") not in refs.symbols["use"].calls
    assert "colorRed" not in refs.symbols
