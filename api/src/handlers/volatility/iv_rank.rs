//! `GET /iv-rank/{ticker}`: where today's 30-day IV sits in its own range and distribution.

use axum::Json;
use axum::extract::State;
use optics_compute::vol::IV_RANK_MIN_SESSIONS;
use optics_compute::vol::signals::{ONE_MONTH_SESSIONS, iv_state, iv_state_rule};
use optics_compute::vol::{IvRankPercentile, iv_rank_percentile};
use serde::Serialize;
use utoipa::ToSchema;

use super::{IV30_BASIS, Served, VOL_UNITS, VolRead};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::params::{ClampNotice, QueryParams};
use crate::state::AppState;

/// `iv_percentile_source`: which series the percentile counts days of.
pub const IV_PERCENTILE_SOURCE: &str = "iv30d session closes over the lookback, today included";

/// The `/iv-rank/{ticker}` payload (also each symbol's result of `/batch/iv-rank`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct IvRankPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// Today's IV between the lookback's low (0) and high (100); null with `reason` when the
    /// history is too short or flat.
    pub iv_rank: Option<f64>,
    /// Share of lookback sessions (today included) whose IV closed below today's, 0–100.
    pub iv_percentile: Option<f64>,
    /// The same as `iv_percentile`: the one-year figure when the lookback is the default 252.
    pub iv_percentile_1y: Option<f64>,
    /// The series the percentile is counted on.
    pub iv_percentile_source: &'static str,
    /// The IV ranked: today's `iv30d`, percentage points.
    pub current_iv: Option<f64>,
    /// The 30-day constant-maturity IV (the `/vrp` basis), percentage points; the series the
    /// rank is measured on, so equal to `current_iv`.
    pub iv30d: Option<f64>,
    /// Lowest IV of the lookback, percentage points.
    pub iv_min_52w: Option<f64>,
    /// Highest IV of the lookback, percentage points.
    pub iv_max_52w: Option<f64>,
    /// Mean IV of the lookback, percentage points.
    pub iv_mean: Option<f64>,
    /// Sample standard deviation of the lookback's IV, percentage points.
    pub iv_std: Option<f64>,
    /// `VERY_LOW` … `VERY_HIGH` from `iv_rank` (`iv_state_rule`).
    pub iv_state: Option<&'static str>,
    /// The thresholds behind `iv_state`.
    pub iv_state_rule: String,
    /// The rank over the last month (21 sessions, today included).
    pub iv_rank_1m: Option<f64>,
    /// The percentile over the last month.
    pub iv_percentile_1m: Option<f64>,
    /// Sessions asked for (after clamping).
    pub lookback_days: usize,
    /// Sessions with an IV that the lookback held (today included).
    pub observations: usize,
    /// Fewest sessions for a rank.
    pub min_observations: usize,
    /// What the IV figures are.
    pub iv_basis: &'static str,
    /// Their unit.
    pub iv_units: &'static str,
    /// The chain's session, instant and freshness.
    #[serde(flatten)]
    pub served: Served,
}

/// `GET /iv-rank/{ticker}?lookback_days=252`.
pub async fn iv_rank(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<IvRankPayload>>, ApiError> {
    let lookback = lookback_days(&params)?;
    let read = VolRead::of(&state, ticker).await?;
    Ok(ok(iv_rank_payload(
        &state,
        &read,
        lookback,
        params.clamp_notices(),
    )))
}

/// The clamped `lookback_days`.
pub(crate) fn lookback_days(params: &QueryParams) -> Result<usize, ApiError> {
    let clamped = params.int("lookback_days")?;
    // The registry bounds it to 20..=1260.
    Ok(usize::try_from(clamped.value).unwrap_or(IV_RANK_MIN_SESSIONS))
}

/// The payload of one symbol.
pub(crate) fn iv_rank_payload(
    state: &AppState,
    read: &VolRead,
    lookback: usize,
    clamped: Vec<ClampNotice>,
) -> IvRankPayload {
    let current = read.iv30d();
    let prior = read.prior_iv30d();
    let year = current.and_then(|today| ranked(&prior, today, lookback));
    let month = current.and_then(|today| ranked(&prior, today, ONE_MONTH_SESSIONS));
    let observations = year.map_or(0, |r| r.observations);
    let reason = match (current, year) {
        (None, _) => Some(super::no_iv30d(read)),
        (Some(_), None) => Some(format!(
            "{} sessions with a stored iv30d before today; at least {} (today included) are \
             needed",
            prior.len(),
            IV_RANK_MIN_SESSIONS
        )),
        (Some(_), Some(r)) if r.iv_rank.is_none() => {
            Some("the lookback's IV is flat (max = min): no rank".to_owned())
        }
        _ => None,
    };
    let rank = year.and_then(|r| r.iv_rank);
    let percentile = year.map(|r| r.iv_percentile);
    IvRankPayload {
        ticker: read.ticker.to_string(),
        iv_rank: rank,
        iv_percentile: percentile,
        iv_percentile_1y: percentile,
        iv_percentile_source: IV_PERCENTILE_SOURCE,
        current_iv: current,
        iv30d: current,
        iv_min_52w: year.map(|r| r.iv_min_pct),
        iv_max_52w: year.map(|r| r.iv_max_pct),
        iv_mean: year.map(|r| r.iv_mean_pct),
        iv_std: year.and_then(|r| r.iv_std_pct),
        iv_state: rank.map(iv_state),
        iv_state_rule: iv_state_rule(),
        iv_rank_1m: month.and_then(|r| r.iv_rank),
        iv_percentile_1m: month.map(|r| r.iv_percentile),
        lookback_days: lookback,
        observations,
        min_observations: IV_RANK_MIN_SESSIONS,
        iv_basis: IV30_BASIS,
        iv_units: VOL_UNITS,
        served: Served::of(state, &read.chain, reason, clamped),
    }
}

/// Rank and percentile of `today` against the last `sessions − 1` prior sessions and today;
/// `None` below [`IV_RANK_MIN_SESSIONS`] sessions.
pub(crate) fn ranked(prior: &[f64], today: f64, sessions: usize) -> Option<IvRankPercentile> {
    let keep = prior.len().min(sessions.saturating_sub(1));
    let mut lookback = prior[prior.len() - keep..].to_vec();
    lookback.push(today);
    if lookback.len() < IV_RANK_MIN_SESSIONS.min(sessions) {
        return None;
    }
    iv_rank_percentile(&lookback, today).ok()
}
