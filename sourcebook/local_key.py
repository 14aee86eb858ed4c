"""A secret only this user's machine holds, for marks that a repository must not be able to forge.

The output folder (`.sourcebook/` by default) lives inside the repository, so a repository can commit one:
a doctored `site/` with the stamp that says "up to date", or answer-cache entries under the names a question
will look up (both are computable from the repository and a predictable CI path). Such marks are therefore
keyed hashes under this key; a mark made on any other machine never matches, and the work is simply redone.
"""

from __future__ import annotations

import hashlib
import hmac
import logging
import os
import secrets
import tempfile
from collections.abc import Mapping
from pathlib import Path

log = logging.getLogger(__name__)

KEY_NAME = "local.key"
KEY_BYTES = 32


def local_key_path(env: Mapping[str, str] | None = None) -> Path | None:
    """$XDG_STATE_HOME/sourcebook/local.key, else ~/.local/state/sourcebook/local.key; None without a home.
    `env`: this process's environment by default."""
    env = os.environ if env is None else env
    home = env.get("HOME")
    base = env.get("XDG_STATE_HOME") or (str(Path(home) / ".local" / "state") if home else "")
    return Path(base) / "sourcebook" / KEY_NAME if base else None


def local_key(env: Mapping[str, str] | None = None) -> bytes | None:
    """This user's key, created (32 random bytes, mode 600) on first use; None when it cannot be kept, and
    then callers trust no mark at all (the site is always rebuilt, answers are not cached)."""
    path = local_key_path(env)
    if path is None:
        return None
    try:
        key = path.read_bytes()
    except FileNotFoundError:
        key = b""
    except OSError:
        return None
    if len(key) >= KEY_BYTES:
        return key
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".key-", dir=path.parent)  # mode 600
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(KEY_BYTES))
        try:
            os.link(tmp, path)  # the first of two racing processes wins; both then read its key
        except FileExistsError:
            pass
        finally:
            os.unlink(tmp)
        key = path.read_bytes()
    except OSError as exc:
        log.info("no local key at %s (%s): nothing in the output folder is trusted as up to date",
                 path, exc.strerror or exc)
        return None
    return key if len(key) >= KEY_BYTES else None


def keyed(data: bytes, key: bytes | None) -> str | None:
    """The mark for `data` under `key` (hex HMAC-SHA256); None without a key: store none, trust none."""
    return hmac.new(key, data, hashlib.sha256).hexdigest() if key else None
