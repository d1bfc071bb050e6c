//! `GET /cross-index-gex`: gamma exposure of several index ETFs side by side.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use serde::Serialize;
use utoipa::ToSchema;

use super::gex::{GexPayload, gex_payload};
use super::{GexSelection, batch, no_exposures};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::params::QueryParams;
use crate::state::AppState;
use crate::window::{self, WindowRequest};

/// One row of the cross-index `comparison` table.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct IndexComparison {
    /// Net dealer GEX, dollars per 1 % move.
    pub total_gex: f64,
    /// total_gex / (Σ open interest × 100 × spot): GEX per dollar of option notional, so
    /// indices of different size compare.
    pub normalized_gex: Option<f64>,
    /// Re-priced flip level, dollars.
    pub flip_level: Option<f64>,
    /// Spot, dollars.
    pub stock_price: f64,
}

/// The `/cross-index-gex` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CrossIndexPayload {
    /// The side-by-side table, by symbol.
    pub comparison: BTreeMap<String, IndexComparison>,
    /// The `/gex` payload (aggregate) of each symbol.
    pub indices: BTreeMap<String, GexPayload>,
    /// Symbols that could not be answered, with the reason.
    pub errors: BTreeMap<String, String>,
    /// What `normalized_gex` divides by.
    pub normalization: &'static str,
}

/// `GET /cross-index-gex`: aggregate GEX of each index ETF side by side.
pub async fn cross_index_gex(
    State(state): State<AppState>,
    headers: HeaderMap,
    params: QueryParams,
) -> Result<Json<Envelope<CrossIndexPayload>>, ApiError> {
    let tickers = params.symbols("tickers")?;
    let window_request = WindowRequest::from_request(&headers, &params)?;
    let per_side = window_request.strikes_per_side(window::GEX_STRIKES_PER_SIDE);
    let reader = state.market_data()?.clone();
    let mut comparison = BTreeMap::new();
    let batch = batch(&state, &tickers, |ticker| {
        let exposures = reader
            .exposures(ticker)
            .ok_or_else(|| no_exposures(ticker))?;
        let chain = reader.chain(ticker);
        let payload = gex_payload(
            &state,
            ticker,
            &exposures,
            chain.as_deref(),
            GexSelection::Aggregate,
            per_side,
            window_request.detail,
        )?;
        let open_interest: u64 = exposures
            .summary
            .iter()
            .find(|s| s.expiration.is_none())
            .map_or(0, |s| {
                s.call_open_interest.saturating_add(s.put_open_interest)
            });
        let notional = open_interest as f64
            * optics_compute::exposure::CONTRACT_MULTIPLIER
            * payload.stock_price;
        comparison.insert(
            ticker.to_string(),
            IndexComparison {
                total_gex: payload.total_gex,
                normalized_gex: (notional > 0.0).then(|| payload.total_gex / notional),
                flip_level: payload.flip_level,
                stock_price: payload.stock_price,
            },
        );
        Ok(payload)
    })?;
    Ok(ok(CrossIndexPayload {
        comparison,
        indices: batch.results,
        errors: batch.errors,
        normalization: "total_gex / (open interest x 100 x spot): dollars of GEX per 1% move \
                        per dollar of option notional",
    }))
}
