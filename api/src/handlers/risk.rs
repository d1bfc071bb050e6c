//! The risk family (POST, JSON bodies): `/portfolio-greeks`, `/scenario-analysis`,
//! `/stress-tests`, `/hedge-recommendations`.
//!
//! Positions carry their own per-share Greeks (spec 2.2); the math and its units are in
//! [`optics_compute::risk`] (deltas in share-equivalents, theta in dollars per calendar day,
//! vega in dollars per vol point, percentages of the gross market value). Which fields each
//! `position_type` requires is in that module's docs; a missing or malformed one is a 400
//! naming `positions[i].field`.
//!
//! # Underlying prices
//! Dollar delta needs each ticker's price. It is taken, in order, from the optional body
//! object `underlying_prices` (`{"SPY": 601.5}`), from a STOCK position's `current_price`, and
//! from the ticker's live chain; a ticker with none of them is a 424.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use optics_compute::risk::{
    self, HedgePlan, MAX_POSITIONS, MAX_SCENARIOS, Position, PositionInput, PositionType,
    RiskError, STRESS_SCENARIOS, Scenario, ScenarioEstimate, StressScenario, UnderlyingPrice,
};
use optics_compute::time::years_to_expiry;
use serde::Serialize;
use serde_json::{Map, Value};

use super::strategy::{
    body_object, first_series_per_strike, object_array, open_expirations, opt_date, opt_number,
    opt_text, side_quote,
};
use crate::envelope::{ApiJson, Envelope, ok};
use crate::error::ApiError;
use crate::market::ChainView;
use crate::state::AppState;
use crate::ticker::Ticker;

/// Where `/hedge-recommendations` hedges when `hedge_ticker` is absent.
pub const DEFAULT_HEDGE_TICKER: &str = "SPY";

fn risk_error(error: RiskError) -> ApiError {
    match error {
        RiskError::NoHedgeContract(_) | RiskError::MissingUnderlyingPrice { .. } => {
            ApiError::upstream(error.to_string())
        }
        other => ApiError::bad_request(other.to_string()),
    }
}

fn position_input(
    object: &Map<String, Value>,
    index: usize,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<PositionInput, ApiError> {
    let path = format!("positions[{index}].");
    let expiration = opt_date(object, "expiration", &path)?;
    // A symbol's syntax is checked here (coverage only where a live price is needed).
    let ticker = opt_text(object, "ticker", &path)?
        .filter(|raw| !raw.trim().is_empty())
        .map(|raw| {
            Ticker::parse(raw)
                .map(|t| t.as_str().to_owned())
                .map_err(|e| ApiError::bad_request(format!("{path}ticker: {}", e.body())))
        })
        .transpose()?;
    Ok(PositionInput {
        ticker,
        position_type: opt_text(object, "position_type", &path)?.map(str::to_owned),
        quantity: opt_number(object, "quantity", &path)?,
        strike: opt_number(object, "strike", &path)?,
        years_to_expiry: expiration.map(|e| years_to_expiry(now, e)),
        expiration,
        entry_price: opt_number(object, "entry_price", &path)?,
        current_price: opt_number(object, "current_price", &path)?,
        delta: opt_number(object, "delta", &path)?,
        gamma: opt_number(object, "gamma", &path)?,
        theta: opt_number(object, "theta", &path)?,
        vega: opt_number(object, "vega", &path)?,
        iv: opt_number(object, "iv", &path)?,
    })
}

/// The validated positions of the body.
fn positions(state: &AppState, object: &Map<String, Value>) -> Result<Vec<Position>, ApiError> {
    let now = state.now();
    let inputs = object_array(object, "positions", MAX_POSITIONS)?
        .into_iter()
        .enumerate()
        .map(|(index, position)| position_input(position, index, now))
        .collect::<Result<Vec<_>, _>>()?;
    risk::validate_positions(&inputs).map_err(risk_error)
}

/// A price per ticker of the book (module docs: supplied, STOCK position, live chain).
fn underlying_prices(
    state: &AppState,
    object: &Map<String, Value>,
    positions: &[Position],
) -> Result<Vec<UnderlyingPrice>, ApiError> {
    let mut prices: BTreeMap<String, f64> = BTreeMap::new();
    match object.get("underlying_prices") {
        None | Some(Value::Null) => {}
        Some(Value::Object(supplied)) => {
            for (ticker, value) in supplied {
                let price = value.as_f64().ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "underlying_prices.{ticker}: must be a number of dollars"
                    ))
                })?;
                prices.insert(ticker.trim().to_ascii_uppercase(), price);
            }
        }
        Some(_) => {
            return Err(ApiError::bad_request(
                "underlying_prices: must be an object of ticker → price",
            ));
        }
    }
    for position in positions {
        if position.position_type == PositionType::Stock {
            prices
                .entry(position.ticker.clone())
                .or_insert(position.current_price);
        }
    }
    for position in positions {
        if !prices.contains_key(&position.ticker) {
            let price = live_price(state, &position.ticker)?;
            prices.insert(position.ticker.clone(), price);
        }
    }
    Ok(prices
        .into_iter()
        .map(|(ticker, price)| UnderlyingPrice { ticker, price })
        .collect())
}

/// The live chain's price of `raw`: 400/404 for a bad or uncovered symbol, 424 when there is
/// no chain or no usable price.
fn live_price(state: &AppState, raw: &str) -> Result<f64, ApiError> {
    let ticker = state.covered_ticker(raw)?;
    let price = state
        .market_data()?
        .chain(&ticker)
        .map(|chain| chain.stock_price())
        .filter(|p| p.is_finite() && *p > 0.0);
    price.ok_or_else(|| {
        ApiError::upstream(format!(
            "No live price for {ticker}: send a STOCK position in it or underlying_prices"
        ))
    })
}

// ---------------------------------------------------------------------------------------------
// POST /portfolio-greeks
// ---------------------------------------------------------------------------------------------

/// `portfolio_summary` of `/portfolio-greeks`.
#[derive(Debug, Clone, Serialize)]
pub struct PortfolioSummary {
    /// Net delta, share-equivalents.
    pub total_delta: f64,
    /// Net gamma, share-equivalents per $1 (null when an option position lacks gamma).
    pub total_gamma: Option<f64>,
    /// Net theta, dollars per calendar day.
    pub total_theta: f64,
    /// Net vega, dollars per vol point.
    pub total_vega: f64,
    /// LOW, MODERATE, HIGH or EXTREME: the higher of the levels of |delta_exposure_pct| and
    /// |daily_decay_pct| on the limits in `risk_level_scale` (the constants of
    /// [`optics_compute::risk::portfolio`]; the reference's "Strategies and portfolio risk"
    /// section prints the same table).
    pub risk_level: &'static str,
    /// The scale behind risk_level.
    pub risk_level_scale: RiskLevelScale,
    /// Dollar delta as a percent of gross market value (null for a book of zero value).
    pub delta_exposure_pct: Option<f64>,
    /// Total theta as a percent of gross market value per day (null for zero value).
    pub daily_decay_pct: Option<f64>,
    /// Σ delta × underlying price, dollars.
    pub dollar_delta: f64,
    /// Σ value (short positions negative), dollars.
    pub net_value: f64,
    /// Σ |value|, dollars.
    pub gross_value: f64,
    /// Σ (current − entry) × shares over positions with an entry price, dollars.
    pub unrealized_pnl: f64,
    /// Indices of positions without entry_price (left out of unrealized_pnl).
    pub positions_without_entry_price: Vec<usize>,
    /// Positions read.
    pub positions_count: usize,
}

/// The risk_level scale: a reading up to `limits[0]` is LOW, up to `limits[1]` MODERATE, up
/// to `limits[2]` HIGH, above EXTREME; the higher of the two readings' levels is reported.
#[derive(Debug, Clone, Serialize)]
pub struct RiskLevelScale {
    /// LOW, MODERATE, HIGH, EXTREME.
    pub levels: [&'static str; 4],
    /// Upper limits of |delta_exposure_pct| for LOW, MODERATE, HIGH.
    pub delta_exposure_pct_limits: [f64; 3],
    /// Upper limits of |daily_decay_pct| for LOW, MODERATE, HIGH.
    pub daily_decay_pct_limits: [f64; 3],
}

impl RiskLevelScale {
    fn current() -> Self {
        use risk::RiskLevel::{Extreme, High, Low, Moderate};
        Self {
            levels: [Low, Moderate, High, Extreme].map(risk::RiskLevel::as_str),
            delta_exposure_pct_limits: risk::portfolio::DELTA_EXPOSURE_LIMITS_PCT,
            daily_decay_pct_limits: risk::portfolio::DAILY_DECAY_LIMITS_PCT,
        }
    }
}

/// One ticker of `positions_by_ticker`.
#[derive(Debug, Clone, Serialize)]
pub struct TickerSummary {
    /// Share-equivalents.
    pub delta: f64,
    /// Share-equivalents per $1, when known.
    pub gamma: Option<f64>,
    /// Dollars per calendar day.
    pub theta: f64,
    /// Dollars per vol point.
    pub vega: f64,
    /// Market value, dollars.
    pub value: f64,
    /// delta × underlying price, dollars.
    pub dollar_delta: f64,
    /// The underlying price used, dollars.
    pub underlying_price: f64,
    /// Positions in the ticker.
    pub positions: usize,
}

/// `data` of `/portfolio-greeks`.
#[derive(Debug, Clone, Serialize)]
pub struct PortfolioPayload {
    /// The totals and the risk read.
    pub portfolio_summary: PortfolioSummary,
    /// Per-ticker totals.
    pub positions_by_ticker: BTreeMap<String, TickerSummary>,
}

/// POST /portfolio-greeks.
pub async fn portfolio_greeks(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Envelope<PortfolioPayload>>, ApiError> {
    let object = body_object(&body)?;
    let positions = positions(&state, object)?;
    let prices = underlying_prices(&state, object, &positions)?;
    let book = risk::portfolio_greeks(&positions, &prices).map_err(risk_error)?;
    Ok(ok(PortfolioPayload {
        portfolio_summary: PortfolioSummary {
            total_delta: book.total_delta_shares,
            total_gamma: book.total_gamma_shares_per_dollar,
            total_theta: book.total_theta_usd_per_day,
            total_vega: book.total_vega_usd_per_vol_point,
            risk_level: book.risk_level.as_str(),
            risk_level_scale: RiskLevelScale::current(),
            delta_exposure_pct: book.delta_exposure_pct,
            daily_decay_pct: book.daily_decay_pct,
            dollar_delta: book.dollar_delta_usd,
            net_value: book.net_value_usd,
            gross_value: book.gross_value_usd,
            unrealized_pnl: book.unrealized_pnl_usd,
            positions_without_entry_price: book.positions_without_entry_price,
            positions_count: positions.len(),
        },
        positions_by_ticker: book
            .by_ticker
            .into_iter()
            .map(|(ticker, t)| {
                (
                    ticker,
                    TickerSummary {
                        delta: t.delta_shares,
                        gamma: t.gamma_shares_per_dollar,
                        theta: t.theta_usd_per_day,
                        vega: t.vega_usd_per_vol_point,
                        value: t.value_usd,
                        dollar_delta: t.dollar_delta_usd,
                        underlying_price: t.underlying_price,
                        positions: t.positions,
                    },
                )
            })
            .collect(),
    }))
}

// ---------------------------------------------------------------------------------------------
// POST /scenario-analysis and /stress-tests
// ---------------------------------------------------------------------------------------------

/// One scenario's estimate (`scenarios[]`).
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioResult {
    /// The stress scenario's name (stress-tests only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scenario_name: Option<&'static str>,
    /// What the stress scenario stands for (stress-tests only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<&'static str>,
    /// Underlying move, percent.
    pub stock_move_pct: f64,
    /// IV change, vol points (20 % + 5 = 25 %).
    pub iv_change_pct: f64,
    /// Calendar days forward.
    pub days_forward: f64,
    /// delta + vega + theta contributions, dollars.
    pub estimated_pnl: f64,
    /// estimated_pnl as a percent of gross market value (null for a book of zero value).
    pub estimated_pnl_pct: Option<f64>,
    /// Σ delta × price × move, dollars.
    pub delta_contribution: f64,
    /// Σ vega × IV change, dollars.
    pub vega_contribution: f64,
    /// Σ theta × days (up to each option's expiry), dollars.
    pub theta_contribution: f64,
    /// The three contributions again, grouped (stress-tests only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contributions: Option<Contributions>,
    /// current_value + estimated_pnl, dollars.
    pub new_portfolio_value: f64,
}

/// The parts of an estimate, dollars.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Contributions {
    /// From delta.
    pub delta: f64,
    /// From vega.
    pub vega: f64,
    /// From theta.
    pub theta: f64,
}

/// `data` of `/scenario-analysis` and `/stress-tests`.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioPayload {
    /// Σ value of the positions (short negative), dollars.
    pub current_value: f64,
    /// Σ |value|, the base of the percentages, dollars.
    pub gross_value: f64,
    /// `vol_points`: how iv_change_pct is read.
    pub iv_change_basis: &'static str,
    /// `first_order_greeks`: delta, vega and theta from the Greeks supplied; no re-pricing.
    pub method: &'static str,
    /// The estimates, in the order asked (stress-tests: the fixed set).
    pub scenarios: Vec<ScenarioResult>,
}

fn scenario_result(estimate: &ScenarioEstimate, named: Option<&StressScenario>) -> ScenarioResult {
    let stress = named.is_some();
    ScenarioResult {
        scenario_name: named.map(|s| s.name),
        description: named.map(|s| s.description),
        stock_move_pct: estimate.scenario.stock_move_pct,
        iv_change_pct: estimate.scenario.iv_change_pct,
        days_forward: estimate.scenario.days_forward,
        estimated_pnl: estimate.estimated_pnl_usd,
        estimated_pnl_pct: estimate.estimated_pnl_pct,
        delta_contribution: estimate.delta_contribution_usd,
        vega_contribution: estimate.vega_contribution_usd,
        theta_contribution: estimate.theta_contribution_usd,
        contributions: stress.then_some(Contributions {
            delta: estimate.delta_contribution_usd,
            vega: estimate.vega_contribution_usd,
            theta: estimate.theta_contribution_usd,
        }),
        new_portfolio_value: estimate.new_portfolio_value_usd,
    }
}

fn scenario_payload(report: &risk::ScenarioReport, stress: bool) -> ScenarioPayload {
    ScenarioPayload {
        current_value: report.current_value_usd,
        gross_value: report.gross_value_usd,
        iv_change_basis: risk::IV_CHANGE_BASIS.as_str(),
        method: "first_order_greeks",
        // stress_tests answers in the order of STRESS_SCENARIOS.
        scenarios: report
            .estimates
            .iter()
            .enumerate()
            .map(|(i, e)| scenario_result(e, stress.then(|| STRESS_SCENARIOS.get(i)).flatten()))
            .collect(),
    }
}

/// The body's `scenarios` (default empty); a missing field of a scenario is 0.
fn scenarios(object: &Map<String, Value>) -> Result<Vec<Scenario>, ApiError> {
    let items = match object.get("scenarios") {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::Array(items)) => items,
        Some(_) => {
            return Err(ApiError::bad_request(
                "scenarios: must be an array of {stock_move_pct, iv_change_pct, days_forward}",
            ));
        }
    };
    if items.len() > MAX_SCENARIOS {
        return Err(ApiError::bad_request(format!(
            "scenarios: {} given; at most {MAX_SCENARIOS} are accepted",
            items.len()
        )));
    }
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let path = format!("scenarios[{index}].");
            let object = item.as_object().ok_or_else(|| {
                ApiError::bad_request(format!("scenarios[{index}]: must be an object"))
            })?;
            Ok(Scenario {
                stock_move_pct: opt_number(object, "stock_move_pct", &path)?.unwrap_or(0.0),
                iv_change_pct: opt_number(object, "iv_change_pct", &path)?.unwrap_or(0.0),
                days_forward: opt_number(object, "days_forward", &path)?.unwrap_or(0.0),
            })
        })
        .collect()
}

/// POST /scenario-analysis.
pub async fn scenario_analysis(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Envelope<ScenarioPayload>>, ApiError> {
    let object = body_object(&body)?;
    let positions = positions(&state, object)?;
    let scenarios = scenarios(object)?;
    let prices = underlying_prices(&state, object, &positions)?;
    let report = risk::estimate_scenarios(&positions, &prices, &scenarios).map_err(risk_error)?;
    Ok(ok(scenario_payload(&report, false)))
}

/// POST /stress-tests: the fixed scenario set ([`STRESS_SCENARIOS`]).
pub async fn stress_tests(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Envelope<ScenarioPayload>>, ApiError> {
    let object = body_object(&body)?;
    let positions = positions(&state, object)?;
    let prices = underlying_prices(&state, object, &positions)?;
    let report = risk::stress_tests(&positions, &prices).map_err(risk_error)?;
    Ok(ok(scenario_payload(&report, true)))
}

// ---------------------------------------------------------------------------------------------
// POST /hedge-recommendations
// ---------------------------------------------------------------------------------------------

/// One hedge (`hedges[]`): `type` is `stock` or `option`; the option fields are absent for
/// the stock hedge.
#[derive(Debug, Clone, Serialize)]
pub struct Hedge {
    /// `stock` or `option`.
    #[serde(rename = "type")]
    pub hedge_type: &'static str,
    /// BUY, SELL or SELL SHORT.
    pub action: &'static str,
    /// The hedge ticker.
    pub ticker: String,
    /// Shares (stock hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub quantity: Option<f64>,
    /// CALL or PUT (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub option_type: Option<&'static str>,
    /// Strike, dollars (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub strike: Option<f64>,
    /// Expiration (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expiration: Option<chrono::NaiveDate>,
    /// Whole contracts (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contracts: Option<f64>,
    /// Share-equivalents per contract, 100 × per-share delta (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta_per_contract: Option<f64>,
    /// Stock: notional traded, shares × price. Option: premium, contracts × mid × 100 (paid
    /// when buying, received when selling). Dollars.
    pub est_cost: f64,
    /// One sentence.
    pub description: String,
    /// The figures behind it.
    pub details: HedgeDetails,
}

/// The figures behind a hedge.
#[derive(Debug, Clone, Serialize)]
pub struct HedgeDetails {
    /// The hedge ticker's price used, dollars.
    pub hedge_price: f64,
    /// Mid quote per share, dollars (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mid: Option<f64>,
    /// Per-share delta, theta ($/day), vega ($/vol point) of the contract (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub delta: Option<f64>,
    /// Per-share theta, dollars per day (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub theta: Option<f64>,
    /// Per-share vega, dollars per vol point (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vega: Option<f64>,
    /// Calendar days to the contract's expiry (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub days_to_expiry: Option<f64>,
    /// The liquidity figures the contract passed (option hedge).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub liquidity: Option<HedgeLiquidity>,
    /// The book's delta after this hedge, share-equivalents.
    pub delta_after: f64,
}

/// Why the option hedge's contract counts as liquid: its figures and the rule they meet
/// ([`risk::liquidity_rule`]).
#[derive(Debug, Clone, Serialize)]
pub struct HedgeLiquidity {
    /// Bid, dollars per share.
    pub bid: f64,
    /// Ask, dollars per share.
    pub ask: f64,
    /// (ask − bid) / mid, percent.
    pub spread_pct_of_mid: f64,
    /// Open interest, contracts (null when the chain does not carry it).
    pub open_interest: Option<u64>,
    /// The session's volume, contracts (null when unknown).
    pub volume: Option<u64>,
    /// The rule in words.
    pub rule: String,
}

/// Net Greeks of the book.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct BookGreeks {
    /// Share-equivalents.
    pub total_delta: f64,
    /// Dollars per calendar day.
    pub total_theta: f64,
    /// Dollars per vol point.
    pub total_vega: f64,
}

impl From<risk::HedgeGreeks> for BookGreeks {
    fn from(g: risk::HedgeGreeks) -> Self {
        Self {
            total_delta: g.delta_shares,
            total_theta: g.theta_usd_per_day,
            total_vega: g.vega_usd_per_vol_point,
        }
    }
}

/// The book now and after each hedge.
#[derive(Debug, Clone, Serialize)]
pub struct ProjectedGreeks {
    /// Before hedging.
    pub current: BookGreeks,
    /// After the stock hedge.
    pub after_stock_hedge: BookGreeks,
    /// After the option hedge (null when there is none).
    pub after_option_hedge: Option<BookGreeks>,
}

/// `data` of `/hedge-recommendations`.
#[derive(Debug, Clone, Serialize)]
pub struct HedgePayload {
    /// The book's delta, share-equivalents.
    pub current_delta: f64,
    /// Where to land, share-equivalents.
    pub target_delta: f64,
    /// target − current, share-equivalents.
    pub delta_gap: f64,
    /// The ticker hedged with.
    pub hedge_ticker: String,
    /// Its price used, dollars.
    pub hedge_price: f64,
    /// Share-equivalent, not beta-weighted.
    pub note: &'static str,
    /// The stock hedge, then the option alternative (empty when there is no gap).
    pub hedges: Vec<Hedge>,
    /// Why there is no option alternative, when there is none and a gap.
    pub option_hedge_unavailable: Option<String>,
    /// The book's net Greeks.
    pub portfolio_greeks: BookGreeks,
    /// The book now and after each hedge.
    pub projected_greeks: ProjectedGreeks,
}

fn hedges_of(plan: &HedgePlan, hedge_price: f64) -> Vec<Hedge> {
    let ticker = &plan.hedge_ticker;
    let mut hedges = Vec::new();
    if let Some(stock) = &plan.stock {
        hedges.push(Hedge {
            hedge_type: "stock",
            action: stock.action.as_str(),
            ticker: ticker.clone(),
            quantity: Some(stock.shares),
            option_type: None,
            strike: None,
            expiration: None,
            contracts: None,
            delta_per_contract: None,
            est_cost: stock.est_cost_usd,
            description: format!(
                "{} {} shares of {ticker} to move delta from {:.0} to {:.0}",
                stock.action.as_str(),
                stock.shares,
                plan.current_delta,
                plan.after_stock.delta_shares
            ),
            details: HedgeDetails {
                hedge_price,
                mid: None,
                delta: None,
                theta: None,
                vega: None,
                days_to_expiry: None,
                liquidity: None,
                delta_after: plan.after_stock.delta_shares,
            },
        });
    }
    if let (Some(option), Some(after)) = (&plan.option, &plan.after_option) {
        let c = &option.contract;
        let label = match c.option_type {
            optics_compute::pricing::OptionType::Call => "CALL",
            optics_compute::pricing::OptionType::Put => "PUT",
        };
        let expiration = c.expiration.map(|e| e.to_string()).unwrap_or_default();
        hedges.push(Hedge {
            hedge_type: "option",
            action: option.action.as_str(),
            ticker: ticker.clone(),
            quantity: None,
            option_type: Some(label),
            strike: Some(c.strike),
            expiration: c.expiration,
            contracts: Some(option.contracts),
            delta_per_contract: Some(option.delta_per_contract),
            est_cost: option.est_cost_usd,
            description: format!(
                "{} {} {ticker} {expiration} {} {label} contracts to move delta from {:.0} to {:.0}",
                option.action.as_str(),
                option.contracts,
                c.strike,
                plan.current_delta,
                after.delta_shares
            ),
            details: HedgeDetails {
                hedge_price,
                mid: Some(c.mid),
                delta: Some(c.delta),
                theta: Some(c.theta),
                vega: Some(c.vega),
                days_to_expiry: Some(c.years_to_expiry * optics_compute::time::DAYS_PER_YEAR),
                liquidity: Some(HedgeLiquidity {
                    bid: c.bid,
                    ask: c.ask,
                    spread_pct_of_mid: if c.mid > 0.0 {
                        100.0 * (c.ask - c.bid) / c.mid
                    } else {
                        f64::INFINITY
                    },
                    open_interest: c.open_interest,
                    volume: c.volume,
                    rule: risk::liquidity_rule(),
                }),
                delta_after: after.delta_shares,
            },
        });
    }
    hedges
}

/// Every contract of the hedge ticker's live chain still open at `now`, with the quote,
/// Greeks and activity figures the option hedge's selection reads (sides without a quote,
/// Greeks or IV are left out; the first listed series per strike and date, as the builders
/// read the chain: [`first_series_per_strike`]).
fn hedge_candidates(
    chain: &ChainView,
    now: chrono::DateTime<chrono::Utc>,
) -> Vec<risk::HedgeCandidate> {
    use optics_compute::pricing::OptionType;
    let mut candidates = Vec::new();
    for open in open_expirations(chain, now) {
        let rows = first_series_per_strike(chain.rows_of(open.expiration));
        // A strike that is not a number names no contract.
        for row in rows.into_iter().filter(|r| !r.strike.is_nan()) {
            for (option_type, side) in [(OptionType::Call, &row.call), (OptionType::Put, &row.put)]
            {
                if let Some(quote) = side_quote(side) {
                    candidates.push(risk::HedgeCandidate {
                        option_type,
                        strike: row.strike,
                        expiration: Some(open.expiration),
                        years_to_expiry: open.years_to_expiry,
                        quote,
                        open_interest: side.open_interest,
                        volume: side.volume,
                    });
                }
            }
        }
    }
    candidates
}

/// POST /hedge-recommendations: a share hedge and an option alternative on `hedge_ticker`
/// (default SPY) towards `target_delta` (default 0). The hedge ticker's price is the book's
/// (supplied or a STOCK position) when it has one, else the live chain's; the option
/// alternative comes from the live chain.
pub async fn hedge_recommendations(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Envelope<HedgePayload>>, ApiError> {
    let object = body_object(&body)?;
    let positions = positions(&state, object)?;
    let target_delta = opt_number(object, "target_delta", "")?.unwrap_or(0.0);
    if !target_delta.is_finite() || target_delta.abs() > risk::MAX_MAGNITUDE {
        return Err(ApiError::bad_request(
            "target_delta: must be a finite number of share-equivalents",
        ));
    }
    let raw_hedge = opt_text(object, "hedge_ticker", "")?.unwrap_or(DEFAULT_HEDGE_TICKER);
    let hedge = state.covered_ticker(raw_hedge)?;
    let prices = underlying_prices(&state, object, &positions)?;
    let chain = state.market_data()?.chain(&hedge);
    let hedge_price = match prices.iter().find(|p| p.ticker == hedge.as_str()) {
        Some(p) => p.price,
        None => live_price(&state, hedge.as_str())?,
    };
    let book = risk::portfolio_greeks(&positions, &prices).map_err(risk_error)?;
    let gap = target_delta - book.total_delta_shares;
    let (contract, unavailable) = if gap.round() == 0.0 {
        (None, None)
    } else {
        match chain.as_deref() {
            None => (None, Some(format!("no live chain for {hedge}"))),
            Some(chain) => {
                match risk::select_hedge_contract(&hedge_candidates(chain, state.now()), gap) {
                    Ok(contract) => (Some(contract), None),
                    Err(RiskError::NoHedgeContract(reason)) => (None, Some(reason)),
                    Err(other) => return Err(risk_error(other)),
                }
            }
        }
    };
    let plan = risk::hedge_plan(
        &positions,
        &prices,
        hedge.as_str(),
        hedge_price,
        target_delta,
        contract.as_ref(),
    )
    .map_err(risk_error)?;
    Ok(ok(HedgePayload {
        current_delta: plan.current_delta,
        target_delta: plan.target_delta,
        delta_gap: plan.delta_gap,
        hedge_ticker: plan.hedge_ticker.clone(),
        hedge_price,
        note: plan.note,
        hedges: hedges_of(&plan, hedge_price),
        option_hedge_unavailable: unavailable,
        portfolio_greeks: plan.current.into(),
        projected_greeks: ProjectedGreeks {
            current: plan.current.into(),
            after_stock_hedge: plan.after_stock.into(),
            after_option_hedge: plan.after_option.map(Into::into),
        },
    }))
}
