#!/usr/bin/env python3
"""Independent reference vectors for the correlation math (compute/src/correlation.rs).

Writes compute/tests/data/stock_vectors.json (path relative to the repository root):

    .venv-reference/bin/python scripts/reference/stock_vectors.py

Data: the last 600 sessions of the S&P 500 daily closes bundled with the `arch` package
(`arch.data.sp500`) as the benchmark, and a deterministic second series on the same sessions
less every 13th one: its log return on session i is 0.7 x the S&P 500's plus
0.01 x sin(1.7 i) x cos(0.3 i), from a first close of 50. Inputs and expected figures are
both written into the JSON, so the Rust test needs nothing else.

Every figure is computed here with pandas, never from the Rust output:

* log returns per series on its own consecutive sessions (numpy log of the close ratio), dated
  by the later session, then joined on the dates both hold (pandas inner join);
* rolling 21- and 252-return Pearson correlations (pandas rolling corr) and the 21- and
  252-return betas = rolling sample cov / rolling sample var of the benchmark (ddof=1), on the
  joined returns; the last 320 joined sessions' values, null where a window is not full;
* the current 1m and 1y figures, the last value of each rolling series.

Deterministic: no randomness, no wall-clock data.
"""

import math
import os

import numpy as np
import pandas as pd
from arch.data import sp500

from vector_json import write_vectors

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "compute", "tests", "data", "stock_vectors.json")

SESSIONS = 600
SERIES = 320


def none_if_nan(v):
    return None if v is None or (isinstance(v, float) and math.isnan(v)) else float(v)


def main():
    data = sp500.load().iloc[-SESSIONS:]
    bench = pd.Series(data["Close"].astype(float).values, index=data.index)
    bench_ret = np.log(bench / bench.shift(1)).dropna()

    second_index = [d for i, d in enumerate(bench.index) if i % 13 != 12]
    closes = [50.0]
    for i in range(1, len(bench)):
        r = 0.7 * math.log(bench.iloc[i] / bench.iloc[i - 1]) + 0.01 * math.sin(1.7 * i) * math.cos(0.3 * i)
        closes.append(closes[-1] * math.exp(r))
    full_second = pd.Series(closes, index=bench.index)
    second = full_second.loc[second_index]
    second_ret = np.log(second / second.shift(1)).dropna()

    joined = pd.concat([second_ret.rename("x"), bench_ret.rename("y")], axis=1, join="inner")
    out_series = []
    roll = {}
    for n in (21, 252):
        roll[f"corr{n}"] = joined["x"].rolling(n).corr(joined["y"])
        roll[f"beta{n}"] = joined["x"].rolling(n).cov(joined["y"]) / joined["y"].rolling(n).var()
    for d in joined.index[-SERIES:]:
        out_series.append(
            {
                "date": d.date().isoformat(),
                "correl_1m": none_if_nan(roll["corr21"].loc[d]),
                "correl_1y": none_if_nan(roll["corr252"].loc[d]),
                "beta_1m": none_if_nan(roll["beta21"].loc[d]),
            }
        )
    last = joined.index[-1]
    vectors = {
        "benchmark": [[d.date().isoformat(), float(c)] for d, c in bench.items()],
        "second": [[d.date().isoformat(), float(c)] for d, c in second.items()],
        "joined_returns": len(joined),
        "current": {
            "correlation_1m": none_if_nan(roll["corr21"].loc[last]),
            "correlation_1y": none_if_nan(roll["corr252"].loc[last]),
            "beta_1m": none_if_nan(roll["beta21"].loc[last]),
            "beta_1y": none_if_nan(roll["beta252"].loc[last]),
        },
        "series_days": SERIES,
        "series": out_series,
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    write_vectors(OUT, vectors, indent=1)
    print(f"wrote {OUT}: {len(joined)} joined returns, {len(out_series)} series rows")


if __name__ == "__main__":
    main()
