from generator.index.tokens import identifiers, path_terms, query_terms, split_identifier, terms, token_text


def test_camel_and_snake_split_and_kept_whole():
    assert split_identifier("parseConfig") == ["parse", "config"]
    assert split_identifier("HTTPServerError") == ["http", "server", "error"]
    assert split_identifier("load_json_file") == ["load", "json", "file"]
    out = terms("DefaultJSONProvider parse_config")
    assert out[:4] == ["defaultjsonprovider", "default", "json", "provider"]
    assert "parse_config" in out
    assert "parse" in out
    assert "config" in out


def test_dotted_names_whole_and_split():
    out = terms("see flask.app.Flask for details")
    assert "flask.app.flask" in out
    assert {"flask", "app"} <= set(out)
    assert out.count("flask") == 2  # both components named flask


def test_plain_words_lowercased_and_unduplicated():
    assert terms("Load The Config") == ["load", "the", "config"]


def test_path_terms_have_segments_and_stems():
    out = path_terms("src/flask/json/tag.py")
    assert out[0] == "src/flask/json/tag.py"
    assert {"src", "flask", "json", "tag"} <= set(out)
    assert "py" not in out
    assert "my" in path_terms("my_pkg/x.py")
    assert "pkg" in path_terms("my_pkg/x.py")


def test_token_text_order_and_extra():
    text = token_text("def f(): pass", "a/b.py", ["Thing.run"])
    assert text.split()[:4] == ["a/b.py", "a", "b", "thing.run"]


def test_query_terms_drop_stop_words_but_never_everything():
    assert query_terms("How does the app load its config?") == ["app", "load", "config"]
    assert query_terms("what is the") == ["what", "is", "the"]
    assert query_terms("!!! ??? ...") == []


def test_identifiers_found_in_questions():
    ids = identifiers("Why does `send_file` call Flask.make_response and parseConfig, not config?")
    assert "send_file" in ids
    assert "Flask.make_response" in ids
    assert "parseConfig" in ids
    assert "config" not in ids


def test_non_ascii_and_long_tokens():
    assert "café" in terms("le café noir")
    long = "x" * 100
    assert long not in terms(long)
