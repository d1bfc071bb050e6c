//! `GET /smart-money/{ticker}`: the large, aggressive tickets of the session.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, NaiveDateTime, Utc};
use optics_compute::flow::{SmartMoneyConfig, smart_money};
use serde::Serialize;
use utoipa::ToSchema;

use super::{FlowRowPayload, chain_and_flow, compute_rows, row_payload};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::freshness::Freshness;
use crate::openapi::{LocalTimestamp, Timestamp};
use crate::state::AppState;

/// One `smart_money_trades[]` entry: the flow row, the filters it met and its score.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SmartMoneyTradePayload {
    /// The contract's flow.
    #[serde(flatten)]
    pub row: FlowRowPayload,
    /// `large_premium`, `likely_opening`, `otm_with_time`.
    pub criteria: Vec<&'static str>,
    /// 100 × filters met / 3, rounded (a 0–100 heuristic).
    pub smart_money_score: u8,
}

/// The thresholds of the smart-money filters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct SmartMoneyFilters {
    /// `large_premium`: premium at least this, dollars (required).
    pub min_premium: f64,
    /// `likely_opening`: volume above this multiple of open interest.
    pub opening_volume_oi_ratio: f64,
    /// `otm_with_time`: out of the money with at least this many days left.
    pub min_dte: i64,
}

/// The `/smart-money/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SmartMoneyPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The chain's price, dollars.
    pub stock_price: f64,
    /// Qualifying contracts, by score then premium.
    pub smart_money_trades: Vec<SmartMoneyTradePayload>,
    /// How many qualified.
    pub total_smart_trades: usize,
    /// Σ premium of the qualifying contracts, dollars.
    pub total_smart_premium: f64,
    /// The filters (a contract needs `large_premium` and one other).
    pub filters: SmartMoneyFilters,
    /// The instant the flow was read: ISO 8601 without a zone (spec 2.1), UTC.
    #[schema(value_type = LocalTimestamp)]
    pub timestamp: NaiveDateTime,
    /// The same instant with its zone.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// `LIVE` or `EOD`, market hours and a sentence.
    #[serde(flatten)]
    pub freshness: Freshness,
}

/// `GET /smart-money/{ticker}`: 424 when the flow cannot be served (the cases of the module
/// docs).
pub async fn smart_money_flow(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
) -> Result<Json<Envelope<SmartMoneyPayload>>, ApiError> {
    let (chain, view, freshness) = chain_and_flow(&state, &ticker).map_err(|e| match e {
        ApiError::FlowUnavailable(reason) => ApiError::upstream(reason),
        other => other,
    })?;
    let rows = compute_rows(&view);
    let as_of = view.rows.first().map_or(chain.as_of, |r| r.as_of);
    let timestamp = as_of.naive_utc();
    let config = SmartMoneyConfig::default();
    let trades: Vec<SmartMoneyTradePayload> = smart_money(&rows, &config)
        .iter()
        .map(|t| SmartMoneyTradePayload {
            row: row_payload(&t.row, &ticker, timestamp),
            criteria: t.criteria.iter().map(|c| c.code()).collect(),
            smart_money_score: t.score,
        })
        .collect();
    Ok(ok(SmartMoneyPayload {
        ticker: ticker.to_string(),
        stock_price: chain.stock_price(),
        total_smart_trades: trades.len(),
        total_smart_premium: trades.iter().filter_map(|t| t.row.premium).sum(),
        smart_money_trades: trades,
        filters: SmartMoneyFilters {
            min_premium: config.min_premium_usd,
            opening_volume_oi_ratio: config.opening_volume_oi_ratio,
            min_dte: config.min_dte,
        },
        timestamp,
        as_of,
        freshness,
    }))
}
