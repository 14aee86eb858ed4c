"""Where a link of a rendered document (reST or Markdown) points on the built page, or nowhere.

Both document renderers ask the same question of every URL the repository wrote: kept as written (the web),
turned into a built page of this wiki (a repository path), or dropped with
its words kept (any other scheme, a host without scheme, a malformed URL).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from urllib.parse import urlsplit

LinkResolver = Callable[[str], str | None]


def link_target(uri: str, resolve: LinkResolver) -> str | None:
    """The URL `uri` gets on the page, or None to drop the link. `resolve` maps a repository path to its
    page. A `#fragment` is dropped: each renderer prefixes its heading ids, and one that can follow a
    fragment to them answers it before asking here."""
    try:
        parts = urlsplit(uri)
    except ValueError:
        return None
    scheme = parts.scheme.lower()
    if scheme in ("http", "https", "mailto"):
        return uri
    if scheme or parts.netloc or not uri or uri.startswith("#"):
        return None
    target = resolve(uri)
    # raw HTML is not rewritten by MkDocs: a page link must already be the built .html (plain URLs)
    return re.sub(r"\.md(?=$|#)", ".html", target) if target else None
