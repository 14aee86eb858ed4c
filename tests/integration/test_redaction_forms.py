"""The credential forms of issue 34 leave the machine through no path: not in a page prompt (the fake
provider, real HTTP on 127.0.0.1, records every request) and not on a short file's page, which shows the
file whole (docs/ Markdown and the built site). Each secret sits in a file among harmless marker lines: a
marker in the requests proves the text around it was sent. The BIP-39 word list that finds recovery
phrases is the standard's, byte for byte. Secrets are assembled at run time so that this file does not
trip secret scanners.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from sourcebook.redaction import redact_text
from sourcebook.seed_phrase import WORDLIST_FILE, WORDLIST_SHA256, listed_phrases, wordlist
from tests.support.fake_llm import FakeLLM, page_writer_responder

ROOT = Path(__file__).resolve().parents[2]

URL_PCT = "%40bc" + "Xy9z"
URL_DOLLAR = "$ecr3t" + "Pw9"
URL_AT = "p@ss" + "W0rd"
CURL_PW = "Dep10y" + "Pw"
MYSQL_PW = "R00t" + "Pass"
SSHPASS_PW = "Ssh2024" + "pw"
SAS_SIG = "Xk3%2Bq9Lm2v8T0pQ7" + "rW1sY4uZ6aB8cD0eF2gH4iJ6kL8%3D"
YAML_NEXT = "hunter" + "2Kq7x"
YAML_BLOCK = "tk_9f8e7d6c" + "5b4a3f2e1d0c"
AUTH_TOKEN = "9944b09199c62bcf" + "9418ad846dd0e4bbdfc6ee4b"
HEX_KEY = hashlib.sha256(b"forms-test-key").hexdigest()
WPA_PSK = "Wifi2024" + "Pass"
PSK = "c0ffeeW1" + "fi2024"
PGPASS_PW = "Pg5ecr3t" + "Line"
PHRASE = "gravity machine north sort system female filter attitude volume fold club stay"

PLANTED = {
    "url-percent": URL_PCT, "url-dollar": URL_DOLLAR, "url-at": URL_AT, "curl-u": CURL_PW,
    "mysql-p": MYSQL_PW,
    "sshpass": SSHPASS_PW, "azure-sas": SAS_SIG, "yaml-next-line": YAML_NEXT, "yaml-block": YAML_BLOCK,
    "authorization-token": AUTH_TOKEN, "hex-64": HEX_KEY, "wpa-psk": WPA_PSK, "psk": PSK,
    "pgpass": PGPASS_PW, "bip39-phrase": PHRASE,
}

DEPLOY_SH = f"""#!/bin/sh
# Deploy the shop service (marker-deploy-top)
set -e
export CACHE_URL="redis://:{URL_PCT}@cache:6379/0"
export DATABASE_URL=postgres://app:{URL_DOLLAR}@db/prod
export BROKER_URL="amqp://guest:{URL_AT}@rabbit:5672/"
curl -u deploy:{CURL_PW} https://api.example.com/v1/releases
mysql -h db -u root -p{MYSQL_PW} shop < dump.sql
sshpass -p '{SSHPASS_PW}' ssh deploy@10.0.0.5 uptime
curl -o app.zip "https://acct.blob.core.windows.net/c/app.zip?sv=2022-11-02&sp=r&sig={SAS_SIG}"
curl -H "Authorization: Token {AUTH_TOKEN}" https://api.example.com/v1/me
echo "db.example.com:5432:shop:app:{PGPASS_PW}" > ~/.pgpass
echo done  # marker-deploy-bottom
"""

SHOP_YAML = f"""# Shop service settings (marker-yaml-top)
database:
  host: db
  password:
    {YAML_NEXT}
api_token: |
  {YAML_BLOCK}
workers: 4  # marker-yaml-bottom
"""

WIFI_CONF = f"""# kiosk network (marker-wifi)
ssid=shop-kiosk
wpa_psk={WPA_PSK}
network={{
    psk="{PSK}"
}}
"""

CLIENT_PY = f'''"""Clients of the shop's partners (marker-client-top)."""

from partner import Client

PARTNER = Client("{HEX_KEY}")
config_value = "{PHRASE}"


def partner():
    """The partner client (marker-client-bottom)."""
    return PARTNER
'''

FILES: dict[str, str | bytes] = {
    "README.md": "# Shop\n\nThe shop service: deploy script, settings and a partner client.\n",
    "shop/__init__.py": '"""The shop service."""\n',
    "shop/client.py": CLIENT_PY,
    "deploy/deploy.sh": DEPLOY_SH,
    "config/shop.yaml": SHOP_YAML,
    "config/kiosk.ini": WIFI_CONF,
}
SHORT_FILES = {"deploy/deploy.sh": "marker-deploy-top", "config/shop.yaml": "marker-yaml-top",
               "config/kiosk.ini": "marker-wifi"}
MARKERS = ("marker-deploy-top", "marker-deploy-bottom", "marker-yaml-top", "marker-yaml-bottom",
           "marker-wifi", "marker-client-top")


def _cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1", **env}
    for name in ("SOURCEBOOK_LLM_BASE_URL", "SOURCEBOOK_LLM_MODEL", "SOURCEBOOK_EMBEDDER",
                 "SOURCEBOOK_EMBED_BASE_URL", "SOURCEBOOK_EMBED_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        if name not in env:
            full_env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "sourcebook.cli", *args], cwd=cwd, env=full_env, check=False,
                          capture_output=True, text=True, timeout=600)


def _leaked(text: str) -> list[str]:
    return [kind for kind, secret in PLANTED.items() if secret in text]


def test_new_forms_reach_neither_the_provider_nor_the_short_file_pages(make_repo: Callable[..., Path],
                                                                       fake_llm: FakeLLM) -> None:
    fake_llm.responder = page_writer_responder
    repo = make_repo(FILES)
    env = {"SOURCEBOOK_LLM_BASE_URL": fake_llm.base_url, "SOURCEBOOK_LLM_MODEL": "fake",
           "SOURCEBOOK_EMBEDDER": "none"}
    done = _cli(["build", str(repo), "--no-index"], env, repo)
    assert done.returncode == 0, done.stderr
    sent = fake_llm.all_text()
    for marker in MARKERS:
        assert marker in sent, f"{marker}: the text around the secrets was never sent; nothing is proved"
    assert _leaked(sent) == [], "sent to the provider"
    # a short file with no symbol is shown whole on its page, in docs/ Markdown and in the built site
    out = repo / ".sourcebook"
    for path, marker in SHORT_FILES.items():
        for page in (out / "docs" / "files" / f"{path}.md", out / "site" / "files" / f"{path}.html"):
            text = page.read_text(encoding="utf-8")
            assert marker in text, page
            assert _leaked(text) == [], f"published on {page}"


def test_each_form_is_caught_on_its_own() -> None:
    for path in ("deploy/deploy.sh", "config/shop.yaml", "config/kiosk.ini", "shop/client.py"):
        text = FILES[path]
        assert isinstance(text, str)
        assert [k for k, secret in PLANTED.items() if secret in text and secret in redact_text(text)] == []


def test_the_word_list_is_the_standards() -> None:
    raw = resources.files("sourcebook").joinpath(WORDLIST_FILE).read_bytes()
    assert hashlib.sha256(raw).hexdigest() == WORDLIST_SHA256
    assert len(wordlist()) == 2048


def test_a_phrase_is_found_by_its_words_whatever_holds_it() -> None:
    words = PHRASE.split()
    for text in (f'x = "{PHRASE}"', f"backup: {PHRASE}", repr(words), "\n".join(words),
                 "\n".join(f"{i}. {w}" for i, w in enumerate(words, 1)), PHRASE.capitalize()):
        assert listed_phrases(text), text
        assert not any(w in redact_text(text) for w in ("gravity", "attitude")), text
    # eleven words are not a phrase; the list itself in order is a word list, not a phrase
    assert listed_phrases(" ".join(words[:11])) == []
    in_order = "\n".join(sorted(wordlist())[:40])
    assert listed_phrases(in_order) == []
    assert redact_text(in_order) == in_order
