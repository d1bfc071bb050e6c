#!/usr/bin/env python3
"""Independent reference vectors for the relative-value math (compute/src/relative_value.rs)
and the compare series (compute::correlation::rolling).

Writes compute/tests/data/relative_value_vectors.json (path relative to the repository root):

    .venv-reference/bin/python scripts/reference/relative_value_vectors.py

Data: a seeded numpy generator (PCG64, seed 37). A benchmark IV series of 320 weekdays from
2025-06-02 (15 + 2.5 x standard normal, floored at 8) and a ticker IV = benchmark x
(1.8 + 0.1 x normal), the ticker missing every 17th weekday and the benchmark every 23rd, so
the join drops dates. A pair of daily log-return series on the same weekdays: y ~ N(0, 1 %),
x = 1.2 y + N(0, 0.8 %), y missing every 19th session. Inputs and expected figures are both
written into the JSON.

Every figure is computed here with pandas, never from the Rust output:

* ratio series: inner join on dates, ratio = ticker / benchmark;
* avg_1m = mean of the last 21 ratios; the 1y window = the last up to 252 ratios (current
  included), its mean, sample std (ddof=1), z = (current - mean) / std, percentile = share of
  the window strictly below the current ratio x 100, bands mean + k std for k = -2, -1, 1, 2
  with implied IV = band x the last joined benchmark IV; the same statistics at every one of
  the last 40 prefixes of the ratio series (a prefix shorter than 60 has no 1y statistics);
* rolling 21 / 252 Pearson correlation (pandas rolling corr) and 21 beta = rolling sample cov
  / rolling sample var of y, on the joined returns; the last 300 joined sessions.

Deterministic: seeded generator, no wall-clock data.
"""

import os

import numpy as np
import pandas as pd

from vector_json import write_vectors

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "compute", "tests", "data", "relative_value_vectors.json")

N = 320
W1M, W1Y, MIN_1Y = 21, 252, 60
PREFIXES = 40
SERIES = 300


def nan_none(v):
    return None if v is None or (isinstance(v, float) and np.isnan(v)) else float(v)


def stats(ratios: pd.Series, bench_last: float):
    cur = float(ratios.iloc[-1])
    y = ratios.iloc[-W1Y:]
    out = {
        "current": cur,
        "avg_1m": float(ratios.iloc[-W1M:].mean()) if len(ratios) >= W1M else None,
        "avg_1y": None,
        "std_1y": None,
        "z": None,
        "percentile": None,
        "bands": [],
    }
    if len(y) >= MIN_1Y:
        m, s = float(y.mean()), float(y.std(ddof=1))
        out.update(
            avg_1y=m,
            std_1y=s,
            z=(cur - m) / s if s > 0 else None,
            percentile=float((y < cur).sum()) / len(y) * 100.0,
            bands=[[k, m + k * s, (m + k * s) * bench_last] for k in (-2.0, -1.0, 1.0, 2.0)],
        )
    return out


def main():
    rng = np.random.Generator(np.random.PCG64(37))
    dates = pd.bdate_range("2025-06-02", periods=N)
    bench = np.maximum(15.0 + 2.5 * rng.standard_normal(N), 8.0)
    ticker = bench * (1.8 + 0.1 * rng.standard_normal(N))
    t = pd.Series(ticker, index=dates)[[i % 17 != 16 for i in range(N)]]
    b = pd.Series(bench, index=dates)[[i % 23 != 22 for i in range(N)]]
    joined = pd.concat([t.rename("t"), b.rename("b")], axis=1, join="inner")
    ratios = joined["t"] / joined["b"]
    prefixes = []
    for k in range(len(ratios) - PREFIXES + 1, len(ratios) + 1):
        prefixes.append(
            {"len": k, **stats(ratios.iloc[:k], float(joined["b"].iloc[k - 1]))}
        )

    yr = 0.01 * rng.standard_normal(N)
    xr = 1.2 * yr + 0.008 * rng.standard_normal(N)
    xs = pd.Series(xr, index=dates)
    ys = pd.Series(yr, index=dates)[[i % 19 != 18 for i in range(N)]]
    pair = pd.concat([xs.rename("x"), ys.rename("y")], axis=1, join="inner")
    c1m = pair["x"].rolling(W1M).corr(pair["y"])
    c1y = pair["x"].rolling(W1Y).corr(pair["y"])
    b1m = pair["x"].rolling(W1M).cov(pair["y"]) / pair["y"].rolling(W1M).var(ddof=1)
    tail = pair.index[-SERIES:]
    rolling = [
        [d.strftime("%Y-%m-%d"), nan_none(c1m[d]), nan_none(c1y[d]), nan_none(b1m[d])]
        for d in tail
    ]

    doc = {
        "generator": "scripts/reference/relative_value_vectors.py",
        "ticker_iv": [[d.strftime("%Y-%m-%d"), float(v)] for d, v in t.items()],
        "benchmark_iv": [[d.strftime("%Y-%m-%d"), float(v)] for d, v in b.items()],
        "joined": len(ratios),
        "ratios_tail": [float(v) for v in ratios.iloc[-5:]],
        "prefixes": prefixes,
        "x_returns": [[d.strftime("%Y-%m-%d"), float(v)] for d, v in xs.items()],
        "y_returns": [[d.strftime("%Y-%m-%d"), float(v)] for d, v in ys.items()],
        "rolling_days": SERIES,
        "rolling": rolling,
    }
    write_vectors(OUT, doc, indent=1)


if __name__ == "__main__":
    main()
