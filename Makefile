# The two commands of the README. Each sets up what it needs on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
PIP := $(BIN)/pip install -q --disable-pip-version-check
BASE := $(VENV)/.installed-base  # the ledger alone (no door's libraries): all `make demo` needs
STAMP := $(VENV)/.installed      # every door, the test broker, the browser driver, the test tools

.PHONY: demo test bench clean browser screenshots broker

$(BASE): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PIP) -e .
	touch $(BASE)

$(STAMP): $(BASE)
	$(PIP) -e '.[test]'
	touch $(STAMP)

$(VENV)/.installed-broker: $(BASE)
	$(PIP) -e '.[broker,kafka]'
	touch $@

# A Kafka-protocol broker in memory on localhost:9092 (what the tests use), for trying `ledger serve`
# and `ledger submit` without Docker (the `kafka` extra comes with it). Ctrl-C stops it, and its topics go with it.
broker: $(VENV)/.installed-broker
	$(BIN)/ledger dev broker

demo: $(BASE)
	rm -f demo.db
	$(BIN)/ledger demo --db sqlite:///demo.db

test: $(STAMP) browser
	$(BIN)/pytest

# Debian's chromium for the browser test (tests/e2e/test_web_browser.py skips without it).
browser:
	@test -x /usr/bin/chromium || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
		|| echo "chromium could not be installed: the browser test will be skipped" >&2

# Refresh docs/*.png (queue, blocks, approve, phone-*) from the browser test.
screenshots: $(STAMP) browser
	LEDGER_SCREENSHOT_DIR=docs $(BIN)/pytest tests/e2e/test_web_browser.py

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) demo.db ledger.db
