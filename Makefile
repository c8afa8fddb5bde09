# Two commands for a new user: `make demo` and `make test`. Everything installs into .venv.
PYTHON ?= python3
VENV   := .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test test-portable lint docs bench floors dist check-dist clean

$(BIN)/python:
	$(PYTHON) -m venv $(VENV)

$(STAMP): $(BIN)/python pyproject.toml
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[dev,data,mo,fed,fed-sim,dist,fast,optuna,mapie]"
	touch $(STAMP)

demo: $(STAMP)
	$(BIN)/manytask demo

lint: $(STAMP)
	$(BIN)/ruff check src tests benchmarks
	$(BIN)/ruff format --check src tests benchmarks

test: lint docs
	MPLBACKEND=Agg $(BIN)/python -m pytest

# The suite again in the numeric environment of another CPU of this kind (CI runs both):
# NumPy's SIMD dispatch lowered to its baseline (NumPy 2.4 accepts these names whatever the
# CPU has), OpenBLAS's Sandybridge kernels, numba compiled for a generic x86-64 and BLAS on
# one thread. A test that holds only for one machine's rounding fails here.
PORTABLE_ENV := NPY_DISABLE_CPU_FEATURES="X86_V3 X86_V4 AVX512_ICL AVX512_SPR" \
	OPENBLAS_CORETYPE=Sandybridge NUMBA_CPU_NAME=generic \
	OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 MKL_NUM_THREADS=1

test-portable: $(STAMP)
	$(PORTABLE_ENV) MPLBACKEND=Agg $(BIN)/python -m pytest

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
		--resolution lowest-direct -e ".[dev,data,mo,fed,fed-sim,dist,fast,optuna]"
	$(FLOORS_VENV)/bin/uv pip list --python $(FLOORS_VENV)/bin/python
	MPLBACKEND=Agg $(FLOORS_VENV)/bin/python -m pytest

BENCH_STAMP := $(VENV)/.bench-installed

$(BENCH_STAMP): $(STAMP)
	$(BIN)/python -m pip install --quiet -e ".[bench]"
	touch $(BENCH_STAMP)

bench: $(BENCH_STAMP)
	$(BIN)/python benchmarks/run_all.py

# An sdist and a wheel in dist/ (python -m build), then the wheel as a user gets it: installed
# with its dependencies into a fresh virtual environment outside the checkout, which runs the
# demo and a quick reproduction that reads the package data (the paper's table, whose
# mcycle cell the check looks for).
# The quantile data of the reproduction: ../shared/data beside the checkout unless set.
MANYTASK_DATA ?= $(abspath ..)/shared/data
DIST_CHECK_DIR ?= /tmp/manytask-dist-check

dist: $(STAMP)
	rm -rf dist
	$(BIN)/python -m build --outdir dist .

check-dist: dist
	rm -rf $(DIST_CHECK_DIR)
	$(PYTHON) -m venv $(DIST_CHECK_DIR)/venv
	$(DIST_CHECK_DIR)/venv/bin/python -m pip install --quiet dist/manytask-*.whl
	cd $(DIST_CHECK_DIR) && MPLBACKEND=Agg venv/bin/manytask demo --quiet --out report
	test -s $(DIST_CHECK_DIR)/report/index.html
	cd $(DIST_CHECK_DIR) && MANYTASK_DATA=$(MANYTASK_DATA) MPLBACKEND=Agg \
		venv/bin/manytask reproduce itl-table1 --quick --datasets mcycle --quiet --out table1
	grep -q "65 ± 9" $(DIST_CHECK_DIR)/table1/results.md  # the paper's ∞-QR mcycle cell
	rm -rf $(DIST_CHECK_DIR)
	@echo "check-dist: the wheel installs and runs outside the checkout"

clean:
	rm -rf $(VENV) dist manytask-report .pytest_cache docs/_build docs/api/generated docs/api/manytask.*.rst
