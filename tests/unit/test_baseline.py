from collections import Counter

from answer.retrieval.baseline import MAX_BYTES, ranked, read_terms, text_terms


def test_ranked_by_bm25_over_whole_files_and_only_files_holding_a_term():
    docs = {"pkg/retry.py": text_terms("def backoff_delay(attempt):\n    return RETRY_BASE * attempt\n"),
            "pkg/parse.py": text_terms("def parse_header(line):\n    return line.split(':')\n"),
            "pkg/both.py": text_terms("# retry the parse\n" + "x = 1\n" * 50)}
    # identifiers are split into their parts, case folded: "backoff delay" finds backoff_delay
    assert ranked("Backoff delay on retry", docs) == ["pkg/retry.py", "pkg/both.py"]
    # a term in every file counts for little; a rare one decides, and a longer file is worth less per term
    assert ranked("parse the header", docs)[0] == "pkg/parse.py"
    assert ranked("nothing matches", docs) == []
    assert ranked("", docs) == []
    assert ranked("retry", {}) == []


def test_ties_keep_path_order():
    docs = {"b.py": Counter({"retry": 1}), "a.py": Counter({"retry": 1})}
    assert ranked("retry", docs) == ["a.py", "b.py"]


def test_read_terms_reads_only_what_a_search_of_the_checkout_can(tmp_path):
    root = tmp_path / "repo"
    root.mkdir()
    (root / "ok.py").write_text("def retry():\n    pass\n")
    (root / "big.txt").write_bytes(b"retry " * (MAX_BYTES // 6 + 1))
    outside = tmp_path / "secret.txt"
    outside.write_text("password retry\n")
    (root / "link.txt").symlink_to(outside)
    (root / "bad.py").write_bytes(b"def f():\n    return '\xff\xfe retry'\n")
    docs = read_terms(root, ["ok.py", "big.txt", "link.txt", "gone.py", "bad.py", "../secret.txt"])
    # too large, leading out of the checkout, vanished: left out; undecodable bytes replaced, not fatal
    assert sorted(docs) == ["bad.py", "ok.py"]
    assert docs["ok.py"]["retry"] == 1
    assert docs["bad.py"]["retry"] == 1
