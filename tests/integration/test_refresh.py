"""The front half every index run shares (generator/index/refresh.py): a checkout and pushed content are read
alike."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from generator.index.refresh import Checkout, PushedContent, read_source
from sourcebook.config import load_config


@dataclass(frozen=True)
class _Sent:
    path: str
    raw: bytes


def test_pushed_content_is_classified_like_a_scan_and_only_new_content_is_parsed(tmp_path: Path) -> None:
    old = b"def kept():\n    return 1\n"
    sent = [_Sent("z.py", b"def new():\n    return 2\n"), _Sent("bin.py", b"x = 1\0\0"),
            _Sent("a.py", old), _Sent("node_modules/x/i.js", b"1")]
    analysis = read_source(load_config(tmp_path), PushedContent(
        sent, unchanged={"a.py": hashlib.sha256(old).hexdigest()}))
    assert [f.path for f in analysis.files] == ["a.py", "z.py"]  # in path order, as a scan lists them
    assert {s.path: s.reason for s in analysis.skipped} == {"bin.py": "binary",
                                                           "node_modules/x/i.js": "vendored or generated"}
    assert (analysis.parsed, sorted(analysis.facts), sorted(analysis.texts)) == (1, ["z.py"], ["z.py"])
    assert [s.name for s in analysis.facts["z.py"].symbols] == ["new"]


def test_a_checkout_and_the_same_files_pushed_give_the_same_facts(
        make_repo: Callable[..., Path], tmp_path: Path) -> None:
    files = {"pkg/a.py": "import os\n\nclass A:\n    def run(self):\n        return os.sep\n",
             "pkg/b.py": "from pkg.a import A\n\ndef main():\n    return A().run()\n"}
    root = make_repo(files)
    config = load_config(root, overrides={"out_dir": str(tmp_path / "out")})
    on_disk = read_source(config, Checkout(save_cache=False))
    pushed = read_source(config, PushedContent([_Sent(p, t.encode()) for p, t in files.items()]))
    assert on_disk.files == pushed.files
    assert on_disk.facts == pushed.facts
    only_b = read_source(config, Checkout(select=lambda path: path.endswith("b.py"), save_cache=False))
    assert [f.path for f in only_b.files] == ["pkg/b.py"]


def test_a_pushed_header_is_read_as_a_checkout_reads_it(
        make_repo: Callable[..., Path], tmp_path: Path) -> None:
    """`.h` is C++ in a C++ repository (the majority of the other files) and C++ when it holds C++ syntax,
    whether the files are on disk or pushed."""
    files = {"src/a.cpp": "#include \"a.h\"\nint twice(int x) { return 2 * x; }\n",
             "src/b.cpp": "int thrice(int x) { return 3 * x; }\n",
             "include/a.h": "int twice(int x);\n",
             "include/shape.h": "namespace geo {\nclass Shape {\n public:\n  virtual ~Shape();\n};\n}\n"}
    root = make_repo(files)
    config = load_config(root, overrides={"out_dir": str(tmp_path / "out")})
    on_disk = read_source(config, Checkout(save_cache=False))
    pushed = read_source(config, PushedContent([_Sent(p, t.encode()) for p, t in files.items()]))
    assert {f.path: f.language for f in pushed.files} == {f.path: f.language for f in on_disk.files}
    assert {f.path: f.language for f in pushed.files if f.path.endswith(".h")} == {
        "include/a.h": "cpp", "include/shape.h": "cpp"}
    alone = read_source(config, PushedContent([_Sent("include/shape.h", files["include/shape.h"].encode())]))
    assert [f.language for f in alone.files] == ["cpp"]  # by its syntax, with no other file to count
