# The two commands of the README quick start: `make demo` and `make test`.
PYTHON ?= python3
VENV   ?= .venv
BIN    := $(VENV)/bin
STAMP  := $(VENV)/.installed
# Every Python the package supports (pyproject.toml: requires-python >= 3.11, one classifier
# each); `make test-pythons` runs the suite on each one this machine has.
PYTHONS ?= 3.11 3.12 3.13

.PHONY: demo test test-pythons package bench clean

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

## The whole suite on every supported Python this machine has, one venv each in .venvs/
## (found as pythonX.Y on PATH, else under ~/.pyenv/versions/: the first that runs, as a pyenv
## shim of a version not selected does not); one that is missing is skipped with a line.
test-pythons: $(STAMP)
	@main=$$($(BIN)/python -c 'import sys; print("%d.%d" % sys.version_info[:2])'); \
	for v in $(PYTHONS); do \
	  if [ "$$v" = "$$main" ]; then echo "Python $$v: the whole suite ran in make test"; continue; fi; \
	  py=; for c in $$(command -v python$$v 2>/dev/null) \
	                $$(ls -d $$HOME/.pyenv/versions/$$v*/bin/python 2>/dev/null | sort -V | tail -n 1); do \
	    if $$c -c 'import sys' >/dev/null 2>&1; then py=$$c; break; fi; \
	  done; \
	  if [ -z "$$py" ]; then echo "Python $$v: not on this machine, skipped"; continue; fi; \
	  venv=.venvs/py$$v; \
	  if [ ! -f $$venv/.installed ] || [ pyproject.toml -nt $$venv/.installed ]; then \
	    $$py -m venv $$venv && $$venv/bin/python -m pip install --quiet --upgrade pip && \
	    $$venv/bin/python -m pip install --quiet -e ".[test]" && touch $$venv/.installed || exit 1; \
	  fi; \
	  echo "Python $$v ($$($$venv/bin/python -c 'import platform; print(platform.python_version())')): the whole suite"; \
	  $$venv/bin/python -m pytest -q -p no:cacheprovider || exit 1; \
	done

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
	# The installed demo release's own launcher, run by path as a user runs a release's.
	cd build/package && DEMO="$$(venv/bin/python -c 'from tempmedbench_synonyms.demo import \
		demo_data as d; print(d().release, d().mrconso, sep="\n")')" && \
		venv/bin/python "$$(echo "$$DEMO" | head -1)/synonym_regeneration/regenerate_synonyms.py" \
		--mrconso "$$(echo "$$DEMO" | tail -1)" --out demo-out-launcher -q
	# The sdist must build a complete wheel on its own (pip builds it, demo data included).
	$(PYTHON) -m venv build/package/venv-sdist
	build/package/venv-sdist/bin/python -m pip install --quiet build/package/dist/*.tar.gz
	cd build/package && venv-sdist/bin/tempmedbench-regenerate-synonyms --version
	cd build/package && venv-sdist/bin/tempmedbench-synonyms demo --out demo-out-sdist -q

## Benchmarks print numbers; they are not tests.
bench: $(STAMP)
	$(BIN)/python bench/bench_mrconso.py
	$(BIN)/python bench/bench_local_index.py
	$(BIN)/python bench/bench_gps.py
	$(BIN)/python bench/bench_rest.py
	$(BIN)/python bench/bench_lookups.py
	$(BIN)/python bench/bench_uts_hostile.py
	$(BIN)/python bench/bench_ctrlc.py
	$(BIN)/python bench/bench_rate_shared.py
	$(BIN)/python bench/bench_api.py
	$(BIN)/python bench/bench_plugin_import.py
	$(BIN)/python bench/bench_fake.py
	$(BIN)/python bench/bench_run_shape.py
	$(BIN)/python bench/bench_peers.py

clean:
	rm -rf $(VENV) .venvs demo-out build bench/out .pytest_cache .mypy_cache .ruff_cache
