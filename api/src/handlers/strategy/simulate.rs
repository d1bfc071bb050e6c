//! POST /simulate-chain: re-prices chain rows at a hypothetical price, time and IV shift.

use axum::Json;
use axum::extract::State;
use chrono::NaiveDate;
use optics_compute::pricing::PricingModel;
use optics_compute::strategy;
use optics_compute::strategy::simulate::MAX_SIM_ROWS;
use optics_compute::time::years_to_expiry;
use optics_schemas::ChainRow;
use optics_schemas::PricingModelCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::body::{self, List, required};
use crate::envelope::{ApiJson, Envelope, ok};
use crate::error::ApiError;
use crate::openapi::IsoDate;
use crate::params::ClampNotice;
use crate::state::AppState;

use super::DEFAULT_RATE;
use super::market::{chain_market, first_series_per_strike};

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

/// The body of `/simulate-chain`: rows to re-price (`chain`), or a `ticker` whose live chain
/// to re-price.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(expecting = "a JSON object")]
pub struct SimulateRequest {
    /// Hypothetical underlying price, dollars (required; the forward for index chains).
    #[serde(default, deserialize_with = "body::number")]
    #[schema(required = true)]
    pub sim_price: Option<f64>,
    /// Days to expiry in the scenario (required).
    #[serde(default, deserialize_with = "body::number")]
    #[schema(required = true)]
    pub sim_dte: Option<f64>,
    /// Vol points added to every IV (default 0).
    #[serde(default, deserialize_with = "body::number")]
    pub iv_adjustment: Option<f64>,
    /// The expiration, YYYY-MM-DD (default: the nearest still open).
    #[serde(default, deserialize_with = "body::date")]
    #[schema(value_type = Option<IsoDate>)]
    pub expiration: Option<chrono::NaiveDate>,
    /// Strikes per side of sim_price from a fetched chain (default 20; 0 for all; clamped
    /// to 0–500).
    #[serde(default, deserialize_with = "body::number")]
    pub strikes_around: Option<f64>,
    /// The underlying whose live chain to re-price, when `chain` is absent.
    #[serde(default, deserialize_with = "body::text")]
    pub ticker: Option<String>,
    /// Rows as returned by /chain (at most 10,000; an array or a string holding one).
    #[serde(default)]
    #[schema(value_type = Option<Vec<SimulateRowBody>>, min_items = 1, max_items = 10_000)]
    pub chain: Option<List<SimulateRowBody, MAX_SIM_ROWS>>,
}

/// One row of `chain[]`, keys as in `/chain`. A side without its IV is not re-priced.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(expecting = "an object")]
pub struct SimulateRowBody {
    /// Strike, dollars (required).
    #[serde(default, rename = "Strike", deserialize_with = "body::number")]
    pub strike: Option<f64>,
    /// Call IV, decimal (above 5 read as percentage points).
    #[serde(default, rename = "IV Call", deserialize_with = "body::number")]
    pub iv_call: Option<f64>,
    /// Call bid, dollars.
    #[serde(default, rename = "Call Bid", deserialize_with = "body::number")]
    pub call_bid: Option<f64>,
    /// Call ask, dollars.
    #[serde(default, rename = "Call Ask", deserialize_with = "body::number")]
    pub call_ask: Option<f64>,
    /// Put IV, decimal (above 5 read as percentage points).
    #[serde(default, rename = "IV Put", deserialize_with = "body::number")]
    pub iv_put: Option<f64>,
    /// Put bid, dollars.
    #[serde(default, rename = "Put Bid", deserialize_with = "body::number")]
    pub put_bid: Option<f64>,
    /// Put ask, dollars.
    #[serde(default, rename = "Put Ask", deserialize_with = "body::number")]
    pub put_ask: Option<f64>,
}

/// One side of a row sent in the body: its IV (`IV Call`, decimal; above 5 read as
/// percentage points) and optional bid and ask. No IV: the side is not re-priced.
fn sim_side(
    path: &str,
    side: &str,
    [iv, bid, ask]: [Option<f64>; 3],
) -> Result<Option<strategy::SimulationSide>, ApiError> {
    let Some(iv) = iv else {
        return Ok(None);
    };
    let (iv, _) = strategy::read_iv(iv)
        .map_err(|reason| ApiError::bad_request(format!("{path}IV {side}: {reason}")))?;
    let quote = |value: Option<f64>, key: &str| -> Result<Option<f64>, ApiError> {
        if value.is_some_and(|v| !(0.0..=strategy::MAX_PRICE).contains(&v)) {
            return Err(ApiError::bad_request(format!(
                "{path}{side} {key}: must be a number of dollars from 0 to {:e}",
                strategy::MAX_PRICE
            )));
        }
        Ok(value)
    };
    Ok(Some(strategy::SimulationSide {
        iv,
        bid: quote(bid, "Bid")?,
        ask: quote(ask, "Ask")?,
    }))
}

/// The rows sent in the body, as the math reads them.
fn request_rows(rows: Vec<SimulateRowBody>) -> Result<Vec<strategy::SimulationRow>, ApiError> {
    if rows.is_empty() {
        return Err(ApiError::bad_request("chain: at least one row is required"));
    }
    rows.into_iter()
        .enumerate()
        .map(|(index, row)| {
            let path = format!("chain[{index}].");
            Ok(strategy::SimulationRow {
                strike: required(row.strike, &format!("{path}Strike"))?,
                call: sim_side(&path, "Call", [row.iv_call, row.call_bid, row.call_ask])?,
                put: sim_side(&path, "Put", [row.iv_put, row.put_bid, row.put_ask])?,
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
    let request: SimulateRequest = body::parse(body)?;
    let sim_price = required(request.sim_price, "sim_price")?;
    let sim_dte = required(request.sim_dte, "sim_dte")?;
    let iv_adjustment = request.iv_adjustment.unwrap_or(0.0);
    let expiration = request.expiration;
    // A whole number; outside 0..=MAX it is clamped and reported (the reference's rule for
    // bounded whole numbers), never rejected.
    let mut clamped = Vec::new();
    let strikes_around = match request.strikes_around {
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
    let supplied = request.chain.map(|rows| request_rows(rows.0)).transpose()?;
    let ticker_raw = request.ticker.as_deref();
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
    let simulated = strategy::simulate_chain(&rows, &scenario)?;
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
        model: PricingModelCode::from(scenario.model).as_str(),
        window,
        clamped,
        chain: simulated.iter().map(SimulatedChainRow::from).collect(),
    }))
}
