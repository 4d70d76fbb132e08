# Each target creates .venv when it is missing and installs udflow into it first.
PYTHON ?= python3.11
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.udflow-installed
SCALE  ?= 0.01
DATA   ?= data

.PHONY: run test bench clean

$(PY):
	$(PYTHON) -m venv $(VENV) || python3 -m venv $(VENV)

$(STAMP): $(PY) setup.cfg pyproject.toml
	$(PY) -m pip install --quiet --upgrade pip setuptools wheel
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $(STAMP)

run: $(STAMP)
	$(PY) -m examples.tpch_q7 --data $(DATA)/tpch-sf$(SCALE) --scale $(SCALE)

test: $(STAMP)
	$(PY) -m pytest

BENCHES ?= backend_overhead analysis_speed enumeration plan_quality paper_eval batch_cache cluster

bench: $(STAMP)
	@for b in $(BENCHES); do \
	  if [ -f bench/$$b.py ]; then echo "== bench/$$b.py"; $(PY) -m bench.$$b || exit 1; fi; \
	done

clean:
	rm -rf $(VENV) .pytest_cache .hypothesis
