"""Ruby, PHP, C#, Kotlin and C++ calls bound through the receiver's type
(generator/analyze/references_loose.py): the real parser's facts of small sources in, the call graph's
edges out. In each repository below two types define the called method's name, so name binding makes
the false edge these tests rule out."""

from __future__ import annotations

from generator.analyze.facts import SourceFile
from generator.analyze.graph import build_graph
from generator.analyze.languages import content_language, detect_language
from generator.analyze.parse import extract

RUBY = {
    "lib/shop/cart.rb": """require "shop/store"
module Shop
  class Cart < Base
    include Pricing
    def initialize
      @store = Store.new
    end
    def checkout(order)
      @store.save(order)
      self.total
      discount(order)
      Registry.lookup(order)
      order.save
      Ledger.new.flush
      order.audit
    end
    def total; end
  end
end
""",
    "lib/shop/store.rb": """module Shop
  class Base; end
  class Store
    def save(o); end
    def flush; end
  end
  class Ledger
    def save(o); end
    def flush; end
    def audit; end
  end
  module Pricing
    def discount; end
  end
  class Registry
    def self.lookup(o); end
  end
end
""",
}

PHP = {
    "src/Loader.php": """<?php
namespace App;
class Loader {
    public function load(): array { return []; }
}
class Cache {
    public function load(): array { return []; }
    public static function make(): self { return new self(); }
    public function warm(): void {}
}
""",
    "src/Dotenv.php": """<?php
namespace App;
use App\\Loader;
class Dotenv {
    public function __construct(private Loader $loader) {}
    public function boot(Loader $other, $unknown): array {
        $this->loader->load();
        $other->load();
        $unknown->load();
        $c = new Cache();
        $c->warm();
        Cache::make()->warm();
        return self::defaults();
    }
    private static function defaults(): array { return []; }
}
""",
}

CSHARP = {
    "src/Sinks.cs": """namespace Log.Sinks {
public class FileSink {
    public void Emit(string e) {}
    public void Flush() {}
}
public class ConsoleSink {
    public void Emit(string e) {}
    public void Flush() {}
}
}
""",
    "src/Logger.cs": """using Log.Sinks;
namespace Log {
public class Logger : LoggerBase {
    private readonly FileSink _sink;
    public Logger(FileSink sink) { _sink = sink; }
    public void Write(string e, ConsoleSink console, object other) {
        _sink.Emit(e);
        console.Flush();
        var s = new ConsoleSink();
        s.Emit(e);
        Reset();
        other.Flush();
    }
}
public class LoggerBase { protected void Reset() {} }
}
""",
}

KOTLIN = {
    "src/main/kotlin/cli/Options.kt": """package cli
class Options {
    fun check() {}
    fun parse() {}
}
class Flags {
    fun check() {}
    fun parse() {}
}
""",
    "src/main/kotlin/cli/Command.kt": """package cli
open class Base { fun help() {} }
class Command(private val options: Options) : Base() {
    private val flags: Flags = Flags()
    fun run(other: Flags, any: Any) {
        options.check()
        this.flags.parse()
        other.parse()
        val o = Options()
        o.check()
        help()
        any.check()
    }
}
""",
}

CPP = {
    "include/sink.h": """namespace log {
class file_sink {
public:
    void write(int m);
    void flush();
};
class null_sink {
public:
    void write(int m);
    void flush();
    int render(int m);
};
}
""",
    "include/logger.h": """#include "sink.h"
#include <memory>
namespace log {
class base {
public:
    base();
    void reset();
};
class logger : public base {
public:
    void log(int m, null_sink* other);
    void flush();
private:
    std::shared_ptr<file_sink> sink_;
};
}
""",
    "src/logger.cpp": """#include "logger.h"
namespace log {
void logger::log(int m, null_sink* other) {
    sink_->write(m);
    other->flush();
    file_sink local;
    local.flush();
    this->flush();
    reset();
    std::render(m);
}
void logger::flush() {}
}
""",
}


def _edges(sources: dict[str, str]) -> dict[str, set[str]]:
    facts = []
    for path, text in sources.items():
        data = text.encode()
        language = content_language(detect_language(path), path, data)  # a header with a namespace is C++
        facts.append(extract(SourceFile(path, language, len(data), "0"), data))
    out: dict[str, set[str]] = {}
    for s, targets in build_graph(facts).calls.items():
        out.setdefault(f"{s[0]}::{s[1]}", set()).update(f"{t[0]}::{t[1]}" for t in targets)
    return out


def test_ruby_instance_variables_self_mixins_constants_and_new() -> None:
    calls = _edges(RUBY)["lib/shop/cart.rb::Shop.Cart.checkout"]
    store = "lib/shop/store.rb::Shop"
    assert f"{store}.Store.save" in calls  # `@store = Store.new`
    assert "lib/shop/cart.rb::Shop.Cart.total" in calls  # `self.total`
    assert f"{store}.Pricing.discount" in calls  # a bare call into an included module
    assert f"{store}.Registry.lookup" in calls  # `Registry.lookup`: the class's own method
    assert f"{store}.Ledger.flush" in calls  # `Ledger.new.flush`
    assert f"{store}.Ledger.audit" in calls  # unknown receiver, but only Ledger defines `audit`
    assert f"{store}.Ledger.save" not in calls  # `order.save`: Store's or Ledger's, nobody knows
    assert f"{store}.Store.flush" not in calls


def test_php_promoted_and_typed_parameters_new_self_and_static_calls() -> None:
    calls = _edges(PHP)["src/Dotenv.php::Dotenv.boot"]
    assert "src/Loader.php::Loader.load" in calls  # `$this->loader` (promoted) and `Loader $other`
    assert "src/Loader.php::Cache.load" not in calls  # `$unknown->load()` binds to neither
    assert "src/Loader.php::Cache.warm" in calls  # `$c = new Cache()`, `Cache::make()` returning self
    assert "src/Loader.php::Cache.make" in calls
    assert "src/Dotenv.php::Dotenv.defaults" in calls  # `self::defaults()`


def test_csharp_fields_parameters_var_new_and_inherited_members() -> None:
    calls = _edges(CSHARP)["src/Logger.cs::Log.Logger.Write"]
    sinks = "src/Sinks.cs::Log.Sinks"
    assert {f"{sinks}.FileSink.Emit", f"{sinks}.ConsoleSink.Flush", f"{sinks}.ConsoleSink.Emit",
            "src/Logger.cs::Log.LoggerBase.Reset"} <= calls
    assert f"{sinks}.FileSink.Flush" not in calls  # `other.Flush()`: an object's, not a sink's


def test_kotlin_constructor_properties_typed_params_and_constructor_calls() -> None:
    calls = _edges(KOTLIN)["src/main/kotlin/cli/Command.kt::Command.run"]
    options, base = "src/main/kotlin/cli/Options.kt::", "src/main/kotlin/cli/Command.kt::Base.help"
    assert {f"{options}Options.check", f"{options}Flags.parse", base} <= calls
    # `options.check()`, `o.check()` are not Flags', `flags.parse()`, `other.parse()` not Options'
    assert f"{options}Flags.check" not in calls
    assert f"{options}Options.parse" not in calls


def test_kotlin_unknown_receiver_makes_no_edge() -> None:
    sources = dict(KOTLIN)
    sources["src/main/kotlin/cli/Probe.kt"] = "package cli\nfun probe(x: Any) { x.check() }\n"
    assert not _edges(sources).get("src/main/kotlin/cli/Probe.kt::probe", set())


def test_cpp_smart_pointer_members_pointers_locals_this_and_out_of_line_methods() -> None:
    calls = _edges(CPP)["src/logger.cpp::logger.log"]
    sink = "include/sink.h::log"
    assert {f"{sink}.file_sink.write", f"{sink}.null_sink.flush", f"{sink}.file_sink.flush",
            "include/logger.h::log.base.reset"} <= calls
    assert f"{sink}.null_sink.write" not in calls  # `sink_` points to a file_sink
    assert f"{sink}.null_sink.render" not in calls  # `std::render`: the standard library's
    assert any(c.endswith("logger.flush") for c in calls)  # `this->flush()`
    # a base class named is a use of the type, not a call of its constructor
    assert "include/logger.h::log.base.base" not in _edges(CPP).get("include/logger.h::log.logger", set())


def test_kotlin_extension_functions_bind_through_the_receiver_type() -> None:
    sources = {
        "src/main/kotlin/opt/Options.kt": """package opt
class RawOption
class RawArgument
fun option(): RawOption = RawOption()
fun argument(): RawArgument = RawArgument()
""",
        "src/main/kotlin/opt/Flags.kt": """package opt
fun RawOption.flag(): Boolean = true
fun RawArgument.flag(): Boolean = false
""",
        "src/main/kotlin/opt/Use.kt": """package opt
fun use() {
    option().flag()
}
""",
    }
    calls = _edges(sources)["src/main/kotlin/opt/Use.kt::use"]
    assert "src/main/kotlin/opt/Flags.kt::RawOption.flag" in calls  # each named by its receiver type
    assert "src/main/kotlin/opt/Flags.kt::RawArgument.flag" not in calls


def test_a_kotlin_extension_body_calls_its_receiver_types_members() -> None:
    sources = {
        "src/main/kotlin/core/Context.kt": """package core
class Context {
    fun echo(message: String) {}
    class Builder {
        fun close() {}
    }
}
""",
        "src/main/kotlin/core/Extensions.kt": """package core
fun Context.greet() {
    echo("hi")
}
fun Context.greetAgain() {
    this.echo("again")
}
val Context.Builder.done: Boolean get() { this.close(); return true }
""",
        "src/main/kotlin/other/Output.kt": """package other
fun echo(message: String) {}
fun close() {}
class Printer {
    fun echo(message: String) {}
    fun close() {}
}
""",
    }
    edges = _edges(sources)
    ext, echo = "src/main/kotlin/core/Extensions.kt", "src/main/kotlin/core/Context.kt::Context.echo"
    # the implicit receiver's member (`this` is a Context), not another package's function of that name
    for extension in ("Context.greet", "Context.greetAgain"):
        assert echo in edges[f"{ext}::{extension}"], extension
        assert "src/main/kotlin/other/Output.kt::echo" not in edges[f"{ext}::{extension}"]
    assert "src/main/kotlin/core/Context.kt::Context.Builder.close" in edges[f"{ext}::Context.Builder.done"]


def test_ruby_kernel_and_php_functions_never_link_to_a_method_by_name() -> None:
    sources = {
        "lib/a/recursive.rb": """module A
  class Recursive
    def include(path); end
  end
end
""",
        "lib/a/request.rb": """require "a/recursive"
module A
  class Request
    include Helpers
  end
end
""",
        "src/Str.php": """<?php
class Str {
    public function trimmed(): string { return ''; }
}
function caller() { return trimmed(); }
""",
    }
    edges = _edges(sources)
    assert "lib/a/recursive.rb::A.Recursive.include" not in edges.get("lib/a/request.rb::A.Request", set())
    assert not edges.get("src/Str.php::caller")


def test_csharp_extension_methods_and_types_from_outside_the_repository() -> None:
    sources = {
        "src/App.cs": """namespace Cli {
public class Parser {
    public static Parser Default { get; }
}
public static class ParserExtensions {
    public static int ParseArguments(this Parser parser) { return 0; }
}
public static class Sequence {
    public static int Repeat(int n) { return n; }
}
public class App {
    public void Main() {
        Parser.Default.ParseArguments();
        Enumerable.Repeat(1);
    }
}
}
""",
    }
    calls = _edges(sources)["src/App.cs::Cli.App.Main"]
    assert "src/App.cs::Cli.ParserExtensions.ParseArguments" in calls  # `this Parser`: Parser's
    assert "src/App.cs::Cli.Sequence.Repeat" not in calls  # System.Linq's Enumerable, not the repository's


def test_an_unknown_receiver_and_a_name_both_a_method_and_an_extension_of_another_type() -> None:
    sources = {
        "src/main/kotlin/run/Parser.kt": """package run
object Parser {
    fun main(argv: List<String>) {}
    fun tokenize(argv: String) {}
}
""",
        "src/main/kotlin/run/Command.kt": """package run
class Command
fun Command.main(argv: List<String>) {}
fun Parser.tokenize() {}
""",
        "src/main/kotlin/run/Use.kt": """package run
fun use(x: Any) {
    x.dummy().main(listOf())
    x.dummy().tokenize("a")
}
""",
    }
    calls = _edges(sources).get("src/main/kotlin/run/Use.kt::use", set())
    assert "src/main/kotlin/run/Parser.kt::Parser.main" not in calls  # or Command's extension `main`
    assert "src/main/kotlin/run/Parser.kt::Parser.tokenize" in calls  # its extension is Parser's too


def test_a_type_named_in_two_projects_is_the_nearest_one() -> None:
    helper = "namespace Tests {{ public static class Some {{ public static int {}() {{ return 0; }} }} }}\n"
    sources = {
        "test/Unit/Support/Some.cs": helper.format("Text"),
        "test/Perf/Support/Some.cs": helper.format("Text"),
        "test/Unit/Core/SinkTests.cs": """namespace Tests {
public class SinkTests {
    public void Emits() { Some.Text(); }
}
}
""",
    }
    calls = _edges(sources)["test/Unit/Core/SinkTests.cs::Tests.SinkTests.Emits"]
    assert calls == {"test/Unit/Support/Some.cs::Tests.Some.Text"}  # not the performance suite's
