"""A fresh CI runner with the shared build cache: the first build, then a new checkout's, on one index URI.

    .venv/bin/python bench/cache_bench.py [--repo /work/eval-repos/flask] [--store path|s3] [--site]

Runner A builds a copy of REPO with the scripted LLM (tests/support/fake_llm.py) into an index URI: a temp
folder, or with `--store s3` a bucket on a moto S3 server on 127.0.0.1 (tests/support/object_store.py). Runner
B builds a second copy (a new checkout: another folder, an empty output folder, another local key) against the
same URI. Each build is `sourcebook build` in its own interpreter. Prints per runner: wall seconds, LLM calls,
pages written and unchanged, the stage times the CLI reports; and the index bytes for a folder store. The
checkout is never written to. Asserts nothing.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.fake_llm import FakeLLM, page_writer_responder  # noqa: E402


@contextlib.contextmanager
def _store(kind: str, tmp: Path) -> Iterator[tuple[str, dict[str, str]]]:
    """(index URI, environment for the build processes)."""
    if kind == "path":
        yield str(tmp / "shared-index"), {}
        return
    from tests.support.object_store import AWS_KEYS, MotoS3

    with MotoS3() as moto:
        env = dict.fromkeys(AWS_KEYS, "") | moto.env  # "" = removed below: only moto's variables
        yield moto.bucket() + "/wiki", env


def _build(root: Path, uri: str, env: dict[str, str], site: bool) -> tuple[float, str]:
    cmd = [sys.executable, "-m", "sourcebook.cli", "build", str(root), "--index-uri", uri]
    if not site:
        cmd.append("--no-site")
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=3600, check=False)
    took = time.perf_counter() - started
    out = " ".join((done.stdout + done.stderr).split())
    if done.returncode:
        raise SystemExit(f"build failed ({done.returncode}): {out[-800:]}")
    return took, out


def _bytes(uri: str) -> str:
    if "://" in uri:
        return "n/a (bucket)"
    return f"{sum(p.stat().st_size for p in Path(uri).rglob('*') if p.is_file()):,}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repo", default="/work/eval-repos/flask")
    parser.add_argument("--store", choices=("path", "s3"), default="path")
    parser.add_argument("--site", action="store_true", help="also run mkdocs (a real runner does)")
    args = parser.parse_args()
    repo = Path(args.repo).resolve()
    with tempfile.TemporaryDirectory(prefix="cache-bench-") as name, FakeLLM(page_writer_responder) as llm:
        tmp = Path(name)
        with _store(args.store, tmp) as (uri, store_env):
            print(f"{repo.name}: index at {args.store} ({uri}), scripted LLM at {llm.base_url}")
            for runner in ("a", "b"):
                root = tmp / runner / repo.name  # same folder name: the site name comes from it
                shutil.copytree(repo, root, symlinks=True, ignore=shutil.ignore_patterns(".sourcebook"))
                env = {**os.environ, **store_env, "PYTHONPATH": str(ROOT),
                       "XDG_STATE_HOME": str(tmp / f"state-{runner}"),  # a fresh runner's own local key
                       "SOURCEBOOK_LLM_BASE_URL": llm.base_url, "SOURCEBOOK_LLM_MODEL": "fake",
                       "SOURCEBOOK_LLM_API_KEY": "x"}
                env = {k: v for k, v in env.items() if v != ""}
                before = llm.calls
                took, out = _build(root, uri, env, args.site)
                pages = re.search(r"Pages (\d+) written, (\d+) unchanged", out)
                written, unchanged = pages.groups() if pages else ("?", "?")
                stages = re.search(r"Time [\d.]+s \(([^)]*)\)", out)
                print(f"runner {runner}: {took:6.1f} s wall, {llm.calls - before:4d} LLM calls, "
                      f"pages {written} written / {unchanged} unchanged; "
                      f"stages: {stages.group(1) if stages else '?'}")
            print(f"index bytes: {_bytes(uri)}")


if __name__ == "__main__":
    main()
