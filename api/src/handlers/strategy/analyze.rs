//! POST /analyze-strategy: the analysis record of caller-supplied legs.

use axum::Json;
use axum::extract::State;
use optics_compute::strategy::{self, Leg, LegInput, MAX_LEGS, Market};
use optics_compute::time::years_to_expiry;
use serde_json::{Map, Value};

use crate::envelope::{ApiJson, Envelope, ok};
use crate::error::ApiError;
use crate::market::ChainView;
use crate::state::AppState;
use crate::ticker::Ticker;

use super::fields::*;
use super::market::*;
use super::record::*;
use super::*;

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
