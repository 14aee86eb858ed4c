"""Raw markup the issue-22 corpus showed a reader: one cause per test, each through its real render path."""

from __future__ import annotations

import html
import re

import markdown

from generator.analyze.documents import read_document
from generator.analyze.facts import FileFacts, SourceFile
from generator.markup.docstrings import render_docstring
from generator.markup.md_html import render_markdown
from generator.pages.render_markdown import render_module_page, render_overview_page
from generator.pages.writer import ExtractiveWriter, FileContext, ModuleContext, OverviewContext, PageLink


def _visible(page_html: str) -> str:
    """The words a reader sees outside code."""
    no_code = re.sub(r"<(code|pre)\b.*?</\1>", "", page_html, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", no_code))


def test_a_long_summary_is_cut_between_code_spans_never_inside_one() -> None:
    summary = "Sections: " + ", ".join(f"`Section number {i}`" for i in range(40)) + "."
    ctx = ModuleContext(path="docs", page_id="modules/docs/index.md", title="docs/",
                        files=(PageLink("docs/a.md", "files/docs/a.md.md", "a.md", summary),))
    md = render_module_page(ctx, ExtractiveWriter().module_page(ctx), writer_id="extractive/1")
    row = next(line for line in md.split("\n") if "a.md" in line and "Sections" in line)
    assert "…" in row
    assert "`" not in _visible(markdown.markdown(row, extensions=["tables"]))
    assert row.count("<code>") == row.count("</code>") >= 5


def test_a_documents_summary_is_prose_not_a_list_run_together() -> None:
    text = ("# Development Scripts\n\n* `scripts/install` - Install dependencies.\n"
            "* `scripts/test` - Run the "
            "tests.\n\nStyled after GitHub's scripts.\n")
    doc = read_document(text, "markdown")
    assert doc.first_paragraph == "Styled after GitHub's scripts."
    # a paragraph ends where a list starts right under it, as GitHub reads it
    doc = read_document("Learn more at the blog and..\n* Docs: https://x.org\n* Source: y\n",
                        "markdown")
    assert doc.first_paragraph == "Learn more at the blog and.."
    facts = FileFacts(file=SourceFile("scripts/README.md", "markdown", 10, "abc", kind="doc"),
                      docstring=read_document(text, "markdown").first_paragraph, title="Development Scripts")
    summary = ExtractiveWriter().file_page(FileContext(facts=facts, page_id="files/scripts/README.md.md",
                                                       module="scripts")).summary
    assert "*" not in summary
    assert summary.startswith("Styled after")


def test_a_list_right_under_a_paragraph_line_is_a_list() -> None:
    out = render_markdown("Learn more at the blog\n\nand..\n* Docs: https://x.org\n* Source: y\n\n"
                          "Looking beyond REST:\n- [webrpc](https://w.org) - RPC\n- gRPC - protobufs\n")
    assert out.count("<li>") == 4
    assert "*" not in _visible(out)
    assert "- gRPC" not in _visible(out)
    # a rule and a setext underline under a paragraph stay what they are
    out = render_markdown("para\n- - -\nmore\n\nTitle\n-----\n")
    assert "<hr" in out
    assert "<li>" not in out


def test_a_fence_with_rustdoc_attributes_is_code() -> None:
    out = render_markdown("Prints each entry:\n\n```rust,no_run\nuse walkdir::WalkDir;\n```\n\n"
                          "```rust ignore\nfn a() {}\n```\n")
    assert "```" not in out
    assert out.count('class="language-rust highlight"') == 2


def test_a_rust_doc_fence_inside_a_list_item_is_code() -> None:
    doc = ("Both use cases:\n\n  - **Attaching context whose type is insignificant.**\n\n"
           "    In other libraries it can be risky.\n\n    ```\n    # use anyhow::bail;\n"
           "    use anyhow::Result;\n    fn main() {}\n    ```\n")
    out = render_docstring(doc, "rust")
    assert "```rust\nuse anyhow::Result;\nfn main() {}\n```" in out
    assert "bail" not in out  # rustdoc's hidden `# ` lines stay hidden
    page = markdown.markdown(out, extensions=["fenced_code"])
    assert "```" not in _visible(page)


def test_readme_links_to_repeated_headings_land_on_the_home_page() -> None:
    readme = ("# Commander.js\n\nThe complete solution for command-line programs.\n\n## Contents\n\n"
              "- [Commander.js](#commanderjs)\n- [Options](#options)\n"
              "  - [More configuration](#more-configuration)\n- [Commands](#commands)\n"
              "  - [More configuration](#more-configuration-1)\n"
              "- [Node options such as `--harmony`](#node-options-such-as---harmony)\n\n"
              "## Options\n\nText.\n\n### More configuration\n\nA.\n\n## Commands\n\nB.\n\n"
              "### More configuration\n\nC.\n\n## Node options such as `--harmony`\n\nD.\n\n"
              "Example: `[x](#options)` stays.\n")
    ctx = OverviewContext(repo_name="commander", readme=readme, readme_path="README.md",
                          languages=(("javascript", 2),), file_count=2, symbol_count=3)
    md = render_overview_page(ctx, ExtractiveWriter().overview(ctx), writer_id="extractive/1")
    # the site's own Markdown: toc and attr_list as in its mkdocs.yml
    page = markdown.markdown(md, extensions=["toc", "attr_list", "tables"])
    ids = set(re.findall(r'\sid="([^"]*)"', page))
    hrefs = re.findall(r'href="#([^"]*)"', page)
    assert {"md-more-configuration", "md-more-configuration-1", "md-node-options-such-as---harmony"} <= ids
    assert len(hrefs) >= 6
    assert all(h in ids or h == "" for h in hrefs), (hrefs, ids)
    assert "[x](#options)" in page  # a link in a code span is an example, left alone


def test_a_documents_links_to_repeated_headings_land() -> None:
    out = render_markdown("[second](#usage-1) [flags](#node-options-such-as---harmony)\n\n## Usage\n\nA.\n\n"
                          "## Usage\n\nB.\n\n## Node options such as `--harmony`\n")
    ids = set(re.findall(r'\sid="([^"]*)"', out))
    hrefs = re.findall(r'href="#([^"]*)"', out)
    assert len(hrefs) == 2
    assert set(hrefs) <= ids, (hrefs, ids)


def test_a_folders_readme_that_opens_with_a_list_is_described_by_its_prose() -> None:
    readme = "# Examples\n\n* Amazon Book Search\n* Uses `requests`\n\nEach example runs on its own.\n"
    ctx = ModuleContext(path="examples", page_id="modules/examples/index.md", title="examples/",
                        readme=readme)
    summary = ExtractiveWriter().module_page(ctx).summary
    assert summary.startswith("Each example runs on its own.")
    assert "*" not in summary


def test_a_details_blocks_markdown_body_is_rendered_as_github_does() -> None:
    doc = ("Intro.\n\n<details>\n  <summary>Why the currying `()(...)` &amp; <b>why</b>?</summary>\n\n"
           "  <br/>\n\n"
           "**TLDR**: state `T` is invariant.\n\n```ts\nconst x = 1\n```\n\n"
           "  <details open>\n    <summary>More</summary>\n\n- a `b`\n  - c\n\n  </details>\n\n</details>\n\n"
           "After.\n\n<details><summary>One line</summary>Body **here**.</details>\n")
    out = render_markdown(doc)
    assert out.count("<details") == 3 == out.count("</details>")
    assert "<details class=\"note\" open=\"\">" in out  # `open` stays open
    assert "<summary>Why the currying <code>()(...)</code> &amp; why?</summary>" in out
    assert "<strong>TLDR</strong>" in out
    assert "<strong>here</strong>" in out
    assert out.count("<li>") == 2
    assert 'class="language-ts highlight"' in out
    assert not re.search(r"\*\*|`", _visible(out))
    # the summary is untrusted: it cannot end the title or open HTML
    out = render_markdown('<details><summary>a" onclick="x <img src=x onerror=y> &lt;i&gt;</summary>\n\nb\n'
                          '</details>\n')
    assert out == '<details class="note">\n<summary>a" onclick="x &lt;i&gt;</summary>\n<p>b</p>\n</details>'
    # unclosed, or in code: left as it is
    assert "<details" not in render_markdown("```html\n<details>\n\n**x**\n</details>\n```\n").replace(
        "&lt;details", "")
    assert "??? note" not in render_markdown("<details>\n\n**x**\n")


def _site_extensions() -> list[str]:
    """The Markdown extensions of the site's mkdocs.yml (its template): the home page is built with them."""
    from pathlib import Path

    text = (Path(__file__).resolve().parents[2] / "templates" / "mkdocs.yml.j2").read_text(encoding="utf-8")
    block = text.split("\nmarkdown_extensions:\n", 1)[1].split("\n\n", 1)[0]
    return [m.group(1) for m in re.finditer(r"^  - ([\w.]+)", block, re.M) if m.group(1) != "toc"]


def test_a_readmes_details_block_is_collapsible_markdown_on_the_home_page() -> None:
    readme = ("# Zed\n\nA state manager for apps.\n\n## Usage\n\n<details>\n<summary>Why `T`?</summary>\n\n"
              "**TLDR**: it is `invariant`.\n\n</details>\n")
    ctx = OverviewContext(repo_name="zed", readme=readme, readme_path="README.md",
                          languages=(("typescript", 2),), file_count=2, symbol_count=3)
    md = render_overview_page(ctx, ExtractiveWriter().overview(ctx), writer_id="extractive/1")
    page = markdown.markdown(md, extensions=["toc", *_site_extensions()])
    assert re.search(r"<details class=\"note\">\s*<summary>Why <code>T</code>\?</summary>", page)
    assert "<strong>TLDR</strong>" in page
    assert not re.search(r"\*\*|`|\?\?\?", _visible(page))
    # a docstring's own `??? x` line is prose, never a collapsible block of the site's Markdown
    out = render_docstring("Summary.\n\n??? note this is prose\n", "google")
    assert "<details" not in markdown.markdown(out, extensions=_site_extensions())


def test_rest_blocks_in_a_parameters_description_read_as_words_in_its_cell() -> None:
    numpy = ("Do it.\n\nParameters\n----------\nletters : str\n    String of letters.\n\n"
             "    .. versionadded:: 0.1\nonly : bool\n    Sentence.\n\n    .. versionadded:: 0.1.2\n"
             "    .. deprecated:: 0.2\n        A multiline description,\n        on two lines.\n"
             "kind : str\n    Kinds:\n\n    - a thing\n    - b thing\n\n    .. note:: Be careful\n")
    sphinx = ("Retry.\n\n:param float backoff: A factor. urllib3 will sleep for::\n\n"
              "        {backoff factor} * (2 ** ({retries}))\n\n    seconds. Or by::\n\n"
              "        random.uniform(0, {jitter})\n\n    and so on.\n")
    for doc in (numpy, sphinx):
        page = markdown.markdown(render_docstring(doc, "python"), extensions=["tables", "admonition"])
        seen = _visible(page)
        assert not re.search(r"\.\.|::|`", seen), seen
        assert not re.search(r"(?:^|\s)[*-]\s+\S", seen), seen
    page = markdown.markdown(render_docstring(numpy, "python"), extensions=["tables"])
    assert "String of letters. <em>Added in version 0.1</em>." in page
    assert "<em>Deprecated since version 0.2</em>: A multiline description, on two lines." in page
    assert "Kinds: a thing; b thing. Note: Be careful" in page
    page = markdown.markdown(render_docstring(sphinx, "python"), extensions=["tables"])
    assert "sleep for: <code>{backoff factor} * (2 ** ({retries}))</code> seconds." in page


def test_a_rest_list_under_a_lead_in_line_is_a_list_and_its_sublist_nests() -> None:
    doc = ("Validate.\n\nNotes\n-----\nThe error codes are defined as:\n- First two characters: section:\n"
           "   * GL: Global (no section)\n   * SS: Short summary\n- Last two characters: a number\n\n"
           "For example, PR02.\n")
    page = markdown.markdown(render_docstring(doc, "python"), extensions=["admonition"])
    assert re.search(r"<ul>\s*<li>First two characters: section:\s*<ul>\s*<li>GL: Global", page), page
    assert page.count("<li>") == 4
    assert not re.search(r"(?:^|\s)[*-]\s+\S", _visible(page))


def test_a_rest_folder_readme_whose_link_target_wraps_is_described_whole() -> None:
    readme = ("This directory contains entries: small\n**ReST**-formatted text added to ``CHANGES.rst`` by "
              "`towncrier\n<https://towncrier.readthedocs.io/>`__.\n\nMore.\n")
    ctx = ModuleContext(path="changelog", page_id="modules/changelog/index.md", title="changelog/",
                        readme=readme,
                        files=(PageLink("changelog/a.rst", "files/changelog/a.rst.md", "a.rst"),))
    summary = ExtractiveWriter().module_page(ctx).summary
    assert summary.startswith("This directory contains entries: small ReST-formatted text added to "
                              "`CHANGES.rst` by towncrier."), summary


def test_a_literal_inside_rest_bold_is_code() -> None:
    from generator.markup.rst import render_rst

    out = render_rst("* Deprecated TLS 1.1.\n  **Starting in v2.0: a ``DeprecationWarning`` will fail**\n")
    assert "<strong>Starting in v2.0: a <code>DeprecationWarning</code> will fail</strong>" in out
    assert "`" not in _visible(out)


def test_links_to_headings_with_emphasis_land_as_on_github() -> None:
    readme = ("# Tool\n\nThe complete solution for programs.\n\n## Contents\n\n"
              "- [Declaring _program_ variable](#declaring-program-variable)\n"
              "- [Init](#the-__init__-file)\n\n"
              "## Declaring _program_ variable\n\nA.\n\n## The `__init__` file\n\nB.\n")
    ctx = OverviewContext(repo_name="tool", readme=readme, readme_path="README.md",
                          languages=(("javascript", 2),), file_count=2, symbol_count=3)
    md = render_overview_page(ctx, ExtractiveWriter().overview(ctx), writer_id="extractive/1")
    page = markdown.markdown(md, extensions=["toc", *_site_extensions()])
    ids = set(re.findall(r'\sid="([^"]*)"', page))
    hrefs = re.findall(r'href="#([^"]*)"', page)
    assert {"md-declaring-program-variable", "md-the-__init__-file"} <= ids
    assert hrefs
    assert set(hrefs) <= ids, (hrefs, ids)
    out = render_markdown(readme)
    assert 'href="#md-declaring-program-variable"' in out
