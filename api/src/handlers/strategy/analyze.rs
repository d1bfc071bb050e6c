//! POST /analyze-strategy: the analysis record of caller-supplied legs.

use axum::Json;
use axum::extract::State;
use optics_compute::pricing::OptionType;
use optics_compute::strategy::{self, Leg, LegInput, MAX_LEGS, Market};
use optics_compute::time::{DAYS_PER_YEAR, years_to_expiry};
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::body::{self, List, required};
use crate::envelope::{ApiJson, Envelope, ok};
use crate::error::ApiError;
use crate::market::ChainView;
use crate::state::AppState;
use crate::ticker::Ticker;

use super::fields::{LegBody, body_ticker};
use super::market::{chain_market, chain_row, open_expirations};
use super::record::{ChainPricedLeg, ChainPricing, analysis_record, option_type_label};
use super::{AnalysisRecord, DEFAULT_RATE};

/// The body of `/analyze-strategy`.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(expecting = "a JSON object")]
pub struct AnalyzeRequest {
    /// The underlying (required): its live chain gives the rate, yield, forwards, missing IVs
    /// and, without `stock_price`, the price.
    #[serde(default, deserialize_with = "body::text")]
    #[schema(required = true)]
    pub ticker: Option<String>,
    /// A name for the record (default `Custom Strategy`).
    #[serde(default, deserialize_with = "body::text")]
    pub name: Option<String>,
    /// Underlying price, dollars (default: the live chain's).
    #[serde(default, deserialize_with = "body::number")]
    pub stock_price: Option<f64>,
    /// The legs (required, 1 to 50, each with its `expiration`; an array or a string holding
    /// one).
    #[serde(default)]
    #[schema(value_type = Vec<LegBody>, required = true, min_items = 1, max_items = 50)]
    pub legs: Option<List<LegBody, MAX_LEGS>>,
}

/// One leg as the math reads it: `type` (else `option_type`) and the required expiration.
fn analyze_leg(
    leg: LegBody,
    index: usize,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<LegInput, ApiError> {
    let expiration = leg.expiration_date(index)?;
    let option_type = leg.kind.clone().or_else(|| leg.option_type.clone());
    Ok(leg.input(
        option_type,
        years_to_expiry(now, expiration),
        Some(expiration),
    ))
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

/// What a bare leg's premium came from, when priced from the chain.
const CHAIN_PRICING_RULE: &str = "legs sent without an expiration take the live chain's \
nearest expiration with time left; a leg without a premium takes that contract's mid, one \
without an IV the chain's IV";

/// Legs sent without an expiration (what `BUY 1 C 150` parses to) get the live chain's nearest
/// expiration with time left, and the contract's mid when they carry no premium (the IV is
/// filled later, with the other legs', by [`fill_chain_ivs`]). Legs with an expiration are left
/// as sent. `None` when every leg has its expiration.
fn price_bare_legs(
    state: &AppState,
    ticker: Option<&str>,
    legs: &mut [LegBody],
    now: chrono::DateTime<chrono::Utc>,
) -> Result<Option<ChainPricing>, ApiError> {
    let Some(first_bare) = legs.iter().position(|leg| leg.expiration.is_none()) else {
        return Ok(None);
    };
    let Some(ticker) = ticker else {
        return Err(ApiError::bad_request(format!(
            "legs[{first_bare}].expiration: is required (or send ticker: legs without an \
             expiration are priced from its live chain's nearest expiration)"
        )));
    };
    let ticker = body_ticker(state, Some(ticker))?;
    let chain = state.market_data()?.chain(&ticker).ok_or_else(|| {
        ApiError::upstream(format!(
            "No live chain for {ticker} to price legs sent without an expiration; send each \
             leg's expiration and premium"
        ))
    })?;
    let Some(open) = open_expirations(&chain, now).into_iter().next() else {
        return Err(ApiError::upstream(format!(
            "The live chain of {ticker} has no expiration with time left to price legs sent \
             without one"
        )));
    };
    let mut priced = Vec::new();
    for (index, leg) in legs.iter_mut().enumerate() {
        if leg.expiration.is_some() {
            continue;
        }
        let Some(strike) = leg.strike.filter(|k| k.is_finite() && *k > 0.0) else {
            return Err(ApiError::bad_request(format!(
                "legs[{index}].strike: is required"
            )));
        };
        let kind = leg.kind.as_deref().or(leg.option_type.as_deref());
        let Some(option_type) = kind.and_then(strategy::parse_option_type) else {
            return Err(ApiError::bad_request(format!(
                "legs[{index}].type: must be CALL or PUT"
            )));
        };
        let row = chain_row(&chain, open.expiration, strike).ok_or_else(|| {
            ApiError::bad_request(format!(
                "legs[{index}].strike: {strike} is not listed for {ticker} on {}; nearest \
                 listed: {}",
                open.expiration,
                nearest_strikes(&chain, open.expiration, strike)
            ))
        })?;
        let (side, label) = match option_type {
            OptionType::Call => (&row.call, "CALL"),
            OptionType::Put => (&row.put, "PUT"),
        };
        let (premium, premium_source) =
            match leg.premium {
                Some(premium) => (premium, "request"),
                None => {
                    let mid = side.mid.filter(|m| m.is_finite() && *m >= 0.0).ok_or_else(|| {
                    ApiError::upstream(format!(
                        "legs[{index}]: the {} {strike} {} of {ticker} has no two-sided quote \
                         to price it; send its premium",
                        open.expiration,
                        label
                    ))
                })?;
                    (mid, "chain_mid")
                }
            };
        leg.expiration = Some(Value::String(open.expiration.to_string()));
        leg.premium = Some(premium);
        priced.push(ChainPricedLeg {
            leg: index,
            option_type: label,
            strike,
            premium,
            premium_source,
            bid: side.bid,
            ask: side.ask,
            chain_iv: side.iv,
        });
    }
    Ok(Some(ChainPricing {
        rule: CHAIN_PRICING_RULE,
        expiration: open.expiration,
        days_to_expiration: open.years_to_expiry * DAYS_PER_YEAR,
        legs: priced,
    }))
}

/// The three listed strikes of `expiration` nearest `strike`, ascending, as text.
fn nearest_strikes(chain: &ChainView, expiration: chrono::NaiveDate, strike: f64) -> String {
    let mut strikes: Vec<f64> = chain.rows_of(expiration).iter().map(|r| r.strike).collect();
    strikes.sort_by(|a, b| (a - strike).abs().total_cmp(&(b - strike).abs()));
    strikes.dedup();
    let mut nearest: Vec<f64> = strikes.into_iter().take(3).collect();
    nearest.sort_by(f64::total_cmp);
    nearest
        .iter()
        .map(|k| format!("{k}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// POST /analyze-strategy: the analysis record of caller-supplied legs.
pub async fn analyze_strategy(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Envelope<AnalysisRecord>>, ApiError> {
    let request: AnalyzeRequest = body::parse(body)?;
    let stock_price = request.stock_price;
    let now = state.now();
    let mut legs_body: Vec<LegBody> = required(request.legs, "legs")?
        .non_empty("legs")?
        .into_iter()
        .collect();
    let chain_pricing = price_bare_legs(&state, request.ticker.as_deref(), &mut legs_body, now)?;
    let inputs = legs_body
        .into_iter()
        .enumerate()
        .map(|(index, leg)| analyze_leg(leg, index, now))
        .collect::<Result<Vec<_>, _>>()?;
    let mut legs = strategy::validate_legs(&inputs)?;
    if let Some(price) = stock_price {
        Market::spot(price, DEFAULT_RATE, 0.0).validate()?;
    }
    let ticker = body_ticker(&state, request.ticker.as_deref())?;
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
    let analysis = strategy::analyze(&legs, &market)?;
    let mut record = analysis_record(
        ticker.as_str(),
        request.name.as_deref(),
        &legs,
        &chain_iv,
        &market,
        &analysis,
    );
    record.priced_from_chain = chain_pricing;
    Ok(ok(record))
}
