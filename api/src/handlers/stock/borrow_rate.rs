//! `GET /borrow-rate/{ticker}`: the stored daily borrow fee, its class and 1-year percentile,
//! spike z-scores against the trailing series, a squeeze score, the sector comparison and the
//! daily series.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use chrono::NaiveDate;
use optics_compute::borrow::{
    BORROW_2YR_SESSIONS, GC_MAX_PCT, HTB_MIN_PCT, PCTILE_SESSIONS, SEVERITY_EXTREME_Z,
    SEVERITY_HIGH_Z, SPECIAL_MIN_PCT, SPIKE_MIN_HISTORY, SPIKE_WINDOW, SPIKE_Z, SQUEEZE_STREAK_CAP,
    SQUEEZE_W_PCTILE, SQUEEZE_W_SPIKE, SQUEEZE_W_STREAK, SQUEEZE_Z_CAP, borrow_2yr, borrow_class,
    htb_streak, is_spike, pctile_1y, sector_standing, severity, squeeze_score, z_scores,
};
use optics_compute::time::new_york_date;
use optics_schemas::{AssetClass, BorrowRate};
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::openapi::IsoDate;
use crate::params::{ClampNotice, QueryParams};
use crate::state::AppState;
use crate::window::{VOL_SERIES_ROWS, Window, WindowRequest, window_last};

/// The fee now (`current`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct BorrowCurrent {
    /// The latest stored fee on or before today (New York), percent per year.
    pub borrow30: Option<f64>,
    /// The date of that fee.
    #[schema(value_type = Option<IsoDate>)]
    pub date: Option<NaiveDate>,
    /// Mean of the last 504 stored daily fees (fewer when fewer are stored; see
    /// `borrow2yr_sessions`), percent per year. We store one fee per day, not a term
    /// structure: this is a two-year average, not a two-year term rate.
    pub borrow2yr: Option<f64>,
    /// Sessions `borrow2yr` averages.
    pub borrow2yr_sessions: usize,
    /// `GENERAL_COLLATERAL`, `WARM`, `HARD_TO_BORROW` or `SPECIAL` (thresholds in `rules`).
    pub borrow_class: Option<&'static str>,
    /// Share of the last 252 fees (today's included) strictly below today's, 0–100.
    pub borrow_pctile: Option<f64>,
    /// The feed's hard-to-borrow flag on that date.
    pub is_hard_to_borrow: Option<bool>,
    /// Consecutive latest sessions flagged hard to borrow.
    pub htb_streak: usize,
    /// Today's z-score against the trailing series (see `rules.spike`).
    pub z_score: Option<f64>,
}

/// The ticker's fee against its sector (`sector_comparison`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SectorComparison {
    /// GICS sector.
    pub sector: String,
    /// Covered names of the sector with a stored fee on or before today (the ticker included).
    pub count: usize,
    /// Median of their latest fees, percent per year.
    pub sector_median: f64,
    /// The ticker's fee ÷ the sector median; null for a zero median.
    pub ratio: Option<f64>,
    /// Share of the sector's latest fees strictly below the ticker's, 0–100.
    pub pctile_in_sector: f64,
}

/// One day of `timeseries`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct BorrowDay {
    /// The date.
    #[schema(value_type = IsoDate)]
    pub date: NaiveDate,
    /// That day's stored fee, percent per year.
    pub borrow30: f64,
    /// Whether the z-score is at least the spike threshold.
    pub is_spike: bool,
    /// The fee's z-score against the trailing series before it; null before enough history.
    pub z_score: Option<f64>,
    /// The feed's hard-to-borrow flag.
    pub is_hard_to_borrow: bool,
}

/// The rules the labels and score follow, built from the compute constants.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct BorrowRules {
    /// How a spike is detected.
    pub spike: String,
    /// The severity levels.
    pub severity: String,
    /// The class thresholds.
    pub borrow_class: String,
    /// The squeeze score formula.
    pub squeeze_score: String,
}

/// The `/borrow-rate/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct BorrowRatePayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The fee now.
    pub current: BorrowCurrent,
    /// Whether today's fee is a spike (z-score ≥ the threshold in `rules.spike`).
    pub spike_detected: bool,
    /// `NONE`, `MODERATE`, `HIGH` or `EXTREME` (cut-offs in `rules.severity`).
    pub spike_severity: &'static str,
    /// Spike days in `timeseries` before trimming (the last `days` sessions).
    pub spikes_in_period: usize,
    /// Squeeze score 0–100 (formula in `rules.squeeze_score`); null without a fee.
    pub squeeze_score: Option<f64>,
    /// Versus the sector's covered names; null for a name without a sector or fee.
    pub sector_comparison: Option<SectorComparison>,
    /// The last `days` stored fees, oldest first (trimmed under compact, see `window`).
    pub timeseries: Vec<BorrowDay>,
    /// The series' window under compact detail; absent for full payloads.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    /// Sessions asked for.
    pub days: usize,
    /// Label and score rules.
    pub rules: BorrowRules,
    /// How the figures are measured.
    pub basis: &'static str,
    /// Units of the figures.
    pub units: &'static str,
    /// Why figures are null, when some are.
    pub reason: Option<String>,
    /// Parameters moved into their documented range (empty when none was).
    pub clamped: Vec<ClampNotice>,
}

const BASIS: &str = "the stored daily borrow fee (borrow_rates table, one fee per day, no term \
                     structure); borrow30 is the latest fee on or before today, borrow2yr the \
                     mean fee over the last 504 stored sessions; spikes are z-scores of each \
                     day's fee against the trailing sessions before it";

const UNITS: &str = "fees in percent per year; percentiles and squeeze_score 0 to 100; z-scores \
                     in standard deviations";

/// The rules, printed from the constants.
pub fn rules() -> BorrowRules {
    BorrowRules {
        spike: format!(
            "z = (fee - mean) / sample std of the up to {SPIKE_WINDOW} fees before the day \
             (at least {SPIKE_MIN_HISTORY}); spike when z >= {SPIKE_Z}"
        ),
        severity: format!(
            "NONE below z {SPIKE_Z}; MODERATE from {SPIKE_Z}; HIGH from {SEVERITY_HIGH_Z}; \
             EXTREME from {SEVERITY_EXTREME_Z}"
        ),
        borrow_class: format!(
            "GENERAL_COLLATERAL below {GC_MAX_PCT}%; WARM below {HTB_MIN_PCT}%; HARD_TO_BORROW \
             below {SPECIAL_MIN_PCT}%; SPECIAL from {SPECIAL_MIN_PCT}%"
        ),
        squeeze_score: format!(
            "{SQUEEZE_W_PCTILE} * borrow_pctile + {SQUEEZE_W_SPIKE} * 100 * clamp(z / \
             {SQUEEZE_Z_CAP}, 0, 1) + {SQUEEZE_W_STREAK} * 100 * min(htb_streak / \
             {SQUEEZE_STREAK_CAP}, 1); a missing percentile or z counts 0; percentile over \
             {PCTILE_SESSIONS} sessions, borrow2yr over {BORROW_2YR_SESSIONS}"
        ),
    }
}

/// The stored fees of `symbol` dated on or before `today`.
fn fees_through(all: &[BorrowRate], today: NaiveDate) -> &[BorrowRate] {
    &all[..all.partition_point(|r| r.date <= today)]
}

/// `GET /borrow-rate/{ticker}?days=252`.
pub async fn borrow_rate(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    headers: HeaderMap,
    params: QueryParams,
) -> Result<Json<Envelope<BorrowRatePayload>>, ApiError> {
    let window_request = WindowRequest::from_request(&headers, &params)?;
    let limit = window_request.row_limit(VOL_SERIES_ROWS);
    let days = usize::try_from(params.int("days")?.value).unwrap_or(252);
    let market = state.market_data()?;
    let coverage = market.coverage();
    let today = new_york_date(state.now());
    let stored = fees_through(coverage.borrow_of(ticker.as_str()), today);
    let fees: Vec<f64> = stored.iter().map(|r| r.borrow_rate * 100.0).collect();
    let flags: Vec<bool> = stored.iter().map(|r| r.is_hard_to_borrow).collect();
    let z = z_scores(&fees);
    let latest = stored.last();
    let latest_z = z.last().copied().flatten();
    let pctile = pctile_1y(&fees);
    let streak = htb_streak(&flags);
    let company = coverage.get(ticker.as_str());
    let sector = company.and_then(|c| c.sector.clone());

    let mut reasons = Vec::new();
    if stored.is_empty() {
        let what = if company.is_some_and(|c| c.asset_class == AssetClass::Index) {
            "a cash index, which cannot be borrowed"
        } else {
            "the feed gave no fee"
        };
        reasons.push(format!(
            "no borrow fee is stored for {ticker} on or before {today} ({what})"
        ));
    } else if latest_z.is_none() {
        reasons.push(format!(
            "today's z-score needs at least {SPIKE_MIN_HISTORY} earlier fees and a non-flat \
             trailing series; {} earlier stored",
            fees.len() - 1
        ));
    }

    let sector_comparison = match (&sector, fees.last()) {
        (Some(name), Some(&own)) => {
            let peers: Vec<f64> = coverage
                .companies
                .iter()
                .filter(|c| c.sector.as_deref() == Some(name.as_str()))
                .filter_map(|c| {
                    fees_through(coverage.borrow_of(&c.symbol), today)
                        .last()
                        .map(|r| r.borrow_rate * 100.0)
                })
                .collect();
            sector_standing(own, &peers).map(|s| SectorComparison {
                sector: name.clone(),
                count: s.count,
                sector_median: s.median,
                ratio: s.ratio,
                pctile_in_sector: s.pctile,
            })
        }
        _ => None,
    };
    if sector.is_none() && !stored.is_empty() {
        reasons.push(format!("{ticker} has no sector, so no sector comparison"));
    }

    let all = fees.len().saturating_sub(days)..fees.len();
    let spikes_in_period = all.clone().filter(|&i| is_spike(z[i])).count();
    let (kept, window) = window_last(all.len(), limit, window_request.detail);
    let tail = all.start + kept.start;
    let timeseries = (tail..fees.len())
        .map(|i| BorrowDay {
            date: stored[i].date,
            borrow30: fees[i],
            is_spike: is_spike(z[i]),
            z_score: z[i],
            is_hard_to_borrow: flags[i],
        })
        .collect();

    let payload = BorrowRatePayload {
        ticker: ticker.to_string(),
        current: BorrowCurrent {
            borrow30: fees.last().copied(),
            date: latest.map(|r| r.date),
            borrow2yr: borrow_2yr(&fees),
            borrow2yr_sessions: fees.len().min(BORROW_2YR_SESSIONS),
            borrow_class: fees.last().map(|f| borrow_class(*f)),
            borrow_pctile: pctile,
            is_hard_to_borrow: latest.map(|r| r.is_hard_to_borrow),
            htb_streak: streak,
            z_score: latest_z,
        },
        spike_detected: is_spike(latest_z),
        spike_severity: severity(latest_z),
        spikes_in_period,
        squeeze_score: latest.map(|_| squeeze_score(pctile, latest_z, streak)),
        sector_comparison,
        timeseries,
        window: limit.map(|_| window),
        days,
        rules: rules(),
        basis: BASIS,
        units: UNITS,
        reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
        clamped: params.clamp_notices(),
    };
    Ok(ok(payload))
}
