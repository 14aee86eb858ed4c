"""Counts, on every page of built wikis, what trips a reader: links that land nowhere, raw markup, suffixes.

    PYTHONPATH=$PWD .venv/bin/python bench/wiki_audit.py OUT_OR_REPO... [--build] [--examples 5]

Each argument is a build's output folder (holding site/) or a repository (its .sourcebook/site is read;
with --build, `sourcebook build --no-index` writes it first). Only the article of each page is read for
text (the nav and header are the theme's); links are read everywhere on the page. One row per site:

- top_links: a link whose label is code (a symbol's name) to a page without a fragment: it lands on the
  page's top, not on the symbol. A file's name linked to its page lands right (`.golangci.yaml` ->
  `_golangci.yaml.html`), and so does a document's own link text (not code: `[Multipart](multipart.rb)`)
- broken_anchor: a link to a fragment the target page has no element for (or to a page that does not exist)
- root_abs: an href starting with `/` (breaks under a sub-path and from disk)
- raw_*: markup shown as text outside code: `::: name` directives, `[x]: url` reference definitions,
  `:role:` text, `**bold**` (a closed pair), `!!!` or `??? note`, a ` * ` list mark, a stray backtick
- suffix: a `~N` qualname suffix in visible text (titles and headings included)
- big_diagram: a Mermaid diagram with more than 25 nodes
- unreachable: a page under files/ no link chain from index.html reaches
- thin: an article with fewer than 200 characters of text and highlighted code (a signature is no content)
- repeated: a paragraph (80+ characters) shown more than once on the same page
- long_sig: a signature (a highlighted block opening with def/class/func/fn/...) with a line over 100
  characters: cut in a scroll box instead of wrapped one parameter per line

Doc comments of every language (issue 32), each counted in visible article text outside code:
- raw_mkdocstr: a mkdocstrings `::: name` line (raw_directive counts reST's `.. name::`)
- raw_jdoc: a Javadoc/JSDoc inline tag `{@link ...}`, `{@code ...}`
- raw_xmldoc: C# XML documentation shown as text (`<see`, `<paramref`, `<typeparamref`, `<summary>`...)
- raw_tag: a block tag at a line's or a word's start (`@param`, `@return`, `@throws`, `@final`...)
- raw_doxygen: a Doxygen command (`\\brief`, `\\param`, `\\code`...; `@brief` is a raw_tag)
- raw_alert: a GitHub alert marker (`[!NOTE]`, `[!WARNING]`...)
- empty_link: a link in the article with no text (no icon, no title either): "Called by: , X"
- calls_type: a "Calls:" entry linking to a type's section (a class, struct, enum...): a reference is
  not a call
- banner_sum: a paragraph or table cell that is a banner (`////////`, `=====`) or commented-out code
"""

from __future__ import annotations

import argparse
import posixpath
import re
import subprocess
import sys
from collections import Counter, defaultdict
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit

from generator.analyze.plan import file_page_ids

KINDS = ("top_links", "broken_anchor", "root_abs", "raw_directive", "raw_refdef", "raw_role", "raw_bold",
         "raw_admonition", "raw_listmark", "raw_backtick", "suffix", "big_diagram", "unreachable", "thin",
         "repeated", "long_sig", "raw_mkdocstr", "raw_jdoc", "raw_xmldoc", "raw_tag", "raw_doxygen",
         "raw_alert", "empty_link", "calls_type", "banner_sum")
_SIGNATURE_START = re.compile(
    r"\s*(?:async\s+)?(?:def|class|func|fn|function|pub|public|private|protected|export)\b")
_RAW = {
    "raw_directive": re.compile(r"\.\. [\w:-]+::"),
    "raw_mkdocstr": re.compile(r"(?:^|\n)\s*:::\s*[\w.]+"),
    "raw_jdoc": re.compile(r"\{@[A-Za-z]+"),
    "raw_xmldoc": re.compile(r"</?(?:see|seealso|paramref|typeparamref|summary|param|typeparam|returns|"
                             r"remarks|exception|para|inheritdoc|c|code|value|example|list|item)\b[^<>\n]{0,200}/?>"),
    "raw_tag": re.compile(r"(?:^|(?<=\s))@(?:param|returns?|throws?|exception|see|since|example|brief|final|"
                          r"deprecated|typeParam|template|property|author|version|inheritDoc|internal|api|"
                          r"var|sample|receiver|constructor|retval|link|code|note|remarks|yields?)\b"),
    "raw_doxygen": re.compile(r"(?:^|(?<=[\s(]))\\(?:brief|param|tparam|returns?|retval|code|endcode|note|"
                              r"see|sa|throws?|details|file|defgroup|ingroup|warning|pre|post|verbatim|"
                              r"endverbatim|p|a|c|b|e|em|ref|li)\b"),
    "raw_alert": re.compile(r"\[!(?:NOTE|TIP|IMPORTANT|WARNING|CAUTION)\]", re.I),
    "raw_refdef": re.compile(r"\[[^\]\n]+\]:\s*\S"),
    "raw_role": re.compile(r":[a-z][\w:-]*:`"),
    # a closed pair: `**kwargs` or `2 ** n` in prose is the author's text, shown as GitHub shows it
    "raw_bold": re.compile(r"\*\*(?=[^\s*])[^*\n]{0,100}?[^\s*]\*\*"),
    "raw_admonition": re.compile(r"!!!|\?\?\?\+? \w"),  # an admonition, or a collapsible one (`??? note`)
    "raw_listmark": re.compile(r"(?:^|\s)\*\s+\S"),
    "raw_backtick": re.compile(r"`"),
}
# a name's suffix (`timeout~2`, `Flask.route~3`), not a version string in a comment (`xnu-2050.24.15~1`)
_SUFFIX = re.compile(r"(?<![\w.-])[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*~\d+\b")
_TYPE_KINDS = frozenset({"class", "struct", "enum", "interface", "trait", "type", "union", "record", "object",
                         "typedef", "alias", "protocol", "module", "namespace", "typealias"})
_BANNER = re.compile(r"([/=*#~+_-])\1{5,}")
# a comment that is code: a statement's end, a block's brace, a preprocessor line, a commented marker
_CODE_LINE = re.compile(r"(?:[;{}]\s*$|^\s*(?://|/\*|#\s*(?:include|define|if|endif)\b|return\b.*;))")
_WORDS = re.compile(r"\b[A-Za-z][a-z]+ [a-z]{2,} [a-z]{2,}\b")  # three words of prose in a row
_NODE = re.compile(r"^\s*([A-Za-z_][\w-]*)\s*[\[({>]", re.M)
_DOCUMENTS = (".md", ".rst", ".txt", ".markdown", ".adoc")
_SKIP_TEXT = frozenset({"code", "pre", "script", "style", "svg", "kbd", "samp"})
_VOID = frozenset({"br", "img", "input", "meta", "link", "hr", "source", "wbr", "area", "base", "col"})


class _Page(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.ids: set[str] = set()
        self.kinds: dict[str, str] = {}  # a heading's id -> its data-kind
        self.calls: list[str] = []  # hrefs of the links in "Calls:" lines
        self.cells: list[str] = []  # the text of each table cell of the article
        self._td = -1
        self._label = ""  # the bold label a paragraph opened with ("Calls:")
        self._link_icon = False
        self.empty_links: list[str] = []
        self.links: list[tuple[str, str, bool, bool]] = []  # href, label text, in the article, label is code
        self.text: list[str] = []  # visible article text outside code
        self.all_text: list[str] = []  # visible article text, code included
        self.title = ""
        self.diagrams: list[str] = []
        self.paragraphs: list[str] = []  # the text of each <p> of the article
        self.prose: list[str] = []  # the same, its code left out
        self.highlights: list[str] = []  # the text of each highlighted code block (div.highlight)
        self._p = -1
        self._hl = -1
        self._stack: list[str] = []
        self._article = 0
        self._skip = 0
        self._link: list[object] | None = None  # href, label, in the article, holds <code>
        self._in_title = False
        self._mermaid = -1

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if a.get("id"):
            self.ids.add(a["id"])
        if a.get("name") and tag == "a":
            self.ids.add(a["name"])
        if a.get("id") and a.get("data-kind"):
            self.kinds[a["id"]] = a["data-kind"]
        if self._link is not None and tag in ("img", "svg"):
            self._link_icon = True
        if tag in _VOID:
            return
        self._stack.append(tag)
        if tag == "article":
            self._article += 1
        if tag == "title":
            self._in_title = True
        if "mermaid" in a.get("class", "").split():
            self._mermaid = len(self._stack)
            self.diagrams.append("")
        if tag in _SKIP_TEXT:
            self._skip += 1
        if tag == "p" and self._article > 0 and self._p < 0:
            self._p = len(self._stack)
            self.paragraphs.append("")
            self.prose.append("")
        if tag == "div" and "highlight" in a.get("class", "").split() and self._hl < 0:
            self._hl = len(self._stack)
            self.highlights.append("\0sig" if "sb-signature" in a.get("class", "").split() else "")
        if tag in ("td", "th") and self._article > 0 and self._td < 0:
            self._td = len(self._stack)
            self.cells.append("")
        if tag == "p":
            self._label = ""
        if tag == "a" and "href" in a:
            self._link = [a["href"], "", self._article > 0, self._skip > 0]
            self._link_icon = bool(a.get("title") or a.get("aria-label"))
        elif tag == "code" and self._link is not None:
            self._link[3] = True

    def handle_endtag(self, tag: str) -> None:
        if tag in _VOID or tag not in self._stack:
            return
        while self._stack:
            top = self._stack.pop()
            if top == "article":
                self._article -= 1
            if top in _SKIP_TEXT:
                self._skip -= 1
            if top == "title":
                self._in_title = False
            if top == "a" and self._link is not None:
                href, label, in_article, code = self._link
                self.links.append((str(href), str(label), bool(in_article), bool(code)))
                if in_article and not str(label).strip() and not self._link_icon:
                    self.empty_links.append(str(href))
                if self._label == "Calls:":
                    self.calls.append(str(href))
                self._link = None
            if self._mermaid > len(self._stack):
                self._mermaid = -1
            if self._p > len(self._stack):
                self._p = -1
                self._label = ""  # a "Calls:" label names the links of its own paragraph only
            if self._hl > len(self._stack):
                self._hl = -1
            if self._td > len(self._stack):
                self._td = -1
            if top == tag:
                break

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data
        if self._mermaid > 0:
            self.diagrams[-1] += data
        if self._p > 0:
            if self._stack and self._stack[-1] == "strong" and not self.paragraphs[-1].strip():
                self._label += data.strip()
            self.paragraphs[-1] += data
            if not self._skip:
                self.prose[-1] += data
        if self._td > 0 and not self._skip:
            self.cells[-1] += data
        if self._hl > 0:
            self.highlights[-1] += data
        if self._link is not None:
            self._link[1] = str(self._link[1]) + data
        if self._article > 0 and self._mermaid < 0:
            self.all_text.append(data)
            if not self._skip:
                self.text.append(data)


def _names_symbol(label: str, target: str) -> bool:
    """A link label naming a symbol, not the file it points to (`Foo.bar`, `main.rs: Foo`, `run()`)."""
    label = label.strip()
    base = target.rsplit("/", 1)[-1].removesuffix(".html")
    stem = base.rsplit(".", 1)[0]
    if not label or "/" in label or label in (base, stem):
        return False
    if "/" not in label and posixpath.basename(file_page_ids([label])[label]).removesuffix(".md") == base:
        return False  # the file's own name, its page named the way every page is (`.travis.yml` -> `_travis`)
    if base.endswith(_DOCUMENTS) or (stem == "__init__" and "." in label):
        return False  # a document's own links go to pages, and `pkg.sub` names a package's __init__ page
    if label.rsplit(".", 1)[-1] == stem:
        return False  # a module's dotted name: its page's top is where it is
    if " " in label.split(":")[-1].strip():
        return False
    return bool(re.fullmatch(r"(?:[\w.-]+: )?[\w$.~]+(?:\(\))?", label))


def _site_dir(arg: Path, build: bool) -> Path:
    if (arg / "site" / "index.html").exists() and not build:
        return arg / "site"
    out = arg / ".sourcebook"
    if build:
        subprocess.run([sys.executable, "-c", "from sourcebook.cli import main; main()", "build", str(arg),
                        "--no-index"], check=True, stdout=subprocess.DEVNULL)
    return out / "site"


def audit(site: Path, examples: int = 0) -> Counter[str]:
    counts: Counter[str] = Counter(dict.fromkeys(KINDS, 0))
    pages: dict[str, _Page] = {}
    for path in sorted(site.rglob("*.html")):
        rel = path.relative_to(site).as_posix()
        if rel.startswith(("assets/", "search/")):
            continue
        parser = _Page()
        parser.feed(path.read_text(encoding="utf-8", errors="replace"))
        pages[rel] = parser
    shown: dict[str, int] = defaultdict(int)

    def hit(kind: str, page: str, detail: str) -> None:
        counts[kind] += 1
        if shown[kind] < examples:
            shown[kind] += 1
            print(f"  [{kind}] {page}: {detail[:160]}")

    edges: dict[str, set[str]] = defaultdict(set)
    for rel, page in pages.items():
        base = "http://site/" + rel
        # a document's own links (its author's words, not code) go where the author pointed them
        document = rel.removesuffix(".html").endswith(_DOCUMENTS)
        for href, label, in_article, code in page.links:
            if href.startswith("/") and not href.startswith("//"):
                hit("root_abs", rel, href)
                continue
            parts = urlsplit(href)
            if parts.scheme or parts.netloc or href.startswith(("mailto:", "javascript:")):
                continue
            target = urlsplit(urljoin(base, href))
            tpath = unquote(target.path).removeprefix("/")
            if tpath == "" or tpath.endswith("/"):
                tpath += "index.html"
            tpage = pages.get(tpath)
            if tpage is None:
                if not (site / tpath).exists():
                    hit("broken_anchor", rel, f"{href} (no page)")
                continue
            edges[rel].add(tpath)
            if target.fragment:
                if unquote(target.fragment) not in tpage.ids:
                    hit("broken_anchor", rel, href)
            elif (in_article and tpath.startswith("files/") and (code or not document)
                  and _names_symbol(label, tpath)):
                hit("top_links", rel, f"{label.strip()} -> {href}")
        text = "".join(page.text)
        for kind, rx in _RAW.items():
            for m in rx.finditer(text):
                hit(kind, rel, text[max(0, m.start() - 50):m.end() + 50].replace("\n", " "))
        visible = page.title + "\n" + "".join(page.all_text)
        for m in _SUFFIX.finditer(visible):
            hit("suffix", rel, visible[max(0, m.start() - 40):m.end() + 20].replace("\n", " "))
        for diagram in page.diagrams:
            nodes = set(_NODE.findall(diagram)) - {"graph", "classDiagram", "flowchart", "subgraph", "end",
                                                   "class", "style", "classDef", "click", "linkStyle"}
            if len(nodes) > 25:
                hit("big_diagram", rel, f"{len(nodes)} nodes")
        for href in page.empty_links:
            hit("empty_link", rel, href)
        for href in page.calls:
            target = urlsplit(urljoin(base, href))
            tpage = pages.get(unquote(target.path).removeprefix("/"))
            kind = tpage.kinds.get(unquote(target.fragment), "") if tpage and target.fragment else ""
            if kind in _TYPE_KINDS:
                hit("calls_type", rel, f"{kind} {href}")
        for summary in (*page.prose, *page.cells):
            words = " ".join(summary.split())
            if document:
                continue  # a document's rules and code lines are its author's layout
            if _BANNER.search(words) or (_CODE_LINE.search(words) and not _WORDS.search(words)):
                hit("banner_sum", rel, words)
        seen_paragraphs: set[str] = set()
        for para in page.paragraphs:
            norm = " ".join(para.split())
            if len(norm) >= 80:
                if norm in seen_paragraphs:
                    hit("repeated", rel, norm)
                seen_paragraphs.add(norm)
        for block in page.highlights:
            # a signature block: marked sb-signature, or (older sites) a one-line highlight; a symbol's
            # source block has many lines, and its long lines are the repository's own
            lines = block.strip("\n").split("\n")
            if not (block.startswith("\0sig") or len(lines) == 1):
                continue
            lines = block.removeprefix("\0sig").strip("\n").split("\n")
            if _SIGNATURE_START.match(lines[0]) and any(len(line) > 100 for line in lines):
                hit("long_sig", rel, block)
        # a short file's page is its code: the highlighted source counts as content (signatures do not)
        code = sum(len(b.strip()) for b in page.highlights if not b.startswith("\0sig"))
        if rel != "404.html" and len(" ".join(text.split())) + code < 200:
            hit("thin", rel, " ".join(text.split())[:100])
    seen = {"index.html"}
    todo = ["index.html"]
    while todo:
        for nxt in edges.get(todo.pop(), ()):
            if nxt not in seen:
                seen.add(nxt)
                todo.append(nxt)
    for rel in pages:
        if rel.startswith("files/") and rel not in seen:
            hit("unreachable", rel, "")
    counts["pages"] = len(pages)
    return counts


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("paths", nargs="+", type=Path)
    ap.add_argument("--build", action="store_true", help="build each repository's site first")
    ap.add_argument("--examples", type=int, default=0, help="print up to N examples of each finding")
    args = ap.parse_args()
    rows = []
    for arg in args.paths:
        site = _site_dir(arg, args.build)
        if args.examples:
            print(f"{arg}:")
        rows.append((arg.name, audit(site, args.examples)))
    cols = ("pages", *KINDS)
    print("site".ljust(14) + " ".join(c.removeprefix("raw_")[:9].rjust(9) for c in cols))
    for name, counts in rows:
        print(name[:13].ljust(14) + " ".join(str(counts[c]).rjust(9) for c in cols))


if __name__ == "__main__":
    main()
