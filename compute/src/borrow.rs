//! Borrow-fee statistics for `/borrow-rate`: spike z-scores against the trailing series,
//! severity levels, fee classes, the 1-year percentile, the hard-to-borrow streak, the squeeze
//! score and the sector comparison. Pure functions over fee series in percent per year,
//! ascending by date.

use crate::vol::stats::{mean, median, percentile_of, standing};

/// Trailing sessions a day's fee is compared with for its z-score (the sessions before it).
pub const SPIKE_WINDOW: usize = 60;
/// Fewest trailing sessions a z-score needs; before that the day has none.
pub const SPIKE_MIN_HISTORY: usize = 20;
/// A day is a spike when its z-score is at least this.
pub const SPIKE_Z: f64 = 3.0;
/// Severity `HIGH` from this z-score (`MODERATE` from [`SPIKE_Z`]).
pub const SEVERITY_HIGH_Z: f64 = 4.5;
/// Severity `EXTREME` from this z-score.
pub const SEVERITY_EXTREME_Z: f64 = 6.0;

/// Fee below this (percent per year) is general collateral.
pub const GC_MAX_PCT: f64 = 1.0;
/// Fee from [`GC_MAX_PCT`] up to this is warm; from this up it is hard to borrow (the
/// simulator's `HARD_TO_BORROW_RATE`, 5 %).
pub const HTB_MIN_PCT: f64 = 5.0;
/// Fee from this up is special.
pub const SPECIAL_MIN_PCT: f64 = 20.0;

/// Sessions `borrow2yr` averages (two years of sessions).
pub const BORROW_2YR_SESSIONS: usize = 504;
/// Sessions of the percentile's history (one year, the current day included).
pub const PCTILE_SESSIONS: usize = 252;

/// Squeeze score weight of the 1-year fee percentile.
pub const SQUEEZE_W_PCTILE: f64 = 0.4;
/// Squeeze score weight of the latest z-score (capped at [`SQUEEZE_Z_CAP`]).
pub const SQUEEZE_W_SPIKE: f64 = 0.3;
/// Squeeze score weight of the hard-to-borrow streak (capped at [`SQUEEZE_STREAK_CAP`]).
pub const SQUEEZE_W_STREAK: f64 = 0.3;
/// The z-score at which the spike component is full.
pub const SQUEEZE_Z_CAP: f64 = 6.0;
/// The hard-to-borrow streak (sessions) at which the streak component is full.
pub const SQUEEZE_STREAK_CAP: usize = 20;

/// The class labels, cheapest first.
pub const CLASSES: [&str; 4] = ["GENERAL_COLLATERAL", "WARM", "HARD_TO_BORROW", "SPECIAL"];

/// The class of a fee in percent per year: below [`GC_MAX_PCT`] general collateral, below
/// [`HTB_MIN_PCT`] warm, below [`SPECIAL_MIN_PCT`] hard to borrow, else special.
pub fn borrow_class(fee_pct: f64) -> &'static str {
    if fee_pct < GC_MAX_PCT {
        CLASSES[0]
    } else if fee_pct < HTB_MIN_PCT {
        CLASSES[1]
    } else if fee_pct < SPECIAL_MIN_PCT {
        CLASSES[2]
    } else {
        CLASSES[3]
    }
}

/// The z-score of each day's fee against the up to [`SPIKE_WINDOW`] fees before it (mean and
/// sample standard deviation, n − 1); `None` with fewer than [`SPIKE_MIN_HISTORY`] before it or
/// a flat trailing series.
pub fn z_scores(fees: &[f64]) -> Vec<Option<f64>> {
    (0..fees.len())
        .map(|i| {
            if i < SPIKE_MIN_HISTORY {
                return None;
            }
            let prior = &fees[i.saturating_sub(SPIKE_WINDOW)..i];
            standing(prior, Some(fees[i])).z_score
        })
        .collect()
}

/// Whether a z-score marks a spike (at least [`SPIKE_Z`]).
pub fn is_spike(z: Option<f64>) -> bool {
    z.is_some_and(|z| z >= SPIKE_Z)
}

/// `NONE` below [`SPIKE_Z`], `MODERATE` below [`SEVERITY_HIGH_Z`], `HIGH` below
/// [`SEVERITY_EXTREME_Z`], else `EXTREME`.
pub fn severity(z: Option<f64>) -> &'static str {
    match z {
        Some(z) if z >= SEVERITY_EXTREME_Z => "EXTREME",
        Some(z) if z >= SEVERITY_HIGH_Z => "HIGH",
        Some(z) if z >= SPIKE_Z => "MODERATE",
        _ => "NONE",
    }
}

/// Mean of the last [`BORROW_2YR_SESSIONS`] fees (fewer when fewer are stored); `None` when
/// empty.
pub fn borrow_2yr(fees: &[f64]) -> Option<f64> {
    mean(
        fees[fees.len().saturating_sub(BORROW_2YR_SESSIONS)..]
            .iter()
            .copied(),
    )
}

/// Share of the last [`PCTILE_SESSIONS`] fees (the latest included) strictly below the latest
/// fee, 0–100; `None` when empty.
pub fn pctile_1y(fees: &[f64]) -> Option<f64> {
    let latest = *fees.last()?;
    percentile_of(&fees[fees.len().saturating_sub(PCTILE_SESSIONS)..], latest).ok()
}

/// Consecutive latest sessions flagged hard to borrow.
pub fn htb_streak(flags: &[bool]) -> usize {
    flags.iter().rev().take_while(|f| **f).count()
}

/// Squeeze score 0–100: [`SQUEEZE_W_PCTILE`] × pctile + [`SQUEEZE_W_SPIKE`] × 100 ×
/// clamp(z / [`SQUEEZE_Z_CAP`], 0, 1) + [`SQUEEZE_W_STREAK`] × 100 × min(streak /
/// [`SQUEEZE_STREAK_CAP`], 1). A missing percentile or z-score contributes 0.
pub fn squeeze_score(pctile: Option<f64>, z: Option<f64>, streak: usize) -> f64 {
    let spike = z.map_or(0.0, |z| (z / SQUEEZE_Z_CAP).clamp(0.0, 1.0));
    let streak = (streak as f64 / SQUEEZE_STREAK_CAP as f64).min(1.0);
    SQUEEZE_W_PCTILE * pctile.unwrap_or(0.0)
        + SQUEEZE_W_SPIKE * 100.0 * spike
        + SQUEEZE_W_STREAK * 100.0 * streak
}

/// The ticker's fee against its sector's latest fees.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SectorStanding {
    /// Names in the sector with a fee (the ticker included).
    pub count: usize,
    /// Median of their fees, percent per year.
    pub median: f64,
    /// The ticker's fee ÷ the median; `None` for a zero median.
    pub ratio: Option<f64>,
    /// Share of the sector's fees strictly below the ticker's, 0–100.
    pub pctile: f64,
}

/// The [`SectorStanding`] of `own` among `sector` (the sector's latest fees, the ticker's
/// included); `None` when `sector` is empty.
pub fn sector_standing(own: f64, sector: &[f64]) -> Option<SectorStanding> {
    let med = median(sector)?;
    Some(SectorStanding {
        count: sector.len(),
        median: med,
        ratio: (med > 0.0).then(|| own / med),
        pctile: percentile_of(sector, own).ok()?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_follow_the_thresholds() {
        assert_eq!(borrow_class(0.3), "GENERAL_COLLATERAL");
        assert_eq!(borrow_class(1.0), "WARM");
        assert_eq!(borrow_class(5.0), "HARD_TO_BORROW");
        assert_eq!(borrow_class(25.0), "SPECIAL");
    }

    #[test]
    fn a_planted_jump_is_a_spike_and_a_flat_series_is_not() {
        let mut fees: Vec<f64> = (0..80).map(|i| 0.5 + 0.01 * f64::from(i % 3)).collect();
        assert!(z_scores(&fees).iter().all(|z| !is_spike(*z)));
        fees.push(3.0);
        let z = z_scores(&fees);
        assert!(is_spike(z[80]));
        assert_eq!(severity(z[80]), "EXTREME");
        assert!(z[..SPIKE_MIN_HISTORY].iter().all(Option::is_none));
    }

    #[test]
    fn squeeze_score_is_bounded() {
        assert_eq!(squeeze_score(Some(100.0), Some(10.0), 50), 100.0);
        assert_eq!(squeeze_score(None, None, 0), 0.0);
        assert!((squeeze_score(Some(50.0), Some(3.0), 10) - 50.0).abs() < 1e-12);
    }
}
