//! `GET /iv-opportunities/{ticker}`: how far today's IV is from its mean, overall and per
//! expiration.

use axum::Json;
use axum::extract::State;
use chrono::NaiveDate;
use optics_compute::vol::IV_RANK_LOOKBACK_SESSIONS;
use optics_compute::vol::signals::{iv_opportunity, iv_opportunity_rule};
use serde::Serialize;
use utoipa::ToSchema;

use super::iv_rank::ranked;
use super::{IV30_BASIS, Served, VOL_UNITS, VolRead};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::openapi::IsoDate;
use crate::state::AppState;

/// One expiration of `term_structure[]`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ExpirationZScore {
    /// The expiration.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Calendar days to it.
    pub dte: i32,
    /// Its forward-ATM IV, percentage points.
    pub atm_iv: f64,
    /// (atm_iv − mean_iv) / std_iv: the expiration read against the same 30-day distribution.
    pub z_score: Option<f64>,
    /// `SELL_VOL`, `BUY_VOL` or `NO_EXTREME` for that z-score.
    pub opportunity: Option<&'static str>,
}

/// The `/iv-opportunities/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct IvOpportunitiesPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// Today's `iv30d`, percentage points.
    pub current_iv: Option<f64>,
    /// Mean of the lookback's iv30d (today included), percentage points.
    pub mean_iv: Option<f64>,
    /// Its sample standard deviation, percentage points.
    pub std_iv: Option<f64>,
    /// (current_iv − mean_iv) / std_iv, standard deviations.
    pub z_score: Option<f64>,
    /// Where IV would return to if it reverted: the mean, percentage points.
    pub reversion_target: Option<f64>,
    /// reversion_target − current_iv, percentage points.
    pub expected_iv_move: Option<f64>,
    /// expected_iv_move as percent of current_iv.
    pub expected_pct_change: Option<f64>,
    /// `SELL_VOL`, `BUY_VOL` or `NO_EXTREME`.
    pub opportunity: Option<&'static str>,
    /// The rule behind `opportunity`.
    pub opportunity_rule: String,
    /// Per open expiration with an ATM IV, nearest first.
    pub term_structure: Vec<ExpirationZScore>,
    /// Sessions in the lookback (today included) and how many held an IV.
    pub lookback_days: usize,
    /// Sessions with an IV in the lookback.
    pub observations: usize,
    /// What the IV figures are.
    pub iv_basis: &'static str,
    /// Their unit.
    pub iv_units: &'static str,
    /// The chain's session, instant and freshness.
    #[serde(flatten)]
    pub served: Served,
}

/// `GET /iv-opportunities/{ticker}`: over the same series as `/iv-rank` at its default lookback.
pub async fn iv_opportunities(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
) -> Result<Json<Envelope<IvOpportunitiesPayload>>, ApiError> {
    let read = VolRead::of(&state, ticker).await?;
    let current = read.iv30d();
    let stats =
        current.and_then(|today| ranked(&read.prior_iv30d(), today, IV_RANK_LOOKBACK_SESSIONS));
    let mean = stats.map(|s| s.iv_mean_pct);
    let std = stats.and_then(|s| s.iv_std_pct).filter(|s| *s > 0.0);
    let z_of = |iv: f64| Some((iv - mean?) / std?);
    let z_score = current.and_then(z_of);
    let reason = match (current, stats, std) {
        (None, _, _) => Some(super::no_iv30d(&read)),
        (Some(_), None, _) => Some(
            "too few stored sessions with an iv30d for a mean and standard deviation".to_owned(),
        ),
        (Some(_), Some(_), None) => Some("the lookback's IV does not vary: no z-score".to_owned()),
        _ => None,
    };
    let term_structure = read
        .expirations
        .iter()
        .filter(|e| read.chain.open_expirations().contains(&e.expiration))
        .filter_map(|e| {
            let atm_iv = e.atm_iv_pct?;
            let z_score = z_of(atm_iv);
            Some(ExpirationZScore {
                expiration: e.expiration,
                dte: e.dte,
                atm_iv,
                z_score,
                opportunity: z_score.map(iv_opportunity),
            })
        })
        .collect();
    let expected_iv_move = mean.zip(current).map(|(m, c)| m - c);
    Ok(ok(IvOpportunitiesPayload {
        ticker: read.ticker.to_string(),
        current_iv: current,
        mean_iv: mean,
        std_iv: std,
        z_score,
        reversion_target: mean,
        expected_iv_move,
        expected_pct_change: expected_iv_move.zip(current).map(|(m, c)| m / c * 100.0),
        opportunity: z_score.map(iv_opportunity),
        opportunity_rule: iv_opportunity_rule(),
        term_structure,
        lookback_days: IV_RANK_LOOKBACK_SESSIONS,
        observations: stats.map_or(0, |s| s.observations),
        iv_basis: IV30_BASIS,
        iv_units: VOL_UNITS,
        served: Served::of(&state, &read.chain, reason, Vec::new()),
    }))
}
