# Two commands for a new user: `make demo` and `make test`. Everything installs into .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test lint docs bench floors clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,data,mo,fed,dist,fast,mapie]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/manytask demo

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

test: lint docs
	MPLBACKEND=Agg $(BIN)/python -m pytest

# The documentation site in docs/_build/html: Sphinx + numpydoc + PyData theme. Warnings are
# errors. Always a clean build (under a minute): an incremental one would not repeat the
# warnings of pages it skips, and would keep API pages of names no longer public.
DOCS_STAMP := $(VENV)/.docs-installed

$(DOCS_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[docs]"
	touch $(DOCS_STAMP)

docs: $(DOCS_STAMP)
	rm -rf docs/_build docs/api/generated
	$(BIN)/sphinx-build -b html -W --keep-going -q docs docs/_build/html
	@echo "docs: open docs/_build/html/index.html"

# One-off check of the dependency floors (not part of `make test`): the whole suite in a
# separate environment with every direct dependency at its lowest allowed version
# (uv's --resolution lowest-direct). See README, "Dependency floors".
FLOORS_VENV ?= /tmp/manytask-floors

floors:
	rm -rf $(FLOORS_VENV)
	$(PYTHON) -m venv $(FLOORS_VENV)
	$(FLOORS_VENV)/bin/python -m pip install --quiet uv
	$(FLOORS_VENV)/bin/uv pip install --quiet --python $(FLOORS_VENV)/bin/python \
		--resolution lowest-direct -e ".[dev,data,mo,fed,dist,fast]"
	$(FLOORS_VENV)/bin/uv pip list --python $(FLOORS_VENV)/bin/python
	MPLBACKEND=Agg $(FLOORS_VENV)/bin/python -m pytest

BENCH_STAMP := $(VENV)/.bench-installed

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python benchmarks/run_all.py

clean:
	rm -rf $(VENV) manytask-report .pytest_cache docs/_build docs/api/generated docs/api/manytask.*.rst
