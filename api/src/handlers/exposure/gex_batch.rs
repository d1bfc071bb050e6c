//! `GET /batch/gex`: the `/gex` payload for several symbols.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;

use super::gex::{GexPayload, gex_payload};
use super::{BatchPayload, GexSelection, batch, no_exposures};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::params::QueryParams;
use crate::state::AppState;
use crate::window::WindowRequest;

/// `/batch/gex` under compact detail: strikes kept each side of spot unless `strikes_around`
/// says otherwise.
const BATCH_GEX_STRIKES_PER_SIDE: usize = 10;

/// `GET /batch/gex?tickers=…`: the `/gex` payload per symbol.
pub async fn batch_gex(
    State(state): State<AppState>,
    headers: HeaderMap,
    params: QueryParams,
) -> Result<Json<Envelope<BatchPayload<GexPayload>>>, ApiError> {
    let tickers = params.symbols("tickers")?;
    let window_request = WindowRequest::from_request(&headers, &params)?;
    let expiration = params.date("expiration")?;
    let aggregate = params.bool("aggregate")?;
    let per_side = window_request.strikes_per_side(BATCH_GEX_STRIKES_PER_SIDE);
    let reader = state.market_data()?.clone();
    let payload = batch(&state, &tickers, |ticker| {
        let exposures = reader
            .exposures(ticker)
            .ok_or_else(|| no_exposures(ticker))?;
        let chain = reader.chain(ticker);
        let selection = GexSelection::from_params(expiration, aggregate, &exposures)?;
        gex_payload(
            &state,
            ticker,
            &exposures,
            chain.as_deref(),
            selection,
            per_side,
            window_request.detail,
        )
    })?;
    Ok(ok(BatchPayload {
        clamped: params.clamp_notices(),
        ..payload
    }))
}
