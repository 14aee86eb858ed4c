"""A corpus for the redaction rules (sourcebook/redaction.py): realistic credentials in code, config and
prose, each a line that must be redacted, and near misses that must not be (hashes, UUIDs, test fixtures,
code and prose about secrets). tests/unit/test_redaction.py holds the rules to all of it;
`bench/redact_bench.py --corpus` prints the recall and false-positive rate. Secrets are assembled at run time
so that this file does not trip secret scanners.
"""

from __future__ import annotations

import base64
import hashlib

_B64 = base64.b64encode


def _hex64(seed: str) -> str:
    """A random-looking 256-bit hex string (a key or a digest: the text around it decides which)."""
    return hashlib.sha256(seed.encode()).hexdigest()


_PHRASE_12 = "legal winner thank year wave sausage worth useful legal winner thank yellow"
_PHRASE_24 = ("letter advice cage absurd amount doctor acoustic avoid letter advice cage absurd amount "
              "doctor acoustic avoid letter advice cage absurd amount doctor acoustic bless")
_PHRASE_18 = ("gravity machine north sort system female filter attitude volume fold club stay feature office "
              "ecology stable narrow fog")
_PHRASE_LINES = "myth like bonus scare over problem client lizard pioneer submit female collect"


def fully_redacted(cleaned: str) -> bool:
    """What redaction left of a corpus secret is framing (a bracket, a blank line, a short label), never
    part of the secret: no kept line longer than 25 characters or holding a digit."""
    kept = [line for line in cleaned.splitlines() if "[REDACTED]" not in line]
    return all(len(line.strip()) <= 25 and not any(ch.isdigit() for ch in line) for line in kept)


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
    # issue 34: forms a third review found reaching the provider, and their relatives
    ("url-password-percent", 'REDIS_URL = "redis://:%40bc' + "Xy9z" + '@cache:6379/0"'),
    ("url-password-dollar", "DATABASE_URL=postgres://app:$ecr3t" + "Pw9@db/prod"),
    ("url-password-at", 'BROKER = "amqp://guest:p@ss' + "W0rd" + '@rabbit:5672/"'),
    ("url-password-at", "mongodb+srv://admin:Adm1n@" + "2024" + "@cluster0.example.net/app"),
    ("curl-user", "curl -u deploy:" + "Dep10y" + "Pw https://api.example.com/v1/releases"),
    ("curl-user", 'curl --user "ci:' + "t0ps3" + 'cret!" https://nexus.example.com/repo'),
    ("curl-user", "curl -s -uadmin:" + "Adm1n" + "Pw9 -X POST https://jenkins/job/build"),
    ("mysql-p", "mysql -h db -u root -p" + "R00t" + "Pass shop < dump.sql"),
    ("mysql-p", "mysqldump -uroot -p'" + "S3cr3t" + "!x' --all-databases > all.sql"),
    ("sshpass", "sshpass -p '" + "Ssh2024" + "pw' ssh deploy@10.0.0.5 uptime"),
    ("sshpass", "sshpass -p" + "Hunter" + "22x scp build.tgz deploy@host:/srv"),
    ("azure-sas", "https://acct.blob.core.windows.net/c/f.zip?sv=2022-11-02&ss=b&srt=o&sp=r"
     "&se=2030-01-01T00:00:00Z&spr=https&sig=" + "Xk3%2Bq9Lm2v8T0pQ7rW1sY4uZ6aB8cD0eF2gH4iJ6kL8" + "%3D"),
    ("azure-sas", "BlobEndpoint=https://acct.blob.core.windows.net/;SharedAccessSignature=sv=2022-11-02"
     "&ss=b&srt=sco&sp=rl&sig=" + "q8W2e4R6t8Y0u2I4o6P8a0S2d4F6g8H0j2K4l6Z8x0C" + "%3D"),
    ("azure-account-key", "DefaultEndpointsProtocol=https;AccountName=acct;AccountKey="
     + _B64(hashlib.sha512(b"azure").digest()).decode() + ";EndpointSuffix=core.windows.net"),
    ("yaml-next-line", "database:\n  password:\n    " + "hunter" + "2Kq7x\n  host: db"),
    ("yaml-next-line", "api_token: |\n  " + "tk_9f8e7d6c" + "5b4a3f2e1d0c\nmode: strict"),
    ("yaml-next-line", "secret_key: >-\n    " + "Zx8Kq2" + "Lm9Pw4\ndebug: false"),
    ("authorization-token", "Authorization: Token " + "9944b09199c62bcf" + "9418ad846dd0e4bbdfc6ee4b"),
    ("authorization-token", 'headers = {"Authorization": "Token ' + "9944b09199c62bcf"
     + '9418ad846dd0e4bbdfc6ee4b"}'),
    ("authorization-token", "Authorization: SSWS 00" + "QCjAl4MlV-WPXM3Rv" + "Xyq8eLtBbMc2pw9eT4Pl"),
    ("authorization-token", 'session.headers["Authorization"] = "' + "k3yP9xQ2mZ7v" + 'L4wR8tN1"'),
    ("hex-64", 'client = Client("' + _hex64("client") + '")'),
    ("hex-64", "const K = '" + _hex64("const") + "';"),
    ("hex-64", "  - " + _hex64("yaml list")),
    ("wifi-psk", "wpa_psk=" + "Wifi2024" + "Pass"),
    ("wifi-psk", "wpa_passphrase=" + "HomeN3t" + "work!"),
    ("wifi-psk", '    psk="' + "c0ffeeW1" + 'fi2024"'),
    ("pgpass", "db.example.com:5432:shop:app:" + "Pg5ecr3t"),
    ("pgpass", "*:*:*:postgres:" + "hunter22" + "X"),
    ("pgpass", 'echo "localhost:5432:*:app:' + "Lo0cal" + 'Pw" > ~/.pgpass'),
    ("bip39-phrase", 'config_value = "' + _PHRASE_12 + '"'),
    ("bip39-phrase", "backup = '" + _PHRASE_24 + "'"),
    ("bip39-phrase", '"words": [' + ", ".join(f'"{w}"' for w in _PHRASE_18.split()) + "]"),
    ("bip39-phrase",
     "Backup words:\n" + "\n".join(f"{i}. {w}" for i, w in enumerate(_PHRASE_LINES.split(), 1))),
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
    # issue 34: near misses of the new forms (digests where keys are 64 hex, templates where passwords are)
    'checksum = "' + _hex64("cargo") + '"',
    "requests==2.32.3 --hash=sha256:" + _hex64("requirements"),
    '{file = "pkg-1.0.tar.gz", hash = "sha256:' + _hex64("poetry") + '"}',
    "FROM python@sha256:" + _hex64("docker"),
    _hex64("sha256sum") + "  pkg-1.0.tar.gz",
    '  sha256 "' + _hex64("homebrew") + '"',
    'assert digest == "' + _hex64("assert") + '"',
    'rev = "' + hashlib.sha1(b"git").hexdigest() + '"',
    'curl -u "$USER:$TOKEN" https://api.example.com',
    "docker run -u 1000:1000 -v $PWD:/src image",
    "git push -u origin main",
    "mysql -u root -p shop",
    'mysql -u root -p"$MYSQL_ROOT_PASSWORD" shop',
    'sshpass -p "$SSHPASS" ssh deploy@host',
    "sshpass -e ssh deploy@host",
    'DATABASE_URL = "postgres://app:${DB_PASSWORD}@db/prod"',
    'url = f"mysql://{user}:{password}@{host}/db"',
    '"postgres://%(user)s:%(password)s@%(host)s/db"',
    "postgres://app:$DB_PASSWORD@db/prod",
    "psql postgres://$user:$password@$host/db",
    'headers = {"Authorization": f"Token {api_key}"}',
    '"Authorization": "Token " + token,',
    "Authorization: Bearer <token>",
    "sig = inspect.signature(func)",
    "password:\n  min_length: 12\n  require_digit: true",
    "tokens:\n  - name: ci\n    scopes: [read]",
    "api_key:\n  $ref: '#/components/schemas/ApiKey'",
    "key_mgmt=WPA-PSK",
    "Use this one when you want to change the order: the first call wins.",
    'WORDLIST = """abandon\nability\nable\nabout\nabove\nabsent\nabsorb\nabstract\nabsurd\nabuse\n'
    'access\naccident\naccount\n"""',
    "started 2024-01-01 12:30:45 on host ci-7 in 3.2s",
]
