//! `GET /batch/iv-rank`: the `/iv-rank` payload for up to 25 symbols.

use axum::Json;
use axum::extract::State;

use super::VolRead;
use super::iv_rank::{IvRankPayload, iv_rank_payload, lookback_days};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::handlers::batch::{BatchPayload, batch_async};
use crate::params::QueryParams;
use crate::state::AppState;

/// `GET /batch/iv-rank?tickers=SPY,QQQ&lookback_days=252`: one rate-limit unit, the monthly
/// budget spent per symbol (the gate's `per_symbol` cost); a symbol outside the coverage
/// universe fails the call with 404 naming it, any other failure stays that symbol's.
pub async fn batch_iv_rank(
    State(state): State<AppState>,
    params: QueryParams,
) -> Result<Json<Envelope<BatchPayload<IvRankPayload>>>, ApiError> {
    let tickers = params.symbols("tickers")?;
    let lookback = lookback_days(&params)?;
    let payload = batch_async(&state, &tickers, |ticker| {
        let state = &state;
        async move {
            let read = VolRead::of(state, ticker).await?;
            // The call's clamp notices are reported once, beside the results.
            Ok(iv_rank_payload(state, &read, lookback, Vec::new()))
        }
    })
    .await?;
    Ok(ok(BatchPayload {
        clamped: params.clamp_notices(),
        ..payload
    }))
}
