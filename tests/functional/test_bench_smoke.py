"""Each benchmark runs once at a tiny size so it cannot rot (no timing is asserted)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench"


def test_control_roundtrip_bench_runs():
    out = subprocess.run([sys.executable, str(BENCH / "control_roundtrip.py"), "--rounds", "3"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "PAUSE->RESUME round trips: n=3 " in out.stdout


def test_refresh_lateness_bench_runs():
    out = subprocess.run([sys.executable, str(BENCH / "refresh_lateness.py"), "--runs", "2",
                          "--views", "2", "--barrier-interval-ms", "100"],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "scheduled refresh lateness: n=" in out.stdout


def test_startup_time_bench_runs():
    out = subprocess.run([sys.executable, str(BENCH / "startup_time.py"), "--databases", "2",
                          "--jobs-per-db", "1", "--rounds", "1", "--meta", "sqlite"],
                         capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, out.stderr
    assert "| sqlite | 3 | 2 | 1 |" in out.stdout, out.stdout


# --------------------------------------------------------------------------- make bench's suite
# Each benchmark of bench/run_all.py once at its smoke size (figures mean nothing), then the
# report rendered from what they wrote. A target that is not installed here (PgBouncer, the
# buenavista venv of `make bench`, PostgreSQL, py-spy) is recorded as skipped in its JSON by the
# benchmark itself, so these tests pass without them.

import json  # noqa: E402

import pytest  # noqa: E402

SUITE = ["classifier", "dialect", "create_latency", "memory", "scale", "profile", "duckdb", "passthrough",
         "streaming_memory", "connection_flood", "history_startup", "duckdb_overhead",
         "pause_under_load", "thread_hop", "failover", "instructions", "result_rows",
         "column_types"]


@pytest.fixture(scope="module")
def bench_results(tmp_path_factory):
    return tmp_path_factory.mktemp("bench-results")


@pytest.mark.parametrize("name", SUITE)
def test_bench_suite_runs(bench_results, name):
    out = subprocess.run([sys.executable, str(BENCH / "run_all.py"), "--smoke", "--only", name,
                          "--results", str(bench_results), "--no-report"],
                         capture_output=True, text=True, timeout=180)
    log = bench_results / f"{name}.log"
    detail = out.stdout + out.stderr + (log.read_text() if log.exists() else "")
    assert out.returncode == 0, detail
    result = json.loads((bench_results / f"{name}.json").read_text())
    assert result["benchmark"] == name, detail


def test_bench_report_renders(bench_results, tmp_path):
    out = subprocess.run([sys.executable, str(BENCH / "report.py"), "--results",
                          str(bench_results), "--output", str(tmp_path / "BENCHMARKS.md")],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    text = (tmp_path / "BENCHMARKS.md").read_text()
    for heading in ("## Pass-through overhead", "## Embedded DuckDB", "## Control plane",
                    "## Scale of the barrier manager", "## The classifier on its own",
                    "## PostgreSQL's dialect on DuckDB",
                    "## Where the pass-through path spends its time",
                    "## Streaming results", "## Rows out of a large result",
                    "## A flood of connections",
                    "## Start-up with 1,000,000 refresh-history rows",
                    "## The event-loop core (issue 13)"):
        assert heading in text, heading
