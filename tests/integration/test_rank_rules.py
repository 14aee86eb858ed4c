"""Ranking rules of issue 33, each through the real retrieval interface (an index built from a small
repository, asked through search_codebase / locate)."""

import pytest

from answer.answering.localize import locate
from answer.retrieval.tiers import Weights, rank_files, search_codebase
from generator.index.command import index_repository
from generator.index.store import open_index
from sourcebook.config import load_config


def _store(make_repo, files):
    root = make_repo(files)
    config = load_config(root)
    index_repository(config, embedder=None)
    return open_index(config)


def _php_class(name: str, body: str) -> str:
    return f"<?php\nnamespace Shop;\n\nclass {name}\n{{\n{body}}}\n"


def test_a_member_named_with_double_colons_is_the_dotted_symbol(make_repo):
    # two classes with a `get`: the question's `Registry::get` names one of them
    method = ("    public function get(string $name)\n    {\n        return $this->items[$name] ?? null;\n"
              "    }\n\n    public function add(string $name, $item)\n    {\n"
              "        $this->items[$name] = $item;\n    }\n")
    files = {"src/Registry.php": _php_class("Registry", method), "src/Pool.php": _php_class("Pool", method)}
    files |= {f"src/Util{i}.php": _php_class(f"Util{i}", f"    public function run{i}()\n    {{\n"
                                                          f"        return {i};\n    }}\n") for i in range(5)}
    store = _store(make_repo, files)
    found = locate(store, "Registry::get returns the wrong item for a name")
    assert found.files[0] == "src/Registry.php"
    assert (found.spans[0].path, found.spans[0].symbol) == ("src/Registry.php", "Registry.get")
    # written with dots it was found before; the scope separator now reads the same
    assert locate(store, "Registry.get returns the wrong item for a name").spans[0] == found.spans[0]


def test_every_ranked_file_names_its_best_span_even_outside_the_top_hits(make_repo):
    # one file holds many spans about draining buckets (they fill the overall top spans); another file
    # matches once, in a function whose name is none of the question's words
    body = "".join(f"    bucket.drain(tokens={n})\n    tokens = bucket.tokens - {n}\n" for n in range(12))
    crowd = "".join(f"def drain_bucket_{i}(bucket, tokens):\n{body}    return tokens\n\n\n"
                    for i in range(30))
    lone = ("import os\n\nLIMIT = 3\n\n\ndef helper():\n    return os.getcwd()\n\n\n"
            "def refill(bucket):\n    # drain the bucket's tokens then top it up\n    bucket.drain()\n"
            "    bucket.tokens = LIMIT\n")
    store = _store(make_repo, {"pkg/crowd.py": crowd, "pkg/lone.py": lone,
                               "pkg/other.py": "def unrelated():\n    return 1\n"})
    question = "drain the bucket tokens"
    result = search_codebase(store, question, "hybrid", limit=20)
    assert "pkg/lone.py" in [f.path for f in result.files]
    # none of pkg/lone.py's spans made the overall top
    assert all(h.path == "pkg/crowd.py" for h in result.hits)
    best = result.file_spans["pkg/lone.py"][0]
    assert best.start_line <= 10  # it holds refill()
    assert best.end_line >= 13
    found = locate(store, question)
    span = next(s for s in found.spans if s.path == "pkg/lone.py")
    assert (span.symbol, span.start_line, span.end_line) == ("refill", 10, 13)


def test_change_logs_and_configuration_rank_behind_the_code_unless_asked_for(make_repo):
    # the change log repeats the change's words, the CI workflow names the tool: the code is the answer
    code = ("def retry_upload(session, payload, attempts=3):\n    # retry the upload on a timeout\n"
            "    for _ in range(attempts):\n        if session.upload(payload):\n            return True\n"
            "    return False\n")
    files = {"uploader/retry.py": code,
             "CHANGELOG.md": ("# Changes\n\n## 2.1\n\n- Retry the upload on a timeout (retry_upload)\n"
                              "- Upload retry attempts configurable\n"),
             ".github/workflows/upload.yml": ("name: retry upload\non: [push]\njobs:\n  upload:\n"
                                              "    steps:\n      - run: retry upload attempts timeout\n")}
    files |= {f"uploader/part{i}.py": f"def part_{i}(data):\n    return data[{i}]\n" for i in range(5)}
    store = _store(make_repo, files)
    ranked = [f.path for f in rank_files(store, "Retry the upload on a timeout")]
    assert ranked[0] == "uploader/retry.py"
    flat = Weights(config_prior=1.0, changelog_prior=1.0)
    scores = {f.path: f.score for f in rank_files(store, "Retry the upload on a timeout")}
    unweighted = {f.path: f.score for f in rank_files(store, "Retry the upload on a timeout", weights=flat)}
    assert scores["CHANGELOG.md"] < unweighted["CHANGELOG.md"]
    assert scores[".github/workflows/upload.yml"] < unweighted[".github/workflows/upload.yml"]
    assert scores["uploader/retry.py"] == unweighted["uploader/retry.py"]
    # asked for, they are not held back
    asking = "which CI workflow and changelog entry mention the upload retry"
    asked = {f.path: f.score for f in rank_files(store, asking)}
    asked_flat = {f.path: f.score for f in rank_files(store, asking, weights=flat)}
    assert asked["CHANGELOG.md"] == asked_flat["CHANGELOG.md"]
    assert asked[".github/workflows/upload.yml"] == asked_flat[".github/workflows/upload.yml"]


def test_issue_references_and_links_are_not_search_terms(make_repo):
    # issue numbers and link words are in no code; a file that happens to hold them must not win
    files = {"net/timeouts.py": "def read_timeout(sock, seconds):\n    sock.settimeout(seconds)\n"
                                "    return sock.recv(1024)\n",
             "net/ports.py": "# github issues 2041 com\nKNOWN = {2041: 'github', 1984: 'issues'}\n"}
    store = _store(make_repo, files)
    question = "Fix read timeout (#2041), see https://github.com/acme/net/issues/1984"
    assert [f.path for f in rank_files(store, question)][:1] == ["net/timeouts.py"]
    assert "net/ports.py" not in [f.path for f in rank_files(store, question)]



def test_a_long_source_file_wins_a_tie_with_a_short_one(make_repo):
    # two files holding the same matching function word for word; one is a long file of the project's
    # work, the other that function alone. Without the length prior the short one leads (whole-file BM25
    # favours a short text, and the span lists tie); with it the long one does, and the short one (no
    # longer than the median source file) keeps its score
    match = ("def flush_pending_writes(queue):\n    # flush the pending writes of the queue\n"
             "    while queue:\n        queue.pop().write()\n")
    work = "".join(f"def step_{i}(value):\n    return value + {i}\n\n\n" for i in range(60))
    files = {"store/writer.py": work + match, "store/core.py": match}
    files |= {f"store/part{i}.py": f"def part_{i}(x):\n    y = x + 1\n    z = y * 2\n    return z - {i}\n"
              for i in range(5)}
    store = _store(make_repo, files)
    question = "flush the pending writes of the queue"
    flat = search_codebase(store, question, weights=Weights(length_prior=0.0)).files
    assert [f.path for f in flat][:2] == ["store/core.py", "store/writer.py"]
    lifted = search_codebase(store, question, weights=Weights(length_prior=0.1)).files
    assert [f.path for f in lifted][:2] == ["store/writer.py", "store/core.py"]
    assert {f.path: f.score for f in lifted}["store/core.py"] == flat[0].score
    # a question asking how the code works is not about where changes land: no length prior
    asking = "How are the pending writes of the queue flushed?"
    def ranked(strength: float) -> list[tuple[str, float]]:
        return [(f.path, f.score) for f in search_codebase(store, asking,
                                                           weights=Weights(length_prior=strength)).files]

    assert ranked(0.1) == ranked(0.0)


def test_tool_configuration_scripts_and_go_examples_rank_behind_the_product(make_repo):
    # a bundler's config script and an example program under Go's `_examples` spell the question's words
    # as well as the product's file does; the product's file is the answer
    files = {"src/compress.ts": ("export function minifyBundle(source: string): string {\n"
                                 "  // minify the bundle output\n  return source.trim()\n}\n"),
             "rollup.config.mjs": ("export default {\n  input: 'src/index.ts',\n"
                                   "  // minify the bundle output\n  plugins: [minifyBundle()],\n}\n"),
             "_examples/bundle/main.go": ("package main\n\n// minify the bundle output\n"
                                          "func minifyBundle() {}\n")}
    files |= {f"src/part{i}.ts": f"export function part{i}(x: number): number {{\n  return x + {i}\n}}\n"
              for i in range(5)}
    store = _store(make_repo, files)
    question = "Minify the bundle output"
    # the priors of the hand fusion, scores compared without the learned ranker (it re-assigns them)
    hand = Weights(ranker=False)
    flat = Weights(config_prior=1.0, aux_prior=1.0, ranker=False)
    scores = {f.path: f.score for f in rank_files(store, question, weights=hand)}
    unweighted = {f.path: f.score for f in rank_files(store, question, weights=flat)}
    assert scores["rollup.config.mjs"] < unweighted["rollup.config.mjs"]
    assert scores["_examples/bundle/main.go"] < unweighted["_examples/bundle/main.go"]
    assert rank_files(store, question, weights=hand)[0].path == "src/compress.ts"
    assert rank_files(store, question)[0].path == "src/compress.ts"
    # asked for, the configuration is not held back
    asking = "Minify the bundle output in the rollup configuration"
    assert ({f.path: f.score for f in rank_files(store, asking, weights=hand)}["rollup.config.mjs"]
            == {f.path: f.score for f in rank_files(store, asking, weights=flat)}["rollup.config.mjs"])


def test_a_task_holds_tests_and_docs_further_back_than_a_question_about_how_the_code_works(make_repo):
    # a change asks where to change the code; a question about how it works may be answered by a test or
    # by the documentation
    code = ("def bulk_discount(cart):\n    # round half cents down\n"
            "    return round(cart.total * cart.rate, 2)\n")
    test = "".join(f"def test_bulk_discount_rounds_half_cents_{i}(cart):\n"
                   f"    assert bulk_discount(cart) == {i}\n\n\n" for i in range(6))
    doc = "# Discounts\n\nA bulk discount rounds half cents down: the bulk discount of a cart.\n"
    files = {"shop/discount.py": code, "checks/test_discount_rules.py": test, "docs/discounts.md": doc}
    files |= {f"shop/part{i}.py": f"def part_{i}(order):\n    return order[{i}]\n" for i in range(5)}
    store = _store(make_repo, files)
    test_path = "checks/test_discount_rules.py"  # named like no source file: no subject to lift
    # the hand fusion's priors: without the learned ranker, which re-assigns scores by position
    w = Weights(ranker=False)
    flat = Weights(test_prior=1.0, task_test_prior=1.0, doc_prior=1.0, task_doc_prior=1.0, ranker=False)

    def prior(question: str, path: str) -> float:
        held = {f.path: f.score for f in rank_files(store, question, weights=w)}[path]
        return held / {f.path: f.score for f in rank_files(store, question, weights=flat)}[path]

    task, how = "Fix the bulk discount rounding of half cents", "How does the bulk discount round half cents?"
    assert prior(task, test_path) == pytest.approx(w.task_test_prior, abs=1e-4)
    assert prior(how, test_path) == pytest.approx(w.test_prior, abs=1e-4)
    assert prior(task, "docs/discounts.md") == pytest.approx(w.task_doc_prior, abs=1e-4)
    assert prior(how, "docs/discounts.md") == pytest.approx(w.doc_prior, abs=1e-4)
    # asked for, they are not held back at all
    assert prior("Fix the tests of the bulk discount rounding", test_path) == pytest.approx(1.0, abs=1e-4)
    asking = "Fix the docs of the bulk discount rounding"
    assert prior(asking, "docs/discounts.md") == pytest.approx(1.0, abs=1e-4)


def test_a_function_named_as_a_call_ranks_its_definition_over_the_tests(make_repo):
    # "test()" is the helper the change configures: a word only, it would ask for the test files
    helper = ("package app.testing\n\n"
              "fun Command.test(argv: String, env: Map<String, String> = emptyMap()): Result {\n"
              "    return run(argv.split(\" \"), env)\n}\n")
    tests = {f"tests/app/Feature{i}Test.kt": (f"package app\n\nclass Feature{i}Test {{\n"
                                              f"    fun `feature {i} configuration`() {{\n"
                                              f"        val more = Feature{i}().test(\"--more {i}\")\n"
                                              f"        check(more.configuration == {i})\n    }}\n}}\n")
             for i in range(3)}
    parts = {f"src/app/Part{i}.kt": f"package app\n\nfun part{i}(x: Int): Int = x + {i}\n" for i in range(4)}
    files = {"src/app/testing/Testing.kt": helper, **tests, **parts}
    store = _store(make_repo, files)
    ranked = [f.path for f in rank_files(store, "Add more configuration to test()")]
    assert ranked[0] == "src/app/testing/Testing.kt"
    # as a plain word the same request ranks the tests first (it asks about tests)
    assert rank_files(store, "Add more configuration to the test")[0].path.startswith("tests/")


def test_the_folder_a_leading_scope_names_ranks_first(make_repo):
    # the same words in two components; the message's scope says which one changed
    def render(kind: str, extra: int) -> str:
        return (f"export function render{kind}(node) {{\n  // clean up the styles of the node\n"
                f"  node.style = cleanStyles(node.style)\n  return node\n}}\n"
                + "".join(f"export const size{n} = {n}\n" for n in range(extra)))
    files = {"src/core/render.js": render("Core", 40),
             "src/widgets/render.js": render("Widget", 0),
             "test/render.test.js": "test('clean up styles', () => renderCore({style: 1}))\n",
             **{f"src/core/part{i}.js": f"export const part{i} = {i}\n" for i in range(4)}}
    store = _store(make_repo, files)
    assert rank_files(store, "clean up styles")[0].path == "src/core/render.js"
    assert Weights().scope_prior > 1.0
    flat, scoped = Weights(scope_prior=1.0), Weights(scope_prior=2.0)
    for question in ("widgets: clean up styles", "fix(widget): clean up styles", "[Widgets] clean up styles"):
        assert rank_files(store, question)[0].path == "src/widgets/render.js", question
        # the folder's code alone takes the prior: not the other folders, nor the tests
        unscoped = {f.path: f.score for f in rank_files(store, question, weights=flat)}
        lifted = {f.path: f.score for f in rank_files(store, question, weights=scoped)}
        widget = "src/widgets/render.js"
        assert lifted[widget] == pytest.approx(2 * unscoped[widget], abs=1e-5)
        assert lifted["src/core/render.js"] == unscoped["src/core/render.js"]
        assert lifted["test/render.test.js"] == unscoped["test/render.test.js"]
    # a scope naming no folder changes nothing
    assert rank_files(store, "fix: clean up styles")[0].path == "src/core/render.js"


def test_a_question_asking_for_an_example_ranks_the_example_over_the_product(make_repo):
    # the product and its example spell the same words; asked about the example, the example changed
    files = {"src/search.rb": ("class Search\n  # sign the request with the auth param\n"
                               "  def sign(request, auth)\n    request.merge(auth: auth)\n  end\nend\n"),
             "examples/amazon_search.rb": ("require 'search'\n\n# sign the request with the auth param\n"
                                           "def sign_request(request, auth)\n"
                                           "  Search.new.sign(request, auth)\nend\n")}
    files |= {f"src/part{i}.rb": f"def part_{i}(x)\n  x + {i}\nend\n" for i in range(5)}
    store = _store(make_repo, files)
    assert rank_files(store, "Sign the request with the auth param")[0].path == "src/search.rb"
    asking = "Fix the example: sign the request with the auth param"
    assert rank_files(store, asking)[0].path == "examples/amazon_search.rb"
    neutral = Weights(aux_asked_prior=1.0)
    lifted = {f.path: f.score for f in rank_files(store, asking)}
    unlifted = {f.path: f.score for f in rank_files(store, asking, weights=neutral)}
    example = "examples/amazon_search.rb"
    assert lifted[example] == pytest.approx(Weights().aux_asked_prior * unlifted[example], abs=1e-5)
    assert Weights().aux_asked_prior > 1.0
    assert lifted["src/search.rb"] == unlifted["src/search.rb"]
