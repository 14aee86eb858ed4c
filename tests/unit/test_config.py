from __future__ import annotations

from pathlib import Path

import pytest

from sourcebook.config import load_config
from sourcebook.errors import ConfigError


def test_defaults_put_output_under_dot_sourcebook(tmp_path: Path) -> None:
    config = load_config(tmp_path, env={})
    assert config.out_dir == tmp_path.resolve() / ".sourcebook"
    assert config.docs_dir == config.out_dir / "docs"
    assert config.max_file_bytes == 1_000_000
    assert not config.llm.configured


def test_file_env_and_overrides_layer_in_order(tmp_path: Path) -> None:
    (tmp_path / "sourcebook.toml").write_text(
        'max_file_bytes = 10\nexclude = ["docs/**"]\n[llm]\nmodel = "from-file"\n', encoding="utf-8")
    config = load_config(tmp_path, overrides={"max_file_bytes": 20},
                         env={"SOURCEBOOK_LLM_MODEL": "from-env", "OPENAI_API_KEY": "k"})
    assert config.max_file_bytes == 20
    assert config.exclude == ("docs/**",)
    assert config.llm.model == "from-env"
    assert config.llm.api_key == "k"


def test_every_problem_is_reported_at_once(tmp_path: Path) -> None:
    (tmp_path / "sourcebook.toml").write_text(
        'bogus = 1\nmax_file_bytes = "lots"\n', encoding="utf-8")
    user = tmp_path / "xdg" / "sourcebook"
    user.mkdir(parents=True)
    (user / "config.toml").write_text('[llm]\nmode = "telepathy"\n', encoding="utf-8")
    with pytest.raises(ConfigError) as info:
        load_config(tmp_path, env={"XDG_CONFIG_HOME": str(tmp_path / "xdg")})
    text = str(info.value)
    assert "bogus" in text
    assert "max_file_bytes" in text
    assert "telepathy" in text
