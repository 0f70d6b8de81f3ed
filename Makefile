# Two commands for a fresh machine with Python >= 3.11 and pip:
#   make demo   set up .venv and run the built-in example project offline (no API key, no network)
#   make test   set up .venv with the dev tools and run ruff, mypy, the layer contract and pytest
#               (every core; the tests marked slow run with `make test-slow`)
PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
PIP := $(BIN)/python -m pip install --quiet --disable-pip-version-check
DEMO_DIR ?= build/demo

.PHONY: demo test test-slow lint typecheck layers format projects clean

$(BIN)/python:
	@$(PYTHON) -c 'import sys; sys.exit(0 if sys.version_info >= (3, 11) else "meta-evaluator needs Python >= 3.11; set PYTHON=python3.11 (or newer)")'
	$(PYTHON) -m venv $(VENV)

$(VENV)/.installed: pyproject.toml | $(BIN)/python
	$(PIP) -e .
	@touch $@

$(VENV)/.installed-dev: pyproject.toml | $(BIN)/python
	$(PIP) -e '.[dev]'
	@touch $@ $(VENV)/.installed

demo: $(VENV)/.installed
	rm -rf $(DEMO_DIR) $(DEMO_DIR)-pairwise $(DEMO_DIR)-fairness $(DEMO_DIR)-stereotype
	$(BIN)/meta-evaluator init $(DEMO_DIR) --example refusal
	$(BIN)/meta-evaluator run $(DEMO_DIR)
	$(BIN)/meta-evaluator score $(DEMO_DIR)
	$(BIN)/meta-evaluator report $(DEMO_DIR)
	@for example in pairwise fairness stereotype; do \
		$(BIN)/meta-evaluator init $(DEMO_DIR)-$$example --example $$example >/dev/null && \
		$(BIN)/meta-evaluator run $(DEMO_DIR)-$$example && \
		$(BIN)/meta-evaluator score $(DEMO_DIR)-$$example && \
		$(BIN)/meta-evaluator report $(DEMO_DIR)-$$example || exit 1; \
	done
	@echo "Demo projects written to $(DEMO_DIR) and $(DEMO_DIR)-{pairwise,fairness,stereotype};"
	@echo "open $(DEMO_DIR)/reports/report.html in a browser"

lint: $(VENV)/.installed-dev
	$(BIN)/ruff check --no-cache .
	$(BIN)/ruff format --no-cache --check .

typecheck: $(VENV)/.installed-dev
	$(BIN)/mypy

# The layer contract in pyproject.toml ([tool.importlinter]; docs/architecture.md).
layers: $(VENV)/.installed-dev
	$(BIN)/lint-imports --no-cache

# The browser test (tests/annotate/test_browser.py) needs Debian's chromium: install it when we
# are root with apt-get; otherwise that test is skipped, saying why.
test: lint typecheck layers
	@command -v chromium >/dev/null || { [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null && \
		(DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1 || \
		(apt-get update -q >/dev/null 2>&1 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q chromium >/dev/null 2>&1)) || \
		echo "chromium not installed: the browser test will be skipped"; }
	$(BIN)/python -m pytest -n auto --maxprocesses=4 --dist loadfile

# The tests marked slow (minutes each), left out of `make test`.
test-slow: $(VENV)/.installed-dev
	$(BIN)/python -m pytest -n auto --maxprocesses=4 --dist loadfile -m slow

# Regenerate the example project folders kept under version control in projects/.
projects: $(VENV)/.installed
	@for example in refusal pairwise fairness stereotype; do \
		rm -rf projects/$$example && \
		$(BIN)/meta-evaluator init projects/$$example --example $$example >/dev/null && \
		$(BIN)/meta-evaluator run projects/$$example && \
		$(BIN)/meta-evaluator score projects/$$example || exit 1; \
	done

format: $(VENV)/.installed-dev
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

clean:
	rm -rf $(VENV) build .pytest_cache .ruff_cache .mypy_cache .hypothesis
