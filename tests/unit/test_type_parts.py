"""type_parts: C# partial types and Kotlin expect/actual declarations found once across files, on facts."""

from __future__ import annotations

from generator.analyze.facts import FileFacts, SourceFile, Symbol
from generator.pages.type_parts import (
    Part,
    part_kind,
    parts_by_path,
    parts_key,
    secondary_parts,
    source_set,
    split_types,
)


def _facts(path: str, language: str, *symbols: tuple[str, str, str, str], kind: str = "code") -> FileFacts:
    """symbols: (qualname, kind, signature, docstring); the parent is the qualname's prefix."""
    made = []
    for n, (qualname, skind, signature, doc) in enumerate(symbols, start=1):
        parent = qualname.rsplit(".", 1)[0] if "." in qualname else None
        made.append(Symbol(name=qualname.rsplit(".", 1)[-1], qualname=qualname, kind=skind,  # type: ignore[arg-type]
                           path=path, start_line=n, end_line=n, signature=signature, docstring=doc,
                           parent=parent))
    return FileFacts(file=SourceFile(path, language, 1, "", kind), symbols=made)  # type: ignore[arg-type]


def test_partial_class_over_three_files_is_one_type_whose_documented_part_is_main() -> None:
    a = _facts("src/Client.Retry.cs", "csharp", ("Client", "class", "public partial class Client", ""),
               ("Client.Retry", "method", "public int Retry(int times)", ""))
    b = _facts("src/Client.cs", "csharp",
               ("Client", "class", "public partial class Client", "Sends requests."),
               ("Client.Send", "method", "public void Send()", ""))
    c = _facts("src/Log/ClientLog.cs", "csharp",
               ("Client", "class", "partial class Client : IDisposable", ""),
               ("Client.Trace", "method", "public void Trace()", ""),
               ("Client.Flush", "method", "private void Flush()", ""))
    [t] = split_types([a, b, c])
    assert (t.name, t.kind) == ("Client", "partial")
    assert t.main == Part("src/Client.cs", "Client")  # the part with the doc comment, not the first by path
    assert t.others == (Part("src/Client.Retry.cs", "Client"), Part("src/Log/ClientLog.cs", "Client"))
    assert [(p.path, m.qualname) for p, m in t.members] == [
        ("src/Client.Retry.cs", "Client.Retry"), ("src/Log/ClientLog.cs", "Client.Trace"),
        ("src/Log/ClientLog.cs", "Client.Flush")]  # a private method has a section, so it is listed
    assert t.is_main("src/Client.cs", "Client")
    assert not t.is_main("src/Client.Retry.cs", "Client")
    assert secondary_parts([t]) == {("src/Client.Retry.cs", "Client"), ("src/Log/ClientLog.cs", "Client")}
    by_path = parts_by_path([t])
    assert set(by_path) == {"src/Client.cs", "src/Client.Retry.cs", "src/Log/ClientLog.cs"}
    assert by_path["src/Client.Retry.cs"]["Client"] is t


def test_without_a_doc_comment_the_first_part_by_path_is_main() -> None:
    a = _facts("b/Parser.cs", "csharp", ("N.Parser", "class", "static partial class Parser", ""))
    b = _facts("a/Parser.Async.cs", "csharp", ("N.Parser", "class", "public static partial class Parser", ""))
    [t] = split_types([a, b])
    assert t.main.path == "a/Parser.Async.cs"


def test_what_is_not_split_is_left_alone() -> None:
    # one partial part alone, two non-partial classes of one name, a partial in a test file, a name that
    # merely contains "partial"
    one = _facts("A.cs", "csharp", ("A", "class", "public partial class A", ""))
    b1 = _facts("x/B.cs", "csharp", ("B", "class", "public class B", ""))
    b2 = _facts("y/B.cs", "csharp", ("B", "class", "public class B", ""))
    test = _facts("tests/A.cs", "csharp", ("A", "class", "public partial class A", ""), kind="test")
    named = _facts("P.cs", "csharp", ("partialResult", "class", "class partialResult", ""))
    named2 = _facts("Q.cs", "csharp", ("partialResult", "class", "class partialResult", ""))
    assert split_types([one, b1, b2, test, named, named2]) == []
    assert part_kind(named.symbols[0], "csharp") == ""
    # a method whose signature mentions `partial` (C# partial methods) is no type part
    method = Symbol("M", "A.M", "method", "A.cs", 1, 1, "partial void M()", parent="A")
    assert part_kind(method, "csharp") == ""


def test_kotlin_expect_is_main_and_each_actual_names_its_source_set() -> None:
    common = _facts("lib/src/commonMain/kotlin/acme/Clock.kt", "kotlin",
                    ("Clock", "class", "expect class Clock()", ""),
                    ("Clock.now", "method", "fun now(): Long", ""),
                    ("platformName", "function", "internal expect fun platformName(): String", ""))
    jvm = _facts("lib/src/jvmMain/kotlin/acme/Clock.jvm.kt", "kotlin",
                 ("Clock", "class", "actual class Clock actual constructor()", ""),
                 ("Clock.now", "method", "actual fun now(): Long", ""),
                 ("platformName", "function", "internal actual fun platformName(): String", ""))
    native = _facts("lib/src/nativeMain/kotlin/acme/Clock.native.kt", "kotlin",
                    ("Clock", "class", "public actual class Clock actual constructor()", ""))
    other_package = _facts("lib/src/jsMain/kotlin/other/Clock.kt", "kotlin",
                           ("Clock", "class", "actual class Clock actual constructor()", ""))
    types = split_types([jvm, native, common, other_package])
    clock = next(t for t in types if t.name == "Clock")
    assert clock.kind == "expect"
    assert clock.main == Part("lib/src/commonMain/kotlin/acme/Clock.kt", "Clock")
    assert [(p.path.split("/")[2], p.platform) for p in clock.others] == [("jvmMain", "jvmMain"),
                                                                          ("nativeMain", "nativeMain")]
    fun = next(t for t in types if t.name == "platformName")  # a top-level expect fun too
    assert fun.others == (Part("lib/src/jvmMain/kotlin/acme/Clock.jvm.kt", "platformName", "jvmMain"),)
    assert len(types) == 2  # the actual in another package has no expect here: not merged
    # actuals with no expect read in this build are left as they are
    assert split_types([jvm, native]) == []


def test_source_set_folds_the_platform_away() -> None:
    assert source_set("lib/src/jvmMain/kotlin/a/b/C.kt") == ("lib/src/*/a/b", "jvmMain")
    assert source_set("src/iosArm64Main/kotlin/C.kt") == ("src/*/", "iosArm64Main")
    assert source_set("app/Main.kt") == ("app", "")


def test_parts_key_changes_when_another_part_gains_a_member() -> None:
    a = _facts("A.cs", "csharp", ("A", "class", "partial class A", ""))
    b = _facts("B.cs", "csharp", ("A", "class", "partial class A", ""))
    b2 = _facts("B.cs", "csharp", ("A", "class", "partial class A", ""),
                ("A.Run", "method", "void Run()", ""))
    before = parts_key(parts_by_path(split_types([a, b]))["A.cs"])
    after = parts_key(parts_by_path(split_types([a, b2]))["A.cs"])
    assert before != after


def test_most_used_names_a_split_type_once_with_the_users_of_every_part() -> None:
    from generator.pages.orientation import most_used

    common = _facts("lib/src/commonMain/kotlin/acme/Clock.kt", "kotlin",
                    ("Clock", "class", "expect class Clock()", "Reads the clock."))
    jvm = _facts("lib/src/jvmMain/kotlin/acme/Clock.jvm.kt", "kotlin",
                 ("Clock", "class", "actual class Clock actual constructor()", ""))
    users = [_facts(f"lib/src/commonMain/kotlin/acme/U{n}.kt", "kotlin", ("u", "function", "fun u()", ""))
             for n in range(3)]
    facts = {f.path: f for f in [common, jvm, *users]}
    callers = {(common.path, "Clock"): [(users[0].path, "u")],
               (jvm.path, "Clock"): [(users[1].path, "u"), (users[2].path, "u")]}
    split = split_types(facts.values())
    rows = most_used(facts, callers, split=split)
    assert [(a.path, a.qualname, a.used_from) for a in rows] == [(common.path, "Clock", 3)]
    # without the merge each part is its own row, neither with the users of the other
    assert sorted((a.path, a.used_from) for a in most_used(facts, callers)) == [(jvm.path, 2)]


def test_two_parts_in_one_file_and_a_third_elsewhere_are_one_type() -> None:
    a = _facts("A.cs", "csharp", ("N.A", "class", "partial class A", "The A."),
               ("N.A~2", "class", "partial class A", ""), ("N.A~2.Run", "method", "void Run()", ""))
    b = _facts("B.cs", "csharp", ("N.A", "class", "partial class A", ""))
    [t] = split_types([a, b])
    assert t.name == "N.A"
    assert t.main == Part("A.cs", "N.A")
    assert t.others == (Part("A.cs", "N.A~2"), Part("B.cs", "N.A"))
    assert [m.qualname for _, m in t.members] == ["N.A~2.Run"]


def test_kotlin_expect_overloads_each_pair_with_their_own_actual() -> None:
    common = _facts("src/commonMain/kotlin/a/Io.kt", "kotlin",
                    ("read", "function", "expect fun read(path: String): ByteArray", ""),
                    ("read~2", "function", "expect fun read(fd: Int): ByteArray", ""))
    jvm = _facts("src/jvmMain/kotlin/a/Io.kt", "kotlin",
                 ("read", "function", "actual fun read(fd: Int): ByteArray", ""),
                 ("read~2", "function", "actual fun read(path: String): ByteArray", ""))
    types = split_types([common, jvm])
    pairs = sorted((t.main.qualname, t.others[0].qualname) for t in types)
    assert pairs == [("read", "read~2"), ("read~2", "read")]
    assert all(t.kind == "expect" and len(t.others) == 1 for t in types)
