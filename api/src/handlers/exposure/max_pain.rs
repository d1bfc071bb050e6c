//! `GET /max-pain/{ticker}`: the strike where option holders lose most at expiry.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::exposure::{magnet_rule, magnet_strength, max_pain};
use serde::Serialize;
use utoipa::ToSchema;

use super::open_interest_by_strike;
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::{CoveredTicker, latest_chain};
use crate::freshness::Freshness;
use crate::handlers::flow::listed_or_nearest;
use crate::openapi::{IsoDate, Timestamp};
use crate::params::QueryParams;
use crate::state::AppState;

/// One strike of `all_strikes[]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct PainAtStrike {
    /// Candidate settlement price (a listed strike), dollars.
    pub strike: f64,
    /// Σ call OI × max(strike − K, 0) × 100, dollars.
    pub call_pain: f64,
    /// Σ put OI × max(K − strike, 0) × 100, dollars.
    pub put_pain: f64,
    /// Both, dollars.
    pub total_pain: f64,
}

/// The `/max-pain/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct MaxPainPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The expiration.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Calendar days to it.
    pub dte: i32,
    /// The chain's price, dollars.
    pub stock_price: f64,
    /// The strike where option holders would be paid least at settlement, dollars.
    pub max_pain_strike: f64,
    /// What they would be paid there, dollars.
    pub max_pain_value: f64,
    /// max_pain_strike − stock_price, dollars.
    pub distance_from_spot: f64,
    /// The same as percent of stock_price.
    pub distance_pct: f64,
    /// `STRONG` (|distance_pct| ≤ 1), `MODERATE` (≤ 3) or `WEAK`.
    pub magnet_strength: &'static str,
    /// `UP` when max pain is above spot, `DOWN` below, `AT_SPOT` on it.
    pub likely_direction: &'static str,
    /// The rule behind `magnet_strength`.
    pub magnet_rule: String,
    /// Σ call open interest of the expiration, contracts.
    pub total_call_oi: u64,
    /// Σ put open interest, contracts.
    pub total_put_oi: u64,
    /// Pain at every listed strike, ascending.
    pub all_strikes: Vec<PainAtStrike>,
    /// The instant the chain was priced.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// `LIVE` or `EOD`, market hours and a sentence.
    #[serde(flatten)]
    pub freshness: Freshness,
}

/// `GET /max-pain/{ticker}`: one expiration (default the nearest that has not expired).
pub async fn max_pain_of(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<MaxPainPayload>>, ApiError> {
    let requested = params.date("expiration")?;
    let chain = latest_chain(&state, &ticker)?;
    let expiration = listed_or_nearest(&ticker, &chain, requested)?;
    let rows = chain.rows_of(expiration);
    let open_interest = open_interest_by_strike(rows);
    let spot = chain.stock_price();
    let pain = max_pain(&open_interest, spot).ok_or_else(|| {
        ApiError::upstream(format!(
            "No open interest on the {expiration} expiration of {ticker} to compute max pain"
        ))
    })?;
    let likely_direction = match pain.distance_from_spot {
        d if d > 0.0 => "UP",
        d if d < 0.0 => "DOWN",
        _ => "AT_SPOT",
    };
    Ok(ok(MaxPainPayload {
        ticker: ticker.to_string(),
        expiration,
        dte: rows.first().map_or(0, |r| r.dte),
        stock_price: spot,
        max_pain_strike: pain.strike,
        max_pain_value: pain.total_pain_usd,
        distance_from_spot: pain.distance_from_spot,
        distance_pct: pain.distance_pct,
        magnet_strength: magnet_strength(pain.distance_pct),
        likely_direction,
        magnet_rule: magnet_rule(),
        total_call_oi: open_interest.iter().map(|o| o.call).sum(),
        total_put_oi: open_interest.iter().map(|o| o.put).sum(),
        all_strikes: pain
            .pain_by_strike
            .iter()
            .map(|p| PainAtStrike {
                strike: p.strike,
                call_pain: p.call_pain_usd,
                put_pain: p.put_pain_usd,
                total_pain: p.total_pain_usd,
            })
            .collect(),
        as_of: chain.as_of,
        freshness: state.freshness_of(chain.trade_date),
    }))
}
