# The two commands a newcomer types: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: install run test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

## install and start the server on 127.0.0.1:4566 (embedded DuckDB, database `dev`)
run: install
	$(VENV)/bin/pgbarrier serve

## install and run every test
test: install
	$(PY) -m pytest

clean:
	rm -rf $(VENV) pgbarrier-data .pytest_cache

## measurements written up in docs/BENCHMARKS.md
bench: install
	$(PY) bench/control_roundtrip.py --rounds 100
	$(PY) bench/control_roundtrip.py --rounds 1000
	$(PY) bench/refresh_lateness.py --runs 60 --views 10 --barrier-interval-ms 1000
	$(PY) bench/refresh_lateness.py --runs 60 --views 10 --barrier-interval-ms 100
