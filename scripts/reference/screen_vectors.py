#!/usr/bin/env python3
"""Independent reference for the screens' membership (api/src/handlers/screeners/screen.rs over
compute/src/screen.rs and the cores row).

Writes compute/tests/data/screen_vectors.json (path relative to the repository root):

    .venv-reference/bin/python scripts/reference/screen_vectors.py

Data: a seeded universe of 16 stocks in three sectors (numpy PCG64, seed 41), each with 300
stored sessions before 2026-11-20 of closes (a random walk), iv30d, iv90d and the 30-day smile
slope, some with a planted ending (an IV spike or slump over the last sessions, a steep term
structure, a flattened skew). Inputs and expected memberships are both written into the JSON;
the Rust test (api/tests/screen_reference.rs) stores the series in an in-memory market, asks
/screen for each preset and compares.

Every figure is computed here with pandas / numpy from the raw series, never from the Rust
output, with the documented definitions:

* today's iv30d is the last stored one; its one-year statistics are over the 252 values before
  it: mean, sample standard deviation (ddof=1), percentile = share strictly below x 100;
* hv20d = sample std (ddof=1) of the last 20 daily log returns of the closes x sqrt(252) x 100;
* vrp = iv30d - hv20d; contango = iv90d - iv30d;
* skew_pctile = 100 - (share of the 252 slopes before today's strictly below today's x 100);
* the presets' thresholds and orders are those printed in each screen's `rule`.
Deterministic: fixed seed, no wall-clock data.
"""

import math
import os

import numpy as np
import pandas as pd

from vector_json import write_vectors

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "compute", "tests", "data", "screen_vectors.json")

SESSIONS = 300
SECTORS = ["Energy", "Utilities", "Information Technology"]


def sessions():
    days = pd.bdate_range(end="2026-11-19", periods=SESSIONS)
    return [d.strftime("%Y-%m-%d") for d in days]


def universe(rng):
    names = []
    for i in range(16):
        symbol = "S" + chr(ord("A") + i) * 3
        base = float(rng.uniform(15.0, 60.0))
        closes = 50.0 * np.exp(np.cumsum(rng.normal(0.0, 0.015 + 0.002 * (i % 5), SESSIONS)))
        phase = rng.uniform(0, 6.3)
        t = np.arange(SESSIONS)
        iv30 = base * (1.0 + 0.15 * np.sin(0.05 * t + phase)) + rng.normal(0, 0.5, SESSIONS)
        term = rng.uniform(-1.0, 2.0)
        iv90 = iv30 + term + rng.normal(0, 0.2, SESSIONS)
        slope = -30.0 + 5.0 * np.sin(0.07 * t + phase) + rng.normal(0, 0.8, SESSIONS)
        ending = i % 5
        if ending == 1:  # IV spike over the last five sessions
            iv30[-5:] *= np.linspace(1.2, 2.0, 5)
        elif ending == 2:  # IV slump
            iv30[-5:] *= np.linspace(0.9, 0.5, 5)
        elif ending == 3:  # steep term structure and flattened skew
            iv90[-1] = iv30[-1] + 6.0
            slope[-1] = -12.0
        names.append({
            "symbol": symbol,
            "sector": SECTORS[i % 3],
            "market_cap": float([5e8, 2e9, 3e10, 8e10, 1.5e11][i % 5] * (1 + i / 10)),
            "closes": [float(round(c, 6)) for c in closes],
            "iv30d": [float(round(v, 6)) for v in iv30],
            "iv90d": [float(round(v, 6)) for v in iv90],
            "slope": [float(round(v, 6)) for v in slope],
        })
    return names


def figures(name):
    iv = pd.Series(name["iv30d"])
    today, prior = iv.iloc[-1], iv.iloc[-253:-1]
    mean, std = prior.mean(), prior.std(ddof=1)
    pctile = float((prior < today).sum()) / len(prior) * 100.0
    closes = pd.Series(name["closes"])
    returns = np.log(closes / closes.shift(1)).dropna().iloc[-20:]
    hv20 = returns.std(ddof=1) * math.sqrt(252.0) * 100.0
    slope = pd.Series(name["slope"])
    s_today, s_prior = slope.iloc[-1], slope.iloc[-253:-1]
    skew_pctile = 100.0 - float((s_prior < s_today).sum()) / len(s_prior) * 100.0
    return {
        "iv30d": today,
        "hv20d": hv20,
        "vrp": today - hv20,
        "iv_percentile": pctile,
        "z": (today - mean) / std,
        "contango": name["iv90d"][-1] - today,
        "skew_pctile": skew_pctile,
    }


PRESETS = {
    # name: (figure, keep, descending, by absolute value)
    "high_iv_rank": ("iv_percentile", lambda v: v >= 80.0, True, False),
    "low_iv_rank": ("iv_percentile", lambda v: v <= 20.0, False, False),
    "high_vrp": ("vrp", lambda v: v >= 5.0, True, False),
    "high_skew": ("skew_pctile", lambda v: v >= 80.0, True, False),
    "steep_contango": ("contango", lambda v: v >= 3.0, True, False),
    "mean_reversion": ("z", lambda v: abs(v) >= 2.0, True, True),
}


def main():
    rng = np.random.Generator(np.random.PCG64(41))
    names = universe(rng)
    table = pd.DataFrame([{"symbol": n["symbol"], "market_cap": n["market_cap"], **figures(n)}
                          for n in names])
    screens = {}
    for floor in (0.0, 1e9):
        admitted = table[table.market_cap >= floor]
        for preset, (figure, keep, descending, absolute) in PRESETS.items():
            members = admitted[admitted[figure].map(keep)].copy()
            members["key"] = members[figure].abs() if absolute else members[figure]
            members = members.sort_values(["key", "symbol"], ascending=[not descending, True],
                                          kind="mergesort")
            screens[f"{preset}@{int(floor)}"] = {
                "members": list(members.symbol),
                "metric": [float(v) for v in members[figure]],
                "scanned": int(len(admitted)),
            }
    out = {
        "generator": "scripts/reference/screen_vectors.py (numpy PCG64 seed 41, pandas)",
        "numpy": np.__version__,
        "pandas": pd.__version__,
        "sessions": sessions(),
        "names": names,
        "screens": screens,
    }
    write_vectors(OUT, out, indent=1)
    nonempty = sum(1 for s in screens.values() if s["members"])
    print(f"wrote {OUT}: {len(names)} names, {len(screens)} screens ({nonempty} non-empty)")


if __name__ == "__main__":
    main()
