"""Nothing planted in a repository leaves the machine: every kind of secret, through the real CLI, for the
three ways text reaches a provider (page prompts of `build`, `ask` synthesis, embedding requests of
`index`). The fake provider is real HTTP on 127.0.0.1 and records every request body; the test greps them.

Each planted secret sits in a line of its own, between two harmless marker lines. A marker in the requests
proves the surrounding text was sent (so the test cannot pass by sending nothing); the secret's absence
proves redaction. Keys are assembled at run time so that this file does not trip secret scanners.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.support.fake_llm import FakeLLM, Reply, page_writer_responder, request_schema_name
from tests.support.planted_secrets import (
    ANTHROPIC,
    AWS_ID,
    AWS_SECRET,
    BASIC,
    DSN_PASSWORD,
    ENTROPY,
    ENV_TOKEN,
    ETH_KEY,
    GITHUB,
    GITHUB_PAT,
    GOOGLE,
    INI_PASSWORD,
    JWT,
    LOGIN_PASSWORD,
    OPENAI,
    OPENAI_LEGACY,
    PEM,
    PEM_FRAGMENTS,
    PEM_LINES,
    README_PASSWORD,
    SEED_PHRASE,
    SLACK,
    SLACK_HOOK,
    STRIPE,
    STRIPE_RESTRICTED,
    TUPLE_PASSWORD,
    TWILIO_SID,
    TWILIO_TOKEN,
    YAML_ADMIN,
    YAML_PASSWORD,
)

ROOT = Path(__file__).resolve().parents[2]


# (kind, the secret that must never be sent)
PLANTED: list[tuple[str, str]] = [
    ("aws-access-key", AWS_ID), ("aws-secret-key", AWS_SECRET), ("github", GITHUB),
    ("github-pat", GITHUB_PAT), ("openai", OPENAI), ("openai-legacy", OPENAI_LEGACY),
    ("anthropic", ANTHROPIC), ("slack", SLACK), ("slack-webhook", SLACK_HOOK.rsplit("/", 1)[1]),
    ("google", GOOGLE), ("stripe", STRIPE), ("stripe-restricted", STRIPE_RESTRICTED),
    ("jwt", JWT.split(".")[1]), *[(f"pem-line-{i}", line) for i, line in enumerate(PEM_LINES)],
    ("dsn", DSN_PASSWORD), ("yaml", YAML_PASSWORD), ("yaml-quoted", YAML_ADMIN), ("ini", INI_PASSWORD),
    ("env", ENV_TOKEN), ("high-entropy", ENTROPY),
    ("auth-tuple", TUPLE_PASSWORD), ("login-call", LOGIN_PASSWORD), ("basic-header", BASIC),
    ("0x-private-key", ETH_KEY), ("seed-phrase", SEED_PHRASE[20:50]),
    ("twilio-token", TWILIO_TOKEN), *[(f"pem-fragment-{i}", f) for i, f in enumerate(PEM_FRAGMENTS)],
    ("readme-password", README_PASSWORD),
]

SETTINGS_PY = f'''"""Deployment settings of the payments service: keys for every provider it talks to."""

DEBUG = False  # marker-settings-top
AWS_ACCESS_KEY_ID = "{AWS_ID}"
aws_secret_access_key = "{AWS_SECRET}"
GITHUB_TOKEN = "{GITHUB}"
GITHUB_FINE_GRAINED = "{GITHUB_PAT}"
openai_client_options = {{"api_key": "{OPENAI}"}}
LEGACY_OPENAI = "{OPENAI_LEGACY}"
CLAUDE = "{ANTHROPIC}"
SLACK_BOT = "{SLACK}"
ALERTS_WEBHOOK = "{SLACK_HOOK}"
MAPS = "{GOOGLE}"
STRIPE_LIVE = "{STRIPE}"
STRIPE_RESTRICTED = "{STRIPE_RESTRICTED}"
SESSION_SAMPLE = "{JWT}"
DATABASE_URL = "postgres://payments:{DSN_PASSWORD}@db.internal:5432/payments"
CACHE_SEED = "{ENTROPY}"
TIMEOUT_SECONDS = 30  # marker-settings-bottom


def payment_timeout():
    """Seconds before a payment request to the provider is abandoned."""
    return TIMEOUT_SECONDS
'''

_PEM_FRAGMENT_LINES = "".join(f'    "{fragment}"\n' for fragment in PEM_FRAGMENTS)
CLIENTS_PY = f'''"""Clients of the payments service's partners (marker-clients-top)."""

import requests
from twilio.rest import Client
from web3 import Account


def fetch_rates(url):
    """Today's exchange rates from the partner."""
    return requests.get(url, auth=("payments", "{TUPLE_PASSWORD}"))


def send_receipt(server, user):
    """Log in to the mail server before sending a receipt."""
    server.login(user, "{LOGIN_PASSWORD}")


HEADERS = {{"Authorization": "Basic {BASIC}"}}
SIGNER = Account.from_key("0x{ETH_KEY}")
SMS = Client("{TWILIO_SID}", "{TWILIO_TOKEN}")
WALLET_MNEMONIC = "{SEED_PHRASE}"
PARTNER_KEY = (
{_PEM_FRAGMENT_LINES})
TIMEOUT = 5  # marker-clients-bottom
'''

SIGNING_PY = f'''"""Request signing for the payments service."""

SIGNING_KEY = """{PEM}"""


def sign_request(body):
    """Sign a payments request body with the service key (marker-signing)."""
    return hash((SIGNING_KEY, body))
'''

APP_YAML = f"""# Payments service configuration (marker-yaml-top)
database:
  host: db.internal
  db_password: {YAML_PASSWORD}
  admin_pass: "{YAML_ADMIN}"
workers: 4  # marker-yaml-bottom
"""

APP_INI = f"""[payments]
; marker-ini-top
password = {INI_PASSWORD}
retries = 3
"""

SETUP_MD = f"""# Payments service

How the payments service connects to the database and signs requests to its provider.
Run it with the environment below (marker-readme):

    API_TOKEN={ENV_TOKEN}
    payments serve

The staging admin password is `{README_PASSWORD}`; change it after the first login.
"""

# A file that holds secrets by its name is never sent, even where no line rule would catch its values.
SECRET_FILE = "config/secrets.yaml"
SECRET_FILE_VALUE = "zebra-mango-" + "x1q"
SECRETS_YAML = f"deploy_region_note: {SECRET_FILE_VALUE}\nreplicas: 2\n"

FILES: dict[str, str | bytes] = {
    "README.md": SETUP_MD,
    SECRET_FILE: SECRETS_YAML,
    "payments/__init__.py": '"""The payments service."""\n',
    "payments/settings.py": SETTINGS_PY,
    "payments/signing.py": SIGNING_PY,
    "payments/clients.py": CLIENTS_PY,
    "config/app.yaml": APP_YAML,
    "config/app.ini": APP_INI,
}
MARKERS = ("marker-settings-top", "marker-settings-bottom", "marker-signing", "marker-yaml-top",
           "marker-ini-top", "marker-readme", "marker-clients-top", "marker-clients-bottom")


def _cli(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    full_env = {**os.environ, "PYTHONPATH": str(ROOT), "NO_MKDOCS_2_WARNING": "1", **env}
    for name in ("SOURCEBOOK_LLM_BASE_URL", "SOURCEBOOK_LLM_MODEL", "SOURCEBOOK_EMBEDDER",
                 "SOURCEBOOK_EMBED_BASE_URL", "SOURCEBOOK_EMBED_MODEL", "OPENAI_BASE_URL", "OPENAI_API_KEY"):
        if name not in env:
            full_env.pop(name, None)
    return subprocess.run([sys.executable, "-m", "sourcebook.cli", *args], cwd=cwd, env=full_env, check=False,
                          capture_output=True, text=True, timeout=300)


def _assert_nothing_planted_sent(sent: str, markers: tuple[str, ...]) -> None:
    for marker in markers:
        assert marker in sent, f"{marker}: the text around the secrets was never sent; nothing is proved"
    leaked = [kind for kind, secret in PLANTED if secret in sent]
    if SECRET_FILE_VALUE in sent:
        leaked.append(SECRET_FILE)
    assert leaked == [], f"sent to the provider: {leaked}"


def _llm_env(fake: FakeLLM) -> dict[str, str]:
    return {"SOURCEBOOK_LLM_BASE_URL": fake.base_url, "SOURCEBOOK_LLM_MODEL": "fake"}


def test_build_page_prompts_carry_no_planted_secret(make_repo: Callable[..., Path],
                                                    fake_llm: FakeLLM) -> None:
    fake_llm.responder = page_writer_responder
    repo = make_repo(FILES)
    done = _cli(["build", str(repo), "--no-site", "--no-index"], _llm_env(fake_llm), repo)
    assert done.returncode == 0, done.stderr
    assert fake_llm.calls > 0
    _assert_nothing_planted_sent(fake_llm.all_text(), MARKERS)


def _answer(body: dict[str, Any]) -> Reply:
    assert request_schema_name(body) == "EvidenceAnswer", body.get("tools")
    return Reply.ok({"answer": "The settings module holds the provider keys (`payments/settings.py`).",
                     "citations": ["payments/settings.py"]})


def test_ask_synthesis_carries_no_planted_secret(make_repo: Callable[..., Path], fake_llm: FakeLLM) -> None:
    repo = make_repo(FILES)
    indexed = _cli(["index", str(repo)], {"SOURCEBOOK_EMBEDDER": "none"}, repo)
    assert indexed.returncode == 0, indexed.stderr
    fake_llm.responder = _answer
    asked = _cli(["ask", "Which keys and passwords do the payments settings, signing, app.yaml and app.ini "
                         "configure for the database and the provider?", "--path", str(repo)],
                 {**_llm_env(fake_llm), "SOURCEBOOK_EMBEDDER": "none"}, repo)
    assert asked.returncode == 0, asked.stderr
    assert fake_llm.calls >= 1
    _assert_nothing_planted_sent(fake_llm.all_text(), MARKERS)
    secrets_question = "What does config/secrets.yaml set for the deploy region and replicas?"
    again = _cli(["ask", secrets_question, "--path", str(repo)],
                 {**_llm_env(fake_llm), "SOURCEBOOK_EMBEDDER": "none"}, repo)
    assert again.returncode == 0, again.stderr
    assert SECRET_FILE in fake_llm.all_text()  # retrieved and named, its content withheld
    _assert_nothing_planted_sent(fake_llm.all_text(), MARKERS)


def test_index_embedding_requests_carry_no_planted_secret(make_repo: Callable[..., Path],
                                                          fake_llm: FakeLLM) -> None:
    repo = make_repo(FILES)
    env = {"SOURCEBOOK_EMBEDDER": "openai", "SOURCEBOOK_EMBED_BASE_URL": fake_llm.base_url,
           "SOURCEBOOK_EMBED_MODEL": "fake-embed"}
    done = _cli(["index", str(repo)], env, repo)
    assert done.returncode == 0, done.stderr
    assert fake_llm.embedding_requests, "the openai embedder never called the fake endpoint"
    assert fake_llm.calls == 0  # no chat request: indexing only embeds
    _assert_nothing_planted_sent(fake_llm.all_text(), MARKERS)
    assert SECRET_FILE in fake_llm.all_text()  # embedded by its path alone
    # a search embeds the query through the same request path
    searched = _cli(["search", f"where is {AWS_ID} used", "--path", str(repo)], env, repo)
    assert searched.returncode == 0, searched.stderr
    assert AWS_ID not in fake_llm.all_text()


@pytest.mark.parametrize(("kind", "secret"), PLANTED)
def test_every_planted_kind_is_caught_by_the_detectors(kind: str, secret: str) -> None:
    # The same repository text through the one redaction function: each kind is caught on its own.
    from sourcebook.redaction import redact_text

    text = "\n".join(FILES[p] for p in FILES if isinstance(FILES[p], str))  # type: ignore[misc]
    assert secret in text
    assert secret not in redact_text(text), kind


def test_only_the_provider_layer_talks_to_providers() -> None:
    # The redaction guarantee holds because chat and embedding requests are made in exactly two places,
    # both of which redact. A new module importing an HTTP client or the openai SDK would bypass it.
    import ast

    clients = {"openai", "instructor", "httpx", "requests", "aiohttp", "urllib3", "urllib.request",
               "http.client"}
    allowed = {"sourcebook/provider.py", "generator/index/embed.py"}
    offenders = []
    for package in ("generator", "answer", "sourcebook"):
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = ([a.name for a in node.names] if isinstance(node, ast.Import)
                         else [node.module or ""] if isinstance(node, ast.ImportFrom) else [])
                hit = [n for n in names if n in clients or n.split(".")[0] in clients - {"urllib", "http"}]
                if hit and rel not in allowed:
                    offenders.append(f"{rel}:{node.lineno}: {', '.join(hit)}")
    assert offenders == []
