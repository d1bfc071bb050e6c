#!/usr/bin/env python3
"""Holds optics' HTTP API to its own OpenAPI document with Schemathesis.

Starts `optics run` on a fresh, seeded data directory (25 underlyings, one session, a fixed
start; limits and the monthly budget raised so the cases reach the handlers), then runs
Schemathesis over every operation of `/api/mcp/data/openapi.json` with the local account's
token, and fails unless

  * at least --min-cases test cases ran (10,000 by default),
  * no check failed: no server error (5xx), no status code, content type, header or body
    outside what the document says, no request the document calls invalid accepted, no
    operation that answers without the token, no undocumented method answered.

Not run: `positive_data_acceptance` (a request the document allows but the data refuses --
an expiration that is not listed, a date that has not closed -- is a correct 400 the document
cannot express), and the stateful phase and its resource checks (`use_after_free`,
`ensure_resource_availability`, `object_level_authorization`): every data operation is a read
or a computation on the request alone, so there are no resources to link.

Run by `make test-hardening`; the Schemathesis version is pinned in requirements.txt.

    python scripts/hardening/schemathesis_run.py --optics target/service/optics
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
from pathlib import Path
from xml.etree import ElementTree

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from optics_run import start_run  # noqa: E402  (the seeded `optics run` the MCP checks use)

CHECKS_LEFT_OUT = [
    "positive_data_acceptance",
    "use_after_free",
    "ensure_resource_availability",
    "object_level_authorization",
]
# The budget every case spends from; the interface's limits are tested elsewhere.
BUDGETS = ["--plan-budgets", "pro=1000000000,premium=1000000000,basic=1000000000"]


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--optics", required=True)
    parser.add_argument("--schemathesis", default="schemathesis")
    parser.add_argument("--max-examples", type=int, default=150)
    parser.add_argument("--min-cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=20261129)
    parser.add_argument("--report", default="target/schemathesis")
    options = parser.parse_args()
    optics = str(Path(options.optics).resolve())
    report_dir = Path(options.report).resolve()
    report_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="optics-hardening-") as tmp:
        data_dir = Path(tmp)
        process, address = start_run(optics, data_dir, tuple(BUDGETS))
        try:
            token = (data_dir / "api-token").read_text().strip()
            command = [
                options.schemathesis, "run", f"http://{address}/api/mcp/data/openapi.json",
                "--header", f"Authorization: Bearer {token}",
                "--phases", "examples,coverage,fuzzing",
                "--checks", "all",
                "--exclude-checks", ",".join(CHECKS_LEFT_OUT),
                "--max-examples", str(options.max_examples),
                "--seed", str(options.seed),
                # No example database between runs: the seed alone decides the cases.
                "--generation-database", "none",
                "--workers", "2",
                "--request-timeout", "120",
                "--suppress-health-check", "too_slow,filter_too_much",
                "--report", "junit",
                "--report-dir", str(report_dir),
                "--no-color",
            ]
            run = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
            cases = 0
            for line in run.stdout:
                print(line, end="")
                # The summary says "Test cases:" and, on its next line, "10650 generated, …".
                match = re.match(r"\s*(\d+) generated\b", line)
                if match:
                    cases = int(match.group(1))
            returncode = run.wait()
        finally:
            process.terminate()
            process.wait(timeout=60)
    failures, api_errors, tool_errors = verdicts(report_dir)
    print(f"schemathesis: {cases} test cases; {failures} failed checks, {api_errors} errors "
          f"reaching the API, {tool_errors} errors inside the tool (exit status {returncode})")
    if failures or api_errors or (returncode != 0 and not tool_errors):
        print("schemathesis found failures (listed above)", file=sys.stderr)
        return 1
    if cases < options.min_cases:
        print(f"only {cases} test cases ran; at least {options.min_cases} are required",
              file=sys.stderr)
        return 1
    return 0


def verdicts(report_dir: Path) -> tuple[int, int, int]:
    """From the newest JUnit report: failed checks, errors reaching the API (a network error,
    a timeout) and errors inside Schemathesis itself ("Runtime Error": its generator or
    Hypothesis failing, which says nothing of the API; they are listed above)."""
    reports = sorted(report_dir.glob("junit-*.xml"), key=lambda p: p.stat().st_mtime)
    if not reports:
        return 1, 0, 0
    failures = api_errors = tool_errors = 0
    for case in ElementTree.parse(reports[-1]).getroot().iter("testcase"):
        for outcome in case:
            if outcome.tag == "failure":
                failures += 1
            elif outcome.tag == "error":
                if (outcome.text or "").startswith("Runtime Error"):
                    tool_errors += 1
                else:
                    api_errors += 1
    return failures, api_errors, tool_errors


if __name__ == "__main__":
    sys.exit(main())
