# Two commands for a newcomer: `make demo` (install + the main job) and `make test` (install + tests).
PYTHON ?= python3.13
VENV   := .venv
TOOLS  := .venv-tools

.PHONY: demo test unit lint sam-check wheel-check bench cold-import install tools clean

# A local `make test` runs the suite on both cores, each test file on one worker, and leaves out
# the tests marked slow (long end-to-end runs: the 50,000-source scheduler, the built artifact, the
# wheel, every bot's conformance command, the longest fault runs), and says so. Where CI=true (CI)
# or SLOW=1, every test runs, one after another, as the timings they check were written for.
PYTEST_ARGS := $(if $(or $(filter true,$(CI)),$(SLOW)),,-m "not slow" -n 2 --dist loadfile)

# What is tested is what is deployed: the venv takes the layers' pins as constraints (their
# extras left out: pip takes none in a constraint), so a release that comes out later changes
# neither until a pin is moved on purpose.
LAYER_PINS := layers/core/requirements.txt layers/aws/requirements.txt

$(VENV)/.installed: pyproject.toml $(LAYER_PINS)
	$(PYTHON) -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	sed -E 's/\[[^]]*\]//' $(LAYER_PINS) > $(VENV)/constraints.txt
	$(VENV)/bin/pip install --quiet -c $(VENV)/constraints.txt -e '.[dev]'
	touch $@

# SAM CLI pins versions that clash with moto's, so it lives in its own venv.
$(TOOLS)/.installed:
	$(PYTHON) -m venv $(TOOLS)
	$(TOOLS)/bin/pip install --quiet --upgrade pip
	$(TOOLS)/bin/pip install --quiet aws-sam-cli
	touch $@

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
	$(VENV)/bin/pytest $(PYTEST_ARGS)
	@$(if $(PYTEST_ARGS),echo "make test: the tests marked slow were left out (CI=true or SLOW=1 runs them too)",true)
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
