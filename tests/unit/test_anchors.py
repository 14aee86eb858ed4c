from answer.answering.anchors import Anchor, anchor
from answer.answering.evidence import SymbolInfo
from answer.retrieval.tiers import SpanHit


def _sym(qualname, kind, start, end, path="a.py"):
    return SymbolInfo(path, qualname, qualname.rsplit(".", 1)[-1], kind, start, end, "", "")


def _span(start, end, symbol="", score=1.0):
    return SpanHit("a.py", start, end, score, ("lexical",), "", symbol)


SYMS = [_sym("Console", "class", 1, 80), _sym("Console.out", "method", 5, 9),
        _sym("Console.print", "method", 10, 40), _sym("helper", "function", 90, 95)]


def test_a_merged_chunk_anchors_on_the_function_holding_most_of_it():
    # the chunk names Console.out (its first definition) but is mostly Console.print
    got = anchor("a.py", [_span(5, 30, "Console.out")], SYMS)
    assert got == Anchor("a.py", "Console.print", (10, 40))


def test_the_files_other_spans_decide_between_the_functions_of_a_merged_chunk():
    # the merged chunk is mostly Console.print, but the file's next span is Console.out's own definition
    # (a symbol-name match): Console.out holds most of the file's span score
    spans = [_span(5, 30, "Console.out"), _span(5, 9, "Console.out", score=0.7)]
    assert anchor("a.py", spans, SYMS) == Anchor("a.py", "Console.out", (5, 9))
    # a weak second span does not outweigh the chunk
    weak = [_span(5, 30, "Console.out"), _span(5, 9, "Console.out", score=0.2)]
    assert anchor("a.py", weak, SYMS) == Anchor("a.py", "Console.print", (10, 40))
    # spans outside every function give nothing: the chunk alone decides
    assert anchor("a.py", [_span(5, 30), _span(85, 88, score=5.0)], SYMS).symbol == "Console.print"


def test_named_symbol_wins_and_class_lines_are_clipped_to_the_span():
    named = [_sym("helper", "function", 90, 95)]
    assert anchor("a.py", [_span(5, 30)], SYMS, named) == Anchor("a.py", "helper", (90, 95))
    # class-level lines between methods: the class, only where the span is
    assert anchor("a.py", [_span(60, 70)], SYMS) == Anchor("a.py", "Console", (60, 70))


def test_no_span_falls_back_to_a_definition_the_question_words_name():
    assert anchor("a.py", [], SYMS, terms=["print"]) == Anchor("a.py", "Console.print", (10, 40))
    assert anchor("a.py", [], SYMS, terms=["nothing"]) == Anchor("a.py")
    assert anchor("a.py", [_span(85, 88)], SYMS) == Anchor("a.py", "", (85, 88))


def test_get_answer_candidates_name_the_symbol_and_stay_inside_it(make_repo):
    from answer.answering.get_answer import AnswerContext, get_answer
    from generator.index.command import index_repository
    from sourcebook.config import load_config

    console = ("class Console:\n    def out(self, text):\n        return text\n\n"
               "    def print(self, *objects, sep=' '):\n        joined = sep.join(str(o) for o in objects)\n"
               "        return self.out(joined)\n")
    root = make_repo({"console.py": console, "other.py": "def unrelated():\n    return 1\n"})
    config = load_config(root)
    index_repository(config, embedder=None)
    reply = get_answer(AnswerContext(config, chat=None), "How does Console.print join its objects?")
    first = reply.candidates[0]
    assert (first.path, first.symbol, first.lines) == ("console.py", "Console.print", (5, 7))
    assert "Console.print" in reply.answer.splitlines()[1]  # the degraded summary leads with the symbol


CONSOLE = "\n".join([
    "class Console:",                       # 1
    "    def out(self, text):",             # 2
    "        self.file.write(text)",        # 3
    "",                                     # 4
    "    def print(self, *objects, sep):",  # 5
    "        joined = sep.join(objects)",   # 6
    "        self.out(joined)",             # 7
    "",                                     # 8
    "    def rule(self, title):",           # 9
    "        self.out(title.center(80))",   # 10
])
CONSOLE_SYMS = [_sym("Console", "class", 1, 10), _sym("Console.out", "method", 2, 3),
                _sym("Console.print", "method", 5, 7), _sym("Console.rule", "method", 9, 10)]


def test_the_function_whose_lines_match_the_question_wins_over_the_span_neighbour():
    # the best chunk starts at `out`, but only `print` joins objects with a separator
    query = ["join", "objects", "separator", "sep"]
    got = anchor("a.py", [_span(2, 4, "Console.out")], CONSOLE_SYMS, source=CONSOLE, query=query)
    assert got == Anchor("a.py", "Console.print", (5, 7))
    # no term matches any function: the best span's function, as before
    got = anchor("a.py", [_span(2, 4, "Console.out")], CONSOLE_SYMS, source=CONSOLE, query=["zebra"])
    assert got == Anchor("a.py", "Console.out", (2, 3))


def test_best_function_is_none_without_a_match():
    from answer.answering.anchors import best_function

    functions = [s for s in CONSOLE_SYMS if s.kind == "method"]
    assert best_function(functions, CONSOLE, ["zebra"]) is None
    assert best_function(functions, CONSOLE, ["center"]).qualname == "Console.rule"


def test_cited_lines_always_fall_inside_the_named_symbol():
    from answer.answering.anchors import clamp

    assert clamp(CONSOLE_SYMS[0], 0, 40) == (1, 10)
    assert clamp(CONSOLE_SYMS[2], 6, 9) == (6, 7)
    assert clamp(CONSOLE_SYMS[2], 20, 30) == (5, 7)  # disjoint: the whole symbol
    # every way of anchoring: a named symbol, a matched function, a span's function or class, a word
    cases = [
        anchor("a.py", [_span(1, 12)], CONSOLE_SYMS),
        anchor("a.py", [_span(0, 4)], CONSOLE_SYMS, source=CONSOLE, query=["center"]),
        anchor("a.py", [_span(4, 4)], CONSOLE_SYMS),
        anchor("a.py", [_span(8, 30)], CONSOLE_SYMS, named=[CONSOLE_SYMS[1]]),
        anchor("a.py", [], CONSOLE_SYMS, terms=["rule"]),
    ]
    by_name = {s.qualname: s for s in CONSOLE_SYMS}
    for got in cases:
        sym = by_name[got.symbol]
        assert sym.start_line <= got.lines[0] <= got.lines[1] <= sym.end_line, got


def test_rank_functions_orders_every_matching_function_and_leaves_out_the_rest():
    from answer.answering.anchors import rank_functions

    functions = [s for s in CONSOLE_SYMS if s.kind == "method"]
    ranked = [sym.qualname for _, sym in rank_functions(functions, CONSOLE, ["out", "joined"])]
    # print both joins and calls out; out and rule name `out` once each; nothing matches zebra
    assert ranked[0] == "Console.print"
    assert set(ranked) == {"Console.print", "Console.out", "Console.rule"}
    assert rank_functions(functions, CONSOLE, ["zebra"]) == []
    assert rank_functions(functions, "", ["out"]) == []


def test_anchors_in_names_the_anchor_then_the_runner_up_functions_with_their_own_lines():
    from answer.answering.anchors import anchors_in

    query = ["join", "objects", "sep", "center"]
    # print holds join, objects and sep; rule holds center; out none of them
    two = anchors_in("a.py", [], CONSOLE_SYMS, source=CONSOLE, query=query, count=2)
    assert two == [Anchor("a.py", "Console.print", (5, 7)), Anchor("a.py", "Console.rule", (9, 10))]
    # one asked for: the anchor alone, the same as `anchor` gives
    spans = [_span(2, 4, "Console.out")]
    one = anchors_in("a.py", spans, CONSOLE_SYMS, source=CONSOLE, query=query)
    assert one == [anchor("a.py", spans, CONSOLE_SYMS, source=CONSOLE, query=query)]
    # a symbol the question names leads; the best-matching function comes next, never the named one twice
    named = anchors_in("a.py", [], CONSOLE_SYMS, [CONSOLE_SYMS[1]], source=CONSOLE, query=["out"], count=3)
    assert named[0].symbol == "Console.out"
    assert len({a.symbol for a in named}) == len(named)
    # nothing else matches: only the anchor, never an empty list
    assert anchors_in("a.py", [], CONSOLE_SYMS, source=CONSOLE, query=["zebra"], count=2) == [Anchor("a.py")]
    for got in two + named:
        sym = {s.qualname: s for s in CONSOLE_SYMS}[got.symbol]
        assert sym.start_line <= got.lines[0] <= got.lines[1] <= sym.end_line


def test_a_named_class_anchors_on_its_best_matching_method():
    from answer.answering.anchors import anchors_in

    # "Make Console.rule center its title": the question names the class, the answer is a method of it
    query = ["console", "center", "title"]
    got = anchors_in("a.py", [_span(1, 10, "Console")], CONSOLE_SYMS, [CONSOLE_SYMS[0]], source=CONSOLE,
                     query=query, count=2)
    assert got[0] == Anchor("a.py", "Console.rule", (9, 10))
    assert all(a.symbol != "Console" for a in got)
    # no method of the class matches: the class itself, as before
    assert anchor("a.py", [], CONSOLE_SYMS, [CONSOLE_SYMS[0]], source=CONSOLE, query=["zebra"]) == \
        Anchor("a.py", "Console", (1, 10))


def test_a_named_struct_anchors_on_a_method_defined_away_from_it():
    # a Rust struct and its `impl` block, a Go struct and its receiver methods: the methods are not inside
    # the struct's lines, their qualnames are under its name
    source = "\n".join(["pub struct Walk {", "    depth: usize,", "}", "", "impl Walk {",
                        "    pub fn max_depth(mut self, depth: usize) -> Self {",
                        "        self.depth = depth;", "        self", "    }", "}", "",
                        "fn unrelated_depth() {}"])
    syms = [_sym("Walk", "struct", 1, 3, "a.rs"), _sym("Walk.max_depth", "method", 6, 9, "a.rs"),
            _sym("unrelated_depth", "function", 12, 12, "a.rs")]
    got = anchor("a.rs", [], syms, [syms[0]], source=source, query=["walk", "depth"])
    assert got == Anchor("a.rs", "Walk.max_depth", (6, 9))


def test_a_c_declaration_is_a_prototype_without_a_body():
    from answer.answering.evidence import is_declaration

    assert is_declaration("int ini_parse(const char* filename,\n              ini_handler handler);")
    assert is_declaration("void flush(); // writes the buffer")
    assert is_declaration("file_helper(const file_helper &) = delete;")
    assert not is_declaration("int pid() { return getpid(); }")
    assert not is_declaration("static int handler(void* user,")  # a definition's first line alone
    assert not is_declaration("")


def test_a_declarations_definition_is_the_related_function_with_a_body_elsewhere():
    from answer.answering.evidence import definition_of

    texts = {"os-inl.h": "void os::flush() {\n    fflush(f);\n}\n", "main.c": "static void flush(void);\n",
             "other.c": "void other::flush() {\n}\n"}
    syms = [_sym("os.flush", "method", 1, 3, "os-inl.h"), _sym("flush", "function", 1, 1, "main.c"),
            _sym("other.flush", "method", 1, 2, "other.c"), _sym("spdlog.os.flush", "method", 4, 4, "os.h")]
    # a method declared in its class (qualname under the namespace) and defined out of line: the definition
    # with a body, not the body-less one, not another class's method of the same name
    got = definition_of(Anchor("os.h", "spdlog.os.flush", (4, 4)), syms, texts)
    assert got is not None
    assert (got.path, got.qualname) == ("os-inl.h", "os.flush")
    assert definition_of(Anchor("os.h", "spdlog.os.close", (5, 5)), syms, texts) is None
    # a free function of the same name defines another function
    free = {"main.c": "static void flush(void) {\n}\n"}
    assert definition_of(Anchor("os.h", "spdlog.os.flush", (4, 4)), [syms[1]], free) is None
    assert definition_of(Anchor("main.h", "flush", (2, 2)), [syms[1]], free) == syms[1]


def test_a_method_declared_without_a_body_is_told_from_one_with_a_body():
    from answer.answering.evidence import declares_only

    declared = [
        "fun parse(text: String): T",  # a Kotlin interface's
        "    protected abstract fun load(name: String, strict: Boolean = false): Map<String, () -> Unit>",
        "abstract void run();",  # Java
        "@Deprecated\nString value() default \"{}\";",  # an annotation's element, its default no body
        "[Obsolete(\"use LoadAsync\")]\nTask LoadAsync(string name, int retries = 3);",  # C#
        "public function publicUrl(string $path, array $options = []): string;",  # PHP
        "  subscribe(listener: (state: T) => void): Unsubscribe;",  # TypeScript, a function-typed parameter
        "fn iter(&self) -> impl Iterator<Item = u8>;",  # a Rust trait's
        "Read(p []byte) (n int, err error)",  # a Go interface's
        "def reads(text: String): A",  # a Scala trait's
    ]
    with_body = [
        "fun isEmpty() = size == 0",  # an expression body is a body
        "fun name(): String = \"x\"",
        "override fun parse(text: String): T {\n    return decode(text)\n}",
        "public int size() { return n; }",
        "public int Count() => items.Count;",
        "public function publicUrl(string $path): string\n{\n    return $this->prefix . $path;\n}",
        "  setState = (partial: Partial<T>) => {\n    state = { ...state, ...partial }\n  }",
        "def reads(text: String): A = parse(text)",
        "fun x(): Int {  // }",
        "",
    ]
    assert [text for text in declared if not declares_only(text)] == []
    assert [text for text in with_body if declares_only(text)] == []


def test_comments_and_strings_are_left_out_in_one_pass():
    from answer.answering.evidence import code_only, declares_only

    assert code_only('int f(/* a */ "x{", \'}\') // c {\n  = 1;') == "int f( , ) \n  = 1;"
    assert code_only('x = "unclosed {\ny') == "x = \ny"  # an unclosed string ends with its line
    assert code_only("run(); /* unclosed { ") == "run(); "
    assert code_only('s = "a\\"b" + c') == "s =  + c"  # an escaped quote is inside the string
    # a hostile method line: an unclosed string full of escaped quotes was searched from every quote again
    # (quadratic: minutes for a megabyte); read once, it is a declaration with nothing after its string
    assert declares_only("void f() \"" + "a\\\"" * 300_000)


def test_functions_with_a_body_rank_before_declarations_in_a_file():
    from answer.answering.anchors import anchors_in

    # an abstract class: `load` matches the question best but declares only a signature
    source = "\n".join(["abstract class Cache {", "    abstract fun load(key: String, loader: Loader): Value",
                        "    fun cached(key: String): Value = values.getOrPut(key) { load(key, loader) }",
                        "    fun clear() { values.clear() }", "}"])
    syms = [_sym("Cache", "class", 1, 5, "c.kt"), _sym("Cache.load", "method", 2, 2, "c.kt"),
            _sym("Cache.cached", "method", 3, 3, "c.kt"), _sym("Cache.clear", "method", 4, 4, "c.kt")]
    query = ["load", "loader"]
    plain = anchors_in("c.kt", [], syms, source=source, query=query, count=2)
    assert [a.symbol for a in plain] == ["Cache.load", "Cache.cached"]
    bodies = anchors_in("c.kt", [], syms, source=source, query=query, count=2, bodiless={"Cache.load"})
    assert [a.symbol for a in bodies] == ["Cache.cached", "Cache.load"]
    # the question names the declaration: it leads
    named = anchors_in("c.kt", [], syms, [syms[1]], source=source, query=query, bodiless={"Cache.load"})
    assert named[0].symbol == "Cache.load"
    # spans alone decide (no query): a function with a body before a declaration the spans cover more of
    spans = [_span(2, 3), _span(2, 2)]
    assert anchors_in("c.kt", spans, syms, bodiless={"Cache.load"})[0].symbol == "Cache.cached"
    assert anchors_in("c.kt", spans, syms)[0].symbol == "Cache.load"


def test_a_declarations_candidate_slot_goes_to_the_top_files_next_function_with_a_body():
    from answer.answering.evidence import with_bodies_first

    chosen = [Anchor("I.kt", "I.load", (3, 3)), Anchor("I.kt", "I.save", (4, 4)),
              Anchor("A.kt", "A.load", (5, 9)), Anchor("B.kt", "B.read", (1, 4))]
    spare = [Anchor("I.kt", "I.describe", (6, 8)), Anchor("I.kt", "I.size", (9, 9))]
    bodiless = {"I.kt": {"I.load", "I.save", "I.size"}}
    got = with_bodies_first(chosen, spare, bodiless)
    # each declaration's place is taken in order by a spare with a body (one only: I.size has none), the
    # declarations come last
    assert got == [spare[0], chosen[2], chosen[3], chosen[0], chosen[1]]
    # one the question names keeps its place; nothing declared: unchanged
    assert with_bodies_first(chosen, spare, bodiless, {("I.kt", "I.load")})[:2] == [chosen[0], spare[0]]
    assert with_bodies_first(chosen, spare, {}) == chosen
