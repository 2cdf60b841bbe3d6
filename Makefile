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
# `make test` runs the embedded-model tests in one process of their own (one model load) *beside*
# the rest: llama.cpp now takes the usable cores less one (abeq.models.local.threads), so on 2 cores
# it runs on one while the workers share the other and the gaps. (With two llama.cpp threads it did
# not finish beside busy workers — its threads spin waiting for each other — so the two parts ran
# one after the other: 6 m 26 s + 8 m 59 s.) Its output is kept in build/slow-tests.log and printed
# after the rest.
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
	@mkdir -p build && rm -f build/slow-tests.log
	@$(PY) -m pytest -m slow --durations=0 --basetemp="$${TMPDIR:-/tmp}/abeq-embedded-tests" > build/slow-tests.log 2>&1 & slow=$$!; \
	trap 'kill $$slow 2>/dev/null' INT TERM; \
	$(PYTEST) -m "not slow" --durations=15; fast=$$?; \
	echo "---- the embedded-model tests, run beside the rest (build/slow-tests.log) ----"; \
	wait $$slow; embedded=$$?; cat build/slow-tests.log; \
	test $$fast -eq 0 && test $$embedded -eq 0

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/ruff format --check .
	$(VENV)/bin/mypy
	$(VENV)/bin/mkdocs build --strict --quiet --site-dir build/site

## the documentation site (docs/, mkdocs.yml) into site/; a broken link or reference fails it
docs: install
	$(VENV)/bin/mkdocs build --strict

## the quick loop: no embedded model, no browser
test-fast: install
	$(PYTEST) -m "not slow and not e2e"

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
