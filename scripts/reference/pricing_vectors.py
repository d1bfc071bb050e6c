#!/usr/bin/env python3
"""Independent reference vectors for European option pricing (BSM and Black-76).

Writes compute/tests/data/pricing_vectors.json (path relative to the repository
root).  Run from anywhere:

    .venv-reference/bin/python scripts/reference/pricing_vectors.py

Sources of truth
----------------
* mpmath: the option value V is implemented directly at high precision
  (base mp.dps = 60) and EVERY Greek is obtained by numerical differentiation
  of V with mp.diff -- never from closed-form Greek formulas.  The closed forms
  of delta/gamma/vega/dual_delta are used only inside sanity asserts.
  Convergence: each pricing case is evaluated at two precisions, D and D+20
  digits (D = 60, raised when some Greek is tiny compared with the spot so
  that the absolute error of the finite-difference stencil stays negligible),
  and every value must agree to 1e-25 relative; the D+20 value is written.
* QuantLib: analytic engine values (first-order Greeks) for cross-checking.
  BSM via EuropeanOption + AnalyticEuropeanEngine with flat curves (only for
  whole-day maturities, so QuantLib's Actual365Fixed year fraction equals the
  `years` field bit for bit); Black-76 via BlackCalculator.

Every float is written with repr (shortest round trip) and mpmath values are
converted with float(mpf), which rounds to nearest at 53 bits.

Deterministic: fixed seeds, no wall-clock data in the output.
"""

import json
import math
import multiprocessing
import os
import platform
import random
import time

import mpmath
from mpmath import mp, mpf
import QuantLib as ql

BASE_DPS = 60
CHECK_EXTRA_DPS = 20
CONV_REL = mpf("1e-25")

SPOT = 100.0
FORWARD = 100.0

PRICE_SKIP = 1e-250         # pricing cases: skip when the option value is below this
GREEK_FLOOR = 1e-290        # ... or when a (non-zero) Greek would be this small (near double underflow)
IV_PRICE_SKIP = 1e-280      # implied-vol cases: skip when price < this
IV_TIMEVALUE_REL = 1e-15    # ... or when time value < this * price (too deep ITM)

N_PRICING_TARGET = 380      # grid cases (plus the hand-picked core set)
N_IV_RANDOM = 1900          # accepted random implied-vol cases
N_IV_ATM = 100              # exactly-ATM implied-vol cases

PRICING_SEED = 20260102
IV_SEED = 19731973

EVAL_DATE = (2, 1, 2026)    # QuantLib evaluation date (d, m, y): 2026-01-02

HOUR = 1.0 / (365.0 * 24.0)
DAY_GRID = [None, 1, 7, 30, 91, 365, 1095]     # None = 1 hour
STRIKE_GRID = [22.5, 37.0, 60.0, 80.0, 90.0, 95.0, 100.0, 105.0, 110.0,
               125.0, 165.0, 270.0, 450.0]       # ln(K/S) from -1.49 to +1.50
VOL_GRID = [0.01, 0.05, 0.15, 0.30, 0.60, 1.0, 2.0, 5.0]
RATE_GRID = [0.0, 0.05, -0.005]
DIV_GRID = [0.0, 0.02]

GREEK_NAMES = ["delta", "gamma", "theta", "vega", "rho", "epsilon", "vanna",
               "charm", "vomma", "veta", "speed", "zomma", "color", "ultima",
               "dual_delta"]
QL_NAMES = ["price", "delta", "gamma", "theta", "vega", "rho", "epsilon", "dual_delta"]

CONVENTIONS = {
    "price": "option value per share (black76: e^{-rT}[F N(d1) - K N(d2)] for a call)",
    "underlying": "bsm: spot S; black76: forward F (Greeks are w.r.t. F, and F is held fixed when T or r move)",
    "years": "T in years; QuantLib cases use T = n/365 with Actual365Fixed",
    "rate": "continuously compounded r",
    "dividend_yield": "continuous dividend yield q (0.0 for black76)",
    "delta": "dV/dS",
    "gamma": "d2V/dS2",
    "theta": "-(dV/dT)/365, value change per calendar day of time passing",
    "vega": "(dV/dsigma)/100, per 1 vol point",
    "rho": "(dV/dr)/100, per 1 percentage point; bsm: S and q fixed (forward moves); black76: F fixed",
    "epsilon": "(dV/dq)/100, per 1 percentage point (bsm); 0.0 for black76",
    "vanna": "(d2V/dS dsigma)/100",
    "charm": "-(d2V/dS dT)/365",
    "vomma": "(d2V/dsigma2)/100^2",
    "veta": "-(d2V/dsigma dT)/(100*365)",
    "speed": "d3V/dS3",
    "zomma": "(d3V/dS2 dsigma)/100",
    "color": "-(d3V/dS2 dT)/365",
    "ultima": "(d3V/dsigma3)/100^3",
    "dual_delta": "dV/dK",
    "implied_vol_price": "undiscounted Black price F N(d1) - K N(d2) (call), r = 0, rounded to nearest double",
    "implied_vol_vega": "d(price)/dsigma per unit vol (not /100), undiscounted",
    "mpmath": ("V implemented at >= 60 digits; every Greek by mp.diff of V; each pricing case computed at "
               "D and D+20 digits (D >= 60) and required to agree to 1e-25 relative"),
}

# Greek name -> (variables, orders, scale numerator, scale denominator)
GREEK_SPECS = {
    "delta":      (("S",), (1,), 1, 1),
    "gamma":      (("S",), (2,), 1, 1),
    "theta":      (("T",), (1,), -1, 365),
    "vega":       (("sig",), (1,), 1, 100),
    "rho":        (("r",), (1,), 1, 100),
    "epsilon":    (("q",), (1,), 1, 100),
    "vanna":      (("S", "sig"), (1, 1), 1, 100),
    "charm":      (("S", "T"), (1, 1), -1, 365),
    "vomma":      (("sig",), (2,), 1, 100 ** 2),
    "veta":       (("sig", "T"), (1, 1), -1, 100 * 365),
    "speed":      (("S",), (3,), 1, 1),
    "zomma":      (("S", "sig"), (2, 1), 1, 100),
    "color":      (("S", "T"), (2, 1), -1, 365),
    "ultima":     (("sig",), (3,), 1, 100 ** 3),
    "dual_delta": (("K",), (1,), 1, 1),
}

ARG_ORDER = ("S", "K", "T", "sig", "r", "q")


# ---------------------------------------------------------------------------
# mpmath option values (uses the ambient mp precision, so mp.diff's raised
# working precision propagates into the evaluation)
# ---------------------------------------------------------------------------

def bsm_value(cp, S, K, T, sig, r, q):
    sd = sig * mp.sqrt(T)
    d1 = (mp.log(S / K) + (r - q + sig * sig / 2) * T) / sd
    d2 = d1 - sd
    if cp == "call":
        return S * mp.exp(-q * T) * mp.ncdf(d1) - K * mp.exp(-r * T) * mp.ncdf(d2)
    return K * mp.exp(-r * T) * mp.ncdf(-d2) - S * mp.exp(-q * T) * mp.ncdf(-d1)


def black76_value(cp, F, K, T, sig, r, q=None):
    # q is ignored (black76 has no dividend yield); accepted for a common signature.
    sd = sig * mp.sqrt(T)
    d1 = (mp.log(F / K) + sig * sig * T / 2) / sd
    d2 = d1 - sd
    if cp == "call":
        und = F * mp.ncdf(d1) - K * mp.ncdf(d2)
    else:
        und = K * mp.ncdf(-d2) - F * mp.ncdf(-d1)
    return mp.exp(-r * T) * und


def model_value(model, cp, args):
    f = bsm_value if model == "bsm" else black76_value
    return f(cp, *(args[a] for a in ARG_ORDER))


def mp_all(model, cp, inputs, dps):
    """Price and all Greeks (scaled per the conventions) as mpf at `dps` digits."""
    with mp.workdps(dps):
        base = {a: mpf(inputs[a]) for a in ARG_ORDER}   # exact binary values of the doubles
        out = {"price": model_value(model, cp, base)}
        for name in GREEK_NAMES:
            if name == "epsilon" and model == "black76":
                out[name] = mpf(0)
                continue
            vars_, orders, num, den = GREEK_SPECS[name]

            def f(*xs, vars_=vars_):
                args = dict(base)
                for v, x in zip(vars_, xs):
                    args[v] = x
                return model_value(model, cp, args)

            d = mp.diff(f, tuple(base[v] for v in vars_), orders)
            out[name] = d * num / den
        return out


def rel_diff(a, b):
    if a == b:
        return mpf(0)
    return abs(a - b) / max(abs(a), abs(b))


def time_value(model, inputs):
    """min(call, put) at BASE_DPS: the price of the out-of-the-money side."""
    with mp.workdps(BASE_DPS):
        base = {a: mpf(inputs[a]) for a in ARG_ORDER}
        return min(model_value(model, "call", base), model_value(model, "put", base))


def mp_converged(model, cp, inputs, tv):
    """Adaptive precision: returns (values at D+20, D).

    mp.diff's stencils have an absolute error of roughly 10^-(D+5) times |V| (in
    units of the differentiation variables), so a Greek much smaller than the
    option value needs more digits: deep in the money V is about the intrinsic
    value while the higher Greeks are of the order of the tiny time value, and
    Greeks near a zero crossing are small too.  D = 60 is raised by the number
    of decades beyond 30 by which the smallest unscaled Greek (or the time
    value) falls below |V|; if the D vs D+20 check still fails, D grows by 40."""
    rough = mp_all(model, cp, inputs, BASE_DPS)
    with mp.workdps(BASE_DPS):
        mags = [tv]
        for k, v in rough.items():
            if k == "price" or (k == "epsilon" and model == "black76"):
                continue
            _, _, num, den = GREEK_SPECS[k]
            mags.append(abs(v) * den / abs(num))   # undo the per-day / per-point scaling
        m = min(mags)
        if m == 0:
            extra = 100
        else:
            extra = max(0, int(mp.ceil(mp.log10(abs(rough["price"]) / m))) - 30)
    dps = BASE_DPS + extra
    lo = rough if dps == BASE_DPS else None
    for _ in range(6):
        if lo is None:
            lo = mp_all(model, cp, inputs, dps)
        hi = mp_all(model, cp, inputs, dps + CHECK_EXTRA_DPS)
        with mp.workdps(dps + CHECK_EXTRA_DPS):
            bad = [k for k in hi if rel_diff(lo[k], hi[k]) > CONV_REL]
        if not bad:
            return hi, dps
        dps += 40
        lo = None
    raise AssertionError(f"mp.diff not converged for {model} {cp} {inputs}: {bad}")


def closed_form_check(model, cp, inputs, vals, dps):
    """Sanity asserts only: mp.diff Greeks vs textbook closed forms."""
    with mp.workdps(dps):
        S, K, T, sig, r, q = (mpf(inputs[a]) for a in ARG_ORDER)
        if model == "black76":
            q = r  # same algebra with carry 0 and discount e^{-rT}
            fwd_disc = mp.exp(-r * T)
        else:
            fwd_disc = mp.exp(-q * T)
        sd = sig * mp.sqrt(T)
        d1 = (mp.log(S / K) + (r - q + sig * sig / 2) * T) / sd   # black76: r - q = 0
        d2 = d1 - sd
        n1 = mp.npdf(d1)
        disc = mp.exp(-r * T)
        if cp == "call":
            delta = fwd_disc * mp.ncdf(d1)
            dual = -disc * mp.ncdf(d2)
        else:
            delta = -fwd_disc * mp.ncdf(-d1)
            dual = disc * mp.ncdf(-d2)
        gamma = fwd_disc * n1 / (S * sd)
        vega = S * fwd_disc * n1 * mp.sqrt(T) / 100
        for name, cf in (("delta", delta), ("gamma", gamma), ("vega", vega), ("dual_delta", dual)):
            rd = rel_diff(cf, vals[name])
            assert rd < mpf("1e-25"), (model, cp, inputs, name, cf, vals[name], rd)


def to_double(x):
    f = float(x)  # mpf.__float__ rounds to nearest (context rounding 'n')
    assert math.isfinite(f)
    assert f == 0.0 or abs(f) >= 2.2250738585072014e-308, ("subnormal", x)
    return f


# ---------------------------------------------------------------------------
# QuantLib
# ---------------------------------------------------------------------------

def ql_type(cp):
    return ql.Option.Call if cp == "call" else ql.Option.Put


def ql_bsm(cp, S, K, ndays, r, q, sig):
    today = ql.Date(*EVAL_DATE)
    ql.Settings.instance().evaluationDate = today
    dc = ql.Actual365Fixed()
    maturity = today + ndays
    assert dc.yearFraction(today, maturity) == ndays / 365.0
    spot = ql.QuoteHandle(ql.SimpleQuote(S))
    rts = ql.YieldTermStructureHandle(ql.FlatForward(today, r, dc, ql.Continuous, ql.Annual))
    dts = ql.YieldTermStructureHandle(ql.FlatForward(today, q, dc, ql.Continuous, ql.Annual))
    vts = ql.BlackVolTermStructureHandle(ql.BlackConstantVol(today, ql.NullCalendar(), sig, dc))
    process = ql.BlackScholesMertonProcess(spot, dts, rts, vts)
    opt = ql.EuropeanOption(ql.PlainVanillaPayoff(ql_type(cp), K), ql.EuropeanExercise(maturity))
    opt.setPricingEngine(ql.AnalyticEuropeanEngine(process))
    # QuantLib units: theta() is dV/dt for calendar time passing (= -dV/dT) per YEAR and
    # thetaPerDay() = theta()/365; vega(), rho(), dividendRho() are per unit (1.00 = 100%).
    return {
        "price": opt.NPV(),
        "delta": opt.delta(),
        "gamma": opt.gamma(),
        "theta": opt.thetaPerDay(),
        "vega": opt.vega() / 100.0,
        "rho": opt.rho() / 100.0,
        "epsilon": opt.dividendRho() / 100.0,
        "dual_delta": opt.strikeSensitivity(),
    }


def ql_black76(cp, F, K, T, r, sig):
    disc = math.exp(-r * T)
    bc = ql.BlackCalculator(ql.PlainVanillaPayoff(ql_type(cp), K), F, sig * math.sqrt(T), disc)
    # With spot := F the forward's growth factor is 1 (carry r - q = 0), so QuantLib's
    # BlackCalculator.theta(F, T) is the theta with F held fixed, and rho(T) + dividendRho(T)
    # (r and q moved together) is dV/dr with F held fixed (= -T V).
    return {
        "price": bc.value(),
        "delta": bc.deltaForward(),
        "gamma": bc.gammaForward(),
        "theta": bc.thetaPerDay(F, T),
        "vega": bc.vega(T) / 100.0,
        "rho": (bc.rho(T) + bc.dividendRho(T)) / 100.0,
        "epsilon": 0.0,
        "dual_delta": bc.strikeSensitivity(),
    }


QL_WARNINGS = []


def ql_natural_scale(case, k):
    """Size of the terms QuantLib adds up (in doubles) for Greek k: an error of
    ~1e-15 of this is ordinary double-precision cancellation, not a convention issue."""
    S, K, T, sig = case["underlying"], case["strike"], case["years"], case["vol"]
    sd = sig * math.sqrt(T)
    m = max(S, K)
    return {
        "price": m,
        "delta": 1.0,
        "dual_delta": 1.0,
        "gamma": m / (S * S * sd),
        "vega": m * math.sqrt(T) / 100.0,
        "rho": m * T / 100.0,
        "epsilon": m * T / 100.0,
        "theta": m * (abs(case["rate"]) + abs(case["dividend_yield"]) + sig / math.sqrt(T)) / 365.0,
    }[k]


def compare_ql(case):
    """Warn when QuantLib and mpmath differ by > 1e-10 relative (values below 1e-200 ignored).
    Each warning is classified: 'noise' if |diff| <= 1e-12 * natural scale (QuantLib's double
    arithmetic: N(x) = (1+erf)/2 for N > 1e-8, cancellation in gamma/theta/put formulas),
    otherwise 'MISMATCH' (would indicate a convention problem)."""
    qlv, mpv = case["quantlib"], case["mpmath"]
    for k in QL_NAMES:
        a, b = qlv[k], mpv[k]
        if max(abs(a), abs(b)) < 1e-200:
            continue
        rd = abs(a - b) / max(abs(a), abs(b))
        if rd > 1e-10:
            kind = "noise" if abs(a - b) <= 1e-12 * ql_natural_scale(case, k) else "MISMATCH"
            QL_WARNINGS.append((case["id"], k, a, b, rd, kind))


# ---------------------------------------------------------------------------
# pricing cases
# ---------------------------------------------------------------------------

def case_inputs(model, underlying, K, days, r, q, sig):
    T = HOUR if days is None else days / 365.0
    return {"S": underlying, "K": K, "T": T, "sig": sig, "r": r,
            "q": 0.0 if model == "black76" else q}


def prescreen(model, cp, inputs):
    """Cheap skip test at 60 digits: returns (reason or None, time value)."""
    with mp.workdps(BASE_DPS):
        price = model_value(model, cp, {a: mpf(inputs[a]) for a in ARG_ORDER})
    if price < PRICE_SKIP:
        return "price below 1e-250", None
    tv = time_value(model, inputs)
    if tv < PRICE_SKIP:
        # deep in the money: the Greeks other than delta/rho/epsilon/dual_delta are of
        # the order of the time value, i.e. would underflow (and cost thousands of digits)
        return "time value (out-of-the-money price) below 1e-250", None
    return None, tv


def compute_case(job):
    """Worker: full mpmath + QuantLib computation for one pre-screened case."""
    cid, model, cp, underlying, K, days, r, q, sig = job
    inputs = case_inputs(model, underlying, K, days, r, q, sig)
    _, tv = prescreen(model, cp, inputs)
    vals, dps = mp_converged(model, cp, inputs, tv)
    tiny = [k for k, v in vals.items() if v != 0 and abs(v) < GREEK_FLOOR]
    if tiny:
        return cid, "greek(s) below 1e-290: " + ",".join(tiny)
    closed_form_check(model, cp, inputs, vals, dps + CHECK_EXTRA_DPS)
    mpd = {"price": to_double(vals["price"])}
    for k in GREEK_NAMES:
        mpd[k] = to_double(vals[k])
    if model == "bsm":
        qlv = ql_bsm(cp, underlying, K, days, r, inputs["q"], sig) if days is not None else None
    else:
        qlv = ql_black76(cp, underlying, K, inputs["T"], r, sig)
    return {
        "id": cid, "model": model, "option_type": cp,
        "underlying": float(underlying), "strike": float(K), "years": inputs["T"],
        "rate": float(r), "dividend_yield": float(inputs["q"]), "vol": float(sig),
        "mpmath": mpd, "quantlib": qlv, "_dps": dps,
    }


def tname(days):
    return "1h" if days is None else f"{days}d"


def case_id(prefix, model, cp, K, days, sig, r, q):
    return f"{prefix}:{model}:{cp}:K{K:g}:T{tname(days)}:v{sig:g}:r{r:g}:q{q:g}"


CORE = [
    # (model, K, days, sig, r, q)
    ("bsm", 100.0, 30, 0.20, 0.05, 0.01),      # ATM 30-day 20% vol
    ("bsm", 105.0, 30, 0.25, 0.05, 0.01),      # the worked example
    ("black76", 100.0, 30, 0.20, 0.05, 0.0),
    ("black76", 105.0, 30, 0.25, 0.05, 0.0),
    ("bsm", 100.0, None, 0.20, 0.05, 0.01),    # 1 hour ATM
    ("bsm", 100.0, 1095, 5.0, 0.05, 0.02),     # huge total variance
    ("bsm", 22.5, 1095, 0.60, 0.05, 0.02),     # deep wing, low strike
    ("bsm", 450.0, 1095, 0.60, -0.005, 0.0),   # deep wing, high strike, negative rate
    ("bsm", 100.0, 365, 0.01, 0.0, 0.0),       # low vol ATM, zero rates
    ("bsm", 95.0, 1, 0.15, 0.05, 0.02),
    ("black76", 450.0, 365, 2.0, 0.05, 0.0),
    ("black76", 60.0, 7, 0.60, -0.005, 0.0),
]


def pricing_jobs(skip_log):
    """Deterministic list of cases: the core set, then a fixed-seed sample of the grid
    (both option types per sampled combination) until N_PRICING_TARGET grid cases pass
    the pre-screen."""
    jobs = []
    seen = set()

    def add(prefix, model, K, days, sig, r, q):
        n = 0
        for cp in ("call", "put"):
            und = SPOT if model == "bsm" else FORWARD
            cid = case_id(prefix, model, cp, K, days, sig, r, q)
            why, _ = prescreen(model, cp, case_inputs(model, und, K, days, r, q, sig))
            if why:
                skip_log.append((cid, why))
            else:
                jobs.append((cid, model, cp, und, K, days, r, q, sig))
                n += 1
        return n

    for (model, K, days, sig, r, q) in CORE:
        seen.add((model, K, days, sig, r, q))
        add("core", model, K, days, sig, r, q)
    rng = random.Random(PRICING_SEED)
    n_grid = 0
    while n_grid < N_PRICING_TARGET:
        model = "bsm" if rng.random() < 0.65 else "black76"
        K = rng.choice(STRIKE_GRID)
        days = rng.choice(DAY_GRID)
        sig = rng.choice(VOL_GRID)
        r = rng.choice(RATE_GRID)
        q = rng.choice(DIV_GRID) if model == "bsm" else 0.0
        key = (model, K, days, sig, r, q)
        if key in seen:
            continue
        seen.add(key)
        n_grid += add("grid", model, K, days, sig, r, q)
    return jobs


def generate_pricing(skip_log, processes):
    jobs = pricing_jobs(skip_log)
    if processes > 1:
        with multiprocessing.Pool(processes) as pool:
            results = pool.map(compute_case, jobs, chunksize=1)
    else:
        results = [compute_case(j) for j in jobs]
    cases = []
    for res in results:   # job order, so the output does not depend on scheduling
        if isinstance(res, tuple):
            skip_log.append(res)
        else:
            if res["quantlib"] is not None:
                compare_ql(res)
            cases.append(res)
    return cases


# ---------------------------------------------------------------------------
# implied-vol cases (undiscounted Black, r = 0)
# ---------------------------------------------------------------------------

def iv_eval(cp, F, K, T, sig, dps):
    with mp.workdps(dps):
        Fm, Km, Tm, sm = mpf(F), mpf(K), mpf(T), mpf(sig)
        price = black76_value(cp, Fm, Km, Tm, sm, mpf(0))
        vega = mp.diff(lambda s: black76_value(cp, Fm, Km, Tm, s, mpf(0)), sm)
        intrinsic = max(Fm - Km, 0) if cp == "call" else max(Km - Fm, 0)
        return price, vega, price - intrinsic


def iv_case(cp, F, K, T, sig, skips):
    price, vega, tv = iv_eval(cp, F, K, T, sig, BASE_DPS)
    if price < IV_PRICE_SKIP:
        skips["price_below_1e-280"] += 1
        return None
    if tv < IV_TIMEVALUE_REL * price:
        skips["time_value_below_1e-15_price"] += 1
        return None
    # convergence / precision check at 90 digits, plus closed-form vega sanity assert
    p2, v2, _ = iv_eval(cp, F, K, T, sig, BASE_DPS + 30)
    with mp.workdps(BASE_DPS + 30):
        assert rel_diff(price, p2) < mpf("1e-30") and rel_diff(vega, v2) < mpf("1e-30"), (cp, F, K, T, sig)
        sd = mpf(sig) * mp.sqrt(mpf(T))
        d1 = (mp.log(mpf(F) / mpf(K)) + sd * sd / 2) / sd
        assert rel_diff(mpf(F) * mp.npdf(d1) * mp.sqrt(mpf(T)), v2) < mpf("1e-30")
    vd = to_double(vega)
    assert vd > 0
    return {"option_type": cp, "forward": float(F), "strike": float(K), "years": float(T),
            "vol": float(sig), "price": to_double(price), "vega": vd}


def generate_iv():
    rng = random.Random(IV_SEED)
    skips = {"price_below_1e-280": 0, "time_value_below_1e-15_price": 0}
    out = []
    lt0, lt1 = math.log(HOUR), math.log(3.0)
    ls0, ls1 = math.log(0.01), math.log(5.0)
    n_random = 0
    while n_random < N_IV_RANDOM:
        T = math.exp(rng.uniform(lt0, lt1))
        sig = math.exp(rng.uniform(ls0, ls1))
        z = rng.uniform(-8.0, 8.0)            # standardised log-moneyness ln(F/K)/(sig sqrt T)
        cp = "call" if rng.random() < 0.5 else "put"
        K = FORWARD * math.exp(-z * sig * math.sqrt(T))
        c = iv_case(cp, FORWARD, K, T, sig, skips)
        if c is not None:
            out.append(c)
            n_random += 1
    for i in range(N_IV_ATM):
        T = math.exp(rng.uniform(lt0, lt1))
        sig = math.exp(rng.uniform(ls0, ls1))
        cp = "call" if i % 2 == 0 else "put"
        c = iv_case(cp, FORWARD, FORWARD, T, sig, skips)
        assert c is not None
        out.append(c)
    return out, skips


# ---------------------------------------------------------------------------
# output
# ---------------------------------------------------------------------------

def dump(doc, path):
    """Pretty top level, one case per line; floats via json (float.__repr__)."""
    lines = ["{"]
    keys = list(doc.keys())
    for i, k in enumerate(keys):
        v = doc[k]
        comma = "," if i < len(keys) - 1 else ""
        if isinstance(v, list):
            lines.append(f"  {json.dumps(k)}: [")
            for j, item in enumerate(v):
                c2 = "," if j < len(v) - 1 else ""
                lines.append("    " + json.dumps(item, allow_nan=False) + c2)
            lines.append("  ]" + comma)
        else:
            body = json.dumps(v, indent=2, allow_nan=False).replace("\n", "\n  ")
            lines.append(f"  {json.dumps(k)}: {body}{comma}")
    lines.append("}")
    with open(path, "w") as fh:
        fh.write("\n".join(lines) + "\n")


def self_check(path):
    with open(path) as fh:
        doc = json.load(fh)
    # every float in the file survives a repr round trip (json.load -> float)
    by_key = {}
    for c in doc["pricing_cases"]:
        key = (c["model"], c["underlying"], c["strike"], c["years"], c["rate"],
               c["dividend_yield"], c["vol"])
        by_key.setdefault(key, {})[c["option_type"]] = c
    pairs = 0
    worst = 0.0
    with mp.workdps(40):
        for (model, S, K, T, r, q, sig), d in by_key.items():
            if "call" not in d or "put" not in d:
                continue
            C, P = d["call"]["mpmath"]["price"], d["put"]["mpmath"]["price"]
            if model == "bsm":
                rhs = mpf(S) * mp.exp(-mpf(q) * mpf(T)) - mpf(K) * mp.exp(-mpf(r) * mpf(T))
            else:
                rhs = mp.exp(-mpf(r) * mpf(T)) * (mpf(S) - mpf(K))
            err = float(abs(mpf(C) - mpf(P) - rhs) / mpf(S))
            worst = max(worst, err)
            assert err <= 1e-13, ("put-call parity", model, S, K, T, r, q, sig, err)
            pairs += 1
    # Closed-form cross-check of ALL written mpmath fields (asserts only; the vectors
    # come from mp.diff).  Textbook formulas at 50 digits; black76 with F held fixed
    # equals bsm with S = F and q = r, except rho (= bsm rho + bsm epsilon) and epsilon (0).
    # NB the usual published veta/color formulas are d/d(tau); ours are minus that.
    worst_cf = 0.0
    with mp.workdps(50):
        N, n = mp.ncdf, mp.npdf
        for c in doc["pricing_cases"]:
            S, K, T, r, sig = (mpf(c[k]) for k in ("underlying", "strike", "years", "rate", "vol"))
            q = mpf(c["dividend_yield"]) if c["model"] == "bsm" else r
            sT = mp.sqrt(T)
            sd = sig * sT
            d1 = (mp.log(S / K) + (r - q + sig ** 2 / 2) * T) / sd
            d2 = d1 - sd
            eq, er = mp.exp(-q * T), mp.exp(-r * T)
            common_charm = eq * n(d1) * (2 * (r - q) * T - d2 * sd) / (2 * T * sd)
            if c["option_type"] == "call":
                V, delta = S * eq * N(d1) - K * er * N(d2), eq * N(d1)
                theta = -S * eq * n(d1) * sig / (2 * sT) - r * K * er * N(d2) + q * S * eq * N(d1)
                rho, eps, dual = K * T * er * N(d2), -S * T * eq * N(d1), -er * N(d2)
                charm = q * eq * N(d1) - common_charm
            else:
                V, delta = K * er * N(-d2) - S * eq * N(-d1), -eq * N(-d1)
                theta = -S * eq * n(d1) * sig / (2 * sT) + r * K * er * N(-d2) - q * S * eq * N(-d1)
                rho, eps, dual = -K * T * er * N(-d2), S * T * eq * N(-d1), er * N(-d2)
                charm = -q * eq * N(-d1) - common_charm
            gamma, vega = eq * n(d1) / (S * sd), S * eq * n(d1) * sT
            dveta_dtau = -S * eq * n(d1) * sT * (q + (r - q) * d1 / sd - (1 + d1 * d2) / (2 * T))
            dgamma_dtau = -eq * n(d1) / (2 * S * T * sd) * (2 * q * T + 1 + (2 * (r - q) * T - d2 * sd) * d1 / sd)
            if c["model"] == "black76":
                rho, eps = rho + eps, mpf(0)
            ref = {"price": V, "delta": delta, "gamma": gamma, "theta": theta / 365, "vega": vega / 100,
                   "rho": rho / 100, "epsilon": eps / 100, "vanna": -eq * n(d1) * d2 / sig / 100,
                   "charm": charm / 365, "vomma": vega * d1 * d2 / sig / 100 ** 2,
                   "veta": -dveta_dtau / (100 * 365), "speed": -gamma / S * (d1 / sd + 1),
                   "zomma": gamma * (d1 * d2 - 1) / sig / 100, "color": -dgamma_dtau / 365,
                   "ultima": -vega / sig ** 2 * (d1 * d2 * (1 - d1 * d2) + d1 ** 2 + d2 ** 2) / 100 ** 3,
                   "dual_delta": dual}
            for k, v in ref.items():
                x = c["mpmath"][k]
                e = 0.0 if (v == 0 and x == 0) else float(abs(mpf(x) - v) / abs(v))
                worst_cf = max(worst_cf, e)
                assert e <= 2.0 ** -52, ("closed-form cross-check", c["id"], k, x, v, e)
    print(f"self-check: all {len(doc['pricing_cases'])} x 16 mpmath fields match textbook closed forms "
          f"(worst rel {worst_cf:.2e}, i.e. correctly rounded)")
    for c in doc["implied_vol_cases"]:
        intrinsic = max(c["forward"] - c["strike"], 0.0) if c["option_type"] == "call" \
            else max(c["strike"] - c["forward"], 0.0)
        assert c["price"] >= intrinsic and c["vega"] > 0
    print(f"self-check: put-call parity OK on {pairs} pairs (worst |C-P-parity|/S = {worst:.3e})")
    return pairs


def main():
    t0 = time.time()
    repo = os.path.abspath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    out_path = os.path.join(repo, "compute", "tests", "data", "pricing_vectors.json")
    mp.dps = BASE_DPS

    skip_log = []
    processes = int(os.environ.get("REFERENCE_PROCESSES", min(2, os.cpu_count() or 1)))
    pricing = generate_pricing(skip_log, processes)
    dps_used = [c.pop("_dps") for c in pricing]
    t1 = time.time()
    iv, iv_skips = generate_iv()
    t2 = time.time()

    conventions = dict(CONVENTIONS)
    conventions["skipped_pricing_cases"] = (
        f"{len(skip_log)} sampled cases skipped: {sum(w.startswith('price') for _, w in skip_log)} with "
        f"price < 1e-250; {sum(w.startswith('time value') for _, w in skip_log)} deep in the money "
        f"with time value (the out-of-the-money price) < 1e-250, whose Greeks would underflow; "
        f"{sum(w.startswith('greek') for _, w in skip_log)} with a Greek below 1e-290")
    conventions["skipped_implied_vol_cases"] = (
        f"{iv_skips['price_below_1e-280']} with price < 1e-280; "
        f"{iv_skips['time_value_below_1e-15_price']} with time value < 1e-15 * price")

    doc = {
        "generator": "scripts/reference/pricing_vectors.py",
        "libraries": {"QuantLib": ql.__version__, "mpmath": mpmath.__version__,
                      "python": platform.python_version()},
        "mpmath_dps": BASE_DPS,
        "conventions": conventions,
        "pricing_cases": pricing,
        "implied_vol_cases": iv,
    }
    os.makedirs(os.path.dirname(out_path), exist_ok=True)
    dump(doc, out_path)

    n_ql = sum(1 for c in pricing if c["quantlib"] is not None)
    print(f"pricing cases: {len(pricing)} ({sum(c['model'] == 'bsm' for c in pricing)} bsm, "
          f"{sum(c['model'] == 'black76' for c in pricing)} black76; {n_ql} with QuantLib); "
          f"skipped {len(skip_log)}")
    for cid, why in skip_log:
        print(f"  skipped {cid}: {why}")
    print(f"  mpmath working dps per case: min {min(dps_used)}, max {max(dps_used)} (+{CHECK_EXTRA_DPS} check); "
          f"cases with D <= 100: {sum(d <= 100 for d in dps_used)}, 100 < D <= 200: "
          f"{sum(100 < d <= 200 for d in dps_used)}, D > 200: {sum(d > 200 for d in dps_used)}")
    print(f"implied-vol cases: {len(iv)}; skipped {iv_skips}")
    if QL_WARNINGS:
        n_mis = sum(1 for w in QL_WARNINGS if w[5] == "MISMATCH")
        print(f"WARNING: {len(QL_WARNINGS)} QuantLib values differ from mpmath by > 1e-10 relative "
              f"({n_mis} not explained by double-precision cancellation):")
        for cid, k, a, b, rd, kind in QL_WARNINGS:
            print(f"  [{kind}] {cid} {k}: quantlib={a!r} mpmath={b!r} rel={rd:.3e}")
    else:
        print("QuantLib agrees with mpmath to 1e-10 relative on every compared value")
    worst = {}
    for c in pricing:
        if c["quantlib"] is None:
            continue
        for k in QL_NAMES:
            a, b = c["quantlib"][k], c["mpmath"][k]
            if max(abs(a), abs(b)) < 1e-200:
                continue
            rd = abs(a - b) / max(abs(a), abs(b))
            worst[k] = max(worst.get(k, 0.0), rd)
    print("QuantLib vs mpmath, worst relative difference per field: "
          + ", ".join(f"{k} {v:.1e}" for k, v in worst.items()))
    core = [c for c in pricing if c["id"].startswith("core:") and c["quantlib"] is not None
            and abs(math.log(c["strike"] / c["underlying"])) < 0.5 * c["vol"] * math.sqrt(c["years"])
            and c["vol"] * math.sqrt(c["years"]) < 1.0]
    for c in core:  # near-the-money core cases: QuantLib must agree tightly
        for k in QL_NAMES:
            a, b = c["quantlib"][k], c["mpmath"][k]
            assert abs(a - b) <= 1e-12 * max(abs(a), abs(b)), (c["id"], k, a, b)
    print(f"QuantLib agrees to 1e-12 relative on all fields of the {len(core)} near-the-money core cases")
    print(f"wrote {out_path} ({os.path.getsize(out_path)} bytes)")
    self_check(out_path)
    print(f"time: pricing {t1 - t0:.1f}s, implied vol {t2 - t1:.1f}s, total {time.time() - t0:.1f}s")


if __name__ == "__main__":
    main()
