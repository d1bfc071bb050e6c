//! The strategies family (POST, JSON bodies): `/pop`, `/analyze-strategy`, `/simulate-chain`,
//! `/build-strategy`, `/optimize-strategy`.
//!
//! Handlers read the body as a JSON value and pick fields by hand, so that every malformed
//! field is a 400 naming it (`legs[1].strike: must be a number, not a string`) rather than a
//! serde message about a struct. The math is in [`optics_compute::strategy`]; its module docs
//! are the contract of units and sign conventions (one-lot totals, credit-positive
//! `net_premium`, probability of profit in percent under the lognormal law).
//!
//! # Unbounded amounts
//! `max_profit`, `max_loss` and `risk_reward_ratio` are numbers when finite and the string
//! `"unlimited"` when unbounded (a naked short call's loss, a long call's profit), never a
//! large number standing in for infinity.
//!
//! # Market inputs
//! Expirations are converted to years (calendar days / 365 to the expiration day's close,
//! 16:00 New York or 13:00 on early-close days) with the service clock. The rate and the dividend (carry) yield are those
//! of the live chain's rows at the first expiration the legs use; without a chain, r = 4 % and
//! q = 0 ([`DEFAULT_RATE`]). `/pop` takes the same rate and yield from the chain of an
//! optional `ticker` (its rows at the listed expiration nearest `days_to_exp`), so it answers
//! as analyze-strategy does for the same legs; a `rate` or `dividend_yield` in the body
//! overrides either, and the payload says which were used and where they came from.
//!
//! Cash indices are priced on the forward (Black-76) and every expiration has its own
//! forward: the market handed to the math carries the live forward of each open expiration
//! ([`chain_market`]), so legs, builders and the optimizer price each expiration on its own
//! forward. For them `stock_price` means what `/chain` reports as the index's price, the
//! nearest expiration's forward; a supplied `stock_price` is read on that basis and moves
//! every expiration's forward in proportion (the carry between expirations stays the one the
//! chain implies). The record says so in `stock_price_basis`.
//!
//! # Errors
//! Missing market data (no live chain, no usable quote on a side, no IV for a contract) is a
//! 424 with `upstream: true`. A request whose constraints the quoted chain cannot meet (an
//! unreachable `min_credit`, a `target_delta` at which the shorts cross) is a 400 naming the
//! constraint: the client has to change the request.

use axum::Json;
use axum::extract::State;
use chrono::NaiveDate;
use optics_compute::pricing::PricingModel;
use optics_compute::strategy::{
    self, Bound, IvUnits, Leg, LegInput, MAX_LEGS, Market, NET_PREMIUM_CONVENTION,
    StrategyAnalysis, StrategyError, ValuationMethod,
};
use optics_compute::time::{DAYS_PER_YEAR, years_to_expiry};
use optics_schemas::ChainRow;
use serde::Serialize;
use serde_json::{Map, Value};

use crate::envelope::{ApiJson, Envelope, ok};
use crate::error::ApiError;
use crate::market::ChainView;
use crate::params::ClampNotice;
use crate::state::AppState;
use crate::ticker::Ticker;

/// The continuously compounded risk-free rate used when no chain row carries one, decimal.
pub const DEFAULT_RATE: f64 = 0.04;

/// The label of an unbounded profit, loss or ratio.
pub const UNLIMITED: &str = "unlimited";

/// The longest horizon `/pop` accepts, days (ten years: beyond any listed option).
pub const MAX_DAYS_TO_EXP: f64 = 3_650.0;

/// Strikes closer than this are the same strike, dollars (chain strikes are cents).
const STRIKE_TOLERANCE: f64 = 1e-6;

// ---------------------------------------------------------------------------------------------
// Body reading: every failure is a 400 naming the field.
// ---------------------------------------------------------------------------------------------

/// The body as a JSON object.
pub(crate) fn body_object(body: &Value) -> Result<&Map<String, Value>, ApiError> {
    body.as_object().ok_or_else(|| {
        ApiError::bad_request(format!(
            "the body must be a JSON object, not {}",
            kind_of(body)
        ))
    })
}

fn kind_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// An optional number: absent or null is `None`; anything but a JSON number is a 400.
pub(crate) fn opt_number(
    object: &Map<String, Value>,
    field: &str,
    path: &str,
) -> Result<Option<f64>, ApiError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n.as_f64().map(Some).ok_or_else(|| {
            ApiError::bad_request(format!("{path}{field}: is not a representable number"))
        }),
        Some(other) => Err(ApiError::bad_request(format!(
            "{path}{field}: must be a number, not {}",
            kind_of(other)
        ))),
    }
}

/// A required number.
pub(crate) fn req_number(
    object: &Map<String, Value>,
    field: &str,
    path: &str,
) -> Result<f64, ApiError> {
    opt_number(object, field, path)?
        .ok_or_else(|| ApiError::bad_request(format!("{path}{field}: is required")))
}

/// An optional string.
pub(crate) fn opt_text<'a>(
    object: &'a Map<String, Value>,
    field: &str,
    path: &str,
) -> Result<Option<&'a str>, ApiError> {
    match object.get(field) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(text)) => Ok(Some(text.as_str())),
        Some(other) => Err(ApiError::bad_request(format!(
            "{path}{field}: must be a string, not {}",
            kind_of(other)
        ))),
    }
}

/// An optional YYYY-MM-DD date.
pub(crate) fn opt_date(
    object: &Map<String, Value>,
    field: &str,
    path: &str,
) -> Result<Option<NaiveDate>, ApiError> {
    opt_text(object, field, path)?
        .map(|text| {
            NaiveDate::parse_from_str(text.trim(), "%Y-%m-%d").map_err(|_| {
                ApiError::bad_request(format!(
                    "{path}{field}: {text:?} is not a date in the form YYYY-MM-DD"
                ))
            })
        })
        .transpose()
}

/// A required, non-empty array of at most `max` objects.
pub(crate) fn object_array<'a>(
    object: &'a Map<String, Value>,
    field: &str,
    max: usize,
) -> Result<Vec<&'a Map<String, Value>>, ApiError> {
    let items = match object.get(field) {
        None | Some(Value::Null) => {
            return Err(ApiError::bad_request(format!("{field}: is required")));
        }
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "{field}: must be an array, not {}",
                kind_of(other)
            )));
        }
    };
    if items.is_empty() {
        return Err(ApiError::bad_request(format!(
            "{field}: at least one entry is required"
        )));
    }
    if items.len() > max {
        return Err(ApiError::bad_request(format!(
            "{field}: {} entries given; at most {max} are accepted",
            items.len()
        )));
    }
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            item.as_object().ok_or_else(|| {
                ApiError::bad_request(format!(
                    "{field}[{index}]: must be an object, not {}",
                    kind_of(item)
                ))
            })
        })
        .collect()
}

/// A 424 when the chain lacks the quotes needed; a 400 for malformed input and for
/// constraints the chain cannot meet (module docs).
pub(crate) fn strategy_error(error: StrategyError) -> ApiError {
    match error {
        StrategyError::MissingQuotes(_) => ApiError::upstream(error.to_string()),
        other => ApiError::bad_request(other.to_string()),
    }
}

/// The ticker field, validated and covered.
fn body_ticker(state: &AppState, object: &Map<String, Value>) -> Result<Ticker, ApiError> {
    let raw = opt_text(object, "ticker", "")?
        .ok_or_else(|| ApiError::bad_request("ticker: is required"))?;
    state.covered_ticker(raw)
}

// ---------------------------------------------------------------------------------------------
// Payload pieces shared by the strategy endpoints.
// ---------------------------------------------------------------------------------------------

/// A dollar amount or ratio that may be unbounded: a number, or the string `"unlimited"`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
#[serde(untagged)]
pub enum Amount {
    /// A finite value.
    Finite(f64),
    /// Always [`UNLIMITED`].
    Unlimited(&'static str),
}

impl From<Bound> for Amount {
    fn from(bound: Bound) -> Self {
        match bound {
            Bound::Finite(value) => Self::Finite(value),
            Bound::Unbounded => Self::Unlimited(UNLIMITED),
        }
    }
}

/// One leg as analyzed (`legs_summary[]`).
#[derive(Debug, Clone, Serialize)]
pub struct LegSummary {
    /// CALL or PUT.
    #[serde(rename = "type")]
    pub option_type: &'static str,
    /// BUY or SELL.
    pub action: &'static str,
    /// Strike, dollars.
    pub strike: f64,
    /// Expiration, YYYY-MM-DD (absent for pop legs).
    pub expiration: Option<NaiveDate>,
    /// Premium, dollars per share.
    pub premium: f64,
    /// Contracts.
    pub quantity: u32,
    /// IV used, decimal (`None` when the leg has none).
    pub iv: Option<f64>,
    /// Where the IV came from: `request` (sent with the leg) or `chain` (the live chain's IV
    /// for the contract); `None` without an IV.
    pub iv_source: Option<&'static str>,
    /// How a sent `iv` was read: `decimal`, or `percentage_points` when it was above 5
    /// (32.5 → 0.325); `None` when the leg sent no IV.
    pub iv_units_read: Option<&'static str>,
}

fn option_type_label(leg: &Leg) -> &'static str {
    match leg.option_type {
        optics_compute::pricing::OptionType::Call => "CALL",
        optics_compute::pricing::OptionType::Put => "PUT",
    }
}

fn leg_summary(leg: &Leg, from_chain: bool) -> LegSummary {
    LegSummary {
        option_type: option_type_label(leg),
        action: leg.action.as_str(),
        strike: leg.strike,
        expiration: leg.expiration,
        premium: leg.premium_per_share,
        quantity: leg.quantity,
        iv: leg.iv,
        iv_source: if from_chain {
            Some("chain")
        } else {
            leg.iv.map(|_| "request")
        },
        iv_units_read: leg.iv_units_read.map(IvUnits::as_str),
    }
}

/// The strategy analysis record (spec 2.3). Dollar figures are per one-lot (the legs exactly
/// as given, 100 shares a contract); `max_profit`, `max_loss` and `risk_reward_ratio` are
/// numbers or `"unlimited"`.
#[derive(Debug, Clone, Serialize)]
pub struct AnalysisRecord {
    /// The underlying.
    pub ticker: String,
    /// The supplied name, or `Custom Strategy`.
    pub strategy_name: String,
    /// The underlying price used, dollars (spot; the nearest expiration's forward for cash
    /// indices, see `stock_price_basis`).
    pub stock_price: f64,
    /// `spot`, or `nearest_forward` for cash indices priced on the forward.
    pub stock_price_basis: &'static str,
    /// `bsm` (spot with carry) or `black76` (forward, cash indices).
    pub pricing_model: &'static str,
    /// The first expiration's forward, dollars: the centre of the lognormal law behind
    /// probability_of_profit.
    pub forward_at_first_expiration: f64,
    /// The legs as read.
    pub legs_summary: Vec<LegSummary>,
    /// Credit positive, dollars per one-lot.
    pub net_premium: f64,
    /// `credit_positive`: a credit received is positive, a debit paid negative.
    pub net_premium_convention: &'static str,
    /// Largest P&L at the first expiration, dollars per one-lot, or `"unlimited"`.
    pub max_profit: Amount,
    /// Smallest P&L at the first expiration, dollars per one-lot (negative when a loss is
    /// possible), or `"unlimited"`.
    pub max_loss: Amount,
    /// max_profit / |max_loss|, or `"unlimited"`.
    pub risk_reward_ratio: Amount,
    /// Share-equivalents per one-lot.
    pub net_delta: f64,
    /// Dollars per calendar day per one-lot.
    pub net_theta: f64,
    /// Dollars per vol point per one-lot.
    pub net_vega: f64,
    /// Prices where the P&L at the first expiration changes sign, dollars, ascending.
    pub breakevens: Vec<f64>,
    /// Probability of finishing in a profit interval, percent.
    pub probability_of_profit: f64,
    /// The volatility behind that probability, percent (the IV of the leg struck nearest
    /// the price).
    pub probability_vol_pct: f64,
    /// Days from now to the first expiration (calendar days, fractional).
    pub days_to_first_expiration: f64,
    /// `[price, pnl]` pairs at the first expiration, dollars per one-lot.
    pub pnl_curve: Vec<[f64; 2]>,
    /// `exact_piecewise_linear` (one expiration) or `numeric_first_expiration` (calendars).
    pub valuation_method: &'static str,
    /// Continuously compounded rate used, decimal.
    pub rate: f64,
    /// Continuously compounded dividend (carry) yield used, decimal.
    pub dividend_yield: f64,
}

/// Builds the record from an analysis.
pub(crate) fn analysis_record(
    ticker: &str,
    name: Option<&str>,
    legs: &[Leg],
    chain_iv: &[bool],
    market: &Market,
    analysis: &StrategyAnalysis,
) -> AnalysisRecord {
    AnalysisRecord {
        ticker: ticker.to_owned(),
        strategy_name: name
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .unwrap_or("Custom Strategy")
            .to_owned(),
        stock_price: market.underlying_price,
        stock_price_basis: stock_price_basis(market),
        pricing_model: model_label(market.model),
        forward_at_first_expiration: analysis.forward_at_valuation,
        legs_summary: legs
            .iter()
            .enumerate()
            .map(|(i, leg)| leg_summary(leg, chain_iv.get(i).copied().unwrap_or(false)))
            .collect(),
        net_premium: analysis.net_premium_usd,
        net_premium_convention: NET_PREMIUM_CONVENTION.as_str(),
        max_profit: analysis.max_profit_usd.into(),
        max_loss: analysis.max_loss_usd.into(),
        risk_reward_ratio: analysis.risk_reward_ratio.into(),
        net_delta: analysis.net_greeks.delta_shares,
        net_theta: analysis.net_greeks.theta_usd_per_day,
        net_vega: analysis.net_greeks.vega_usd_per_vol_point,
        breakevens: analysis.breakevens.clone(),
        probability_of_profit: analysis.probability_of_profit_pct,
        probability_vol_pct: 100.0 * analysis.probability_vol,
        days_to_first_expiration: analysis.valuation_years * DAYS_PER_YEAR,
        pnl_curve: analysis.pnl_curve.iter().map(|&(p, v)| [p, v]).collect(),
        valuation_method: match analysis.method {
            ValuationMethod::ExactPiecewiseLinear => "exact_piecewise_linear",
            ValuationMethod::NumericFirstExpiration => "numeric_first_expiration",
        },
        rate: market.rate,
        dividend_yield: market.dividend_yield,
    }
}

/// `spot`, or `nearest_forward` on the forward model (module docs).
fn stock_price_basis(market: &Market) -> &'static str {
    match market.model {
        PricingModel::BlackScholesMerton => "spot",
        PricingModel::Black76 => "nearest_forward",
    }
}

fn model_label(model: PricingModel) -> &'static str {
    match model {
        PricingModel::BlackScholesMerton => "bsm",
        PricingModel::Black76 => "black76",
    }
}

/// The market of a live chain at the chain's own price ([`ChainView::stock_price`]): the
/// rate and carry yield of its rows at `expiration` (the chain's first row when no row has
/// that expiration) and, for chains priced on the forward, the forward of every expiration
/// still open at `now`. [`Market::with_underlying_price`] moves it to a supplied price.
pub(crate) fn chain_market(
    chain: &ChainView,
    expiration: Option<NaiveDate>,
    now: chrono::DateTime<chrono::Utc>,
) -> Market {
    let (rate, carry) = chain_rate_and_carry(chain, expiration);
    let rate = rate.unwrap_or(DEFAULT_RATE);
    if chain.priced_on_forward() {
        let curve = chain
            .expirations
            .iter()
            .filter_map(|&e| {
                let years = years_to_expiry(now, e);
                let forward = chain.rows_of(e).first()?.forward;
                (years > 0.0 && forward.is_finite() && forward > 0.0)
                    .then_some(strategy::ForwardPoint { years, forward })
            })
            .collect();
        Market::forward_curve(chain.stock_price(), rate, curve)
    } else {
        Market::spot(chain.stock_price(), rate, carry.unwrap_or(0.0))
    }
}

/// The rate and carry yield of `chain`'s rows at `expiration` (the chain's first row when no
/// row has that expiration), each `None` when the row does not carry a finite one.
fn chain_rate_and_carry(
    chain: &ChainView,
    expiration: Option<NaiveDate>,
) -> (Option<f64>, Option<f64>) {
    let row = expiration
        .and_then(|e| chain.rows_of(e).first())
        .or_else(|| chain.rows.first());
    let finite = |v: f64| v.is_finite().then_some(v);
    (
        row.and_then(|r| finite(r.rate)),
        row.and_then(|r| finite(r.carry_yield)),
    )
}

/// The chain row of `expiration` at `strike`.
pub(crate) fn chain_row(
    chain: &ChainView,
    expiration: NaiveDate,
    strike: f64,
) -> Option<&ChainRow> {
    chain
        .rows_of(expiration)
        .iter()
        .find(|r| (r.strike - strike).abs() < STRIKE_TOLERANCE)
}

// ---------------------------------------------------------------------------------------------
// POST /pop
// ---------------------------------------------------------------------------------------------

/// `data` of `/pop`.
#[derive(Debug, Clone, Serialize)]
pub struct PopPayload {
    /// Probability that the legs finish with P&L > 0 at expiration, percent.
    pub probability_of_profit: f64,
    /// Legs read.
    pub legs_count: usize,
    /// The volatility used, percent (the IV of the leg struck nearest the price).
    pub probability_vol_pct: f64,
    /// Prices where the P&L at expiration changes sign, dollars.
    pub breakevens: Vec<f64>,
    /// The underlying whose chain gave the rate and yield, when `ticker` was sent.
    pub ticker: Option<String>,
    /// The spot echoed, dollars (an index's nearest-expiration forward, see
    /// `pricing_model`).
    pub stock_price: f64,
    /// The horizon echoed, days.
    pub days_to_exp: f64,
    /// The continuously compounded rate used, decimal.
    pub rate: f64,
    /// Where `rate` came from: `request`, `chain` (the ticker's rows at `market_expiration`)
    /// or `default` ([`DEFAULT_RATE`]: no ticker, or a ticker without a chain).
    pub rate_source: &'static str,
    /// The continuously compounded dividend (carry) yield used, decimal.
    pub dividend_yield: f64,
    /// Where `dividend_yield` came from: `request`, `chain`, `default` (0), or `forward`
    /// when the ticker is priced on the forward (an index: the carry is in its forwards and
    /// `dividend_yield` is 0).
    pub dividend_yield_source: &'static str,
    /// The listed expiration whose chain rows gave the rate and yield: the one nearest
    /// days_to_exp (null without a chain).
    pub market_expiration: Option<NaiveDate>,
    /// `bsm` (spot with carry) or `black76` (the ticker's chain is priced on the forward).
    pub pricing_model: &'static str,
    /// The forward at days_to_exp, dollars, the centre of the lognormal law: S·e^{(r−q)T}, or
    /// on the forward model the chain's forward of that horizon moved with stock_price.
    pub forward: f64,
    /// The legs as read, each with how its `iv` was read (`iv_units_read`: `decimal`, or
    /// `percentage_points` for a value above 5).
    pub legs_summary: Vec<LegSummary>,
}

/// The largest |rate| or |dividend_yield| `/pop` accepts, decimal (100 %): a larger value is
/// almost surely percentage points sent as a decimal.
pub const MAX_ABS_RATE: f64 = 1.0;

/// An optional continuously compounded rate or yield, decimal, within ±[`MAX_ABS_RATE`].
fn opt_decimal_rate(object: &Map<String, Value>, field: &str) -> Result<Option<f64>, ApiError> {
    let value = opt_number(object, field, "")?;
    if let Some(v) = value
        && !(v.is_finite() && v.abs() <= MAX_ABS_RATE)
    {
        return Err(ApiError::bad_request(format!(
            "{field}: {v} is outside -1 to 1; send a decimal (0.045 for 4.5 %)"
        )));
    }
    Ok(value)
}

/// The open expiration of `chain` nearest `days` days from `now` (a tie goes to the later).
fn expiration_nearest_days(
    chain: &ChainView,
    now: chrono::DateTime<chrono::Utc>,
    days: f64,
) -> Option<NaiveDate> {
    let mut best: Option<(NaiveDate, f64)> = None;
    for open in open_expirations(chain, now) {
        let miss = (open.years_to_expiry * DAYS_PER_YEAR - days).abs();
        if best.is_none_or(|(_, b)| miss <= b) {
            best = Some((open.expiration, miss));
        }
    }
    best.map(|(expiration, _)| expiration)
}

/// One pop leg (`option_type`, `action`, `strike`, `iv`, `premium`, `quantity`); `type` is
/// accepted for `option_type` so analyze-strategy legs can be sent as they are.
fn pop_leg(object: &Map<String, Value>, index: usize, years: f64) -> Result<LegInput, ApiError> {
    let path = format!("legs[{index}].");
    let option_type = match opt_text(object, "option_type", &path)? {
        Some(text) => Some(text),
        None => opt_text(object, "type", &path)?,
    };
    if option_type.is_none() {
        return Err(ApiError::bad_request(format!(
            "{path}option_type: is required (CALL or PUT)"
        )));
    }
    Ok(LegInput {
        option_type: option_type.map(str::to_owned),
        action: opt_text(object, "action", &path)?.map(str::to_owned),
        strike: opt_number(object, "strike", &path)?,
        years_to_expiry: Some(years),
        expiration: None,
        premium: opt_number(object, "premium", &path)?,
        quantity: opt_number(object, "quantity", &path)?,
        iv: opt_number(object, "iv", &path)?,
        delta: opt_number(object, "delta", &path)?,
        theta: opt_number(object, "theta", &path)?,
        vega: opt_number(object, "vega", &path)?,
    })
}

/// POST /pop: probability of profit of legs with supplied IVs, at `days_to_exp` days. Only
/// the payoff and the IV the probability uses are needed: a leg's Greeks never are, and an
/// `iv` only on the leg(s) struck nearest the price. The rate and yield are the body's, else
/// those of `ticker`'s chain as analyze-strategy reads them, else r = 4 %, q = 0.
pub async fn pop(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Envelope<PopPayload>>, ApiError> {
    let object = body_object(&body)?;
    let stock_price = req_number(object, "stock_price", "")?;
    let days = req_number(object, "days_to_exp", "")?;
    if !(0.0..=MAX_DAYS_TO_EXP).contains(&days) {
        return Err(ApiError::bad_request(format!(
            "days_to_exp: must be between 0 and {MAX_DAYS_TO_EXP} days"
        )));
    }
    let rate_sent = opt_decimal_rate(object, "rate")?;
    let yield_sent = opt_decimal_rate(object, "dividend_yield")?;
    let years = days / DAYS_PER_YEAR;
    let inputs = object_array(object, "legs", MAX_LEGS)?
        .into_iter()
        .enumerate()
        .map(|(index, leg)| pop_leg(leg, index, years))
        .collect::<Result<Vec<_>, _>>()?;
    let legs = strategy::validate_legs_named(&inputs, "option_type").map_err(strategy_error)?;
    Market::spot(stock_price, DEFAULT_RATE, 0.0)
        .validate()
        .map_err(strategy_error)?;
    let ticker = opt_text(object, "ticker", "")?
        .map(|raw| state.covered_ticker(raw))
        .transpose()?;
    let chain = match &ticker {
        Some(ticker) => state.market_data()?.chain(ticker),
        None => None,
    };
    // As analyze-strategy: the chain's market at the legs' expiration, moved to stock_price.
    let (mut market, market_expiration, (chain_rate, chain_carry)) = match chain.as_deref() {
        Some(chain) => {
            let now = state.now();
            let expiration = expiration_nearest_days(chain, now, days);
            (
                chain_market(chain, expiration, now).with_underlying_price(stock_price),
                expiration,
                chain_rate_and_carry(chain, expiration),
            )
        }
        None => (
            Market::spot(stock_price, DEFAULT_RATE, 0.0),
            None,
            (None, None),
        ),
    };
    let on_forward = market.model == PricingModel::Black76;
    let source = |sent: Option<f64>, from_chain: Option<f64>| match (sent, from_chain) {
        (Some(_), _) => "request",
        (None, Some(_)) => "chain",
        (None, None) => "default",
    };
    let rate_source = source(rate_sent, chain_rate);
    let dividend_yield_source = if on_forward {
        "forward"
    } else {
        source(yield_sent, chain_carry)
    };
    if let Some(rate) = rate_sent {
        market.rate = rate;
    }
    if let Some(dividend_yield) = yield_sent {
        if on_forward {
            return Err(ApiError::bad_request(format!(
                "dividend_yield: {} is priced on the forward of its chain, which carries the \
                 yield; omit dividend_yield, or omit ticker to price on the spot",
                ticker.as_ref().map(Ticker::as_str).unwrap_or_default()
            )));
        }
        market.dividend_yield = dividend_yield;
    }
    if market.validate().is_err() {
        return Err(ApiError::upstream(format!(
            "The live chain of {} has no usable price or forward",
            ticker.as_ref().map(Ticker::as_str).unwrap_or_default()
        )));
    }
    let probability = strategy::profit_probability(&legs, &market).map_err(strategy_error)?;
    Ok(ok(PopPayload {
        probability_of_profit: probability.probability_of_profit_pct,
        legs_count: legs.len(),
        probability_vol_pct: 100.0 * probability.probability_vol,
        breakevens: probability.breakevens,
        ticker: ticker.map(|t| t.to_string()),
        stock_price,
        days_to_exp: days,
        rate: market.rate,
        rate_source,
        dividend_yield: market.dividend_yield,
        dividend_yield_source,
        market_expiration,
        pricing_model: model_label(market.model),
        forward: probability.forward_at_valuation,
        legs_summary: legs.iter().map(|leg| leg_summary(leg, false)).collect(),
    }))
}

// ---------------------------------------------------------------------------------------------
// POST /analyze-strategy
// ---------------------------------------------------------------------------------------------

fn analyze_leg(
    object: &Map<String, Value>,
    index: usize,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<LegInput, ApiError> {
    let path = format!("legs[{index}].");
    let expiration = opt_date(object, "expiration", &path)?
        .ok_or_else(|| ApiError::bad_request(format!("{path}expiration: is required")))?;
    let option_type = match opt_text(object, "type", &path)? {
        Some(text) => Some(text),
        None => opt_text(object, "option_type", &path)?,
    };
    Ok(LegInput {
        option_type: option_type.map(str::to_owned),
        action: opt_text(object, "action", &path)?.map(str::to_owned),
        strike: opt_number(object, "strike", &path)?,
        years_to_expiry: Some(years_to_expiry(now, expiration)),
        expiration: Some(expiration),
        premium: opt_number(object, "premium", &path)?,
        quantity: opt_number(object, "quantity", &path)?,
        iv: opt_number(object, "iv", &path)?,
        delta: opt_number(object, "delta", &path)?,
        theta: opt_number(object, "theta", &path)?,
        vega: opt_number(object, "vega", &path)?,
    })
}

/// Fills the IV of legs that have none from `chain`; returns which legs took the chain's.
/// A leg without IV whose contract the chain does not price is a 424.
fn fill_chain_ivs(
    ticker: &Ticker,
    legs: &mut [Leg],
    chain: Option<&ChainView>,
) -> Result<Vec<bool>, ApiError> {
    let mut from_chain = vec![false; legs.len()];
    for (index, leg) in legs.iter_mut().enumerate() {
        if leg.iv.is_some() {
            continue;
        }
        let side = chain.zip(leg.expiration).and_then(|(chain, expiration)| {
            chain_row(chain, expiration, leg.strike).map(|row| match leg.option_type {
                optics_compute::pricing::OptionType::Call => &row.call,
                optics_compute::pricing::OptionType::Put => &row.put,
            })
        });
        let iv = side
            .and_then(|s| s.iv)
            .filter(|v| v.is_finite() && *v > 0.0);
        let Some(iv) = iv else {
            return Err(ApiError::upstream(format!(
                "legs[{index}].iv: not supplied, and the live chain of {ticker} has no IV for \
                 the {} {} {}; send iv with the leg",
                leg.expiration.map(|e| e.to_string()).unwrap_or_default(),
                leg.strike,
                option_type_label(leg)
            )));
        };
        leg.iv = Some(iv);
        from_chain[index] = true;
    }
    Ok(from_chain)
}

/// POST /analyze-strategy: the analysis record of caller-supplied legs.
pub async fn analyze_strategy(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Envelope<AnalysisRecord>>, ApiError> {
    let object = body_object(&body)?;
    let name = opt_text(object, "name", "")?;
    let stock_price = opt_number(object, "stock_price", "")?;
    let now = state.now();
    let inputs = object_array(object, "legs", MAX_LEGS)?
        .into_iter()
        .enumerate()
        .map(|(index, leg)| analyze_leg(leg, index, now))
        .collect::<Result<Vec<_>, _>>()?;
    let mut legs = strategy::validate_legs(&inputs).map_err(strategy_error)?;
    if let Some(price) = stock_price {
        Market::spot(price, DEFAULT_RATE, 0.0)
            .validate()
            .map_err(strategy_error)?;
    }
    let ticker = body_ticker(&state, object)?;
    let chain = state.market_data()?.chain(&ticker);
    let chain = chain.as_deref();
    let chain_iv = fill_chain_ivs(&ticker, &mut legs, chain)?;
    let first_expiration = legs.iter().filter_map(|l| l.expiration).min();
    let market = match (chain, stock_price) {
        (Some(chain), None) => chain_market(chain, first_expiration, now),
        (Some(chain), Some(price)) => {
            chain_market(chain, first_expiration, now).with_underlying_price(price)
        }
        (None, Some(price)) => Market::spot(price, DEFAULT_RATE, 0.0),
        (None, None) => {
            return Err(ApiError::upstream(format!(
                "No live chain for {ticker} to take the price from; send stock_price"
            )));
        }
    };
    market
        .validate()
        .map_err(|_| ApiError::upstream(format!("The live price of {ticker} is not usable")))?;
    let analysis = strategy::analyze(&legs, &market).map_err(strategy_error)?;
    Ok(ok(analysis_record(
        ticker.as_str(),
        name,
        &legs,
        &chain_iv,
        &market,
        &analysis,
    )))
}

/// An expiration of a live chain still open at some instant.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct OpenExpiration {
    /// The date.
    pub expiration: NaiveDate,
    /// Years to it from that instant (calendar days / 365), > 0.
    pub years_to_expiry: f64,
}

/// The expirations of `chain` still open at `now`, ascending.
pub(crate) fn open_expirations(
    chain: &ChainView,
    now: chrono::DateTime<chrono::Utc>,
) -> Vec<OpenExpiration> {
    chain
        .expirations
        .iter()
        .filter_map(|&expiration| {
            let years = years_to_expiry(now, expiration);
            (years.is_finite() && years > 0.0).then_some(OpenExpiration {
                expiration,
                years_to_expiry: years,
            })
        })
        .collect()
}

/// One expiration of the live chain as the builders, the optimizer and the hedge selector see
/// it: one series per strike ([`first_series_per_strike`]), each side with its bid, ask,
/// Greeks and IV when all are known.
pub(crate) fn expiration_chain(
    chain: &ChainView,
    open: OpenExpiration,
) -> strategy::ExpirationChain {
    strategy::ExpirationChain {
        expiration: Some(open.expiration),
        years_to_expiry: open.years_to_expiry,
        rows: first_series_per_strike(chain.rows_of(open.expiration))
            .into_iter()
            .map(|row| strategy::ChainRow {
                strike: row.strike,
                call: side_quote(&row.call),
                put: side_quote(&row.put),
            })
            .collect(),
    }
}

/// The rows of one expiration with one series per strike: of rows whose strikes are closer
/// than [`STRIKE_TOLERANCE`], the first listed (AM before PM when a date has both), in the
/// order listed.
///
/// `rows` is [`ChainView::rows_of`]: one run of ascending strikes per settlement style. Each
/// strike is compared with the last strike kept in its own run and, through a cursor that
/// only moves forward, with the strikes kept from the earlier runs (merged in ascending
/// order), so the pass is linear in the rows rather than quadratic.
pub(crate) fn first_series_per_strike(rows: &[ChainRow]) -> Vec<&ChainRow> {
    let mut kept: Vec<&ChainRow> = Vec::with_capacity(rows.len());
    // Strikes kept from the runs already read, ascending, and from the current run.
    let mut earlier: Vec<f64> = Vec::new();
    let mut current: Vec<f64> = Vec::new();
    let mut cursor = 0;
    let mut previous = f64::NEG_INFINITY;
    for row in rows {
        let strike = row.strike;
        if !strike.is_finite() {
            // |NaN − x| and |±∞ − x| are never below the tolerance: never a repeat.
            kept.push(row);
            continue;
        }
        if strike < previous {
            // The next settlement style's run begins.
            earlier = merge_ascending(&earlier, &current);
            current.clear();
            cursor = 0;
        }
        previous = strike;
        // Skip the earlier strikes too far below this one (they are for the next ones too:
        // the run ascends).
        while cursor < earlier.len()
            && earlier[cursor] < strike
            && strike - earlier[cursor] >= STRIKE_TOLERANCE
        {
            cursor += 1;
        }
        let repeats_earlier = earlier
            .get(cursor)
            .is_some_and(|k| (k - strike).abs() < STRIKE_TOLERANCE);
        let repeats_current = current
            .last()
            .is_some_and(|k| strike - k < STRIKE_TOLERANCE);
        if !(repeats_earlier || repeats_current) {
            kept.push(row);
            current.push(strike);
        }
    }
    kept
}

/// Two ascending lists merged into one.
fn merge_ascending(a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut merged = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        if a[i] <= b[j] {
            merged.push(a[i]);
            i += 1;
        } else {
            merged.push(b[j]);
            j += 1;
        }
    }
    merged.extend_from_slice(&a[i..]);
    merged.extend_from_slice(&b[j..]);
    merged
}

pub(crate) fn side_quote(side: &optics_schemas::ChainSide) -> Option<strategy::SideQuote> {
    Some(strategy::SideQuote {
        bid: side.bid?,
        ask: side.ask?,
        delta: side.greeks.delta?,
        theta: side.greeks.theta?,
        vega: side.greeks.vega?,
        iv: side.iv?,
    })
}

// ---------------------------------------------------------------------------------------------
// POST /simulate-chain
// ---------------------------------------------------------------------------------------------

/// Strikes per side of `sim_price` re-priced from a fetched chain when `strikes_around` is
/// absent.
pub const DEFAULT_SIM_STRIKES_AROUND: usize = 20;

/// The most strikes per side `strikes_around` may ask for.
pub const MAX_SIM_STRIKES_AROUND: usize = 500;

/// One re-priced row (`chain[]`), keys as in `/chain`. Prices dollars per share, IVs
/// decimals, theta dollars per calendar day, vega dollars per vol point; a side the input row
/// had no IV for is null throughout.
#[derive(Debug, Clone, Serialize)]
pub struct SimulatedChainRow {
    /// Strike, dollars.
    #[serde(rename = "Strike")]
    pub strike: f64,
    /// Re-priced call bid (the input spread kept around the model value).
    #[serde(rename = "Call Bid")]
    pub call_bid: Option<f64>,
    /// Re-priced call ask.
    #[serde(rename = "Call Ask")]
    pub call_ask: Option<f64>,
    /// Call model value.
    #[serde(rename = "Call Mid")]
    pub call_mid: Option<f64>,
    /// Re-priced put bid.
    #[serde(rename = "Put Bid")]
    pub put_bid: Option<f64>,
    /// Re-priced put ask.
    #[serde(rename = "Put Ask")]
    pub put_ask: Option<f64>,
    /// Put model value.
    #[serde(rename = "Put Mid")]
    pub put_mid: Option<f64>,
    /// The call IV priced at (input + shift, floored at 1 %), decimal.
    #[serde(rename = "IV Call")]
    pub iv_call: Option<f64>,
    /// The put IV priced at, decimal.
    #[serde(rename = "IV Put")]
    pub iv_put: Option<f64>,
    /// Call delta.
    #[serde(rename = "Delta Call")]
    pub delta_call: Option<f64>,
    /// Put delta.
    #[serde(rename = "Delta Put")]
    pub delta_put: Option<f64>,
    /// Call gamma, per $1.
    #[serde(rename = "Gamma Call")]
    pub gamma_call: Option<f64>,
    /// Put gamma, per $1.
    #[serde(rename = "Gamma Put")]
    pub gamma_put: Option<f64>,
    /// Call theta, dollars per calendar day.
    #[serde(rename = "Theta Call")]
    pub theta_call: Option<f64>,
    /// Put theta, dollars per calendar day.
    #[serde(rename = "Theta Put")]
    pub theta_put: Option<f64>,
    /// Call vega, dollars per vol point.
    #[serde(rename = "Vega Call")]
    pub vega_call: Option<f64>,
    /// Put vega, dollars per vol point.
    #[serde(rename = "Vega Put")]
    pub vega_put: Option<f64>,
    /// Call epsilon, dollars per point of dividend yield.
    #[serde(rename = "Epsilon Call")]
    pub epsilon_call: Option<f64>,
    /// Put epsilon.
    #[serde(rename = "Epsilon Put")]
    pub epsilon_put: Option<f64>,
    /// Call value above intrinsic at sim_price.
    #[serde(rename = "Extrinsic Call")]
    pub extrinsic_call: Option<f64>,
    /// Put value above intrinsic at sim_price.
    #[serde(rename = "Extrinsic Put")]
    pub extrinsic_put: Option<f64>,
    /// True when the shifted call IV was below 1 % and floored.
    #[serde(rename = "IV Floored Call")]
    pub iv_floored_call: Option<bool>,
    /// True when the shifted put IV was floored.
    #[serde(rename = "IV Floored Put")]
    pub iv_floored_put: Option<bool>,
}

impl From<&strategy::SimulatedRow> for SimulatedChainRow {
    fn from(row: &strategy::SimulatedRow) -> Self {
        let (c, p) = (row.call.as_ref(), row.put.as_ref());
        Self {
            strike: row.strike,
            call_bid: c.map(|s| s.bid),
            call_ask: c.map(|s| s.ask),
            call_mid: c.map(|s| s.value),
            put_bid: p.map(|s| s.bid),
            put_ask: p.map(|s| s.ask),
            put_mid: p.map(|s| s.value),
            iv_call: c.map(|s| s.iv),
            iv_put: p.map(|s| s.iv),
            delta_call: c.map(|s| s.delta),
            delta_put: p.map(|s| s.delta),
            gamma_call: c.map(|s| s.gamma),
            gamma_put: p.map(|s| s.gamma),
            theta_call: c.map(|s| s.theta),
            theta_put: p.map(|s| s.theta),
            vega_call: c.map(|s| s.vega),
            vega_put: p.map(|s| s.vega),
            epsilon_call: c.map(|s| s.epsilon),
            epsilon_put: p.map(|s| s.epsilon),
            extrinsic_call: c.map(|s| s.extrinsic),
            extrinsic_put: p.map(|s| s.extrinsic),
            iv_floored_call: c.map(|s| s.iv_floored),
            iv_floored_put: p.map(|s| s.iv_floored),
        }
    }
}

/// `data` of `/simulate-chain`.
#[derive(Debug, Clone, Serialize)]
pub struct SimulatePayload {
    /// The underlying, when the chain was fetched.
    pub ticker: Option<String>,
    /// The expiration re-priced, when the chain was fetched (or sent with the body).
    pub expiration: Option<NaiveDate>,
    /// Hypothetical underlying price echoed, dollars (the forward for index chains).
    pub sim_price: f64,
    /// Days to expiry in the scenario echoed.
    pub sim_dte: f64,
    /// Vol points added to every IV, echoed.
    pub iv_adjustment: f64,
    /// `live_chain` (fetched by ticker) or `request` (rows from the body).
    pub source: &'static str,
    /// Always `decimal`: IVs in and out of `chain[]` are decimals.
    pub iv_units: &'static str,
    /// Rate used, decimal (the chain's; 4 % for rows sent in the body).
    pub rate: f64,
    /// Dividend (carry) yield used, decimal (the chain's; 0 for rows sent in the body).
    pub dividend_yield: f64,
    /// `bsm` (spot) or `black76` (forward).
    pub model: &'static str,
    /// Rows kept around sim_price from a fetched chain (`strikes_around` per side).
    pub window: Option<crate::window::Window>,
    /// Parameters moved into their documented range (`strikes_around` above 500 or below
    /// 0), each as `{parameter, requested, used, min, max}`.
    pub clamped: Vec<ClampNotice>,
    /// The re-priced rows, by strike.
    pub chain: Vec<SimulatedChainRow>,
}

/// One side of a row sent in the body: its IV (`IV Call`, decimal; above 5 read as
/// percentage points) and optional bid and ask. No IV: the side is not re-priced.
fn sim_side(
    object: &Map<String, Value>,
    path: &str,
    side: &str,
) -> Result<Option<strategy::SimulationSide>, ApiError> {
    let iv_key = format!("IV {side}");
    let Some(iv) = opt_number(object, &iv_key, path)? else {
        return Ok(None);
    };
    let (iv, _) = strategy::read_iv(iv)
        .map_err(|reason| ApiError::bad_request(format!("{path}{iv_key}: {reason}")))?;
    let quote = |key: String| -> Result<Option<f64>, ApiError> {
        let value = opt_number(object, &key, path)?;
        if value.is_some_and(|v| !(0.0..=strategy::MAX_PRICE).contains(&v)) {
            return Err(ApiError::bad_request(format!(
                "{path}{key}: must be a number of dollars from 0 to {:e}",
                strategy::MAX_PRICE
            )));
        }
        Ok(value)
    };
    Ok(Some(strategy::SimulationSide {
        iv,
        bid: quote(format!("{side} Bid"))?,
        ask: quote(format!("{side} Ask"))?,
    }))
}

fn request_rows(items: &[Value]) -> Result<Vec<strategy::SimulationRow>, ApiError> {
    if items.len() > strategy::simulate::MAX_SIM_ROWS {
        return Err(ApiError::bad_request(format!(
            "chain: {} rows given; at most {} are accepted",
            items.len(),
            strategy::simulate::MAX_SIM_ROWS
        )));
    }
    items
        .iter()
        .enumerate()
        .map(|(index, item)| {
            let path = format!("chain[{index}].");
            let object = item.as_object().ok_or_else(|| {
                ApiError::bad_request(format!(
                    "chain[{index}]: must be an object, not {}",
                    kind_of(item)
                ))
            })?;
            Ok(strategy::SimulationRow {
                strike: req_number(object, "Strike", &path)?,
                call: sim_side(object, &path, "Call")?,
                put: sim_side(object, &path, "Put")?,
            })
        })
        .collect()
}

fn live_rows(rows: &[&ChainRow]) -> Vec<strategy::SimulationRow> {
    let side = |s: &optics_schemas::ChainSide| {
        s.iv.filter(|v| v.is_finite() && *v > 0.0)
            .map(|iv| strategy::SimulationSide {
                iv,
                bid: s.bid,
                ask: s.ask,
            })
    };
    rows.iter()
        .map(|r| strategy::SimulationRow {
            strike: r.strike,
            call: side(&r.call),
            put: side(&r.put),
        })
        .collect()
}

/// POST /simulate-chain: re-prices rows sent in the body, or the live chain of `ticker` at
/// `expiration` (default: the nearest still open), at `sim_price`, `sim_dte` days and every
/// IV shifted by `iv_adjustment` vol points.
pub async fn simulate_chain(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Envelope<SimulatePayload>>, ApiError> {
    let object = body_object(&body)?;
    let sim_price = req_number(object, "sim_price", "")?;
    let sim_dte = req_number(object, "sim_dte", "")?;
    let iv_adjustment = opt_number(object, "iv_adjustment", "")?.unwrap_or(0.0);
    let expiration = opt_date(object, "expiration", "")?;
    // A whole number; outside 0..=MAX it is clamped and reported (the reference's rule for
    // bounded whole numbers), never rejected.
    let mut clamped = Vec::new();
    let strikes_around = match opt_number(object, "strikes_around", "")? {
        None => DEFAULT_SIM_STRIKES_AROUND,
        Some(n) if n.fract() == 0.0 => {
            let used = n.clamp(0.0, MAX_SIM_STRIKES_AROUND as f64);
            if used != n {
                clamped.push(ClampNotice {
                    parameter: "strikes_around",
                    requested: n.to_string(),
                    used: Value::from(used as u64),
                    min: Value::from(0),
                    max: Value::from(MAX_SIM_STRIKES_AROUND),
                });
            }
            // Whole and within 0..=MAX_SIM_STRIKES_AROUND: the conversion is exact.
            used as usize
        }
        Some(_) => {
            return Err(ApiError::bad_request(format!(
                "strikes_around: must be a whole number (0 to {MAX_SIM_STRIKES_AROUND}; values \
                 outside are clamped)"
            )));
        }
    };
    let supplied = match object.get("chain") {
        None | Some(Value::Null) => None,
        Some(Value::Array(items)) if items.is_empty() => {
            return Err(ApiError::bad_request("chain: at least one row is required"));
        }
        Some(Value::Array(items)) => Some(request_rows(items)?),
        Some(other) => {
            return Err(ApiError::bad_request(format!(
                "chain: must be an array of rows as returned by /chain, not {}",
                kind_of(other)
            )));
        }
    };
    let ticker_raw = opt_text(object, "ticker", "")?;
    let mut scenario = strategy::SimulationScenario {
        sim_price,
        sim_days: sim_dte,
        iv_adjustment_points: iv_adjustment,
        rate: DEFAULT_RATE,
        dividend_yield: 0.0,
        model: PricingModel::BlackScholesMerton,
    };
    let (rows, ticker, expiration, window, source) = match (supplied, ticker_raw) {
        (Some(rows), _) => (rows, None, expiration, None, "request"),
        (None, None) => {
            return Err(ApiError::bad_request(
                "chain or ticker: send chain rows (as returned by /chain) or a ticker whose \
                 live chain to re-price",
            ));
        }
        (None, Some(raw)) => {
            let ticker = state.covered_ticker(raw)?;
            let chain = state
                .market_data()?
                .chain(&ticker)
                .ok_or_else(|| ApiError::upstream(format!("No live chain for {ticker} yet")))?;
            let now = state.now();
            let expiration = match expiration {
                Some(e) if chain.expirations.contains(&e) => e,
                Some(e) => {
                    return Err(ApiError::upstream(format!(
                        "{ticker} has no {e} expiration in the live chain (see /expirations)"
                    )));
                }
                None => *chain
                    .expirations
                    .iter()
                    .find(|e| years_to_expiry(now, **e) > 0.0)
                    .ok_or_else(|| {
                        ApiError::upstream(format!("{ticker} has no open expiration"))
                    })?,
            };
            // Only the rate, carry and model: sim_price is the scenario's price (the
            // expiration's forward on an index chain).
            let market = chain_market(&chain, Some(expiration), now);
            scenario.rate = market.rate;
            scenario.dividend_yield = market.dividend_yield;
            scenario.model = market.model;
            let mut by_strike = first_series_per_strike(chain.rows_of(expiration));
            by_strike.sort_by(|a, b| a.strike.total_cmp(&b.strike));
            let per_side = (strikes_around > 0).then_some(strikes_around);
            let detail = if per_side.is_some() {
                crate::window::Detail::Compact
            } else {
                crate::window::Detail::Full
            };
            let (range, window) = crate::window::window_around_strike(
                &by_strike,
                |r| r.strike,
                sim_price,
                per_side,
                detail,
            );
            let rows = live_rows(&by_strike[range]);
            (
                rows,
                Some(ticker.to_string()),
                Some(expiration),
                Some(window),
                "live_chain",
            )
        }
    };
    let simulated = strategy::simulate_chain(&rows, &scenario).map_err(strategy_error)?;
    Ok(ok(SimulatePayload {
        ticker,
        expiration,
        sim_price,
        sim_dte,
        iv_adjustment,
        source,
        iv_units: "decimal",
        rate: scenario.rate,
        dividend_yield: scenario.dividend_yield,
        model: model_label(scenario.model),
        window,
        clamped,
        chain: simulated.iter().map(SimulatedChainRow::from).collect(),
    }))
}

// ---------------------------------------------------------------------------------------------
// POST /build-strategy and /optimize-strategy
// ---------------------------------------------------------------------------------------------

/// Target days to expiration when neither `expiration` nor `dte` is sent.
pub const DEFAULT_DTE: f64 = 30.0;

/// Wing width when `width` is absent, dollars.
pub const DEFAULT_WIDTH: f64 = 5.0;

/// Short-strike |delta| when `target_delta` is absent.
pub const DEFAULT_TARGET_DELTA: f64 = 0.3;

/// One leg of a built or optimized strategy (`legs[]`): the chain's mid, Greeks and IV.
#[derive(Debug, Clone, Serialize)]
pub struct BuiltLeg {
    /// CALL or PUT.
    #[serde(rename = "type")]
    pub option_type: &'static str,
    /// BUY or SELL.
    pub action: &'static str,
    /// Strike, dollars.
    pub strike: f64,
    /// Expiration.
    pub expiration: Option<NaiveDate>,
    /// Mid quote, dollars per share.
    pub premium: f64,
    /// Contracts per one-lot.
    pub quantity: u32,
    /// Per-share delta.
    pub delta: Option<f64>,
    /// Per-share theta, dollars per calendar day.
    pub theta: Option<f64>,
    /// Per-share vega, dollars per vol point.
    pub vega: Option<f64>,
    /// IV, decimal.
    pub iv: Option<f64>,
}

fn built_leg(leg: &Leg) -> BuiltLeg {
    BuiltLeg {
        option_type: option_type_label(leg),
        action: leg.action.as_str(),
        strike: leg.strike,
        expiration: leg.expiration,
        premium: leg.premium_per_share,
        quantity: leg.quantity,
        delta: leg.delta,
        theta: leg.theta,
        vega: leg.vega,
        iv: leg.iv,
    }
}

/// The live chain of the body's ticker, by expiration, with its market.
struct LiveChain {
    ticker: Ticker,
    view: std::sync::Arc<ChainView>,
    /// The expirations still open at `now`; only the ones a request uses are read into
    /// [`strategy::ExpirationChain`]s ([`LiveChain::chain`]).
    open: Vec<OpenExpiration>,
    /// The service clock's time the years were computed at.
    now: chrono::DateTime<chrono::Utc>,
}

impl LiveChain {
    /// The `index`-th open expiration as the builders and the optimizer read it.
    fn chain(&self, index: usize) -> strategy::ExpirationChain {
        expiration_chain(&self.view, self.open[index])
    }
}

fn live_chain(state: &AppState, object: &Map<String, Value>) -> Result<LiveChain, ApiError> {
    let ticker = body_ticker(state, object)?;
    let view = state
        .market_data()?
        .chain(&ticker)
        .ok_or_else(|| ApiError::upstream(format!("No live chain for {ticker} yet")))?;
    if !(view.stock_price().is_finite() && view.stock_price() > 0.0) {
        return Err(ApiError::upstream(format!(
            "The live price of {ticker} is not usable"
        )));
    }
    let now = state.now();
    let open = open_expirations(&view, now);
    Ok(LiveChain {
        ticker,
        view,
        open,
        now,
    })
}

/// The index of the expiration asked for: `expiration` exactly, else the one nearest `dte`
/// days (a tie goes to the later).
fn pick_expiration(
    live: &LiveChain,
    expiration: Option<NaiveDate>,
    dte: f64,
) -> Result<usize, ApiError> {
    if let Some(expiration) = expiration {
        return live
            .open
            .iter()
            .position(|o| o.expiration == expiration)
            .ok_or_else(|| {
                ApiError::upstream(format!(
                    "{} has no open {expiration} expiration in the live chain (see /expirations)",
                    live.ticker
                ))
            });
    }
    let miss = |o: &OpenExpiration| (o.years_to_expiry * DAYS_PER_YEAR - dte).abs();
    let mut best: Option<usize> = None;
    for (index, open) in live.open.iter().enumerate() {
        if best.is_none_or(|b| miss(open) <= miss(&live.open[b])) {
            best = Some(index);
        }
    }
    best.ok_or_else(|| {
        ApiError::upstream(format!(
            "{} has no open expiration in the live chain",
            live.ticker
        ))
    })
}

fn days_param(object: &Map<String, Value>) -> Result<f64, ApiError> {
    let dte = opt_number(object, "dte", "")?.unwrap_or(DEFAULT_DTE);
    if !(0.0..=MAX_DAYS_TO_EXP).contains(&dte) {
        return Err(ApiError::bad_request(format!(
            "dte: must be between 0 and {MAX_DAYS_TO_EXP} days"
        )));
    }
    Ok(dte)
}

/// `data` of `/build-strategy`.
#[derive(Debug, Clone, Serialize)]
pub struct BuiltPayload {
    /// The underlying.
    pub ticker: String,
    /// The structure with its strikes, e.g. `Iron Condor 580/585/615/620`.
    pub name: String,
    /// The structure built (canonical display name).
    pub strategy_type: &'static str,
    /// The underlying price used, dollars.
    pub stock_price: f64,
    /// When the strategy was built (the service clock), ISO 8601 UTC.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// The target |delta| used, after clamping to 0.05–0.50.
    pub target_delta: f64,
    /// True when the requested target_delta was outside 0.05–0.50 and clamped.
    pub target_delta_clamped: bool,
    /// Wing width asked for, dollars (the listed strike nearest it is used).
    pub width: f64,
    /// The legs, premiums at the mid.
    pub legs: Vec<BuiltLeg>,
    /// The analysis record of the legs.
    pub analysis: AnalysisRecord,
}

/// POST /build-strategy: a named structure from the live chain by delta and width.
pub async fn build_strategy(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Envelope<BuiltPayload>>, ApiError> {
    let object = body_object(&body)?;
    let strategy_type = strategy::StrategyType::parse(
        opt_text(object, "strategy_type", "")?
            .ok_or_else(|| ApiError::bad_request("strategy_type: is required"))?,
    )
    .map_err(strategy_error)?;
    let expiration = opt_date(object, "expiration", "")?;
    let dte = days_param(object)?;
    let width = opt_number(object, "width", "")?.unwrap_or(DEFAULT_WIDTH);
    if !(width.is_finite() && width > 0.0 && width <= strategy::MAX_PRICE) {
        return Err(ApiError::bad_request(
            "width: must be a number of dollars greater than zero",
        ));
    }
    let target_delta = opt_number(object, "target_delta", "")?.unwrap_or(DEFAULT_TARGET_DELTA);
    strategy::clamp_target_delta(target_delta).map_err(strategy_error)?;
    let live = live_chain(&state, object)?;
    let near_index = pick_expiration(&live, expiration, dte)?;
    let near = live.chain(near_index);
    let far = if strategy_type.needs_far_expiration() {
        if near_index + 1 >= live.open.len() {
            return Err(ApiError::upstream(format!(
                "{} has no expiration after {} for the calendar's far leg",
                live.ticker, live.open[near_index].expiration
            )));
        }
        Some(live.chain(near_index + 1))
    } else {
        None
    };
    let market = chain_market(&live.view, near.expiration, live.now);
    let built = strategy::build_strategy(
        strategy_type,
        target_delta,
        width,
        &near,
        far.as_ref(),
        &market,
    )
    .map_err(strategy_error)?;
    let analysis = analysis_record(
        live.ticker.as_str(),
        Some(&built.name),
        &built.legs,
        &[],
        &market,
        &built.analysis,
    );
    Ok(ok(BuiltPayload {
        ticker: live.ticker.to_string(),
        name: built.name.clone(),
        strategy_type: strategy_type.display_name(),
        stock_price: market.underlying_price,
        created_at: live.now,
        target_delta: built.target_delta,
        target_delta_clamped: built.target_delta_clamped,
        width,
        legs: built.legs.iter().map(built_leg).collect(),
        analysis,
    }))
}

/// `data` of `/optimize-strategy`.
#[derive(Debug, Clone, Serialize)]
pub struct OptimizePayload {
    /// The underlying.
    pub ticker: String,
    /// What the winner is, with its strikes: `Iron Condor 570/580/620/630`, `Bull Put
    /// Credit Spread 570/580` or `Bear Call Credit Spread 620/630` (also the analysis's
    /// `strategy_name`).
    pub name: String,
    /// The structure searched: `iron_condor`, `credit_spread` (either side),
    /// `put_credit_spread` or `call_credit_spread`.
    pub strategy_type: &'static str,
    /// The objective echoed.
    pub optimization_target: &'static str,
    /// The winner's objective value: credit per share (max_profit), max loss per share
    /// (min_loss, ≤ 0), profit per dollar at risk (risk_reward) or probability in percent.
    pub objective_value: f64,
    /// The expiration searched.
    pub expiration: Option<NaiveDate>,
    /// Feasible combinations compared.
    pub combinations_evaluated: u64,
    /// The search constraints used.
    pub constraints: ConstraintsEcho,
    /// The winning legs, premiums at the mid.
    pub legs: Vec<BuiltLeg>,
    /// The winner's analysis record.
    pub analysis: AnalysisRecord,
}

/// The optimizer's constraints as used.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ConstraintsEcho {
    /// Widest wing, dollars.
    pub max_width: f64,
    /// Smallest total credit, dollars per share.
    pub min_credit: f64,
    /// Short-leg |delta| range.
    pub min_short_delta: f64,
    /// Short-leg |delta| range.
    pub max_short_delta: f64,
}

/// POST /optimize-strategy: the best iron condor or credit spread of one expiration (the
/// one nearest `dte`, default 30 days, or `expiration`) for `target`.
pub async fn optimize_strategy(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Envelope<OptimizePayload>>, ApiError> {
    use optics_compute::pricing::OptionType;
    let object = body_object(&body)?;
    let raw_type = opt_text(object, "strategy_type", "")?
        .ok_or_else(|| ApiError::bad_request("strategy_type: is required"))?;
    let (structure, type_label) = match raw_type.trim().to_ascii_lowercase().as_str() {
        "iron_condor" => (strategy::OptimizeStructure::IronCondor, "iron_condor"),
        "credit_spread" => (
            strategy::OptimizeStructure::CreditSpread(None),
            "credit_spread",
        ),
        "put_credit_spread" | "bull_put_spread" => (
            strategy::OptimizeStructure::CreditSpread(Some(OptionType::Put)),
            "put_credit_spread",
        ),
        "call_credit_spread" | "bear_call_spread" => (
            strategy::OptimizeStructure::CreditSpread(Some(OptionType::Call)),
            "call_credit_spread",
        ),
        _ => {
            return Err(ApiError::bad_request(format!(
                "strategy_type: {raw_type:?} cannot be optimized; expected iron_condor or \
                 credit_spread (put_credit_spread, call_credit_spread)"
            )));
        }
    };
    let target =
        strategy::OptimizeTarget::parse(opt_text(object, "target", "")?.unwrap_or("max_profit"))
            .map_err(strategy_error)?;
    let defaults = strategy::OptimizeConstraints::default();
    let constraints = strategy::OptimizeConstraints {
        max_width_dollars: opt_number(object, "max_width", "")?
            .unwrap_or(defaults.max_width_dollars),
        min_credit_per_share: opt_number(object, "min_credit", "")?
            .unwrap_or(defaults.min_credit_per_share),
        ..defaults
    };
    let expiration = opt_date(object, "expiration", "")?;
    let dte = days_param(object)?;
    let live = live_chain(&state, object)?;
    let chain = live.chain(pick_expiration(&live, expiration, dte)?);
    let market = chain_market(&live.view, chain.expiration, live.now);
    let best = strategy::optimize(structure, target, &chain, &market, &constraints)
        .map_err(strategy_error)?;
    let objective_value = match target {
        strategy::OptimizeTarget::Probability => 100.0 * best.objective,
        _ => best.objective,
    };
    let analysis = analysis_record(
        live.ticker.as_str(),
        Some(&best.name),
        &best.legs,
        &[],
        &market,
        &best.analysis,
    );
    Ok(ok(OptimizePayload {
        ticker: live.ticker.to_string(),
        name: best.name.clone(),
        strategy_type: type_label,
        optimization_target: target.as_str(),
        objective_value,
        expiration: chain.expiration,
        combinations_evaluated: best.combinations,
        constraints: ConstraintsEcho {
            max_width: constraints.max_width_dollars,
            min_credit: constraints.min_credit_per_share,
            min_short_delta: constraints.min_short_abs_delta,
            max_short_delta: constraints.max_short_abs_delta,
        },
        legs: best.legs.iter().map(built_leg).collect(),
        analysis,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use optics_schemas::{ChainSide, ForwardSource, PricingModelCode, SettlementStyle};

    fn row(settlement: SettlementStyle, strike: f64) -> ChainRow {
        let as_of = chrono::DateTime::<chrono::Utc>::UNIX_EPOCH;
        ChainRow {
            underlying: "SPX".into(),
            trade_date: as_of.date_naive(),
            as_of,
            expiration: as_of.date_naive(),
            settlement,
            dte: 0,
            years_to_expiry: 0.0,
            strike,
            spot: 100.0,
            forward: 100.0,
            forward_source: ForwardSource::Carry,
            forward_strike_count: 0,
            rate: 0.0,
            carry_yield: 0.0,
            model: PricingModelCode::Bsm,
            call: ChainSide::default(),
            put: ChainSide::default(),
        }
    }

    /// The rule the linear pass replaced: keep a row unless a kept row is within tolerance.
    fn quadratic(rows: &[ChainRow]) -> Vec<&ChainRow> {
        let mut kept: Vec<&ChainRow> = Vec::new();
        for row in rows {
            if !kept
                .iter()
                .any(|r| (r.strike - row.strike).abs() < STRIKE_TOLERANCE)
            {
                kept.push(row);
            }
        }
        kept
    }

    #[test]
    fn first_series_per_strike_keeps_what_the_quadratic_rule_kept() {
        use SettlementStyle::{Am, Pm};
        let tol = STRIKE_TOLERANCE;
        // An AM run and a PM run, each ascending (the order of ChainView::rows_of), with
        // shared strikes, PM-only strikes between and beyond the AM ones, strikes a hair
        // inside and outside the tolerance, chains of near-equal strikes, and strikes that
        // are not numbers.
        let am = [
            90.0,
            95.0,
            100.0,
            100.0 + 0.6 * tol,
            100.0 + 1.2 * tol,
            105.0,
            110.0,
            f64::NAN,
        ];
        let pm = [
            80.0,
            95.0 - 0.5 * tol,
            97.5,
            100.0 + 0.9 * tol,
            102.5,
            105.0 + tol,
            110.0 + 0.99 * tol,
            120.0,
            120.0,
            f64::INFINITY,
        ];
        let rows: Vec<ChainRow> = am
            .iter()
            .map(|&k| row(Am, k))
            .chain(pm.iter().map(|&k| row(Pm, k)))
            .collect();
        let expected: Vec<*const ChainRow> = quadratic(&rows)
            .into_iter()
            .map(|r| r as *const _)
            .collect();
        let linear: Vec<*const ChainRow> = first_series_per_strike(&rows)
            .into_iter()
            .map(|r| r as *const _)
            .collect();
        assert_eq!(linear, expected);
        // And on a single run and on nothing.
        assert_eq!(
            first_series_per_strike(&rows[..am.len()]).len(),
            quadratic(&rows[..am.len()]).len()
        );
        assert!(first_series_per_strike(&[]).is_empty());
    }
}
