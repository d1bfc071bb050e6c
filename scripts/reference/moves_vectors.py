#!/usr/bin/env python3
"""Independent reference vectors for the historical move distributions (compute/src/moves.rs).

Writes compute/tests/data/moves_vectors.json (path relative to the repository root):

    .venv-reference/bin/python scripts/reference/moves_vectors.py

Data: a deterministic close series of 1,500 sessions: daily log returns drawn from numpy's
PCG64 generator (seed 20261120), Student-t with 4 degrees of freedom scaled to about 1.2 % a
day, plus a jump of +/-4..9 % every 63rd session (an earnings-like gap, so the share of large
moves is not trivially zero). The closes are written into the JSON, so the Rust test reads
nothing else and does not depend on how the series was drawn.

Every figure is computed here with pandas / numpy, never from the Rust output. For each
horizon h (sessions):

* moves: r_t = 100 * (close_t / close_{t-h} - 1) for every t >= h (overlapping windows),
  pandas `close / close.shift(h) - 1`, NaNs of the first h sessions dropped;
* avg_abs_move_pct = mean |r|; mean_move_pct = mean r; std_dev_pct = pandas std (ddof=1);
* median_move_pct, p10, p25, p75, p90: np.percentile of the signed moves with numpy's default
  "linear" method (rank p*(m - 1));
* max_up_move_pct = max r, max_down_move_pct = min r (both signed);
* pct_moves_above_5 = 100 * share of moves with |r| > 5 (strictly);
* sample_size = number of moves; first_close / last_close = indices of the oldest window's
  first close and the newest window's last close.

A short case (the first 40 closes) checks the edge: h = 39 has one move (no standard
deviation), h = 40 none.

Deterministic: fixed seed, no wall-clock data; only the library versions are recorded.
"""

import math
import os
import platform

import numpy as np
import pandas as pd

from vector_json import write_vectors

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "compute", "tests", "data", "moves_vectors.json")

SESSIONS = 1500
SEED = 20261120
HORIZONS = [1, 5, 7, 14, 21, 30, 63, 252]
SHORT_SESSIONS = 40
SHORT_HORIZONS = [1, 30, 39, 40]
LARGE_MOVE_PCT = 5.0


def closes() -> np.ndarray:
    rng = np.random.default_rng(SEED)
    log_returns = rng.standard_t(4, size=SESSIONS - 1) * 0.012 / math.sqrt(2.0)
    for i in range(40, SESSIONS - 1, 63):
        size = rng.uniform(0.04, 0.09)
        log_returns[i] += size if rng.uniform() < 0.5 else -size
    return 100.0 * np.exp(np.concatenate([[0.0], np.cumsum(log_returns)]))


def block(close: pd.Series, h: int):
    moves = ((close / close.shift(h) - 1.0) * 100.0).dropna()
    if moves.empty:
        return None
    values = moves.to_numpy()
    p = np.percentile(values, [10, 25, 50, 75, 90])
    std = moves.std(ddof=1)
    return {
        "days": h,
        "sample_size": int(values.size),
        "avg_abs_move_pct": float(np.mean(np.abs(values))),
        "mean_move_pct": float(np.mean(values)),
        "median_move_pct": float(p[2]),
        "std_dev_pct": None if math.isnan(std) else float(std),
        "p10": float(p[0]),
        "p25": float(p[1]),
        "p75": float(p[3]),
        "p90": float(p[4]),
        "max_up_move_pct": float(values.max()),
        "max_down_move_pct": float(values.min()),
        "pct_moves_above_5": float(np.mean(np.abs(values) > LARGE_MOVE_PCT) * 100.0),
        "first_close": int(moves.index[0]) - h,
        "last_close": int(moves.index[-1]),
    }


def case(name: str, values: np.ndarray, horizons) -> dict:
    close = pd.Series(values)
    return {
        "name": name,
        "close": [float(v) for v in values],
        "horizons": horizons,
        "moves": {str(h): block(close, h) for h in horizons},
    }


def main():
    series = closes()
    out = {
        "generator": "scripts/reference/moves_vectors.py",
        "versions": {
            "python": platform.python_version(),
            "numpy": np.__version__,
            "pandas": pd.__version__,
        },
        "source": "deterministic series: numpy PCG64 seed %d, Student-t(4) log returns, "
        "a jump every 63 sessions" % SEED,
        "large_move_pct": LARGE_MOVE_PCT,
        "cases": [
            case("full", series, HORIZONS),
            case("short", series[:SHORT_SESSIONS], SHORT_HORIZONS),
        ],
    }
    write_vectors(OUT, out, separators=(",", ":"))
    print("wrote", OUT, os.path.getsize(OUT), "bytes")


if __name__ == "__main__":
    main()
