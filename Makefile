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
# share 2 cores well; `--dist loadgroup` keeps each xdist group on one worker (the wheel's tests on the
# one that builds it; see tests/conftest.py for the pytest pin that grouping needs). The browser tests
# are spread over the workers: each starts Chromium once. TEST_WORKERS=0 runs in this process.
# `make test` lints at the lowest priority beside the tests (it takes what CPU they leave: the end of
# each part, where one worker is done before the other), runs the first part, then the
# embedded-model tests on two workers of their own: llama.cpp takes the usable cores less
# one (abeq.models.local.threads), so on 2 cores each worker's model runs on one core — the main
# job's browser test on one, followed by the tests named in tests/conftest.py's BESIDE_THE_MAIN_JOB,
# the other embedded-model tests on the other (that worker lowers its priority: tests/conftest.py).
# Ungrouped, the main job's worker ran nothing else and the part took 292 s against 277 s.
# The tests' own `python -m abeq` and desk processes are forked from one that imported litellm, the
# store and Streamlit once (tests/zygote.py): an `abeq run` of the example then costs ~1 s of CPU, not
# ~7 (bench/bench_test_processes.py), and the first part took 1,082 busy core-seconds against 1,374
# (9 m 57 s against 11 m 48 s, one run each, 2026-12-06). In the embedded-model part a prompt's batches
# run on one thread (ABEQ_LOCAL_BATCH_THREADS=1): two model processes share the 2 cores there, and
# ggml's threads spin while they wait for a core (616 busy core-seconds in 5 m 14 s against 636 in
# 5 m 27 s, one run each). One session for both parts was tried: 15 m 52 s and 1,821 core-seconds
# against ~15 m and ~1,700 for the two parts, because a desk under load redraws a run's progress
# more times before the run ends. Both parts are bound by total CPU: see the notes.
TEST_WORKERS ?= 3
PYTEST := $(PY) -m pytest -n $(TEST_WORKERS) --dist loadgroup

.PHONY: install test test-fast lint docs demo bench browser clean

install: $(STAMP)

# uv fills the venv (its wheels kept in ~/.cache/uv, as pip keeps its own): it resolves and installs
# in parallel, ~7 s where pip took ~45 s, 25 s of it resolving. llama-cpp-python is compiled by pip
# the first time (~14 min; pip caches the wheel) and handed to uv as a local wheel. Nothing is
# byte-compiled at install (pip's default was ~30 s of one core for ~14,000 files, most never
# imported): two processes import what abeq's commands, the desk and the tests load, writing its
# bytecode (~12 s, on both cores); anything else is compiled the first time it is imported.
LLAMA := $(shell grep -o 'llama-cpp-python==[0-9.]*' pyproject.toml | head -1)
WARM  := PYTHONDONTWRITEBYTECODE= $(PY) -c

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade "pip==25.3" "uv==0.13.9"
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" CMAKE_BUILD_PARALLEL_LEVEL=2 $(PY) -m pip wheel -q --no-deps \
	  -w $(VENV)/wheels "$(LLAMA)"
	$(VENV)/bin/uv pip install -q --python $(PY) --find-links $(VENV)/wheels -e ".[local,test]"
	@$(WARM) "from abeq.models.bootstrap import litellm; litellm(); import abeq.cli.app, abeq.results.store.store, \
	  abeq.results.store.postgres, abeq.agents.server, abeq.models.local, llama_cpp, pytest, xdist" & one=$$!; \
	$(WARM) "import streamlit.web.cli, streamlit.testing.v1, pandas, pyarrow, sqlite_utils, playwright.sync_api, \
	  mkdocs.commands.build, psycopg"; two=$$?; wait $$one && test $$two -eq 0
	touch $(STAMP)

## lint and format check, and every test: unit, integration over loopback HTTP, the browser, then the
## real embedded model
# The tests write bytecode even where the environment says not to (PYTHONDONTWRITEBYTECODE, set on
# some CI machines): otherwise every process they start compiles abeq again, and each test session's
# workers rewrite and compile every test module again (~5 s of CPU each)
test: export PYTHONDONTWRITEBYTECODE =
test: install
	@mkdir -p build
	@nice -n 19 $(MAKE) --no-print-directory lint > build/lint.log 2>&1 & lint=$$!; \
	$(PYTEST) -m "not slow" --durations=15; fast=$$?; slow=1; \
	if [ $$fast -eq 0 ]; then ABEQ_LOCAL_BATCH_THREADS=1 $(PY) -m pytest -m slow -n 2 --dist loadgroup \
	  --durations=0; slow=$$?; fi; \
	wait $$lint; linted=$$?; echo "--- make lint (at the lowest priority, beside the tests):"; \
	cat build/lint.log; test $$linted -eq 0 -a $$fast -eq 0 -a $$slow -eq 0

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/mkdocs build --strict --quiet --site-dir build/site

## the documentation site (docs/, mkdocs.yml) into site/; a broken link or reference fails it
docs: install
	$(VENV)/bin/mkdocs build --strict

## the quick loop: no embedded model, no browser, none of the tests that start several abeq processes at
## once (marked multiprocess: 3-17 s each on an idle machine, up to a minute under `make test`)
test-fast: install
	$(PYTEST) -m "not slow and not e2e and not multiprocess"

## the review desk on the bundled example with the embedded model, on http://127.0.0.1:$(PORT)
demo: install
	$(VENV)/bin/abeq app --port $(PORT)

bench: install
	$(PY) bench/run_all.py

## Debian's Chromium and its headless build for the end-to-end tests (needs root)
browser:
	command -v chromium >/dev/null && command -v chromium-headless-shell >/dev/null \
	  || (apt-get update && apt-get install -y chromium chromium-headless-shell)

clean:
	rm -rf $(VENV) build site *.egg-info .pytest_cache
