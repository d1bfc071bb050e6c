//! Historical move distributions of a daily close series, and the comparison of a priced move
//! with them (`/historical-moves`, `/expected-vs-actual`, the move term of
//! `/mispricing-assessment`).
//!
//! # Definitions
//!
//! The closes `C₀ … Cₙ₋₁` are one per stored session, oldest first, in dollars. The move over a
//! horizon of `h` sessions ending at session `t` (`h ≤ t < n`) is the simple close-to-close
//! return
//!
//! `rₜ = 100 · (Cₜ / Cₜ₋ₕ − 1)` percent,
//!
//! taken at **every** session `t` (overlapping windows, one per session), so a series of `n`
//! closes gives `n − h` moves. A window whose two closes are not both finite and > 0 gives no
//! move (the closes between the two ends do not enter the return). Over the moves of one
//! horizon:
//!
//! | figure | definition | unit |
//! | --- | --- | --- |
//! | `avg_abs_move_pct` | mean of \|rₜ\| | percent |
//! | `mean_move_pct` | mean of rₜ | percent |
//! | `median_move_pct`, `p10` … `p90` | linear percentile of the signed rₜ at rank p·(m − 1), numpy's default ([`crate::vol::distribution`]) | percent |
//! | `std_dev_pct` | sample standard deviation (m − 1) of rₜ; none below two moves | percent |
//! | `max_up_move_pct` | largest rₜ (signed: negative when every move is down) | percent |
//! | `max_down_move_pct` | smallest rₜ (signed, the most negative) | percent |
//! | `pct_moves_above_5` | 100 · share of moves with \|rₜ\| > [`LARGE_MOVE_PCT`] | percent of moves |
//!
//! A horizon of 0 sessions, or fewer than `h + 1` closes, has no distribution.
//!
//! # Priced against typical
//!
//! [`compare_moves`] puts a priced move (the at-the-money straddle as percent of spot) beside
//! the historical average absolute move over the same number of sessions: the difference in
//! percentage points, the ratio priced / historical and an assessment from the ratio
//! ([`move_assessment`], thresholds [`MOVE_OVERPRICED_FROM_RATIO`] and
//! [`MOVE_UNDERPRICED_TO_RATIO`]).
//!
//! Accuracy: each figure is a sum or an order statistic of at most a few thousand moves of a
//! few percent; the two-pass standard deviation and the sums keep about 1e-13 relative.

use crate::vol::distribution;

/// |move| above which a move counts in `pct_moves_above_5`, percent.
pub const LARGE_MOVE_PCT: f64 = 5.0;

/// Priced / historical move ratio at or above which options are `OVERPRICED`.
pub const MOVE_OVERPRICED_FROM_RATIO: f64 = 1.15;
/// Priced / historical move ratio at or below which options are `UNDERPRICED`.
pub const MOVE_UNDERPRICED_TO_RATIO: f64 = 0.85;

/// The assessments [`move_assessment`] returns.
pub const MOVE_ASSESSMENTS: [&str; 3] = ["OVERPRICED", "FAIRLY_PRICED", "UNDERPRICED"];

/// The moves over `horizon` sessions of `closes` (oldest first): `(t, rₜ)` with `t` the index of
/// the window's last close and rₜ in percent, oldest first. Empty for a horizon of 0 or fewer
/// than `horizon + 1` closes; windows whose end closes are not finite and > 0 are left out, as
/// is a move that overflows.
pub fn horizon_moves_pct(closes: &[f64], horizon: usize) -> Vec<(usize, f64)> {
    if horizon == 0 {
        return Vec::new();
    }
    let usable = |c: f64| c.is_finite() && c > 0.0;
    (horizon..closes.len())
        .filter_map(|t| {
            let (start, end) = (closes[t - horizon], closes[t]);
            (usable(start) && usable(end))
                .then(|| 100.0 * (end / start - 1.0))
                .filter(|r| r.is_finite())
                .map(|r| (t, r))
        })
        .collect()
}

/// The distribution of the moves over one horizon (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MoveDistribution {
    /// The horizon, sessions.
    pub horizon: usize,
    /// Moves measured.
    pub sample_size: usize,
    /// Mean absolute move, percent.
    pub avg_abs_move_pct: f64,
    /// Mean signed move, percent.
    pub mean_move_pct: f64,
    /// Median signed move, percent.
    pub median_move_pct: f64,
    /// Sample standard deviation of the moves, percent; `None` below two moves.
    pub std_dev_pct: Option<f64>,
    /// 10th percentile of the signed moves, percent.
    pub p10: f64,
    /// 25th percentile.
    pub p25: f64,
    /// 75th percentile.
    pub p75: f64,
    /// 90th percentile.
    pub p90: f64,
    /// Largest signed move, percent.
    pub max_up_move_pct: f64,
    /// Smallest signed move, percent.
    pub max_down_move_pct: f64,
    /// Percent of the moves whose size exceeds [`LARGE_MOVE_PCT`].
    pub pct_moves_above_5: f64,
    /// Index into the closes of the first close used (the start of the oldest window).
    pub first_close: usize,
    /// Index of the last close used (the end of the newest window).
    pub last_close: usize,
}

/// The distribution of the `horizon`-session moves of `closes` (oldest first); `None` when there
/// is no move (a horizon of 0, fewer than `horizon + 1` closes, or no window with two usable
/// closes).
pub fn move_distribution(closes: &[f64], horizon: usize) -> Option<MoveDistribution> {
    let moves = horizon_moves_pct(closes, horizon);
    let first_close = moves.first()?.0 - horizon;
    let last_close = moves.last()?.0;
    let signed: Vec<f64> = moves.iter().map(|(_, r)| *r).collect();
    let spread = distribution(&signed).ok()?;
    let m = signed.len() as f64;
    let mean = signed.iter().sum::<f64>() / m;
    let std_dev = (signed.len() >= 2)
        .then(|| (signed.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (m - 1.0)).sqrt());
    let large = signed.iter().filter(|r| r.abs() > LARGE_MOVE_PCT).count();
    Some(MoveDistribution {
        horizon,
        sample_size: signed.len(),
        avg_abs_move_pct: signed.iter().map(|r| r.abs()).sum::<f64>() / m,
        mean_move_pct: mean,
        median_move_pct: spread.p50,
        std_dev_pct: std_dev,
        p10: spread.p10,
        p25: spread.p25,
        p75: spread.p75,
        p90: spread.p90,
        max_up_move_pct: spread.max,
        max_down_move_pct: spread.min,
        pct_moves_above_5: 100.0 * large as f64 / m,
        first_close,
        last_close,
    })
}

/// The mean absolute `horizon`-session move of `closes`, percent: `avg_abs_move_pct` of
/// [`move_distribution`], the historical leg of every priced-against-typical comparison.
pub fn avg_abs_move_pct(closes: &[f64], horizon: usize) -> Option<f64> {
    move_distribution(closes, horizon).map(|d| d.avg_abs_move_pct)
}

/// `OVERPRICED` when the priced / historical ratio is at least [`MOVE_OVERPRICED_FROM_RATIO`],
/// `UNDERPRICED` when at most [`MOVE_UNDERPRICED_TO_RATIO`], `FAIRLY_PRICED` otherwise.
pub fn move_assessment(ratio: f64) -> &'static str {
    if ratio >= MOVE_OVERPRICED_FROM_RATIO {
        "OVERPRICED"
    } else if ratio <= MOVE_UNDERPRICED_TO_RATIO {
        "UNDERPRICED"
    } else {
        "FAIRLY_PRICED"
    }
}

/// The rule behind [`move_assessment`], as a payload states it.
pub fn move_assessment_rule() -> String {
    format!(
        "ratio = expected_move_pct / historical_avg_move_pct; >= {MOVE_OVERPRICED_FROM_RATIO}: \
         OVERPRICED; <= {MOVE_UNDERPRICED_TO_RATIO}: UNDERPRICED; otherwise FAIRLY_PRICED"
    )
}

/// A priced move beside the historical average over the same horizon.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MoveComparison {
    /// expected − historical, percentage points.
    pub difference_pct: f64,
    /// expected / historical; `None` when the historical average is not > 0.
    pub ratio: Option<f64>,
    /// [`move_assessment`] of the ratio.
    pub assessment: Option<&'static str>,
}

/// Compares the priced move `expected_pct` with the historical average `historical_pct` (both
/// percent of the price).
pub fn compare_moves(expected_pct: f64, historical_pct: f64) -> MoveComparison {
    let ratio = (historical_pct > 0.0)
        .then(|| expected_pct / historical_pct)
        .filter(|r| r.is_finite());
    MoveComparison {
        difference_pct: expected_pct - historical_pct,
        ratio,
        assessment: ratio.map(move_assessment),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * b.abs().max(1.0)
    }

    #[test]
    fn moves_are_overlapping_close_to_close_returns() {
        let closes = [100.0, 110.0, 99.0, 121.0];
        let moves = horizon_moves_pct(&closes, 2);
        assert_eq!(moves.len(), 2);
        assert_eq!(moves[0].0, 2);
        assert!(close(moves[0].1, -1.0));
        assert!(close(moves[1].1, 10.0));
        assert!(horizon_moves_pct(&closes, 0).is_empty());
        assert!(horizon_moves_pct(&closes, 4).is_empty());
        assert_eq!(horizon_moves_pct(&closes, 3).len(), 1);
    }

    #[test]
    fn a_bad_end_close_drops_only_its_windows() {
        let closes = [100.0, f64::NAN, 102.0, 0.0, 104.0];
        // h = 1: windows (0,1), (1,2), (2,3), (3,4) all touch a bad close.
        assert!(horizon_moves_pct(&closes, 1).is_empty());
        // h = 2: (0,2) and (2,4) are usable; the bad closes between the ends do not matter.
        let moves = horizon_moves_pct(&closes, 2);
        assert_eq!(moves.iter().map(|m| m.0).collect::<Vec<_>>(), vec![2, 4]);
        let d = move_distribution(&closes, 2).unwrap();
        assert_eq!((d.first_close, d.last_close), (0, 4));
    }

    #[test]
    fn distribution_by_hand() {
        // Ratios exact in binary, so every move is exact: +12.5 %, −12.5 %, +25 %, −3.125 %,
        // +1.5625 %.
        let mut closes = vec![1024.0];
        for ratio in [1.125, 0.875, 1.25, 0.96875, 1.015625] {
            let last = *closes.last().unwrap();
            closes.push(last * ratio);
        }
        let d = move_distribution(&closes, 1).unwrap();
        assert_eq!(d.sample_size, 5);
        assert_eq!(d.avg_abs_move_pct, 54.6875 / 5.0);
        assert_eq!(d.mean_move_pct, 23.4375 / 5.0);
        // Sorted: −12.5, −3.125, 1.5625, 12.5, 25; ranks p·4.
        assert_eq!(d.median_move_pct, 1.5625);
        assert!(close(d.p10, -12.5 + 0.4 * 9.375));
        assert_eq!(d.p25, -3.125);
        assert_eq!(d.p75, 12.5);
        assert!(close(d.p90, 12.5 + 0.6 * 12.5));
        assert_eq!(d.max_up_move_pct, 25.0);
        assert_eq!(d.max_down_move_pct, -12.5);
        // |r| > 5: 12.5, 12.5, 25; 3.125 and 1.5625 do not count.
        assert_eq!(d.pct_moves_above_5, 60.0);
        let mean = 4.6875;
        let var = [12.5, -12.5, 25.0, -3.125, 1.5625]
            .iter()
            .map(|r: &f64| (r - mean).powi(2))
            .sum::<f64>()
            / 4.0;
        assert!(close(d.std_dev_pct.unwrap(), var.sqrt()));
        assert_eq!((d.first_close, d.last_close), (0, 5));
    }

    #[test]
    fn one_move_has_no_standard_deviation_and_too_few_closes_no_distribution() {
        let d = move_distribution(&[100.0, 90.0], 1).unwrap();
        assert_eq!(d.sample_size, 1);
        assert_eq!(d.std_dev_pct, None);
        assert!(close(d.max_up_move_pct, -10.0), "signed even when down");
        assert!(move_distribution(&[100.0, 90.0], 2).is_none());
        assert!(move_distribution(&[], 1).is_none());
        assert_eq!(avg_abs_move_pct(&[128.0, 112.0, 126.0], 1), Some(12.5));
    }

    #[test]
    fn assessment_thresholds_are_inclusive() {
        assert_eq!(move_assessment(MOVE_OVERPRICED_FROM_RATIO), "OVERPRICED");
        assert_eq!(move_assessment(1.149_999), "FAIRLY_PRICED");
        assert_eq!(move_assessment(MOVE_UNDERPRICED_TO_RATIO), "UNDERPRICED");
        assert_eq!(move_assessment(0.850_001), "FAIRLY_PRICED");
        let rule = move_assessment_rule();
        assert!(rule.contains(">= 1.15: OVERPRICED") && rule.contains("<= 0.85: UNDERPRICED"));
        for label in MOVE_ASSESSMENTS {
            assert!(rule.contains(label), "{label}");
        }
    }

    #[test]
    fn comparison_difference_ratio_and_a_flat_history() {
        let c = compare_moves(3.0, 2.0);
        assert!(close(c.difference_pct, 1.0));
        assert_eq!(c.ratio, Some(1.5));
        assert_eq!(c.assessment, Some("OVERPRICED"));
        let c = compare_moves(1.5, 2.0);
        assert_eq!(c.assessment, Some("UNDERPRICED"));
        let c = compare_moves(2.1, 2.0);
        assert_eq!(c.assessment, Some("FAIRLY_PRICED"));
        let flat = compare_moves(2.0, 0.0);
        assert_eq!((flat.ratio, flat.assessment), (None, None));
        assert!(close(flat.difference_pct, 2.0));
    }
}
