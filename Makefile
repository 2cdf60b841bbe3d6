# Set-up and everyday commands. `make demo` and `make test` install first.
PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.abeq-installed
# llama.cpp is compiled from source on the first install (~14 min on 2 cores; pip caches the
# wheel afterwards). Skip the parts abeq does not use.
LLAMA_CMAKE_ARGS := -DLLAVA_BUILD=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF \
                    -DLLAMA_BUILD_TOOLS=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_CURL=OFF
PORT ?= 8501
# Test workers (pytest-xdist). Most tests wait on servers, subprocesses and the browser, so three
# share 2 cores well; `--dist loadgroup` keeps the browser tests on one worker (one Chromium).
# TEST_WORKERS=0 runs in this process.
# `make test` runs the embedded-model tests after the rest, on two workers of their own: llama.cpp
# takes the usable cores less one (abeq.models.local.threads), so on 2 cores each worker's model runs
# on one core — the main job's browser test on one, the other embedded-model tests on the other
# (that worker lowers its priority: the main job is the long pole; tests/conftest.py).
# (Measured on a fresh clone by `bash .ci/run`, 2026-12-06: the rest 12 m 40 s on three workers, then the
# embedded-model tests 7 m 02 s on two, the main job's browser test 391 s of it; 22 m 39 s with install
# and lint. Over the 15-minute budget: see the closing notes. Beside the three busy workers instead,
# the main job's browser run had not finished after 9 minutes.)
TEST_WORKERS ?= 3
PYTEST := $(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup

.PHONY: install test test-fast lint docs demo bench browser clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade "pip==25.3"
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 $(PY) -m pip install -q -e ".[local,test]"
	touch $(STAMP)

## lint and format check, then every test: unit, integration over loopback HTTP, the real embedded
## model, and the browser
test: install lint
	$(PYTEST) -m "not slow" --durations=15
	$(PY) -m pytest -m slow -n 2 --dist loadgroup --durations=0

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/mkdocs build --strict --quiet --site-dir build/site

## the documentation site (docs/, mkdocs.yml) into site/; a broken link or reference fails it
docs: install
	$(VENV)/bin/mkdocs build --strict

## the quick loop: no embedded model, no browser, none of the tests that start several abeq processes at
## once (marked multiprocess: 100-310 s each on 2 loaded cores; `make test` runs them)
test-fast: install
	$(PYTEST) -m "not slow and not e2e and not multiprocess"

## the review desk on the bundled example with the embedded model, on http://127.0.0.1:$(PORT)
demo: install
	$(VENV)/bin/abeq app --port $(PORT)

bench: install
	$(PY) bench/run_all.py

## Debian's Chromium for the end-to-end tests (needs root)
browser:
	command -v chromium >/dev/null || (apt-get update && apt-get install -y chromium)

clean:
	rm -rf $(VENV) build site *.egg-info .pytest_cache
