//! POST /stress-tests: the book under the fixed stress scenario set.

use axum::Json;
use axum::extract::State;
use optics_compute::risk;
use serde_json::Value;

use crate::body;
use crate::envelope::{ApiJson, Envelope, ok};
use crate::error::ApiError;
use crate::state::AppState;

use super::scenario::scenario_payload;

use super::{PositionBody, PositionsBody, PricesBody, ScenarioPayload, book, book_request};

book_request! {
    /// The body of `/stress-tests`.
    StressRequest {
    }
}

/// POST /stress-tests: the fixed scenario set ([`STRESS_SCENARIOS`]).
pub async fn stress_tests(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Envelope<ScenarioPayload>>, ApiError> {
    let request: StressRequest = body::parse(body)?;
    let (positions, prices) = book(&state, request.positions, request.underlying_prices)?;
    let report = risk::stress_tests(&positions, &prices)?;
    Ok(ok(scenario_payload(&report, true)))
}
