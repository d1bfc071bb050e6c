//! The tool catalog: the interface's 43 assistant tools (names, arguments and defaults as the
//! reference's tool table gives them, so an assistant configured for the original service
//! works unchanged) plus `help`, each with the description an assistant reads, its argument
//! schema and the route that turns a call into an endpoint request ([`crate::routes`]).
//!
//! Bounds and defaults of an argument that is also an endpoint parameter are the endpoint's
//! (the registry's); `catalog_agrees_with_the_registry` in the tests holds the two together.

use serde_json::{Map, Value, json};

use crate::args::{ArgError, Args};
use crate::routes::{self, Call};

/// The shape of one argument, for its JSON schema.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ArgKind {
    /// An underlying symbol (`NVDA`, `^SPX`); any case.
    Symbol,
    /// Comma-separated symbols, at most `max`.
    Symbols {
        /// Most symbols.
        max: usize,
    },
    /// Free text.
    Text,
    /// A date `YYYY-MM-DD`.
    Date,
    /// A whole number in `min..=max`.
    Integer {
        /// Smallest value.
        min: i64,
        /// Largest value.
        max: i64,
    },
    /// A number, bounded where given.
    Number {
        /// Smallest value.
        min: Option<f64>,
        /// Largest value.
        max: Option<f64>,
    },
    /// true or false.
    Boolean,
    /// One of these words (matched in any case).
    Choice(&'static [&'static str]),
    /// A list of objects: a JSON array, or a string holding one (or the tool's text form).
    Objects,
}

/// One argument of a tool.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ArgSpec {
    /// The name, as the reference's tool table spells it.
    pub name: &'static str,
    /// Its shape.
    pub kind: ArgKind,
    /// Whether the call fails without it.
    pub required: bool,
    /// The default as a JSON literal (`"252"`, `"\"call\""`), when there is one.
    pub default: Option<&'static str>,
    /// What it means, for the assistant (units, effect, when to change it).
    pub about: &'static str,
}

/// One tool.
#[derive(Debug, Clone, Copy)]
pub struct ToolSpec {
    /// The tool's name.
    pub name: &'static str,
    /// A short title.
    pub title: &'static str,
    /// What it answers, in which units, when to use it.
    pub about: &'static str,
    /// The registry slugs of the endpoints it may call.
    pub endpoints: &'static [&'static str],
    /// Its arguments.
    pub args: &'static [ArgSpec],
    /// Turns a call's arguments into the endpoint request.
    pub route: fn(&Args) -> Result<Call, ArgError>,
    /// The list a sizing argument trims, when the payload states no window of its own.
    pub window: Option<ListWindow>,
}

/// How a tool's answer states the window of a list the endpoint sizes by an argument, so an
/// assistant knows what was left out and how to ask for more (spec 4.4's `window` block).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListWindow {
    /// The payload's list.
    pub list: &'static str,
    /// The payload field holding how many rows there are in all, when it has one.
    pub total: Option<&'static str>,
    /// How to ask for more.
    pub widen: &'static str,
}

const fn window(
    list: &'static str,
    total: Option<&'static str>,
    widen: &'static str,
) -> Option<ListWindow> {
    Some(ListWindow { list, total, widen })
}

impl ToolSpec {
    /// The argument names, for the unknown-argument note.
    pub fn arg_names(&self) -> Vec<&'static str> {
        self.args.iter().map(|a| a.name).collect()
    }

    /// The JSON schema of the arguments (draft 2020-12 object schema). Argument types are
    /// given as the JSON type an assistant should send; the readers also accept the string
    /// forms clients send, which the descriptions mention where it matters.
    pub fn input_schema(&self) -> Map<String, Value> {
        let mut properties = Map::new();
        for arg in self.args {
            let mut schema = match arg.kind {
                ArgKind::Symbol => {
                    json!({"type": "string", "pattern": "^\\^?[A-Za-z0-9.\\-$]{1,13}$"})
                }
                ArgKind::Symbols { max } => json!({
                    "type": "string",
                    "description_suffix": format!("at most {max} symbols, comma-separated")
                }),
                ArgKind::Text => {
                    json!({"type": "string", "maxLength": crate::args::MAX_TEXT_BYTES})
                }
                ArgKind::Date => {
                    json!({"type": "string", "format": "date", "pattern": "^\\d{4}-\\d{2}-\\d{2}$"})
                }
                ArgKind::Integer { min, max } => {
                    json!({"type": "integer", "minimum": min, "maximum": max})
                }
                ArgKind::Number { min, max } => {
                    let mut n = json!({"type": "number"});
                    if let Some(min) = min {
                        n["minimum"] = json!(min);
                    }
                    if let Some(max) = max {
                        n["maximum"] = json!(max);
                    }
                    n
                }
                ArgKind::Boolean => json!({"type": "boolean"}),
                ArgKind::Choice(choices) => json!({"type": "string", "enum": choices}),
                ArgKind::Objects => json!({
                    "type": ["array", "string"],
                    "items": {"type": "object"}
                }),
            };
            let suffix = schema
                .as_object_mut()
                .and_then(|o| o.remove("description_suffix"));
            let description = match suffix {
                Some(Value::String(s)) => format!("{} ({s}).", arg.about.trim_end_matches('.')),
                _ => arg.about.to_owned(),
            };
            schema["description"] = json!(description);
            if let Some(default) = arg.default {
                schema["default"] = serde_json::from_str(default).unwrap_or(Value::Null);
            }
            properties.insert(arg.name.to_owned(), schema);
        }
        let required: Vec<&str> = self
            .args
            .iter()
            .filter(|a| a.required)
            .map(|a| a.name)
            .collect();
        let mut schema = Map::new();
        schema.insert("type".into(), json!("object"));
        schema.insert("properties".into(), Value::Object(properties));
        if !required.is_empty() {
            schema.insert("required".into(), json!(required));
        }
        schema
    }

    /// The description an assistant reads: what it answers, then its plan and cost from the
    /// registry.
    pub fn description(&self) -> String {
        let mut text = self.about.to_owned();
        let specs: Vec<_> = self
            .endpoints
            .iter()
            .filter_map(|slug| optics_api::registry::endpoint(slug))
            .collect();
        if let Some(first) = specs.first() {
            let tier = specs.iter().map(|s| s.tier).max().unwrap_or(first.tier);
            let plan = match tier.as_str() {
                "any" => "any active plan".to_owned(),
                other => format!("the {other} plan or higher"),
            };
            let per_symbol = specs
                .iter()
                .any(|s| matches!(s.cost, optics_api::registry::Cost::PerSymbol));
            let units = specs
                .iter()
                .filter_map(|s| match s.cost {
                    optics_api::registry::Cost::Units(u) => Some(u),
                    _ => None,
                })
                .max()
                .unwrap_or(0);
            let cost = match (units, per_symbol) {
                (0, true) => "one unit of the monthly budget per symbol".to_owned(),
                (0, false) => "nothing from the monthly budget".to_owned(),
                (u, false) => format!("{u} unit{} of the monthly budget", plural(u)),
                (u, true) => format!(
                    "{u} unit{} of the monthly budget (with `tickers`, one per symbol)",
                    plural(u)
                ),
            };
            text.push_str(&format!(
                " Needs {plan}; each call costs {cost} and counts against the token's per-minute \
                 and per-hour limits."
            ));
        }
        text
    }
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// The tool named `name`.
pub fn tool(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

const fn arg(
    name: &'static str,
    kind: ArgKind,
    required: bool,
    default: Option<&'static str>,
    about: &'static str,
) -> ArgSpec {
    ArgSpec {
        name,
        kind,
        required,
        default,
        about,
    }
}

const TICKER: ArgSpec = arg(
    "ticker",
    ArgKind::Symbol,
    true,
    None,
    "Underlying symbol, e.g. NVDA or SPY (any case; use search_tickers when unsure).",
);
const TICKER_OR_BATCH: ArgSpec = arg(
    "ticker",
    ArgKind::Symbol,
    false,
    None,
    "Underlying symbol, e.g. NVDA. Required unless `tickers` is given.",
);
const TICKERS_BATCH: ArgSpec = arg(
    "tickers",
    ArgKind::Symbols { max: 25 },
    false,
    None,
    "Several symbols at once, e.g. \"AAPL,MSFT,NVDA\"; when given, `ticker` is ignored and one \
     batch answer comes back",
);
const EXPIRATION: ArgSpec = arg(
    "expiration",
    ArgKind::Date,
    false,
    None,
    "Expiration date YYYY-MM-DD; default: the nearest listed expiration with time left. Use \
     get_expirations to see the listed dates.",
);
const POSITIONS: ArgSpec = arg(
    "positions",
    ArgKind::Objects,
    true,
    None,
    "Portfolio positions: a JSON array (or a string holding one) of objects {ticker, \
     position_type: STOCK|CALL|PUT, quantity (contracts or shares, negative = short), strike, \
     expiration, entry_price, current_price, delta, gamma, theta, vega, iv (decimal, 0.35)}. \
     Per-share Greeks as get_options_chain reports them; an iv above 5 is read as \
     percentage points and said so in the answer.",
);
const DETAIL: ArgSpec = arg(
    "detail",
    ArgKind::Choice(routes::DETAILS),
    false,
    Some("\"compact\""),
    "compact (default for tools) trims the per-strike or per-trade rows to a window; full \
     returns every row (large). Scalars and summaries are never trimmed.",
);

/// Every tool, in the reference's order, then `help`.
pub static TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "get_iv_rank",
        title: "IV rank and percentile",
        about: "Where a stock's implied volatility sits within its own range: IV rank (0-100, \
                position between the lookback's low and high) and IV percentile (share of days \
                with lower IV), with the current IV in percentage points and the basis used. \
                Use it to judge whether options are rich or cheap for that name; pass `tickers` \
                to rank a watchlist in one call.",
        endpoints: &["iv-rank", "iv-rank-batch"],
        args: &[
            TICKER_OR_BATCH,
            arg(
                "lookback_days",
                ArgKind::Integer { min: 20, max: 1260 },
                false,
                Some("252"),
                "Trading days of IV history the rank is measured over (252 = one year).",
            ),
            TICKERS_BATCH,
        ],
        route: routes::iv_rank,
        window: None,
    },
    ToolSpec {
        name: "get_volatility_cone",
        title: "Volatility cone",
        about: "Realized-volatility cone: for each window (days) the min, percentiles and max of \
                close-to-close realized vol over history, next to the current realized and the \
                implied vol at that tenor, all annualised percentage points. Use it to see \
                whether IV at a tenor is high or low against what the stock has actually done.",
        endpoints: &["volatility-cone"],
        args: &[
            TICKER,
            arg(
                "periods",
                ArgKind::Text,
                false,
                Some("\"10,20,30,60,90\""),
                "Windows in trading days, comma-separated, each 2 to 252, at most 8.",
            ),
        ],
        route: routes::volatility_cone,
        window: None,
    },
    ToolSpec {
        name: "get_volatility_risk_premium",
        title: "Volatility risk premium",
        about: "Implied minus realized volatility (points, both annualised) and their ratio. \
                view=current gives today's premium with its history percentile; \
                view=timeseries the daily series; view=expirations the premium per listed \
                expiration. A negative premium means the stock has moved more than options \
                price.",
        endpoints: &["vrp", "vrp-timeseries", "vrp-expirations"],
        args: &[
            TICKER,
            arg(
                "lookback_days",
                ArgKind::Integer { min: 5, max: 504 },
                false,
                Some("30"),
                "current: realized window in days (5 to 252, default 30); timeseries: days of \
                 history (10 to 504, default 60). Not used by expirations.",
            ),
            arg(
                "view",
                ArgKind::Choice(routes::VRP_VIEWS),
                false,
                Some("\"current\""),
                "Which answer: current, timeseries or expirations.",
            ),
        ],
        route: routes::vrp,
        window: window(
            "timeseries",
            None,
            "view=timeseries: lookback_days reaches back up to 504 sessions",
        ),
    },
    ToolSpec {
        name: "get_term_structure",
        title: "IV term structure",
        about: "ATM implied volatility per listed expiration (points) with days to expiry, the \
                slope and whether the curve is in contango or backwardation. Use it for event \
                premia and calendar-spread questions.",
        endpoints: &["term-structure"],
        args: &[
            TICKER,
            arg(
                "num_expirations",
                ArgKind::Integer { min: 1, max: 20 },
                false,
                Some("8"),
                "Listed expirations returned, nearest first.",
            ),
        ],
        route: routes::term_structure,
        window: window(
            "term_structure",
            None,
            "num_expirations returns up to 20 expirations",
        ),
    },
    ToolSpec {
        name: "find_iv_opportunities",
        title: "IV mean-reversion opportunities",
        about: "Whether implied volatility is statistically stretched: the z-score of current \
                IV against its history per tenor, with the strategies that would fade it. The \
                answer adds `threshold_assessment`: whether |z| reaches `z_score_threshold`.",
        endpoints: &["iv-opportunities"],
        args: &[
            TICKER,
            arg(
                "z_score_threshold",
                ArgKind::Number {
                    min: Some(0.0),
                    max: Some(10.0),
                },
                false,
                Some("2.0"),
                "How many standard deviations from the mean count as an opportunity.",
            ),
        ],
        route: routes::iv_opportunities,
        window: None,
    },
    ToolSpec {
        name: "get_vix_snapshot",
        title: "VIX snapshot",
        about: "The VIX level, its term structure (VIX9D, VIX, VIX3M, VIX6M where carried), \
                contango or backwardation, and where the level ranks historically. Use it for \
                the market's overall fear gauge.",
        endpoints: &["vix"],
        args: &[],
        route: routes::vix,
        window: None,
    },
    ToolSpec {
        name: "get_monies_surface",
        title: "Volatility surface by moneyness",
        about: "The implied-volatility surface by expiration and delta (moneyness) bucket, in \
                points: surface=implied the market's, forecast the data feed's forecast \
                surface, comparison both side by side.",
        endpoints: &["monies"],
        args: &[
            TICKER,
            arg(
                "surface",
                ArgKind::Choice(routes::MONIES_SURFACES),
                false,
                Some("\"implied\""),
                "implied, forecast or comparison.",
            ),
        ],
        route: routes::monies,
        window: None,
    },
    ToolSpec {
        name: "get_options_chain",
        title: "Options chain",
        about: "The live option chain: per strike the call and put bid, ask, mid, IV (decimal), \
                Greeks per share, volume and open interest, plus the forward-implied stock \
                price. Sized by `strikes_around` (strikes each side of the money) and \
                `num_expirations`; widen them only when needed, full chains are large.",
        endpoints: &["chain"],
        args: &[
            TICKER,
            EXPIRATION,
            arg(
                "num_expirations",
                ArgKind::Integer { min: 1, max: 10 },
                false,
                Some("1"),
                "How many expirations from `expiration` on.",
            ),
            arg(
                "strikes_around",
                ArgKind::Integer { min: 0, max: 500 },
                false,
                Some("20"),
                "Strikes on each side of the stock price; 0 returns every strike.",
            ),
        ],
        route: routes::chain,
        window: None,
    },
    ToolSpec {
        name: "get_expirations",
        title: "Listed expirations",
        about: "Every listed expiration of the underlying with days to expiry. Use it before \
                tools that take an `expiration`.",
        endpoints: &["expirations"],
        args: &[TICKER],
        route: routes::expirations,
        window: None,
    },
    ToolSpec {
        name: "get_options_by_delta",
        title: "Option nearest a delta",
        about: "The contract whose delta is closest to a target (e.g. the 30-delta call) at one \
                expiration, with its strike, prices, IV (decimal and iv_pct) and Greeks. Use \
                it to pick strikes the way traders quote them.",
        endpoints: &["options-by-delta"],
        args: &[
            TICKER,
            arg(
                "target_delta",
                ArgKind::Number {
                    min: Some(0.01),
                    max: Some(0.99),
                },
                false,
                Some("0.3"),
                "Absolute delta wanted, 0.01 to 0.99 (0.30 = the 30-delta option; also for puts).",
            ),
            arg(
                "option_type",
                ArgKind::Choice(routes::OPTION_TYPES),
                false,
                Some("\"call\""),
                "call or put.",
            ),
            EXPIRATION,
        ],
        route: routes::options_by_delta,
        window: None,
    },
    ToolSpec {
        name: "get_stock_price",
        title: "Stock price",
        about: "The underlying's price (forward-implied from the nearest expiration during the \
                session), change on the day and the session it belongs to.",
        endpoints: &["stock"],
        args: &[TICKER],
        route: routes::stock,
        window: None,
    },
    ToolSpec {
        name: "get_historical_chain",
        title: "Chain at a past date",
        about: "The option chain of one expiration as it stood at the close of a past trading \
                day, from the archive. Use it to study how a position was priced then.",
        endpoints: &["chain-at-time"],
        args: &[
            TICKER,
            arg(
                "expiration",
                ArgKind::Date,
                true,
                None,
                "Expiration date YYYY-MM-DD of the contracts wanted.",
            ),
            arg(
                "trade_date",
                ArgKind::Date,
                true,
                None,
                "The past trading day YYYY-MM-DD whose close to return.",
            ),
        ],
        route: routes::historical_chain,
        window: None,
    },
    ToolSpec {
        name: "simulate_option_chain",
        title: "What-if chain",
        about: "Reprices the live chain of one expiration under a hypothetical stock price, \
                days to expiry and IV shift (Black-Scholes with each strike's own IV plus the \
                shift). Use it for 'what is this option worth if the stock is at X in N days'.",
        endpoints: &["simulate-chain"],
        args: &[
            TICKER,
            arg(
                "sim_price",
                ArgKind::Number {
                    min: Some(0.0),
                    max: None,
                },
                true,
                None,
                "Hypothetical stock price, dollars.",
            ),
            arg(
                "sim_dte",
                ArgKind::Number {
                    min: Some(0.0),
                    max: Some(3650.0),
                },
                true,
                None,
                "Hypothetical days to expiration.",
            ),
            arg(
                "iv_adjustment",
                ArgKind::Number {
                    min: Some(-100.0),
                    max: Some(500.0),
                },
                false,
                Some("0"),
                "IV shift in percentage points added to every strike (5 = +5 vol points).",
            ),
            arg(
                "expiration",
                ArgKind::Date,
                false,
                None,
                "Which expiration's chain to simulate (YYYY-MM-DD); default the nearest.",
            ),
        ],
        route: routes::simulate_chain,
        window: None,
    },
    ToolSpec {
        name: "search_tickers",
        title: "Search symbols",
        about: "Finds covered underlyings by symbol or company name, with whether options data \
                is carried. Use it when a symbol is unknown or a tool said it is not covered.",
        endpoints: &["search"],
        args: &[
            arg(
                "query",
                ArgKind::Text,
                true,
                None,
                "Symbol or company name fragment, e.g. \"nvid\".",
            ),
            arg(
                "limit",
                ArgKind::Integer { min: 1, max: 20 },
                false,
                Some("8"),
                "Most matches returned.",
            ),
        ],
        route: routes::search,
        window: window("results", None, "limit returns up to 20 matches"),
    },
    ToolSpec {
        name: "calculate_expected_move",
        title: "Expected move",
        about: "The move the options market prices by an expiration, from the ATM straddle: \
                dollars and percent, the one-sigma range and the straddle used. Pass `tickers` \
                for several names at once.",
        endpoints: &["expected-move", "expected-move-batch"],
        args: &[TICKER_OR_BATCH, EXPIRATION, TICKERS_BATCH],
        route: routes::expected_move,
        window: None,
    },
    ToolSpec {
        name: "get_greeks_heatmap",
        title: "Greeks heatmap",
        about: "A matrix of one Greek across strikes (columns, within 15% of the price) and \
                expirations (rows, nearest 12), per share, for calls or puts. Use it to see \
                where delta, gamma, theta or vega concentrate on the chain.",
        endpoints: &["greeks-heatmap"],
        args: &[
            TICKER,
            arg(
                "greek",
                ArgKind::Choice(routes::HEATMAP_GREEKS),
                false,
                Some("\"delta\""),
                "Which matrix to return; all returns every one (large).",
            ),
            arg(
                "option_type",
                ArgKind::Choice(routes::HEATMAP_SIDES),
                false,
                Some("\"calls\""),
                "calls or puts.",
            ),
        ],
        route: routes::greeks_heatmap,
        window: None,
    },
    ToolSpec {
        name: "get_charm_exposure",
        title: "Dealer charm exposure",
        about: "Dealer charm exposure (how dealers' delta hedge drifts per day as time passes) \
                by strike and in total, under the dealer convention (long customer-sold calls, \
                short customer-bought puts). Use it for end-of-day and overnight hedging flows.",
        endpoints: &["charm"],
        args: &[TICKER, EXPIRATION],
        route: routes::charm,
        window: None,
    },
    ToolSpec {
        name: "get_third_order_greeks",
        title: "Third-order Greeks",
        about: "Speed, color, ultima, zomma, vomma and the other higher-order Greeks per strike \
                of one expiration, per share. For convexity and vol-of-vol questions.",
        endpoints: &["third-order-greeks"],
        args: &[TICKER, EXPIRATION],
        route: routes::third_order_greeks,
        window: None,
    },
    ToolSpec {
        name: "calculate_portfolio_greeks",
        title: "Portfolio Greeks",
        about: "Sums the delta, gamma, theta and vega of a portfolio of stock and option \
                positions (per position and in total, in share-equivalents and dollars), with \
                the net exposure per underlying.",
        endpoints: &["portfolio-greeks"],
        args: &[POSITIONS],
        route: routes::portfolio_greeks,
        window: None,
    },
    ToolSpec {
        name: "calculate_probability_of_profit",
        title: "Probability of profit",
        about: "Probability that a set of option legs ends in profit at expiration under a \
                lognormal model with the legs' IVs, with breakevens, max profit and max loss.",
        endpoints: &["pop"],
        args: &[
            arg(
                "legs",
                ArgKind::Objects,
                true,
                None,
                "Legs: a JSON array (or a string holding one) of {option_type: call|put, \
                 action: buy|sell, strike, premium (dollars per share), iv (decimal 0.35; above 5 \
                 is read as points), quantity}.",
            ),
            arg(
                "stock_price",
                ArgKind::Number {
                    min: Some(0.0),
                    max: None,
                },
                true,
                None,
                "Current stock price, dollars.",
            ),
            arg(
                "days_to_exp",
                ArgKind::Number {
                    min: Some(0.0),
                    max: Some(3650.0),
                },
                true,
                None,
                "Days to expiration.",
            ),
        ],
        route: routes::pop,
        window: None,
    },
    ToolSpec {
        name: "get_gex",
        title: "Gamma exposure",
        about: "Dealer gamma exposure: total GEX in dollars per 1% move (and billions), the \
                gamma flip, call and put walls, GEX by strike and the profile across prices, \
                under the dealer convention. Compact by default: 25 strikes each side, with a \
                `window` block saying how many rows exist, and by_expiration with each \
                expiration's totals only (detail=full returns every list). Pass `tickers` for \
                several names.",
        endpoints: &["gex", "gex-batch"],
        args: &[
            TICKER_OR_BATCH,
            EXPIRATION,
            arg(
                "aggregate",
                ArgKind::Boolean,
                false,
                Some("true"),
                "true sums every expiration; false uses only `expiration` (or the nearest).",
            ),
            TICKERS_BATCH,
            arg(
                "strikes_around",
                ArgKind::Integer { min: 0, max: 500 },
                false,
                Some("25"),
                "Strikes each side of the price in the per-strike rows; 0 for all.",
            ),
            DETAIL,
        ],
        route: routes::gex,
        window: None,
    },
    ToolSpec {
        name: "get_cross_index_gex",
        title: "GEX across indices",
        about: "Gamma exposure of several index ETFs side by side (total, flip, walls, regime), \
                to compare positioning across SPY, QQQ, IWM and DIA.",
        endpoints: &["cross-index-gex"],
        args: &[arg(
            "tickers",
            ArgKind::Symbols { max: 10 },
            false,
            Some("\"SPY,QQQ,IWM,DIA\""),
            "Index ETFs to compare",
        )],
        route: routes::cross_index_gex,
        window: None,
    },
    ToolSpec {
        name: "get_zero_dte",
        title: "Zero-days-to-expiry dashboard",
        about: "Today's expiring options: GEX by strike, pin levels, theta burn per hour, risk \
                reversal, the ATM straddle and regime labels. Compact by default (15 strikes \
                each side, with a `window` block).",
        endpoints: &["zero-dte"],
        args: &[
            TICKER,
            arg(
                "strikes_around",
                ArgKind::Integer { min: 0, max: 500 },
                false,
                Some("30"),
                "Strikes each side of the price; 0 for all.",
            ),
            DETAIL,
        ],
        route: routes::zero_dte,
        window: None,
    },
    ToolSpec {
        name: "get_max_pain",
        title: "Max pain",
        about: "The max-pain strike of one expiration (where option holders lose the most at \
                expiry) with the payout curve and its distance from the price.",
        endpoints: &["max-pain"],
        args: &[TICKER, EXPIRATION],
        route: routes::max_pain,
        window: None,
    },
    ToolSpec {
        name: "get_volume_profile",
        title: "Volume and open interest by strike",
        about: "Call and put volume and open interest per strike of one expiration, with the \
                put/call ratios and the strikes where activity concentrates.",
        endpoints: &["volume-profile"],
        args: &[TICKER, EXPIRATION],
        route: routes::volume_profile,
        window: None,
    },
    ToolSpec {
        name: "get_options_flow",
        title: "Options flow",
        about: "Today's option trades: the largest, the unusual (volume far above open interest), \
                sweeps and blocks, with premium in dollars and the bullish/bearish split. \
                Compact by default (25 rows of all_flow, 10 largest and 10 unusual, with a \
                `window` block).",
        endpoints: &["flow"],
        args: &[
            TICKER,
            arg(
                "limit",
                ArgKind::Integer { min: 1, max: 500 },
                false,
                Some("25"),
                "Rows of all_flow returned under compact.",
            ),
            DETAIL,
        ],
        route: routes::flow,
        window: None,
    },
    ToolSpec {
        name: "get_smart_money_flow",
        title: "Smart-money flow",
        about: "Flow filtered to large, opening, aggressive trades, with a net sentiment score \
                and the contracts that carried it.",
        endpoints: &["smart-money"],
        args: &[TICKER],
        route: routes::smart_money,
        window: None,
    },
    ToolSpec {
        name: "scan_volatility_arb",
        title: "Volatility arbitrage scan",
        about: "Scans the covered names for implied volatility far from realized or from its \
                peers and lists the candidates with the gap in points.",
        endpoints: &["vol-arb-scan"],
        args: &[],
        route: routes::vol_arb_scan,
        window: None,
    },
    ToolSpec {
        name: "screen_market",
        title: "Stock screener",
        about: "Runs one of the preset screens over the covered universe (end-of-day data) and \
                lists the matches with the fields the screen ranks on. screen_type=list names \
                the presets.",
        endpoints: &["screen"],
        args: &[
            arg(
                "screen_type",
                ArgKind::Choice(&[
                    "high_iv_rank",
                    "low_iv_rank",
                    "high_vrp",
                    "earnings_this_week",
                    "high_skew",
                    "steep_contango",
                    "mean_reversion",
                    "vol_pairs",
                    "decorrelation",
                    "unusual_volume",
                    "pin_risk",
                    "list",
                ]),
                false,
                Some("\"high_iv_rank\""),
                "Which screen.",
            ),
            arg(
                "limit",
                ArgKind::Integer { min: 1, max: 200 },
                false,
                Some("20"),
                "Most rows returned.",
            ),
            arg(
                "min_market_cap",
                ArgKind::Number {
                    min: Some(0.0),
                    max: None,
                },
                false,
                Some("1000000000"),
                "Smallest market capitalisation, dollars (1e9 = $1B).",
            ),
            arg(
                "exclude_earnings_days",
                ArgKind::Integer { min: 0, max: 60 },
                false,
                Some("0"),
                "Drop names reporting earnings within this many days; 0 keeps all.",
            ),
        ],
        route: routes::screen,
        window: window(
            "results",
            Some("total_matches"),
            "limit returns up to 200 rows",
        ),
    },
    ToolSpec {
        name: "get_market_overview",
        title: "Market overview",
        about: "A one-call read of the market: index levels and moves, VIX and its term \
                structure, breadth of IV rank across the universe, the biggest IV movers and \
                the week's earnings.",
        endpoints: &["market-overview"],
        args: &[],
        route: routes::market_overview,
        window: None,
    },
    ToolSpec {
        name: "scan_relative_value",
        title: "Relative-value scan",
        about: "Names whose IV is stretched against their own history (view=mean_reversion) or \
                pairs whose IV spread is stretched (view=pairs), ranked by z-score.",
        endpoints: &["relative-value-scan"],
        args: &[
            arg(
                "view",
                ArgKind::Choice(routes::RELATIVE_VALUE_VIEWS),
                false,
                Some("\"mean_reversion\""),
                "mean_reversion or pairs.",
            ),
            arg(
                "limit",
                ArgKind::Integer { min: 1, max: 50 },
                false,
                Some("20"),
                "Most rows returned.",
            ),
            arg(
                "threshold",
                ArgKind::Number {
                    min: Some(0.0),
                    max: Some(10.0),
                },
                false,
                Some("1.5"),
                "Smallest |z-score| listed.",
            ),
        ],
        route: routes::relative_value_scan,
        window: window(
            "results",
            Some("total_matches"),
            "limit returns up to 50 rows; a lower threshold lists more names",
        ),
    },
    ToolSpec {
        name: "get_earnings_calendar",
        title: "Earnings calendar",
        about: "Upcoming earnings reports with date, timing (before/after the session), the \
                options-implied move and the historical average move. `min_market_cap` \
                filters the rows in the answer.",
        endpoints: &["earnings-calendar"],
        args: &[
            arg(
                "days_ahead",
                ArgKind::Integer { min: 1, max: 90 },
                false,
                Some("7"),
                "Calendar days ahead to cover.",
            ),
            arg(
                "min_market_cap",
                ArgKind::Number {
                    min: Some(0.0),
                    max: None,
                },
                false,
                None,
                "Smallest market cap kept: in billions of dollars when under 100,000 (50 = \
                 $50B), otherwise in dollars. Rows without a market cap are dropped when set.",
            ),
        ],
        route: routes::earnings_calendar,
        window: window(
            "earnings",
            Some("total_count"),
            "days_ahead covers up to 90 days",
        ),
    },
    ToolSpec {
        name: "get_economic_calendar",
        title: "Economic calendar",
        about: "Scheduled US economic releases and Fed events with time (US Eastern), \
                importance, forecast and prior values.",
        endpoints: &["economic-calendar"],
        args: &[
            arg(
                "from_date",
                ArgKind::Date,
                false,
                None,
                "First day YYYY-MM-DD; default today.",
            ),
            arg(
                "to_date",
                ArgKind::Date,
                false,
                None,
                "Last day YYYY-MM-DD; default 14 days after from_date.",
            ),
        ],
        route: routes::economic_calendar,
        window: None,
    },
    ToolSpec {
        name: "analyze_earnings_history",
        title: "Earnings history",
        about: "Past earnings reports of a stock: EPS estimate and actual, surprise, and the \
                close-to-open reaction move per quarter with its average.",
        endpoints: &["earnings-history"],
        args: &[TICKER],
        route: routes::earnings_history,
        window: None,
    },
    ToolSpec {
        name: "get_earnings_move_analysis",
        title: "Earnings move analysis",
        about: "Earnings-move analytics, one view per call: mispricing (implied vs historical \
                move), historical_moves (moves over windows around reports), \
                expected_vs_actual, verdict (whether the straddle paid), seasonality, \
                post_drift (drift after reports) and iv_crush (IV before and after).",
        endpoints: &[
            "mispricing-assessment",
            "historical-moves",
            "expected-vs-actual",
            "earnings-verdict",
            "seasonality",
            "post-earnings-drift",
            "iv-crush",
        ],
        args: &[
            TICKER,
            arg(
                "analysis",
                ArgKind::Choice(routes::EARNINGS_ANALYSES),
                false,
                Some("\"mispricing\""),
                "Which view.",
            ),
            arg(
                "periods",
                ArgKind::Text,
                false,
                None,
                "historical_moves only: windows in days, comma-separated (default 7,14,21,30).",
            ),
        ],
        route: routes::earnings_move_analysis,
        window: None,
    },
    ToolSpec {
        name: "get_ticker_analytics",
        title: "Ticker analytics",
        about: "Per-stock analytics, one view per call: skew, dividends, borrow_rate, \
                correlation (or correlation against `compare_with`), hv_regimes, \
                price_context, relative_value, greeks_exposure (dealer delta, gamma, vanna, \
                charm and more by strike; each profile kept to 25 strikes each side of the \
                price).",
        endpoints: &[
            "skew",
            "dividend",
            "borrow-rate",
            "correlation",
            "correlation-compare",
            "hv-regimes",
            "price-context",
            "relative-value",
            "greeks-exposure",
        ],
        args: &[
            TICKER,
            arg(
                "analysis",
                ArgKind::Choice(routes::TICKER_ANALYSES),
                true,
                None,
                "Which view.",
            ),
            arg(
                "expiration",
                ArgKind::Date,
                false,
                None,
                "greeks_exposure only: one expiration YYYY-MM-DD instead of all.",
            ),
            arg(
                "days",
                ArgKind::Integer { min: 20, max: 1000 },
                false,
                Some("252"),
                "History length in trading days (skew, hv_regimes, borrow_rate, \
                 relative_value, correlation with compare_with).",
            ),
            arg(
                "view",
                ArgKind::Text,
                false,
                None,
                "skew: analysis, history or curvature; hv_regimes: dashboard, signals, \
                 decomposition or ex_earnings.",
            ),
            arg(
                "compare_with",
                ArgKind::Symbol,
                false,
                None,
                "correlation only: a second symbol for the pairwise comparison.",
            ),
        ],
        route: routes::ticker_analytics,
        window: window("timeseries", None, "days reaches back up to 1000 sessions"),
    },
    ToolSpec {
        name: "get_orats_cores",
        title: "Core summary fields",
        about: "The stock's end-of-day summary row in the vendor's field names (IV by tenor, \
                slopes, realized vols, earnings effect, borrow, price changes in percentage \
                points). Default: a curated subset; `fields` picks others (see help \
                cores).",
        endpoints: &["cores"],
        args: &[
            TICKER,
            arg(
                "fields",
                ArgKind::Text,
                false,
                None,
                "Comma-separated field names, or all (473 fields, large).",
            ),
        ],
        route: routes::cores,
        window: None,
    },
    ToolSpec {
        name: "build_strategy",
        title: "Build a strategy",
        about: "Builds a named options strategy from the live chain (strikes by target delta \
                and wing width) and analyses it: legs with prices, net debit or credit, max \
                profit and loss, breakevens, probability of profit and Greeks.",
        endpoints: &["build-strategy"],
        args: &[
            TICKER,
            arg(
                "strategy_type",
                ArgKind::Text,
                true,
                None,
                "e.g. iron_condor, credit_spread, put_credit_spread, call_credit_spread, \
                 straddle, strangle, butterfly, covered_call, collar, calendar.",
            ),
            arg(
                "expiration",
                ArgKind::Date,
                false,
                None,
                "Expiration YYYY-MM-DD; default about 30 days out.",
            ),
            arg(
                "width",
                ArgKind::Number {
                    min: Some(0.0),
                    max: None,
                },
                false,
                Some("5"),
                "Wing width in dollars.",
            ),
            arg(
                "target_delta",
                ArgKind::Number {
                    min: Some(0.05),
                    max: Some(0.5),
                },
                false,
                Some("0.3"),
                "Delta of the short strikes, 0.05 to 0.50.",
            ),
        ],
        route: routes::build_strategy,
        window: None,
    },
    ToolSpec {
        name: "analyze_strategy",
        title: "Analyse a strategy",
        about: "Analyses legs you give: net debit or credit, max profit and loss, breakevens, \
                probability of profit, Greeks and the P&L curve. Legs without expiration or \
                premium are priced from the live chain at the nearest expiration with time \
                left, and the answer says which expiration and prices were used.",
        endpoints: &["analyze-strategy"],
        args: &[
            TICKER,
            arg(
                "legs",
                ArgKind::Objects,
                true,
                None,
                "Legs as text \"BUY 1 C 150, SELL 1 C 155\" (action, quantity, C or P, \
                 strike) or as a JSON array of {type: call|put, action: buy|sell, strike, \
                 quantity, expiration, premium, iv (decimal)}.",
            ),
        ],
        route: routes::analyze_strategy,
        window: None,
    },
    ToolSpec {
        name: "optimize_strategy",
        title: "Optimise a strategy",
        about: "Searches the strikes of an iron condor or credit spread for the best one by a \
                target: credit (largest net credit), max_profit, min_loss, risk_reward or \
                probability.",
        endpoints: &["optimize-strategy"],
        args: &[
            TICKER,
            arg(
                "strategy_type",
                ArgKind::Text,
                true,
                None,
                "iron_condor, credit_spread, put_credit_spread or call_credit_spread.",
            ),
            arg(
                "target",
                ArgKind::Choice(routes::OPTIMIZE_TARGETS),
                false,
                Some("\"credit\""),
                "What to maximise.",
            ),
        ],
        route: routes::optimize_strategy,
        window: None,
    },
    ToolSpec {
        name: "run_scenario_analysis",
        title: "Scenario P&L",
        about: "First-order (Greeks-based) P&L of a portfolio under one scenario: a stock move in \
                percent, an IV change in points and days passing. An estimate from the Greeks \
                supplied, not a full repricing.",
        endpoints: &["scenario-analysis"],
        args: &[
            POSITIONS,
            arg(
                "stock_move_pct",
                ArgKind::Number {
                    min: Some(-100.0),
                    max: Some(1000.0),
                },
                false,
                Some("0"),
                "Stock move in percent (-10 = down 10%).",
            ),
            arg(
                "iv_change_pct",
                ArgKind::Number {
                    min: Some(-100.0),
                    max: Some(500.0),
                },
                false,
                Some("0"),
                "IV change in vol points (5 = +5 points).",
            ),
            arg(
                "days_forward",
                ArgKind::Integer { min: 0, max: 3650 },
                false,
                Some("0"),
                "Days passing.",
            ),
        ],
        route: routes::scenario_analysis,
        window: None,
    },
    ToolSpec {
        name: "generate_stress_tests",
        title: "Stress tests",
        about: "The portfolio's first-order P&L under a fixed grid of market shocks (crashes, \
                rallies, vol spikes and crushes) with the worst case named.",
        endpoints: &["stress-tests"],
        args: &[POSITIONS],
        route: routes::stress_tests,
        window: None,
    },
    ToolSpec {
        name: "get_hedge_recommendations",
        title: "Hedge recommendations",
        about: "How to bring the portfolio's delta to a target with shares or options of a \
                hedge underlying (share-equivalent, not beta-weighted), with costs.",
        endpoints: &["hedge-recommendations"],
        args: &[
            POSITIONS,
            arg(
                "hedge_ticker",
                ArgKind::Symbol,
                false,
                Some("\"SPY\""),
                "The instrument to hedge with.",
            ),
            arg(
                "target_delta",
                ArgKind::Number {
                    min: None,
                    max: None,
                },
                false,
                Some("0"),
                "Delta wanted after the hedge, share-equivalents.",
            ),
        ],
        route: routes::hedge_recommendations,
        window: None,
    },
    ToolSpec {
        name: "help",
        title: "How to use these tools",
        about: "Explains the tools and the data conventions from the served API reference: with \
                no topic, the tool list and conventions; with a tool name or endpoint name, \
                that tool's arguments and the endpoint's reference section. Free.",
        endpoints: &[],
        args: &[arg(
            "topic",
            ArgKind::Text,
            false,
            None,
            "A tool name (get_gex), an endpoint name (gex, cores) or a word (iv, units, \
             limits).",
        )],
        route: routes::help,
        window: None,
    },
];
