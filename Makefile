# The two commands a newcomer types: `make run` and `make test`.
PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-stamp

.PHONY: install install-test clients run test bench clean

# the sources setup.py compiles (pgbarrier/accel.py): an edit rebuilds their extensions
COMPILED := src/pgbarrier/pgproto/scan.py src/pgbarrier/pgproto/_scan_c.pxd \
	src/pgbarrier/pgproto/rowframe.py src/pgbarrier/pgproto/_rowframe_c.pxd \
	src/pgbarrier/relay/state.py src/pgbarrier/relay/_state_c.pxd \
	src/pgbarrier/server/core.py src/pgbarrier/server/_core_c.pxd \
	src/pgbarrier/server/upstream_io.py src/pgbarrier/server/_upstream_io_c.pxd

# `make run` installs what serving needs; `make test` adds the test extras (clients,
# pandas, alembic, ...) on top
TEST_STAMP := $(VENV)/.installed-test-stamp

$(STAMP): pyproject.toml setup.py $(COMPILED)
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e .
	touch $(STAMP)

$(TEST_STAMP): $(STAMP)
	$(PY) -m pip install --quiet -e '.[test]'
	touch $(TEST_STAMP)

install: $(STAMP)

install-test: $(TEST_STAMP)

# Client tools of tests/functional/test_clients_external.py: pgjdbc (Debian's
# libpostgresql-jdbc-java, via apt-get, only when its jar is missing) and node-postgres
# (npm ci from tests/clients/package-lock.json, only when the lock file changed); and
# Debian's prometheus (prometheus and promtool) for tests/functional/test_metrics.py.
# Outside CI a tool that cannot be installed is a warning and its tests skip; under
# CI=true it fails the build.
CLIENTS := tests/clients
PGJDBC_JAR := /usr/share/java/postgresql.jar
PROMETHEUS_BIN := /usr/bin/promtool
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

$(PROMETHEUS_BIN):
	@if [ "$$(id -u)" = 0 ]; then sudo=; \
	elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; \
	else sudo=none; fi; \
	if ! command -v apt-get >/dev/null 2>&1; then \
		$(call client_missing,apt-get not found: cannot install prometheus); \
	elif [ "$$sudo" = none ]; then \
		$(call client_missing,not root and no sudo: cannot apt-get install prometheus); \
	else \
		echo "apt-get install prometheus"; \
		apt="$$sudo env DEBIAN_FRONTEND=noninteractive apt-get -q -y --no-install-recommends"; \
		$$apt install prometheus >/dev/null 2>&1 \
		|| { $$sudo apt-get -q update >/dev/null && $$apt install prometheus >/dev/null; } \
		|| { $(call client_missing,apt-get install prometheus failed); }; \
	fi

$(NODE_STAMP): $(CLIENTS)/package.json $(CLIENTS)/package-lock.json
	@if ! command -v npm >/dev/null 2>&1; then \
		$(call client_missing,npm not found: cannot install node-postgres into $(CLIENTS)/node_modules); \
	else \
		echo "npm ci (node-postgres) in $(CLIENTS)"; \
		(cd $(CLIENTS) && npm ci --no-audit --no-fund --loglevel=error >/dev/null) && touch $@ \
		|| { $(call client_missing,npm ci in $(CLIENTS) failed); }; \
	fi

clients: $(PGJDBC_JAR) $(NODE_STAMP) $(PROMETHEUS_BIN)

## install and start the server on 127.0.0.1:4566 (embedded DuckDB, database `dev`)
run: install
	$(VENV)/bin/pgbarrier serve

## install and run every test
test: install-test clients
	$(PY) -m pytest

clean:
	rm -rf $(VENV) pgbarrier-data .pytest_cache $(CLIENTS)/node_modules

## measurements written up in docs/BENCHMARKS.md (bench/run_all.py; see bench/README.md)
# Installs what it compares, nothing by hand: the bench extra (py-spy, pyinstrument, psutil)
# into .venv, buenavista 0.5.0's baseline into its own venv (.bench/baseline, from
# bench/baseline-requirements.txt) and Debian's pgbouncer (apt-get, as root or via sudo -n,
# only when it is missing). A tool that cannot be installed is a warning; its column then
# says why. BENCH_ARGS passes options to bench/run_all.py (e.g. BENCH_ARGS=--quick).
.PHONY: bench-tools
BENCH_VENV := .bench/baseline
BENCH_EXTRA_STAMP := $(VENV)/.bench-extra-stamp
BENCH_VENV_STAMP := $(BENCH_VENV)/.installed-stamp

$(BENCH_EXTRA_STAMP): $(STAMP) pyproject.toml
	$(PY) -m pip install --quiet -e '.[test,bench]'
	touch $@

$(BENCH_VENV_STAMP): bench/baseline-requirements.txt
	rm -rf $(BENCH_VENV)
	@echo "buenavista baseline: $(BENCH_VENV) from bench/baseline-requirements.txt"
	@$(PYTHON) -m venv $(BENCH_VENV) \
	&& $(BENCH_VENV)/bin/python -m pip install --quiet --upgrade pip \
	&& $(BENCH_VENV)/bin/python -m pip install --quiet -r bench/baseline-requirements.txt \
	&& touch $@ \
	|| { echo "make bench: warning: cannot install the buenavista baseline; its columns will say so" >&2; \
	     rm -rf $(BENCH_VENV); }

bench-tools: $(BENCH_EXTRA_STAMP) $(BENCH_VENV_STAMP)
	@if command -v pgbouncer >/dev/null 2>&1 || [ -x /usr/sbin/pgbouncer ]; then :; \
	else \
		if [ "$$(id -u)" = 0 ]; then sudo=; \
		elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then sudo="sudo -n"; \
		else sudo=none; fi; \
		if ! command -v apt-get >/dev/null 2>&1 || [ "$$sudo" = none ]; then \
			echo "make bench: warning: cannot apt-get install pgbouncer (no apt-get, or not root and no sudo); its column will say so" >&2; \
		else \
			echo "apt-get install pgbouncer"; \
			apt="$$sudo env DEBIAN_FRONTEND=noninteractive apt-get -q -y --no-install-recommends"; \
			$$apt install pgbouncer >/dev/null 2>&1 \
			|| { $$sudo apt-get -q update >/dev/null && $$apt install pgbouncer >/dev/null; } \
			|| echo "make bench: warning: apt-get install pgbouncer failed; its column will say so" >&2; \
		fi; \
	fi
	@command -v pgbench >/dev/null 2>&1 || echo "make bench: warning: pgbench not found (Debian's postgresql-15 ships it); the pgbench tables will be skipped" >&2

bench: install bench-tools
	$(PY) bench/run_all.py $(BENCH_ARGS)
