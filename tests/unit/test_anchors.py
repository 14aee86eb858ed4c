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
