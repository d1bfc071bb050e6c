//! `GET /vrp/{ticker}`: the 30-day implied vol against the realized vol of exactly the window
//! asked, with ex-earnings figures when a report falls inside it.

use axum::Json;
use axum::extract::State;
use chrono::NaiveDate;
use optics_compute::vol::signals::{vrp_assessment, vrp_assessment_rule};
use optics_compute::vol::{earnings_in_window, hv, hv_ex_earnings, percentile_of, vrp};
use serde::Serialize;
use utoipa::ToSchema;

use super::{HV_BASIS, IV30_BASIS, Served, VOL_UNITS, VolRead};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::openapi::IsoDate;
use crate::params::QueryParams;
use crate::state::AppState;

/// Sessions of premium history `vrp_percentile` ranks today's premium in (one year).
pub const VRP_PERCENTILE_SESSIONS: usize = 252;

/// The `/vrp/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VrpPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// Today's 30-day constant-maturity IV, percentage points.
    pub implied_volatility: Option<f64>,
    /// Close-to-close realized vol over exactly `hv_window` sessions ending at `hv_window_end`,
    /// percentage points.
    pub realized_volatility: Option<f64>,
    /// implied − realized, percentage points (positive: options price more movement than the
    /// stock made).
    pub volatility_risk_premium: Option<f64>,
    /// implied / realized.
    pub vrp_ratio: Option<f64>,
    /// Share of the last 252 stored sessions whose premium (their iv30d − their realized vol
    /// over the same window) was below today's, 0–100.
    pub vrp_percentile: Option<f64>,
    /// Sessions that percentile was counted over.
    pub vrp_percentile_observations: usize,
    /// `RICH`, `FAIR` or `CHEAP` (`assessment_rule`).
    pub assessment: Option<&'static str>,
    /// The thresholds behind `assessment`.
    pub assessment_rule: String,
    /// Whether an earnings reaction session lies inside the realized window.
    pub earnings_in_window: bool,
    /// Realized vol with the reaction sessions' returns dropped (same window); null when no
    /// report falls inside it.
    pub realized_volatility_ex_earnings: Option<f64>,
    /// implied − realized ex-earnings; null when no report falls inside the window.
    pub volatility_risk_premium_ex_earnings: Option<f64>,
    /// Sessions in the realized window (`lookback_days` after clamping).
    pub hv_window: usize,
    /// The last session of the realized window.
    #[schema(value_type = Option<IsoDate>)]
    pub hv_window_end: Option<NaiveDate>,
    /// How realized vol is measured.
    pub hv_basis: &'static str,
    /// What the implied figure is.
    pub iv_basis: &'static str,
    /// Unit of every volatility.
    pub units: &'static str,
    /// The chain's session, instant and freshness.
    #[serde(flatten)]
    pub served: Served,
}

/// `GET /vrp/{ticker}?lookback_days=30`.
pub async fn vrp_of(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<VrpPayload>>, ApiError> {
    let window = usize::try_from(params.int("lookback_days")?.value).unwrap_or(30);
    let read = VolRead::of(&state, ticker).await?;
    let closes = read.closes();
    let implied = read.iv30d();
    let realized = hv(&closes, window);
    let premium = implied.zip(realized).and_then(|(iv, rv)| vrp(iv, rv).ok());
    let in_window = earnings_in_window(closes.len(), window, &read.reaction_sessions);
    let realized_ex = in_window
        .then(|| hv_ex_earnings(&closes, window, &read.reaction_sessions))
        .flatten();
    let history = super::premium_history(&read, window, VRP_PERCENTILE_SESSIONS);
    let percentile = premium
        .filter(|_| !history.is_empty())
        .and_then(|p| percentile_of(&history, p.premium_pct).ok());
    let reason = match (implied, realized) {
        (None, _) => Some(super::no_iv30d(&read)),
        (_, None) => Some(super::short_history(&read, window)),
        _ => None,
    };
    Ok(ok(VrpPayload {
        ticker: read.ticker.to_string(),
        implied_volatility: implied,
        realized_volatility: realized,
        volatility_risk_premium: premium.map(|p| p.premium_pct),
        vrp_ratio: premium.and_then(|p| p.ratio),
        vrp_percentile: percentile,
        vrp_percentile_observations: history.len(),
        assessment: premium.map(|p| vrp_assessment(p.premium_pct)),
        assessment_rule: vrp_assessment_rule(),
        earnings_in_window: in_window,
        realized_volatility_ex_earnings: realized_ex,
        volatility_risk_premium_ex_earnings: implied.zip(realized_ex).map(|(iv, rv)| iv - rv),
        hv_window: window,
        hv_window_end: read.last_session(),
        hv_basis: HV_BASIS,
        iv_basis: IV30_BASIS,
        units: VOL_UNITS,
        served: read.served(&state, reason, &params),
    }))
}
