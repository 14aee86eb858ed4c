"""Keep secrets on the machine: which files are never sent to an LLM, and redaction of what is sent.

Two pure checks, applied to every prompt the LLM writer builds:
- `is_secret_path(path)`: files that by name hold secrets (.env*, private keys, keystores, credentials) are
  never sent at all, not even in part;
- `redact(text)`: in everything else, lines with known key formats (AWS, GitHub, OpenAI, Slack, Google,
  Stripe, JWTs, private key blocks, `password = "..."` style assignments) and high-entropy tokens are replaced
  by a marker before the prompt is built.
False positives cost a little prose quality; false negatives leak a key. The rules lean to redacting.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import dataclass
from fnmatch import fnmatch

REDACTED = "[REDACTED]"

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


def is_secret_path(path: str) -> bool:
    """True when a file must never be sent to a provider, judged by its name and folder alone."""
    parts = path.replace("\\", "/").lower().split("/")
    name = parts[-1]
    if any(part in _SECRET_DIRS for part in parts[:-1]):
        return True
    if name.endswith(_SAFE_SUFFIXES):
        return False
    return any(fnmatch(name, pattern) for pattern in _SECRET_NAMES)


# Known key formats. Each matches the secret itself; the whole line is replaced when one is found, because
# the rest of a line holding a key (a variable name, a URL with the key in it) often leaks part of it.
_KEY_PATTERNS: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (name, re.compile(pattern)) for name, pattern in (
        ("aws-access-key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA|ANPA|ANVA|AIPA)[0-9A-Z]{16}\b"),
        ("aws-secret-key", r"(?i)aws.{0,20}(?:secret|key).{0,20}[\"'=:\s][A-Za-z0-9/+=]{40}\b"),
        ("github-token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{40,})\b"),
        ("openai-key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
        ("anthropic-key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
        ("slack-token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
        ("slack-webhook", r"https://hooks\.slack\.com/services/[A-Za-z0-9/]+"),
        ("google-api-key", r"\bAIza[0-9A-Za-z_\-]{35}\b"),
        ("stripe-key", r"\b(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{16,}\b"),
        ("jwt", r"\beyJ[A-Za-z0-9_\-]{10,}\.eyJ[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}"),
        ("url-credentials", r"\b[a-z][a-z0-9+.\-]*://[^/\s:@]+:[^/\s:@]{3,}@"),
        ("generic-assignment",
         # the name must END in the secret word: SECRET_KEY, db.password, but not base_tokenizer
         r"(?i)(?:\b|[_.\-])(?:password|passwd|pwd|secret|secret[_\-]?key|token|api[_\-]?key|apikey|"
         r"access[_\-]?key|private[_\-]?key|client[_\-]?secret|auth[_\-]?token|credentials?)[\"']?\]?"
         r"\s*[:=]{1,2}\s*[\"'][^\"'\s]{6,}[\"']"),
    )
)
_PRIVATE_BLOCK_BEGIN = re.compile(r"-----BEGIN [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")
_PRIVATE_BLOCK_END = re.compile(r"-----END [A-Z0-9 ]*PRIVATE KEY( BLOCK)?-----")
# Candidate tokens for the entropy check: long runs of base64/hex/url-safe characters.
_TOKEN = re.compile(r"[A-Za-z0-9+/_\-]{24,}={0,2}")
_HEX = re.compile(r"\b[0-9a-fA-F]{32,}\b")
_SECRETISH_WORD = re.compile(r"(?i)key|token|secret|passw|credential|auth|signature|salt")


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
    for name, pattern in _KEY_PATTERNS:
        if pattern.search(line):
            return name
    for match in _TOKEN.finditer(line):
        if _looks_random(match.group(0)):
            return "high-entropy"
    if _SECRETISH_WORD.search(line) and _HEX.search(line):
        return "hex-secret"
    return None


def redact(text: str) -> tuple[str, list[Redaction]]:
    """`text` with every secret-looking line replaced by a marker (indentation kept), and what was hit."""
    out: list[str] = []
    found: list[Redaction] = []
    in_block = False
    for number, line in enumerate(text.split("\n"), start=1):
        if in_block or _PRIVATE_BLOCK_BEGIN.search(line):
            if not in_block:
                found.append(Redaction(number, "private-key-block"))
            in_block = not _PRIVATE_BLOCK_END.search(line)
            out.append(_marker(line, "private-key-block"))
            continue
        rule = scan_line(line)
        if rule is None:
            out.append(line)
        else:
            found.append(Redaction(number, rule))
            out.append(_marker(line, rule))
    return "\n".join(out), found


def redact_text(text: str) -> str:
    """`redact` when only the cleaned text is wanted."""
    return redact(text)[0]


def _marker(line: str, rule: str) -> str:
    indent = line[: len(line) - len(line.lstrip())]
    return f"{indent}{REDACTED} ({rule})"
