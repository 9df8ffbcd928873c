# The two commands of the README quick start: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed

.PHONY: demo test package bench clean

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

## Static checks, then the test suite with branch coverage (offline; network tests use 127.0.0.1).
test: $(STAMP)
	$(BIN)/ruff check src tests bench fixtures
	$(BIN)/ruff format --check src tests bench fixtures
	$(BIN)/mypy src
	# coverage run, not pytest --cov: it measures from the start, before pytest loads the
	# package's own pytest11 plugin (which imports half the package ahead of pytest-cov).
	$(BIN)/python -m coverage run -m pytest
	$(BIN)/python -m coverage report

## Build the wheel and sdist, install each in a fresh environment, run the installed demo.
package: $(STAMP)
	rm -rf build/package
	$(BIN)/python -m pip install --quiet build
	$(BIN)/python -m build --outdir build/package/dist . > build-package.log 2>&1 || (cat build-package.log; exit 1)
	rm -f build-package.log
	$(PYTHON) -m venv build/package/venv
	build/package/venv/bin/python -m pip install --quiet build/package/dist/*.whl
	build/package/venv/bin/tempmedbench-regenerate-synonyms --help > /dev/null
	build/package/venv/bin/python -m tempmedbench_synonyms --version
	cd build/package && venv/bin/tempmedbench-synonyms demo --out demo-out
	# The sdist must build a complete wheel on its own (pip builds it, demo data included).
	$(PYTHON) -m venv build/package/venv-sdist
	build/package/venv-sdist/bin/python -m pip install --quiet build/package/dist/*.tar.gz
	cd build/package && venv-sdist/bin/tempmedbench-regenerate-synonyms --version
	cd build/package && venv-sdist/bin/tempmedbench-synonyms demo --out demo-out-sdist -q

## Benchmarks print numbers; they are not tests.
bench: $(STAMP)
	$(BIN)/python bench/bench_mrconso.py
	$(BIN)/python bench/bench_gps.py
	$(BIN)/python bench/bench_rest.py
	$(BIN)/python bench/bench_uts_hostile.py
	$(BIN)/python bench/bench_rate_shared.py
	$(BIN)/python bench/bench_plugin_import.py

clean:
	rm -rf $(VENV) demo-out build bench/out .pytest_cache .mypy_cache .ruff_cache
