"""A corpus for the redaction rules (sourcebook/redaction.py): realistic credentials in code, config and
prose, each a line that must be redacted, and near misses that must not be (hashes, UUIDs, test fixtures,
code and prose about secrets). tests/unit/test_redaction.py holds the rules to all of it;
`bench/redact_bench.py --corpus` prints the recall and false-positive rate. Secrets are assembled at run time
so that this file does not trip secret scanners.
"""

from __future__ import annotations

import base64

_B64 = base64.b64encode

# (form, text): every line of `text` holding the secret must be redacted
SECRETS: list[tuple[str, str]] = [
    ("auth-tuple", 'r = requests.get(url, auth=("admin", "' + "hunter" + '22x"))'),
    ("auth-tuple", "session.auth = ('deploy', '" + "Dep10y" + "Pass')"),
    ("basic-auth-class", 'auth = HTTPBasicAuth("svc", "' + "Svc" + 'Pa55word")'),
    ("login-call", 'server.login(user, "' + "smtp" + 'Pass42")'),
    ("login-call", "ftp.login('anonymous', '" + "ftp" + "S3cret!')"),
    ("basic-header", '"Authorization": "Basic ' + _B64(b"admin:hunter22").decode() + '"'),
    ("basic-header", "curl -H 'Authorization: Basic " + _B64(b"ci:t0ps3cret").decode() + "' https://x"),
    ("0x-private-key", 'w = Wallet("0x' + "4c0883a69102937d6231471b5dbb6204"
     + 'fe5129617082792ae468d01a3f362318")'),
    ("0x-private-key", "const signer = new ethers.Wallet('0x" + "ac0974bec39a17e36ba4a6b4d238ff94"
     + "4bacb478cbed5efcae784d7bf4f2ff80');"),
    ("seed-phrase", 'MNEMONIC = "witch collapse practice feed shame open despair creek road again ice '
     'least"'),
    ("seed-phrase", "Your recovery phrase:\n\n    abandon ability able about above absent absorb abstract "
     "absurd abuse access accident"),
    ("twilio", 'client = Client("AC' + "0123456789abcdef" * 2 + '", "' + "fedcba9876543210" * 2 + '")'),
    ("pem-fragments", 'KEY = (\n    "MIIEowIBAAKCAQEAu1SU"\n    "1LfVLPHCozMxH2Mo4lgO"\n'
     '    "EePzNm0tRgeLezV6ffAt"\n    "0gunVTLw7onLRnrq0/Iz"\n)'),
    ("pem-split-header", 'PEM = ("-----BEGIN RSA PRIV" "ATE KEY-----\\n"\n'
     '       "MIIEowIBAAKCAQEAu1SU1LfV\\n"\n'
     '       "-----END RSA PRIV" "ATE KEY-----\\n")'),
    ("readme-password", "The staging admin password is `" + "Adm1n" + "Pass!7`; change it after login."),
    ("readme-password", "Log in as `root` with password " + "toor" + "2024 and change it."),
    ("readme-password", "**Password:** `" + "S3cr3t" + "!Pw`"),
    ("readme-password", "    mysql -u app --password=" + "App" + "Db2024 shop"),
    # forms the first rules already caught, kept so a change cannot lose them
    ("assignment", 'DB_PASSWORD = "' + "hunter2" + 'hunter2"'),
    ("yaml", "  db_password: " + "value" + "Kq7"),
    ("url", "DATABASE_URL = 'postgres://app:" + "Pg5ecr3t" + "@db/prod'"),
    ("aws", "AWS_ACCESS_KEY_ID=" + "AKIA" + "Q3EXAMPLE7ABCDEF"),
    ("github", "token = '" + "ghp_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'"),
    ("bearer", "Authorization: Bearer " + "abcdef0123456789" + "abcdef"),
    ("pem-block", "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgO\n"
     "-----END RSA PRIVATE KEY-----"),
]

# Lines that only look like secrets or talk about them: none may be redacted
NEAR_MISSES: list[str] = [
    'sha = "' + "e3b0c44298fc1c149afbf4c8996fb924" + '27ae41e4649b934ca495991b7852b855"  # sha256 of b""',
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8",
    'request_id = "123e4567-e89b-12d3-a456-426614174000"',
    "tx_hash = '0x" + "5c504ed432cb51138bcf09aa5e8a410d" + "d4a1e204ef84bfed1be16dfba1b22060'",
    'ZERO_ADDRESS = "0x0000000000000000000000000000000000000000"',
    'password = request.form["password"]',
    "if not check_password(password, user.password_hash):",
    "auth = (username, password)",
    'r = requests.get(url, auth=(user, password))',
    'server.login(user, password)',
    'return render(request, "login.html")',
    'client.login(username="alice", password="password")',
    "Basic usage: call `parse()` with a string.",
    "HTTP Basic authentication is supported through `auth=`.",
    "The password is stored as a bcrypt hash and never logged.",
    "Choose a password of at least 12 characters.",
    "password: ${DB_PASSWORD}",
    "    password: The password to use.",
    "user.password = new_password",
    "password_bytes = password.encode()",
    "The seed is passed to numpy so that every run draws the same numbers.",
    "Set the random seed with --seed 42 to make the run repeatable.",
    "This phrase is the one the tokenizer splits on whitespace and punctuation marks.",
    '__all__ = [\n    "HTTPAdapter",\n    "BaseAdapter",\n    "Response",\n    "PreparedRequest",\n]',
    'TEST_VECTORS = [\n    "00112233445566778899aabbccddeeff",\n    "0f1e2d3c4b5a69788796a5b4c3d2e1f0",\n'
    '    "ffeeddccbbaa99887766554433221100",\n]',
    "account_sid = os.environ['TWILIO_ACCOUNT_SID']",
    'fixture_user = {"username": "test", "password": "test"}',
]
