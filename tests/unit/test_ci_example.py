"""The GitHub Actions example (examples/ci/github-actions.yml) cannot rot: it parses, it does what the README
says (build on push, publish to a bucket, deploy Pages, --check on pull requests), and every sourcebook
subcommand, flag and SOURCEBOOK_* variable it uses exists in the real CLI (`--help` of each subcommand)."""

from __future__ import annotations

import functools
import os
import re
import shlex
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "ci" / "github-actions.yml"
_OPERATORS = frozenset({";", "&&", "||", "|", "&", "(", ")", "<", ">", ">>"})


def load() -> dict[str, Any]:
    data = yaml.safe_load(EXAMPLE.read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    if True in data:  # YAML 1.1 reads the key `on` as the boolean true
        data["on"] = data.pop(True)
    return data


def steps(data: dict[str, Any]) -> Iterator[tuple[str, dict[str, Any]]]:
    for name, job in data["jobs"].items():
        for step in job.get("steps", []):
            yield name, step


def sourcebook_calls(script: str) -> list[tuple[str, list[str]]]:
    """(subcommand, [--flags]) of every `sourcebook` command in a shell script (continuations joined)."""
    calls = []
    for line in script.replace("\\\n", " ").splitlines():
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        lexer.commenters = "#"
        tokens = list(lexer)
        for i, token in enumerate(tokens):
            if token != "sourcebook" and not token.endswith("/sourcebook"):
                continue
            if i + 1 >= len(tokens) or tokens[i + 1] in _OPERATORS:
                calls.append(("", []))
                continue
            sub, flags = tokens[i + 1], []
            for arg in tokens[i + 2:]:
                if arg in _OPERATORS:
                    break
                if arg.startswith("--"):
                    flags.append(arg.split("=", 1)[0])
            calls.append((sub, flags))
    return calls


@functools.cache
def cli_options(sub: str) -> frozenset[str]:
    """The options `sourcebook SUB --help` lists (the real CLI of this checkout)."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "COLUMNS": "200"}
    done = subprocess.run([sys.executable, "-m", "sourcebook.cli", sub, "--help"], capture_output=True,
                          text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, f"`sourcebook {sub} --help` failed: {done.stderr.strip()[-300:]}"
    return frozenset(re.findall(r"(?<![\w-])(--[a-z][a-z0-9-]*)", done.stdout))


def test_the_example_parses_and_does_what_the_readme_says() -> None:
    data = load()
    assert {"push", "pull_request"} <= set(data["on"])
    assert str(data["env"]["SOURCEBOOK_INDEX_URI"]).startswith("s3://")  # index + cache go to a bucket
    jobs = data["jobs"]
    runs = {name: " ".join(str(s.get("run", "")) for s in job.get("steps", [])) for name, job in jobs.items()}
    uses = {name: [str(s.get("uses", "")) for s in job.get("steps", [])] for name, job in jobs.items()}
    build = next(name for name, job in jobs.items() if "push" in str(job.get("if", "")))
    assert "sourcebook build" in runs[build]
    assert "--check" not in runs[build]
    assert any(u.startswith("actions/upload-pages-artifact@") for u in uses[build])
    deploy = next(name for name, used in uses.items()
                  if any(u.startswith("actions/deploy-pages@") for u in used))
    assert jobs[deploy]["needs"] == build
    assert jobs[deploy]["permissions"] == {"pages": "write", "id-token": "write"}
    check = next(name for name, text in runs.items() if "--check" in text)
    assert "pull_request" in jobs[check]["if"]
    assert "examples/ci/github-actions.yml" in (ROOT / "README.md").read_text(encoding="utf-8")


def test_every_sourcebook_command_and_flag_exists() -> None:
    calls = [call for _, step in steps(load()) for call in sourcebook_calls(str(step.get("run", "")))]
    assert len(calls) >= 4
    for sub, flags in calls:
        assert sub, "a bare `sourcebook` with no subcommand"
        missing = set(flags) - cli_options(sub)
        assert not missing, f"`sourcebook {sub}` has no option {sorted(missing)} (`sourcebook {sub} --help`)"


def test_every_sourcebook_variable_is_read_by_the_code() -> None:
    names = set(re.findall(r"\bSOURCEBOOK_[A-Z0-9_]+", EXAMPLE.read_text(encoding="utf-8")))
    assert "SOURCEBOOK_INDEX_URI" in names
    code = "\n".join(p.read_text(encoding="utf-8") for folder in ("sourcebook", "generator", "answer")
                     for p in (ROOT / folder).rglob("*.py"))
    unknown = {name for name in names if f'"{name}"' not in code}
    assert not unknown, f"variables no code reads: {sorted(unknown)}"


@pytest.mark.parametrize(("script", "expected"), [
    ("sourcebook build . --check || echo stale", [("build", ["--check"])]),
    ('x=0\nsourcebook build . --max-cost=2 \\\n  --no-such-flag "$URI"; sourcebook ask "q --not-a-flag"',
     [("build", ["--max-cost", "--no-such-flag"]), ("ask", [])]),
    (".venv/bin/sourcebook index . --prune # a comment --ignored", [("index", ["--prune"])]),
])
def test_the_command_reader_finds_what_a_shell_would_run(script: str, expected: list[Any]) -> None:
    assert sourcebook_calls(script) == expected


def test_a_made_up_flag_is_caught() -> None:
    (sub, flags), = sourcebook_calls("sourcebook build . --no-such-flag")
    assert set(flags) - cli_options(sub) == {"--no-such-flag"}
