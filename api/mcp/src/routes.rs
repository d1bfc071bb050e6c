//! From a tool call to the endpoint request that answers it.
//!
//! Each tool has one function here (named after the tool, listed in [`crate::catalog`]): it
//! reads the arguments with the lenient readers of [`crate::args`], picks the endpoint (the
//! batch endpoint when `tickers` is given; the view's endpoint for multi-view tools) and fills
//! the path, query or body. Arguments left out are left out of the request too, so the
//! endpoint's documented default applies — one default, the registry's.

use serde_json::{Map, Value, json};

use optics_compute::strategy::IV_PERCENT_THRESHOLD;

use crate::args::{ArgError, Args, JsonList};

// The words each multi-choice argument takes: one list serves the schema ([`crate::catalog`])
// and the route that reads it.

/// `get_volatility_risk_premium`'s `view`.
pub const VRP_VIEWS: &[&str] = &["current", "timeseries", "expirations"];
/// `get_monies_surface`'s `surface`.
pub const MONIES_SURFACES: &[&str] = &["implied", "forecast", "comparison"];
/// `get_options_by_delta`'s `option_type`.
pub const OPTION_TYPES: &[&str] = &["call", "put"];
/// `get_greeks_heatmap`'s `greek` (`all`: every matrix).
pub const HEATMAP_GREEKS: &[&str] = &[
    "delta", "gamma", "theta", "vega", "rho", "charm", "vanna", "iv", "all",
];
/// `get_greeks_heatmap`'s `option_type`.
pub const HEATMAP_SIDES: &[&str] = &["calls", "puts"];
/// The compact-window `detail` of gex, zero-dte and flow.
pub const DETAILS: &[&str] = &["compact", "full"];
/// `scan_relative_value`'s `view`.
pub const RELATIVE_VALUE_VIEWS: &[&str] = &["mean_reversion", "pairs"];
/// `get_earnings_move_analysis`'s `analysis`.
pub const EARNINGS_ANALYSES: &[&str] = &[
    "mispricing",
    "historical_moves",
    "expected_vs_actual",
    "verdict",
    "seasonality",
    "post_drift",
    "iv_crush",
];
/// `get_ticker_analytics`'s `analysis`.
pub const TICKER_ANALYSES: &[&str] = &[
    "skew",
    "dividends",
    "borrow_rate",
    "correlation",
    "hv_regimes",
    "price_context",
    "relative_value",
    "greeks_exposure",
];
/// `optimize_strategy`'s `target` (`credit` is the endpoint's max_profit).
pub const OPTIMIZE_TARGETS: &[&str] = &[
    "credit",
    "max_profit",
    "min_loss",
    "risk_reward",
    "probability",
];

/// What a tool call becomes.
#[derive(Debug, Clone, PartialEq)]
pub enum Target {
    /// A request to a data endpoint.
    Endpoint {
        /// Registry slug.
        slug: &'static str,
        /// Values for the path's `{name}` segments.
        path: Vec<(&'static str, String)>,
        /// Query parameters.
        query: Vec<(&'static str, String)>,
        /// JSON body (POST endpoints).
        body: Option<Value>,
    },
    /// The `help` tool: an answer from the served reference.
    Help {
        /// The topic asked about, if any.
        topic: Option<String>,
    },
}

/// Changes a tool makes to the endpoint's payload, each stated in the answer.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Shape {
    /// The payload as the endpoint returns it.
    AsIs,
    /// `greek_matrices` reduced to one Greek.
    OneGreek(&'static str),
    /// Calendar rows below this market cap (dollars) dropped.
    MinMarketCap(f64),
    /// `threshold_assessment` added for this |z| threshold.
    ZThreshold(f64),
    /// `by_expiration` keeps each expiration's totals, flip and walls; its per-strike lists
    /// (one window per expiration, tens of expirations) are left out.
    ExpirationTotalsOnly,
    /// Each `exposures.<greek>.profile` kept to this many strikes on each side of the price.
    ProfileAroundSpot(usize),
}

/// A routed tool call: the target, how to shape its payload, and notes for the answer
/// (arguments read in a way the caller should know about).
#[derive(Debug, Clone, PartialEq)]
pub struct Call {
    /// What answers it.
    pub target: Target,
    /// Payload change.
    pub shape: Shape,
    /// Notes for the caller.
    pub notes: Vec<String>,
}

impl Call {
    fn endpoint(slug: &'static str) -> Self {
        Self {
            target: Target::Endpoint {
                slug,
                path: Vec::new(),
                query: Vec::new(),
                body: None,
            },
            shape: Shape::AsIs,
            notes: Vec::new(),
        }
    }

    fn with_ticker(slug: &'static str, args: &Args) -> Result<Self, ArgError> {
        Ok(Self::endpoint(slug).path("ticker", args.required_symbol("ticker")?))
    }

    fn path(mut self, name: &'static str, value: String) -> Self {
        if let Target::Endpoint { path, .. } = &mut self.target {
            path.push((name, value));
        }
        self
    }

    fn query(mut self, name: &'static str, value: Option<impl ToString>) -> Self {
        if let (Target::Endpoint { query, .. }, Some(value)) = (&mut self.target, value) {
            query.push((name, value.to_string()));
        }
        self
    }

    fn body(mut self, value: Value) -> Self {
        if let Target::Endpoint { body, .. } = &mut self.target {
            *body = Some(value);
        }
        self
    }

    fn note(mut self, note: impl Into<String>) -> Self {
        self.notes.push(note.into());
        self
    }

    fn notes(mut self, notes: Vec<String>) -> Self {
        self.notes.extend(notes);
        self
    }

    fn shape(mut self, shape: Shape) -> Self {
        self.shape = shape;
        self
    }
}

/// A GET of `slug` with the ticker in the path and `expiration` in the query when given.
fn ticker_expiration(slug: &'static str, args: &Args) -> Result<Call, ArgError> {
    Ok(Call::with_ticker(slug, args)?.query("expiration", args.text("expiration")?))
}

pub(crate) fn iv_rank(args: &Args) -> Result<Call, ArgError> {
    let lookback = args.integer("lookback_days")?;
    match args.symbol_list("tickers")? {
        Some(tickers) => Ok(Call::endpoint("iv-rank-batch")
            .query("tickers", Some(tickers))
            .query("lookback_days", lookback)),
        None => Ok(Call::with_ticker("iv-rank", args)?.query("lookback_days", lookback)),
    }
}

pub(crate) fn volatility_cone(args: &Args) -> Result<Call, ArgError> {
    Ok(Call::with_ticker("volatility-cone", args)?.query("periods", args.text("periods")?))
}

pub(crate) fn vrp(args: &Args) -> Result<Call, ArgError> {
    let view = args.choice("view", VRP_VIEWS)?.unwrap_or("current");
    let lookback = args.integer("lookback_days")?;
    Ok(match view {
        "timeseries" => Call::with_ticker("vrp-timeseries", args)?.query("lookback_days", lookback),
        "expirations" => {
            let call = Call::with_ticker("vrp-expirations", args)?;
            match lookback {
                Some(_) => call.note("lookback_days is not used by view=expirations"),
                None => call,
            }
        }
        _ => Call::with_ticker("vrp", args)?.query("lookback_days", lookback),
    })
}

pub(crate) fn term_structure(args: &Args) -> Result<Call, ArgError> {
    Ok(Call::with_ticker("term-structure", args)?
        .query("num_expirations", args.integer("num_expirations")?))
}

pub(crate) fn iv_opportunities(args: &Args) -> Result<Call, ArgError> {
    let threshold = args.number("z_score_threshold")?.unwrap_or(2.0);
    if !(0.0..=10.0).contains(&threshold) {
        return Err(ArgError(
            "argument `z_score_threshold`: must be between 0 and 10".into(),
        ));
    }
    Ok(Call::with_ticker("iv-opportunities", args)?.shape(Shape::ZThreshold(threshold)))
}

pub(crate) fn vix(_: &Args) -> Result<Call, ArgError> {
    Ok(Call::endpoint("vix"))
}

pub(crate) fn monies(args: &Args) -> Result<Call, ArgError> {
    Ok(Call::with_ticker("monies", args)?
        .query("surface", args.choice("surface", MONIES_SURFACES)?))
}

pub(crate) fn chain(args: &Args) -> Result<Call, ArgError> {
    Ok(ticker_expiration("chain", args)?
        .query("num_expirations", args.integer("num_expirations")?)
        .query("strikes_around", args.integer("strikes_around")?))
}

pub(crate) fn expirations(args: &Args) -> Result<Call, ArgError> {
    Call::with_ticker("expirations", args)
}

pub(crate) fn options_by_delta(args: &Args) -> Result<Call, ArgError> {
    Ok(ticker_expiration("options-by-delta", args)?
        .query("delta", args.number("target_delta")?.map(f64::abs))
        .query("option_type", args.choice("option_type", OPTION_TYPES)?))
}

pub(crate) fn stock(args: &Args) -> Result<Call, ArgError> {
    Call::with_ticker("stock", args)
}

pub(crate) fn historical_chain(args: &Args) -> Result<Call, ArgError> {
    Ok(Call::with_ticker("chain-at-time", args)?
        .query("expiration", Some(args.required_text("expiration")?))
        .query("trade_date", Some(args.required_text("trade_date")?)))
}

pub(crate) fn simulate_chain(args: &Args) -> Result<Call, ArgError> {
    let mut body = Map::new();
    body.insert("ticker".into(), json!(args.required_symbol("ticker")?));
    body.insert(
        "sim_price".into(),
        json!(args.required_number("sim_price")?),
    );
    body.insert("sim_dte".into(), json!(args.required_number("sim_dte")?));
    if let Some(shift) = args.number("iv_adjustment")? {
        body.insert("iv_adjustment".into(), json!(shift));
    }
    if let Some(expiration) = args.text("expiration")? {
        body.insert("expiration".into(), json!(expiration));
    }
    Ok(Call::endpoint("simulate-chain").body(Value::Object(body)))
}

pub(crate) fn search(args: &Args) -> Result<Call, ArgError> {
    Ok(Call::endpoint("search")
        .query("q", Some(args.required_text("query")?))
        .query("limit", args.integer("limit")?))
}

pub(crate) fn expected_move(args: &Args) -> Result<Call, ArgError> {
    match args.symbol_list("tickers")? {
        Some(tickers) => Ok(Call::endpoint("expected-move-batch")
            .query("tickers", Some(tickers))
            .query("expiration", args.text("expiration")?)),
        None => ticker_expiration("expected-move", args),
    }
}

pub(crate) fn greeks_heatmap(args: &Args) -> Result<Call, ArgError> {
    let greek = args.choice("greek", HEATMAP_GREEKS)?.unwrap_or("delta");
    let call = Call::with_ticker("greeks-heatmap", args)?
        .query("option_type", args.choice("option_type", HEATMAP_SIDES)?);
    Ok(match greek {
        "all" => call,
        one => call.shape(Shape::OneGreek(one)),
    })
}

pub(crate) fn charm(args: &Args) -> Result<Call, ArgError> {
    ticker_expiration("charm", args)
}

pub(crate) fn third_order_greeks(args: &Args) -> Result<Call, ArgError> {
    ticker_expiration("third-order-greeks", args)
}

pub(crate) fn portfolio_greeks(args: &Args) -> Result<Call, ArgError> {
    let (positions, notes) = positions(args)?;
    Ok(Call::endpoint("portfolio-greeks")
        .body(json!({ "positions": positions }))
        .notes(notes))
}

pub(crate) fn pop(args: &Args) -> Result<Call, ArgError> {
    let mut notes = Vec::new();
    let legs = match args.json_list("legs")? {
        Some(JsonList::Items(items)) => items,
        Some(JsonList::Text(_)) => {
            return Err(ArgError(
                "argument `legs`: expected a JSON array of {option_type, action, strike, iv, \
                 premium, quantity}"
                    .into(),
            ));
        }
        None => return Err(Args::missing("legs")),
    };
    let legs = normalise_objects(legs, "legs", &mut notes)?;
    Ok(Call::endpoint("pop")
        .body(json!({
            "legs": legs,
            "stock_price": args.required_number("stock_price")?,
            "days_to_exp": args.required_number("days_to_exp")?,
        }))
        .notes(notes))
}

pub(crate) fn gex(args: &Args) -> Result<Call, ArgError> {
    let detail = args.choice("detail", DETAILS)?;
    let strikes = args.integer("strikes_around")?;
    let aggregate = args.boolean("aggregate")?;
    let call = match args.symbol_list("tickers")? {
        Some(tickers) => Call::endpoint("gex-batch").query("tickers", Some(tickers)),
        None => Call::with_ticker("gex", args)?,
    };
    // Under compact, the per-expiration strike lists (a window for each of tens of
    // expirations) would dwarf the answer; their totals stay.
    let call = if detail == Some("full") {
        call
    } else {
        call.shape(Shape::ExpirationTotalsOnly)
    };
    Ok(call
        .query("expiration", args.text("expiration")?)
        .query("aggregate", aggregate)
        .query("strikes_around", strikes)
        .query("detail", detail))
}

pub(crate) fn cross_index_gex(args: &Args) -> Result<Call, ArgError> {
    Ok(Call::endpoint("cross-index-gex").query("tickers", args.symbol_list("tickers")?))
}

pub(crate) fn zero_dte(args: &Args) -> Result<Call, ArgError> {
    Ok(Call::with_ticker("zero-dte", args)?
        .query("strikes_around", args.integer("strikes_around")?)
        .query("detail", args.choice("detail", DETAILS)?))
}

pub(crate) fn max_pain(args: &Args) -> Result<Call, ArgError> {
    ticker_expiration("max-pain", args)
}

pub(crate) fn volume_profile(args: &Args) -> Result<Call, ArgError> {
    ticker_expiration("volume-profile", args)
}

pub(crate) fn flow(args: &Args) -> Result<Call, ArgError> {
    Ok(Call::with_ticker("flow", args)?
        .query("limit", args.integer("limit")?)
        .query("detail", args.choice("detail", DETAILS)?))
}

pub(crate) fn smart_money(args: &Args) -> Result<Call, ArgError> {
    Call::with_ticker("smart-money", args)
}

pub(crate) fn vol_arb_scan(_: &Args) -> Result<Call, ArgError> {
    Ok(Call::endpoint("vol-arb-scan"))
}

pub(crate) fn screen(args: &Args) -> Result<Call, ArgError> {
    Ok(Call::endpoint("screen")
        .query(
            "screen_type",
            args.text("screen_type")?.map(|s| s.to_ascii_lowercase()),
        )
        .query("limit", args.integer("limit")?)
        .query("min_market_cap", args.number("min_market_cap")?)
        .query(
            "exclude_earnings_days",
            args.integer("exclude_earnings_days")?,
        ))
}

pub(crate) fn market_overview(_: &Args) -> Result<Call, ArgError> {
    Ok(Call::endpoint("market-overview"))
}

pub(crate) fn relative_value_scan(args: &Args) -> Result<Call, ArgError> {
    Ok(Call::endpoint("relative-value-scan")
        .query("view", args.choice("view", RELATIVE_VALUE_VIEWS)?)
        .query("limit", args.integer("limit")?)
        .query("threshold", args.number("threshold")?))
}

/// Market caps under this are read as billions of dollars (what assistants type: 50 = $50B).
const MARKET_CAP_BILLIONS_BELOW: f64 = 100_000.0;

pub(crate) fn earnings_calendar(args: &Args) -> Result<Call, ArgError> {
    let call = Call::endpoint("earnings-calendar").query("days_ahead", args.integer("days_ahead")?);
    Ok(match args.number("min_market_cap")? {
        None => call,
        Some(cap) if cap < 0.0 => {
            return Err(ArgError(
                "argument `min_market_cap`: must not be negative".into(),
            ));
        }
        Some(cap) if cap < MARKET_CAP_BILLIONS_BELOW => {
            call.shape(Shape::MinMarketCap(cap * 1e9)).note(format!(
                "min_market_cap {cap} read as ${cap} billion; rows without a market cap dropped"
            ))
        }
        Some(cap) => call.shape(Shape::MinMarketCap(cap)).note(format!(
            "min_market_cap read as ${cap:.0}; rows without a market cap dropped"
        )),
    })
}

pub(crate) fn economic_calendar(args: &Args) -> Result<Call, ArgError> {
    Ok(Call::endpoint("economic-calendar")
        .query("from_date", args.text("from_date")?)
        .query("to_date", args.text("to_date")?))
}

pub(crate) fn earnings_history(args: &Args) -> Result<Call, ArgError> {
    Call::with_ticker("earnings-history", args)
}

pub(crate) fn earnings_move_analysis(args: &Args) -> Result<Call, ArgError> {
    let analysis = args
        .choice("analysis", EARNINGS_ANALYSES)?
        .unwrap_or("mispricing");
    let slug = match analysis {
        "historical_moves" => "historical-moves",
        "expected_vs_actual" => "expected-vs-actual",
        "verdict" => "earnings-verdict",
        "seasonality" => "seasonality",
        "post_drift" => "post-earnings-drift",
        "iv_crush" => "iv-crush",
        _ => "mispricing-assessment",
    };
    let periods = args.text("periods")?;
    let call = Call::with_ticker(slug, args)?;
    Ok(match (slug, periods) {
        ("historical-moves", periods) => call.query("periods", periods),
        (_, Some(_)) => call.note(format!(
            "periods is used by historical_moves only, not {analysis}"
        )),
        (_, None) => call,
    })
}

pub(crate) fn ticker_analytics(args: &Args) -> Result<Call, ArgError> {
    let analysis = args
        .choice("analysis", TICKER_ANALYSES)?
        .ok_or_else(|| Args::missing("analysis"))?;
    let days = args.integer("days")?;
    let view = args.text("view")?.map(|v| v.to_ascii_lowercase());
    let expiration = args.text("expiration")?;
    let compare_with = args.symbol("compare_with")?;
    // Which of the optional arguments the chosen view's endpoint reads.
    let (slug, takes_days, takes_view) = match analysis {
        "skew" => ("skew", true, true),
        "dividends" => ("dividend", false, false),
        "borrow_rate" => ("borrow-rate", true, false),
        "correlation" if compare_with.is_some() => ("correlation-compare", true, false),
        "correlation" => ("correlation", false, false),
        "hv_regimes" => ("hv-regimes", true, true),
        "price_context" => ("price-context", false, false),
        "relative_value" => ("relative-value", true, false),
        _ => ("greeks-exposure", false, false),
    };
    let mut call = Call::with_ticker(slug, args)?;
    let mut ignored = Vec::new();
    if takes_days {
        call = call.query("days", days);
    } else if days.is_some() {
        ignored.push("days");
    }
    if takes_view {
        call = call.query("view", view);
    } else if view.is_some() {
        ignored.push("view");
    }
    if slug == "greeks-exposure" {
        // One expiration asked for: that expiration alone, not the sum of all.
        let one = expiration.is_some();
        call = call
            .query("expiration", expiration)
            .query("aggregate", one.then_some(false))
            .shape(Shape::ProfileAroundSpot(PROFILE_STRIKES_EACH_SIDE));
    } else if expiration.is_some() {
        ignored.push("expiration");
    }
    if let Some(other) = compare_with {
        if slug == "correlation-compare" {
            call = call.path("ticker2", other);
        } else {
            ignored.push("compare_with");
        }
    }
    if !ignored.is_empty() {
        call = call.note(format!(
            "not used by analysis={analysis}: {}",
            ignored.join(", ")
        ));
    }
    Ok(call)
}

/// Strikes kept on each side of the price in each Greek's exposure profile (as gex's compact
/// window keeps 25).
pub const PROFILE_STRIKES_EACH_SIDE: usize = 25;

pub(crate) fn cores(args: &Args) -> Result<Call, ArgError> {
    Ok(Call::with_ticker("cores", args)?.query("fields", args.text("fields")?))
}

pub(crate) fn build_strategy(args: &Args) -> Result<Call, ArgError> {
    let mut body = Map::new();
    body.insert("ticker".into(), json!(args.required_symbol("ticker")?));
    body.insert(
        "strategy_type".into(),
        json!(args.required_text("strategy_type")?.to_ascii_lowercase()),
    );
    if let Some(expiration) = args.text("expiration")? {
        body.insert("expiration".into(), json!(expiration));
    }
    if let Some(width) = args.number("width")? {
        body.insert("width".into(), json!(width));
    }
    if let Some(delta) = args.number("target_delta")? {
        body.insert("target_delta".into(), json!(delta.abs()));
    }
    Ok(Call::endpoint("build-strategy").body(Value::Object(body)))
}

pub(crate) fn analyze_strategy(args: &Args) -> Result<Call, ArgError> {
    let mut notes = Vec::new();
    let legs = match args.json_list("legs")? {
        Some(JsonList::Items(items)) => normalise_objects(items, "legs", &mut notes)?,
        Some(JsonList::Text(text)) => legs_from_text(&text)?,
        None => return Err(Args::missing("legs")),
    };
    Ok(Call::endpoint("analyze-strategy")
        .body(json!({ "ticker": args.required_symbol("ticker")?, "legs": legs }))
        .notes(notes))
}

pub(crate) fn optimize_strategy(args: &Args) -> Result<Call, ArgError> {
    let mut body = Map::new();
    body.insert("ticker".into(), json!(args.required_symbol("ticker")?));
    body.insert(
        "strategy_type".into(),
        json!(args.required_text("strategy_type")?.to_ascii_lowercase()),
    );
    let target = args.choice("target", OPTIMIZE_TARGETS)?.unwrap_or("credit");
    body.insert("target".into(), json!(target));
    Ok(Call::endpoint("optimize-strategy").body(Value::Object(body)))
}

pub(crate) fn scenario_analysis(args: &Args) -> Result<Call, ArgError> {
    let (positions, notes) = positions(args)?;
    let scenario = json!({
        "stock_move_pct": args.number("stock_move_pct")?.unwrap_or(0.0),
        "iv_change_pct": args.number("iv_change_pct")?.unwrap_or(0.0),
        "days_forward": args.integer("days_forward")?.unwrap_or(0),
    });
    Ok(Call::endpoint("scenario-analysis")
        .body(json!({ "positions": positions, "scenarios": [scenario] }))
        .notes(notes))
}

pub(crate) fn stress_tests(args: &Args) -> Result<Call, ArgError> {
    let (positions, notes) = positions(args)?;
    Ok(Call::endpoint("stress-tests")
        .body(json!({ "positions": positions }))
        .notes(notes))
}

pub(crate) fn hedge_recommendations(args: &Args) -> Result<Call, ArgError> {
    let (positions, notes) = positions(args)?;
    let mut body = Map::new();
    body.insert("positions".into(), json!(positions));
    if let Some(hedge) = args.symbol("hedge_ticker")? {
        body.insert("hedge_ticker".into(), json!(hedge));
    }
    if let Some(target) = args.number("target_delta")? {
        body.insert("target_delta".into(), json!(target));
    }
    Ok(Call::endpoint("hedge-recommendations")
        .body(Value::Object(body))
        .notes(notes))
}

pub(crate) fn help(args: &Args) -> Result<Call, ArgError> {
    Ok(Call {
        target: Target::Help {
            topic: args.text("topic")?,
        },
        shape: Shape::AsIs,
        notes: Vec::new(),
    })
}

/// Most legs or positions one call may carry (the endpoints bound them too; this keeps a
/// runaway argument from being normalised first).
const MAX_ITEMS: usize = 200;

/// The `positions` argument as objects ready for the risk endpoints.
fn positions(args: &Args) -> Result<(Vec<Value>, Vec<String>), ArgError> {
    let mut notes = Vec::new();
    let items = match args.json_list("positions")? {
        Some(JsonList::Items(items)) => items,
        Some(JsonList::Text(_)) => {
            return Err(ArgError(
                "argument `positions`: expected a JSON array of {ticker, position_type, \
                 quantity, strike, expiration, delta, gamma, theta, vega, iv}"
                    .into(),
            ));
        }
        None => return Err(Args::missing("positions")),
    };
    let positions = normalise_objects(items, "positions", &mut notes)?;
    Ok((positions, notes))
}

/// Keys of leg and position objects that hold numbers (sent as strings by some clients).
const NUMERIC_KEYS: &[&str] = &[
    "strike",
    "premium",
    "quantity",
    "iv",
    "delta",
    "gamma",
    "theta",
    "vega",
    "entry_price",
    "current_price",
    "stock_price",
];

/// Normalises leg or position objects: numeric strings become numbers, enum words take the
/// case the endpoints document, and an `iv` in percentage points becomes a decimal (noted).
fn normalise_objects(
    items: Vec<Value>,
    name: &str,
    notes: &mut Vec<String>,
) -> Result<Vec<Value>, ArgError> {
    if items.len() > MAX_ITEMS {
        return Err(ArgError(format!(
            "argument `{name}`: at most {MAX_ITEMS} items"
        )));
    }
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.into_iter().enumerate() {
        let Value::Object(mut object) = item else {
            return Err(ArgError(format!(
                "argument `{name}`: item {i} is not an object"
            )));
        };
        for key in NUMERIC_KEYS {
            if let Some(Value::String(s)) = object.get(*key)
                && let Ok(n) = s.trim().parse::<f64>()
                && n.is_finite()
            {
                object.insert((*key).into(), json!(n));
            }
        }
        if let Some(iv) = object.get("iv").and_then(Value::as_f64)
            // The strategy math's own rule: a decimal IV of 5 would be 500 %.
            && iv > IV_PERCENT_THRESHOLD
        {
            object.insert("iv".into(), json!(iv / 100.0));
            notes.push(format!(
                "{name}[{i}].iv {iv} read as percentage points ({:.4} as a decimal)",
                iv / 100.0
            ));
        }
        for key in ["action", "type", "option_type"] {
            if let Some(Value::String(s)) = object.get(key) {
                let lower = s.trim().to_ascii_lowercase();
                let word = match lower.as_str() {
                    "c" => "call".to_owned(),
                    "p" => "put".to_owned(),
                    "b" | "long" => "buy".to_owned(),
                    "s" | "short" => "sell".to_owned(),
                    _ => lower,
                };
                object.insert(key.into(), json!(word));
            }
        }
        if let Some(Value::String(s)) = object.get("position_type") {
            let upper = s.trim().to_ascii_uppercase();
            object.insert("position_type".into(), json!(upper));
        }
        if let Some(Value::String(s)) = object.get("ticker") {
            let upper = s.trim().to_ascii_uppercase();
            object.insert("ticker".into(), json!(upper));
        }
        out.push(Value::Object(object));
    }
    Ok(out)
}

/// Legs written as text, `"BUY 1 C 150, SELL 1 C 155"`: action, quantity, C/P (or call/put),
/// strike per comma-separated leg.
fn legs_from_text(text: &str) -> Result<Vec<Value>, ArgError> {
    let mut legs = Vec::new();
    for (i, part) in text.split(',').enumerate() {
        let words: Vec<&str> = part.split_whitespace().collect();
        let bad = || {
            ArgError(format!(
                "argument `legs`: leg {} ({:?}) is not \"BUY|SELL quantity C|P strike\"",
                i + 1,
                part.trim()
            ))
        };
        let [action, quantity, kind, strike] = words.as_slice() else {
            return Err(bad());
        };
        let action = match action.to_ascii_lowercase().as_str() {
            "buy" | "b" | "long" => "buy",
            "sell" | "s" | "short" => "sell",
            _ => return Err(bad()),
        };
        let kind = match kind.to_ascii_lowercase().as_str() {
            "c" | "call" | "calls" => "call",
            "p" | "put" | "puts" => "put",
            _ => return Err(bad()),
        };
        let quantity: u32 = quantity.parse().map_err(|_| bad())?;
        let strike: f64 = strike
            .trim_start_matches('$')
            .parse()
            .ok()
            .filter(|s: &f64| s.is_finite() && *s > 0.0)
            .ok_or_else(bad)?;
        legs.push(json!({"action": action, "quantity": quantity, "type": kind, "strike": strike}));
        if legs.len() > MAX_ITEMS {
            return Err(ArgError(format!(
                "argument `legs`: at most {MAX_ITEMS} legs"
            )));
        }
    }
    Ok(legs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(value: Value) -> Args {
        Args::new(value.as_object().cloned())
    }

    /// Path or query pairs of a routed call.
    type Pairs<'a> = &'a [(&'static str, String)];

    fn endpoint(call: &Call) -> (&'static str, Pairs<'_>, Pairs<'_>) {
        match &call.target {
            Target::Endpoint {
                slug, path, query, ..
            } => (slug, path, query),
            Target::Help { .. } => panic!("not an endpoint"),
        }
    }

    #[test]
    fn tickers_switch_to_the_batch_endpoint() {
        let single = iv_rank(&args(json!({"ticker": "nvda", "lookback_days": "100"}))).unwrap();
        assert_eq!(
            endpoint(&single),
            (
                "iv-rank",
                &[("ticker", "NVDA".to_owned())][..],
                &[("lookback_days", "100".to_owned())][..]
            )
        );
        let batch = gex(&args(json!({"ticker": "SPY", "tickers": "spy, qqq"}))).unwrap();
        assert_eq!(endpoint(&batch).0, "gex-batch");
        assert_eq!(endpoint(&batch).2, &[("tickers", "SPY,QQQ".to_owned())][..]);
        assert!(
            iv_rank(&args(json!({})))
                .unwrap_err()
                .0
                .contains("`ticker`")
        );
    }

    #[test]
    fn multi_view_tools_pick_the_view_endpoint_and_note_unused_arguments() {
        let compare = ticker_analytics(&args(
            json!({"ticker": "AAPL", "analysis": "Correlation", "compare_with": "msft", "days": 100}),
        ))
        .unwrap();
        let (slug, path, query) = endpoint(&compare);
        assert_eq!(slug, "correlation-compare");
        assert_eq!(path[1], ("ticker2", "MSFT".to_owned()));
        assert_eq!(query, &[("days", "100".to_owned())][..]);
        let dividends = ticker_analytics(&args(
            json!({"ticker": "KO", "analysis": "dividends", "days": 50}),
        ))
        .unwrap();
        assert_eq!(endpoint(&dividends).0, "dividend");
        assert_eq!(
            dividends.notes,
            vec!["not used by analysis=dividends: days"]
        );
        let verdict =
            earnings_move_analysis(&args(json!({"ticker": "NVDA", "analysis": "verdict"})))
                .unwrap();
        assert_eq!(endpoint(&verdict).0, "earnings-verdict");
        let timeseries = vrp(&args(json!({"ticker": "SPY", "view": "timeseries"}))).unwrap();
        assert_eq!(endpoint(&timeseries).0, "vrp-timeseries");
    }

    #[test]
    fn legs_arrive_as_text_or_json_with_points_iv_read_as_points() {
        let text = analyze_strategy(&args(
            json!({"ticker": "aapl", "legs": "BUY 1 C 150, SELL 1 C 155"}),
        ))
        .unwrap();
        let Target::Endpoint { body, .. } = &text.target else {
            panic!()
        };
        assert_eq!(
            body.as_ref().unwrap()["legs"],
            json!([
                {"action": "buy", "quantity": 1, "type": "call", "strike": 150.0},
                {"action": "sell", "quantity": 1, "type": "call", "strike": 155.0}
            ])
        );
        let json_legs = pop(&args(json!({
            "legs": "[{\"option_type\": \"PUT\", \"action\": \"SELL\", \"strike\": \"95\", \"iv\": 32, \"premium\": 1.2, \"quantity\": 1}]",
            "stock_price": "100", "days_to_exp": 30
        })))
        .unwrap();
        let Target::Endpoint { body, .. } = &json_legs.target else {
            panic!()
        };
        let leg = &body.as_ref().unwrap()["legs"][0];
        assert_eq!(leg["option_type"], "put");
        assert_eq!(leg["action"], "sell");
        assert_eq!(leg["strike"], 95.0);
        assert_eq!(leg["iv"], 0.32);
        assert_eq!(body.as_ref().unwrap()["stock_price"], 100.0);
        assert_eq!(json_legs.notes.len(), 1);
        assert!(json_legs.notes[0].contains("percentage points"));
        assert!(
            analyze_strategy(&args(json!({"ticker": "A", "legs": "BUY one C 150"})))
                .unwrap_err()
                .0
                .contains("leg 1")
        );
    }

    #[test]
    fn earnings_calendar_market_cap_in_billions_or_dollars() {
        let billions = earnings_calendar(&args(json!({"min_market_cap": 50}))).unwrap();
        assert_eq!(billions.shape, Shape::MinMarketCap(50e9));
        let dollars = earnings_calendar(&args(json!({"min_market_cap": "2000000000"}))).unwrap();
        assert_eq!(dollars.shape, Shape::MinMarketCap(2e9));
    }
}
