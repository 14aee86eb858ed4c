from answer.retrieval.question import exact_phrases
from answer.retrieval.tiers import Weights, rank_files, search_codebase
from generator.index.command import index_repository
from generator.index.store import open_index
from sourcebook.config import load_config

REPORT = """Upgrading broke my script:

Traceback (most recent call last):
  File "/home/me/run.py", line 3, in <module>
ValueError: token bucket drained before refill
I don't know why it's empty, I call `limiter.take(5)` with 'burst' set.
"""


def test_exact_phrases_from_quotes_and_traceback_lines():
    assert exact_phrases(REPORT) == ["limiter.take(5)", "token bucket drained before refill"]
    assert exact_phrases('what does "parse" do?') == []  # a lone identifier is a name, not a phrase
    assert exact_phrases("why isn't it shown when it's off") == []  # apostrophes are not quotes


def test_a_quoted_error_message_finds_the_file_that_raises_it(make_repo):
    files = {f"pkg/mod{i}.py": f"def refill_{i}(bucket):\n    bucket.tokens += {i}\n    return bucket\n"
             for i in range(6)}
    files["pkg/limits.py"] = ("def take(bucket, n):\n    if bucket.tokens < n:\n"
                              "        raise ValueError('token bucket drained before refill')\n"
                              "    bucket.tokens -= n\n")
    root = make_repo(files)
    config = load_config(root)
    index_repository(config, embedder=None)
    store = open_index(config)
    question = "Traceback:\nValueError: token bucket drained before refill\nwhat refills it?"
    hits = search_codebase(store, question, "lexical").hits
    assert (hits[0].path, hits[0].start_line) == ("pkg/limits.py", 1)
    assert rank_files(store, question)[0].path == "pkg/limits.py"
    # the phrase list lifts it: its score falls without it
    score = rank_files(store, question)[0].score
    without = {f.path: f.score for f in rank_files(store, question, weights=Weights(phrases=0.0))}
    assert without["pkg/limits.py"] < score
