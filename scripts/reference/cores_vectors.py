#!/usr/bin/env python3
"""Independent reference vectors for the cores row (compute/src/cores).

Writes compute/tests/data/cores_vectors.json (path relative to the repository root):

    .venv-reference/bin/python scripts/reference/cores_vectors.py

Data: 320 business days of a deterministic OHLCV series for a stock and for SPY (SPY misses one
session, so the return join is exercised), a stored daily IV history at every constant-maturity
tenor, a daily borrow-fee series, quarterly dividends and two earnings dates. Inputs and
expected figures are both written into the JSON, so the Rust test needs nothing else.

Every figure is computed here with pandas / numpy, never from the Rust output:

* price changes (close / close n sessions back - 1) x 100; highs, lows and range position over
  the last n bars; simple moving averages and the distance from them; mean share volumes;
* close-to-close HV = std(ddof=1) of the last w log returns x sqrt(252) x 100; Parkinson
  sqrt(mean(ln(h/l)^2) / (4 ln 2) x 252) x 100; Garman-Klass sqrt(mean(0.5 ln(h/l)^2 -
  (2 ln 2 - 1) ln(c/o)^2) x 252) x 100; Yang-Zhang from the overnight, open-to-close and
  Rogers-Satchell variances (see `yang_zhang`);
* trailing statistics of a daily series against the n observations before today's: mean,
  std(ddof=1), min, max, percentile = share strictly below today's x 100, rank = (today - min) /
  (max - min) x 100 clipped to 0..100 (at least min(n, 20) observations); changes = today minus
  the value n observations back;
* forward vol sqrt((s2^2 T2 - s1^2 T1) / (T2 - T1)), contango = iv90d - iv30d;
* Pearson correlation (numpy corrcoef) and beta = cov(ddof=1) / var(ddof=1) of log returns on
  shared sessions, over the last n shared returns;
* dividends in the 365 days up to today (count, sum, yield on the close), the next ex-date;
* earnings dates as YYYYMMDD integers and calendar-day distances;
* the IV at a call delta of a quoted smile: numpy interp, None outside the quoted deltas;
* the implied earnings event of a grid of (T1, iv1, T2, iv2): e^2 = w1 - (w2 - w1)/(T2 - T1) T1,
  the expected absolute move e sqrt(2/pi) x 100 and the ex-event IV sqrt(max(0, s^2 T - e^2)/T);
* a live chain (`chain_cases`): option volume and open interest summed over the expirations
  with time left, their put/call ratios, the strikes with the most open interest and volume
  (calls and puts summed per strike, lowest strike on a tie) over the expirations up to the
  first standard monthly, and, for three earnings reports, `impErnMv` from the first two
  expirations whose close follows the report and the ex-earnings IVs of the 30/60/90-day
  constant-maturity IVs.

Deterministic: a seeded numpy generator, no wall-clock data.
"""

import math
import os

import numpy as np
import pandas as pd

from vector_json import write_vectors

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUT = os.path.join(ROOT, "compute", "tests", "data", "cores_vectors.json")

SESSIONS = 320
TENORS = [("10d", 10), ("20d", 20), ("30d", 30), ("60d", 60), ("90d", 90), ("6m", 180), ("1yr", 365)]
STAT_WINDOWS = [("1m", 21), ("3m", 63), ("1y", 252)]
CHANGES = [("1d", 1), ("1wk", 5), ("1m", 21)]
PRICE_HORIZONS = [("1d", 1), ("1wk", 5), ("2wk", 10), ("1m", 21), ("3m", 63), ("6m", 126), ("1y", 252)]
RANGE_WINDOWS = [("1m", 21), ("3m", 63), ("6m", 126), ("1y", 252)]
SMA_WINDOWS = [20, 50, 200]
VOLUME_WINDOWS = [5, 10, 20, 60, 252]
HV_WINDOWS = [5, 10, 20, 30, 60, 90, 120, 180, 252]
CORREL_WINDOWS = [("1m", 21), ("3m", 63), ("6m", 126), ("1y", 252)]
FORWARD_PAIRS = [("20d", "10d"), ("30d", "20d"), ("60d", "30d"), ("90d", "60d"), ("90d", "30d"),
                 ("6m", "90d"), ("1yr", "6m")]
MIN_OBS = 20


def yang_zhang(bars: pd.DataFrame, w: int) -> float:
    """Yang-Zhang (2000) over the last w sessions of `bars` (w + 1 rows: the first gives the
    close before the window): var(ddof=1) of the overnight returns ln(O_i / C_i-1) and of the
    open-to-close returns ln(C_i / O_i), the mean Rogers-Satchell term
    ln(H/C) ln(H/O) + ln(L/C) ln(L/O), k = 0.34 / (1.34 + (w + 1) / (w - 1)); annualised x 100."""
    o, h, l, c = (bars[col].to_numpy(dtype=float) for col in ("open", "high", "low", "close"))
    overnight = np.log(o[1:] / c[:-1])
    open_close = np.log(c[1:] / o[1:])
    rs = (np.log(h[1:] / c[1:]) * np.log(h[1:] / o[1:])
          + np.log(l[1:] / c[1:]) * np.log(l[1:] / o[1:]))
    assert len(overnight) == w
    k = 0.34 / (1.34 + (w + 1) / (w - 1))
    variance = (pd.Series(overnight).var(ddof=1) + k * pd.Series(open_close).var(ddof=1)
                + (1 - k) * float(rs.mean()))
    return math.sqrt(max(variance, 0.0) * 252) * 100.0

def ohlcv(rng, dates, start, drift_with=None):
    n = len(dates)
    rets = rng.normal(0.0, 0.013, n)
    if drift_with is not None:
        rets = 0.7 * drift_with + rets * 0.6
    rets[0] = 0.0
    close = start * np.exp(np.cumsum(rets))
    open_ = np.concatenate([[start], close[:-1]]) * np.exp(rng.normal(0.0, 0.003, n))
    high = np.maximum(open_, close) * (1.0 + np.abs(rng.normal(0.0, 0.006, n)))
    low = np.minimum(open_, close) * (1.0 - np.abs(rng.normal(0.0, 0.006, n)))
    volume = rng.integers(500_000, 3_000_000, n)
    return pd.DataFrame({"date": dates, "open": open_, "high": high, "low": low, "close": close,
                         "volume": volume}), rets


def trailing(series, n):
    today = series[-1]
    prior = series[:-1][-n:]
    if len(prior) < min(n, MIN_OBS):
        return {k: None for k in ("Mean", "Stdv", "Min", "Max", "Pctile", "Rank")}
    p = pd.Series(prior)
    lo, hi = float(p.min()), float(p.max())
    return {
        "Mean": float(p.mean()),
        "Stdv": float(p.std(ddof=1)),
        "Min": lo,
        "Max": hi,
        "Pctile": float((p < today).mean() * 100.0),
        "Rank": float(np.clip((today - lo) / (hi - lo) * 100.0, 0.0, 100.0)) if hi > lo else None,
    }


def chain_cases(rng, today):
    """One live chain and three pending reports (after the close, before the open, and one whose
    term structure implies no event), each with the chain-derived fields computed by pandas."""
    expired = [today - pd.Timedelta(days=2), today]  # rows of these precede the first open one
    open_exp = [today + pd.Timedelta(days=d) for d in (3, 5, 7, 14, 21, 28, 56, 91)]
    strikes = [80.0 + 2.5 * i for i in range(17)] + [100.37]
    rows = []
    for exp in expired + open_exp:
        for k in strikes:
            def count(lo, hi):
                return None if rng.random() < 0.08 else int(rng.integers(lo, hi))
            rows.append({"expiration": exp, "strike": k, "call_volume": count(0, 4000),
                         "put_volume": count(0, 4000), "call_oi": count(0, 20000),
                         "put_oi": count(0, 20000)})
    chain = pd.DataFrame(rows)
    first_open = min(open_exp)
    monthly = [e for e in open_exp if e.weekday() == 4 and 15 <= e.day <= 21]
    last_front = monthly[0] if monthly else max(open_exp)
    front = (chain.expiration >= first_open) & (chain.expiration <= last_front)
    # Plant a tie for the most open interest: a higher strike brought level with the leader.
    totals = (chain[front].call_oi.fillna(0) + chain[front].put_oi.fillna(0)).groupby(chain[front].strike).sum()
    leader = totals.idxmax()
    other = max(k for k in totals.index if k > leader or k == max(totals.index) and k != leader)
    idx = chain[front & (chain.strike == other)].index[0]
    chain.loc[idx, "call_oi"] = (0 if pd.isna(chain.loc[idx, "call_oi"]) else chain.loc[idx, "call_oi"]) \
        + float(totals.max() - totals[other])

    live = chain[chain.expiration >= first_open]
    z = lambda col: live[col].fillna(0).sum()
    cv, pv, co, po = z("call_volume"), z("put_volume"), z("call_oi"), z("put_oi")
    f = chain[front]

    def max_strike(a, b):
        t = (f[a].fillna(0) + f[b].fillna(0)).groupby(f.strike).sum().sort_index()
        return float(t.idxmax()) if t.max() > 0 else None

    activity = {"cVolu": float(cv), "pVolu": float(pv), "totVolu": float(cv + pv),
                "cOi": float(co), "pOi": float(po), "totOi": float(co + po),
                "pcVoluRatio": float(pv / cv), "pcOiRatio": float(po / co),
                "oiMaxStrike": max_strike("call_oi", "put_oi"),
                "voluMaxStrike": max_strike("call_volume", "put_volume")}
    assert activity["oiMaxStrike"] == min(leader, other)

    cm = {"10d": 31.0, "20d": 29.5, "30d": 28.0, "60d": 26.0, "90d": 25.0, "6m": 24.0, "1yr": 23.5}
    cases = []
    for timing, report_days, event in [("after_close", 5, 0.05), ("before_open", 5, 0.045),
                                       ("after_close", 40, None)]:
        report = today + pd.Timedelta(days=report_days)
        after = (lambda e: e > report) if timing == "after_close" else (lambda e: e >= report)
        vols = []
        for e in open_exp:
            t = (e - today).days / 365.0
            base = 0.22 + 0.01 * t if event is not None else 0.18 + 0.2 * t
            var = base ** 2 * t + (event ** 2 if event is not None and after(e) else 0.0)
            vols.append({"expiration": e.strftime("%Y-%m-%d"), "years": t,
                         "atm_iv": math.sqrt(var / t) * 100.0})
        reacting = [v for v, e in zip(vols, open_exp) if after(e)]
        (t1, iv1), (t2, iv2) = [(v["years"], v["atm_iv"]) for v in reacting[:2]]
        w1, w2 = (iv1 / 100) ** 2 * t1, (iv2 / 100) ** 2 * t2
        e2 = w1 - (w2 - w1) / (t2 - t1) * t1
        e = math.sqrt(e2) if e2 > 0 else None
        assert (e is None) == (event is None)
        expected = dict(activity)
        expected["impErnMv"] = None if e is None else e * math.sqrt(2 / math.pi) * 100
        reaction = (0 if timing == "before_open" else 1) + report_days
        for tenor, days in [("30d", 30), ("60d", 60), ("90d", 90)]:
            iv = cm[tenor]
            if e is not None:
                value = (math.sqrt(max(0.0, (iv / 100) ** 2 * days / 365 - e * e) / (days / 365)) * 100
                         if reaction <= days else iv)
            else:
                value = None if report_days <= days else iv
            expected[f"exErnIv{tenor}"] = value
        cases.append({"report": report.strftime("%Y-%m-%d"), "timing": timing, "expirations": vols,
                      "expected": expected})
    return {
        "open_expirations": [e.strftime("%Y-%m-%d") for e in open_exp],
        "constant_maturity": cm,
        "rows": [{"expiration": r.expiration.strftime("%Y-%m-%d"), "strike": r.strike,
                  **{c: (None if pd.isna(getattr(r, c)) else int(getattr(r, c)))
                     for c in ("call_volume", "put_volume", "call_oi", "put_oi")}}
                 for r in chain.itertuples()],
        "cases": cases,
    }


def yyyymmdd(d):
    return float(d.year * 10000 + d.month * 100 + d.day)


def main():
    rng = np.random.default_rng(20261120)
    dates = pd.bdate_range("2025-09-01", periods=SESSIONS)
    today = dates[-1]
    spy, spy_rets = ohlcv(rng, dates, 600.0)
    stock, _ = ohlcv(rng, dates, 150.0, drift_with=spy_rets)
    spy = spy.drop(index=200).reset_index(drop=True)  # one SPY session missing

    expected = {}
    c = stock.close
    px = float(c.iloc[-1])
    expected["stkPx"] = px
    for name, n in PRICE_HORIZONS:
        expected[f"stkPxChng{name}"] = float((px / c.iloc[-1 - n] - 1.0) * 100.0)
    for name, n in RANGE_WINDOWS:
        hi = float(stock.high.iloc[-n:].max())
        lo = float(stock.low.iloc[-n:].min())
        expected[f"stkHi{name}"] = hi
        expected[f"stkLo{name}"] = lo
        expected[f"stkRngPos{name}"] = (px - lo) / (hi - lo) * 100.0
    for n in SMA_WINDOWS:
        sma = float(c.iloc[-n:].mean())
        expected[f"stkSma{n}d"] = sma
        expected[f"stkPxVsSma{n}d"] = (px / sma - 1.0) * 100.0
    expected["stkVolu"] = float(stock.volume.iloc[-1])
    for n in VOLUME_WINDOWS:
        expected[f"avgStkVolu{n}d"] = float(stock.volume.iloc[-n:].mean())
    expected["stkVoluRatio20d"] = expected["stkVolu"] / expected["avgStkVolu20d"]

    logret = np.log(c).diff()
    hl2 = np.log(stock.high / stock.low) ** 2
    co2 = np.log(stock.close / stock.open) ** 2
    for w in HV_WINDOWS:
        expected[f"clsHv{w}d"] = float(logret.iloc[-w:].std(ddof=1) * math.sqrt(252) * 100.0)
        expected[f"orHv{w}d"] = float(math.sqrt(hl2.iloc[-w:].mean() / (4 * math.log(2)) * 252) * 100.0)
        gk = float((0.5 * hl2 - (2 * math.log(2) - 1) * co2).iloc[-w:].mean())
        expected[f"gkHv{w}d"] = math.sqrt(max(gk, 0.0) * 252) * 100.0
        expected[f"yzHv{w}d"] = yang_zhang(stock.iloc[-(w + 1):], w)

    # Stored IV history at every tenor (today's value is the last stored row: no live chain).
    t = np.arange(SESSIONS)
    base = 24.0 + 5.0 * np.sin(t * 0.21) + rng.normal(0.0, 0.8, SESSIONS)
    ivs = {}
    for i, (name, days) in enumerate(TENORS):
        ivs[name] = base - 0.4 * i + 0.3 * np.cos(t * 0.05 * (i + 1))
    for name, _ in TENORS:
        s = ivs[name]
        expected[f"iv{name}"] = float(s[-1])
        for cname, n in CHANGES:
            expected[f"iv{name}Chng{cname}"] = float(s[-1] - s[-1 - n])
        for wname, n in STAT_WINDOWS:
            for stat, value in trailing(s, n).items():
                expected[f"iv{name}{stat}{wname}"] = value
    expected["ivPctile1y"] = expected["iv30dPctile1y"]
    expected["ivRank1y"] = expected["iv30dRank1y"]
    days = dict(TENORS)
    for hi, lo in FORWARD_PAIRS:
        t2, t1 = days[hi] / 365.0, days[lo] / 365.0
        var = (ivs[hi][-1] ** 2 * t2 - ivs[lo][-1] ** 2 * t1) / (t2 - t1)
        expected[f"fwd{hi.rstrip('d')}_{lo.rstrip('d')}"] = math.sqrt(var) if var >= 0 else None
    expected["contango"] = float(ivs["90d"][-1] - ivs["30d"][-1])
    slope = -12.0 + 2.0 * np.cos(t * 0.13)
    expected["slope"] = float(slope[-1])
    sl = trailing(slope, 252)
    expected["slopeMean1y"], expected["slopeStdv1y"], expected["slopePctile1y"] = sl["Mean"], sl["Stdv"], sl["Pctile"]

    # Borrow: a fee per session of the last 280, decimal.
    fees = 0.004 + 0.002 * np.sin(np.arange(280) * 0.09) ** 2
    b = fees * 100.0
    expected["borrow30"] = float(b[-1])
    expected["borrowChng1wk"] = float(b[-1] - b[-6])
    expected["borrowChng1m"] = float(b[-1] - b[-22])
    for wname, n in [("1m", 21), ("1y", 252)]:
        for stat, value in trailing(b, n).items():
            if stat != "Rank":
                expected[f"borrow{stat}{wname}"] = value
    expected["htb"] = 0.0

    # Correlations and betas to SPY on shared sessions.
    a = pd.Series(np.log(stock.close.values), index=stock.date).diff().dropna()
    m = pd.Series(np.log(spy.close.values), index=spy.date).diff().dropna()
    joined = pd.concat([a.rename("a"), m.rename("m")], axis=1, join="inner").dropna()
    for wname, n in CORREL_WINDOWS:
        tail = joined.iloc[-n:]
        expected[f"correlSpy{wname}"] = float(np.corrcoef(tail.a, tail.m)[0, 1])
        expected[f"beta{wname}"] = float(tail.a.cov(tail.m) / tail.m.var(ddof=1))

    # Dividends and earnings.
    ex_dates = [pd.Timestamp("2025-11-07"), pd.Timestamp("2026-02-06"), pd.Timestamp("2026-05-08"),
                pd.Timestamp("2026-08-07"), pd.Timestamp("2026-11-06"), pd.Timestamp("2027-02-05")]
    amounts = [0.24, 0.25, 0.25, 0.26, 0.26, 0.27]
    divs = pd.DataFrame({"ex_date": ex_dates, "amount": amounts})
    past = divs[divs.ex_date <= today]
    year = past[(today - past.ex_date).dt.days < 365]
    expected["divAmt"] = float(past.amount.iloc[-1])
    expected["divFreq"] = float(len(year))
    expected["annDiv"] = float(year.amount.sum())
    expected["divYield"] = float(year.amount.sum() / px * 100.0)
    nxt = divs[divs.ex_date > today].ex_date.min()
    expected["nextDiv"] = yyyymmdd(nxt)
    expected["daysToNextDiv"] = float((nxt - today).days)
    reports = [today - pd.Timedelta(days=40), today + pd.Timedelta(days=9)]
    expected["nextErn"] = yyyymmdd(reports[1])
    expected["daysToNextErn"] = 9.0
    expected["lastErn"] = yyyymmdd(reports[0])
    expected["daysSinceLastErn"] = 40.0

    events = []
    for t1, iv1, t2, iv2 in [(0.02, 55.0, 0.06, 38.0), (0.05, 40.0, 0.1, 30.0), (0.03, 30.0, 0.08, 31.0),
                             (0.1, 20.0, 0.2, 20.0)]:
        w1, w2 = (iv1 / 100) ** 2 * t1, (iv2 / 100) ** 2 * t2
        e2 = w1 - (w2 - w1) / (t2 - t1) * t1
        e = math.sqrt(e2) if e2 > 1e-15 else None
        ex30 = None
        if e is not None:
            tt = 30 / 365
            ex30 = math.sqrt(max(0.0, (iv1 / 100) ** 2 * tt - e * e) / tt) * 100
        events.append({"t1": t1, "iv1": iv1, "t2": t2, "iv2": iv2, "event": e,
                       "abs_move_pct": None if e is None else e * math.sqrt(2 / math.pi) * 100,
                       "ex_iv_30d_of_iv1": ex30})

    # Delta smiles: IV at a call delta, linear between the quotes around it (numpy interp),
    # None outside the quoted deltas.
    smiles = []
    for k in range(4):
        deltas = np.sort(rng.uniform(0.03, 0.97, 12 + 3 * k))
        ivs_at = 22.0 + 14.0 * (0.5 - deltas) ** 2 + 3.0 * (0.5 - deltas) + k
        targets = [d / 100 for d in range(5, 100, 5)]
        smiles.append({
            "points": [[float(d), float(v)] for d, v in zip(deltas, ivs_at)],
            "targets": targets,
            "expected": [float(np.interp(t, deltas, ivs_at)) if deltas[0] <= t <= deltas[-1] else None
                         for t in targets],
        })

    chain = chain_cases(rng, today)

    out = {
        "chain": chain,
        "smiles": smiles,
        "today": today.strftime("%Y-%m-%d"),
        "stock": [{"date": r.date.strftime("%Y-%m-%d"), "open": r.open, "high": r.high, "low": r.low,
                   "close": r.close, "volume": int(r.volume)} for r in stock.itertuples()],
        "spy": [{"date": r.date.strftime("%Y-%m-%d"), "open": r.open, "high": r.high, "low": r.low,
                 "close": r.close, "volume": int(r.volume)} for r in spy.itertuples()],
        "iv": {name: [float(v) for v in ivs[name]] for name, _ in TENORS},
        "slope": [float(v) for v in slope],
        "borrow": [{"date": d.strftime("%Y-%m-%d"), "rate": float(f)}
                   for d, f in zip(dates[-280:], fees)],
        "dividends": [{"ex_date": d.strftime("%Y-%m-%d"), "amount": a} for d, a in zip(ex_dates, amounts)],
        "reports": [d.strftime("%Y-%m-%d") for d in reports],
        "expected": expected,
        "events": events,
    }
    write_vectors(OUT, out, indent=1, sort_keys=True)
    print(f"wrote {OUT}: {len(expected)} fields, {len(events)} events")


if __name__ == "__main__":
    main()
