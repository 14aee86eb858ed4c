"""Keep secrets on the machine: which files are never sent to a provider, and redaction of what is sent.

Two pure checks:
- `is_secret_path(path)`: files that by name hold secrets (.env*, private keys, keystores, credentials) are
  never sent at all, not even in part (the LLM writer documents them without the model);
- `redact(text)`: in everything else, lines with known key formats (AWS, GitHub, GitLab, OpenAI, Anthropic,
  Slack, Google, Stripe, Hugging Face, npm, PyPI, SendGrid, JWTs, bearer tokens, PEM private key blocks,
  credentials in URLs), secret-named keys assigned a literal (`db_password: x`, `API_TOKEN=x`,
  `"secret": "x"`, `Password=x;`) and high-entropy tokens are replaced by a marker.

`redact_text` is the one function every byte bound for a provider passes through: the provider layer calls
it where requests are made (sourcebook/provider.py for chat, generator/index/embed.py for remote embeddings),
so
no caller can forget it. False positives cost a little prose quality; false negatives leak a key. The rules
lean to redacting, but code that only mentions a secret (`password = request.form["password"]`,
`token_type: str`, `api_key = os.environ["KEY"]`) is left alone: it is what the wiki is about.
"""

from __future__ import annotations

import base64
import binascii
import itertools
import math
import re
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from fnmatch import translate

from sourcebook.seed_phrase import listed_phrases, named_phrases

REDACTED = "[REDACTED]"
_Check = Callable[[re.Match[str]], bool]

# Matched against the lower-cased file name (last path segment).
_SECRET_NAMES = (
    ".env", ".env.*", "*.env", ".envrc", "*.pem", "*.key", "*.p12", "*.pfx", "*.jks", "*.keystore",
    "*.kdbx", "*.ppk", "*.asc", "*.gpg", "*.der", "*.crt", "*.cer", "*.csr", "*.ovpn",
    "id_rsa*", "id_dsa*", "id_ecdsa*", "id_ed25519*", "*.tfstate", "*.tfstate.*", "*.tfvars",
    "credentials", "credentials.*", "*credentials*.json", "*secret*.json", "*secrets*.y*ml", "secrets.*",
    ".netrc", "_netrc", ".pgpass", ".htpasswd", ".npmrc", ".pypirc", ".git-credentials", ".dockercfg",
    "service-account*.json", "*-service-account.json", "known_hosts", "authorized_keys",
)
# Sample/template files document the variables, not their values: they are fine to send.
_SAFE_SUFFIXES = (".example", ".sample", ".template", ".dist", ".tmpl")
_SECRET_DIRS = (".ssh", ".aws", ".gnupg", ".docker")
# One regex for all the name globs: the index asks once per chunk, and 45 fnmatch calls took ~22 µs.
_SECRET_NAME = re.compile("|".join(translate(pattern) for pattern in _SECRET_NAMES))


def is_secret_path(path: str) -> bool:
    """True when a file must never be sent to a provider, judged by its name and folder alone."""
    parts = path.replace("\\", "/").lower().split("/")
    name = parts[-1]
    if any(part in _SECRET_DIRS for part in parts[:-1]):
        return True
    if name.endswith(_SAFE_SUFFIXES):
        return False
    return _SECRET_NAME.match(name) is not None


# Known key formats. Each matches the secret itself; the whole line is replaced when one is found, because
# the rest of a line holding a key (a variable name, a URL with the key in it) often leaks part of it.
# Specific vendors come before the generic shapes, so a hit is reported under the most useful name.
# A leading \b is checked in Python instead (`word_start`): Python's re only skips ahead to a literal prefix
# when the pattern starts with one, and \b in front made each pattern far slower over a whole file.
_KEY_PATTERNS: tuple[tuple[str, re.Pattern[str], bool], ...] = tuple(
    (name, re.compile(pattern.removeprefix(r"\b")), pattern.startswith(r"\b")) for name, pattern in (
        ("aws-access-key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b"),
        ("aws-secret-key",
         r"(?i)aws.{0,20}(?:secret|key).{0,20}[\"'=:\s][A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])"),
        ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})\b"),
        ("gitlab-token", r"\bglpat-[A-Za-z0-9_\-]{20,}"),
        ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
        # a digit somewhere: real keys always have one, "sk-learn-compatible-estimators" has none
        ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?(?=[A-Za-z0-9_\-]{0,200}\d)[A-Za-z0-9_\-]{20,}"),
        ("slack-token", r"\b(?:xox[abposre]|xapp)-[A-Za-z0-9\-]{10,}"),
        ("slack-webhook", r"https://hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9/_\-]+"),
        ("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}"),
        ("google-oauth", r"\b(?:GOCSPX-[A-Za-z0-9_\-]{20,}|ya29\.[0-9A-Za-z_\-]{20,})"),
        ("stripe-key", r"\b(?:(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}|whsec_[0-9A-Za-z]{20,})"),
        ("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}\b"),
        ("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b"),
        # Twilio account and API key SIDs: `Client("AC…", "<auth token>")` holds the pair on one line
        ("twilio-sid", r"\bAC[0-9a-f]{32}\b"),  # two patterns, each with a literal prefix to skip to
        ("twilio-sid", r"\bSK[0-9a-f]{32}\b"),
        ("pypi-token", r"\bpypi-AgE[A-Za-z0-9_\-]{50,}"),
        ("sendgrid-key", r"\bSG\.[A-Za-z0-9_\-]{16,}\.[A-Za-z0-9_\-]{16,}"),
        ("jwt", r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"),
        ("bearer-token",
         r"\b(?:[Bb]earer|BEARER)\s+(?=[A-Za-z0-9\-._~+/]{0,200}\d)[A-Za-z0-9\-._~+/]{16,}=*"),
        ("xml-secret", r"(?i)<(\w*(?:pass|secret|token|key)\w*)>[^<\s]{4,}</\1>"),
    )
)
# Text each pattern cannot match without (any one of them, case and all): a pattern whose text is absent is
# not run. Only for the patterns that scan slowly (no literal prefix for re to skip ahead to); `in` finds
# a substring far faster than re tries a pattern at every position.
_NEEDS: dict[str, tuple[str, ...]] = {
    "stripe-key": ("k_live_", "k_test_", "whsec_"),
    "bearer-token": ("earer", "BEARER"),
    "xml-secret": ("</",),
    "google-oauth": ("GOCSPX-", "ya29."),
    "npm-token": ("npm_",),
    "jwt": ("eyJ",),
}


def _basic_credentials(match: re.Match[str]) -> bool:
    """`Basic <base64>` holding `user:password` (not "Basic usage" or "basic authentication")."""
    token = match.group("b64")
    try:
        raw = base64.b64decode(token + "=" * (-len(token) % 4), validate=True)
    except (binascii.Error, ValueError):
        return False
    _user, colon, password = raw.partition(b":")
    return bool(colon) and bool(password) and all(32 <= byte < 127 for byte in raw)


def _after(letters: str) -> _Check:
    """A check that the match is preceded by one of `letters` (the pattern starts one letter into its word,
    so that it begins with a literal)."""
    return lambda match: match.start() > 0 and match.string[match.start() - 1] in letters


def _paired_secret(letters: str) -> _Check:
    """The second member of `auth=("admin", "x")` / `.login(user, "x")`: a literal password, not a template
    name, a path, a message or a placeholder."""
    def check(match: re.Match[str]) -> bool:
        if not _after(letters)(match):
            return False
        value = match.group("secret")
        if any(ch.isspace() for ch in value) or "/" in value or _FILE_NAME.fullmatch(value):
            return False
        return _literal_secret("password", value, "strong")
    return check


def _prose_password(letters: str) -> _Check:
    """`password is hunter22`, `**Password:** `S3cr3t!`, `--password hunter22`: a value with a digit or a
    symbol among letters, not an identifier, attribute, path, template or placeholder."""
    def check(match: re.Match[str]) -> bool:
        text, start = match.string, match.start() - (1 if letters else 0)
        if letters and (start < 0 or text[start] not in letters):
            return False
        if start > 0 and (text[start - 1].isalnum() or text[start - 1] == "_"):
            return False  # check_password(...), db_password: other rules judge names
        if match.group("sep") == "=" and text[max(0, start - 1):start] != "-":
            return False  # `password=x` is code, the assignment rule's to judge; `--password=x` a flag
        value = match.group("value").rstrip(".,:;!?")
        if len(value) < 6 or "/" in value or (not value[0].isalnum() and value[0] not in "!@$%^&*"):
            return False
        if _DOTTED.fullmatch(value) or ("_" in value and _IDENTIFIER.fullmatch(value)):
            return False  # parts.password, new_password: code
        if not any(ch.isalpha() for ch in value) or all(ch.isalpha() for ch in value):
            return False
        if _FILE_NAME.fullmatch(value):
            return False
        return _literal_secret("password", value, "strong")
    return check


def _url_password(match: re.Match[str]) -> bool:
    """The password of `scheme://user:password@host`: a literal, not a template or a variable."""
    value = match.group("secret")
    if value.split("@")[0].lower() in ("pass", "password", "passwd", "pwd", "secret"):
        return False
    if value[0] in "{<" or any(part in value for part in ("${", "$(", "%(", "{{", "{")):
        return False  # f"{password}", ${DB_PASSWORD}, %(password)s, <password>
    if value[0] == "%":
        return _PERCENT_ENCODED.match(value) is not None  # %40bc… is a password; %PASSWORD% a variable
    if value[0] == "$":
        return _SHELL_VARIABLE.fullmatch(value.split("@")[0]) is None  # $DB_PASSWORD, $pass: variables
    return True


_PERCENT_ENCODED = re.compile(r"%[0-9A-Fa-f]{2}")
# A shell/PHP variable rather than a password that starts with `$`: an env name (`$DB_PASS`) or a code name
# with at most a trailing digit (`$password`, `$dbPass`, `$pw2`); `$ecr3tPw9` is a password.
_SHELL_VARIABLE = re.compile(r"\$(?:[A-Z_][A-Z0-9_]*|[a-z_][A-Za-z_]*\d?)")
# `user:password` after a command's user flag, quoted or not; a user starting with `$` is a variable
_USER_PAIR = r"[\"']?(?P<user>[^\s:'\"$]+):(?P<secret>[^\s'\"]{3,})"
# a flag's value: one word, or a quoted string
_ARG = r"(?P<secret>'[^'\n]+'|\"[^\"\n]+\"|[^\s'\"]+)"


def _command_value(match: re.Match[str]) -> bool:
    """The flag value a command-password pattern found is a literal password."""
    value = match.group("secret")
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        value = value[1:-1]
    user = match.groupdict().get("user") or ""
    if value[0] in "$%{<" or _NUMBER.fullmatch(value) or _NUMBER.fullmatch(user):
        return False  # a variable, a template, `-u 1000:1000`
    return _literal_secret("password", value, "strong")


def _command_secret(letters: str) -> _Check:
    """A command-password pattern's check: preceded by one of `letters`, at a word start, a literal value."""
    def check(match: re.Match[str]) -> bool:
        start = match.start() - 1
        return (start >= 0 and match.string[start] in letters
                and _word_start(match.string, start) and _command_value(match))
    return check


def _curl_user(match: re.Match[str]) -> bool:
    """`-u user:password` on a curl line (`-u` is a uid, a user or a flag of its own to other commands)."""
    text, start = match.string, match.start()
    if start == 0 or text[start - 1] not in " \t":
        return False
    begin = text.rfind("\n", 0, start) + 1
    return "curl" in text[begin:start] and _command_value(match)


def _sas_signature(match: re.Match[str]) -> bool:
    """`sig=` as a query parameter (after `?`, `&` or `;`), holding a signature rather than a placeholder."""
    start = match.start()
    value = match.group("secret")
    return (start > 0 and match.string[start - 1] in "?&;" and _DIGIT.search(value) is not None
            and not _PLACEHOLDER.search(value))


def _authorization(match: re.Match[str]) -> bool:
    """An Authorization header's credentials in any scheme (Basic has its own rule, which decodes them)."""
    if not _after("aA")(match):
        return False
    scheme = (match.group("scheme") or "").lower()
    value = match.group("secret")
    if scheme == "basic" or _DIGIT.search(value) is None:
        return False  # a header name, a word, a description
    if "_" in value and _IDENTIFIER.fullmatch(value) and not _looks_random(value):
        return False  # authorization_header_v2: a name
    return _literal_secret("token", value, "strong")


def _pgpass_line(match: re.Match[str]) -> bool:
    """`host:port:db:user:password` where the host is a host name, an address, `localhost` or `*`."""
    text, start = match.string, match.start()
    begin = start
    while begin > 0 and (text[begin - 1].isalnum() or text[begin - 1] in "._-*"):
        begin -= 1
    host = text[begin:start]
    if not (host in {"*", "localhost"} or "." in host.strip(".")):
        return False
    if begin > 0 and text[begin - 1] not in " \t\n\"'`=":
        return False  # part of a longer token: a URL, a cache key
    return _literal_secret("password", match.group("secret"), "strong")


_FILE_NAME = re.compile(r"[\w\-.]+\.(?:html?|txt|json|py|js|ts|md|rst|png|jpe?g|svg|ya?ml|xml|css|cfg|ini|"
                        r"toml|sh|env|pem|key|crt|log)", re.IGNORECASE)
_DOTTED = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
_IDENTIFIER = re.compile(r"[A-Za-z_]\w*")
_PAIR_TAIL = (r"\s*[^,()\[\]\n]{1,120}?\s*,\s*[bBrRuU]{0,2}(?P<q>[\"'])(?P<secret>[^\"'\n]{4,200})(?P=q)")
# a separator is required (prose: " is ", ": ", a space; a flag's "="): `password.encode`,
# `password-required`, `[password,iam]` are code and text about passwords
_PROSE_TAIL = (r"[*_]*(?P<sep>[ \t]+(?:is|was|to|of|be|set to|reads)[ \t]+|[ \t]*:[*_]*[ \t]*|=|[ \t]+)"
               r"[`\"']?(?P<value>[^\s`\"',;()\[\]{}<>|]{6,64})")
_BASIC_TAIL = r"\s+(?P<b64>[A-Za-z0-9+/]{8,}={0,2})(?![A-Za-z0-9+/=])"

# Credentials that only their surroundings tell apart from ordinary text: each pattern finds a candidate,
# its check decides. Every pattern starts with a literal (a word less its first letter, which the check
# reads): re then skips ahead to it in C, where a leading [Aa] or (?i) made it try every position.
_CHECKED_PATTERNS: tuple[tuple[str, re.Pattern[str], _Check], ...] = tuple(
    (name, re.compile(pattern), check) for name, pattern, check in (
        ("basic-auth", "Basic" + _BASIC_TAIL, _basic_credentials),
        ("basic-auth", "basic" + _BASIC_TAIL, _basic_credentials),
        ("credential-pair", r"uth(?:enticate)?(?:\s*[=:]\s*[(\[]|\s*\()" + _PAIR_TAIL, _paired_secret("aA")),
        ("credential-pair", r"ogin\s*\(" + _PAIR_TAIL, _paired_secret("lL")),
        ("credential-pair", r"red(?:s|entials)(?:\s*[=:]\s*[(\[]|\s*\()" + _PAIR_TAIL, _paired_secret("cC")),
        ("prose-password", r"ass(?:word|wd|phrase|code)s?\b" + _PROSE_TAIL, _prose_password("Pp")),
        ("prose-password", r"ASS(?:WORD|WD|PHRASE|CODE)S?\b" + _PROSE_TAIL, _prose_password("P")),
        # scheme://user:password@host (postgres, redis, amqp, mongodb+srv, https...); the user may be empty,
        # the password may hold an `@` (the last one before the path ends it)
        ("url-credentials", r"://(?P<user>[^/\s:@'\"]*):(?P<secret>[^/\s'\"]{3,})@", _url_password),
        # `curl -u user:password`, `curl --user "user:password"`, `-uuser:password`
        ("command-password", r"-u[ \t]*" + _USER_PAIR, _curl_user),
        ("command-password", r"-(?:user|auth)(?:[ \t]+|=)" + _USER_PAIR, _command_secret("-")),
        # `mysql -pPASSWORD` (no space: with one, -p prompts and the next word is the database);
        # `sshpass -p PASSWORD` (a space or not)
        ("command-password", r"ysql(?:dump|admin|import|show|check|slap)?\b[^\n]{0,200}?[ \t]-p" + _ARG,
         _command_secret("mM")),
        ("command-password", r"ariadb(?:-dump|-admin)?\b[^\n]{0,200}?[ \t]-p" + _ARG, _command_secret("mM")),
        ("command-password", r"shpass\b[^\n]{0,200}?[ \t]-p[ \t]*" + _ARG, _command_secret("sS")),
        # an Azure shared access signature: `?sv=…&sig=<base64, percent-encoded>`
        ("azure-sas", r"sig=(?P<secret>[A-Za-z0-9%+/=]{16,})", _sas_signature),
        # `Authorization: Token …`, `"Authorization": "SSWS …"`, a bare key as the header's value
        ("authorization-header", r"uthorization[\"'`]?\]?[ \t]*[:=,][ \t]*[bfruBFRU]{0,2}[\"'`]?"
         r"(?:(?P<scheme>[A-Za-z][\w\-]{1,20})[ \t]+)?(?P<secret>[A-Za-z0-9\-._~+/%:]{12,}=*)",
         _authorization),
        # a .pgpass line, host:port:database:user:password (the port, or `*`, is what tells it apart)
        ("pgpass", r":(?:\d{1,5}|\*):(?:[\w.\-]+|\*):(?:[\w.\-@]+|\*):(?P<secret>[^\s:'\"]{3,})(?=$|[\s'\"])",
         _pgpass_line),
    )
)
# A PEM body cut into short quoted fragments, one per line ("MIIEow..." "\n" + ...): a run of such lines,
# random enough together, is a key even with no BEGIN line in sight
# (a digit in it and nothing but joiners after it on its line: JSON's "key": "value" lines fail at once)
_FRAGMENT_TAIL = r"[ \t]*[+,)]?[ \t]*\\?[ \t]*(?=\n|$)"
_FRAGMENT_CANDIDATES = (
    re.compile(r'"(?=[A-Za-z+/]{0,80}[0-9])(?P<frag>[A-Za-z0-9+/]{12,}={0,2})(?:\\n)?"' + _FRAGMENT_TAIL),
    re.compile(r"'(?=[A-Za-z+/]{0,80}[0-9])(?P<frag>[A-Za-z0-9+/]{12,}={0,2})(?:\\n)?'" + _FRAGMENT_TAIL))
_FRAGMENT_LINE = re.compile(r"[ \t]*[+(,]?[ \t]*[bBrRuU]?[\"'][A-Za-z0-9+/]{12,}={0,2}(?:\\n)?[\"']"
                            r"[ \t]*[+,)]?[ \t]*\\?[ \t]*")
_FRAGMENT_LINES = 3
_FRAGMENT_ENTROPY = 5.0  # bits per character; less for short runs, which cannot reach it (see close())
# `"-----BEGIN RSA PRIV" "ATE KEY-----"`: quotes and + between fragments of one line
_FRAGMENT_JOIN = re.compile(r"[\"']\s*\+?\s*[\"']")
_PRIVATE_BLOCK_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")
_PRIVATE_BLOCK_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")
# Candidate tokens for the entropy check: long runs of base64/hex/url-safe characters.
_NEWLINE = re.compile("\n")
_TOKEN = re.compile(r"[A-Za-z0-9+/_\-]{24,}={0,2}")
_HEX_MIN = 32
_HEX = re.compile(rf"[0-9a-fA-F]{{{_HEX_MIN},}}\b")  # \b in front: see _word_start
# str.isdigit/isupper/islower of an ASCII character
_DIGIT = re.compile(r"[0-9]")
_UPPER = re.compile(r"[A-Z]")
_LOWER = re.compile(r"[a-z]")
_SECRETISH_WORD = re.compile(r"(?i)key|token|secret|passw|credential|auth|signature|salt")
# Words beside 64 hex digits that make them a digest (lock files, checksums, image digests, commits, test
# vectors of hash functions) rather than a 256-bit key
_DIGEST_WORD = re.compile(r"(?i)sha|digest|hash|check ?sum|sum\b|sums\b|integrity|fingerprint|commit|\brev\b|"
                          r"revision|\boid\b|etag|blake|keccak|md5|merkle|\btx")
_KEY_HEX_LENGTHS = (64, 128)  # 256- and 512-bit keys (secrets.token_hex(32), HMAC keys, Ethereum keys)


def _bare_key(match: re.Match[str], line: str) -> bool:
    """64 (or 128) hex digits with no word around them: a key, unless the line calls it a digest or it is
    the first column of `sha256sum` output (`<hex>  file`). 40 hex digits (a git commit) never count."""
    value = match.group(0)
    if len(value) not in _KEY_HEX_LENGTHS or _DIGEST_WORD.search(line):
        return False
    if match.start() > 0 and match.string[match.start() - 1] in "-#":
        return False  # an anchor or a name's tail: `#diff-<sha256 of a path>`, `build-<digest>`
    # random hex holds nearly 4 bits a digit (of 100,000 SHA-256 digests none was under 3.39); hex-encoded
    # data (a gzip body in a test: `1f8b0800000000…`) repeats its zeros and falls below
    if not (_DIGIT.search(value) and re.search("[a-fA-F]", value)) or shannon_entropy(value) < 3.3:
        return False
    after = match.string[match.end():match.end() + 3]
    return not (after.startswith(("  ", " *")) and len(after) == 3 and not after[2].isspace())


_WALLET_WORD = re.compile(r"(?i)key|secret|private|wallet|signer|account|mnemonic|seed")

# -- name = value: YAML `db_password: x`, INI `password = x`, env `DB_PASSWORD=x`, code `api_key = "x"`, JSON,
# PHP/Ruby `'token' => 'x'`, connection strings `Password=x;`. The name decides whether the value can be a
# secret; the shape of the value decides whether it IS a literal or code that merely mentions one.
# A cheap filter before the parse below; spelled out per case because (?i) makes re scan much slower.
_NAME_HINT = re.compile("|".join(w for word in ("pass", "pwd", "secret", "token", "key", "cred", "psk")
                                 for w in (word, word.upper(), word.capitalize())))
_ASSIGN = re.compile(
    r"(?P<name>[A-Za-z_][A-Za-z0-9_.\-]{0,80})[\"'`]?\]?"
    r"(?:\s*:\s*[A-Za-z_][\w\[\]., |]{0,60}?(?=\s*=[^=]))?"  # `password: str = "x"`: skip the annotation
    r"[ \t]*(?P<sep>:=|=>|=(?!=)|:(?![:/]))[ \t]*")
_WORDS = re.compile(r"[A-Z]+(?=[A-Z][a-z])|[A-Z]?[a-z]+|[A-Z]+|\d+")
# A name holding one of these words holds a secret: any literal value counts.
_STRONG_WORDS = frozenset({
    "pass", "passwd", "password", "passwords", "passphrase", "pwd", "pw", "secret", "secrets", "token",
    "tokens", "credential", "credentials", "creds", "apikey", "privatekey", "secretkey", "accesskey",
    "authtoken", "passcode", "pin",
    "psk", "preshared",  # Wi-Fi and VPN pre-shared keys: wpa_psk=, psk="…", PresharedKey =
})
_STRONG_SUFFIXES = ("password", "passwd", "secret", "token", "apikey")  # dbpassword, accesstoken
# A bare `key` is common in ordinary code (`sort_key = "name"`): only a value that looks random counts.
_WEAK_WORDS = frozenset({"key", "keys", "auth", "salt", "signature"})
# Names ending in these describe a secret rather than hold it: SECRET_HEADER_NAME, token_type, password_env.
_DESCRIPTOR_WORDS = frozenset({
    "name", "names", "type", "types", "kind", "field", "fields", "header", "headers", "env", "var", "vars",
    "variable", "file", "files", "path", "paths", "dir", "url", "uri", "endpoint", "len", "length", "size",
    "count", "max", "min", "limit", "limits", "prefix", "suffix", "format", "fmt", "pattern", "regex", "re",
    "label", "id", "ids", "column", "col", "attr", "attribute", "param", "arg", "class", "cls", "style",
    "mode", "method", "algorithm", "alg", "algo", "scheme", "location", "source", "provider", "policy",
    "hint", "help", "prompt", "message", "msg", "error", "errors", "text", "title", "description", "desc",
    "doc", "placeholder", "expiry", "expires", "expiration", "ttl", "timeout", "lifetime", "age", "index",
    "idx", "required", "enabled", "usage", "validator", "manager", "store", "storage", "backend", "service",
    "client", "factory", "generator", "cache", "config", "settings", "option", "options", "user",
    "username", "login", "email", "account", "owner",
})
_NON_VALUES = frozenset({
    "true", "false", "null", "none", "nil", "yes", "no", "on", "off", "undefined", "empty", "required",
    "optional", "string", "str", "int", "integer", "bool", "boolean", "bytes", "float", "any", "object",
    "secret", "secrets", "password", "token", "redacted", "lambda", "self", "this", "new",
    "await", "async", "function", "return", "def", "var", "let", "const", "final",
    "read", "write", "admin",  # GitHub Actions `id-token: write` permissions
    "test",  # a fixture's {"password": "test"}
})
_PLACEHOLDER = re.compile(r"(?i)^(.)\1*$|your[_\-\s]|xxx|example|placeholder|<[^>]*>|\.\.\.|\*\*\*")
_TEMPLATE = re.compile(r"\{\{|\$\{|\$\(|%\(|%s|\{\}|^\$|^%|^!|^&|^\*|^\||^>|^~|^@")
_REFERENCE = re.compile(r"[A-Za-z_][A-Za-z_]*(?:\.[A-Za-z_][A-Za-z_]*)*")  # my_token, self.password
_TYPE_NAME = re.compile(r"[A-Z][a-z]+(?:[A-Z][a-z]+)*")  # SecretStr, Token: an annotation, not a value
_NUMBER = re.compile(r"[+\-]?\d[\d_]*(?:\.\d+)?")
_QUOTE_PREFIX = re.compile(r"[bBrRuUfF]{0,2}([\"'`])")
_AFTER_UNQUOTED = re.compile(r"\s*(?:$|#|//|;|&)")  # end of line, a comment, or the next `k=v` of a DSN


def _name_strength(name: str) -> str | None:
    """"strong", "weak" or None for an assigned name, judged by its words."""
    words = [w.lower() for w in _WORDS.findall(name)]
    if not words or words[-1] in _DESCRIPTOR_WORDS:
        return None
    if any(w in _STRONG_WORDS or w.endswith(_STRONG_SUFFIXES) for w in words):
        return "strong"
    if words[-1] in _WEAK_WORDS or words[-1].endswith("key"):
        return "weak"
    return None


def _looks_random_value(value: str) -> bool:
    """A value a `key` name may hold as a secret: not a word or identifier, letters mixed with digits."""
    if len(value) < 8 or any(ch.isspace() for ch in value):
        return False
    has_digit = any(ch.isdigit() for ch in value)
    has_alpha = any(ch.isalpha() for ch in value)
    return (has_digit and has_alpha) or _looks_random(value)


def _literal_secret(name: str, value: str, strength: str) -> bool:
    """True when `value`, assigned to `name`, is a literal that may be a secret."""
    value = value.strip()
    if len(value) < 4 or value.lower() in _NON_VALUES or _NUMBER.fullmatch(value):
        return False
    if _PLACEHOLDER.search(value) or _TEMPLATE.search(value):
        return False
    if value.lower() in {w.lower() for w in _WORDS.findall(name)} | {name.lower()}:
        return False  # {"password": "password"}: a field name, not its value
    return strength == "strong" or _looks_random_value(value)


def _assignment_secret(line: str) -> bool:
    """True when `line` assigns a literal to a secret-named key, in any of the config or code forms."""
    if not _NAME_HINT.search(line) or ("=" not in line and ":" not in line):
        return False  # every separator _ASSIGN knows holds one of the two
    for match in _ASSIGN.finditer(line):
        strength = _name_strength(match.group("name"))
        if strength is None:
            continue
        rest = line[match.end():]
        quoted = _QUOTE_PREFIX.match(rest)
        if quoted:
            quote = quoted.group(1)
            close = rest.find(quote, quoted.end())
            value = rest[quoted.end():close] if close >= 0 else rest[quoted.end():]
            if _literal_secret(match.group("name"), value, strength):
                return True
            continue
        value = re.split(r"[\s,;&\"'`]", rest, maxsplit=1)[0]
        after = rest[len(value):]
        if not value or any(ch in value for ch in "()[]{}<>") or not _AFTER_UNQUOTED.match(after):
            continue  # code: a call, a subscript, a kwarg list (`token=token,`), prose after the value
        if _is_reference(line, match, value):
            continue
        if _literal_secret(match.group("name"), value, strength):
            return True
    return False


def _is_reference(line: str, match: re.Match[str], value: str) -> bool:
    """An unquoted identifier that is code, not a config value: `token = my_token`, `password: SecretStr`.

    A YAML scalar (`db_password: hunter`) and an env line (`DB_PASSWORD=hunter`) are values even when they
    read like identifiers; a Python/JS assignment of a bare name is not.
    """
    if _TYPE_NAME.fullmatch(value):
        return True
    if not _REFERENCE.fullmatch(value):
        return False  # digits or symbols: a literal
    head = line[:match.start()].strip()
    if match.group("sep") == ":":
        return head not in ("", "-")  # YAML `key: value` starts its line (or a list item)
    env_style = line[match.start("sep") - 1:match.start("sep")] != " " and head in ("", "export")
    return not env_style


# A key whose value starts on the next line: YAML `password:` (a plain scalar below it) or `password: |` /
# `>-` (a block scalar), Python `PASSWORD = (` / `PASSWORD = \\` (a literal continued below)
_DANGLING = re.compile(r"(?P<indent>[ \t]*)(?:-[ \t]+)?[\"']?(?P<name>[A-Za-z_][\w.\-]{0,80})[\"']?[ \t]*"
                       r"(?::[ \t]*(?P<block>[|>][-+0-9]*)?|(?::=|=)[ \t]*[(\\]?)[ \t]*(?:#.*)?")
_MAPPING_LINE = re.compile(r"[ \t]*(?:-(?:[ \t]|$)|[\"']?[\w.\-$]+[\"']?[ \t]*:(?:[ \t]|$))")


def _next_line_value(text: str, begin: int, line: str) -> list[int]:
    """Line starts of a secret-named key's value when it is on the lines below `line` (which starts at
    `begin`), or [] when it is not, or is code, a nested mapping, a list or a template."""
    dangling = _DANGLING.fullmatch(line)
    if dangling is None:
        return []
    name = dangling.group("name")
    strength = _name_strength(name)
    if strength is None:
        return []
    indent = len(dangling.group("indent").expandtabs())
    starts: list[int] = []
    cursor = text.find("\n", begin)
    while cursor >= 0 and len(starts) < 50:
        start = cursor + 1
        cursor = text.find("\n", start)
        below = text[start:] if cursor < 0 else text[start:cursor]
        if not below.strip():
            if starts:
                break
            continue
        if len(below.expandtabs()) - len(below.expandtabs().lstrip()) <= indent:
            break  # back at the key's level: the value (if any) ended
        starts.append(start)
        if not dangling.group("block"):
            break  # a plain scalar or a continued literal: its first line says what it is
    if not starts:
        return []
    first = text[starts[0]:text.find("\n", starts[0]) if text.find("\n", starts[0]) >= 0 else len(text)]
    if not dangling.group("block") and _MAPPING_LINE.match(first):
        return []  # `password:` heading a mapping or a list: its children are judged on their own lines
    value = first.strip().rstrip(",)\\").strip()
    quoted = _QUOTE_PREFIX.match(value)
    if quoted:
        value = value[quoted.end():].rstrip(quoted.group(1))
    elif "=" in line.split("#", maxsplit=1)[0].rsplit(name, 1)[-1]:
        return []  # `token = (` followed by code, not a literal
    return starts if _literal_secret(name, value, strength) else []


@dataclass(frozen=True, slots=True)
class Redaction:
    line: int  # 1-based
    rule: str


def shannon_entropy(text: str) -> float:
    """Bits per character of `text`."""
    if not text:
        return 0.0
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _looks_random(token: str) -> bool:
    """A high-entropy token: mixed letters and digits, no long readable words, entropy near random."""
    core = token.rstrip("=")
    if len(core) < 24:
        return False
    if core.isascii():
        # regex searches, not Python loops over the characters: this runs on every long token of every
        # text scanned, and most (long identifiers) stop at the first test. Same answers on ASCII.
        if _DIGIT.search(core) is None:
            return False
        has_digit, has_upper, has_lower = True, bool(_UPPER.search(core)), bool(_LOWER.search(core))
    else:
        has_digit = any(ch.isdigit() for ch in core)
        has_upper = any(ch.isupper() for ch in core)
        has_lower = any(ch.islower() for ch in core)
    if not (has_digit and (has_upper or has_lower)):
        return False
    if "/" in core and core.count("/") >= 2 and not (has_upper and has_lower):
        return False  # a path such as src/app/v1/handlers_2024 is not a key
    # identifiers are mostly words joined by _ or -: a key has few separators between long random runs
    words = re.split(r"[_\-/]", core)
    if len(words) >= 3 and all(w.isalpha() or w.isdigit() for w in words if w):
        return False
    return shannon_entropy(core) >= 4.2 if len(core) >= 32 else shannon_entropy(core) >= 4.0


def scan_line(line: str) -> str | None:
    """The rule a line trips, or None when it looks clean."""
    return _line_rules(line).get(0)


def _line_rules(text: str, *, first: bool = False) -> dict[int, str]:
    """0-based line number -> the first rule it trips, for every line of `text` that trips one (`first`: stop
    at the first line found, which is all `holds_secret` asks).

    Each pattern runs once over the whole text (in C) rather than once per line (34k lines x 20 patterns
    of Python calls made redaction the slow part); a hit is mapped back to its line, which is known by where
    it starts until the end (the line numbers of a few hits, not a table of every line's start). The rules
    are tried in the same order per line: known key formats, then assignments, then high entropy, then hex.
    """
    rules: dict[int, str] = {}  # line start -> rule

    def line_start(pos: int) -> int:
        return text.rfind("\n", 0, pos) + 1

    def line_at(begin: int) -> str:
        end = text.find("\n", begin)
        return text[begin:] if end < 0 else text[begin:end]

    for name, pattern, word_start in _KEY_PATTERNS:
        needs = _NEEDS.get(name)
        if needs is not None and not any(part in text for part in needs):
            continue
        for match in pattern.finditer(text):
            if word_start and not _word_start(text, match.start()):
                continue
            rules.setdefault(line_start(match.start()), name)
            last = max(match.start(), match.end() - 1)  # every line the match spans
            newline = text.find("\n", match.start(), last)
            while newline >= 0:
                rules.setdefault(newline + 1, name)
                newline = text.find("\n", newline + 1, last)
            if first:
                return _numbered(text, rules)
    checked_hits = ((name, match.span()) for name, pattern, check in _CHECKED_PATTERNS
                    for match in pattern.finditer(text) if check(match))
    seeds = (("seed-phrase", span) for span in itertools.chain(named_phrases(text), listed_phrases(text)))
    for name, (start, end) in itertools.chain(checked_hits, seeds):
        begin = line_start(start)
        rules.setdefault(begin, name)
        newline = text.find("\n", start, end)
        while newline >= 0:
            rules.setdefault(newline + 1, name)
            newline = text.find("\n", newline + 1, end)
        if first:
            return _numbered(text, rules)
    for begins in _fragment_runs(text):
        for begin in begins:
            rules.setdefault(begin, "key-fragments")
        if first:
            return _numbered(text, rules)
    checked: set[int] = set()
    for match in _NAME_HINT.finditer(text):
        begin = line_start(match.start())
        if begin in rules or begin in checked:
            continue
        checked.add(begin)
        line = line_at(begin)
        if _assignment_secret(line):
            rules[begin] = "secret-assignment"
            if first:
                return _numbered(text, rules)
            continue
        for below in _next_line_value(text, begin, line):
            rules.setdefault(below, "secret-assignment")
            if first:
                return _numbered(text, rules)
    long_runs: list[tuple[int, int]] = []  # where hex can be: runs of token characters of its length or more
    for match in _TOKEN.finditer(text):
        token = match.group(0)
        if _looks_random(token):  # first: most tokens are not, and finding their line costs more
            begin = line_start(match.start())
            if begin not in rules:
                rules[begin] = "high-entropy"
                if first:
                    return _numbered(text, rules)
        run = len(token.rstrip("="))
        if run >= _HEX_MIN:
            long_runs.append((match.start(), match.start() + run))
    for run_start, run_end in long_runs:
        # hex digits are token characters, so a hex match lies within one such run; the character after the
        # run stays in view for the closing \b
        for match in _HEX.finditer(text, run_start, run_end + 1):
            begin = line_start(match.start())
            if begin in rules:
                continue
            if _word_start(text, match.start()):
                line = line_at(begin)
                secret = _SECRETISH_WORD.search(line) is not None or _bare_key(match, line)
            else:
                # 0x + 64 hex digits: an Ethereum-style private key (`Wallet("0x…")`, `from_key("0x…")`)
                secret = (text[match.start() - 2:match.start()] in ("0x", "0X")
                          and match.end() - match.start() == 64 and _word_start(text, match.start() - 2)
                          and _WALLET_WORD.search(line_at(begin)) is not None)
            if secret:
                rules[begin] = "hex-secret"
                if first:
                    return _numbered(text, rules)
    return _numbered(text, rules)


def _fragment_runs(text: str) -> list[list[int]]:
    """Where each run of quoted base64 fragment lines starts (line starts), for runs that read as a key:
    `_FRAGMENT_LINES` or more lines in a row whose fragments joined are near-random."""
    lines: dict[int, tuple[int, str]] = {}  # line start -> (line end, fragment)
    for candidate in _FRAGMENT_CANDIDATES:
        for match in candidate.finditer(text):
            begin = text.rfind("\n", 0, match.start()) + 1
            end = text.find("\n", match.end())
            end = len(text) if end < 0 else end
            if begin not in lines and _FRAGMENT_LINE.fullmatch(text, begin, end):
                lines[begin] = (end, match.group("frag"))
    if len(lines) < _FRAGMENT_LINES:
        return []
    runs: list[list[int]] = []
    run: list[int] = []
    for begin in sorted(lines):
        if run and lines[run[-1]][0] + 1 != begin:
            runs.append(run)
            run = []
        run.append(begin)
    runs.append(run)
    return [run for run in runs
            if len(run) >= _FRAGMENT_LINES and _reads_as_key("".join(lines[b][1] for b in run))]


def _reads_as_key(joined: str) -> bool:
    """Fragments joined: letters of both cases and digits, near-random (the threshold allows for the length:
    a short text cannot reach the entropy of a long one)."""
    return bool(_DIGIT.search(joined) and _UPPER.search(joined) and _LOWER.search(joined)
                and shannon_entropy(joined) >= min(_FRAGMENT_ENTROPY, 0.85 * math.log2(len(joined))))


def _numbered(text: str, rules: dict[int, str]) -> dict[int, str]:
    """`rules` keyed by 0-based line number instead of where each line starts."""
    out: dict[int, str] = {}
    number = counted = 0
    for begin in sorted(rules):
        number += text.count("\n", counted, begin)
        counted = begin
        out[number] = rules[begin]
    return out


def _word_start(text: str, pos: int) -> bool:
    """True when `pos` starts a word, as a leading \\b would require."""
    return pos == 0 or not (text[pos - 1].isalnum() or text[pos - 1] == "_")


def redact(text: str) -> tuple[str, list[Redaction]]:
    """`text` with every secret-looking line replaced by a marker (indentation kept), and what was hit."""
    rules = _line_rules(text)
    out: list[str] = []
    found: list[Redaction] = []
    in_block = False
    dashes = "-----" in text
    for index, line in enumerate(text.split("\n")):
        if in_block or ("PRIVATE KEY" in line and _PRIVATE_BLOCK_BEGIN.search(line)) or (
                dashes and "-----" in line and _block_begins(line)):
            if not in_block:
                found.append(Redaction(index + 1, "private-key-block"))
            in_block = not _PRIVATE_BLOCK_END.search(_joined(line))
            out.append(_marker(line, "private-key-block"))
            continue
        rule = rules.get(index)
        if rule is None:
            out.append(line)
        else:
            found.append(Redaction(index + 1, rule))
            out.append(_marker(line, rule))
    return "\n".join(out), found


def holds_secret(text: str) -> bool:
    """Whether `redact` would replace anything in `text` (without building the redacted text)."""
    if not text:
        return False
    if "PRIVATE KEY" in text and _PRIVATE_BLOCK_BEGIN.search(text):
        return True
    if "-----" in text and any(_block_begins(line) for line in text.split("\n") if "-----" in line):
        return True
    return bool(_line_rules(text, first=True))


def _joined(line: str) -> str:
    """`line` with quoted fragments joined (`"-----BEGIN RSA PRIV" "ATE KEY-----"`), when it has dashes."""
    return _FRAGMENT_JOIN.sub("", line) if "-----" in line else line


def _block_begins(line: str) -> bool:
    if "PRIVATE KEY" in line and _PRIVATE_BLOCK_BEGIN.search(line):
        return True
    return "-----" in line and "BEGIN" in line and _PRIVATE_BLOCK_BEGIN.search(_joined(line)) is not None


def redact_text(text: str) -> str:
    """`redact` when only the cleaned text is wanted."""
    return redact(text)[0]


def _marker(line: str, rule: str) -> str:
    indent = line[: len(line) - len(line.lstrip())]
    return f"{indent}{REDACTED} ({rule})"
