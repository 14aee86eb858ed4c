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

setup: $(BIN)/sourcebook

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
