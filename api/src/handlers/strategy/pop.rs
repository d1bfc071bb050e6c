//! POST /pop: probability of profit of legs with supplied IVs.

use axum::Json;
use axum::extract::State;
use chrono::NaiveDate;
use optics_compute::pricing::PricingModel;
use optics_compute::strategy::{self, LegInput, MAX_LEGS, Market};
use optics_compute::time::DAYS_PER_YEAR;
use optics_schemas::PricingModelCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::body::{self, List, required};
use crate::envelope::{ApiJson, Envelope, ok};
use crate::error::ApiError;
use crate::market::ChainView;
use crate::state::AppState;
use crate::ticker::Ticker;

use super::fields::LegBody;
use super::market::{chain_market, chain_rate_and_carry, open_expirations};
use super::record::leg_summary;
use super::{DEFAULT_RATE, LegSummary, MAX_DAYS_TO_EXP};

/// The body of `/pop`.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(expecting = "a JSON object")]
pub struct PopRequest {
    /// Underlying price, dollars (required).
    #[serde(default, deserialize_with = "body::number")]
    #[schema(required = true)]
    pub stock_price: Option<f64>,
    /// Horizon, calendar days, 0 to 3650 (required).
    #[serde(default, deserialize_with = "body::number")]
    #[schema(required = true)]
    pub days_to_exp: Option<f64>,
    /// Continuously compounded rate, decimal, within ±1 (default: the chain's, else 4 %).
    #[serde(default, deserialize_with = "body::number")]
    pub rate: Option<f64>,
    /// Continuously compounded dividend yield, decimal, within ±1 (default: the chain's,
    /// else 0).
    #[serde(default, deserialize_with = "body::number")]
    pub dividend_yield: Option<f64>,
    /// The underlying whose live chain gives the rate and yield (optional).
    #[serde(default, deserialize_with = "body::text")]
    pub ticker: Option<String>,
    /// The legs (required, 1 to 50; an array or a string holding one).
    #[serde(default)]
    #[schema(value_type = Vec<LegBody>, required = true, min_items = 1, max_items = 50)]
    pub legs: Option<List<LegBody, MAX_LEGS>>,
}

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
fn decimal_rate(value: Option<f64>, field: &str) -> Result<Option<f64>, ApiError> {
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
    let open = open_expirations(chain, now);
    let years: Vec<f64> = open.iter().map(|o| o.years_to_expiry).collect();
    strategy::nearest_horizon(&years, days).map(|index| open[index].expiration)
}

/// One pop leg (`option_type`, `action`, `strike`, `iv`, `premium`, `quantity`); `type` is
/// accepted for `option_type` so analyze-strategy legs can be sent as they are.
fn pop_leg(leg: LegBody, index: usize, years: f64) -> Result<LegInput, ApiError> {
    let option_type = leg.option_type.clone().or_else(|| leg.kind.clone());
    if option_type.is_none() {
        return Err(ApiError::bad_request(format!(
            "legs[{index}].option_type: is required (CALL or PUT)"
        )));
    }
    Ok(leg.input(option_type, years, None))
}

/// POST /pop: probability of profit of legs with supplied IVs, at `days_to_exp` days. Only
/// the payoff and the IV the probability uses are needed: a leg's Greeks never are, and an
/// `iv` only on the leg(s) struck nearest the price. The rate and yield are the body's, else
/// those of `ticker`'s chain as analyze-strategy reads them, else r = 4 %, q = 0.
pub async fn pop(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Envelope<PopPayload>>, ApiError> {
    let request: PopRequest = body::parse(body)?;
    let stock_price = required(request.stock_price, "stock_price")?;
    let days = required(request.days_to_exp, "days_to_exp")?;
    if !(0.0..=MAX_DAYS_TO_EXP).contains(&days) {
        return Err(ApiError::bad_request(format!(
            "days_to_exp: must be between 0 and {MAX_DAYS_TO_EXP} days"
        )));
    }
    let rate_sent = decimal_rate(request.rate, "rate")?;
    let yield_sent = decimal_rate(request.dividend_yield, "dividend_yield")?;
    let years = days / DAYS_PER_YEAR;
    let inputs = required(request.legs, "legs")?
        .non_empty("legs")?
        .into_iter()
        .enumerate()
        .map(|(index, leg)| pop_leg(leg, index, years))
        .collect::<Result<Vec<_>, _>>()?;
    let legs = strategy::validate_legs_named(&inputs, "option_type")?;
    Market::spot(stock_price, DEFAULT_RATE, 0.0).validate()?;
    let ticker = request
        .ticker
        .as_deref()
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
    let probability = strategy::profit_probability(&legs, &market)?;
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
        pricing_model: PricingModelCode::from(market.model).as_str(),
        forward: probability.forward_at_valuation,
        legs_summary: legs.iter().map(|leg| leg_summary(leg, false)).collect(),
    }))
}
