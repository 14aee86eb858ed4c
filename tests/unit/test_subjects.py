"""What a test file tests, by each ecosystem's naming convention (answer/retrieval/subjects.py)."""

import pytest

from answer.retrieval.subjects import SubjectIndex, name_key, subject_stem


@pytest.mark.parametrize(("path", "stem"), [
    ("tests/test_routing.py", "routing"),  # pytest
    ("pkg/routing_test.py", "routing"),
    ("flag_test.go", "flag"),  # go
    ("tests/vanilla/store.test.tsx", "store"),  # jest / vitest
    ("src/app.spec.js", "app"),
    ("src/utils/format.unit.test.ts", "format"),
    ("src/test/java/org/x/parser/HtmlParserTest.java", "HtmlParser"),  # JUnit
    ("src/test/java/org/x/ReaderIT.java", "Reader"),  # failsafe integration test
    ("test/src/commonTest/kotlin/x/AtFileTest.kt", "AtFile"),  # kotlin
    ("tests/Lib.Tests/Core/TypeConverterTests.cs", "TypeConverter"),  # xunit / nunit
    ("src/test/scala/x/OptionParserSpec.scala", "OptionParser"),  # scalatest
    ("src/test/scala/x/RenderSuite.scala", "Render"),
    ("spec/request_spec.rb", "request"),  # rspec
    ("test/spec_utils.rb", "utils"),
    ("test/multipart_test.rb", "multipart"),  # minitest
    ("tests/Handler/StreamHandlerTest.php", "StreamHandler"),  # phpunit
    ("tests/TestLoader.php", "Loader"),
    ("test/format_test.cc", "format"),  # googletest
    ("tests/test_parser.c", "parser"),
    ("tests/ensure.rs", "ensure"),  # a Rust integration test: any file of tests/
    ("test/command.action.test.js", "command.action"),
    ("tests/test.py", ""),  # names nothing
    ("src/contest.py", "contest"),  # `test` inside a word is no affix
    ("src/Latest.java", "Latest"),
])
def test_a_test_file_names_its_subject(path, stem):
    assert subject_stem(path) == stem


def test_names_compare_without_case_or_separators():
    assert name_key("AtFile") == name_key("atfile") == name_key("at_file") == name_key("at-file")


def test_the_subject_is_the_source_file_of_that_name():
    index = SubjectIndex.build(["clikt/src/commonMain/kotlin/x/parsers/atfile.kt",
                                "clikt/src/commonMain/kotlin/x/parsers/Parser.kt"])
    assert index.subjects("test/src/commonTest/kotlin/x/parsers/AtFileTest.kt") == [
        "clikt/src/commonMain/kotlin/x/parsers/atfile.kt"]
    assert index.subjects("test/src/commonTest/kotlin/x/parsers/LexerTest.kt") == []


def test_the_closest_of_several_same_named_files_is_the_subject():
    # a JUnit layout: the package path after src/test/java is the one after src/main/java
    index = SubjectIndex.build(["core/src/main/java/org/x/parser/Tokeniser.java",
                                "core/src/main/java/org/x/select/Tokeniser.java",
                                "Tokeniser.java"])
    assert index.subjects("core/src/test/java/org/x/select/TokeniserTest.java") == [
        "core/src/main/java/org/x/select/Tokeniser.java"]
    # a .NET layout: tests/Lib.Tests/Core/ mirrors src/Lib/Core/
    index = SubjectIndex.build(["src/Lib/Core/TypeConverter.cs", "src/Lib/Text/TypeConverter.cs"])
    assert index.subjects("tests/Lib.Tests/Unit/Core/TypeConverterTests.cs") == [
        "src/Lib/Core/TypeConverter.cs"]


def test_a_dotted_test_name_falls_back_to_its_first_part():
    # commander-style tests/<subject>.<aspect>.test.js
    index = SubjectIndex.build(["lib/command.js", "lib/option.js"])
    assert index.subjects("tests/command.action.test.js") == ["lib/command.js"]
    assert index.subjects("tests/option.bad.test.js") == ["lib/option.js"]


def test_equally_close_files_share_the_subject_up_to_a_limit():
    index = SubjectIndex.build(["a/util.py", "b/util.py", "c/util.py"])
    assert index.subjects("tests/test_util.py") == ["a/util.py", "b/util.py"]
