#!/usr/bin/env python3
"""Independent reference vectors for option-strategy analysis, from optionlab.

Writes compute/tests/data/strategy_vectors.json (path relative to the repository
root).  Run from anywhere:

    .venv-reference/bin/python scripts/reference/strategy_vectors.py

What optionlab computes here (optionlab.engine.run_strategy, "black-scholes" model)
------------------------------------------------------------------------------------
* probability_of_profit: P(strategy P&L >= $0.01) at the target date, the terminal
  price lognormal with ln S_T ~ N(ln S + (r - q - sigma^2/2) T, sigma^2 T).  For legs
  that all expire on the target date it integrates that density exactly over the
  linear pieces between the strikes; for later legs (calendars) it prices them with
  Black-Scholes and refines an adaptive grid until the probability is within 1e-9.
* profit_ranges: the price intervals where P&L >= $0.01 (upper end inf when open).
* minimum/maximum_return_in_the_domain: the P&L extremes on the plotting grid
  [0, max_stock] in $0.01 steps (every strike below is a multiple of $0.01, so for
  legs of one expiration the grid contains every kink and the extremes are exact).

How its inputs are set so that its conventions equal the service's
--------------------------------------------------------------------
* Time basis: discard_nonbusiness_days=False, so days_in_year = 365 and
  T = days / 365 (calendar days, as the service).  The target is given as
  days_to_target_date (an int) and later legs' expirations as ints, which avoids
  optionlab's "+1 day" convention for dates.
* Rates: interest_rate r and dividend_yield q are continuous, as the service's.
  The service's forward model (Black-76 on F, later calendar legs on the same
  forward, no carry) is optionlab's spot model with q = r: then the drift r - q is
  0 and e^{-qT} S N(d1) - e^{-rT} K N(d2) = e^{-rT} [F N(d1) - K N(d2)] with F = S.
* Volatility: optionlab takes one volatility for the probability and for pricing
  later legs.  The service takes the IV of the leg struck closest to the spot for
  the probability and each later leg's own IV for pricing, so every case gives all
  its legs the same IV.
* Units: optionlab's n is a number of options (shares).  Each leg is given
  n = 100 x quantity x SCALE with SCALE = 1000, and P&L figures are divided by
  SCALE, so its $0.01 threshold becomes $0.00001 per one-lot: it moves a breakeven
  by at most 1e-7 / (shares of net slope), well inside the test tolerances.
* Calendar cases on the spot model keep q = 0 and, for puts, r = 0: the service
  floors an American later leg at intrinsic value, and with those inputs the
  European Black-Scholes value never falls below intrinsic, so both agree.

Premiums are Black-Scholes values at the case's IV rounded to cents (computed here
with scipy's ndtr, independently of the service); any premium would do.

Deterministic: no randomness, no timestamps; only library versions are recorded.
"""

import math
import os
import platform
from importlib.metadata import version

from scipy.special import ndtr

from optionlab import run_strategy

from vector_json import write_vectors

SCALE = 1000
ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
OUTPUT = os.path.join(ROOT, "compute", "tests", "data", "strategy_vectors.json")


def bs_price(kind, spot, strike, years, rate, div, vol):
    """European Black-Scholes-Merton price with continuous r and q."""
    if years <= 0:
        return max(0.0, spot - strike) if kind == "call" else max(0.0, strike - spot)
    sd = vol * math.sqrt(years)
    d1 = (math.log(spot / strike) + (rate - div + 0.5 * vol * vol) * years) / sd
    d2 = d1 - sd
    if kind == "call":
        return spot * math.exp(-div * years) * ndtr(d1) - strike * math.exp(-rate * years) * ndtr(d2)
    return strike * math.exp(-rate * years) * ndtr(-d2) - spot * math.exp(-div * years) * ndtr(-d1)


def leg(kind, action, strike, quantity=1, days=None):
    return {"type": kind, "action": action, "strike": strike, "quantity": quantity, "days": days}


def case(name, legs, spot=100.0, days=30, vol=0.25, rate=0.045, div=0.0, model="spot",
         premiums=None):
    return {
        "name": name,
        "model": model,
        "stock_price": spot,
        "rate": rate,
        "dividend_yield": div if model == "spot" else 0.0,
        "volatility": vol,
        "first_expiry_days": days,
        "legs": legs,
        "premiums": premiums,
    }


def cases():
    c, p, b, s = "call", "put", "buy", "sell"
    out = [
        case("bull call spread", [leg(c, b, 95), leg(c, s, 105)]),
        case("bear put spread", [leg(p, b, 105), leg(p, s, 95)], days=45, vol=0.32),
        case("put credit spread", [leg(p, s, 95), leg(p, b, 90)], days=21, div=0.013),
        case("call credit spread", [leg(c, s, 108), leg(c, b, 113)], days=35, vol=0.2),
        case("iron condor", [leg(p, b, 85), leg(p, s, 90), leg(c, s, 110), leg(c, b, 115)]),
        case("iron condor, unequal wings",
             [leg(p, b, 480), leg(p, s, 490), leg(c, s, 520), leg(c, b, 525)],
             spot=503.37, days=38, vol=0.16, rate=0.043, div=0.012),
        case("iron condor, 7 days", [leg(p, b, 4700), leg(p, s, 4750), leg(c, s, 4950),
                                     leg(c, b, 5000)],
             spot=4852.5, days=7, vol=0.14, rate=0.05, model="forward"),
        case("long call butterfly", [leg(c, b, 90), leg(c, s, 100, 2), leg(c, b, 110)]),
        case("long put butterfly", [leg(p, b, 47.5), leg(p, s, 50, 2), leg(p, b, 52.5)],
             spot=50.8, days=14, vol=0.45),
        case("broken-wing butterfly", [leg(c, b, 100), leg(c, s, 105, 2), leg(c, b, 112)],
             days=28, vol=0.3),
        case("iron butterfly", [leg(p, b, 90), leg(p, s, 100), leg(c, s, 100), leg(c, b, 110)]),
        case("long straddle", [leg(c, b, 100), leg(p, b, 100)], days=60, vol=0.4),
        case("short straddle", [leg(c, s, 250), leg(p, s, 250)], spot=247.1, days=10,
             vol=0.22, div=0.005),
        case("long strangle", [leg(p, b, 90), leg(c, b, 110)], days=90, vol=0.35),
        case("short strangle", [leg(p, s, 92), leg(c, s, 108)], days=40),
        case("call ratio spread 1x2 (unlimited risk)", [leg(c, b, 100), leg(c, s, 110, 2)],
             days=45, vol=0.3),
        case("put ratio spread 1x2", [leg(p, b, 100), leg(p, s, 90, 2)], days=45, vol=0.3),
        case("call backspread 1x2", [leg(c, s, 100), leg(c, b, 110, 2)], days=60, vol=0.3),
        case("jade lizard", [leg(p, s, 95), leg(c, s, 105), leg(c, b, 110)], days=30),
        case("long call", [leg(c, b, 102)], days=20, vol=0.5),
        case("short put", [leg(p, s, 98)], days=20, vol=0.5, div=0.02),
        case("condor with 3-lot", [leg(p, b, 85, 3), leg(p, s, 90, 3), leg(c, s, 110, 3),
                                   leg(c, b, 115, 3)], days=55, vol=0.28),
        # Mixed expirations: valued at the first expiration.
        case("call calendar", [leg(c, s, 100, days=30), leg(c, b, 100, days=60)],
             days=30, vol=0.25, rate=0.03, div=0.0),
        case("call diagonal", [leg(c, s, 105, days=21), leg(c, b, 100, days=63)],
             days=21, vol=0.3, rate=0.03, div=0.0),
        case("put calendar", [leg(p, s, 95, days=28), leg(p, b, 95, days=91)],
             days=28, vol=0.35, rate=0.0, div=0.0),
        case("forward-model call calendar", [leg(c, s, 5000, days=14), leg(c, b, 5000, days=42)],
             spot=4990.0, days=14, vol=0.15, rate=0.05, model="forward"),
    ]
    for item in out:
        for l in item["legs"]:
            if l["days"] is None:
                l["days"] = item["first_expiry_days"]
        spot, rate, vol = item["stock_price"], item["rate"], item["volatility"]
        div = item["dividend_yield"] if item["model"] == "spot" else rate
        item["premiums"] = [
            round(bs_price(l["type"], spot, l["strike"], l["days"] / 365.0, rate, div, vol), 2)
            for l in item["legs"]
        ]
        # optionlab requires premium > 0.
        item["premiums"] = [max(x, 0.01) for x in item["premiums"]]
    return out


def run_optionlab(item):
    first = item["first_expiry_days"]
    strategy = []
    for l, premium in zip(item["legs"], item["premiums"]):
        option = {
            "type": l["type"],
            "strike": l["strike"],
            "premium": premium,
            "n": 100 * l["quantity"] * SCALE,
            "action": l["action"],
        }
        if l["days"] != first:
            option["expiration"] = l["days"]
        strategy.append(option)
    top = 3 * max(l["strike"] for l in item["legs"])
    inputs = {
        "stock_price": item["stock_price"],
        "volatility": item["volatility"],
        "interest_rate": item["rate"],
        # The forward model is optionlab's spot model with q = r (see the module docs).
        "dividend_yield": item["dividend_yield"] if item["model"] == "spot" else item["rate"],
        "min_stock": 0.0,
        "max_stock": top,
        "strategy": strategy,
        "days_to_target_date": first,
        "discard_nonbusiness_days": False,
        "calculations": ["pop"],
    }
    out = run_strategy(inputs)
    ranges = []
    for lower, upper in out.profit_ranges:
        ranges.append([float(lower), None if math.isinf(upper) else float(upper)])
    breakevens = []
    for lower, upper in ranges:
        if lower > 0:
            breakevens.append(lower)
        if upper is not None:
            breakevens.append(upper)
    return {
        "probability_of_profit": float(out.probability_of_profit),
        "profit_ranges": ranges,
        "breakevens": breakevens,
        "domain_top": top,
        "min_pnl_in_domain": float(out.minimum_return_in_the_domain) / SCALE,
        "max_pnl_in_domain": float(out.maximum_return_in_the_domain) / SCALE,
    }


def main():
    items = cases()
    for item in items:
        item["optionlab"] = run_optionlab(item)
    document = {
        "generator": "scripts/reference/strategy_vectors.py",
        "versions": {
            "python": platform.python_version(),
            "optionlab": version("optionlab"),
            "numpy": version("numpy"),
            "scipy": version("scipy"),
        },
        "conventions": {
            "time": "T = days / 365 (discard_nonbusiness_days = False)",
            "rates": "continuous r and q; forward model = optionlab spot model with q = r",
            "units": "P&L in dollars per one-lot (100 shares per contract); "
                     "probability_of_profit as a fraction",
            "profit": "optionlab counts P&L >= $0.01 on a position scaled by 1000, i.e. "
                      "P&L >= $0.00001 per one-lot",
            "legs": "days = calendar days to that leg's expiry; the analysis is at "
                    "first_expiry_days",
        },
        "cases": items,
    }
    write_vectors(OUTPUT, document, indent=1, sort_keys=True)
    print(f"wrote {len(items)} cases to {os.path.relpath(OUTPUT, ROOT)}")


if __name__ == "__main__":
    main()
