//! Earnings analytics over plain series: the drift after the reaction gap, the event-only move
//! priced by a straddle, the IV crush and its windows, the straddle's historical returns and the
//! verdict that weighs them. The reaction of a report (which session, the gap) is
//! [`crate::vol::close::reactions`]; the move statistics are [`crate::vol::stats`]'s.
//!
//! Conventions: moves, gaps, drifts and returns in percent (5.0 = 5 %), IVs in annualised
//! percentage points, days in calendar days unless a name says sessions.

use std::f64::consts::PI;

pub use crate::vol::stats::{mean, median};

/// Sessions after the reaction open at which the drift is read (1 = the reaction session's own
/// close).
pub const DRIFT_HORIZONS: [usize; 4] = [1, 5, 10, 20];

/// The drift at `horizons` sessions of a reaction at `session`: `(close of the h-th session
/// counting the reaction session as the first / its open − 1) × 100`, percent; `None` where
/// the sessions do not reach that far (a past session never sees a later one) or a price is
/// not a finite number > 0.
pub fn drift_path(
    opens: &[Option<f64>],
    closes: &[f64],
    session: usize,
    horizons: &[usize],
) -> Vec<Option<f64>> {
    let open = opens
        .get(session)
        .copied()
        .flatten()
        .filter(|o| o.is_finite() && *o > 0.0);
    horizons
        .iter()
        .map(|&h| {
            let close = *closes.get((session + h).checked_sub(1)?)?;
            let open = open?;
            (close.is_finite() && close > 0.0).then(|| (close / open - 1.0) * 100.0)
        })
        .collect()
}

/// One past reaction for the drift statistics: its gap and its drift at each horizon.
#[derive(Debug, Clone, PartialEq)]
pub struct DriftEvent {
    /// The reaction gap, percent.
    pub gap_pct: f64,
    /// Drift at each horizon (aligned with the horizons the statistics are asked for).
    pub drift: Vec<Option<f64>>,
}

/// Drift statistics at one horizon.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct DriftAtHorizon {
    /// Sessions.
    pub horizon: usize,
    /// Events with a non-zero gap and a drift at this horizon.
    pub events: usize,
    /// Share of them whose drift has the gap's sign, percent.
    pub continuation_rate: Option<f64>,
    /// Share whose drift has the opposite sign, percent (a drift of exactly 0 is neither).
    pub reversal_rate: Option<f64>,
    /// Mean drift after a positive gap, percent.
    pub avg_drift_positive_gap: Option<f64>,
    /// Mean drift after a negative gap, percent.
    pub avg_drift_negative_gap: Option<f64>,
}

/// Past reports the per-report averages read (the crush estimate, the historical move, the
/// straddle's returns): the last twelve, three years of quarterly reports.
pub const HISTORY_REPORTS: usize = 12;

/// Continuation and reversal rates and the mean drift by gap sign at each of `horizons`
/// (aligned with every event's `drift`).
pub fn drift_statistics(events: &[DriftEvent], horizons: &[usize]) -> Vec<DriftAtHorizon> {
    horizons
        .iter()
        .enumerate()
        .map(|(k, &horizon)| {
            let pairs: Vec<(f64, f64)> = events
                .iter()
                .filter(|e| e.gap_pct != 0.0)
                .filter_map(|e| Some((e.gap_pct, e.drift.get(k).copied().flatten()?)))
                .collect();
            let n = pairs.len();
            let rate = |keep: fn(f64, f64) -> bool| {
                (n > 0).then(|| {
                    pairs.iter().filter(|(g, d)| keep(*g, *d)).count() as f64 / n as f64 * 100.0
                })
            };
            DriftAtHorizon {
                horizon,
                events: n,
                continuation_rate: rate(|g, d| g * d > 0.0),
                reversal_rate: rate(|g, d| g * d < 0.0),
                avg_drift_positive_gap: mean(
                    pairs.iter().filter(|(g, _)| *g > 0.0).map(|(_, d)| *d),
                ),
                avg_drift_negative_gap: mean(
                    pairs.iter().filter(|(g, _)| *g < 0.0).map(|(_, d)| *d),
                ),
            }
        })
        .collect()
}

/// The horizon, sessions, the drift signal reads.
pub const DRIFT_SIGNAL_HORIZON: usize = 5;
/// Continuation rate (percent) at or above which the gap is followed.
pub const FOLLOW_GAP_FROM_RATE: f64 = 60.0;
/// Continuation rate (percent) at or below which the gap is faded.
pub const FADE_GAP_TO_RATE: f64 = 40.0;
/// Events with a drift at the signal horizon below which there is no signal.
pub const DRIFT_MIN_EVENTS: usize = 4;

/// `FOLLOW_GAP`, `FADE_GAP`, `NO_EDGE` or `INSUFFICIENT_DATA` from the continuation rate at
/// [`DRIFT_SIGNAL_HORIZON`] over `events` events.
pub fn drift_action(continuation_rate: Option<f64>, events: usize) -> &'static str {
    match continuation_rate {
        Some(_) if events < DRIFT_MIN_EVENTS => "INSUFFICIENT_DATA",
        None => "INSUFFICIENT_DATA",
        Some(rate) if rate >= FOLLOW_GAP_FROM_RATE => "FOLLOW_GAP",
        Some(rate) if rate <= FADE_GAP_TO_RATE => "FADE_GAP",
        Some(_) => "NO_EDGE",
    }
}

/// The rule of [`drift_action`], from its constants.
pub fn drift_action_rule() -> String {
    format!(
        "continuation rate at {DRIFT_SIGNAL_HORIZON} sessions: >= {FOLLOW_GAP_FROM_RATE} % \
         FOLLOW_GAP, <= {FADE_GAP_TO_RATE} % FADE_GAP, between NO_EDGE; fewer than \
         {DRIFT_MIN_EVENTS} events INSUFFICIENT_DATA"
    )
}

/// The expected absolute move of a normal variable per unit of its standard deviation,
/// √(2/π) ≈ 0.798: an at-the-money straddle prices about this fraction of the one-sigma move.
pub fn expected_abs_per_sigma() -> f64 {
    (2.0 / PI).sqrt()
}

/// The expected absolute move (percent of spot) an ATM straddle priced at `iv_pct` for
/// `days` calendar days implies: √(2/π) · σ · √(days / 365) × 100 with σ = iv / 100.
pub fn straddle_move_from_iv(iv_pct: f64, days: f64) -> Option<f64> {
    (iv_pct.is_finite() && iv_pct > 0.0 && days.is_finite() && days > 0.0)
        .then(|| expected_abs_per_sigma() * iv_pct * (days / 365.0).sqrt())
}

/// A straddle's move split into the report's share and the diffusion of its other days.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EventMove {
    /// The straddle's expected absolute move to its expiration, percent of spot.
    pub straddle_move_pct: f64,
    /// Calendar days the straddle runs.
    pub straddle_dte: f64,
    /// The expected absolute move of the straddle's days other than the report's at the
    /// diffusion vol, percent ([`straddle_move_from_iv`] over `straddle_dte − 1` days).
    pub diffusion_move_pct: f64,
    /// The event-only move: √(max(straddle² − diffusion², 0)), percent.
    pub implied_move_pct: f64,
    /// event² / straddle², 0–1: the share of the straddle's variance the report carries.
    pub event_variance_share: f64,
}

/// Splits `straddle_move_pct` over `straddle_dte` calendar days into the report's move and
/// the diffusion of the other `straddle_dte − 1` days at `diffusion_iv_pct`: moves on the
/// expected-absolute-move basis add in squares (independent normal parts), so
/// `event² = straddle² − diffusion²`, floored at 0 (a straddle priced below its diffusion
/// carries no event premium). `None` for a straddle move that is not a finite number > 0.
pub fn event_move(
    straddle_move_pct: f64,
    straddle_dte: f64,
    diffusion_iv_pct: f64,
) -> Option<EventMove> {
    if !(straddle_move_pct.is_finite() && straddle_move_pct > 0.0) {
        return None;
    }
    let diffusion = straddle_move_from_iv(diffusion_iv_pct, straddle_dte - 1.0).unwrap_or(0.0);
    let event_variance = (straddle_move_pct.powi(2) - diffusion.powi(2)).max(0.0);
    Some(EventMove {
        straddle_move_pct,
        straddle_dte,
        diffusion_move_pct: diffusion,
        implied_move_pct: event_variance.sqrt(),
        event_variance_share: event_variance / straddle_move_pct.powi(2),
    })
}

/// The return of a straddle held from the close before a report to its expiration right after
/// it, per unit of premium, percent: `(|gap| − priced) / priced × 100`, where `priced` is the
/// move the straddle cost (percent of spot) and the gap stands in for the move to expiry.
pub fn straddle_return_pct(gap_move_pct: f64, priced_move_pct: f64) -> Option<f64> {
    (gap_move_pct.is_finite() && priced_move_pct.is_finite() && priced_move_pct > 0.0)
        .then(|| (gap_move_pct.abs() - priced_move_pct) / priced_move_pct * 100.0)
}

/// The IV `days` calendar days before (negative) or after a date in a series of
/// `(day offset, iv)` points: the point nearest that offset within `tolerance` days.
fn iv_near(points: &[(i64, f64)], offset: i64, tolerance: i64) -> Option<f64> {
    points
        .iter()
        .filter(|(d, _)| (d - offset).abs() <= tolerance)
        .min_by_key(|(d, _)| ((d - offset).abs(), *d))
        .map(|(_, iv)| *iv)
}

/// Days either side of a window's end an IV reading may stand for it (a weekend or a
/// holiday has no session).
pub const IV_WINDOW_TOLERANCE_DAYS: i64 = 4;

/// One report's IV around its reaction, from the stored 30-day IV: `iv_before` at the close
/// before the reaction, `iv_after` at the reaction close, `iv_window_before` about
/// `days_before` calendar days before the reaction, `iv_window_after` about `days_after` days
/// after it (each the reading nearest that day within [`IV_WINDOW_TOLERANCE_DAYS`]).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct IvAroundReport {
    /// IV at the close before the reaction session.
    pub iv_before: Option<f64>,
    /// IV at the reaction session's close.
    pub iv_after: Option<f64>,
    /// IV about `days_before` days before the reaction.
    pub iv_window_before: Option<f64>,
    /// IV about `days_after` days after the reaction.
    pub iv_window_after: Option<f64>,
}

impl IvAroundReport {
    /// Reads a report's IVs from `points`: `(calendar days from the reaction session, iv)`,
    /// the session before the reaction at the largest negative offset and the reaction at 0.
    pub fn read(points: &[(i64, f64)], days_before: i64, days_after: i64) -> Self {
        let usable: Vec<(i64, f64)> = points
            .iter()
            .copied()
            .filter(|(_, iv)| iv.is_finite() && *iv > 0.0)
            .collect();
        Self {
            iv_before: usable
                .iter()
                .filter(|(d, _)| *d < 0 && *d >= -IV_WINDOW_TOLERANCE_DAYS)
                .max_by_key(|(d, _)| *d)
                .map(|(_, iv)| *iv),
            iv_after: usable.iter().find(|(d, _)| *d == 0).map(|(_, iv)| *iv),
            iv_window_before: iv_near(&usable, -days_before, IV_WINDOW_TOLERANCE_DAYS),
            iv_window_after: iv_near(&usable, days_after, IV_WINDOW_TOLERANCE_DAYS),
        }
    }

    /// (before − after) / before × 100: the crush, percent of the IV before.
    pub fn crush_pct(&self) -> Option<f64> {
        Some((self.iv_before? - self.iv_after?) / self.iv_before? * 100.0)
    }

    /// (before / window before − 1) × 100: the run-up into the report, percent.
    pub fn run_up_pct(&self) -> Option<f64> {
        Some((self.iv_before? / self.iv_window_before? - 1.0) * 100.0)
    }

    /// (window after / before − 1) × 100: where IV stood `days_after` days on, percent.
    pub fn change_after_pct(&self) -> Option<f64> {
        Some((self.iv_window_after? / self.iv_before? - 1.0) * 100.0)
    }
}

/// Edge score at or above which buying the straddle has paid.
pub const BUY_STRADDLE_FROM_EDGE: f64 = 60.0;
/// Edge score at or below which selling it has paid.
pub const SELL_STRADDLE_TO_EDGE: f64 = 40.0;
/// Reports with a priced straddle for full confidence.
pub const FULL_CONFIDENCE_REPORTS: usize = 8;
/// Days to the report beyond which a verdict is preliminary (the straddle that will carry
/// the report may not be listed or liquid yet).
pub const PRELIMINARY_BEYOND_DAYS: i64 = 30;

/// `50 + return / 2`, clamped to 0–100: a straddle return of +100 % scores 100, −100 % scores
/// 0, break-even 50.
pub fn edge_score(straddle_return_pct: f64) -> f64 {
    (50.0 + straddle_return_pct / 2.0).clamp(0.0, 100.0)
}

/// The rule of [`edge_score`] and the signal, from the constants.
pub fn edge_rule() -> String {
    format!(
        "edge_score = clamp(50 + r / 2, 0, 100) with r the mean of the available straddle \
         returns in percent (historical avg_straddle_return and current_edge_pct); >= \
         {BUY_STRADDLE_FROM_EDGE} BUY_STRADDLE, <= {SELL_STRADDLE_TO_EDGE} SELL_STRADDLE, \
         between NEUTRAL; NO_EARNINGS when no report is scheduled"
    )
}

/// `BUY_STRADDLE`, `SELL_STRADDLE` or `NEUTRAL` from an edge score.
pub fn straddle_signal(edge_score: f64) -> &'static str {
    if edge_score >= BUY_STRADDLE_FROM_EDGE {
        "BUY_STRADDLE"
    } else if edge_score <= SELL_STRADDLE_TO_EDGE {
        "SELL_STRADDLE"
    } else {
        "NEUTRAL"
    }
}

/// Every value the verdict's signal takes.
pub const VERDICT_SIGNALS: [&str; 4] = ["BUY_STRADDLE", "SELL_STRADDLE", "NEUTRAL", "NO_EARNINGS"];

/// Confidence 0–100 of a straddle verdict: `100 × min(1, reports / FULL_CONFIDENCE_REPORTS)`,
/// halved when the historical and the current reads point different ways (one above
/// break-even, the other below), halved again when the verdict is preliminary.
pub fn verdict_confidence(
    reports: usize,
    historical_return: Option<f64>,
    current_edge: Option<f64>,
    preliminary: bool,
) -> f64 {
    let mut confidence = 100.0 * (reports as f64 / FULL_CONFIDENCE_REPORTS as f64).min(1.0);
    if let (Some(h), Some(c)) = (historical_return, current_edge)
        && h * c < 0.0
    {
        confidence *= 0.5;
    }
    if preliminary {
        confidence *= 0.5;
    }
    confidence
}

/// The rule of [`verdict_confidence`], from its constants.
pub fn confidence_rule() -> String {
    format!(
        "100 x min(1, reports with a priced straddle / {FULL_CONFIDENCE_REPORTS}), halved when \
         the historical and current straddle returns disagree in sign, halved again when the \
         report is more than {PRELIMINARY_BEYOND_DAYS} days out (preliminary)"
    )
}

/// Share of up (or down) moves at or above which a direction bias is named, percent.
pub const DIRECTION_BIAS_FROM_SHARE: f64 = 65.0;

/// `UP`, `DOWN` or `NONE` from the up and down counts of past gaps, with the consistency
/// `max(up, down) / (up + down) × 100` (`None` without moves).
pub fn direction_bias(up: usize, down: usize) -> (&'static str, Option<f64>) {
    let n = up + down;
    if n == 0 {
        return ("NONE", None);
    }
    let share = up.max(down) as f64 / n as f64 * 100.0;
    let bias = if share < DIRECTION_BIAS_FROM_SHARE {
        "NONE"
    } else if up > down {
        "UP"
    } else {
        "DOWN"
    };
    (bias, Some(share))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn drift_reads_closes_from_the_reaction_open_and_stops_at_the_last_session() {
        let opens = [Some(10.0), Some(11.0), Some(12.0), Some(12.0)];
        let closes = [10.0, 11.5, 12.1, 12.65];
        let path = drift_path(&opens, &closes, 1, &[1, 2, 3, 4]);
        assert!((path[0].unwrap() - (11.5 / 11.0 - 1.0) * 100.0).abs() < 1e-12);
        assert!((path[2].unwrap() - (12.65 / 11.0 - 1.0) * 100.0).abs() < 1e-12);
        assert_eq!(path[3], None, "a session past the last is not known");
    }

    #[test]
    fn drift_statistics_count_continuations_and_reversals_by_gap_sign() {
        let e = |gap: f64, d: f64| DriftEvent {
            gap_pct: gap,
            drift: vec![Some(d)],
        };
        let events = [
            e(3.0, 1.0),
            e(2.0, -1.0),
            e(-4.0, -2.0),
            e(-1.0, 0.0),
            e(0.0, 5.0),
        ];
        let s = drift_statistics(&events, &[5])[0];
        assert_eq!(s.events, 4, "a zero gap has no direction to continue");
        assert_eq!(s.continuation_rate, Some(50.0));
        assert_eq!(s.reversal_rate, Some(25.0));
        assert_eq!(s.avg_drift_positive_gap, Some(0.0));
        assert_eq!(s.avg_drift_negative_gap, Some(-1.0));
        assert_eq!(drift_action(Some(60.0), 4), "FOLLOW_GAP");
        assert_eq!(drift_action(Some(60.0), 3), "INSUFFICIENT_DATA");
        assert_eq!(drift_action(Some(40.0), 9), "FADE_GAP");
        assert_eq!(drift_action(Some(50.0), 9), "NO_EDGE");
    }

    #[test]
    fn event_move_removes_the_diffusion_of_the_other_days_in_variance() {
        // A 7-day straddle pricing 6 % with 30 % diffusion vol over the 6 other days.
        let m = event_move(6.0, 7.0, 30.0).unwrap();
        let diffusion = (2.0 / PI).sqrt() * 30.0 * (6.0_f64 / 365.0).sqrt();
        assert!((m.diffusion_move_pct - diffusion).abs() < 1e-12);
        assert!((m.implied_move_pct - (36.0 - diffusion * diffusion).sqrt()).abs() < 1e-12);
        assert!(
            (m.implied_move_pct.powi(2) + m.diffusion_move_pct.powi(2) - 36.0).abs() < 1e-9,
            "the parts add up in squares"
        );
        assert!((m.event_variance_share - m.implied_move_pct.powi(2) / 36.0).abs() < 1e-15);
        // Priced below its diffusion: no event premium, not a NaN.
        let flat = event_move(1.0, 30.0, 40.0).unwrap();
        assert_eq!(flat.implied_move_pct, 0.0);
        assert_eq!(flat.event_variance_share, 0.0);
        // A one-day straddle is all event.
        assert_eq!(event_move(4.0, 1.0, 30.0).unwrap().implied_move_pct, 4.0);
        assert!(event_move(0.0, 7.0, 30.0).is_none());
    }

    #[test]
    fn iv_around_a_report_reads_the_nearest_sessions() {
        let points = [(-31, 40.0), (-3, 60.0), (0, 36.0), (29, 33.0)];
        let iv = IvAroundReport::read(&points, 30, 30);
        assert_eq!(iv.iv_before, Some(60.0), "Friday before a Monday reaction");
        assert_eq!(iv.iv_after, Some(36.0));
        assert_eq!(iv.iv_window_before, Some(40.0));
        assert_eq!(iv.iv_window_after, Some(33.0));
        assert_eq!(iv.crush_pct(), Some(40.0));
        assert_eq!(iv.run_up_pct(), Some(50.0));
        assert!((iv.change_after_pct().unwrap() + 45.0).abs() < 1e-12);
        let none = IvAroundReport::read(&[(-9, 50.0), (0, 30.0)], 30, 30);
        assert_eq!(
            none.iv_before, None,
            "no reading close enough before the reaction"
        );
    }

    #[test]
    fn scores_signals_and_confidence_follow_their_rules() {
        assert_eq!(edge_score(100.0), 100.0);
        assert_eq!(edge_score(-100.0), 0.0);
        assert_eq!(edge_score(0.0), 50.0);
        assert_eq!(straddle_signal(60.0), "BUY_STRADDLE");
        assert_eq!(straddle_signal(40.0), "SELL_STRADDLE");
        assert_eq!(straddle_signal(50.0), "NEUTRAL");
        assert_eq!(verdict_confidence(8, Some(10.0), Some(5.0), false), 100.0);
        assert_eq!(verdict_confidence(4, Some(10.0), Some(-5.0), false), 25.0);
        assert_eq!(verdict_confidence(16, None, None, true), 50.0);
        assert_eq!(direction_bias(7, 3), ("UP", Some(70.0)));
        assert_eq!(direction_bias(3, 3), ("NONE", Some(50.0)));
        assert_eq!(direction_bias(0, 0), ("NONE", None));
        let r = straddle_return_pct(-6.0, 4.0).unwrap();
        assert!((r - 50.0).abs() < 1e-12);
    }
}
