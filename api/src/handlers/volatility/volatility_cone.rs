//! `GET /volatility-cone/{ticker}`: per realized window, where realized vol has ranged over the
//! stored history, where it is now, and the implied vol of the same tenor.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use optics_compute::vol::{
    Distribution, TRADING_DAYS_PER_YEAR, constant_maturity_iv, distribution, earnings_in_window,
    hv, hv_ex_earnings, hv_series,
};
use serde::Serialize;
use utoipa::ToSchema;

use super::{HV_BASIS, Served, VOL_UNITS, VolRead};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::params::QueryParams;
use crate::state::AppState;

/// Calendar days per year of the chain's year fractions.
const CALENDAR_DAYS_PER_YEAR: f64 = 365.0;

/// The window of the top-level 30-day figures, sessions.
const THIRTY_DAYS: usize = 30;

/// One tenor of `volatility_cone`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ConeTenor {
    /// The window, sessions.
    pub window: usize,
    /// Implied vol interpolated (in total variance) to window × 365/252 calendar days,
    /// percentage points.
    pub iv: Option<f64>,
    /// Realized vol over the last `window` sessions, percentage points.
    pub current_rv: Option<f64>,
    /// iv / current_rv.
    pub iv_to_rv_ratio: Option<f64>,
    /// Smallest realized vol of the window over the stored history.
    pub min: Option<f64>,
    /// 10th percentile (linear between order statistics, numpy's default).
    pub p10: Option<f64>,
    /// 25th percentile.
    pub p25: Option<f64>,
    /// Median.
    pub p50: Option<f64>,
    /// 75th percentile.
    pub p75: Option<f64>,
    /// 90th percentile.
    pub p90: Option<f64>,
    /// Largest.
    pub max: Option<f64>,
    /// Mean.
    pub mean: Option<f64>,
    /// Sessions whose window the distribution covers.
    pub observations: usize,
    /// Whether an earnings reaction session lies inside the current window.
    pub earnings_in_window: bool,
    /// Realized vol of the current window with reaction sessions' returns dropped (equal to
    /// `current_rv` when none is inside).
    pub rv_ex_earnings: Option<f64>,
}

/// The `/volatility-cone/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VolatilityConePayload {
    /// Underlying symbol.
    pub ticker: String,
    /// By tenor key (`10d`, `20d`, …: the window in sessions; keys sort as text, `periods` gives
    /// the order asked).
    pub volatility_cone: BTreeMap<String, ConeTenor>,
    /// The windows, sessions, in the order asked.
    pub periods: Vec<usize>,
    /// Realized vol over the last 30 sessions.
    pub realized_vol_30d: Option<f64>,
    /// The same with reaction sessions dropped.
    pub realized_vol_30d_ex_earnings: Option<f64>,
    /// Whether a reaction session lies inside those 30 sessions.
    pub earnings_in_window: bool,
    /// Today's 30-day constant-maturity IV (the `/vrp` figure).
    pub iv30d: Option<f64>,
    /// Stored session closes the cone is built on.
    pub sessions: usize,
    /// How realized vol is measured.
    pub hv_basis: &'static str,
    /// How each tenor's iv is obtained.
    pub iv_basis: &'static str,
    /// Unit of every volatility.
    pub units: &'static str,
    /// The chain's session, instant and freshness.
    #[serde(flatten)]
    pub served: Served,
}

/// `iv_basis` of the cone.
const CONE_IV_BASIS: &str = "forward-ATM implied vols of the live chain's expirations \
                             interpolated in total variance to window x 365/252 calendar days";

/// `GET /volatility-cone/{ticker}?periods=10,20,30,60,90`.
pub async fn volatility_cone(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<VolatilityConePayload>>, ApiError> {
    let mut periods: Vec<usize> = Vec::new();
    for window in params.int_list("periods")? {
        let window = usize::try_from(window.value).unwrap_or(2);
        if !periods.contains(&window) {
            periods.push(window);
        }
    }
    let read = VolRead::of(&state, ticker).await?;
    let closes = read.closes();
    let points: Vec<(f64, f64)> = read
        .expirations
        .iter()
        .filter(|e| e.dte > 0)
        .filter_map(|e| Some((e.years_to_expiry, e.atm_iv_pct?)))
        .collect();
    let cone: BTreeMap<String, ConeTenor> = periods
        .iter()
        .map(|&window| {
            let days = window as f64 * CALENDAR_DAYS_PER_YEAR / TRADING_DAYS_PER_YEAR;
            let tenor = tenor(
                &closes,
                window,
                &read.reaction_sessions,
                constant_maturity_iv(&points, days),
            );
            (format!("{window}d"), tenor)
        })
        .collect();
    let realized_30 = hv(&closes, THIRTY_DAYS);
    let in_window_30 = earnings_in_window(closes.len(), THIRTY_DAYS, &read.reaction_sessions);
    let longest = periods.iter().copied().max().unwrap_or(THIRTY_DAYS);
    let reason = (closes.len() <= longest).then(|| super::short_history(&read, longest));
    Ok(ok(VolatilityConePayload {
        ticker: read.ticker.to_string(),
        volatility_cone: cone,
        periods,
        realized_vol_30d: realized_30,
        realized_vol_30d_ex_earnings: hv_ex_earnings(&closes, THIRTY_DAYS, &read.reaction_sessions),
        earnings_in_window: in_window_30,
        iv30d: read.iv30d(),
        sessions: closes.len(),
        hv_basis: HV_BASIS,
        iv_basis: CONE_IV_BASIS,
        units: VOL_UNITS,
        served: read.served(&state, reason, &params),
    }))
}

/// The cone figures of one window.
fn tenor(closes: &[f64], window: usize, reaction_sessions: &[usize], iv: Option<f64>) -> ConeTenor {
    let series: Vec<f64> = hv_series(closes, window).into_iter().flatten().collect();
    let spread: Option<Distribution> = distribution(&series).ok();
    let current = hv(closes, window);
    ConeTenor {
        window,
        iv,
        current_rv: current,
        iv_to_rv_ratio: iv
            .zip(current)
            .filter(|(_, rv)| *rv > 0.0)
            .map(|(iv, rv)| iv / rv),
        min: spread.map(|d| d.min),
        p10: spread.map(|d| d.p10),
        p25: spread.map(|d| d.p25),
        p50: spread.map(|d| d.p50),
        p75: spread.map(|d| d.p75),
        p90: spread.map(|d| d.p90),
        max: spread.map(|d| d.max),
        mean: spread.map(|d| d.mean),
        observations: series.len(),
        earnings_in_window: earnings_in_window(closes.len(), window, reaction_sessions),
        rv_ex_earnings: hv_ex_earnings(closes, window, reaction_sessions),
    }
}
