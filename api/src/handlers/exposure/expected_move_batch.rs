//! `GET /batch/expected-move`: the `/expected-move` payload for several symbols.

use axum::Json;
use axum::extract::State;

use super::expected_move::{ExpectedMovePayload, expected_move_payload};
use super::{BatchPayload, batch};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::no_chain;
use crate::params::QueryParams;
use crate::state::AppState;

/// `GET /batch/expected-move?tickers=…`: the `/expected-move` payload per symbol.
pub async fn batch_expected_move(
    State(state): State<AppState>,
    params: QueryParams,
) -> Result<Json<Envelope<BatchPayload<ExpectedMovePayload>>>, ApiError> {
    let tickers = params.symbols("tickers")?;
    let expiration = params.date("expiration")?;
    let reader = state.market_data()?.clone();
    let payload = batch(&state, &tickers, |ticker| {
        let chain = reader.chain(ticker).ok_or_else(|| no_chain(ticker))?;
        expected_move_payload(
            ticker,
            &chain,
            expiration,
            state.freshness_of(chain.trade_date),
        )
    })?;
    Ok(ok(payload))
}
