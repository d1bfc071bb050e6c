#!/usr/bin/env python3
"""The dashboard in a real browser: headless Chromium (Debian's) driven by Playwright.

    .venv-browser/bin/python scripts/browser/dashboard_check.py --optics target/debug/optics \
        [--out target/dashboard] [--chromium /usr/bin/chromium]

Starts `optics run` on a fresh data directory (two seeded sessions, a live market replayed from
2026-11-20 10:00 New York), opens `/`, signs in with the local account's e-mail and password
(the files `optics run` writes), then for SPY and AAPL picks the ticker and waits for every
panel: each must draw (a chart canvas with ink on it, or its table or figures), none may show
an error, and the page may log no console error. Writes a full-page screenshot per ticker into
--out. Exits non-zero on any failure (`make test-browser`, part of `make test`).
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

from playwright.sync_api import sync_playwright

PANELS = ["gex", "expected-move", "term", "cone", "smile", "heatmap", "flow", "earnings", "screen"]
CHART_PANELS = {"gex", "term", "cone", "smile", "heatmap"}

# Counts the canvas pixels with ink on them in a panel (uPlot's or the heat map's canvas).
INK = """(panel) => {
  let ink = 0;
  for (const canvas of panel.querySelectorAll("canvas")) {
    const data = canvas.getContext("2d").getImageData(0, 0, canvas.width, canvas.height).data;
    for (let i = 3; i < data.length; i += 4) if (data[i] > 0) ink++;
  }
  return ink;
}"""


def start_service(optics: str, data_dir: str):
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPTICS_")}
    process = subprocess.Popen(
        [optics, "run", "--data-dir", data_dir, "--listen", "127.0.0.1:0",
         "--seed-sessions", "2", "--history-years", "1", "--start", "2026-11-20T15:00:00Z"],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
    deadline = time.monotonic() + 600
    seen = []
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        seen.append(line)
        if m := re.search(r"listening on (http://\S+)", line):
            return process, m.group(1)
    process.kill()
    sys.exit("optics run did not start:\n" + "".join(seen[-40:]))


def check_ticker(page, ticker: str, out: str) -> list:
    failures = []
    page.fill("#ticker", ticker)
    page.click("#ticker-form button[type=submit]")
    # The page marks the ticker whose panels have all answered (drawn or refused).
    page.wait_for_function("(t) => document.body.dataset.loaded === t", arg=ticker,
                           timeout=120_000)
    for name in PANELS:
        panel = page.locator(f'[data-panel="{name}"]')
        state = panel.get_attribute("data-state")
        if state != "drawn":
            failures.append(f"{ticker} {name}: {state}: {panel.inner_text()[:300]}")
            continue
        if name in CHART_PANELS:
            ink = panel.evaluate(INK)
            if ink < 500:
                failures.append(f"{ticker} {name}: the chart has only {ink} inked pixels")
        else:
            text = panel.locator(".body").inner_text().strip()
            if not text:
                failures.append(f"{ticker} {name}: nothing shown")
        # When the data is from: its instant, or for a market-wide screen (no instant of its
        # own) the session, and LIVE or EOD.
        asof = panel.locator(".asof").inner_text().strip()
        if ("as of" not in asof and "session" not in asof) or not ("LIVE" in asof or "EOD" in asof):
            failures.append(f"{ticker} {name}: no as-of line ({asof!r})")
    path = os.path.join(out, f"dashboard-{ticker}.png")
    page.screenshot(path=path, full_page=True)
    print(f"{ticker}: {len(PANELS) - len([f for f in failures if f.startswith(ticker)])} of "
          f"{len(PANELS)} panels drawn; screenshot {path}")
    return failures


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--optics", required=True)
    parser.add_argument("--out", default="target/dashboard")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    data_dir = tempfile.mkdtemp(prefix="optics-dashboard-")
    process, url = start_service(args.optics, data_dir)
    failures = []
    console = []
    try:
        # `email: …` and `password: …`, as `optics run` writes them for the local account.
        with open(os.path.join(data_dir, "local-account-password")) as f:
            fields = dict(line.split(": ", 1) for line in f.read().splitlines() if ": " in line)
        email, password = fields["email"], fields["password"]
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=args.chromium,
                                                 args=["--no-sandbox", "--disable-gpu"])
            page = browser.new_page(viewport={"width": 1400, "height": 1800})
            page.on("console", lambda m: console.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: console.append(str(e)))
            page.goto(url + "/")
            page.wait_for_selector("#sign-in-form", state="visible")
            page.fill("#email", email)
            page.fill("#password", password)
            # Before signing in the page is told 401 (no session yet), which Chromium logs as a
            # failed load: what counts starts with the signed-in page.
            console.clear()
            page.click("#sign-in-form button[type=submit]")
            try:
                page.wait_for_selector("#panels", state="visible", timeout=30_000)
            except Exception:
                shown = page.evaluate("""() => [document.querySelector("#sign-in-error").textContent,
                                                 document.querySelector("#page-error").textContent]""")
                raise SystemExit(f"the dashboard did not open after signing in: {shown}; "
                                 f"console: {console}")
            # No token in any URL the page opened, and none stored where a script could keep it.
            stored = page.evaluate("() => localStorage.length + sessionStorage.length")
            if stored:
                failures.append(f"the page stored {stored} items in web storage")
            for ticker in ["SPY", "AAPL"]:
                failures += check_ticker(page, ticker, args.out)
            browser.close()
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
        shutil.rmtree(data_dir, ignore_errors=True)
    failures += [f"console: {line}" for line in console]
    for failure in failures:
        print(failure, file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
