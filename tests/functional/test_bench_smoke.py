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
