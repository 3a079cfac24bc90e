# Two commands for a newcomer: `make demo` (install + the main job) and `make test` (install + tests).
PYTHON ?= python3.13
VENV   := .venv
TOOLS  := .venv-tools

.PHONY: demo test unit lint sam-check wheel-check bench cold-import install tools lock clean

# `make test` runs the suite on both cores, each test file on one worker, and leaves out the tests
# marked slow (long end-to-end runs: the 50,000-source scheduler, the built artifact, the wheel,
# the deploy rehearsal, every bot's conformance command, the longest fault and kill runs), and
# says so. Where CI=true (CI) or SLOW=1, the slow ones run after, one after another, as the
# timings they check were written for. Each part ends naming its slowest tests (where CI's time goes).
PYTEST_ARGS := -m "not slow" -n 2 --dist loadfile
SLOW_RUN := $(if $(or $(filter true,$(CI)),$(SLOW)),yes,)

# What is tested is what is deployed, to the last transitive package: every venv and layer installs
# from a lock (`make lock` writes them with uv) that names each package at one version with the
# sha256 of each of its files on the index, installed with hash checking and nothing resolved at
# install time: a file that is not the one locked, or a package the lock does not name, stops the
# install. The venv's lock takes the layers' versions as constraints, so the two never differ
# (tests/unit/test_locks.py holds them to it, and each venv to its lock).
CORE_LOCK  := layers/core/requirements.lock
AWS_LOCK   := layers/aws/requirements.lock
DEV_LOCK   := requirements/dev.lock
TOOLS_LOCK := requirements/tools.lock
LOCKS      := $(CORE_LOCK) $(AWS_LOCK) $(DEV_LOCK) $(TOOLS_LOCK)
UV         ?= $(VENV)/bin/uv
# uv pip sync makes a venv exactly its lock (what it does not name is removed) and --require-hashes
# checks every file it fetches; after a moved lock it changes only what moved, in seconds.
UV_SYNC    := $(UV) pip sync --quiet --require-hashes --only-binary :all: --compile-bytecode

# uv comes first, with the venv's own pip, from its lines in the lock (hash-checked too), then the
# lock, then the project itself, editable, built by the locked setuptools (no build isolation:
# nothing from the index). A moved lock syncs the venv again, a moved pyproject.toml the project.
$(VENV)/.locked: $(DEV_LOCK)
	[ -x $(VENV)/bin/python ] || $(PYTHON) -m venv $(VENV)
	awk '/^uv==/ {p = 1} p {print} p && !/\\$$/ {exit}' $(DEV_LOCK) > $(VENV)/uv.txt
	$(VENV)/bin/python -m pip install --quiet --require-hashes --no-deps --only-binary=:all: -r $(VENV)/uv.txt
	$(UV_SYNC) --python $(VENV)/bin/python $(DEV_LOCK)
	$(UV) pip check --quiet --python $(VENV)/bin/python
	touch $@

$(VENV)/.installed: pyproject.toml $(VENV)/.locked
	$(UV) pip install --quiet --python $(VENV)/bin/python --no-deps --no-build-isolation -e .
	touch $@

# SAM CLI pins versions that clash with moto's, so it lives in its own venv, from its own lock
# (synced by the project venv's uv).
$(TOOLS)/.installed: $(TOOLS_LOCK) | $(VENV)/.locked
	[ -x $(TOOLS)/bin/python ] || $(PYTHON) -m venv $(TOOLS)
	$(UV_SYNC) --python $(TOOLS)/bin/python $(TOOLS_LOCK)
	$(UV) pip check --quiet --python $(TOOLS)/bin/python
	touch $@

# `make lock` resolves every lock again from its inputs (the layers' requirements.txt, pyproject.toml
# with requirements/dev.in, requirements/tools.in), keeping each locked version its inputs still
# allow; `make lock UPGRADE=1` takes the newest they allow. The layers resolve for Lambda's platform
# (CPython 3.13, manylinux aarch64, wheels only), the AWS layer with the core's versions as
# constraints (both land in one /opt/python), the venvs for any platform (markers where they
# differ), the project's venv with both layers' versions as constraints. Every lock carries the
# hashes of every file of each version, so one lock installs on arm64 and x86_64 alike. Then it
# says what moved; `make install` (or any target that needs the venv) takes it.
UV_COMPILE  = $(UV) pip compile --quiet --python-version 3.13 --generate-hashes \
              --custom-compile-command "make lock" $(if $(UPGRADE),--upgrade)
LAYER_PLATFORM := --python-platform aarch64-manylinux_2_28 --only-binary :all:

lock: install
	rm -rf $(VENV)/locks-before && mkdir -p $(VENV)/locks-before
	for f in $(LOCKS); do if [ -f $$f ]; then mkdir -p $(VENV)/locks-before/$$(dirname $$f) && cp $$f $(VENV)/locks-before/$$f; fi; done
	$(UV_COMPILE) $(LAYER_PLATFORM) layers/core/requirements.txt -o $(CORE_LOCK)
	$(UV_COMPILE) $(LAYER_PLATFORM) layers/aws/requirements.txt -c $(CORE_LOCK) -o $(AWS_LOCK)
	$(UV_COMPILE) --universal pyproject.toml --extra dev requirements/dev.in -c $(CORE_LOCK) -c $(AWS_LOCK) -o $(DEV_LOCK)
	$(UV_COMPILE) --universal requirements/tools.in -o $(TOOLS_LOCK)
	$(VENV)/bin/python scripts/locks.py changes $(VENV)/locks-before $(LOCKS)
	$(VENV)/bin/python scripts/locks.py check

install: $(VENV)/.installed
tools: $(TOOLS)/.installed

demo: install
	$(VENV)/bin/heed demo

unit: install
	$(VENV)/bin/pytest $(PYTEST_ARGS)

# A wheel built from this tree installs in a fresh venv and runs `heed demo` outside the checkout.
wheel-check: install
	$(VENV)/bin/pytest -q tests/integration/test_wheel.py

# The house checks itself: the core's and the AWS layer's types (mypy --strict), lint on everything (ruff).
lint: install
	$(VENV)/bin/mypy --strict -p heed_core -p heed_aws -p heed -p heed_embedded
	$(VENV)/bin/ruff check .

sam-check: install tools
	SAM=$(TOOLS)/bin/sam CFN_LINT=$(VENV)/bin/cfn-lint scripts/sam-check.sh

test: install tools
	$(VENV)/bin/pytest $(PYTEST_ARGS) --durations=15
	$(if $(SLOW_RUN),$(VENV)/bin/pytest -m slow --durations=20,@echo "make test: the tests marked slow were left out (CI=true or SLOW=1 runs them too)")
	$(VENV)/bin/mypy --strict -p heed_core -p heed_aws -p heed -p heed_embedded
	$(VENV)/bin/ruff check .
	SAM=$(TOOLS)/bin/sam CFN_LINT=$(VENV)/bin/cfn-lint scripts/sam-check.sh
	$(VENV)/bin/heed samconfig --check
	bench/run --size smoke --check
	$(VENV)/bin/python bench/cold_import.py --runs 3 --check --limit-ms 600

# Heed and Scrapy side by side on a fixture web, then the machine's ceiling (see README, Performance and scale).
bench:
	bench/run --size smoke --size 200x10 --size 1000x5

# The fetcher's cold import from the layers as built (README, Performance and scale).
cold-import: install
	$(VENV)/bin/python bench/cold_import.py

clean:
	rm -rf $(VENV) $(TOOLS) .venv-bench .aws-sam heed-out build dist
