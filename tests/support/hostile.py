"""Hostile markup shared by the sanitizer tests: Markdown whose attribute lists try to put handlers and an
overlay into a page, and a parser listing what a browser would act on in built HTML."""

from __future__ import annotations

import re
from html.parser import HTMLParser

PWN = "document.body.dataset.pwned=1"
# The reproductions of issue 9: attribute lists that put handlers, and a style overlay, into the page.
HOSTILE_MARKDOWN = (
    f'![b](https://example.com/x.png){{: onerror="{PWN}" }}\n\n'
    f'## Click me {{ onclick="{PWN}" }}\n\n'
    f'A [link](https://example.com/){{: onmouseover="{PWN}" }} here.\n\n'
    "Overlay text.\n"
    '{: style="position:fixed;top:0;left:0;width:100%;height:100%;z-index:9999" }\n\n'
    "[js](javascript:alert(1)){: .x } and [data](data:text/html,hi)\n\n"
    "### Shadow {: #__config }\n\n"
)


class ActiveMarkup(HTMLParser):
    """What a browser would act on: handlers, script-capable URLs, positioning styles, foreign scripts."""

    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        for name, raw in attrs:
            value = re.sub(r"[\x00-\x20]", "", raw or "").lower()
            if name.startswith("on"):
                self.found.append(f"<{tag} {name}>")
            if name in {"href", "src", "action", "formaction", "data", "xlink:href"} and value.startswith(
                    ("javascript:", "data:", "vbscript:")):
                self.found.append(f"<{tag} {name}={value[:30]}>")
            if name == "style" and re.search(r"position|inset|z-index", value):
                self.found.append(f"<{tag} style={value[:30]}>")
        if tag in {"iframe", "object", "embed", "frame"}:
            self.found.append(f"<{tag}>")
        if tag == "script":
            src = dict(attrs).get("src") or ""
            kind = dict(attrs).get("type") or ""
            if not src and kind != "application/json":
                self.found.append("inline <script>")
            if src and not re.search(r"(^|/)assets/(sourcebook|javascripts)/[\w.-]+\.js$", src):
                self.found.append(f"<script src={src}>")
