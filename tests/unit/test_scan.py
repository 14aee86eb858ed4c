"""scan: which files are read, which are skipped and why, in git work trees and plain directories."""

from __future__ import annotations

import hashlib
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from generator.analyze import scan as scan_mod
from generator.analyze.scan import classify_content, decode, file_kind, read_source, scan
from sourcebook.config import Config
from sourcebook.errors import AccessError, NotFoundError

MakeRepo = Callable[..., Path]


def _config(root: Path, **kw: object) -> Config:
    kw.setdefault("out_dir", root / ".sourcebook")
    return Config(root=root, **kw)  # type: ignore[arg-type]


def _paths(root: Path, **kw: object) -> list[str]:
    return [f.path for f in scan(_config(root, **kw)).files]


def _reasons(root: Path, **kw: object) -> dict[str, str]:
    return {s.path: s.reason for s in scan(_config(root, **kw)).skipped}


def _git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env={**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e"})


def test_git_repo_lists_tracked_and_untracked_but_not_ignored(make_repo: MakeRepo) -> None:
    root = make_repo({
        ".gitignore": "ignored.py\nsecret/\n",
        "tracked.py": "x = 1\n",
        "pkg/mod.py": "y = 2\n",
        "ignored.py": "z = 3\n",
        "secret/key.py": "k = 4\n",
        "README.md": "# Hi\n",
    })
    _git(root, "init", "-q")
    _git(root, "add", "tracked.py", ".gitignore")
    _git(root, "commit", "-q", "-m", "init")
    (root / "untracked.py").write_text("u = 5\n")
    result = scan(_config(root))
    assert result.mode == "git"
    assert [f.path for f in result.files] == ["README.md", "pkg/mod.py", "tracked.py", "untracked.py"]
    # .gitignore has no known language: recorded, not read
    assert {s.path: s.reason for s in result.skipped} == {".gitignore": "unsupported type"}


def test_subdirectory_of_a_git_repo_and_ignored_subdirectory(make_repo: MakeRepo) -> None:
    root = make_repo({".gitignore": "vendored_checkout/\n", "top.py": "", "sub/a.py": "", "sub/in/b.py": "",
                      "vendored_checkout/c.py": "", "vendored_checkout/d/e.py": ""})
    _git(root, "init", "-q")
    sub = scan(_config(root / "sub"))
    assert (sub.mode, [f.path for f in sub.files]) == ("git", ["a.py", "in/b.py"])
    ignored = scan(_config(root / "vendored_checkout"))
    assert (ignored.mode, [f.path for f in ignored.files]) == ("walk", ["c.py", "d/e.py"])


def test_git_tracked_file_deleted_from_disk_is_skipped(make_repo: MakeRepo) -> None:
    root = make_repo({"a.py": "a = 1\n", "b.py": "b = 1\n"})
    _git(root, "init", "-q")
    _git(root, "add", "a.py", "b.py")
    (root / "b.py").unlink()
    assert _paths(root) == ["a.py"]
    assert _reasons(root) == {"b.py": "missing from disk"}


def test_plain_dir_honours_nested_gitignore(make_repo: MakeRepo) -> None:
    root = make_repo({
        ".gitignore": "*.log.py\nout/\n",
        "keep.py": "",
        "debug.log.py": "",
        "out/gen.py": "",
        "sub/.gitignore": "local.py\n!important.log.py\n",
        "sub/local.py": "",
        "sub/important.log.py": "",
        "sub/other.py": "",
        "other/local.py": "",
    })
    result = scan(_config(root))
    assert result.mode == "walk"
    assert [f.path for f in result.files] == [
        "keep.py", "other/local.py", "sub/important.log.py", "sub/other.py"]


def test_hash_language_and_kind(make_repo: MakeRepo) -> None:
    root = make_repo({
        "src/app.py": "print('hi')\n",
        "tests/test_app.py": "def test(): pass\n",
        "web/button.test.ts": "it('x', () => {})\n",
        "web/button.ts": "export const b = 1\n",
        "pkg/a_test.go": "package pkg\n",
        "java/FooTest.java": "class FooTest {}\n",
        "docs/guide.md": "# Guide\n",
        "pyproject.toml": "[project]\n",
        "conf.yaml": "a: 1\n",
    })
    files = {f.path: f for f in scan(_config(root)).files}
    app = files["src/app.py"]
    assert app.language == "python"
    assert app.kind == "code"
    assert app.size == len(b"print('hi')\n")
    assert app.sha == hashlib.sha256(b"print('hi')\n").hexdigest()
    assert {p: f.kind for p, f in files.items()} == {
        "src/app.py": "code", "tests/test_app.py": "test", "web/button.test.ts": "test",
        "web/button.ts": "code", "pkg/a_test.go": "test", "java/FooTest.java": "test",
        "docs/guide.md": "doc", "pyproject.toml": "config", "conf.yaml": "config",
    }
    assert files["web/button.ts"].language == "typescript"


def test_a_dotnet_test_project_holds_tests_whatever_their_names() -> None:
    # .NET test projects are named after the project they test: `<Project>.Tests` and its kin
    assert file_kind("Src/Newtonsoft.Json.Tests/Serialization/PopulateTests.cs", "csharp") == "test"
    assert file_kind("src/FluentValidation.Tests/EmptyTester.cs", "csharp") == "test"
    assert file_kind("src/App.UnitTests/Fixtures/Person.cs", "csharp") == "test"
    assert file_kind("tests/Lib.IntegrationTests/Setup.cs", "csharp") == "test"
    # the project itself, its benchmarks, and a name merely ending in "test" stay code
    assert file_kind("src/FluentValidation/AbstractValidator.cs", "csharp") == "code"
    assert file_kind("src/FluentValidation.Tests.Benchmarks/DataSet.cs", "csharp") == "code"
    assert file_kind("src/Contest/Entry.cs", "csharp") == "code"
    assert file_kind("src/latest/Entry.cs", "csharp") == "code"


def test_a_php_package_tests_folder_holds_tests_in_any_case(make_repo: MakeRepo) -> None:
    # PSR-4 folders follow namespaces: a Symfony-style package keeps tests, fixtures and helpers in `Tests/`
    root = make_repo({
        "Command/Command.php": "<?php\nnamespace Acme\\Console\\Command;\nclass Command {}\n",
        "Tests/Command/CommandTest.php": "<?php\nclass CommandTest {}\n",
        "Tests/Fixtures/DummyCommand.php": "<?php\nclass DummyCommand {}\n",
        "Tests/Fixtures/application_1.json": "{}\n",
        "src/Monolog/Test/TestCase.php": "<?php\nnamespace Monolog\\Test;\nclass TestCase {}\n",
        "lib/Specs/Schema.php": "<?php\nclass Schema {}\n",
    })
    kinds = {f.path: f.kind for f in scan(_config(root)).files}
    assert kinds["Command/Command.php"] == "code"
    assert kinds["Tests/Command/CommandTest.php"] == "test"
    assert kinds["Tests/Fixtures/DummyCommand.php"] == "test"  # was product code: no name marks it a test
    assert kinds["lib/Specs/Schema.php"] == "test"
    # configuration stays configuration wherever it lies; a shipped `Test` namespace is the package's code
    assert kinds["Tests/Fixtures/application_1.json"] == "config"
    assert kinds["src/Monolog/Test/TestCase.php"] == "code"
    assert file_kind("src/Testsuite/Runner.php", "php") == "code"


def test_file_kind_does_not_call_library_module_testing_a_test() -> None:
    assert file_kind("src/flask/testing.py", "python") == "code"
    assert file_kind("tests/README.md", "markdown") == "doc"
    assert file_kind("tests/conftest.py", "python") == "test"


def test_binary_file_is_skipped(make_repo: MakeRepo) -> None:
    root = make_repo({"data.py": b"x = 1\n\x00\x01\x02", "ok.py": "x = 1\n", "logo.png": b"\x89PNG\x00"})
    assert _paths(root) == ["ok.py"]
    assert _reasons(root) == {"data.py": "binary", "logo.png": "unsupported type"}


def test_50mb_sparse_file_is_skipped_without_reading(make_repo: MakeRepo,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo({"small.py": "x = 1\n"})
    big = root / "huge.py"
    subprocess.run(["truncate", "-s", "50M", str(big)], check=True)
    opened: list[str] = []
    real_open = open

    def spy_open(file: object, *args: object, **kwargs: object) -> object:
        opened.append(str(file))
        return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr(scan_mod, "open", spy_open, raising=False)
    result = scan(_config(root))
    assert [f.path for f in result.files] == ["small.py"]
    assert {s.path: s.reason for s in result.skipped} == {"huge.py": "too large"}
    assert str(big) not in opened
    assert str(root / "small.py") in opened


def test_size_limit_is_configurable(make_repo: MakeRepo) -> None:
    root = make_repo({"a.py": "x" * 100, "b.py": "x" * 10})
    assert _paths(root, max_file_bytes=50) == ["b.py"]
    assert _paths(root, max_file_bytes=100) == ["a.py", "b.py"]


def test_invalid_utf8_is_accepted_and_decoded_with_replacement(make_repo: MakeRepo) -> None:
    raw = b"name = '\xff\xfe caf\xc3\xa9'\n"
    root = make_repo({"bad.py": raw})
    assert _paths(root) == ["bad.py"]
    text = decode(read_source(root, "bad.py"))
    assert "\ufffd" in text
    assert "café" in text


def test_decode_strips_bom_and_normalises_line_endings() -> None:
    assert decode(b"\xef\xbb\xbfx = 1\r\ny = 2\r\n") == "x = 1\ny = 2\n"
    assert decode(b"a\rb\r\nc") == "a\rb\nc"  # a lone CR is not a line break for tree-sitter either
    assert decode(b"") == ""


def test_bom_and_crlf_files_are_scanned_with_raw_hash(make_repo: MakeRepo) -> None:
    raw = b"\xef\xbb\xbf# t\r\nx = 1\r\n"
    root = make_repo({"bom.py": raw})
    (f,) = scan(_config(root)).files
    assert f.sha == hashlib.sha256(raw).hexdigest()
    assert decode(read_source(root, f.path)) == "# t\nx = 1\n"


@pytest.mark.parametrize("use_git", [False, True])
def test_odd_file_names(make_repo: MakeRepo, use_git: bool) -> None:
    names = ["with space.py", "ünïcödé.py", "hash#tag.py", "br[ack]ets.py", "dir with space/x.py"]
    root = make_repo(dict.fromkeys(names, "x = 1\n"))
    if use_git:
        _git(root, "init", "-q")
        _git(root, "add", "--", *names)
    assert _paths(root) == sorted(names)
    for name in names:
        assert read_source(root, name) == b"x = 1\n"


@pytest.mark.parametrize("use_git", [False, True])
def test_symlinks(make_repo: MakeRepo, tmp_path: Path, use_git: bool) -> None:
    outside = tmp_path / "outside.py"
    outside.write_text("secret = 1\n")
    root = make_repo({"real.py": "x = 1\n", "pkg/inner.py": "y = 1\n"})
    (root / "loop_a.py").symlink_to("loop_b.py")
    (root / "loop_b.py").symlink_to("loop_a.py")
    (root / "escape.py").symlink_to(outside)
    (root / "alias.py").symlink_to("real.py")
    (root / "dangling.py").symlink_to("nowhere.py")
    (root / "pkglink").symlink_to("pkg")
    if use_git:
        _git(root, "init", "-q")
    result = scan(_config(root))
    assert [f.path for f in result.files] == ["alias.py", "pkg/inner.py", "real.py"]
    reasons = {s.path: s.reason for s in result.skipped}
    assert reasons["loop_a.py"] == "symlink loop"
    assert reasons["loop_b.py"] == "symlink loop"
    assert reasons["escape.py"] == "symlink outside repository"
    assert reasons["dangling.py"] == "broken symlink"
    assert "pkglink" in reasons  # a directory link is not followed (git does not either)


def test_read_source_refuses_paths_outside_the_repository(make_repo: MakeRepo, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("s")
    root = make_repo({"a.py": "x"})
    (root / "escape.txt").symlink_to(tmp_path / "secret.txt")
    with pytest.raises(AccessError):
        read_source(root, "../secret.txt")
    with pytest.raises(AccessError):
        read_source(root, "escape.txt")
    with pytest.raises(NotFoundError):
        read_source(root, "missing.py")


def test_vendored_dirs_and_lock_and_minified_files(make_repo: MakeRepo) -> None:
    root = make_repo({
        "app.js": "x()\n",
        "node_modules/lib/index.js": "y()\n",
        "node_modules/lib/other.js": "y()\n",
        "web/vendor/jquery.js": "z()\n",
        "src/pip/_vendor/rich/console.py": "c = 1\n",
        "lib/botocore/vendored/six.py": "s = 1\n",
        "dist/bundle.js": "b()\n",
        "build/out.py": "b = 1\n",
        "third_party/dep.c": "int x;\n",
        ".venv/lib/site.py": "v = 1\n",
        "static/app.min.js": "a()\n",
        "static/app.min.css": "a{}\n",
        "package-lock.json": "{}\n",
        "uv.lock": "x\n",
        "Cargo.lock": "x\n",
        "go.sum": "x\n",
        "poetry.lock": "x\n",
    })
    for use_git in (False, True):
        if use_git:
            _git(root, "init", "-q")
            _git(root, "add", "-f", ".")
        result = scan(_config(root))
        assert [f.path for f in result.files] == ["app.js"], use_git
        assert {s.path: s.reason for s in result.skipped} == {
            "node_modules/": "vendored or generated",
            "web/vendor/": "vendored or generated",
            "src/pip/_vendor/": "vendored or generated",
            "lib/botocore/vendored/": "vendored or generated",
            "dist/": "vendored or generated",
            "build/": "vendored or generated",
            "third_party/": "vendored or generated",
            ".venv/": "vendored or generated",
            "static/app.min.js": "minified",
            "static/app.min.css": "minified",
            "package-lock.json": "lock file",
            "uv.lock": "lock file",
            "Cargo.lock": "lock file",
            "go.sum": "lock file",
            "poetry.lock": "lock file",
        }, use_git


def test_generated_files_are_skipped_by_name_and_marker(make_repo: MakeRepo) -> None:
    root = make_repo({
        "api/service_pb2.py": "x = 1\n",
        "api/service.pb.go": "package api\n",
        "gen/models.go": "// Code generated by sqlc. DO NOT EDIT.\n\npackage gen\n",
        "gen/schema.ts": "/* @generated */\nexport const x = 1\n",
        "real.go": "// Package real is hand written; generated code lives elsewhere.\npackage real\n",
    })
    assert _paths(root) == ["real.go"]
    assert set(_reasons(root).values()) == {"generated"}


def _packed_js(n: int) -> str:
    """Minifier-shaped JS: short names, no spaces, statements run together on lines of ~500 characters."""
    parts = [f"function a{i}(b,c){{var d=b[c]||{i};return d===null?c:a{i + 1}(d,c+1)}}" for i in range(n)]
    return "\n".join(";".join(parts[k:k + 8]) for k in range(0, n, 8)) + "\n"


def test_minified_js_and_css_under_plain_names_are_skipped_by_their_content(make_repo: MakeRepo) -> None:
    """A website's `prettify.js` is minified under its plain name: most of its head is on long lines of
    packed code. Ordinary code with a long line of data (an SVG path, a table of weights) is kept."""
    license_banner = "/*! Pretty printer v2 | (c) its authors | Apache-2.0 */\n"
    css_rules = "".join(f".c{i}>li+a:hover{{margin:0 {i}px;color:#{i:03d}}}" for i in range(150))
    svg_path = "M12,2C6.48,2,2,6.48,2,12s4.48,10,10,10,10-4.48,10-10S17.52,2,12,2Z" * 40
    weights = "{" + ",".join(f'"k{i}":{i * 37 - 900}' for i in range(400)) + "}"
    root = make_repo({
        "website/static/prettify.js": license_banner + _packed_js(80),
        "website/static/theme.css": license_banner + css_rules + "\n",
        "src/icon.jsx": ("export const Icon = (props) => (\n  <svg viewBox=\"0 0 24 24\" {...props}>\n"
                         f"    <path d=\"{svg_path}\" />\n  </svg>\n)\n"),
        "src/segmenter.js": ("// a segmenter and its learned weights\nexport function score(word) {\n"
                             f"  const weights = {weights};\n  return weights[word] || 0;\n}}\n"),
        "src/small.js": _packed_js(2),  # one short packed line: too little to judge, kept
        "src/Packed.java": _packed_js(80),  # Java is not shipped minified: the rule is JS's and CSS's
        "src/app.js": "".join(f"export function handler{i}(request, response) {{\n"
                              f"  return response.send(request.body.items[{i}]);\n}}\n\n" for i in range(80)),
    })
    reasons = _reasons(root)
    assert reasons["website/static/prettify.js"] == "minified"
    assert reasons["website/static/theme.css"] == "minified"
    assert _paths(root) == ["src/Packed.java", "src/app.js", "src/icon.jsx", "src/segmenter.js",
                            "src/small.js"]
    packed = (license_banner + _packed_js(80)).encode()
    assert classify_content("website/static/prettify.js", packed) == (None, "minified")
    assert classify_content("src/Packed.java", packed)[1] is None


def test_generated_api_documentation_is_skipped_by_its_header(make_repo: MakeRepo) -> None:
    # a project website holding an old release's javadoc: every page repeats the code's names
    root = make_repo({
        "site/1.x/lib/Client.html": ('<!DOCTYPE HTML PUBLIC "-//W3C//DTD HTML 4.01 Transitional//EN">\n'
                                     "<!-- NewPage -->\n<html lang=\"en\">\n<head>\n"
                                     "<!-- Generated by javadoc (1.8.0_25) on Wed Jan 07 2015 -->\n"
                                     "<title>Client</title>\n"),
        "site/1.x/lib/stylesheet.css": "/* Javadoc style sheet */\nbody { color: #353833; }\n",
        "apidoc/html/index.html": "<html><head>\n<!-- Generated by Doxygen 1.9.1 -->\n<title>x</title>\n",
        "site/index.html": "<html><head><title>Client</title></head><body>Docs by javadoc.</body></html>\n",
        "site/app.css": "body { font-family: sans-serif; }\n",
        # a source file mentioning the generator keeps its place: the markers are read in HTML and CSS only
        "src/Doc.java": "// Generated by javadoc? No: it names the javadoc style sheet.\nclass Doc {}\n",
    })
    assert _paths(root) == ["site/app.css", "site/index.html", "src/Doc.java"]
    assert set(_reasons(root).values()) == {"generated"}
    assert classify_content("site/1.x/lib/stylesheet.css", b"/* Javadoc style sheet */\n") == (
        None, "generated")


def test_output_dir_is_never_scanned(make_repo: MakeRepo) -> None:
    root = make_repo({"a.py": "", ".sourcebook/docs/files/a.py.md": "# a\n", "site/x.md": "# x\n"})
    assert _paths(root) == ["a.py", "site/x.md"]
    # a custom output dir is skipped, and so is an old build under the default name
    assert _paths(root, out_dir=root / "site") == ["a.py"]
    _git(root, "init", "-q")
    assert _paths(root) == ["a.py", "site/x.md"]
    assert _paths(root, out_dir=root / "site") == ["a.py"]


def test_include_and_exclude_globs(make_repo: MakeRepo) -> None:
    root = make_repo({
        "src/pkg/a.py": "", "src/pkg/gen_b.py": "", "src/other.go": "", "tests/test_a.py": "",
        "README.md": "",
    })
    assert _paths(root, include=("src/",)) == ["src/other.go", "src/pkg/a.py", "src/pkg/gen_b.py"]
    assert _paths(root, include=("*.py",), exclude=("gen_*", "tests/")) == ["src/pkg/a.py"]
    reasons = _reasons(root, include=("*.py",), exclude=("gen_*",))
    assert reasons == {"src/pkg/gen_b.py": "excluded by config", "src/other.go": "not matched by include",
                       "README.md": "not matched by include"}


@pytest.mark.parametrize("use_git", [False, True])
def test_empty_repository(make_repo: MakeRepo, use_git: bool) -> None:
    root = make_repo({})
    if use_git:
        _git(root, "init", "-q")
    result = scan(_config(root))
    assert result.files == []
    assert result.skipped == []


def test_empty_file_is_accepted(make_repo: MakeRepo) -> None:
    root = make_repo({"empty.py": ""})
    (f,) = scan(_config(root)).files
    assert f.size == 0
    assert f.sha == hashlib.sha256(b"").hexdigest()


def test_unreadable_file_is_skipped(make_repo: MakeRepo, monkeypatch: pytest.MonkeyPatch) -> None:
    root = make_repo({"secret.py": "x = 1\n", "ok.py": ""})
    if os.geteuid() == 0:
        # root reads files regardless of mode bits: make open() fail the way it does for other users
        real_open = open

        def deny(file: object, *args: object, **kwargs: object) -> object:
            if str(file).endswith("secret.py"):
                raise PermissionError(13, "Permission denied", str(file))
            return real_open(file, *args, **kwargs)  # type: ignore[call-overload]

        monkeypatch.setattr(scan_mod, "open", deny, raising=False)
    (root / "secret.py").chmod(0)
    try:
        assert _paths(root) == ["ok.py"]
        assert _reasons(root) == {"secret.py": "unreadable: Permission denied"}
    finally:
        (root / "secret.py").chmod(0o644)


def test_fifo_is_not_read(make_repo: MakeRepo) -> None:
    root = make_repo({"ok.py": ""})
    os.mkfifo(root / "pipe.py")
    assert _paths(root) == ["ok.py"]  # reading a FIFO would block forever
    assert _reasons(root) == {"pipe.py": "not a regular file"}


def test_order_is_deterministic(make_repo: MakeRepo) -> None:
    names = [f"d{i % 7}/f{i}.py" for i in range(60)]
    root = make_repo(dict.fromkeys(names, ""))
    assert _paths(root) == sorted(names)
    assert _paths(root) == _paths(root)


UTF16_SOURCE = ('"""Wide-encoded module: written by an editor that saves UTF-16."""\r\n\r\n\r\n'
                'def greet_in_utf16(name):\r\n    """Say hello to name (héllo, 世界)."""\r\n'
                '    return f"hello {name}"\r\n\r\n\r\nclass WideThing:\r\n'
                '    """A class in a wide file."""\r\n')


@pytest.mark.parametrize(("codec", "bom"), [("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"),
                                            ("utf-32-le", b"\xff\xfe\x00\x00"),
                                            ("utf-32-be", b"\x00\x00\xfe\xff")])
def test_utf16_and_utf32_sources_are_decoded_by_their_bom(make_repo: MakeRepo, codec: str,
                                                          bom: bytes) -> None:
    raw = bom + UTF16_SOURCE.encode(codec)
    root = make_repo({"wide.py": raw, "ok.py": "x = 1\n"})
    assert _paths(root) == ["ok.py", "wide.py"]  # not "binary", though full of NUL bytes
    text = decode(raw)
    assert text == UTF16_SOURCE.replace("\r\n", "\n")
    from generator.analyze.facts import SourceFile
    from generator.analyze.parse import extract

    facts = extract(SourceFile("wide.py", "python", len(raw), ""), raw)
    assert {s.qualname for s in facts.symbols} == {"greet_in_utf16", "WideThing"}
    assert next(s for s in facts.symbols if s.qualname == "greet_in_utf16").start_line == 4


def test_a_bom_does_not_make_binary_text(make_repo: MakeRepo) -> None:
    # A UTF-16 mark followed by an unpaired surrogate and NULs is still binary.
    root = make_repo({"fake.py": b"\xff\xfe\x00\xd8\x00\x00\x01\x02", "ok.py": "x = 1\n"})
    assert _paths(root) == ["ok.py"]
    assert _reasons(root) == {"fake.py": "binary"}


def test_generated_marker_is_found_in_utf16(make_repo: MakeRepo) -> None:
    raw = b"\xff\xfe" + "// Code generated by tool. DO NOT EDIT.\npackage x\n".encode("utf-16-le")
    root = make_repo({"gen.go": raw})
    assert _reasons(root) == {"gen.go": "generated"}


def test_an_include_glob_matching_nothing_is_refused(make_repo) -> None:
    from sourcebook.errors import ConfigError

    root = make_repo({"src/a.py": "x = 1\n", "logo.png": b"\x89PNG\0\0binary"})
    with pytest.raises(ConfigError, match=r"include 'srcc/\*\*' matched no file"):
        _paths(root, include=("srcc/**",))
    with pytest.raises(ConfigError, match=r"include 'nope/' matched no file"):
        _paths(root, include=("src/", "nope/"))  # one typo among good globs is still a typo
    with pytest.raises(ConfigError, match="matched only files sourcebook skips"):
        _paths(root, include=("*.png",))
    assert _paths(root, include=("src/", "!src/b.py")) == ["src/a.py"]
