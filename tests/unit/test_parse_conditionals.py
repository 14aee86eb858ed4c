"""parse: C#, C and C++ whose `#if`/`#else`/`#endif` split a declaration (a base list, a modifier list, an
initializer, an expression body) parse without errors, with each conditional cut to its first branch, while
a file the grammar reads cleanly, a conditional it reads as one, and the other branch of a conditional that
is broken on its own stay as they were (issue 32: no spurious parse errors on valid code)."""

from __future__ import annotations

from generator.analyze.facts import FileFacts
from generator.analyze.parse_rules import keep_first_branches
from tests.support.parsed import parse


def lines(facts: FileFacts) -> dict[str, int]:
    return {s.qualname: s.start_line for s in facts.symbols}


SINKS = """\
namespace Demo.Sinks;

public sealed class BatchingSink : ILogEventSink
#if FEATURE_ASYNCDISPOSABLE
    , IAsyncDisposable
#endif
    , IDisposable
{
    public void Emit(LogEvent logEvent) { }

    public void Dispose() { }
}

public
#if NET6_0_OR_GREATER
    readonly
#endif
    partial struct EventId
{
    public int Value { get; }
}

public interface ILogger
{
    ILogger ForContext(string name)
#if FEATURE_DEFAULT_INTERFACE
        => this;
#else
        ;
#endif

    void Write(string message);
}
"""


def test_csharp_base_and_modifier_lists_split_by_if_parse_without_error() -> None:
    facts = parse("src/Sinks.cs", SINKS, "csharp")
    assert facts.warnings == []
    got = lines(facts)
    # every member under its type, at the line it is written on
    assert got["Demo.Sinks.BatchingSink"] == 3
    assert got["Demo.Sinks.BatchingSink.Emit"] == 9
    assert got["Demo.Sinks.BatchingSink.Dispose"] == 11
    assert got["Demo.Sinks.EventId"] == 14
    assert got["Demo.Sinks.ILogger.ForContext"] == 25
    assert got["Demo.Sinks.ILogger.Write"] == 32
    signatures = {s.qualname: s.signature for s in facts.symbols}
    # the directives are no part of a signature; the first branch's words are
    assert signatures["Demo.Sinks.BatchingSink"] == (
        "public sealed class BatchingSink : ILogEventSink , IAsyncDisposable , IDisposable")
    assert signatures["Demo.Sinks.EventId"] == "public readonly partial struct EventId"
    assert signatures["Demo.Sinks.ILogger.ForContext"] == "ILogger ForContext(string name)"


ARGS = """\
#ifndef DEMO_ARGS_H_
#define DEMO_ARGS_H_

template <typename Context, typename... Args>
class format_arg_store
#if DEMO_GCC_VERSION && DEMO_GCC_VERSION < 409
    : public basic_format_args<Context>
#endif
{
 public:
  format_arg_store(const Args&... args)
      :
#if DEMO_GCC_VERSION && DEMO_GCC_VERSION < 409
        basic_format_args<Context>(*this),
#endif
        data_{make_arg(args)...} {
  }

  int size() const { return 0; }
};

#endif  // DEMO_ARGS_H_
"""


def test_cpp_base_clause_and_initializer_list_split_by_if_parse_without_error() -> None:
    facts = parse("include/demo/args.h", ARGS, "cpp")
    assert facts.warnings == []
    got = lines(facts)
    assert got["format_arg_store"] == 4
    assert got["format_arg_store.format_arg_store"] == 11
    assert got["format_arg_store.size"] == 19  # a method of its class, not a free function
    assert got["DEMO_ARGS_H_"] == 2


def test_include_guard_lines_stay_and_nested_conditionals_keep_their_first_branch() -> None:
    src = (b"#ifndef NET_H\n#define NET_H\n"
           b"#if defined(_WIN32)\n"
           b"#  ifdef USE_WINSOCK2\ntypedef SOCKET sock_t;\n#  else\ntypedef int sock_t;\n#  endif\n"
           b"#elif defined(__unix__)\n#  if HAVE_POLL\nint poll_fd(int);\n#  endif\ntypedef int sock_t;\n"
           b"#else\ntypedef long sock_t;\n#endif\n"
           b"#endif /* NET_H */\n")
    out, dropped, blanked = keep_first_branches(src)
    assert len(out) == len(src)
    assert [i for i, b in enumerate(out) if b == 0x0A] == [i for i, b in enumerate(src) if b == 0x0A]
    text = out.decode().splitlines()
    # the guard is written as is; the first branch of each nested conditional stays, on its own line
    assert text[:2] == ["#ifndef NET_H", "#define NET_H"]
    assert text[-1] == "#endif /* NET_H */"
    assert text[4] == "typedef SOCKET sock_t;"
    kept = [line.strip() for line in text[2:-1] if line.strip()]
    assert kept == ["typedef SOCKET sock_t;"]
    # the branches dropped start after their `#else`/`#elif` line, once per outermost one
    assert [src[start:end].decode().strip().splitlines()[0] for start, end in dropped] == [
        "typedef int sock_t;", "#  if HAVE_POLL"]
    assert all(out[start:end].strip() == b"" for start, end in blanked)


def test_conditionals_the_grammar_reads_are_kept_whole() -> None:
    src = b"#if A\nint f(void);\n#else\nint g(void);\n#endif\n"
    assert keep_first_branches(src, whole={0}).data == src
    # an unterminated conditional drops what follows its `#else` to the end of the file
    cut = keep_first_branches(b"#if A\nint f;\n#else\nint g;\n").data
    assert cut == b"     \nint f;\n     \n      \n"


def test_a_file_without_errors_parses_as_before_with_every_branch() -> None:
    src = """\
#ifdef _WIN32
static int open_socket(void) { return WSAStartup(); }
#else
static int open_socket(void) { return socket(AF_INET, SOCK_STREAM, 0); }
#endif

int connect_to(const char *host) { return open_socket(); }
"""
    facts = parse("net.c", src, "c")
    assert facts.warnings == []
    assert sorted(s.start_line for s in facts.symbols if s.name == "open_socket") == [2, 4]
    cs = """\
public class Clock
{
#if NET8_0_OR_GREATER
    public DateTimeOffset Now => TimeProvider.System.GetUtcNow();
#else
    public DateTimeOffset Now => DateTimeOffset.UtcNow;
#endif
}
"""
    facts = parse("Clock.cs", cs, "csharp")
    assert facts.warnings == []
    assert sorted(s.start_line for s in facts.symbols if s.name == "Now") == [4, 6]


def test_a_branch_broken_on_its_own_is_not_cut_away() -> None:
    # the error is inside the `#else` branch, not made by the conditional: cutting that branch would only
    # hide it, and lose the branch's symbols
    src = """\
#ifdef NO_REGEX
static int match(const char *s) { return s[0] == '-'; }
#else
#define NAME_CHAR "[^=,[:space:]]"
static const char *pattern = "--(" NAME_CHAR ")" NAME_CHAR NAME_CHAR;
static int match(const char *s) { return regex_match(s, pattern) %; }
static int other(void) { return 1; }
#endif
"""
    facts = parse("opts.c", src, "c")
    assert facts.warnings  # the real error stays reported
    assert "NAME_CHAR" in {s.name for s in facts.symbols}


def test_a_conditional_read_cleanly_keeps_both_branches_in_a_file_cut_elsewhere() -> None:
    src = """\
public sealed class Clock : IClock
#if FEATURE_ASYNCDISPOSABLE
    , IAsyncDisposable
#endif
{
#if NET8_0_OR_GREATER
    public DateTimeOffset Now => TimeProvider.System.GetUtcNow();
#else
    public DateTimeOffset Now => DateTimeOffset.UtcNow;
#endif
}
"""
    facts = parse("Clock.cs", src, "csharp")
    assert facts.warnings == []
    assert sorted(s.start_line for s in facts.symbols if s.name == "Now") == [7, 9]
