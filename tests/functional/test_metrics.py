"""``serve --metrics-port``: the Prometheus endpoint read over HTTP from the real server.

Each test scrapes ``/metrics`` before and after real activity (PAUSE, refresh runs that
succeed and fail, statements of each route, open sessions) and checks that the values
moved as the metric's description says. Debian's ``prometheus`` scrapes it and its
``promtool`` lints it; without them those tests skip (fail under CI=true). The Grafana
dashboard's PromQL may use only metric names the endpoint serves.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.conftest import ServerProcess, start_server, stop_server

METRICS = re.compile(r"metrics on ([\d.]+):(\d+)")
DASHBOARD = Path(__file__).resolve().parents[2] / "examples" / "grafana" / "pgbarrier.json"

#: the names issue 16 promises (dashboards and alerts rely on them)
PROMISED = {
    "pgbarrier_client_connections": "gauge",
    "pgbarrier_statements": "counter",
    "pgbarrier_statement_duration_seconds": "histogram",
    "pgbarrier_database_paused": "gauge",
    "pgbarrier_committed_epoch": "gauge",
    "pgbarrier_barrier_collect_seconds": "histogram",
    "pgbarrier_barriers": "counter",
    "pgbarrier_refresh_runs": "counter",
    "pgbarrier_refresh_duration_seconds": "histogram",
    "pgbarrier_refresh_lateness_seconds": "histogram",
    "pgbarrier_batch_refresh_jobs": "gauge",
    "pgbarrier_meta_write_seconds": "histogram",
}


class Scrape:
    """One /metrics reading: sample name -> [(labels, value)]."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.families = {f.name: f for f in text_string_to_metric_families(text)}
        self.samples: dict[str, list[tuple[dict[str, str], float]]] = {}
        for family in self.families.values():
            for s in family.samples:
                self.samples.setdefault(s.name, []).append((s.labels, s.value))

    def value(self, name: str, **labels: str) -> float:
        """The sum of ``name``'s samples whose labels include ``labels`` (0: none)."""
        return sum(v for have, v in self.samples.get(name, [])
                   if all(have.get(k) == want for k, want in labels.items()))

    def has(self, name: str, **labels: str) -> bool:
        return any(all(have.get(k) == want for k, want in labels.items())
                   for have, _ in self.samples.get(name, []))


class MetricsServer:
    def __init__(self, srv: ServerProcess) -> None:
        self.srv = srv
        found = next(METRICS.search(line) for line in srv.log if METRICS.search(line))
        self.host, self.port = found.group(1), int(found.group(2))
        self.url = f"http://{self.host}:{self.port}/metrics"

    def scrape(self) -> Scrape:
        with urllib.request.urlopen(self.url, timeout=10) as resp:
            assert resp.status == 200
            return Scrape(resp.read().decode())

    def connect(self, **kw) -> psycopg.Connection:
        return psycopg.connect(self.srv.dsn(), autocommit=True, **kw)

    def wait_until(self, check, timeout: float = 20.0) -> Scrape:
        """Scrape until ``check(scrape)`` holds (a readiness poll of a periodic event)."""
        deadline = time.monotonic() + timeout
        while True:
            scrape = self.scrape()
            if check(scrape):
                return scrape
            if time.monotonic() > deadline:
                raise AssertionError("metrics did not reach the expected state:\n" + scrape.text)
            time.sleep(0.05)


@pytest.fixture(scope="module")
def metrics() -> Iterator[MetricsServer]:
    srv = start_server("--metrics-port", "0", "--barrier-interval-ms", "100")
    yield MetricsServer(srv)
    assert stop_server(srv) == 0, "server did not exit cleanly:\n" + "".join(srv.log)


def _tool(name: str) -> str:
    path = shutil.which(name)
    if path is None:
        reason = f"{name} is not installed (Debian's prometheus package; `make clients`)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason + " under CI=true")
        pytest.skip(reason)
    return path


# ------------------------------------------------------------------ the endpoint itself

def test_ready_line_names_the_metrics_port_and_every_promised_metric_is_served(metrics):
    ready = next(line for line in metrics.srv.log if "ready: listening on" in line)
    assert f"ready: listening on {metrics.srv.host}:{metrics.srv.port}, metrics on " \
           f"{metrics.host}:{metrics.port} (" in ready
    scrape = metrics.scrape()
    for name, kind in PROMISED.items():
        assert name in scrape.families, name
        assert scrape.families[name].type == kind, name
    assert any(n.startswith("process_") for n in scrape.families)
    assert scrape.value("pgbarrier_database_paused", database="dev") == 0
    # the role (issue 17): a single process on the SQLite store leads
    assert scrape.value("pgbarrier_leader") == 1
    assert scrape.value("pgbarrier_role_since_seconds") > 0
    # every state and status has a series, 0 when nothing is in it
    for state in ("active", "idle", "idle in transaction"):
        assert scrape.has("pgbarrier_client_connections", database="dev", state=state)


def test_metrics_are_off_by_default(server):
    assert not any("metrics on" in line for line in server.log)


def test_metrics_port_out_of_range_is_a_usage_error():
    proc = subprocess.run([sys.executable, "-m", "pgbarrier", "serve", "--metrics-port",
                           "70000"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2
    assert "--metrics-port" in proc.stderr


# ------------------------------------------------------------------ barriers and PAUSE

def test_pause_and_resume_move_the_paused_gauge_and_barriers_are_counted(metrics):
    before = metrics.scrape()
    assert before.value("pgbarrier_database_paused", database="dev") == 0
    with metrics.connect() as conn:
        conn.execute("FLUSH")
        conn.execute("ALTER DATABASE dev PAUSE")
        paused = metrics.scrape()
        conn.execute("ALTER DATABASE dev RESUME")
        conn.execute("FLUSH")
    resumed = metrics.scrape()
    assert paused.value("pgbarrier_database_paused", database="dev") == 1
    assert resumed.value("pgbarrier_database_paused", database="dev") == 0
    assert resumed.value("pgbarrier_committed_epoch", database="dev") > \
        before.value("pgbarrier_committed_epoch", database="dev")
    # PAUSE, RESUME and two FLUSH checkpoints at least
    assert resumed.value("pgbarrier_barriers_total", database="dev") >= \
        before.value("pgbarrier_barriers_total", database="dev") + 4
    assert resumed.value("pgbarrier_barrier_collect_seconds_count") >= \
        before.value("pgbarrier_barrier_collect_seconds_count") + 4
    assert resumed.value("pgbarrier_barrier_collect_seconds_sum") > \
        before.value("pgbarrier_barrier_collect_seconds_sum")
    # the checkpoints' pause state is written to the meta store
    assert resumed.value("pgbarrier_meta_write_seconds_count") > \
        before.value("pgbarrier_meta_write_seconds_count")


# ------------------------------------------------------------------ refresh runs

def test_refresh_runs_succeeded_and_failed_are_counted_and_jobs_by_status(metrics):
    runs = "pgbarrier_refresh_runs_total"
    with metrics.connect() as conn:
        conn.execute("CREATE TABLE m_src (a int)")
        conn.execute("INSERT INTO m_src VALUES (1), (2)")
        conn.execute("CREATE TABLE m_doomed (a int)")
        before = metrics.scrape()
        conn.execute("CREATE MATERIALIZED VIEW m_ok BATCH REFRESH EVERY 1 HOUR AS "
                     "SELECT count(*) AS n FROM m_src")
        conn.execute("CREATE MATERIALIZED VIEW m_bad BATCH REFRESH EVERY 1 HOUR AS "
                     "SELECT 1 / a AS a FROM m_doomed")
        created = metrics.scrape()
        conn.execute("REFRESH MATERIALIZED VIEW m_ok")
        refreshed = metrics.scrape()
        conn.execute("INSERT INTO m_doomed VALUES (0)")  # the next refresh divides by zero
        with pytest.raises(psycopg.Error):
            conn.execute("REFRESH MATERIALIZED VIEW m_bad")
        failed = metrics.scrape()
    for view in ("m_ok", "m_bad"):
        assert created.value(runs, database="dev", view=view, trigger="create",
                             status="succeeded") == 1
    assert created.value("pgbarrier_batch_refresh_jobs", database="dev", status="idle") == \
        before.value("pgbarrier_batch_refresh_jobs", database="dev", status="idle") + 2
    assert refreshed.value(runs, view="m_ok", trigger="manual", status="succeeded") == 1
    assert refreshed.value("pgbarrier_refresh_duration_seconds_count") == \
        created.value("pgbarrier_refresh_duration_seconds_count") + 1
    assert failed.value(runs, view="m_bad", trigger="manual", status="failed") == 1
    assert failed.value(runs, view="m_ok", status="failed") == 0
    assert failed.value("pgbarrier_batch_refresh_jobs", database="dev", status="failed") == \
        refreshed.value("pgbarrier_batch_refresh_jobs", database="dev", status="failed") + 1
    assert failed.value("pgbarrier_refresh_duration_seconds_count") == \
        refreshed.value("pgbarrier_refresh_duration_seconds_count") + 1


def test_a_scheduled_run_records_its_lateness(metrics):
    before = metrics.scrape()
    with metrics.connect() as conn:
        conn.execute("CREATE TABLE m_tick (a int)")
        conn.execute("CREATE MATERIALIZED VIEW m_every BATCH REFRESH EVERY 1 SECOND AS "
                     "SELECT count(*) AS n FROM m_tick")
    count = before.value("pgbarrier_refresh_lateness_seconds_count")
    after = metrics.wait_until(lambda s: s.value(
        "pgbarrier_refresh_runs_total", view="m_every", trigger="schedule") >= 1)
    assert after.value("pgbarrier_refresh_lateness_seconds_count") >= count + 1
    # a run starts on the checkpoint after its due time: late by less than a few intervals
    assert after.value("pgbarrier_refresh_lateness_seconds_bucket", le="+Inf") >= count + 1
    with metrics.connect() as conn:
        conn.execute("DROP MATERIALIZED VIEW m_every")


# ------------------------------------------------------------------ statements

def test_statements_are_counted_by_route_and_sqlstate_class(metrics):
    total = "pgbarrier_statements_total"
    before = metrics.scrape()
    with metrics.connect() as conn:
        conn.execute("SELECT 1")  # relayed (simple Query)
        conn.execute("SELECT %s::int", (2,))  # relayed (extended protocol)
        conn.execute("SELECT * FROM rw_catalog.rw_databases")  # local
        conn.execute("SHOW DATABASES")  # control
        with pytest.raises(psycopg.errors.UndefinedTable):
            conn.execute("SELECT * FROM no_such_table")
        with pytest.raises(psycopg.errors.InvalidTextRepresentation):
            conn.execute("SELECT 'x'::int")
        with pytest.raises(psycopg.Error) as missing:
            conn.execute("ALTER DATABASE no_such_db_xyz PAUSE")
    after = metrics.scrape()

    def moved(**labels: str) -> float:
        return after.value(total, database="dev", **labels) - \
            before.value(total, database="dev", **labels)

    assert moved(route="relayed", sqlstate_class="00") == 2
    assert moved(route="local", sqlstate_class="00") == 1
    assert moved(route="control", sqlstate_class="00") == 1
    assert moved(route="relayed", sqlstate_class="42") == 1
    assert moved(route="relayed", sqlstate_class="22") == 1
    assert moved(route="control", sqlstate_class=missing.value.sqlstate[:2]) == 1
    for route in ("relayed", "local", "control"):
        assert after.value("pgbarrier_statement_duration_seconds_count", route=route) > \
            before.value("pgbarrier_statement_duration_seconds_count", route=route)


def test_connections_by_state(metrics):
    gauge = "pgbarrier_client_connections"
    before = metrics.scrape()
    with metrics.connect() as idle, psycopg.connect(metrics.srv.dsn()) as in_tx:
        idle.execute("SELECT 1")
        in_tx.execute("SELECT 1")  # psycopg opened a transaction block
        during = metrics.scrape()
    # the server sees the hang-ups a moment later
    metrics.wait_until(
        lambda s: s.value(gauge, database="dev") == before.value(gauge, database="dev"))
    assert during.value(gauge, database="dev", state="idle") == \
        before.value(gauge, database="dev", state="idle") + 1
    assert during.value(gauge, database="dev", state="idle in transaction") == \
        before.value(gauge, database="dev", state="idle in transaction") + 1


def test_a_statement_waiting_for_resume_is_an_active_connection(metrics):
    gauge = "pgbarrier_client_connections"
    from tests.conftest import run_in_background

    with metrics.connect() as admin, metrics.connect() as waiter:
        admin.execute("CREATE TABLE IF NOT EXISTS m_wait_src (a int)")
        admin.execute("CREATE MATERIALIZED VIEW m_wait BATCH REFRESH EVERY 1 HOUR AS "
                      "SELECT count(*) AS n FROM m_wait_src")
        waiter.execute("SET batch_refresh_when_paused = 'wait'")
        admin.execute("ALTER DATABASE dev PAUSE")
        try:
            bg = run_in_background(waiter, "REFRESH MATERIALIZED VIEW m_wait")
            metrics.wait_until(lambda s: s.value(gauge, database="dev", state="active") >= 1)
        finally:
            admin.execute("ALTER DATABASE dev RESUME")
        assert bg.done.wait(30) and bg.outcome == ["done"]
        admin.execute("DROP MATERIALIZED VIEW m_wait")


# ------------------------------------------------------------------ promtool and prometheus

def test_promtool_check_metrics_passes(metrics):
    promtool = _tool("promtool")
    with metrics.connect() as conn:  # series of every kind present
        conn.execute("SELECT 1")
    text = metrics.scrape().text
    proc = subprocess.run([promtool, "check", "metrics"], input=text, capture_output=True,
                          text=True, timeout=60)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.strip() == "" and proc.stderr.strip() == "", proc.stdout + proc.stderr


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_debian_prometheus_scrapes_the_endpoint(metrics, tmp_path):
    prometheus = _tool("prometheus")
    config = tmp_path / "prometheus.yml"
    config.write_text(
        "global:\n  scrape_interval: 1s\n  scrape_timeout: 1s\n"
        "scrape_configs:\n  - job_name: pgbarrier\n    static_configs:\n"
        f"      - targets: ['{metrics.host}:{metrics.port}']\n")
    port = _free_port()
    proc = subprocess.Popen(
        [prometheus, f"--config.file={config}", f"--storage.tsdb.path={tmp_path / 'data'}",
         f"--web.listen-address=127.0.0.1:{port}"],
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        health, last = None, None
        while time.monotonic() < deadline and health != "up":
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/api/v1/targets",
                                            timeout=5) as resp:
                    targets = json.load(resp)["data"]["activeTargets"]
                last = targets
                health = targets[0]["health"] if targets else None
            except OSError:
                pass  # not listening yet
            if proc.poll() is not None:
                break
            if health != "up":
                time.sleep(0.2)
        assert health == "up", f"targets: {last}; prometheus exited: {proc.poll()}"
        assert last[0]["scrapeUrl"] == metrics.url
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


# ------------------------------------------------------------------ the Grafana dashboard

_NAME = re.compile(r"\b((?:pgbarrier|process)_[a-z0-9_]+)")
_SUFFIXES = ("_bucket", "_count", "_sum", "_total", "_created")


def _expressions(node) -> Iterator[str]:
    if isinstance(node, dict):
        for key, value in node.items():
            if key in ("expr", "query") and isinstance(value, str):
                yield value
            else:
                yield from _expressions(value)
    elif isinstance(node, list):
        for item in node:
            yield from _expressions(item)


def test_the_grafana_dashboard_uses_only_served_metrics(metrics):
    dashboard = json.loads(DASHBOARD.read_text())
    exprs = list(_expressions(dashboard))
    assert len(exprs) >= 6
    used = {name for expr in exprs for name in _NAME.findall(expr)}
    scrape = metrics.scrape()
    served = set(scrape.samples)
    missing = sorted(used - served)
    assert not missing, f"the dashboard queries metrics the endpoint does not serve: {missing}"
    for topic in ("pgbarrier_database_paused", "pgbarrier_barrier_collect_seconds_bucket",
                  "pgbarrier_refresh_runs_total", "pgbarrier_refresh_lateness_seconds_bucket",
                  "pgbarrier_client_connections", "pgbarrier_statements_total"):
        assert topic in used, topic
    # importable as it is: a datasource input or variable, a current schema version
    assert dashboard["schemaVersion"] >= 36
    inputs = [i["name"] for i in dashboard.get("__inputs", [])]
    variables = [v["name"] for v in dashboard["templating"]["list"] if v["type"] == "datasource"]
    assert "DS_PROMETHEUS" in inputs or variables


# ------------------------------------------------------------------ the upstream byte relay

def test_statements_relayed_as_bytes_to_an_upstream_are_counted():
    from tests.conftest import UPSTREAM, require_postgres, reset_upstream_database

    reset_upstream_database(require_postgres(), "dev")
    srv = start_server("--metrics-port", "0", "--upstream", UPSTREAM)
    try:
        metrics = MetricsServer(srv)
        total = "pgbarrier_statements_total"
        before = metrics.scrape()
        began = time.monotonic()
        with metrics.connect() as conn:
            conn.execute("SELECT 1; SELECT 2")  # one relayed Query, two statements
            conn.execute("SELECT %s::int", (3,))  # a relayed extended-protocol batch
            with pytest.raises(psycopg.errors.UndefinedTable):
                conn.execute("SELECT * FROM no_such_table")
            with pytest.raises(psycopg.errors.InvalidTextRepresentation):
                conn.execute("SELECT %s::int", ("x",))
            conn.execute("SHOW DATABASES")  # control: the full path
        took = time.monotonic() - began
        after = metrics.scrape()

        def moved(**labels: str) -> float:
            return after.value(total, database="dev", **labels) - \
                before.value(total, database="dev", **labels)

        # each relayed duration runs from when the connection read the batch: within the
        # block's wall time, not from some earlier clock reading
        durations = "pgbarrier_statement_duration_seconds_sum"
        spent = after.value(durations, route="relayed") - before.value(durations, route="relayed")
        assert 0 < spent <= took
        assert moved(route="relayed", sqlstate_class="00") == 3
        assert moved(route="relayed", sqlstate_class="42") == 1
        assert moved(route="relayed", sqlstate_class="22") == 1
        assert moved(route="control", sqlstate_class="00") == 1
    finally:
        assert stop_server(srv) == 0, "server did not exit cleanly:\n" + "".join(srv.log)
