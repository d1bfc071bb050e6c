//! POST /stress-tests: the book under the fixed stress scenario set.

use axum::Json;
use axum::extract::State;
use optics_compute::risk;
use serde::Deserialize;
use serde_json::Value;
use utoipa::ToSchema;

use crate::body;
use crate::envelope::{ApiJson, Envelope, ok};
use crate::error::ApiError;
use crate::state::AppState;

use super::*;

use super::scenario::scenario_payload;

/// The body of `/stress-tests`.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(expecting = "a JSON object")]
pub struct StressRequest {
    /// The positions (required, 1 to 1,000; an array or a string holding one).
    #[serde(default)]
    #[schema(value_type = Vec<PositionBody>)]
    pub positions: PositionsBody,
    /// Price per ticker, dollars (`{"SPY": 601.5}`), before STOCK positions and live chains.
    #[serde(default)]
    #[schema(value_type = Option<BTreeMap<String, f64>>)]
    pub underlying_prices: PricesBody,
}

/// POST /stress-tests: the fixed scenario set ([`STRESS_SCENARIOS`]).
pub async fn stress_tests(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Envelope<ScenarioPayload>>, ApiError> {
    let request: StressRequest = body::parse(body)?;
    let (positions, prices) = book(&state, request.positions, request.underlying_prices)?;
    let report = risk::stress_tests(&positions, &prices).map_err(risk_error)?;
    Ok(ok(scenario_payload(&report, true)))
}
