"""Java and TypeScript/JavaScript call links bound by scope and type, not by name
(generator/analyze/references_oo.py): the real parser's facts of small sources in, the call graph's edges
out. Every test below fails under name binding."""

from __future__ import annotations

from generator.analyze.facts import SourceFile
from generator.analyze.graph import build_graph
from generator.analyze.languages import detect_language
from generator.analyze.parse import extract

JAVA = {
    "src/main/java/p/Shape.java": """package p;
public abstract class Shape {
  public abstract double area();
  public String describe() { return "shape"; }
}
""",
    "src/main/java/p/Circle.java": """package p;
import static p.Util.check;
public class Circle extends Shape {
  private final Util util = new Util();
  public Circle() {}
  public double area() { return 1; }
  public String label() {
    check(true);
    this.util.log();
    return describe();
  }
  public static Circle unit() { return new Circle(); }
}
""",
    "src/main/java/p/Square.java": """package p;
public class Square extends Shape {
  public double area() { return 2; }
  public void log() {}
  public void add(String s) {}
}
""",
    "src/main/java/p/Util.java": """package p;
public final class Util {
  static void check(boolean b) {}
  void log() {}
}
""",
    "src/main/java/p/Names.java": """package p;
import java.lang.reflect.Type;
public final class Names {
  static String get(Class<?> c) { return ""; }
  static String get(String name, String... more) { return name; }
  static String get(Type t, String name) { return name; }
  static String probe() {
    get(String.class);
    return get((Type) null, "x");
  }
}
""",
    "src/test/java/p/CircleTest.java": """package p;
import java.util.ArrayList;
import java.util.List;
class CircleTest {
  void testArea() {
    Circle c = Circle.unit();
    c.area();
    Shape s = c;
    s.area();
    List<String> items = new ArrayList<>();
    items.add("x");
  }
}
""",
}

SCRIPTS = {
    "src/store.ts": """export class Store {
  get(): number { return 1 }
  reset(): void { this.get() }
}
export function make(): Store { return new Store() }
""",
    "src/other.ts": """export class Cache {
  get(): number { return 2 }
  reset(): void {}
}
export function helper() {}
""",
    "src/use.ts": """import { make, Store } from './store'
function run(s: Store, x: unknown) {
  s.get()
  x.reset()
  const c = make()
  c.reset()
}
function outer(helper: () => void) {
  helper()
}
""",
    "src/cli.js": """const { Store } = require('./store')
const store = new Store()
store.get()
function probe(o) {
  o.get()
}
""",
}


def _edges(sources: dict[str, str]) -> set[tuple[str, str]]:
    facts = []
    for path, text in sources.items():
        data = text.encode()
        facts.append(extract(SourceFile(path, detect_language(path), len(data), "0"), data))
    graph = build_graph(facts)
    return {(f"{s[0]}::{s[1]}", f"{t[0]}::{t[1]}") for s, targets in graph.calls.items() for t in targets}


def test_java_members_fields_static_imports_and_bases() -> None:
    edges = _edges(JAVA)
    label = {t for s, t in edges if s == "src/main/java/p/Circle.java::Circle.label"}
    assert label == {"src/main/java/p/Util.java::Util.check", "src/main/java/p/Util.java::Util.log",
                     "src/main/java/p/Shape.java::Shape.describe"}  # not Square's `log`
    assert ("src/main/java/p/Circle.java::Circle", "src/main/java/p/Shape.java::Shape") in edges
    assert ("src/main/java/p/Circle.java::Circle.unit", "src/main/java/p/Circle.java::Circle") in edges


def test_java_typed_locals_and_calls_through_a_base_type() -> None:
    test = {t for s, t in _edges(JAVA) if s == "src/test/java/p/CircleTest.java::CircleTest.testArea"}
    assert "src/main/java/p/Circle.java::Circle.unit" in test  # the same package in another source root
    assert "src/main/java/p/Circle.java::Circle.area" in test  # `Circle c`
    assert "src/main/java/p/Shape.java::Shape.area" in test  # `Shape s`: the declared type's method
    assert "src/main/java/p/Square.java::Square.area" not in test
    assert "src/main/java/p/Square.java::Square.add" not in test  # `items.add`: a java.util.List's


def test_java_overloads_by_the_arguments_number_and_shown_types() -> None:
    probe = {t for s, t in _edges(JAVA) if s == "src/main/java/p/Names.java::Names.probe"}
    names = "src/main/java/p/Names.java::Names"
    assert probe == {f"{names}.get", f"{names}.get~3"}  # each call its own overload, not get~2 too


def test_typescript_typed_parameters_results_and_this() -> None:
    edges = _edges(SCRIPTS)
    run = {t for s, t in edges if s == "src/use.ts::run"}
    # `s: Store`, `c = make()` (declared `: Store`); not Cache's `get`/`reset` (`x` has no known type)
    assert run == {"src/store.ts::Store", "src/store.ts::Store.get", "src/store.ts::make",
                   "src/store.ts::Store.reset"}
    assert ("src/store.ts::Store.reset", "src/store.ts::Store.get") in edges
    assert not {t for s, t in edges if s == "src/use.ts::outer"}  # the parameter, not other.ts's helper


def test_javascript_require_and_new() -> None:
    edges = _edges(SCRIPTS)
    assert {t for s, t in edges if s == "src/cli.js::"} == {"src/store.ts::Store", "src/store.ts::Store.get"}
    assert not {t for s, t in edges if s == "src/cli.js::probe"}  # `o` has no known type
