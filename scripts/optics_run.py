"""Starts `optics run` for the scripts that drive it (the MCP client checks, the hardening run):
a fresh data directory, 25 underlyings, one seeded session, a fixed start."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

# The checks make about seventy calls a minute per transport, past the interface's 60; the
# limits themselves are tested elsewhere, so the servers these scripts start get more.
GENEROUS_LIMITS = ["--rate-per-minute", "10000", "--rate-per-hour", "100000"]

# A debug build on a loaded 2-core CI machine answers some calls slowly; the HTTP server's
# 30 s answer deadline would turn them into 503s that say nothing about the tools.
SLOW_MACHINE = ["--request-timeout-secs", "300"]


def start_run(optics: str, data_dir: Path, extra: tuple[str, ...] = ()) -> tuple[subprocess.Popen, str]:
    """`optics run` on `data_dir` (25 underlyings, one seeded session, a fixed start), with
    `extra` arguments; returns the process and its address once it listens."""
    log = open(data_dir / "run-log.txt", "w")
    process = subprocess.Popen(
        [optics, "run", "--listen", "127.0.0.1:0", "--universe", "25",
         "--seed-sessions", "1", "--history-years", "1",
         "--start", "2026-11-20T15:00:00Z", "--cycle-ms", "500",
         *GENEROUS_LIMITS, *SLOW_MACHINE, *extra, "--data-dir", str(data_dir)],
        stdout=subprocess.PIPE, stderr=log, text=True,
        env={k: v for k, v in os.environ.items() if k != "RUST_LOG"},
    )
    for line in process.stdout:
        match = re.search(r"listening on http://(\S+)", line)
        if match:
            return process, match.group(1)
    raise SystemExit("optics run exited before listening; see run-log.txt")
