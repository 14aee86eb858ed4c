"""Benchmark: how many of a repository's declarations the index holds and its pages show (issue 32).

    PYTHONPATH=$PWD .venv/bin/python bench/symbol_recall.py [NAME ...] [--corpus /work/corpus]
        [--work /tmp/DIR] [--reuse] [--examples 3] [--json OUT.json]

Each corpus repository (bench/corpus.toml; NAME picks some by folder name, all by default) is copied from
`--corpus/<name>` to `--work/<name>` and built extractively (`--no-llm --no-site`: the pages are the
Markdown under docs/, no HTML is needed). `--reuse` reads a build already in `--work` instead.

The reference is Universal Ctags (a measuring tool only, never a runtime dependency), run over every file
the build parsed (the index's `files` table) outside tests, benchmarks and examples folders (Scala, which
ctags has no parser for, through a regex definition of its declarations: see _SCALA):
declarations of the kinds below (prototypes on for C/C++), TypeScript/JavaScript top-level `export const`,
and neither local functions (a scope that is a function or method) nor anonymous names, nor what ctags
miscounts by a stated rule of the language (`declarations`: a JavaScript object literal or function
expression's own name, a C/C++ macro call or template instantiation read as a prototype). Each file's
names, as a multiset (an operator's without spaces: ctags writes `operator =`), are matched against
  (a) the index: the names in the built index's `symbols` table for that file (read through
      generator/index/reader.py, as the answer side reads it), and
  (b) the page: the headings of the file's generated page (docs/files/<path>.md), each heading's last
      name (`Value.fmt` -> `fmt`, `fromJson(String)` -> `fromJson`).
It prints index and page recall per language and per repository, then the kinds missing most with examples.

A second count, apart and not in the figures above (issue 33), is of the class-level members of Kotlin, Java,
PHP, TypeScript and C#: fields, properties, class constants and enum constants, each declared in the body of a
type (a class, interface, enum, object, struct, trait or record), plus Kotlin's top-level properties (the
language compiles them to static members of the file's class); never locals or parameters (ctags' Kotlin
tags a constructor's `val` parameter as a property of its class: it is one, so it counts). A member is on
the page as a heading or as a row of its type's member table.
"""

from __future__ import annotations

import argparse
import html
import json
import re
import shutil
import subprocess
import sys
import tempfile
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE / "bench"))

from corpus import load  # noqa: E402

# ctags kind names (they differ per language) -> the category the issue counts
KINDS = {
    "class": "class", "struct": "struct", "interface": "interface", "enum": "enum", "trait": "trait",
    "union": "union", "typedef": "typedef", "alias": "typedef", "typealias": "typedef", "record": "record",
    "module": "module", "object": "object", "function": "function", "func": "function", "method": "method",
    "singletonMethod": "method", "member": "method", "prototype": "prototype", "constant": "const",
}
# a ctags kind counted only in some languages: Python's `member` is a method, PHP's `alias` is a `use` line
_ONLY_IN = {"member": {"Python"}, "constant": {"TypeScript", "JavaScript"},
            "alias": {"TypeScript", "C++", "C", "Rust", "Scala", "Kotlin", "Swift"}}
_LOCAL_SCOPES = {"function", "method", "func", "member", "singletonMethod", "prototype"}
_SKIP_DIR = re.compile(r"(?i)^(tests?|testing|__tests__|specs?|testdata|\w*tests?|bench|benches|benchmarks?|"
                       r"\w*benchmarks?|jmh|examples?|samples?)$")
_HEADING = re.compile(r"^#{2,6} (.+?)(?: \{[^}]*\})?\s*$")
_TABLE_ROW = re.compile(r"<tr><td><code>(.*?)</code></td>")
# the second count: ctags kind -> member category, per language (see the docstring)
MEMBER_KINDS = {
    "Kotlin": {"constant": "property", "variable": "property"},
    "Java": {"field": "field", "enumConstant": "enum constant"},
    "PHP": {"variable": "property", "define": "class constant"},
    "TypeScript": {"property": "property", "enumerator": "enum constant"},
    "C#": {"field": "field", "property": "property", "event": "field", "enumerator": "enum constant"},
}
# a PHP property's line: its modifiers first (`private static ?self $instance`, `var $x`, `public function
# __construct(private Foo $foo)` promotes one)
_PHP_PROPERTY = re.compile(r"/\^.*\b(?:public|protected|private|var|readonly)\s")
_TYPE_SCOPES = {"class", "interface", "enum", "object", "struct", "trait", "record", "enumClass"}
_CTAGS_BATCH = 400


@dataclass
class Tally:
    expected: int = 0
    in_index: int = 0
    on_page: int = 0
    missing_index: Counter[str] = field(default_factory=Counter)
    missing_page: Counter[str] = field(default_factory=Counter)
    examples_index: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))
    examples_page: dict[str, list[str]] = field(default_factory=lambda: defaultdict(list))

    def add(self, other: Tally) -> None:
        self.expected += other.expected
        self.in_index += other.in_index
        self.on_page += other.on_page
        self.missing_index.update(other.missing_index)
        self.missing_page.update(other.missing_page)
        for mine, theirs in ((self.examples_index, other.examples_index),
                             (self.examples_page, other.examples_page)):
            for kind, ex in theirs.items():
                mine[kind].extend(ex[: max(0, 3 - len(mine[kind]))])


def skipped(path: str) -> bool:
    return any(_SKIP_DIR.match(part) for part in path.split("/")[:-1])


def build(src: Path, work: Path) -> Path:
    """A temp copy of `src` built extractively; returns the output folder."""
    copy, out = work / src.name, work / f"{src.name}.out"
    for p in (copy, out):
        if p.exists():
            shutil.rmtree(p)
    shutil.copytree(src, copy, symlinks=True, ignore=shutil.ignore_patterns(".sourcebook"))
    subprocess.run([sys.executable, "-c", "from sourcebook.cli import main; main()", "build", str(copy),
                    "--out", str(out), "--no-llm", "--no-site"], check=True, cwd=HERE,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                   env={**__import__("os").environ, "PYTHONPATH": str(HERE)})
    return out


def index_tables(out: Path) -> tuple[dict[str, str], dict[str, Counter[str]]]:
    """The index's parsed files (path -> language) and each file's symbol names."""
    from generator.analyze.languages import is_parsed
    from generator.index.reader import open_table, read_state

    uri = str(out / "index")
    state = read_state(uri, {})
    if not state:
        raise SystemExit(f"{out}: no published index")
    versions = state["versions"]
    files = open_table(uri, "files", int(versions["files"]), {}).scan(
        ["path", "language", "kind"]).to_pylist()
    # the files parsed for symbols (a stylesheet or a shell script is indexed but has none)
    langs = {r["path"]: r["language"] for r in files if is_parsed(r["language"]) and r["kind"] == "code"}
    names: dict[str, Counter[str]] = defaultdict(Counter)
    for r in open_table(uri, "symbols", int(versions["symbols"]), {}).scan(["path", "name"]).to_pylist():
        names[r["path"]][_same_name(r["name"])] += 1
    return langs, names


def heading_name(text: str) -> str:
    text = html.unescape(re.sub(r"<[^>]+>", "", text)).strip().strip("`")
    if text.startswith("**") and text.endswith("**"):
        text = text[2:-2].strip("`")
    operator = re.search(r"(?:^|[.:#\s])(operator\b.*)$", text)
    if operator:  # C++ `A.operator()(int)`, `A.operator<`, `A.operator std::string`: its own `(<.:` kept
        op = operator.group(1)
        return "operator()" if re.match(r"operator\s*\(\s*\)", op) else _same_name(op.split("(", 1)[0])
    text = text.strip("`*")
    text = text.split("(", 1)[0].split("<", 1)[0].strip()
    for sep in ("::", ".", "#", "\\"):
        text = text.rsplit(sep, 1)[-1]
    return text.split()[-1] if text.split() else ""


def page_names(out: Path, tables: bool = False) -> dict[str, Counter[str]]:
    """Each file page's heading names, keyed by the file's path; with `tables`, also the names in the rows of
    its member tables (the members count's page)."""
    pages = json.loads((out / "state" / "pages.json").read_text(encoding="utf-8"))["pages"]
    found: dict[str, Counter[str]] = {}
    for page_id, rec in pages.items():
        if rec.get("kind") != "file":
            continue
        md = out / "docs" / page_id
        names: Counter[str] = Counter()
        if md.exists():
            in_fence = False
            for line in md.read_text(encoding="utf-8").splitlines():
                if line.lstrip().startswith(("```", "~~~")):
                    in_fence = not in_fence
                m = None if in_fence else _HEADING.match(line)
                if m:
                    names[heading_name(m.group(1))] += 1
                elif tables and not in_fence:
                    names.update(html.unescape(n) for n in _TABLE_ROW.findall(line))
        found[rec["target_path"]] = names
    return found


# Universal Ctags has no Scala parser: a regex definition of the language's declarations, one a line as the
# keyword starts it after its modifiers (`private[pkg]`, `final case`, `implicit`, ...). It cannot tell a
# local `def` (inside another's body) from a member, so it counts both; nor a second declaration on a line.
_SCALA_MODIFIERS = (r"^[ \t]*(((abstract|final|sealed|case|implicit|private|protected|override|lazy|open|"
                    r"inline|transparent|opaque|infix|export)(\[[^]]*\])?)[ \t]+)*")
_SCALA_NAME = r"([A-Za-z_$][A-Za-z0-9_$]*|`[^`]+`"
_SCALA = ["--langdef=Scala", "--map-Scala=+.scala", "--map-Scala=+.sc",
          *(f"--kinddef-Scala={letter},{kind},{kind}s" for letter, kind in (
              ("c", "class"), ("t", "trait"), ("o", "object"), ("e", "enum"), ("m", "method"),
              ("T", "typealias"))),
          *(rf"--regex-Scala=/{_SCALA_MODIFIERS}{keyword}[ \t]+{_SCALA_NAME}{extra})/\5/{letter}/"
            for keyword, letter, extra in (
                ("class", "c", ""), ("trait", "t", ""), ("object", "o", ""), ("enum", "e", ""),
                ("type", "T", ""), ("def", "m", r"|[^][A-Za-z0-9_$ \t(:=`]+"))),  # `def ++(`: an operator
          ]


def ctags(root: Path, paths: list[str]) -> list[dict[str, object]]:
    tags: list[dict[str, object]] = []
    for i in range(0, len(paths), _CTAGS_BATCH):
        proc = subprocess.run(["ctags", "--output-format=json", "--fields=+nKZlP", "--kinds-C=+p",
                               "--kinds-C++=+p", *_SCALA, "-f", "-", *paths[i:i + _CTAGS_BATCH]], cwd=root,
                              capture_output=True, text=True, check=False)
        for line in proc.stdout.splitlines():
            try:
                tag = json.loads(line)
            except ValueError:
                continue
            if tag.get("_type") == "tag":
                tags.append(tag)
    return tags


def declared(tag: dict[str, object]) -> str | None:
    """The category of a ctags tag the measure counts, or None."""
    kind, lang, name = str(tag.get("kind", "")), str(tag.get("language", "")), str(tag.get("name", ""))
    if kind not in KINDS or (kind in _ONLY_IN and lang not in _ONLY_IN[kind]):
        return None
    if name.startswith(("<", "__anon", "AnonymousFunction")) or not name:  # ctags' names for anonymous code
        return None
    if str(tag.get("scopeKind", "")) in _LOCAL_SCOPES:
        return None
    pattern = str(tag.get("pattern", ""))
    if kind == "constant" and (tag.get("scope") or not re.match(r"/\^\s*export\s+const\b", pattern)):
        return None  # a top-level `export const` only
    if kind == "alias" and lang in ("TypeScript", "JavaScript") and not re.search(
            rf"\btype\s+{re.escape(name)}\s*[<=]", pattern):
        return None  # `export { type X } from`: a re-export, not a declaration
    return KINDS[kind]


# JavaScript: `function name(` where an expression goes (after `=`, `:`, `(` or `,`): a function expression
_FUNCTION_EXPRESSION = r"[=:(,]\s*(?:async\s+)?function\s*\*?\s*{}\s*\("
# ... assigned to the same name: `app.init = function init(`, `init: function init(`
_ASSIGNED_AS = r"(?:^|[.\s]){0}\s*[=:]\s*(?:async\s+)?function\s*\*?\s*{0}\s*\("
# JavaScript: a line that declares the name: `function name`, `class name`, `name =`, `name:`, `name(`
_JS_DECLARES = r"\b(?:function\s*\*?|class)\s*{0}\b|(?:^|[^\w$]){0}\s*(?:=(?!=)|:|\()"
# JavaScript: an object literal given to a name (`var opts = {`, `this.config = {`, `theme: {`), not exported
_JS_OBJECT = r"^(?!\s*export\b).*(?:^|[^\w$]){0}\s*[=:]\s*\{{"


def member_declared(tag: dict[str, object]) -> str | None:
    """The member category of a ctags tag the second count counts (the docstring's rule), or None."""
    lang, kind, name = str(tag.get("language", "")), str(tag.get("kind", "")), str(tag.get("name", ""))
    category = MEMBER_KINDS.get(lang, {}).get(kind)
    if category is None or not name or name.startswith(("<", "__anon")):
        return None
    scope_kind, scope = str(tag.get("scopeKind", "")), str(tag.get("scope", ""))
    if "__anon" in scope:  # a member of an anonymous class (`new Runnable() { int n; }`): no type's API
        return None
    if lang == "PHP" and kind == "variable" and not _PHP_PROPERTY.match(str(tag.get("pattern", ""))):
        return None  # ctags puts a method's locals (`$list[] = $alias;`) in its class's scope
    if scope_kind in _TYPE_SCOPES:
        return category
    return category if lang == "Kotlin" and scope_kind in ("", "package") else None


def _same_name(name: str) -> str:
    """A name compared across the reference and the wiki: an operator without spaces (ctags writes
    `operator =` and `operator const Char*`, the source `operator=`)."""
    return re.sub(r"\s+", "", name) if name.startswith("operator") else name


# C/C++: an explicit instantiation (`template class base_sink<std::mutex>;`, `extern template R f<int>(…);`)
_INSTANTIATION = re.compile(r"^/\^\s*(?:extern\s+)?template\s+(?!<)")


def _c_prototype(tag: dict[str, object]) -> bool:
    """Whether a C/C++ `prototype` tag declares a function: not an explicit instantiation or specialization
    of a template declared elsewhere (`template R f<int>(…);` whose name line is `ns::f<int>(…)`), and not
    a macro call at file or namespace level (`FMT_FORMAT_AS(char, int);`), which ctags reads as a prototype
    without a return type; only a constructor or destructor (named as its class) is declared without one."""
    pattern, name = str(tag.get("pattern", "")), str(tag["name"])
    if _INSTANTIATION.match(pattern) or re.search(rf"(?:^|[^\w~]){re.escape(name)}\s*<[^;(]*>\s*\(", pattern):
        return False  # `f<int>(…)` names template arguments: an instantiation or specialization of a template
    if re.match(rf"/\^\s*{re.escape(name)}\s*\(", pattern):
        scope = re.split(r"::|\.", str(tag.get("scope", "")))[-1]
        return name.lstrip("~") == scope
    return True


def declarations(tags: list[dict[str, object]]) -> list[tuple[dict[str, object], str]]:
    """The tags of one file the measure counts, each with its category: `declared` per tag, C/C++
    prototypes that declare a function (`_c_prototype`), and in JavaScript the rules that need the file's
    other tags or the line's text:
    - ctags tags an object literal given to a name (`var opts = {…}`, `this.config = {…}`, a property
      `theme: {…}`) as a class: it is a variable (an exported one, `export const X = {…}`, is counted);
    - the name of a function expression is bound only inside that function's own body (ECMA-262), so it
      declares nothing in the file: `var f = function g()` declares f (tagged too), a callback
      `on('x', function h() {})` declares nothing. It stands for the name it is assigned to when that is
      the same (`app.init = function init()`, which ctags tags once or twice: once per line is counted);
    - a tag whose line does not declare its name is a misreading (`res.get = function (` is tagged `res`:
      ctags reads `get` as the accessor keyword)."""
    out = []
    seen: set[tuple[object, object]] = set()
    for tag in tags:
        cat = declared(tag)
        if cat is None:
            continue
        if tag.get("language") in ("C", "C++") and tag.get("kind") == "prototype" and not _c_prototype(tag):
            continue
        if tag.get("language") == "JavaScript":
            name, pattern = re.escape(str(tag["name"])), str(tag.get("pattern", ""))
            if tag.get("kind") == "class" and re.search(_JS_OBJECT.format(name), pattern.lstrip("/^")):
                continue
            if not re.search(_JS_DECLARES.format(name), pattern):
                continue
            if tag.get("kind") == "function" and not tag.get("scope") and re.search(
                    _FUNCTION_EXPRESSION.format(name), pattern) and not re.search(
                    _ASSIGNED_AS.format(name), pattern.lstrip("/^")):
                continue
            if (tag["name"], tag.get("line")) in seen:
                continue
            seen.add((tag["name"], tag.get("line")))
        out.append((tag, cat))
    return out


def measure(root: Path, out: Path, repo_language: str) -> dict[str, Tally]:
    return measure_both(root, out, repo_language)[0]


def measure_both(root: Path, out: Path, repo_language: str) -> tuple[dict[str, Tally], dict[str, Tally]]:
    """The declarations' tallies per language, and the members' (the second count)."""
    langs, index_names = index_tables(out)
    paths = sorted(p for p in langs if not skipped(p))
    expected: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
    members: dict[str, list[tuple[str, str, int]]] = defaultdict(list)
    tag_lang: dict[str, str] = {}
    by_file: dict[str, list[dict[str, object]]] = defaultdict(list)
    for tag in ctags(root, paths):
        by_file[str(tag["path"])].append(tag)
    for path, tags in by_file.items():
        for tag, cat in declarations(tags):
            expected[path].append((_same_name(str(tag["name"])), cat, int(str(tag.get("line", 0)))))
            tag_lang.setdefault(path, str(tag["language"]))
        for tag in tags:
            member = member_declared(tag)
            if member is not None:
                members[path].append((str(tag["name"]), member, int(str(tag.get("line", 0)))))
                tag_lang.setdefault(path, str(tag["language"]))
    return (_tally(expected, langs, tag_lang, index_names, page_names(out), repo_language),
            _tally(members, langs, tag_lang, index_names, page_names(out, tables=True), repo_language))


def _tally(expected: dict[str, list[tuple[str, str, int]]], langs: dict[str, str], tag_lang: dict[str, str],
           index_names: dict[str, Counter[str]], pages: dict[str, Counter[str]],
           repo_language: str) -> dict[str, Tally]:
    per_lang: dict[str, Tally] = defaultdict(Tally)
    for path, decls in expected.items():
        lang = langs.get(path) or tag_lang[path]
        if path.endswith(".h") and repo_language in ("c", "cpp"):
            lang = repo_language  # the repository's own language: ctags reads every .h as C++
        t = per_lang[lang]
        have_index, have_page = Counter(index_names.get(path, ())), Counter(pages.get(path, ()))
        for name, cat, line in decls:
            t.expected += 1
            for have, hit_attr, missing, examples in (
                    (have_index, "in_index", t.missing_index, t.examples_index),
                    (have_page, "on_page", t.missing_page, t.examples_page)):
                if have[name] > 0:
                    have[name] -= 1
                    setattr(t, hit_attr, getattr(t, hit_attr) + 1)
                else:
                    missing[cat] += 1
                    if len(examples[cat]) < 3:
                        examples[cat].append(f"{path}:{line} {name}")
    return per_lang


def _ratio(hit: int, total: int) -> str:
    return f"{hit / total:.3f}" if total else "  -  "


def report(rows: dict[str, dict[str, Tally]], examples: int, title: str = "") -> dict[str, object]:
    by_lang: dict[str, Tally] = defaultdict(Tally)
    total = Tally()
    if title:
        print(f"\n{title}")
    print(f"{'repository':16}{'language':12}{'decls':>7}{'index':>8}{'page':>8}")
    for repo, langs in rows.items():
        for lang, t in sorted(langs.items()):
            print(f"{repo[:15]:16}{lang[:11]:12}{t.expected:7}{_ratio(t.in_index, t.expected):>8}"
                  f"{_ratio(t.on_page, t.expected):>8}")
            by_lang[lang].add(t)
            total.add(t)
    print(f"\n{'language':12}{'decls':>7}{'index':>8}{'page':>8}")
    for lang, t in sorted(by_lang.items()):
        print(f"{lang[:11]:12}{t.expected:7}{_ratio(t.in_index, t.expected):>8}"
              f"{_ratio(t.on_page, t.expected):>8}")
    print(f"{'all':12}{total.expected:7}{_ratio(total.in_index, total.expected):>8}"
          f"{_ratio(total.on_page, total.expected):>8}")
    if examples:
        for lang, t in sorted(by_lang.items()):
            for label, missing, ex in (("index", t.missing_index, t.examples_index),
                                       ("page", t.missing_page, t.examples_page)):
                if missing:
                    print(f"\n{lang} missing from the {label}:")
                    for kind, n in missing.most_common(4):
                        print(f"  {kind:10}{n:6}  " + "; ".join(ex[kind][:examples]))
    return {repo: {lang: {"decls": t.expected, "index": t.in_index, "page": t.on_page,
                          "missing_index": dict(t.missing_index), "missing_page": dict(t.missing_page)}
                   for lang, t in langs.items()} for repo, langs in rows.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("names", nargs="*", help="corpus folder names (default: all)")
    ap.add_argument("--corpus", type=Path, default=Path("/work/corpus"))
    ap.add_argument("--work", type=Path, default=None,
                    help="where the copies and builds go (default: a temp dir)")
    ap.add_argument("--reuse", action="store_true", help="measure builds already in --work")
    ap.add_argument("--examples", type=int, default=3)
    ap.add_argument("--json", type=Path, default=None, help="also write the figures here")
    args = ap.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="symbol-recall-"))
    work.mkdir(parents=True, exist_ok=True)
    repos = [r for r in load() if not args.names or r.folder in args.names]
    rows: dict[str, dict[str, Tally]] = {}
    member_rows: dict[str, dict[str, Tally]] = {}
    for r in repos:
        src = args.corpus / r.folder
        if not src.is_dir():
            print(f"{r.folder}: not checked out at {src}", file=sys.stderr)
            continue
        out = work / f"{r.folder}.out" if args.reuse else build(src, work)
        rows[r.folder], member_rows[r.folder] = measure_both(work / r.folder, out, r.language)
        print(f"measured {r.folder}", file=sys.stderr)
    figures = report(rows, args.examples)
    member_figures = report({k: v for k, v in member_rows.items() if v}, args.examples,
                            "Class-level members (fields, properties, class and enum constants of Kotlin, "
                            "Java, PHP, TypeScript, C#), apart from the figures above:")
    if args.json:
        args.json.write_text(json.dumps({**figures, "members": member_figures}, indent=1), encoding="utf-8")


if __name__ == "__main__":
    main()
