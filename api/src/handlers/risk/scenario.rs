//! POST /scenario-analysis: first-order P&L estimates of the book under scenarios.

use axum::Json;
use axum::extract::State;
use optics_compute::risk::{
    self, MAX_SCENARIOS, STRESS_SCENARIOS, Scenario, ScenarioEstimate, StressScenario,
};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use utoipa::ToSchema;

use crate::body::{self, List};
use crate::envelope::{ApiJson, Envelope, ok};
use crate::error::ApiError;
use crate::state::AppState;

use super::{PositionBody, PositionsBody, PricesBody, book, book_request};

/// One scenario's estimate (`scenarios[]`).
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioResult {
    /// The stress scenario's name (stress-tests only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scenario_name: Option<&'static str>,
    /// What the stress scenario stands for (stress-tests only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<&'static str>,
    /// Underlying move, percent.
    pub stock_move_pct: f64,
    /// IV change, vol points (20 % + 5 = 25 %).
    pub iv_change_pct: f64,
    /// Calendar days forward.
    pub days_forward: f64,
    /// delta + vega + theta contributions, dollars.
    pub estimated_pnl: f64,
    /// estimated_pnl as a percent of gross market value (null for a book of zero value).
    pub estimated_pnl_pct: Option<f64>,
    /// Σ delta × price × move, dollars.
    pub delta_contribution: f64,
    /// Σ vega × IV change, dollars.
    pub vega_contribution: f64,
    /// Σ theta × days (up to each option's expiry), dollars.
    pub theta_contribution: f64,
    /// The three contributions again, grouped (stress-tests only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub contributions: Option<Contributions>,
    /// current_value + estimated_pnl, dollars.
    pub new_portfolio_value: f64,
}

/// The parts of an estimate, dollars.
#[derive(Debug, Clone, Copy, Serialize)]
pub struct Contributions {
    /// From delta.
    pub delta: f64,
    /// From vega.
    pub vega: f64,
    /// From theta.
    pub theta: f64,
}

/// `data` of `/scenario-analysis` and `/stress-tests`.
#[derive(Debug, Clone, Serialize)]
pub struct ScenarioPayload {
    /// Σ value of the positions (short negative), dollars.
    pub current_value: f64,
    /// Σ |value|, the base of the percentages, dollars.
    pub gross_value: f64,
    /// `vol_points`: how iv_change_pct is read.
    pub iv_change_basis: &'static str,
    /// `first_order_greeks`: delta, vega and theta from the Greeks supplied; no re-pricing.
    pub method: &'static str,
    /// The estimates, in the order asked (stress-tests: the fixed set).
    pub scenarios: Vec<ScenarioResult>,
}

pub(crate) fn scenario_result(
    estimate: &ScenarioEstimate,
    named: Option<&StressScenario>,
) -> ScenarioResult {
    let stress = named.is_some();
    ScenarioResult {
        scenario_name: named.map(|s| s.name),
        description: named.map(|s| s.description),
        stock_move_pct: estimate.scenario.stock_move_pct,
        iv_change_pct: estimate.scenario.iv_change_pct,
        days_forward: estimate.scenario.days_forward,
        estimated_pnl: estimate.estimated_pnl_usd,
        estimated_pnl_pct: estimate.estimated_pnl_pct,
        delta_contribution: estimate.delta_contribution_usd,
        vega_contribution: estimate.vega_contribution_usd,
        theta_contribution: estimate.theta_contribution_usd,
        contributions: stress.then_some(Contributions {
            delta: estimate.delta_contribution_usd,
            vega: estimate.vega_contribution_usd,
            theta: estimate.theta_contribution_usd,
        }),
        new_portfolio_value: estimate.new_portfolio_value_usd,
    }
}

pub(crate) fn scenario_payload(report: &risk::ScenarioReport, stress: bool) -> ScenarioPayload {
    ScenarioPayload {
        current_value: report.current_value_usd,
        gross_value: report.gross_value_usd,
        iv_change_basis: risk::IV_CHANGE_BASIS.as_str(),
        method: "first_order_greeks",
        // stress_tests answers in the order of STRESS_SCENARIOS.
        scenarios: report
            .estimates
            .iter()
            .enumerate()
            .map(|(i, e)| scenario_result(e, stress.then(|| STRESS_SCENARIOS.get(i)).flatten()))
            .collect(),
    }
}

book_request! {
    /// The body of `/scenario-analysis`.
    ScenarioRequest {
        /// The scenarios (default none; at most 100; an array or a string holding one).
        #[serde(default)]
        #[schema(value_type = Option<Vec<ScenarioBody>>)]
        scenarios: Option<List<ScenarioBody, MAX_SCENARIOS>>,
    }
}

/// One scenario (`scenarios[]`); a missing field is 0.
#[derive(Debug, Clone, Copy, Default, Deserialize, ToSchema)]
#[serde(expecting = "an object")]
pub struct ScenarioBody {
    /// Underlying move, percent.
    #[serde(default, deserialize_with = "body::number")]
    pub stock_move_pct: Option<f64>,
    /// IV change, vol points.
    #[serde(default, deserialize_with = "body::number")]
    pub iv_change_pct: Option<f64>,
    /// Calendar days forward.
    #[serde(default, deserialize_with = "body::number")]
    pub days_forward: Option<f64>,
}

impl From<ScenarioBody> for Scenario {
    fn from(body: ScenarioBody) -> Self {
        Self {
            stock_move_pct: body.stock_move_pct.unwrap_or(0.0),
            iv_change_pct: body.iv_change_pct.unwrap_or(0.0),
            days_forward: body.days_forward.unwrap_or(0.0),
        }
    }
}

/// POST /scenario-analysis.
pub async fn scenario_analysis(
    State(state): State<AppState>,
    ApiJson(body): ApiJson<Value>,
) -> Result<Json<Envelope<ScenarioPayload>>, ApiError> {
    let request: ScenarioRequest = body::parse(body)?;
    let (positions, prices) = book(&state, request.positions, request.underlying_prices)?;
    let scenarios: Vec<Scenario> = request
        .scenarios
        .map(|list| list.0.into_iter().map(Scenario::from).collect())
        .unwrap_or_default();
    let report = risk::estimate_scenarios(&positions, &prices, &scenarios)?;
    Ok(ok(scenario_payload(&report, false)))
}
