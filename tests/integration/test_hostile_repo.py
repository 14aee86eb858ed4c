"""One repository that tries everything of issue 9 at once, through the real CLI: `build` with an LLM, then
`ask`. It plants script in its README, docstrings and a UTF-16 source, secrets of every kind, a config that
points the LLM, the embedder, the index and the output somewhere else, and pre-made files in its own
`.sourcebook/docs/` (an HTML page, and scripts named like Material's and sourcebook's own assets, which
MkDocs would prefer over the theme's on every page). The model it is given answers with hostile prose too.

Afterwards: the built site holds no event handler, script-capable URL, style overlay or foreign script; the
theme's own scripts are the ones served; nothing outside the repository's `.sourcebook/` changed; the
endpoint the repository chose received nothing; the user's endpoint received the source but no planted secret.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import material
import pytest

from generator.markup.html_sanitize import audit_page
from tests.support.fake_llm import FakeLLM, Reply, page_writer_responder, request_schema_name
from tests.support.hostile import ActiveMarkup
from tests.support.planted_secrets import (
    AWS_ID,
    DSN_PASSWORD,
    GITHUB,
    OPENAI,
    PEM,
    PEM_LINES,
    SLACK,
    STRIPE,
    YAML_ADMIN,
    YAML_PASSWORD,
)

ROOT = Path(__file__).resolve().parents[2]
PWN = "document.body.dataset.pwned=1"
# Material's main script: a file of that name in docs/ would be served in its place on every page
MATERIAL_JS = Path(material.__file__).parent / "templates" / "assets" / "javascripts"
MATERIAL_BUNDLE = next(MATERIAL_JS.glob("bundle.*.min.js"))
UTF16_TOKEN = "ghp_" + "Zq9Wx8Ec7Rv6Tb5Yn4Um3Ik2Ol1Pa0Sd9Fg8"

README = f"""# Hostile

A package that documents itself (marker-readme).

![badge](x.png){{: onerror="{PWN}" }}

## Install {{: onclick="{PWN}" style="position:fixed;top:0;left:0;width:100%;height:100%" }}

[home](https://example.com/){{: onmouseover="{PWN}" }} [js](javascript:alert(1)) [JS](JaVaScRiPt:alert(2))
[data](data:text/html,<script>alert(3)</script>) <img src=x onerror="{PWN}">
<a href="java&#x09;script:alert(4)">tab</a> <div style="position:fixed;inset:0">overlay</div>
"""

SETTINGS = f'''"""Settings of the hostile package ![x](y){{: onerror="{PWN}" }} [j](javascript:alert(5))."""

DEBUG = False  # marker-settings
AWS_ACCESS_KEY_ID = "{AWS_ID}"
GITHUB_TOKEN = "{GITHUB}"
OPENAI_KEY = "{OPENAI}"
SLACK_BOT = "{SLACK}"
STRIPE_LIVE = "{STRIPE}"
DATABASE_URL = "postgres://app:{DSN_PASSWORD}@db.internal:5432/app"
SIGNING_KEY = """{PEM}"""


def load(name):
    """Load setting `name` <script>alert(6)</script> {{: onclick="{PWN}" }}."""
    return globals()[name]
'''

APP_YAML = f"""# marker-yaml
database:
  db_password: {YAML_PASSWORD}
  admin_pass: "{YAML_ADMIN}"
"""

UTF16_SOURCE = f'''"""A legacy module saved as UTF-16 (marker-utf16)."""

LEGACY_TOKEN = "{UTF16_TOKEN}"


def legacy():
    """Return the legacy token's name."""
    return "LEGACY_TOKEN"
'''

# a reST doc, rendered by docutils on its page: raw HTML, file insertion, script URLs, handlers in images
GUIDE_RST = f"""Guide
=====

The guide (marker-rst) to :class:`pkg.settings.load <javascript:alert(8)>` and `js <javascript:alert(9)>`_.

.. raw:: html

   <script>{PWN}</script>

.. raw:: html
   :file: /etc/passwd

.. include:: /etc/passwd

.. csv-table:: Users
   :file: /etc/passwd

.. image:: x.png
   :target: javascript:alert(10)
   :alt: <img src=x onerror="{PWN}">

.. |evil| image:: https://example.com/track.png

Inline |evil| and <img src=x onerror="{PWN}"> and `data <data:text/html,<script>alert(11)</script>>`_.
"""

SECRETS = [AWS_ID, GITHUB, OPENAI, SLACK, STRIPE, DSN_PASSWORD, YAML_PASSWORD, YAML_ADMIN, UTF16_TOKEN,
           *PEM_LINES]
MARKERS = ["marker-readme", "marker-settings", "marker-yaml", "marker-utf16"]
USER_KEY = "sk-user-" + "OwnKeyOfTheUser0123456789"


def _hostile_model(body: dict[str, Any]) -> Reply:
    """The user's model, scripted: valid drafts and answers whose prose carries the README's tricks too."""
    if request_schema_name(body) == "EvidenceAnswer":
        return Reply.ok({"answer": f"Settings live in `pkg/settings.py` {{: onclick=\"{PWN}\" }}.",
                         "citations": ["pkg/settings.py"]})
    payload = dict(page_writer_responder(body).payload)
    payload["summary"] += f' See [more](javascript:alert(7)){{: onmouseover="{PWN}" }}.'
    if "purpose" in payload:
        payload["purpose"] = f'It loads settings. {{: style="position:fixed;inset:0" onclick="{PWN}" }}'
    return Reply.ok(payload)


def _tree(root: Path, skip: Path) -> dict[str, str]:
    """Every path under root (but skip) -> a digest of its content or link target: what 'unchanged' means."""
    out: dict[str, str] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if here / d != skip]
        for name in dirnames + filenames:
            path = here / name
            rel = path.relative_to(root).as_posix()
            if path.is_symlink():
                out[rel] = "link:" + os.readlink(path)
            elif path.is_file():
                out[rel] = hashlib.sha256(path.read_bytes()).hexdigest()
            else:
                out[rel] = "dir"
    return out


def _cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    full = {k: v for k, v in os.environ.items() if not k.startswith(("SOURCEBOOK_", "OPENAI_"))}
    full.update({"PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1", "NO_COLOR": "1", **env})
    return subprocess.run([sys.executable, "-m", "sourcebook.cli", *args], cwd=cwd, env=full, check=False,
                          capture_output=True, text=True, timeout=600)


@pytest.mark.slow
def test_a_repository_that_tries_everything_gets_none_of_it(make_repo: Callable[..., Path], tmp_path: Path,
                                                            fake_llm: FakeLLM) -> None:
    victim = tmp_path / "victim"
    for rel in ("theme/keep.txt", "site/index.html", "docs/notes.md", "index/data.bin"):
        (victim / rel).parent.mkdir(parents=True, exist_ok=True)
        (victim / rel).write_text(f"the user's own {rel}\n", encoding="utf-8")
    elsewhere_index = tmp_path / "elsewhere-index"
    bundle = MATERIAL_BUNDLE.name
    with FakeLLM() as elsewhere:
        config = f"""site_name = "Hostile"
out_dir = "{victim}"
index_uri = "{elsewhere_index}"

[llm]
base_url = "{elsewhere.base_url}"
model = "exfil-model"
api_key = "repo-chosen-key"

[embed]
provider = "openai"
base_url = "{elsewhere.base_url}"
model = "exfil-embed"
"""
        repo = make_repo({
            "README.md": README,
            "sourcebook.toml": config,
            "pkg/__init__.py": '"""The hostile package."""\n',
            "pkg/settings.py": SETTINGS,
            "pkg/legacy.py": b"\xff\xfe" + UTF16_SOURCE.encode("utf-16-le"),
            "config/app.yaml": APP_YAML,
            "docs/guide.rst": GUIDE_RST,
            "docs/deep.rst": "".join(" " * i + "- level\n\n" for i in range(0, 1200, 2)),  # docutils recurses
            # committed into its own output folder: served as-is, or in place of the theme's scripts
            ".sourcebook/docs/evil.html": f'<script>{PWN}</script><script src="evil.js"></script>\n',
            ".sourcebook/docs/evil.js": f"{PWN}\n",
            f".sourcebook/docs/assets/javascripts/{bundle}": f"{PWN}\n",
            ".sourcebook/docs/assets/sourcebook/sourcebook.js": f"{PWN}\n",
            ".sourcebook/docs/404.html": f"<script>{PWN}</script>\n",
        })
        outside_before = _tree(tmp_path, skip=repo / ".sourcebook")
        env = {"SOURCEBOOK_LLM_BASE_URL": fake_llm.base_url, "SOURCEBOOK_LLM_MODEL": "user-model",
               "OPENAI_API_KEY": USER_KEY}
        fake_llm.responder = _hostile_model

        built = _cli(["build", str(repo)], env, repo)
        assert built.returncode == 0, built.stdout + built.stderr
        warning = [line for line in built.stderr.splitlines() if "ignored settings" in line]
        assert len(warning) == 1, built.stderr  # the dropped settings are named in one line
        for name in ("llm.base_url", "llm.api_key", "embed.base_url", "index_uri", "out_dir"):
            assert name in warning[0]
        asked = _cli(["ask", "Which settings does the hostile package load, and from where?"], env, repo)
        assert asked.returncode == 0, asked.stdout + asked.stderr

        # the endpoint the repository chose heard nothing, not even the user's key
        assert elsewhere.calls == 0
        assert not elsewhere.embedding_requests
    assert not elsewhere_index.exists()
    assert _tree(tmp_path, skip=repo / ".sourcebook") == outside_before  # victim/, the repo's own files

    # the user's endpoint got the source (so redaction is what kept the secrets out) and no secret
    sent = fake_llm.all_text()
    assert fake_llm.calls > 1
    for marker in MARKERS:
        assert marker in sent, f"{marker}: its file was never sent, nothing is proved"
    assert [s for s in SECRETS if s in sent] == []
    assert USER_KEY not in sent

    site = repo / ".sourcebook" / "site"
    pages = sorted(site.rglob("*.html"))
    assert len(pages) > 5
    assert not (site / "evil.html").exists()
    assert not (site / "evil.js").exists()
    for page in pages:
        text = page.read_text(encoding="utf-8")
        assert audit_page(text) == [], page
        parser = ActiveMarkup()
        parser.feed(text)
        assert parser.found == [], (page, parser.found[:5])
    for served in site.rglob("*.js"):
        # the search data (search/search_index.js, search/<key>/*.js) is JSON text, checked entry by entry
        if "search" not in served.relative_to(site).parts[:1]:
            assert PWN not in served.read_text(encoding="utf-8", errors="replace"), served
    # Material's search shows each entry's title and text as HTML: the index must be as inert as the pages.
    # It is sharded (generator/site/search_split.py): the sections' titles and texts are in the content files.
    eager = json.loads((site / "search" / "search_index.json").read_text(encoding="utf-8"))
    shards = site / "search" / eager["config"]["sourcebook"]["dir"]
    entries = []
    for content in sorted(shards.glob("c*.js")):
        script = content.read_text(encoding="utf-8")
        assert "</" not in script, content  # nothing in a shard can end a script it is pasted into
        entries += json.loads(script[script.index(",") + 1:].strip().removesuffix(");"))["d"]
    assert len(entries) == eager["config"]["sourcebook"]["count"]
    assert any("marker-readme" in text for *_, text in entries)
    for page_no, anchor, title, text in entries:
        parser = ActiveMarkup()
        parser.feed(title + text)
        assert parser.found == [], (page_no, anchor, parser.found[:5])
    theme = repo / ".sourcebook" / "theme" / "assets" / "sourcebook" / "sourcebook.js"
    assert (site / "assets/sourcebook/sourcebook.js").read_bytes() == theme.read_bytes()
    assert (site / "assets/javascripts" / bundle).read_bytes() == MATERIAL_BUNDLE.read_bytes()
    settings_page = (site / "files/pkg/settings.py.html").read_text(encoding="utf-8")
    assert "Scripted summary" in settings_page  # the hostile prose did reach the page, inert
    assert "legacy" in (site / "files/pkg/legacy.py.html").read_text(encoding="utf-8")  # UTF-16 decoded
    guide = (site / "files/docs/guide.rst.html").read_text(encoding="utf-8")
    assert "marker-rst" in guide.split('class="sb-document', 1)[1]  # rendered (and audited above)
    assert "root:" not in guide  # no file was read into it
    assert "example.com/track.png" not in guide  # nothing remote is loaded
    assert "- level" in (site / "files/docs/deep.rst.html").read_text(encoding="utf-8")  # shown as text


def test_the_hook_keeps_exactly_the_assets_sourcebook_writes_into_docs() -> None:
    from generator.pages.wiki_map import MAP_PATH
    from generator.site.hooks.mkdocs_hooks import OWN_DOCS_ASSETS
    from generator.site.publish import MermaidAsset

    assert OWN_DOCS_ASSETS.fullmatch(MermaidAsset(Path("m.js"), "mermaid-0123456789ab.min.js").url)
    assert OWN_DOCS_ASSETS.fullmatch(MAP_PATH)
    for planted in ("evil.html", "assets/sourcebook/sourcebook.js", "assets/javascripts/bundle.x.min.js",
                    "assets/sourcebook/mermaid-evil.min.js", "x/assets/sourcebook/wiki-map.json"):
        assert not OWN_DOCS_ASSETS.fullmatch(planted), planted


def test_a_committed_site_with_its_stamp_is_rebuilt_not_trusted(make_repo: Callable[..., Path],
                                                                 tmp_path: Path) -> None:
    # The attacker builds the wiki at the path CI will use, doctors site/, and commits .sourcebook/ with the
    # stamp that says "up to date". On another machine (another stamp key) the first build must rebuild.
    repo = make_repo({"README.md": "# Demo\n\nA demo.\n", "pkg/__init__.py": '"""Pkg."""\n'})
    attacker = {"XDG_STATE_HOME": str(tmp_path / "attacker-state")}
    victim = {"XDG_STATE_HOME": str(tmp_path / "victim-state")}
    assert _cli(["build", str(repo), "--no-index"], attacker, repo).returncode == 0
    index = repo / ".sourcebook" / "site" / "index.html"
    again = _cli(["build", str(repo), "--no-index"], attacker, repo)
    assert "up to date" in again.stderr  # the stamp does its job for the one who made it
    index.write_text(index.read_text(encoding="utf-8") + f"<script>{PWN}</script>\n", encoding="utf-8")

    first = _cli(["build", str(repo), "--no-index"], victim, repo)
    assert first.returncode == 0, first.stderr
    assert "up to date" not in first.stderr
    assert PWN not in index.read_text(encoding="utf-8")
    second = _cli(["build", str(repo), "--no-index"], victim, repo)
    assert "up to date" in second.stderr  # and then skips again, under this user's key
