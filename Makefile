# The two commands of the README quick start: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -e ".[test]"
	touch $(STAMP)

## Regenerate the bundled invented release from its invented MRCONSO.RRF and verify both files.
demo: $(STAMP)
	rm -rf demo-out
	$(BIN)/tempmedbench-regenerate-synonyms fixtures/tempmedbench-mini \
		--mrconso fixtures/umls/MRCONSO.RRF --out demo-out

## Run the test suite (offline; network tests talk to 127.0.0.1 only).
test: $(STAMP)
	$(BIN)/python -m pytest

## Benchmarks print numbers; they are not tests.
bench: $(STAMP)
	$(BIN)/python bench/bench_mrconso.py
	$(BIN)/python bench/bench_gps.py
	$(BIN)/python bench/bench_rest.py

clean:
	rm -rf $(VENV) demo-out bench/out .pytest_cache .mypy_cache .ruff_cache
