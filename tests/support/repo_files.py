"""Test repositories written from {relative path: text or bytes}; the demo package several suites build."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

AWS_KEY = "AKIA" + "Q3EXAMPLE7ABCDEF"  # shaped like an AWS access key id, so the secret scanner finds it
# a package whose files import, call and document each other: every page kind has something to say
DEMO: dict[str, str | bytes] = {
    "README.md": "# Demo\n\nA demo package that runs engines.\n",
    "pkg/__init__.py": '"""The demo package."""\nfrom .core import run\n',
    "pkg/core.py": "from .util import helper\n\n\nclass Engine:\n    def start(self):\n"
                   "        return helper()\n\n\ndef run():\n    return Engine().start()\n",
    "pkg/util.py": "def helper():\n    return 1\n",
    "other/tool.py": "def main():\n    print('tool')\n",
}
SECRET_SETTINGS = f'AWS_ACCESS_KEY_ID = "{AWS_KEY}"\nDEBUG = False\n'


def write_files(root: Path, files: Mapping[str, str | bytes]) -> Path:
    """Write `files` under `root` (created, parents too); text as UTF-8. Returns `root`."""
    root.mkdir(parents=True, exist_ok=True)
    for rel, content in files.items():
        target = root / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content, encoding="utf-8")
    return root
