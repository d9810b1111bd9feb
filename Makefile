# The two commands a newcomer types: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: install clients run test bench clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(STAMP)

install: $(STAMP)

# Client tools of tests/functional/test_clients_external.py: pgjdbc (Debian's
# libpostgresql-jdbc-java, via apt-get, only when its jar is missing) and node-postgres
# (npm ci from tests/clients/package-lock.json, only when the lock file changed).
# Outside CI a tool that cannot be installed is a warning and its tests skip; under
# CI=true it fails the build.
CLIENTS := tests/clients
PGJDBC_JAR := /usr/share/java/postgresql.jar
NODE_STAMP := $(CLIENTS)/node_modules/.installed-stamp
client_missing = if [ "$$CI" = true ]; then echo "make clients: $(1)" >&2; exit 1; \
	else echo "make clients: warning: $(1); those tests will be skipped" >&2; fi

$(PGJDBC_JAR):
	@if [ "$$(id -u)" = 0 ]; then sudo=; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; \
	else sudo=none; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
		$(call client_missing,apt-get not found: cannot install libpostgresql-jdbc-java); \
	elif [ "$$sudo" = none ]; then \
		$(call client_missing,not root and no sudo: cannot apt-get install libpostgresql-jdbc-java); \
	else \
		echo "apt-get install libpostgresql-jdbc-java"; \
		apt="$$sudo env DEBIAN_FRONTEND=noninteractive apt-get -q -y --no-install-recommends"; \
		$$apt install libpostgresql-jdbc-java >/dev/null 2>&1 \
		|| { $$sudo apt-get -q update >/dev/null && $$apt install libpostgresql-jdbc-java >/dev/null; } \
		|| { $(call client_missing,apt-get install libpostgresql-jdbc-java failed); }; \
	fi

$(NODE_STAMP): $(CLIENTS)/package.json $(CLIENTS)/package-lock.json
	@if ! command -v npm >/dev/null 2>&1; then \
		$(call client_missing,npm not found: cannot install node-postgres into $(CLIENTS)/node_modules); \
	else \
		echo "npm ci (node-postgres) in $(CLIENTS)"; \
		(cd $(CLIENTS) && npm ci --no-audit --no-fund --loglevel=error >/dev/null) && touch $@ \
		|| { $(call client_missing,npm ci in $(CLIENTS) failed); }; \
	fi

clients: $(PGJDBC_JAR) $(NODE_STAMP)

## install and start the server on 127.0.0.1:4566 (embedded DuckDB, database `dev`)
run: install
	$(VENV)/bin/pgbarrier serve

## install and run every test
test: install clients
	$(PY) -m pytest

clean:
	rm -rf $(VENV) pgbarrier-data .pytest_cache $(CLIENTS)/node_modules

## measurements written up in docs/BENCHMARKS.md
bench: install
	$(PY) bench/control_roundtrip.py --rounds 100
	$(PY) bench/control_roundtrip.py --rounds 1000
	$(PY) bench/refresh_lateness.py --runs 60 --views 10 --barrier-interval-ms 1000
	$(PY) bench/refresh_lateness.py --runs 60 --views 10 --barrier-interval-ms 100
