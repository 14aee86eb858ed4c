"""A real S3-protocol server on 127.0.0.1 for the object-storage tests: moto in server mode, as a subprocess.

`MotoS3` starts `python -m moto.server` on a free loopback port and waits until it answers; `bucket()`
makes a fresh bucket (an HTTP PUT, as any S3 client does) and returns its s3:// URI; `env` holds the
standard AWS variables a client process needs (endpoint, dummy keys, region) and nothing else: LanceDB
reads them itself, and sourcebook allows plain http only because the endpoint is loopback
(generator/index/store.py: storage_options). No network beyond loopback.
"""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
import time
import urllib.request
from types import TracebackType

from tests.support.servers import free_port

AWS_KEYS = ("AWS_ENDPOINT_URL", "AWS_ENDPOINT_URL_S3", "AWS_ENDPOINT", "AWS_ACCESS_KEY_ID",
            "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_REGION", "AWS_DEFAULT_REGION",
            "AWS_ALLOW_HTTP", "AWS_PROFILE")


class MotoS3:
    """moto_server on 127.0.0.1:<free port> for the life of the `with` block."""

    _names = itertools.count()

    def __init__(self, timeout_s: float = 60.0) -> None:
        self.port = free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self.timeout_s = timeout_s
        self.proc: subprocess.Popen[bytes] | None = None
        self.env = {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": "testing",
                    "AWS_SECRET_ACCESS_KEY": "testing", "AWS_REGION": "us-east-1"}

    def __enter__(self) -> MotoS3:
        env = {k: v for k, v in os.environ.items() if k not in AWS_KEYS}
        self.proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p",
                                      str(self.port)], env=env, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + self.timeout_s
        while True:
            try:
                with urllib.request.urlopen(f"{self.endpoint}/moto-api/", timeout=2):
                    return self
            except OSError:
                if time.monotonic() > deadline or self.proc.poll() is not None:
                    self.__exit__(None, None, None)
                    raise
                time.sleep(0.2)

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
            self.proc = None

    def bucket(self, name: str | None = None) -> str:
        """Create a bucket (a fresh name unless given) and return its URI, `s3://<name>`."""
        name = name or f"sb-{os.getpid()}-{next(self._names)}"
        request = urllib.request.Request(f"{self.endpoint}/{name}", method="PUT")
        with urllib.request.urlopen(request, timeout=10):
            pass
        return f"s3://{name}"

    def objects(self, bucket_uri: str) -> list[str]:
        """Keys stored in a bucket (through the S3 ListObjectsV2 call), to check what a run wrote."""
        import re

        name = bucket_uri.removeprefix("s3://").split("/", 1)[0]
        with urllib.request.urlopen(f"{self.endpoint}/{name}?list-type=2&max-keys=1000", timeout=10) as resp:
            body = resp.read().decode("utf-8")
        return re.findall(r"<Key>([^<]+)</Key>", body)


# A small Python package both object-store test modules build into the bucket
DEMO_FILES = {
    "pkg/__init__.py": '"""The demo package."""\n',
    "pkg/config.py": ('"""Settings."""\n\n\ndef load_settings(path):\n    """Read settings from `path`."""\n'
                      "    return open(path).read()\n"),
    "pkg/app.py": ('"""The app."""\n\nfrom pkg.config import load_settings\n\n\ndef create_app():\n'
                   '    """Make the app."""\n    return load_settings("app.toml")\n'),
    "README.md": "# Demo\n\nLoads settings for the demo app.\n",
}
