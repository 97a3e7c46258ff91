# The two commands of the README. Each sets up what it needs on a fresh machine.
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: demo test bench clean browser screenshots

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -e '.[test]'
	touch $(STAMP)

demo: $(STAMP)
	rm -f demo.db
	$(BIN)/ledger demo --db sqlite:///demo.db

test: $(STAMP) browser
	$(BIN)/pytest

# Debian's chromium for the browser test (tests/test_web_browser.py skips without it).
browser:
	@test -x /usr/bin/chromium || (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium) \
		|| echo "chromium could not be installed: the browser test will be skipped" >&2

# Refresh docs/queue.png and docs/blocks.png from the browser test.
screenshots: $(STAMP) browser
	LEDGER_SCREENSHOT_DIR=docs $(BIN)/pytest tests/test_web_browser.py

bench: $(STAMP)
	$(BIN)/python -m bench

clean:
	rm -rf $(VENV) demo.db ledger.db
