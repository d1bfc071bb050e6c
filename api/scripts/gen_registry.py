#!/usr/bin/env python3
"""Writes api/src/registry/table.rs, the endpoint table of the optics API, from the interface's
reference records (reference-records.json: endpoints[], families[]).

The table is committed: the server never reads JSON to know its endpoints. `make registry`
re-runs this script on ../shared/spec/reference-records.json and formats the result; commit
the table with the script. The test api/tests/registry_drift.rs fails when the committed table
is not what the script writes today.

What the script adds to the records, because the records do not carry it:
- a typed parameter kind parsed from each `bounds` text (an unknown text is an error, so a new
  bound shape cannot slip through untyped); where the records give a lower bound only
  ("0 for all"), the upper bound the service documents is set here (STRIKES_AROUND_MAX, ...);
- the tier "any" for the utility endpoints (index, search, expirations, calendars, usage);
- the cost of a call in monthly-budget units (COSTS);
- our own one-line summary of each endpoint (SUMMARIES) and a runnable example (EXAMPLES);
  no prose is copied from the records;
- parameters the interface specification names but the records leave out (ADDED_PARAMS).
"""

import json
import re
import sys

# Upper bounds the records leave open, chosen by optics (documented in api/docs/reference.md).
STRIKES_AROUND_MAX = 500
FLOW_LIMIT_MAX = 500
# Sessions of a volatility day series kept under compact detail (default, largest).
VOL_SERIES_ROWS = 30
VOL_SERIES_MAX = 1000
MARKET_CAP_MIN = 0
SYMBOL_LIST_MAX = 25

ANY_PLAN = {"index", "me-usage", "search", "expirations", "earnings-calendar", "economic-calendar"}

# Budget units per call: 0 = free; "per_symbol" = one unit per requested symbol.
COSTS = {
    "index": 0,
    "me-usage": 0,
    "screen": 2,
    "market-overview": 2,
    "relative-value-scan": 2,
    "vol-arb-scan": 2,
    "cross-index-gex": "per_symbol",
    "iv-rank-batch": "per_symbol",
    "gex-batch": "per_symbol",
    "expected-move-batch": "per_symbol",
}

SUMMARIES = {
    "hv-regimes": "Realized volatility by window, its term structure and regime signals.",
    "iv-opportunities": "Where the IV surface is stretched against its own history.",
    "iv-rank": "IV rank and IV percentile over a lookback window.",
    "monies": "The implied (or forecast) volatility surface by delta and tenor.",
    "skew": "Put-call skew now, through time, and the smile's curvature.",
    "term-structure": "ATM implied volatility per expiration and the curve's shape.",
    "vix": "VIX computed from SPX options by the Cboe method, with the day's range and change.",
    "volatility-cone": "Realized volatility percentiles per window against current IV.",
    "vrp": "Volatility risk premium: 30-day IV minus realized volatility.",
    "vrp-expirations": "Volatility risk premium per listed expiration.",
    "vrp-timeseries": "Daily history of IV, realized volatility and their spread.",
    "iv-rank-batch": "IV rank for up to 25 symbols in one call.",
    "index": "This catalogue: every served endpoint with its tier, parameters, docs and example.",
    "me-usage": "The calling account's monthly usage, rate-limit position and tokens.",
    "chain-at-time": "One expiration's chain as it stood at a past session's close.",
    "chain": "Options chain rows (quotes, IV, Greeks, volume, OI) near the money.",
    "expirations": "Listed expiration dates, nearest first.",
    "options-by-delta": "The call or put whose delta is nearest a target.",
    "search": "Find covered symbols by ticker or company name.",
    "stock": "Underlying price and company profile.",
    "charm": "Dealer charm exposure by strike and in total.",
    "greeks-heatmap": "Per-contract Greeks across strikes and expirations.",
    "third-order-greeks": "Speed, color, ultima and zomma by strike.",
    "cross-index-gex": (
        "Gamma exposure side by side for several index ETFs; each index payload is the /gex "
        "aggregate, its strike lists windowed 25 each side of spot under compact detail."
    ),
    "gex": (
        "Dealer gamma exposure, flip level, walls and the per-strike profile, summed over the "
        "expirations through expirations_through. aggregate=false reports the nearest "
        "expiration alone at the top level and every expiration in by_expiration; expiration "
        "picks one for both. Under compact detail each by_expiration entry carries the window "
        "of its own strike lists."
    ),
    "greeks-exposure": (
        "Dealer exposure to every Greek, totals and by strike. aggregate=false reports the "
        "nearest expiration (or the one given) at the top level and adds by_expiration blocks "
        "with each Greek's totals and profile per selected expiration."
    ),
    "max-pain": "The strike with the least total option payout at expiration.",
    "volume-profile": "Call and put volume by strike for one expiration.",
    "zero-dte": (
        "Same-day-expiry exposure, chain and levels, with the scored read from the stored "
        "sessions: em_hit_rate (percent of the last 60 sessions whose previous-close-to-close "
        "move stayed within the expected move priced at the previous close from the front ATM "
        "IV), edge_score (0-100, 50 = implied and realized variance equal) and iv_forecast (ATM "
        "IV blended with HAR realized vol); each null with a reason under scored_read when "
        "fewer than 10 sessions (23 closes for iv_forecast) are stored."
    ),
    "gex-batch": "Gamma exposure for up to 25 symbols in one call.",
    "flow": (
        "Today's option flow: the largest tickets by premium (top 50, 10 under compact), "
        "every unusual contract, the full flow list (all_flow) and sentiment. 503 with "
        "data_unavailable when the volume feed is down or behind the chain; timestamps are "
        "ISO 8601 without a zone (UTC)."
    ),
    "smart-money": "The part of today's flow that looks institutional, scored.",
    "earnings-history": "Past earnings reactions against the moves options implied.",
    "earnings-verdict": "Whether the next earnings straddle looks rich or cheap.",
    "expected-move": (
        "The at-the-money straddle's expected move and its bounds; expected_move_percent is a "
        "fraction of spot (0.0191 = 1.91%), expected_move_pct the same in percent."
    ),
    "expected-vs-actual": "Implied earnings moves compared with realized ones.",
    "historical-moves": "Distribution of past price moves over several horizons.",
    "iv-crush": "How implied volatility behaved around past earnings.",
    "mispricing-assessment": "A score of how options price the next earnings event.",
    "post-earnings-drift": "Price drift in the sessions after past earnings.",
    "expected-move-batch": (
        "Expected moves for up to 25 symbols in one call, each as /expected-move answers it "
        "(expected_move_percent a fraction of spot, expected_move_pct in percent)."
    ),
    "analyze-strategy": "Payoff, breakevens, probability of profit and Greeks of your legs.",
    "build-strategy": "Builds a named strategy from the live chain by delta and width.",
    "optimize-strategy": "Searches strikes for the best iron condor or credit spread.",
    "pop": "Probability that a set of legs finishes profitable.",
    "simulate-chain": "Re-prices a chain at a hypothetical spot, time and IV shift.",
    "hedge-recommendations": "Share and option hedges that bring portfolio delta to a target.",
    "portfolio-greeks": "Net Greeks and risk summary of a set of positions.",
    "scenario-analysis": "Estimated P&L of positions under your scenarios.",
    "stress-tests": "Estimated P&L of positions under a fixed set of market shocks.",
    "earnings-calendar": "Upcoming earnings reports with implied moves.",
    "economic-calendar": "Scheduled macro releases with importance.",
    "seasonality": "Average returns by calendar month over past years.",
    "market-overview": "A one-call summary of market volatility and positioning.",
    "relative-value-scan": "Symbols whose volatility is out of line with peers or history.",
    "screen": "Ranks the coverage universe by a volatility or flow preset.",
    "vol-arb-scan": "Strikes where implied and forecast volatility disagree.",
    "borrow-rate": "Stock borrow fee, its spikes, squeeze score and history.",
    "cores": "The daily core analytics row, curated or by field list.",
    "correlation": "Correlation and beta against the market and sector.",
    "correlation-compare": "Rolling correlation between two symbols.",
    "dividend": "Dividend history, yield and the next ex-date.",
    "price-context": "Returns, 52-week range, regimes, vol, earnings and activity in one take.",
    "relative-value": "IV ratios to SPY and the sector ETF against their own history.",
}

# Example requests: query strings for GET (appended to the path with SPY/QQQ in the
# placeholders) and JSON bodies for POST. The server fills two date placeholders when it serves
# the index: `{last_session}` (trade date of the last closed session) and `{monthly_expiry}`
# (next month's standard monthly expiration).
EXAMPLE_QUERIES = {
    "chain": "num_expirations=2&strikes_around=10",
    "chain-at-time": "expiration={monthly_expiry}&trade_date={last_session}",
    "options-by-delta": "delta=0.25&option_type=put",
    "search": "q=apple&limit=5",
    "greeks-heatmap": "option_type=puts",
    "cross-index-gex": "tickers=SPY,QQQ",
    "gex": "detail=compact&strikes_around=10",
    "zero-dte": "detail=compact",
    "flow": "detail=compact&limit=10",
    "iv-rank": "lookback_days=252",
    "hv-regimes": "view=signals",
    "volatility-cone": "periods=10,20,30",
    "historical-moves": "periods=7,30",
    "earnings-calendar": "days_ahead=14",
    "screen": "screen_type=unusual_volume&limit=10",
    "relative-value-scan": "view=pairs&limit=10",
    "cores": "fields=all",
    "iv-rank-batch": "tickers=SPY,QQQ,IWM",
    "gex-batch": "tickers=SPY,QQQ&detail=compact",
    "expected-move-batch": "tickers=SPY,QQQ",
    "vol-arb-scan": "ticker=SPY",
}

_POSITIONS = [
    {"ticker": "SPY", "position_type": "STOCK", "quantity": 100, "entry_price": 600.0,
     "current_price": 610.0},
    {"ticker": "SPY", "position_type": "PUT", "quantity": -2, "strike": 590.0,
     "expiration": "{monthly_expiry}", "entry_price": 4.1, "current_price": 3.6,
     "delta": -0.28, "gamma": 0.012, "theta": -0.21, "vega": 0.55, "iv": 0.19},
]

EXAMPLE_BODIES = {
    "analyze-strategy": {"ticker": "SPY", "stock_price": 600.0, "legs": [
        {"type": "CALL", "action": "BUY", "strike": 600.0, "expiration": "{monthly_expiry}",
         "premium": 8.2, "iv": 0.18},
        {"type": "CALL", "action": "SELL", "strike": 610.0, "expiration": "{monthly_expiry}",
         "premium": 3.9, "iv": 0.17}]},
    "build-strategy": {"ticker": "SPY", "strategy_type": "iron_condor", "dte": 30, "width": 5,
                       "target_delta": 0.2},
    "optimize-strategy": {"ticker": "SPY", "strategy_type": "credit_spread",
                          "target": "risk_reward"},
    "pop": {"stock_price": 600.0, "days_to_exp": 30, "legs": [
        {"option_type": "PUT", "action": "SELL", "strike": 580.0, "iv": 0.2, "premium": 4.0,
         "quantity": 1},
        {"option_type": "PUT", "action": "BUY", "strike": 575.0, "iv": 0.21, "premium": 3.1,
         "quantity": 1}]},
    "simulate-chain": {"ticker": "SPY", "sim_price": 590.0, "sim_dte": 5, "iv_adjustment": 3},
    "hedge-recommendations": {"positions": _POSITIONS, "hedge_ticker": "SPY", "target_delta": 0},
    "portfolio-greeks": {"positions": _POSITIONS},
    "scenario-analysis": {"positions": _POSITIONS, "scenarios": [
        {"stock_move_pct": -5, "iv_change_pct": 10, "days_forward": 1}]},
    "stress-tests": {"positions": _POSITIONS},
}

CHOICE_BOUNDS = {
    "dashboard, signals, decomposition, ex_earnings",
    "implied, forecast, comparison",
    "analysis, history, curvature",
    "call or put",
    "calls or puts",
    "charm, delta, gamma, iv, rho, theta, vanna or vega",
    "compact or full",
    "iron_condor or credit_spread",
    "max_profit, min_loss, risk_reward, probability",
    "credit, max_profit, min_loss, risk_reward, probability",
    "mean_reversion or pairs",
    "high_iv_rank, low_iv_rank, high_vrp, earnings_this_week, high_skew, steep_contango, "
    "mean_reversion, vol_pairs, decorrelation, unusual_volume, pin_risk, list",
}


# Parameters the interface specification names (4.1, 4.4) that the records leave out, each
# inserted before the named record parameter (None: appended).
ADDED_PARAMS = {
    "flow": [
        (
            "limit",
            {
                "name": "strikes_around",
                "type": "query",
                # Spec §8: 20 per side (under compact; full payloads are not windowed).
                "default": 20,
                "bounds": "0 for all",
                "required": False,
            },
        )
    ],
    "greeks-heatmap": [
        (
            None,
            {
                "name": "greek",
                "type": "query",
                "default": "gamma",
                "bounds": "charm, delta, gamma, iv, rho, theta, vanna or vega",
                "required": False,
            },
        )
    ],
    "cross-index-gex": [
        (
            None,
            {
                "name": "detail",
                "type": "query",
                "default": "full for REST, compact for MCP clients",
                "bounds": "compact or full",
                "required": False,
            },
        )
    ],
    # Compact windows (spec 4.4) over the day series: the most recent sessions.
    **{
        slug: [
            (None, {"name": "detail", "type": "query",
                    "default": "full for REST, compact for MCP clients",
                    "bounds": "compact or full", "required": False}),
            (None, {"name": "limit", "type": "query", "default": VOL_SERIES_ROWS,
                    "bounds": "sessions kept under compact", "required": False}),
        ]
        for slug in ("hv-regimes", "skew", "vrp-timeseries", "borrow-rate", "correlation-compare",
                     "relative-value")
    },
    # Optimizer constraints and expiration choice the service documents (optics' own).
    "optimize-strategy": [
        (None, {"name": "expiration", "type": "body", "default": None,
                "bounds": "YYYY-MM-DD", "required": False}),
        (None, {"name": "dte", "type": "body", "default": 30, "bounds": "days",
                "required": False}),
        (None, {"name": "max_width", "type": "body", "default": 10, "bounds": "dollars",
                "required": False}),
        (None, {"name": "min_credit", "type": "body", "default": 0.1, "bounds": "dollars",
                "required": False}),
    ],
    # pop's market: the chain of an optional ticker (as analyze-strategy reads it) or r and q.
    "pop": [
        (None, {"name": "ticker", "type": "body", "default": None, "bounds": "symbol",
                "required": False}),
        (None, {"name": "rate", "type": "body", "default": "the ticker's chain, else 0.04",
                "bounds": "decimal", "required": False}),
        (None, {"name": "dividend_yield", "type": "body",
                "default": "the ticker's chain, else 0", "bounds": "decimal",
                "required": False}),
    ],
    # The risk endpoints' optional price overrides (dollar delta needs each ticker's price).
    **{
        slug: [(None, {"name": "underlying_prices", "type": "body", "default": "live",
                       "bounds": "object of ticker to dollars", "required": False})]
        for slug in ("portfolio-greeks", "scenario-analysis", "stress-tests",
                     "hedge-recommendations")
    },
}


def params_of(e):
    params = list(e["params"])
    for before, added in ADDED_PARAMS.get(e["slug"], []):
        names = [p["name"] for p in params]
        params.insert(names.index(before) if before in names else len(params), added)
    return params


def rust_str(s):
    return json.dumps(s, ensure_ascii=False)


def opt_num(v):
    return "None" if v is None else f"Some({v})"


def choices(bounds):
    return [c.strip() for c in re.split(r",| or ", bounds) if c.strip()]


# Bounds texts that say what optics enforces beyond the records' wording.
BOUNDS_TEXT = {
    # `credit` (the net credit, which is a credit structure's max profit) is what the original
    # service's public assistant client sends by default.
    ("optimize-strategy", "target"): "credit, max_profit, min_loss, risk_reward, probability",
    ("chain", "strikes_around"): (
        f"0 for the full chain, up to {STRIKES_AROUND_MAX}; a negative count is a 400"
    ),
}


def bounds_text(endpoint, p):
    """The bounds text shown in the index: the records' own unless optics states more."""
    return BOUNDS_TEXT.get((endpoint["slug"], p["name"]), p["bounds"])


def param_kind(endpoint, p):
    """The typed kind of a parameter, from its bounds text and location."""
    b = p["bounds"]
    slug, name = endpoint["slug"], p["name"]
    shown = bounds_text(endpoint, p)
    if shown in CHOICE_BOUNDS:
        items = ", ".join(rust_str(c) for c in choices(shown))
        return f"ParamKind::Choice(&[{items}])"
    m = re.fullmatch(r"(-?\d+) to (-?\d+)(, clamped)?", b)
    if m:
        return f"ParamKind::Int {{ min: {m[1]}, max: {m[2]} }}"
    m = re.fullmatch(r"(\d+\.\d+) to (\d+\.\d+)", b)
    if m:
        return f"ParamKind::Float {{ min: Some({m[1]}), max: Some({m[2]}) }}"
    if b in ("0 for all", "0 for the full chain"):
        return f"ParamKind::Int {{ min: 0, max: {STRIKES_AROUND_MAX} }}"
    if b == "rows in all_flow under compact":
        return f"ParamKind::Int {{ min: 1, max: {FLOW_LIMIT_MAX} }}"
    if b == "sessions kept under compact":
        return f"ParamKind::Int {{ min: 1, max: {VOL_SERIES_MAX} }}"
    m = re.fullmatch(r"CSV of (\d+) to (\d+), at most (\d+)( values)?", b)
    if m:
        return f"ParamKind::IntList {{ min: {m[1]}, max: {m[2]}, max_len: {m[3]} }}"
    if b in ("CSV of index ETFs", "1 to 25 symbols, comma-separated"):
        return f"ParamKind::SymbolList {{ max_len: {SYMBOL_LIST_MAX} }}"
    if b == "CSV of field names, or all":
        return "ParamKind::NameList"
    if b in ("any covered symbol", "symbol"):
        return "ParamKind::Symbol"
    if b.startswith("YYYY-MM-DD"):
        return "ParamKind::Date"
    if b == "true or false":
        return "ParamKind::Bool"
    if b in CHOICE_BOUNDS:
        items = ", ".join(rust_str(c) for c in choices(b))
        return f"ParamKind::Choice(&[{items}])"
    if b in ("text", "ISO country", "iron_condor, credit_spread, straddle, strangle and others"):
        return "ParamKind::Text"
    if b == "z-score" and p["type"] == "query":
        return "ParamKind::Float { min: None, max: None }"
    if b == "dollars" and p["type"] == "query":
        return f"ParamKind::Float {{ min: Some({MARKET_CAP_MIN}.0), max: None }}"
    if b in ("dollars", "days", "IV points", "share-equivalents", "z-score", "decimal"):
        return "ParamKind::Number"
    if b.startswith("array of") or b in ("as /portfolio-greeks", "rows from /chain"):
        return "ParamKind::Array"
    if b == "object of ticker to dollars":
        return "ParamKind::Object"
    raise SystemExit(f"{slug}.{name}: unknown bounds text {b!r}; teach gen_registry.py its kind")


# Where the interface spec and the records disagree, the spec is the contract.
DEFAULT_OVERRIDES = {
    # Spec 4.4: zero-dte keeps 30 strikes per side under compact (the records say 15).
    ("zero-dte", "strikes_around"): "30",
}


def default_text(e, p):
    d = DEFAULT_OVERRIDES.get((e["slug"], p["name"]), p["default"])
    if d is None:
        return "None"
    if isinstance(d, bool):
        return f"Some({rust_str('true' if d else 'false')})"
    return f"Some({rust_str(str(d))})"


def location(p):
    return {"path": "ParamLocation::Path", "query": "ParamLocation::Query",
            "body": "ParamLocation::Body"}[p["type"]]


def cost(slug):
    c = COSTS.get(slug, 1)
    if c == "per_symbol":
        return "Cost::PerSymbol"
    return "Cost::Free" if c == 0 else f"Cost::Units({c})"


def example(e):
    path = e["path"].replace("{ticker2}", "QQQ").replace("{ticker}", "SPY")
    if e["method"] == "GET":
        q = EXAMPLE_QUERIES.get(e["slug"])
        line = path + ("?" + q if q else "")
        return f"Example {{ request: {rust_str(line)}, body: None }}"
    body = EXAMPLE_BODIES[e["slug"]]
    return (f"Example {{ request: {rust_str(path)}, "
            f"body: Some({rust_str(json.dumps(body, separators=(',', ':')))}) }}")


def tier(e):
    if e["slug"] in ANY_PLAN:
        return "Tier::Any"
    return {"basic": "Tier::Basic", "premium": "Tier::Premium", "pro": "Tier::Pro"}[e["plan"]]


# The documentation routes of api/src/registry/mod.rs (PLATFORM_ENDPOINTS, in that order): not
# in the records, but mounted like any endpoint, so they get variants of `Endpoint` too.
PLATFORM_SLUGS = ["openapi", "docs", "changelog"]


def variant(slug):
    return "".join(part.capitalize() for part in slug.split("-"))


def endpoint_enum(endpoints):
    """`Endpoint`: one variant per endpoint, so a route names its registry row at compile time."""
    rows = [(e["slug"], e["method"], e["path"], f"&DATA_ENDPOINTS[{i}]")
            for i, e in enumerate(endpoints)]
    rows += [(slug, "GET", None, f"&super::PLATFORM_ENDPOINTS[{i}]")
             for i, slug in enumerate(PLATFORM_SLUGS)]
    out = []
    w = out.append
    w("/// Every endpoint of the contract (the records' endpoints, then the documentation routes),")
    w("/// one variant each: [`crate::handlers::data_routes`] pairs a variant with its handler, so")
    w("/// the route names its registry row at compile time and go-to-definition leads from one to")
    w("/// the other.")
    w("#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]")
    w("pub enum Endpoint {")
    for slug, method, path, _ in rows:
        where = f"`{method} {path}`" if path else "documentation route"
        w(f"    /// `{slug}`: {where}.")
        w(f"    {variant(slug)},")
    w("}")
    w("")
    w("impl Endpoint {")
    w("    /// Every variant, in registry order.")
    w("    pub const ALL: &[Endpoint] = &[")
    for slug, *_ in rows:
        w(f"        Endpoint::{variant(slug)},")
    w("    ];")
    w("")
    w("    /// The endpoint's registry row.")
    w("    pub fn spec(self) -> &'static EndpointSpec {")
    w("        match self {")
    for slug, _, _, spec in rows:
        w(f"            Endpoint::{variant(slug)} => {spec},")
    w("        }")
    w("    }")
    w("")
    w("    /// The endpoint's slug (`gex`, `zero-dte`).")
    w("    pub fn slug(self) -> &'static str {")
    w("        self.spec().slug")
    w("    }")
    w("}")
    return out


def main():
    path = sys.argv[1] if len(sys.argv) > 1 else "reference-records.json"
    with open(path, encoding="utf-8") as f:
        records = json.load(f)
    out = []
    w = out.append
    w("// @generated by api/scripts/gen_registry.py from the interface's reference records")
    w(f"// (records dated {records['records_updated']}). Do not edit by hand: change the script.")
    w("")
    w("use super::{Cost, EndpointSpec, Example, Family, Method, ParamKind, ParamLocation, ParamSpec, Tier};")
    w("")
    w("/// The endpoint families of the interface, in reference order.")
    w("pub(super) static FAMILIES: &[Family] = &[")
    for fam in records["families"]:
        w(f"    Family {{ slug: {rust_str(fam['slug'])}, name: {rust_str(fam['name'])} }},")
    w("];")
    w("")
    w("/// Every endpoint of the interface contract, in reference order.")
    w("pub(super) static DATA_ENDPOINTS: &[EndpointSpec] = &[")
    seen = set()
    for e in records["endpoints"]:
        slug = e["slug"]
        if slug in seen:
            raise SystemExit(f"duplicate slug {slug}")
        seen.add(slug)
        if slug not in SUMMARIES:
            raise SystemExit(f"{slug}: write a summary in SUMMARIES")
        method = {"GET": "Method::Get", "POST": "Method::Post"}[e["method"]]
        w("    EndpointSpec {")
        w(f"        slug: {rust_str(slug)},")
        w(f"        family: {rust_str(e['family'])},")
        w(f"        method: {method},")
        w(f"        path: {rust_str(e['path'])},")
        w(f"        tier: {tier(e)},")
        w(f"        cost: {cost(slug)},")
        w(f"        summary: {rust_str(SUMMARIES[slug])},")
        w("        params: &[")
        for p in params_of(e):
            w("            ParamSpec {")
            w(f"                name: {rust_str(p['name'])},")
            w(f"                location: {location(p)},")
            w(f"                required: {'true' if p['required'] else 'false'},")
            w(f"                default: {default_text(e, p)},")
            w(f"                bounds: {rust_str(bounds_text(e, p))},")
            w(f"                kind: {param_kind(e, p)},")
            w("            },")
        w("        ],")
        w(f"        example: {example(e)},")
        w("    },")
    w("];")
    w("")
    out.extend(endpoint_enum(records["endpoints"]))
    print("\n".join(out))


if __name__ == "__main__":
    main()
