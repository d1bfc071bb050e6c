//! `GET /post-earnings-drift/{ticker}`: does the price keep going the gap's way after a report?

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use chrono::NaiveDate;
use optics_compute::earnings::{
    DRIFT_HORIZONS, DRIFT_SIGNAL_HORIZON, drift_action, drift_action_rule, drift_statistics,
};
use serde::Serialize;
use utoipa::ToSchema;

use super::read::{EarningsRead, timing_label};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::freshness::Freshness;
use crate::openapi::IsoDate;
use crate::params::{ClampNotice, QueryParams};
use crate::state::AppState;

/// `basis` of the payload.
pub const DRIFT_BASIS: &str = "gap: the close before the reaction session to its open, percent; \
                               drift at N sessions: the close of the N-th session counting the \
                               reaction session as the first, over the reaction session's open, \
                               - 1, percent; continuation: drift with the gap's sign, reversal: \
                               the opposite sign";

/// One past report and its drift path.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct DriftEventRow {
    /// The report date.
    #[schema(value_type = IsoDate)]
    pub earnings_date: NaiveDate,
    /// `bmo`, `amc` or `tbd`.
    pub timing: &'static str,
    /// The reaction session.
    #[schema(value_type = IsoDate)]
    pub reaction_date: NaiveDate,
    /// The gap, percent.
    pub gap_pct: f64,
    /// Drift by horizon (`1d`, `5d`, `10d`, `20d`), percent; null where the sessions do not
    /// reach that far yet.
    pub drift: BTreeMap<String, Option<f64>>,
}

/// Statistics over the events.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct DriftStatistics {
    /// Events listed.
    pub events: usize,
    /// Events with a positive gap.
    pub positive_gaps: usize,
    /// Events with a negative gap.
    pub negative_gaps: usize,
    /// Continuation rate at 1 session, percent.
    pub continuation_rate_1d: Option<f64>,
    /// Continuation rate at 5 sessions, percent.
    pub continuation_rate_5d: Option<f64>,
    /// Continuation rate at 10 sessions, percent.
    pub continuation_rate_10d: Option<f64>,
    /// Continuation rate at 20 sessions, percent.
    pub continuation_rate_20d: Option<f64>,
    /// Reversal rate at 1 session, percent.
    pub reversal_rate_1d: Option<f64>,
    /// Reversal rate at 5 sessions, percent.
    pub reversal_rate_5d: Option<f64>,
    /// Reversal rate at 10 sessions, percent.
    pub reversal_rate_10d: Option<f64>,
    /// Reversal rate at 20 sessions, percent.
    pub reversal_rate_20d: Option<f64>,
    /// Events counted at each horizon (those with a non-zero gap and the sessions to reach it).
    pub events_by_horizon: BTreeMap<String, usize>,
}

/// The read of the statistics.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct DriftSignal {
    /// `FOLLOW_GAP`, `FADE_GAP`, `NO_EDGE` or `INSUFFICIENT_DATA`.
    pub action: &'static str,
    /// The numbers behind it, in a sentence.
    pub rationale: String,
    /// The rule.
    pub rule: String,
}

/// The `/post-earnings-drift/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PostEarningsDriftPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// Reports asked for (after clamping).
    pub quarters: usize,
    /// Horizons, sessions.
    pub horizons: Vec<usize>,
    /// Rates and counts.
    pub statistics: DriftStatistics,
    /// Mean drift after a positive gap, by horizon, percent.
    pub avg_drift_positive_gap: BTreeMap<String, Option<f64>>,
    /// Mean drift after a negative gap, by horizon, percent.
    pub avg_drift_negative_gap: BTreeMap<String, Option<f64>>,
    /// Each event, newest first.
    pub events: Vec<DriftEventRow>,
    /// The read.
    pub signal: DriftSignal,
    /// How gap and drift are measured.
    pub basis: &'static str,
    /// Units.
    pub units: &'static str,
    /// The last date the read sees (New York).
    #[schema(value_type = IsoDate)]
    pub as_of_date: NaiveDate,
    /// Why the list is empty, when it is.
    pub reason: Option<String>,
    /// The freshness of the last daily bar's session.
    #[serde(flatten)]
    pub freshness: Freshness,
    /// Parameters moved into their documented range.
    pub clamped: Vec<ClampNotice>,
}

fn horizon_key(h: usize) -> String {
    format!("{h}d")
}

/// `GET /post-earnings-drift/{ticker}?quarters=12`.
pub async fn post_earnings_drift(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<PostEarningsDriftPayload>>, ApiError> {
    let quarters = usize::try_from(params.int("quarters")?.value).unwrap_or(12);
    let read = EarningsRead::of(&state, ticker).await?;
    let past = read.past(quarters);
    let events = read.drift_events(&past, &DRIFT_HORIZONS);
    let stats = drift_statistics(&events, &DRIFT_HORIZONS);
    let by_horizon = |pick: fn(&optics_compute::earnings::DriftAtHorizon) -> Option<f64>| {
        stats
            .iter()
            .map(|s| (horizon_key(s.horizon), pick(s)))
            .collect::<BTreeMap<_, _>>()
    };
    let at = |h: usize| {
        stats
            .iter()
            .find(|s| s.horizon == h)
            .copied()
            .unwrap_or_default()
    };
    let signal_stats = at(DRIFT_SIGNAL_HORIZON);
    let action = drift_action(signal_stats.continuation_rate, signal_stats.events);
    let rationale = match signal_stats.continuation_rate {
        Some(rate) => format!(
            "over {} reports with a {DRIFT_SIGNAL_HORIZON}-session drift, the price kept the gap's \
             direction {rate:.0} % of the time and reversed {:.0} % of the time",
            signal_stats.events,
            signal_stats.reversal_rate.unwrap_or(0.0)
        ),
        None => format!(
            "no report has {DRIFT_SIGNAL_HORIZON} sessions of bars after its reaction in the \
             stored history"
        ),
    };
    let rows: Vec<DriftEventRow> = past
        .iter()
        .zip(&events)
        .rev()
        .map(|(p, e)| DriftEventRow {
            earnings_date: p.report.report_date,
            timing: timing_label(p.report.timing),
            reaction_date: p.reaction_date,
            gap_pct: e.gap_pct,
            drift: DRIFT_HORIZONS
                .iter()
                .zip(&e.drift)
                .map(|(h, d)| (horizon_key(*h), *d))
                .collect(),
        })
        .collect();
    let reason = rows.is_empty().then(|| {
        format!(
            "no report of {} with a known timing has reacted inside the {} stored daily bars \
             through {}",
            read.ticker,
            read.dates.len(),
            read.as_of_date
        )
    });
    let last_bar = read.dates.last().copied().unwrap_or(read.as_of_date);
    Ok(ok(PostEarningsDriftPayload {
        ticker: read.ticker.to_string(),
        quarters,
        horizons: DRIFT_HORIZONS.to_vec(),
        statistics: DriftStatistics {
            events: events.len(),
            positive_gaps: events.iter().filter(|e| e.gap_pct > 0.0).count(),
            negative_gaps: events.iter().filter(|e| e.gap_pct < 0.0).count(),
            continuation_rate_1d: at(1).continuation_rate,
            continuation_rate_5d: at(5).continuation_rate,
            continuation_rate_10d: at(10).continuation_rate,
            continuation_rate_20d: at(20).continuation_rate,
            reversal_rate_1d: at(1).reversal_rate,
            reversal_rate_5d: at(5).reversal_rate,
            reversal_rate_10d: at(10).reversal_rate,
            reversal_rate_20d: at(20).reversal_rate,
            events_by_horizon: stats
                .iter()
                .map(|s| (horizon_key(s.horizon), s.events))
                .collect(),
        },
        avg_drift_positive_gap: by_horizon(|s| s.avg_drift_positive_gap),
        avg_drift_negative_gap: by_horizon(|s| s.avg_drift_negative_gap),
        events: rows,
        signal: DriftSignal {
            action,
            rationale,
            rule: drift_action_rule(),
        },
        basis: DRIFT_BASIS,
        units: "percent",
        as_of_date: read.as_of_date,
        reason,
        freshness: state.freshness_of(last_bar),
        clamped: params.clamp_notices(),
    }))
}
