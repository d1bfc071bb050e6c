"""Reference values for /borrow-rate and /price-context, recomputed with pandas and numpy.

Writes compute/tests/data/borrow_context_vectors.json from a deterministic fee series
(percent per year: a noisy base near 0.8 % with planted multiplicative bursts and a
hard-to-borrow stretch) and a deterministic close series. Nothing is read from the Rust crate;
the rules are the ones stated in api/docs/reference.md:

- z-score of day i: (fee_i - mean) / sample std (ddof=1) of the up to 60 fees before it,
  none with fewer than 20 before it; spike at z >= 3; severity cut-offs 3 / 4.5 / 6.
- class thresholds 1 / 5 / 20 percent; 1y percentile = share of the last 252 fees strictly
  below the latest; borrow2yr = mean of the last 504.
- squeeze = 0.4 * pctile + 0.3 * 100 * clip(z / 6, 0, 1) + 0.3 * 100 * min(streak / 20, 1).
- returns over 5/21/63/126/252 sessions, 52-week range over the last 252 closes.
"""

import json
from pathlib import Path

import numpy as np
import pandas as pd

OUT = Path(__file__).resolve().parents[2] / "compute/tests/data/borrow_context_vectors.json"


def fee_series():
    rng = np.random.default_rng(37)
    n = 600
    fees = 0.8 * np.exp(rng.normal(0.0, 0.05, n))
    for start, mult in [(150, 4.0), (400, 2.5), (598, 6.0)]:
        fees[start : start + 2] *= mult
    htb = np.zeros(n, dtype=bool)
    htb[-7:] = True
    return pd.Series(fees), pd.Series(htb)


def z_scores(fees):
    prior = fees.shift(1)
    mean = prior.rolling(60, min_periods=20).mean()
    std = prior.rolling(60, min_periods=20).std(ddof=1)
    z = (fees - mean) / std
    return [None if pd.isna(v) else float(v) for v in z]


def severity(z):
    if z is None or z < 3.0:
        return "NONE"
    if z < 4.5:
        return "MODERATE"
    if z < 6.0:
        return "HIGH"
    return "EXTREME"


def borrow_class(fee):
    if fee < 1.0:
        return "GENERAL_COLLATERAL"
    if fee < 5.0:
        return "WARM"
    if fee < 20.0:
        return "HARD_TO_BORROW"
    return "SPECIAL"


def main():
    fees, htb = fee_series()
    z = z_scores(fees)
    last_year = fees.iloc[-252:]
    pctile = float((last_year < fees.iloc[-1]).mean() * 100.0)
    streak = 0
    for flag in htb[::-1]:
        if not flag:
            break
        streak += 1
    z_last = z[-1]
    squeeze = (
        0.4 * pctile
        + 0.3 * 100.0 * float(np.clip((z_last or 0.0) / 6.0, 0.0, 1.0))
        + 0.3 * 100.0 * min(streak / 20.0, 1.0)
    )
    sector = [fees.iloc[-1], 0.5, 1.2, 3.0, 0.9]
    own = sector[0]
    med = float(np.median(sector))

    closes = pd.Series(100.0 * np.exp(np.cumsum(np.random.default_rng(7).normal(0.0004, 0.015, 400))))
    returns = {str(n): float((closes.iloc[-1] / closes.iloc[-1 - n] - 1.0) * 100.0) for n in [5, 21, 63, 126, 252]}
    window = closes.iloc[-252:]
    high, low, price = float(window.max()), float(window.min()), float(closes.iloc[-1])

    out = {
        "fees_pct": [float(v) for v in fees],
        "htb": [bool(v) for v in htb],
        "z_scores": z,
        "spikes": [i for i, v in enumerate(z) if v is not None and v >= 3.0],
        "severity_last": severity(z_last),
        "classes": {str(f): borrow_class(f) for f in [0.3, 1.0, 4.99, 5.0, 19.9, 20.0, 35.0]},
        "pctile_1y": pctile,
        "borrow_2yr": float(fees.iloc[-504:].mean()),
        "htb_streak": streak,
        "squeeze_score": squeeze,
        "sector": {
            "fees": [float(v) for v in sector],
            "own": float(own),
            "median": med,
            "ratio": float(own / med),
            "pctile": float((np.array(sector) < own).mean() * 100.0),
        },
        "closes": [float(v) for v in closes],
        "returns": returns,
        "range": {
            "high": high,
            "low": low,
            "position": (price - low) / (high - low) * 100.0,
            "pct_from_high": (price / high - 1.0) * 100.0,
            "pct_from_low": (price / low - 1.0) * 100.0,
        },
        "versions": {"numpy": np.__version__, "pandas": pd.__version__},
    }
    OUT.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
