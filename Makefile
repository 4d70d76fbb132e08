# Each target creates .venv when it is missing and installs udflow into it first.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.udflow-installed
SCALE  ?= 0.01
DATA   ?= data

.PHONY: run test bench clean browser

$(PY):
	$(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)

$(STAMP): $(PY) setup.cfg pyproject.toml
	$(PY) -m pip install --quiet --upgrade pip setuptools wheel
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

run: $(STAMP)
	$(PY) -m examples.tpch_q7 --data $(DATA)/tpch-sf$(SCALE) --scale $(SCALE)

# The test of the HTML report opens it in headless Chromium (Debian's package). This set-up
# step installs it when no chromium is on PATH; the tests themselves never install anything.
SUDO := $(shell [ "$$(id -u)" = 0 ] || echo sudo)

browser:
	@command -v chromium >/dev/null 2>&1 || command -v chromium-browser >/dev/null 2>&1 || \
	  { echo "installing chromium (Debian package) for the HTML report test"; \
	    $(SUDO) apt-get update -qq && $(SUDO) apt-get install -y -qq --no-install-recommends chromium; }

test: $(STAMP) browser
	$(PY) -m pytest

BENCHES ?= backend_overhead analysis_speed enumeration plan_quality paper_eval batch_cache cluster native lowering

bench: $(STAMP)
	@for b in $(BENCHES); do \
	  if [ -f bench/$$b.py ]; then echo "== bench/$$b.py"; $(PY) -m bench.$$b || exit 1; fi; \
	done

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
