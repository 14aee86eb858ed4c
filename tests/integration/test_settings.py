"""One configuration channel (sourcebook/settings.py): the environment read in one module through one table,
every bad variable reported at once, CLI flags passed down as arguments (never written to os.environ), and
server workers built from one serialized settings object."""

from __future__ import annotations

import ast
import json
import os
import pickle
import re
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from sourcebook.config import load_config
from sourcebook.errors import ConfigError
from sourcebook.settings import ENV_VARS, ServeSettings, Settings
from tests.support.servers import sourcebook_serve

ROOT = Path(__file__).resolve().parents[2]
SETTINGS_MODULE = ROOT / "sourcebook" / "settings.py"
_NAME = re.compile(r"SOURCEBOOK_[A-Z0-9_]+")

# os.environ outside settings.py: none of these is a sourcebook setting. file -> (uses, why)
ENVIRON_ALLOWED = {
    # the platform's folders (HOME, XDG_*), read where an `env` parameter defaults to this process's
    "sourcebook/config.py": (1, "XDG_STATE_HOME / HOME for the detached state folder"),
    "sourcebook/data_home.py": (2, "XDG_DATA_HOME / HOME"),
    "sourcebook/local_key.py": (1, "XDG_STATE_HOME / HOME"),
    "generator/index/static_model.py": (1, "XDG_CACHE_HOME"),
    # the object stores' own standard environment (AWS_*), and the variables an orgs file names
    "generator/index/store.py": (2, "AWS_ENDPOINT_URL*; LANCE_LOG, a switch for LanceDB (setdefault)"),
    "answer/serving/orgs.py": (1, "the variables an organisation's storage_env names"),
    # switches for third-party libraries, set with setdefault (a user's own value is kept)
    "generator/index/reader.py": (1, "LANCE_LOG"),
    "generator/index/embed.py": (1, "TOKENIZERS_PARALLELISM"),
    "answer/serving/mcp_server.py": (1, "NO_COLOR on the stdio transport"),
    # the environment handed to a child process (the site engine), with PYTHONPATH extended
    "generator/site/publish.py": (2, "the site engine's environment"),
}


def _sources() -> dict[str, ast.Module]:
    found = {}
    for package in ("sourcebook", "generator", "answer"):
        for path in sorted((ROOT / package).rglob("*.py")):
            found[path.relative_to(ROOT).as_posix()] = ast.parse(path.read_text(encoding="utf-8"))
    return found


def _environ_uses(tree: ast.Module) -> int:
    """os.environ, os.getenv, os.putenv, os.unsetenv: every place a module reaches the environment."""
    return sum(1 for node in ast.walk(tree)
               if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
               and node.value.id == "os" and node.attr in {"environ", "getenv", "putenv", "unsetenv"})


def _names_used(tree: ast.Module) -> set[str]:
    """The SOURCEBOOK_* variable names a module spells as a whole string (a key, or a message naming one)."""
    return {node.value for node in ast.walk(tree)
            if isinstance(node, ast.Constant) and isinstance(node.value, str) and _NAME.fullmatch(node.value)}


def _names_read(tree: ast.Module) -> set[str]:
    """The SOURCEBOOK_* names a module looks up in a mapping: `env.get("…")`, `env["…"]`, `getenv("…")`,
    click's `envvar="…"`."""
    def named(node: ast.AST | None) -> str | None:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and _NAME.fullmatch(node.value):
            return node.value
        return None

    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Subscript):
            found.add(named(node.slice))
        elif isinstance(node, ast.Call):
            lookups = {"get", "getenv", "pop", "setdefault"}
            if isinstance(node.func, ast.Attribute) and node.func.attr in lookups:
                found.add(named(node.args[0]) if node.args else None)
            found.update(named(k.value) for k in node.keywords if k.arg == "envvar")
    return {name for name in found if name}


def test_the_environment_is_read_in_one_module() -> None:
    sources = _sources()
    table = {var.name for var in ENV_VARS}
    strays = {path: sorted(_names_read(tree)) for path, tree in sources.items()
              if path != "sourcebook/settings.py" and _names_read(tree)}
    assert strays == {}, "a sourcebook variable read outside sourcebook/settings.py: add it to ENV_VARS there"
    unknown = {path: sorted(_names_used(tree) - table) for path, tree in sources.items()
               if _names_used(tree) - table}
    assert unknown == {}, "a sourcebook variable missing from sourcebook/settings.py's ENV_VARS"
    uses = Counter({path: _environ_uses(tree) for path, tree in sources.items()
                    if path != "sourcebook/settings.py" and _environ_uses(tree)})
    over = {path: n for path, n in uses.items() if n > ENVIRON_ALLOWED.get(path, (0, ""))[0]}
    assert over == {}, "os.environ reached outside sourcebook/settings.py: read a setting through it"
    assert _environ_uses(sources["sourcebook/settings.py"]) >= 1


def test_the_check_finds_a_stray_read() -> None:
    """The checks above fail on the reads they are for (they are not vacuous)."""
    stray = ast.parse('import os\nA = os.environ.get("SOURCEBOOK_NEW_KNOB")\nB = env["SOURCEBOOK_X"]\n'
                      '@click.option("--t", envvar="SOURCEBOOK_TOKEN")\ndef f(): pass\n')
    assert _names_read(stray) == {"SOURCEBOOK_NEW_KNOB", "SOURCEBOOK_X", "SOURCEBOOK_TOKEN"}
    assert _environ_uses(stray) == 1
    assert _names_read(ast.parse('raise E("set SOURCEBOOK_LLM_MODEL")')) == set()


def test_every_variable_the_docs_name_is_in_the_table() -> None:
    table = {var.name for var in ENV_VARS}
    documented: set[str] = set()
    for doc in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        documented |= set(_NAME.findall(doc.read_text(encoding="utf-8")))
    documented -= {"SOURCEBOOK_TEST_FIXTURES"}  # the test suite's own, read by tests/ only
    assert documented - table == set()
    assert len(table) == len(ENV_VARS)  # one row a variable
    settings_fields = set(Settings.model_fields)
    for var in ENV_VARS:
        assert var.config == (var.setting.split(".")[0] not in settings_fields), var


def test_the_table_fills_the_typed_settings() -> None:
    settings = Settings.from_env({
        "SOURCEBOOK_LLM_MODEL": "m", "OPENAI_BASE_URL": "http://b/v1", "SOURCEBOOK_LLM_BASE_URL": "http://a/v1",
        "SOURCEBOOK_EMBEDDER": "none", "SOURCEBOOK_INDEX_URI": "s3://bucket/x",
        "SOURCEBOOK_TRUST_REPO_CONFIG": "yes", "SOURCEBOOK_SITE_WORKERS": "3",
        "SOURCEBOOK_PARSE_WORKERS": "2",
        "SOURCEBOOK_SITE_ENGINE": " MkDocs ", "SOURCEBOOK_STALL_SECONDS": "1.5", "XDG_CONFIG_HOME": "/cfg",
    })
    # the first variable of a setting that is set wins: SOURCEBOOK_LLM_BASE_URL before OPENAI_BASE_URL
    assert settings.config == {"llm": {"model": "m", "base_url": "http://a/v1"},
                               "embed": {"provider": "none"},
                               "index_uri": "s3://bucket/x"}
    assert (settings.trust_repo_config, settings.site_workers, settings.parse_workers) == (True, 3, 2)
    assert (settings.site_engine, settings.stall_seconds) == ("mkdocs", 1.5)
    assert settings.user_config == "/cfg/sourcebook/config.toml"
    assert settings.index_uri == "s3://bucket/x"
    flagged = settings.with_flags(index_uri="/elsewhere", trust_repo_config=None)
    assert (flagged.index_uri, flagged.trust_repo_config) == ("/elsewhere", True)
    assert settings.index_uri == "s3://bucket/x"  # frozen: the flags make a new object
    with pytest.raises(ValueError, match="site_workers"):
        settings.with_flags(site_workers=0)  # a flag is validated as the variable is
    assert Settings.model_validate_json(flagged.model_dump_json()) == flagged


def test_every_bad_variable_is_reported_at_once(tmp_path: Path) -> None:
    bad = {"SOURCEBOOK_SITE_WORKERS": "0", "SOURCEBOOK_STALL_SECONDS": "soon",
           "SOURCEBOOK_SITE_ENGINE": "jekyll"}
    with pytest.raises(ConfigError) as info:
        Settings.from_env(bad)
    text = str(info.value)
    for name, value in bad.items():
        assert f"{name}={value!r}" in text
    # load_config adds them to the config's own problems: one error for all
    (tmp_path / "sourcebook.toml").write_text('max_file_bytes = "lots"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, env={**bad, "SOURCEBOOK_LLM_TIMEOUT": "forever"})
    text = str(info.value)
    assert all(name in text for name in bad)
    assert "max_file_bytes" in text
    assert "forever" in text
    # a deep reader with no caller to hand it the settings keeps its default for a bad value
    from sourcebook.settings import current

    assert current(bad).stall_seconds is None


def test_config_values_are_coerced_by_the_fields_declared_types(tmp_path: Path) -> None:
    config = load_config(tmp_path, env={"SOURCEBOOK_LLM_TIMEOUT": "7",
                                        "SOURCEBOOK_LLM_SYSTEM_IN_USER": "true",
                                        "SOURCEBOOK_LLM_SEED": "5", "SOURCEBOOK_ANN_MIN_ROWS": "10"},
                         overrides={"include": "a/**,b/**"})
    assert (config.llm.timeout_s, config.llm.system_in_user, config.llm.seed) == (7.0, True, 5)
    assert isinstance(config.llm.timeout_s, float)
    assert (config.ann_min_rows, config.include) == (10, ("a/**", "b/**"))


def test_settings_given_as_an_argument_beat_the_environment(tmp_path: Path) -> None:
    (tmp_path / "sourcebook.toml").write_text('[llm]\nmodel = "repo-model"\n', encoding="utf-8")
    env = {"SOURCEBOOK_LLM_MODEL": "env-model"}
    assert load_config(tmp_path, env=env).llm.model == "env-model"
    # the repository's choice of model stays out unless the user trusts it, whoever hands the settings
    untrusted = Settings.from_env({})
    assert load_config(tmp_path, env=env, settings=untrusted).llm.model is None
    trusted = untrusted.with_flags(trust_repo_config=True)
    assert load_config(tmp_path, env=env, settings=trusted).llm.model == "repo-model"


# -- the CLI writes no os.environ ----------------------------------------------------------------------------


FILES = {
    "sourcebook.toml": '[embed]\nprovider = "none"\n',
    "README.md": "# Demo\n\nA demo package.\n",
    "pkg/__init__.py": "",
    "pkg/core.py": '"""Core."""\n\n\ndef helper(value):\n    """Double a value."""\n    return value * 2\n',
}


@pytest.fixture
def built(make_repo: Any, tmp_path: Path) -> tuple[Path, Path]:
    """A repository and an index built elsewhere by `--index-uri` (through the CLI, in this process)."""
    repo = make_repo(FILES)
    index = tmp_path / "elsewhere" / "index"
    _no_environ_written(["--trust-repo-config", "build", str(repo), "--no-site", "--index-uri", str(index)])
    assert (index / "chunks.lance").is_dir() or any(index.iterdir())
    return repo, index


LIBRARY_SWITCHES = {"LANCE_LOG", "TOKENIZERS_PARALLELISM", "NO_COLOR"}


def _no_environ_written(args: list[str], *, expect: int = 0) -> Any:
    """Run the `sourcebook` group with `args` in this process; fail when os.environ changed."""
    from sourcebook.cli import cli

    before = dict(os.environ)
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    assert result.exit_code == expect, result.output
    after = dict(os.environ)
    # the libraries' own switches, set once with setdefault where LanceDB or a tokenizer is loaded (not by the
    # CLI, and never a sourcebook setting): the only names that may appear
    added = {k: v for k, v in after.items() if k not in before and k not in LIBRARY_SWITCHES}
    changed = {k: v for k, v in before.items() if after.get(k) != v}
    assert changed == {}, f"sourcebook {' '.join(args)} changed os.environ"
    assert added == {}, f"sourcebook {' '.join(args)} wrote os.environ"
    return result


class _Captured:
    """uvicorn's entry points replaced: what a serve command would have run, and nothing is served."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        import uvicorn
        from uvicorn.supervisors import Multiprocess

        self.configs: list[Any] = []
        self.apps: list[Any] = []
        monkeypatch.setattr(Multiprocess, "run", lambda supervisor: self.configs.append(supervisor.config))
        monkeypatch.setattr(uvicorn, "run", lambda app, **_kw: self.apps.append(app))


def test_no_command_writes_os_environ(built: tuple[Path, Path], tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    repo, index = built
    captured = _Captured(monkeypatch)
    monkeypatch.chdir(tmp_path)  # no repository around: --index-uri alone answers
    result = _no_environ_written(["ask", "what doubles a value?", "--index-uri", str(index), "--json"])
    assert "pkg/core.py" in result.output
    _no_environ_written(["--trust-repo-config", "search", "helper", "--path", str(repo),
                         "--index-uri", str(index)])
    _no_environ_written(["serve", "--index-uri", str(index), "--workers", "2", "--token", "t0ken-for-test"])
    _no_environ_written(["--trust-repo-config", "serve", str(repo)])
    orgs = tmp_path / "orgs.toml"
    orgs.write_text(f'[orgs.acme]\ntoken_sha256 = ["{"0" * 64}"]\nindex_root = "{tmp_path / "acme"}"\n',
                    encoding="utf-8")
    _no_environ_written(["serve", "--orgs", str(orgs), "--workers", "2"])
    assert len(captured.configs) == 2
    assert len(captured.apps) == 1


def test_a_serve_worker_builds_its_app_from_the_one_serialized_object(
        built: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """What uvicorn hands each worker it spawns (the pickled Config) carries the settings as one JSON text;
    the factory builds the app from it alone: the index URI and the token given as flags reach it with
    nothing in the environment."""
    from fastapi.testclient import TestClient

    _, index = built
    captured = _Captured(monkeypatch)
    monkeypatch.chdir(tmp_path)
    _no_environ_written(["serve", "--index-uri", str(index), "--workers", "2", "--token", "t0ken-for-test"])
    (config,) = captured.configs
    spawned = pickle.loads(pickle.dumps(config))  # as multiprocessing's spawn hands it to the worker
    (serialized,) = spawned.app.args
    serve = ServeSettings.model_validate_json(serialized)
    assert (serve.settings.index_uri, serve.token, serve.path) == (str(index), "t0ken-for-test", None)
    assert json.loads(serialized)["settings"]["config"] == {"index_uri": str(index)}
    monkeypatch.delenv("SOURCEBOOK_INDEX_URI", raising=False)
    monkeypatch.delenv("SOURCEBOOK_TOKEN", raising=False)
    spawned.load()  # what the worker does: the factory called with the serialized settings
    client = TestClient(spawned.loaded_app)
    assert client.get("/file", params={"path": "pkg/core.py"}).status_code == 401
    got = client.get("/file", params={"path": "pkg/core.py"},
                     headers={"Authorization": "Bearer t0ken-for-test"})
    assert got.status_code == 200
    assert got.json()["content"] == FILES["pkg/core.py"]


def test_real_workers_answer_from_an_index_named_only_by_a_flag(built: tuple[Path, Path],
                                                                tmp_path: Path) -> None:
    """`sourcebook serve --workers 2 --index-uri DIR` in a folder with no repository, with no SOURCEBOOK_*
    variable set: the spawned uvicorn workers can only know the index from the serialized settings."""
    _, index = built
    empty = tmp_path / "empty"
    empty.mkdir()
    with sourcebook_serve(None, args=("--index-uri", str(index), "--workers", "2"), cwd=empty) as url:
        for _ in range(4):  # more requests than workers: each worker answers from the same index
            query = urllib.parse.urlencode({"path": "pkg/core.py"})
            with urllib.request.urlopen(f"{url}/file?{query}", timeout=30) as resp:
                assert json.loads(resp.read())["content"] == FILES["pkg/core.py"]
