//! POST /build-strategy: a named structure from the live chain by delta and width.

use axum::Json;
use axum::extract::State;
use optics_compute::strategy;
use serde::Serialize;
use serde_json::Value;

use crate::body::{self, required};
use crate::envelope::{ApiJson, Envelope, ok};
use crate::error::ApiError;
use crate::state::AppState;

use super::market::{chain_market, days_param, live_chain, live_chain_request, pick_expiration};
use super::record::{analysis_record, built_leg};
use super::{AnalysisRecord, BuiltLeg, DEFAULT_TARGET_DELTA, DEFAULT_WIDTH};

live_chain_request! {
    /// The body of `/build-strategy`.
    BuildRequest {
        /// The structure (required), any case: `iron_condor`, `straddle`, `calendar`, ….
        #[serde(default, deserialize_with = "body::text")]
        #[schema(required = true, schema_with = strategy_type_schema)]
        strategy_type: Option<String>,
        /// Wing width, dollars (default 5).
        #[serde(default, deserialize_with = "body::number")]
        width: Option<f64>,
        /// Short-strike |delta| (default 0.3, clamped to 0.05–0.50).
        #[serde(default, deserialize_with = "body::number")]
        target_delta: Option<f64>,
    }
}

/// `data` of `/build-strategy`.
#[derive(Debug, Clone, Serialize)]
pub struct BuiltPayload {
    /// The underlying.
    pub ticker: String,
    /// The structure with its strikes, e.g. `Iron Condor 580/585/615/620`.
    pub name: String,
    /// The structure built (canonical display name).
    pub strategy_type: &'static str,
    /// The underlying price used, dollars.
    pub stock_price: f64,
    /// When the strategy was built (the service clock), ISO 8601 UTC.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// The target |delta| used, after clamping to 0.05–0.50.
    pub target_delta: f64,
    /// True when the requested target_delta was outside 0.05–0.50 and clamped.
    pub target_delta_clamped: bool,
    /// Wing width asked for, dollars (the listed strike nearest it is used).
    pub width: f64,
    /// The legs, premiums at the mid.
    pub legs: Vec<BuiltLeg>,
    /// The analysis record of the legs.
    pub analysis: AnalysisRecord,
}

/// POST /build-strategy: a named structure from the live chain by delta and width.
pub async fn build_strategy(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Envelope<BuiltPayload>>, ApiError> {
    let request: BuildRequest = body::parse(body)?;
    let strategy_type = strategy::StrategyType::parse(required(
        request.strategy_type.as_deref(),
        "strategy_type",
    )?)?;
    let expiration = request.expiration;
    let dte = days_param(request.dte)?;
    let width = request.width.unwrap_or(DEFAULT_WIDTH);
    if !(width.is_finite() && width > 0.0 && width <= strategy::MAX_PRICE) {
        return Err(ApiError::bad_request(
            "width: must be a number of dollars greater than zero",
        ));
    }
    let target_delta = request.target_delta.unwrap_or(DEFAULT_TARGET_DELTA);
    strategy::clamp_target_delta(target_delta)?;
    let live = live_chain(&state, request.ticker.as_deref())?;
    let near_index = pick_expiration(&live, expiration, dte)?;
    let near = live.chain(near_index);
    let far = if strategy_type.needs_far_expiration() {
        if near_index + 1 >= live.open.len() {
            return Err(ApiError::upstream(format!(
                "{} has no expiration after {} for the calendar's far leg",
                live.ticker, live.open[near_index].expiration
            )));
        }
        Some(live.chain(near_index + 1))
    } else {
        None
    };
    let market = chain_market(&live.view, near.expiration, live.now);
    let built = strategy::build_strategy(
        strategy_type,
        target_delta,
        width,
        &near,
        far.as_ref(),
        &market,
    )?;
    let analysis = analysis_record(
        live.ticker.as_str(),
        Some(&built.name),
        &built.legs,
        &[],
        &market,
        &built.analysis,
    );
    Ok(ok(BuiltPayload {
        ticker: live.ticker.to_string(),
        name: built.name.clone(),
        strategy_type: strategy_type.display_name(),
        stock_price: market.underlying_price,
        created_at: live.now,
        target_delta: built.target_delta,
        target_delta_clamped: built.target_delta_clamped,
        width,
        legs: built.legs.iter().map(built_leg).collect(),
        analysis,
    }))
}

/// `strategy_type`'s words in the document: every name the builder parses.
fn strategy_type_schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    crate::openapi::words_schema(strategy::builder::STRATEGY_TYPE_NAMES)
}
