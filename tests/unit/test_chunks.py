from generator.analyze.facts import FileFacts, Heading, SourceFile, Symbol
from generator.index.chunks import MAX_LINES, chunk_file


def _facts(path, language, symbols=(), kind="code", headings=()):
    f = SourceFile(path=path, language=language, size=1, sha="x", kind=kind)
    return FileFacts(file=f, symbols=list(symbols), headings=list(headings))


def _sym(q, kind, start, end, parent=None):
    return Symbol(name=q.rsplit(".", 1)[-1], qualname=q, kind=kind, path="m.py", start_line=start,
                  end_line=end, signature=q, parent=parent)


def _covered(chunks):
    return [line for c in chunks for line in range(c.start_line, c.end_line + 1)]


def test_functions_become_chunks_and_every_line_is_covered_once():
    body = ["import os", "", "X = 1", ""]
    f1 = ["def a():"] + ["    x = 1"] * 20 + [""]
    f2 = ["def b():"] + ["    y = 2"] * 20
    lines = body + f1 + f2
    syms = [_sym("a", "function", 5, 25), _sym("b", "function", 27, 47)]
    chunks = chunk_file(_facts("m.py", "python", syms), "\n".join(lines) + "\n")
    assert [c.symbol for c in chunks] == ["", "a", "b"] or [c.symbol for c in chunks] == ["a", "b"]
    covered = _covered(chunks)
    assert len(covered) == len(set(covered))
    nonblank = {i + 1 for i, line in enumerate(lines) if line.strip()}
    assert nonblank <= set(covered)
    a = next(c for c in chunks if "a" in c.symbols)
    assert a.text.startswith(("import os", "def a():"))


def test_small_siblings_are_merged():
    lines = []
    syms = []
    for i in range(5):
        start = len(lines) + 1
        lines += [f"def f{i}():", "    return 1", ""]
        syms.append(_sym(f"f{i}", "function", start, start + 1))
    chunks = chunk_file(_facts("m.py", "python", syms), "\n".join(lines))
    assert len(chunks) == 1
    assert chunks[0].symbols == ("f0", "f1", "f2", "f3", "f4")


def test_big_class_is_split_into_members_and_long_function_at_boundaries():
    lines = ["class Big:", '    """Doc."""', ""]
    syms = [_sym("Big", "class", 1, 0)]
    for i in range(4):
        start = len(lines) + 1
        lines += [f"    def m{i}(self):"] + [f"        v{j} = {j}" for j in range(30)] + [""]
        syms.append(_sym(f"Big.m{i}", "method", start, start + 30, parent="Big"))
    start = len(lines) + 1
    long_body = [f"        w{j} = {j}" if j % 10 else "" for j in range(1, 200)]
    lines += ["    def huge(self):", *long_body]
    syms.append(_sym("Big.huge", "method", start, len(lines), parent="Big"))
    syms[0] = _sym("Big", "class", 1, len(lines))
    chunks = chunk_file(_facts("m.py", "python", syms), "\n".join(lines))
    assert all(c.end_line - c.start_line + 1 <= MAX_LINES for c in chunks)
    assert any(c.symbol == "Big.m0" or "Big.m0" in c.symbols for c in chunks)
    huge = [c for c in chunks if c.symbol == "Big.huge"]
    assert len(huge) >= 3
    covered = _covered(chunks)
    assert len(covered) == len(set(covered))


def test_markdown_split_by_heading_sections():
    sections = []
    for title in ("Intro", "Install", "Usage"):
        sections += [f"# {title}", ""] + [f"{title} text line {i}" for i in range(15)] + [""]
    chunks = chunk_file(_facts("README.md", "markdown", kind="doc"), "\n".join(sections))
    assert [c.symbol for c in chunks] == ["Intro", "Install", "Usage"]
    assert chunks[1].text.startswith("# Install")
    assert all(c.kind == "doc" for c in chunks)


def test_rst_headings_found_without_parse_headings_and_given_headings_used():
    text = "Title\n=====\n\n" + "\n".join(f"a{i}" for i in range(20)) + "\n\nPart\n----\n\n" + "\n".join(
        f"b{i}" for i in range(20))
    chunks = chunk_file(_facts("docs/x.rst", "rst", kind="doc"), text)
    assert [c.symbol for c in chunks] == ["Title", "Part"]
    given = _facts("docs/x.rst", "rst", kind="doc", headings=[Heading(1, "Title", 1), Heading(2, "Part", 24)])
    assert [c.symbol for c in chunk_file(given, text)] == ["Title", "Part"]


def test_unstructured_file_windows_and_empty_file():
    text = "\n".join(f"key{i} = {i}" for i in range(150))
    chunks = chunk_file(_facts("c.toml", "toml", kind="config"), text)
    assert len(chunks) >= 3
    assert chunks[0].start_line == 1
    assert chunks[-1].end_line == 150
    assert chunk_file(_facts("e.py", "python"), "\n\n  \n") == []


def test_minified_single_line_and_bad_symbol_lines_do_not_break_chunking():
    text = "var a=1;" * 50_000 + "\nconsole.log(a)\n"
    chunks = chunk_file(_facts("app.min.js", "javascript"), text)
    assert [c.start_line for c in chunks] == [1] or chunks[0].end_line <= 2
    assert all(len(c.text) <= 12_000 for c in chunks)
    bad = [_sym("ghost", "function", 50, 90), _sym("neg", "function", 3, 1)]
    chunks = chunk_file(_facts("m.py", "python", bad), "x = 1\ny = 2\n")
    assert [(c.start_line, c.end_line) for c in chunks] == [(1, 2)]
