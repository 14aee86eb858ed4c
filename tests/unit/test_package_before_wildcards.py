"""A name both the file's own package and a wildcard import define is the package's (Java's and Kotlin's
scoping: single imports, then the package, then on-demand imports): generator/analyze/references_oo.py's
in_module asks own_package before it searches the wildcards."""

from __future__ import annotations

from generator.analyze.graph import build_graph
from tests.support.parsed import parse

KOTLIN_INPUT = "class ByteArrayInput(val bytes: ByteArray) {\n    fun read(): Int = 0\n}\n"


def _kotlin(decoder_uses: str, own: str, extra: dict[str, str] | None = None) -> dict[tuple[str, str], list]:
    files = {
        "src/main/kotlin/app/cbor/Streams.kt": f"package app.cbor\n\n{own}",
        "src/main/kotlin/app/proto/Streams.kt": f"package app.proto\n\n{KOTLIN_INPUT}",
        "src/main/kotlin/app/cbor/Decoder.kt": ("package app.cbor\n\nimport app.proto.*\n\nclass Parser {\n"
                                                f"    fun open() {{\n        {decoder_uses}\n    }}\n}}\n"),
        **(extra or {}),
    }
    facts = [parse(path, text, "kotlin") for path, text in files.items()]
    return build_graph(facts).calls


def test_kotlin_finds_its_own_package_before_a_star_import() -> None:
    calls = _kotlin("val input = ByteArrayInput(ByteArray(4))", KOTLIN_INPUT)
    assert ("src/main/kotlin/app/cbor/Streams.kt", "ByteArrayInput") in calls[
        ("src/main/kotlin/app/cbor/Decoder.kt", "Parser.open")]
    assert ("src/main/kotlin/app/proto/Streams.kt", "ByteArrayInput") not in calls[
        ("src/main/kotlin/app/cbor/Decoder.kt", "Parser.open")]


def test_kotlin_top_level_function_of_the_package_wins_too() -> None:
    own = "fun transformAll(values: List<String>) = values\n"
    extra = {"src/main/kotlin/app/proto/Transforms.kt": f"package app.proto\n\n{own}"}
    calls = _kotlin("transformAll(listOf())", "class Unrelated\n", extra)
    # only the star import defines it here: the wildcard still binds it
    assert calls[("src/main/kotlin/app/cbor/Decoder.kt", "Parser.open")] == [
        ("src/main/kotlin/app/proto/Transforms.kt", "transformAll")]
    extra["src/main/kotlin/app/cbor/Transforms.kt"] = f"package app.cbor\n\n{own}"
    calls = _kotlin("transformAll(listOf())", "class Unrelated\n", extra)
    assert calls[("src/main/kotlin/app/cbor/Decoder.kt", "Parser.open")] == [
        ("src/main/kotlin/app/cbor/Transforms.kt", "transformAll")]


def test_a_nested_type_of_the_package_is_not_visible_by_its_bare_name() -> None:
    nested = "class Formatter {\n    class ByteArrayInput(val size: Int)\n}\n"
    calls = _kotlin("val input = ByteArrayInput(ByteArray(4))", nested)
    assert calls[("src/main/kotlin/app/cbor/Decoder.kt", "Parser.open")] == [
        ("src/main/kotlin/app/proto/Streams.kt", "ByteArrayInput")]


def test_java_finds_its_own_package_before_an_on_demand_import() -> None:
    reader = "public class Reader {\n    public int read() { return 0; }\n}\n"
    files = {
        "src/main/java/app/cbor/Reader.java": f"package app.cbor;\n\n{reader}",
        "src/main/java/app/proto/Reader.java": f"package app.proto;\n\n{reader}",
        "src/main/java/app/cbor/Parser.java": ("package app.cbor;\n\nimport app.proto.*;\n\n"
                                               "public class Parser {\n    public void open() {\n"
                                               "        Reader r = new Reader();\n    }\n}\n"),
    }
    calls = build_graph([parse(path, text, "java") for path, text in files.items()]).calls
    assert calls[("src/main/java/app/cbor/Parser.java", "Parser.open")] == [
        ("src/main/java/app/cbor/Reader.java", "Reader")]
