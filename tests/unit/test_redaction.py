"""Secret files are never sent; secret-looking lines are redacted; ordinary code passes untouched."""

from __future__ import annotations

import pytest

from sourcebook.redaction import (
    REDACTED,
    holds_secret,
    is_secret_path,
    redact,
    redact_text,
    scan_line,
    shannon_entropy,
)
from tests.support.redaction_corpus import NEAR_MISSES, SECRETS, fully_redacted

# Keys assembled at run time so that this file itself does not trip secret scanners.
AWS_ID = "AKIA" + "Q3EXAMPLE7ABCDEFG"[:16]
GITHUB = "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"
OPENAI = "sk-proj-" + "Zx81kLm0Qp2Rt5Vw9Yb3Nc6Hd4Jf7Gs1"
SLACK = "xoxb-" + "1234567890-0987654321-AbCdEfGhIjKlMnOp"
GOOGLE = "AIza" + "SyD4x9Kq2mP7vL0nR3tW8bZ5cF1hJ6gE2aQ"
RANDOM = "q8Zt2LmX9vR4pW7nK3jH6dF1sA5gY0cB"


@pytest.mark.parametrize("path", [
    ".env", ".env.production", "config/.env.local", "deploy/server.pem", "certs/site.key", "id_rsa",
    "home/.ssh/id_ed25519.pub", "credentials", "aws/credentials.json", "keystore.p12", "app.pfx",
    "infra/terraform.tfstate", ".netrc", ".npmrc", "secrets.yaml", "gcp/service-account.json",
    "x/.aws/config",
])
def test_secret_files_are_recognised(path: str) -> None:
    assert is_secret_path(path)


@pytest.mark.parametrize("path", [
    "src/app.py", "docs/keys.md", "src/keyboard.py", "env.py", ".env.example", "config/.env.sample",
    "tests/test_credentials_form.py", "README.md", "src/tokenizer.rs", "environment.yml",
])
def test_ordinary_files_are_not(path: str) -> None:
    assert not is_secret_path(path)


@pytest.mark.parametrize(("line", "rule"), [
    (f"AWS_ACCESS_KEY_ID={AWS_ID}", "aws-access-key"),
    (f"token = '{GITHUB}'", "github-token"),
    (f"client = OpenAI(api_key=\"{OPENAI}\")", "openai-key"),
    (f"SLACK = {SLACK}", "slack-token"),
    (f"maps_key: {GOOGLE}", "google-api-key"),
    ('DB_PASSWORD = "hunter2hunter2"', "secret-assignment"),
    ('settings["client_secret"] = "abcdefgh"', "secret-assignment"),
    ("url = 'postgres://admin:s3cretpw@db.internal/prod'", "url-credentials"),
    (f"blob = '{RANDOM}'", "high-entropy"),
])
def test_key_formats_are_redacted(line: str, rule: str) -> None:
    text = f"def f():\n    {line}\n    return 1\n"
    cleaned, found = redact(text)
    assert [(r.line, r.rule) for r in found] == [(2, rule)]
    assert REDACTED in cleaned
    assert line not in cleaned
    assert cleaned.splitlines()[0] == "def f():"  # the rest of the file is untouched
    assert cleaned.splitlines()[1].startswith("    ")  # indentation kept, so the code still reads


def test_private_key_block_is_redacted_whole() -> None:
    body = "MIIEvQIBADANBgkqhkiG9w0BAQEFAASC\nBKcwggSjAgEAAoIBAQC7\n"
    text = f"KEY = '''\n-----BEGIN RSA PRIVATE KEY-----\n{body}-----END RSA PRIVATE KEY-----\n'''\nx = 1"
    cleaned, found = redact(text)
    assert "MIIEvQ" not in cleaned
    assert "BKcwgg" not in cleaned
    assert "PRIVATE KEY-----" not in cleaned
    assert cleaned.endswith("'''\nx = 1")
    assert found[0].rule == "private-key-block"


@pytest.mark.parametrize("line", [
    "def test_request_context_with_custom_values(app_with_long_name_2024):",
    "from flask.sansio.scaffold import setupmethod",
    'SECRET_HEADER_NAME = "X-Auth-Token"',  # the name must END in the secret word to count
    'tbl.create_index("tokens", config=FTS(base_tokenizer="whitespace"))',
    "    return self.config['PERMANENT_SESSION_LIFETIME']",
    "sha = hashlib.sha256(data).hexdigest()",
    "path = 'src/flask/json/provider.py'",
    "https://github.com/pallets/flask/blob/main/src/flask/app.py",
])
def test_ordinary_code_is_not_redacted(line: str) -> None:
    cleaned, found = redact(line)
    assert cleaned == line
    assert found == []


def test_entropy_orders_random_above_words() -> None:
    assert shannon_entropy(RANDOM) > shannon_entropy("the_quick_brown_fox_jumps_over")
    assert shannon_entropy("") == 0.0


def test_redact_text_returns_only_text() -> None:
    assert redact_text(f"k = '{GITHUB}'") == f"{REDACTED} (github-token)"


@pytest.mark.parametrize("line", [
    "db_password: hunter2", 'admin_pass: "hunterAdm1n"', "  password: s3cr3t!  # prod", "- password: hunter2",
    "DB_PASSWORD=valueKq7", "export API_TOKEN=abc123def", "password = hunter2", "secret_key = 'q8Zt2LmX9v'",
    '"password": "hunter22"', "'token' => 'abcdef12'", 'conn = "Server=db;User Id=sa;Password=Hunter2x;"',
    'def connect(password: str = "letmein"):', "SIGNING_KEY = 'a1b2c3d4e5f6'", "encryption_key: Zk9q8xY2",
    "apiKey: 'abcd1234efgh'", "<password>hunter2</password>", "auth_token=deadbeefcafe",
    'PGPASSWORD="pg-pass-1"', "passphrase = 'the quick fox jumps'", "redis://:p4ssw0rd@cache:6379/0",
    "Authorization: Bearer abcdef0123456789abcdef",
])
def test_config_and_env_style_secrets_are_redacted(line: str) -> None:
    cleaned, found = redact(line)
    assert found, line
    assert REDACTED in cleaned


@pytest.mark.parametrize("line", [
    'password = request.form["password"]', "token_type: str", "token: str", "password: SecretStr",
    "token = my_token", "self.password = password", "api_key = os.environ['OPENAI_API_KEY']",
    "max_tokens: 1024", "tokenizer: whitespace", 'sort_key = "name"', 'cache_key = "users"',
    "sorted(items, key=len)", "    password: The password to use.", "password: null",
    "password: ${DB_PASSWORD}", 'password = "{{ secrets.db }}"', "password=password,", "    token=token,",
    "API_KEY=your-api-key-here", 'PASSWORD = "********"', "if key == 'abc123':", "primary_key=True",
    'password_help = "Enter your password"',
    "return {'token': token, 'expires': exp}", "const token = localStorage.getItem('token');",
    'PASSWORD_ENV = "DB_PASSWORD"', "keyboard: us", "password_hash: str", "token = kwargs.get('token')",
    "password_file = '/run/secrets/db'", "sk-learn-compatible-estimators-here", "id-token: write",
    "http://user:pass@proxy:8080", "private_key = load_pem(data)",
])
def test_code_that_only_mentions_a_secret_is_not_redacted(line: str) -> None:
    cleaned, found = redact(line)
    assert (cleaned, found) == (line, [])


def test_redaction_is_idempotent() -> None:
    text = f"a = 1\ndb_password: hunter2\ntoken = '{GITHUB}'\nb = 2"
    once = redact_text(text)
    assert redact_text(once) == once


def test_a_key_block_cut_by_a_chunk_boundary_is_still_redacted() -> None:
    # An embedding chunk or an evidence span may start inside a PEM block, past its BEGIN line: each
    # base64 body line is caught on its own.
    body = ["MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
            "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK"]
    cleaned = redact_text("\n".join([*body, "-----END RSA PRIVATE KEY-----", "x = 1"]))
    assert not any(line in cleaned for line in body)
    assert cleaned.endswith("x = 1")


@pytest.mark.parametrize(("rule", "line"), [
    ("stripe-key", "STRIPE = '" + "sk" + "_live_" + "4eC39HqLyjWDarjtT1zdp7dc'"),
    ("stripe-key", "key: " + "rk" + "_test_" + "51HqLyjWDarjtT1zdp7dcZZ"),
    ("stripe-key", "hook = " + "whsec" + "_" + "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"),
    ("bearer-token", "curl -H 'Authorization: BEARER abcdef0123456789abcdef'"),
    ("bearer-token", "headers = {'Authorization': 'bearer 0a1b2c3d4e5f6a7b8c9d'}"),
    ("xml-secret", "<api_key>Zk9q8xY2abcQ</api_key>"),
    ("google-oauth", "client_secret = " + "GOCSPX" + "-" + "1a2B3c4D5e6F7g8H9i0J1k2L"),
    ("google-oauth", "access = " + "ya29" + "." + "a0AfH6SMBx1y2z3A4b5C6d7E8f9G"),
    ("npm-token", "//registry.npmjs.org/:_authToken=" + "npm" + "_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8"),
    ("jwt", "t = " + "eyJ" + "hbGciOiJIUzI1NiJ9." + "eyJ" + "zdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w"),
])
def test_key_formats_skipped_when_their_text_is_absent_are_found_when_present(rule: str, line: str) -> None:
    """The slow key patterns run only on a text holding what they need (_NEEDS): each is still found, under
    its own name, alone and in the middle of ordinary code."""
    assert scan_line(line) == rule
    text = "import os\n\n\ndef f(x):\n    return x\n" + line + "\nvalue = f(2)\n"
    cleaned, found = redact(text)
    assert [(r.line, r.rule) for r in found] == [(6, rule)]
    assert line not in cleaned


_HEX = "0123456789abcdef" * 3


@pytest.mark.parametrize(("text", "rules"), [
    (f"{_HEX}\nsecret", {}),
    (f"auth {_HEX}==", {1: "hex-secret"}),
    (f"token {_HEX}é", {}),  # no word boundary after it: not a hex secret
    (f"token {_HEX}g", {}),
    (f"salt=x{_HEX}", {}),  # no word boundary before it
    (f"signature\t{_HEX[:31]}", {}),  # too short
    (f"a = 1\nsignature ({_HEX}) and {_HEX[:33]}_", {2: "hex-secret"}),
    (f"x = 1\napi_key_path/{_HEX}", {2: "high-entropy"}),
    ("aws_secret_key =\n" + "A" * 40, {1: "aws-secret-key", 2: "aws-secret-key"}),  # a match over two lines
    (f"Authorization: Bearer\n  abc{_HEX[:20]}\nx = 1", {1: "bearer-token", 2: "bearer-token"}),
    (f"key\n{_HEX}", {}),
])
def test_each_line_a_rule_trips_is_found_and_holds_secret_agrees(text: str, rules: dict[int, str]) -> None:
    """Hex keys are looked for only inside runs of token characters long enough to hold one, and lines are
    numbered only for the hits; `holds_secret` stops at the first: the same lines and verdicts as a scan of
    every line."""
    found = redact(text)[1]
    assert {r.line: r.rule for r in found} == rules
    assert holds_secret(text) == bool(rules)


# -------------------------------------------------------- the corpus (tests/support/redaction_corpus.py)

@pytest.mark.parametrize(("form", "text"), SECRETS,
                         ids=[f"{form}-{i}" for i, (form, _) in enumerate(SECRETS)])
def test_every_credential_form_in_the_corpus_is_redacted(form: str, text: str) -> None:
    cleaned, found = redact(text)
    assert found, (form, text)
    # what stays is framing (a bracket, a blank line, a prose line before the phrase), never the secret part
    assert fully_redacted(cleaned), cleaned
    assert holds_secret(text)


@pytest.mark.parametrize("text", NEAR_MISSES)
def test_near_misses_in_the_corpus_are_left_alone(text: str) -> None:
    assert redact(text) == (text, [])
    assert not holds_secret(text)
