//! POST /optimize-strategy: the best iron condor or credit spread of one expiration.

use axum::Json;
use axum::extract::State;
use chrono::NaiveDate;
use optics_compute::strategy;
use serde::Serialize;
use serde_json::Value;

use crate::body::{self, required};
use crate::envelope::{ApiJson, Envelope, ok};
use crate::error::ApiError;
use crate::state::AppState;

use super::market::{chain_market, days_param, live_chain, live_chain_request, pick_expiration};
use super::record::{analysis_record, built_leg};
use super::{AnalysisRecord, BuiltLeg};

/// The longest an optimizer search may wait for a slot, and then run.
pub const OPTIMIZE_DEADLINE: std::time::Duration = std::time::Duration::from_secs(5);

live_chain_request! {
    /// The body of `/optimize-strategy`.
    OptimizeRequest {
        /// The structure (required), any case: `iron_condor`, `credit_spread`,
        /// `put_credit_spread` (`bull_put_spread`), `call_credit_spread` (`bear_call_spread`).
        #[serde(default, deserialize_with = "body::text")]
        #[schema(required = true, schema_with = structure_schema)]
        strategy_type: Option<String>,
        /// The objective: `max_profit` (default), `min_loss`, `risk_reward` or `probability`
        /// (`credit` and `max_credit` are `max_profit`: the structures are credit ones).
        #[serde(default, deserialize_with = "body::text")]
        #[schema(schema_with = target_schema)]
        target: Option<String>,
        /// Widest wing, dollars.
        #[serde(default, deserialize_with = "body::number")]
        max_width: Option<f64>,
        /// Smallest total credit, dollars per share.
        #[serde(default, deserialize_with = "body::number")]
        min_credit: Option<f64>,
    }
}

/// `data` of `/optimize-strategy`.
#[derive(Debug, Clone, Serialize)]
pub struct OptimizePayload {
    /// The underlying.
    pub ticker: String,
    /// What the winner is, with its strikes: `Iron Condor 570/580/620/630`, `Bull Put
    /// Credit Spread 570/580` or `Bear Call Credit Spread 620/630` (also the analysis's
    /// `strategy_name`).
    pub name: String,
    /// The structure searched: `iron_condor`, `credit_spread` (either side),
    /// `put_credit_spread` or `call_credit_spread`.
    pub strategy_type: &'static str,
    /// The objective echoed.
    pub optimization_target: &'static str,
    /// The winner's objective value: credit per share (max_profit), max loss per share
    /// (min_loss, ≤ 0), profit per dollar at risk (risk_reward) or probability in percent.
    pub objective_value: f64,
    /// The expiration searched.
    pub expiration: Option<NaiveDate>,
    /// Feasible combinations compared.
    pub combinations_evaluated: u64,
    /// The search constraints used.
    pub constraints: ConstraintsEcho,
    /// The winning legs, premiums at the mid.
    pub legs: Vec<BuiltLeg>,
    /// The winner's analysis record.
    pub analysis: AnalysisRecord,
}

/// The optimizer's constraints as used.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct ConstraintsEcho {
    /// Widest wing, dollars.
    pub max_width: f64,
    /// Smallest total credit, dollars per share.
    pub min_credit: f64,
    /// Short-leg |delta| range.
    pub min_short_delta: f64,
    /// Short-leg |delta| range.
    pub max_short_delta: f64,
}

/// POST /optimize-strategy: the best iron condor or credit spread of one expiration (the
/// one nearest `dte`, default 30 days, or `expiration`) for `target`.
pub async fn optimize_strategy(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Envelope<OptimizePayload>>, ApiError> {
    let request: OptimizeRequest = body::parse(body)?;
    let raw_type = required(request.strategy_type.as_deref(), "strategy_type")?;
    let structure = strategy::OptimizeStructure::parse(raw_type)?;
    let target =
        strategy::OptimizeTarget::parse(request.target.as_deref().unwrap_or("max_profit"))?;
    let defaults = strategy::OptimizeConstraints::default();
    let constraints = strategy::OptimizeConstraints {
        max_width_dollars: request.max_width.unwrap_or(defaults.max_width_dollars),
        min_credit_per_share: request.min_credit.unwrap_or(defaults.min_credit_per_share),
        ..defaults
    };
    let expiration = request.expiration;
    let dte = days_param(request.dte)?;
    let live = live_chain(&state, request.ticker.as_deref())?;
    let chain = live.chain(pick_expiration(&live, expiration, dte)?);
    let market = chain_market(&live.view, chain.expiration, live.now);
    // The search is CPU-bound: off the async runtime, one per core, within a deadline.
    let (chain, market, best) = state
        .run_heavy("optimize-strategy", OPTIMIZE_DEADLINE, move || {
            let best = strategy::optimize(structure, target, &chain, &market, &constraints);
            (chain, market, best)
        })
        .await?;
    let best = best?;
    let objective_value = match target {
        strategy::OptimizeTarget::Probability => 100.0 * best.objective,
        _ => best.objective,
    };
    let analysis = analysis_record(
        live.ticker.as_str(),
        Some(&best.name),
        &best.legs,
        &[],
        &market,
        &best.analysis,
    );
    Ok(ok(OptimizePayload {
        ticker: live.ticker.to_string(),
        name: best.name.clone(),
        strategy_type: structure.as_str(),
        optimization_target: target.as_str(),
        objective_value,
        expiration: chain.expiration,
        combinations_evaluated: best.combinations,
        constraints: ConstraintsEcho {
            max_width: constraints.max_width_dollars,
            min_credit: constraints.min_credit_per_share,
            min_short_delta: constraints.min_short_abs_delta,
            max_short_delta: constraints.max_short_abs_delta,
        },
        legs: best.legs.iter().map(built_leg).collect(),
        analysis,
    }))
}

/// `strategy_type`'s words in the document: the structures the optimizer searches.
fn structure_schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    crate::openapi::words_schema(strategy::OPTIMIZE_STRUCTURE_NAMES)
}

/// `target`'s words in the document.
fn target_schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
    crate::openapi::words_schema(strategy::OPTIMIZE_TARGET_NAMES)
}
