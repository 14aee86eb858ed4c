"""One type across its files (issue 32): a C# partial class over three files and a Kotlin multiplatform
`expect`/`actual` layout, built for real; their pages show one type, its main section listing every part."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path

from generator.build import build
from sourcebook.config import load_config

CLIENT_MAIN = """\
namespace Acme.Net
{
    /// <summary>Sends requests and reads their replies.</summary>
    public partial class Client
    {
        public void Send(string body) { }
    }
}
"""
CLIENT_RETRY = """\
namespace Acme.Net
{
    public partial class Client
    {
        public int Retry(int times) { return times; }
    }
}
"""
CLIENT_LOG = """\
namespace Acme.Net
{
    partial class Client
    {
        public void Trace(string line) { }
        private void Flush() { }
    }
}
"""
KT_COMMON = """\
package acme.io

/** Reads the platform's clock. */
expect class Clock() {
    fun now(): Long
}
"""
KT_JVM = """\
package acme.io

actual class Clock actual constructor() {
    actual fun now(): Long = System.currentTimeMillis()
}
"""
KT_JS = """\
package acme.io

actual class Clock actual constructor() {
    actual fun now(): Long = 0L
}
"""


def _text(md: str) -> str:
    return html.unescape(re.sub(r"<[^>]+>", "", md))


def _headings(md: str) -> list[str]:
    return [html.unescape(line) for line in md.splitlines() if line.startswith("#")]


def test_partial_class_and_expect_actual_read_as_one_type(make_repo: Callable[..., Path]) -> None:
    root = make_repo({
        "src/Net/Client.cs": CLIENT_MAIN,
        "src/Net/Client.Retry.cs": CLIENT_RETRY,
        "src/Net/Logging/ClientLog.cs": CLIENT_LOG,
        "lib/src/commonMain/kotlin/acme/io/Clock.kt": KT_COMMON,
        "lib/src/jvmMain/kotlin/acme/io/Clock.jvm.kt": KT_JVM,
        "lib/src/jsMain/kotlin/acme/io/Clock.js.kt": KT_JS,
    })
    build(load_config(root), index=False)
    out = root / ".sourcebook"
    files = out / "docs" / "files"
    main = (files / "src" / "Net" / "Client.cs.md").read_text()
    retry = (files / "src" / "Net" / "Client.Retry.cs.md").read_text()
    log = (files / "src" / "Net" / "Logging" / "ClientLog.cs.md").read_text()

    site = out / "site" / "files"
    page_html = {name: (site / name).read_text() for name in (
        "src/Net/Client.cs.html", "src/Net/Client.Retry.cs.html", "src/Net/Logging/ClientLog.cs.html",
        "lib/src/commonMain/kotlin/acme/io/Clock.kt.html", "lib/src/jvmMain/kotlin/acme/io/Clock.jvm.kt.html",
        "lib/src/jsMain/kotlin/acme/io/Clock.js.kt.html")}
    shown = {name: " ".join(_text(text).split()) for name, text in page_html.items()}

    # the documented part is the main section: it names the other files and lists their members, each
    # linked to its own section on its own page
    assert "Partial type declared in 3 files: this one · Client.Retry.cs · ClientLog.cs" in shown[
        "src/Net/Client.cs.html"]
    assert "Declared in its other parts" in shown["src/Net/Client.cs.html"]
    assert "](Client.Retry.cs.md#sym-acme-net-client-retry)" in main
    assert "](Logging/ClientLog.cs.md#sym-acme-net-client-trace)" in main
    assert "](Logging/ClientLog.cs.md#sym-acme-net-client-flush)" in main
    assert any(h.startswith("##### Acme.Net.Client.Send {") for h in _headings(main))  # its own member stays
    assert any(h.startswith("#### Acme.Net.Client {") for h in _headings(main)), _headings(main)

    # the other parts say which type they are part of, link to the main section and keep their members
    for md, name, member in ((retry, "src/Net/Client.Retry.cs.html", "Acme.Net.Client.Retry"),
                             (log, "src/Net/Logging/ClientLog.cs.html", "Acme.Net.Client.Trace")):
        part_of = "Part of the partial type Acme.Net.Client, whose main section lists the members of every"
        assert part_of in shown[name]
        assert re.search(r"\]\((?:\.\./)?Client\.cs\.md#sym-acme-net-client\)", md), md
        assert any(h.startswith("#### Acme.Net.Client (partial) { #sym-acme-net-client ")
                   for h in _headings(md)), _headings(md)
        assert any(h.startswith(f"##### {member} {{") for h in _headings(md)), _headings(md)

    # Kotlin: the expect declaration is the main section; each actual names its source set
    kt = files / "lib" / "src"
    common = (kt / "commonMain" / "kotlin" / "acme" / "io" / "Clock.kt.md").read_text()
    jvm = (kt / "jvmMain" / "kotlin" / "acme" / "io" / "Clock.jvm.kt.md").read_text()
    assert "Actual declarations: Clock.js.kt (jsMain) · Clock.jvm.kt (jvmMain)" in shown[
        "lib/src/commonMain/kotlin/acme/io/Clock.kt.html"]
    assert any(h.startswith("### Clock {") for h in _headings(common))
    assert "Actual for jvmMain of expect Clock" in shown["lib/src/jvmMain/kotlin/acme/io/Clock.jvm.kt.html"]
    assert "Actual for jsMain of expect Clock" in shown["lib/src/jsMain/kotlin/acme/io/Clock.js.kt.html"]
    assert "](../../../../commonMain/kotlin/acme/io/Clock.kt.md#sym-clock)" in jvm
    assert any(h.startswith("### Clock (actual, jvmMain) {") for h in _headings(jvm))
    assert any(h.startswith("#### Clock.now {") for h in _headings(jvm))

    # the site's search holds one section titled by each type's bare name; the other parts are titled as
    # parts, never as more types of that name
    shards = "".join(p.read_text() for p in (out / "site" / "search").rglob("*.js"))
    assert shards.count('"Acme.Net.Client"') == 1
    assert shards.count('"Acme.Net.Client (partial)"') == 2
    assert shards.count('"Clock"') == 1
    assert shards.count('"Clock (actual, jvmMain)"') == 1
