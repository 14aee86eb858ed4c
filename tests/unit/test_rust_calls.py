"""Rust call links bound by type, not by name (generator/analyze/references_rust.py): the real parser's
facts of a small crate in, the call graph's edges out. Every assertion below fails under name binding."""

from __future__ import annotations

from generator.analyze.facts import SourceFile
from generator.analyze.graph import build_graph
from generator.analyze.manifests import Manifests
from generator.analyze.parse import extract

SOURCES = {
    "src/lib.rs": """mod walk;
mod util;
pub use crate::walk::{Walk, Entry};

pub trait Visit {
    fn visit(&self);
}
""",
    "src/walk.rs": """use std::io;
use std::path::PathBuf;
use crate::util;
use crate::Visit;

pub struct Opts { depth: usize }

impl Opts {
    fn new() -> Opts { Opts { depth: 0 } }
    fn reset(&mut self) {}
}

pub struct Walk { opts: Opts, root: PathBuf }

impl Walk {
    pub fn new(root: PathBuf) -> Self {
        let opts = Opts::new();
        let b = Box::new(1);
        let e = io::Error::new(io::ErrorKind::Other, "x");
        Walk { opts, root }
    }
    pub fn path(&self) -> &PathBuf { &self.root }
    pub fn run(&mut self, v: &dyn Visit, entry: &Entry) {
        self.opts.reset();
        self.root.push("x");
        entry.path();
        v.visit();
        util::helper();
        Self::new(PathBuf::new());
    }
}

pub struct Entry;

impl Entry {
    pub fn path(&self) -> &PathBuf { unimplemented!() }
}

impl Visit for Entry {
    fn visit(&self) { let backtrace = 1; util::show(backtrace); }
}
""",
    "src/util.rs": """pub fn helper() {}
pub fn show(x: u8) {}
pub fn backtrace() {}
pub fn push() {}
""",
    "tests/it.rs": """use demo::Walk;

fn it() {
    let w = Walk::new(std::path::PathBuf::new());
    w.path();
}
""",
}


def _edges() -> set[tuple[str, str]]:
    facts = []
    for path, text in SOURCES.items():
        data = text.encode()
        facts.append(extract(SourceFile(path, "rust", len(data), "0"), data))
    graph = build_graph(facts, Manifests(rust={"demo": "src/lib.rs"}))
    return {(f"{s[0]}::{s[1]}", f"{t[0]}::{t[1]}") for s, targets in graph.calls.items() for t in targets}


def test_paths_and_typed_receivers_link_to_their_own_type() -> None:
    edges = _edges()
    run = "src/walk.rs::Walk.run"
    assert ("src/walk.rs::Walk.new", "src/walk.rs::Opts.new") in edges  # `Opts::new`
    assert (run, "src/walk.rs::Opts.reset") in edges  # `self.opts.reset()`: the field's type
    assert (run, "src/walk.rs::Entry.path") in edges  # `entry: &Entry`
    assert (run, "src/walk.rs::Walk.path") not in edges  # ... not Walk's `path` by name
    assert (run, "src/walk.rs::Walk.new") in edges  # `Self::new`
    assert (run, "src/util.rs::helper") in edges  # `util::helper` through `use crate::util`
    assert ("tests/it.rs::it", "src/walk.rs::Walk.path") in edges  # `let w = Walk::new(..)`, the crate's name
    assert ("tests/it.rs::it", "src/walk.rs::Entry.path") not in edges


def test_calls_through_a_trait_link_to_the_trait() -> None:
    edges = _edges()
    assert ("src/walk.rs::Walk.run", "src/lib.rs::Visit.visit") in edges
    assert ("src/walk.rs::Walk.run", "src/walk.rs::Entry.visit") not in edges


def test_calls_into_other_crates_and_locals_link_nowhere() -> None:
    edges = _edges()
    new = {t for s, t in edges if s == "src/walk.rs::Walk.new"}
    assert new == {"src/walk.rs::Opts.new", "src/walk.rs::Walk"}  # not Box::new, io::Error::new
    assert ("src/walk.rs::Walk.run", "src/util.rs::push") not in edges  # `self.root.push`: a PathBuf's
    visit = {t for s, t in edges if s == "src/walk.rs::Entry.visit"}
    assert visit == {"src/util.rs::show"}  # `backtrace` is the local, not util's fn
