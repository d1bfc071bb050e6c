//! Statistics over daily series: IV rank and percentile, the volatility risk premium,
//! correlation and beta of log returns, and earnings-move statistics.

use super::realized::log_returns;
use super::{VolError, check_finite, check_positive};

/// Sessions in the one-month correlation and beta window.
pub const CORRELATION_WINDOW_1M: usize = 21;
/// Sessions in the one-year correlation and beta window.
pub const CORRELATION_WINDOW_1Y: usize = 252;

/// Where today's IV sits in a lookback series of daily IVs (percentage points).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct IvRankPercentile {
    /// Today's IV, percentage points.
    pub current_iv_pct: f64,
    /// (current − min) / (max − min) × 100, clamped to 0–100 (today may lie outside a lookback
    /// that excludes it); `None` when the lookback is flat (max = min).
    pub iv_rank: Option<f64>,
    /// Share of lookback days with an IV strictly below today's, 0–100.
    pub iv_percentile: f64,
    /// Lookback minimum, percentage points.
    pub iv_min_pct: f64,
    /// Lookback maximum, percentage points.
    pub iv_max_pct: f64,
    /// Lookback mean, percentage points.
    pub iv_mean_pct: f64,
    /// Lookback sample standard deviation (n − 1), percentage points; `None` below 2 days.
    pub iv_std_pct: Option<f64>,
    /// Days in the lookback.
    pub observations: usize,
}

/// IV rank and percentile of `current_iv_pct` against `lookback_iv_pct` (one IV per session,
/// any order; whether today is included is the caller's choice — including it adds a day that
/// is not below itself). Errors when the lookback is empty or a value is not a finite number
/// > 0.
pub fn iv_rank_percentile(
    lookback_iv_pct: &[f64],
    current_iv_pct: f64,
) -> Result<IvRankPercentile, VolError> {
    check_positive("lookback IV", lookback_iv_pct)?;
    check_positive("current IV", &[current_iv_pct])?;
    if lookback_iv_pct.is_empty() {
        return Err(VolError::TooFewObservations {
            what: "IV rank lookback",
            needed: 1,
            got: 0,
        });
    }
    let n = lookback_iv_pct.len();
    let min = lookback_iv_pct
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min);
    let max = lookback_iv_pct
        .iter()
        .copied()
        .fold(f64::NEG_INFINITY, f64::max);
    let below = lookback_iv_pct
        .iter()
        .filter(|&&v| v < current_iv_pct)
        .count();
    Ok(IvRankPercentile {
        current_iv_pct,
        iv_rank: (max > min)
            .then(|| ((current_iv_pct - min) / (max - min) * 100.0).clamp(0.0, 100.0)),
        iv_percentile: below as f64 / n as f64 * 100.0,
        iv_min_pct: min,
        iv_max_pct: max,
        iv_mean_pct: lookback_iv_pct.iter().sum::<f64>() / n as f64,
        iv_std_pct: super::realized::sample_std(lookback_iv_pct),
        observations: n,
    })
}

/// The volatility risk premium: implied minus realized.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Vrp {
    /// IV − HV, percentage points (positive: options price more movement than realized).
    pub premium_pct: f64,
    /// IV / HV (unitless); `None` when the realized vol is 0.
    pub ratio: Option<f64>,
}

/// VRP of a 30-day constant-maturity IV (`iv30d`) against a realized vol, both annualised
/// percentage points. Errors when either is not a finite number ≥ 0.
pub fn vrp(iv_pct: f64, hv_pct: f64) -> Result<Vrp, VolError> {
    for (what, value) in [("implied vol", iv_pct), ("realized vol", hv_pct)] {
        if !(value.is_finite() && value >= 0.0) {
            return Err(VolError::BadValue {
                what,
                index: 0,
                value,
                rule: "a finite number ≥ 0",
            });
        }
    }
    Ok(Vrp {
        premium_pct: iv_pct - hv_pct,
        ratio: (hv_pct > 0.0)
            .then(|| iv_pct / hv_pct)
            .filter(|r| r.is_finite()),
    })
}

/// Correlation and beta of an asset's daily log returns against a benchmark's.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CorrelationBeta {
    /// Returns used (the window).
    pub observations: usize,
    /// Pearson correlation, −1 to 1; `None` when either series has zero variance.
    pub correlation: Option<f64>,
    /// cov(asset, benchmark) / var(benchmark), unitless; `None` when the benchmark has zero
    /// variance.
    pub beta: Option<f64>,
}

/// Correlation and beta over the last `window` daily log returns of two close series aligned
/// by date (same length, oldest first; the caller drops dates missing from either).
///
/// Errors when the lengths differ, `window` < 2, there are fewer than `window` + 1 closes, or a
/// close in the window is not a finite number > 0.
pub fn correlation_beta(
    asset_closes: &[f64],
    benchmark_closes: &[f64],
    window: usize,
) -> Result<CorrelationBeta, VolError> {
    if asset_closes.len() != benchmark_closes.len() {
        return Err(VolError::LengthMismatch {
            what: "asset and benchmark closes",
            left: asset_closes.len(),
            right: benchmark_closes.len(),
        });
    }
    let needed = window.max(2) + 1;
    if asset_closes.len() < needed || window < 2 {
        return Err(VolError::TooFewObservations {
            what: "correlation and beta closes",
            needed,
            got: asset_closes.len(),
        });
    }
    let start = asset_closes.len() - (window + 1);
    let a = log_returns(&asset_closes[start..]).map_err(|e| shift(e, start, "asset closes"))?;
    let b =
        log_returns(&benchmark_closes[start..]).map_err(|e| shift(e, start, "benchmark closes"))?;
    let n = window as f64;
    let (mean_a, mean_b) = (a.iter().sum::<f64>() / n, b.iter().sum::<f64>() / n);
    let (mut cov, mut var_a, mut var_b) = (0.0, 0.0, 0.0);
    for (x, y) in a.iter().zip(&b) {
        let (dx, dy) = (x - mean_a, y - mean_b);
        cov += dx * dy;
        var_a += dx * dx;
        var_b += dy * dy;
    }
    // The n − 1 denominators cancel in both ratios.
    Ok(CorrelationBeta {
        observations: window,
        // Non-finite only when returns hundreds of orders of magnitude overflow the sums.
        correlation: (var_a > 0.0 && var_b > 0.0)
            .then(|| (cov / (var_a * var_b).sqrt()).clamp(-1.0, 1.0))
            .filter(|c| c.is_finite()),
        beta: (var_b > 0.0).then(|| cov / var_b).filter(|b| b.is_finite()),
    })
}

/// Re-labels an error on a tail slice with the index in the whole series.
fn shift(error: VolError, offset: usize, what: &'static str) -> VolError {
    match error {
        VolError::BadValue {
            index, value, rule, ..
        } => VolError::BadValue {
            what,
            index: index + offset,
            value,
            rule,
        },
        other => other,
    }
}

/// The gap move of an earnings reaction: previous close to next open, percent (5.05 = +5.05 %).
/// Errors when either price is not a finite number > 0.
pub fn gap_move_pct(prev_close: f64, next_open: f64) -> Result<f64, VolError> {
    check_positive("prev_close and next_open", &[prev_close, next_open])?;
    Ok((next_open / prev_close - 1.0) * 100.0)
}

/// One past report, as plain inputs.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EarningsMove {
    /// Gap move, percent (see [`gap_move_pct`]); ≥ 0 counts as up, < 0 as down.
    pub gap_move_pct: f64,
    /// EPS estimate, dollars per share.
    pub eps_estimate: Option<f64>,
    /// Reported EPS, dollars per share; actual ≥ estimate is a beat, below is a miss.
    pub eps_actual: Option<f64>,
    /// 30-day IV before the report, percentage points.
    pub iv_before_pct: Option<f64>,
    /// 30-day IV after the report, percentage points.
    pub iv_after_pct: Option<f64>,
}

impl EarningsMove {
    /// `Some(true)` for a beat, `Some(false)` for a miss, `None` without both EPS figures.
    pub fn beat(&self) -> Option<bool> {
        Some(self.eps_actual? >= self.eps_estimate?)
    }

    /// (before − after) / before × 100, percent: positive when IV fell ("crushed").
    pub fn iv_crush_pct(&self) -> Option<f64> {
        let (before, after) = (self.iv_before_pct?, self.iv_after_pct?);
        Some((before - after) / before * 100.0)
    }
}

/// Summary of past earnings moves (the `statistics` block of earnings-history). Moves are
/// signed percent; averages are `None` when no report falls in their group.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct EarningsMoveStats {
    /// Reports.
    pub total_earnings: usize,
    /// Reports with a gap ≥ 0.
    pub up_count: usize,
    /// Reports with a gap < 0.
    pub down_count: usize,
    /// Reports with EPS at or above the estimate.
    pub beat_count: usize,
    /// Reports with EPS below the estimate.
    pub miss_count: usize,
    /// Mean signed gap, percent.
    pub avg_move_pct: Option<f64>,
    /// Mean absolute gap, percent.
    pub avg_abs_move_pct: Option<f64>,
    /// Mean gap of the up reports, percent (≥ 0).
    pub avg_up_move_pct: Option<f64>,
    /// Mean gap of the down reports, percent (< 0).
    pub avg_down_move_pct: Option<f64>,
    /// Mean signed gap of the beats, percent.
    pub avg_beat_move_pct: Option<f64>,
    /// Mean signed gap of the misses, percent.
    pub avg_miss_move_pct: Option<f64>,
    /// Largest up gap, percent.
    pub max_up_pct: Option<f64>,
    /// Largest down gap, percent, signed (the most negative gap, e.g. −7.2).
    pub max_down_pct: Option<f64>,
    /// Mean IV crush over the reports with both IVs, percent of the IV before.
    pub avg_iv_crush_pct: Option<f64>,
    /// Median of the same.
    pub median_iv_crush_pct: Option<f64>,
}

/// The mean of `values`, summed in order; `None` for none.
pub fn mean(values: impl IntoIterator<Item = f64>) -> Option<f64> {
    let (sum, n) = values
        .into_iter()
        .fold((0.0, 0usize), |(s, n), v| (s + v, n + 1));
    (n > 0).then(|| sum / n as f64)
}

/// The median of `values` (the mean of the middle two for an even count); `None` for none.
pub fn median(values: &[f64]) -> Option<f64> {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    match sorted.len() {
        0 => None,
        n if n % 2 == 1 => Some(sorted[n / 2]),
        n => Some(0.5 * (sorted[n / 2 - 1] + sorted[n / 2])),
    }
}

/// Statistics over past earnings moves. Errors when a gap or EPS figure is not finite, or an
/// IV is not a finite number > 0 (index = the report's position).
pub fn earnings_move_stats(moves: &[EarningsMove]) -> Result<EarningsMoveStats, VolError> {
    for (i, m) in moves.iter().enumerate() {
        check_finite("gap_move_pct", i, m.gap_move_pct)?;
        for (what, value) in [
            ("eps_estimate", m.eps_estimate),
            ("eps_actual", m.eps_actual),
        ] {
            if let Some(v) = value {
                check_finite(what, i, v)?;
            }
        }
        for (what, value) in [
            ("iv_before_pct", m.iv_before_pct),
            ("iv_after_pct", m.iv_after_pct),
        ] {
            if let Some(v) = value
                && !(v.is_finite() && v > 0.0)
            {
                return Err(VolError::BadValue {
                    what,
                    index: i,
                    value: v,
                    rule: "a finite number > 0",
                });
            }
        }
    }
    let gaps = || moves.iter().map(|m| m.gap_move_pct);
    let ups = || gaps().filter(|g| *g >= 0.0);
    let downs = || gaps().filter(|g| *g < 0.0);
    let with_beat = |beat: bool| {
        moves
            .iter()
            .filter(move |m| m.beat() == Some(beat))
            .map(|m| m.gap_move_pct)
    };
    let crushes: Vec<f64> = moves
        .iter()
        .filter_map(EarningsMove::iv_crush_pct)
        .collect();
    Ok(EarningsMoveStats {
        total_earnings: moves.len(),
        up_count: ups().count(),
        down_count: downs().count(),
        beat_count: with_beat(true).count(),
        miss_count: with_beat(false).count(),
        avg_move_pct: mean(gaps()),
        avg_abs_move_pct: mean(gaps().map(f64::abs)),
        avg_up_move_pct: mean(ups()),
        avg_down_move_pct: mean(downs()),
        avg_beat_move_pct: mean(with_beat(true)),
        avg_miss_move_pct: mean(with_beat(false)),
        max_up_pct: ups().reduce(f64::max),
        max_down_pct: downs().reduce(f64::min),
        avg_iv_crush_pct: mean(crushes.iter().copied()),
        median_iv_crush_pct: median(&crushes),
    })
}

/// Share of `history` strictly below `value`, 0–100 (the VRP percentile and any other
/// "where does today sit" figure on a series that may be negative). Errors when the history is
/// empty or a value is not finite.
pub fn percentile_of(history: &[f64], value: f64) -> Result<f64, VolError> {
    check_finite("percentile value", 0, value)?;
    for (i, v) in history.iter().enumerate() {
        check_finite("percentile history", i, *v)?;
    }
    if history.is_empty() {
        return Err(VolError::TooFewObservations {
            what: "percentile history",
            needed: 1,
            got: 0,
        });
    }
    let below = history.iter().filter(|&&v| v < value).count();
    Ok(below as f64 / history.len() as f64 * 100.0)
}

/// Where a value stands in a history: the history's mean and sample standard deviation, the
/// value's z-score against them and its percentile ([`percentile_of`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Standing {
    /// Mean of the history; `None` when it is empty.
    pub mean: Option<f64>,
    /// Sample standard deviation (n − 1); `None` below two values or when zero.
    pub std: Option<f64>,
    /// (value − mean) / std.
    pub z_score: Option<f64>,
    /// Share of the history strictly below the value, 0–100.
    pub percentile: Option<f64>,
}

/// The [`Standing`] of `value` (when there is one) in `history` (finite values, any order).
pub fn standing(history: &[f64], value: Option<f64>) -> Standing {
    let mean = (!history.is_empty()).then(|| history.iter().sum::<f64>() / history.len() as f64);
    let std = super::realized::sample_std(history).filter(|s| *s > 0.0);
    Standing {
        mean,
        std,
        z_score: value.zip(mean).zip(std).map(|((v, m), s)| (v - m) / s),
        percentile: value.and_then(|v| percentile_of(history, v).ok()),
    }
}

/// The spread of a series: the figures of a volatility cone at one tenor.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Distribution {
    /// Values.
    pub count: usize,
    /// Smallest.
    pub min: f64,
    /// 10th percentile.
    pub p10: f64,
    /// 25th percentile.
    pub p25: f64,
    /// Median.
    pub p50: f64,
    /// 75th percentile.
    pub p75: f64,
    /// 90th percentile.
    pub p90: f64,
    /// Largest.
    pub max: f64,
    /// Mean.
    pub mean: f64,
}

/// Min, quartiles, 10th/90th percentiles, max and mean of `values` (any order). Percentiles
/// interpolate linearly between order statistics at rank p·(n − 1) (the common "linear"
/// definition, numpy's default). Errors when empty or a value is not finite.
pub fn distribution(values: &[f64]) -> Result<Distribution, VolError> {
    for (i, v) in values.iter().enumerate() {
        check_finite("distribution values", i, *v)?;
    }
    if values.is_empty() {
        return Err(VolError::TooFewObservations {
            what: "distribution values",
            needed: 1,
            got: 0,
        });
    }
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    let at = |p: f64| {
        let rank = p * (n - 1) as f64;
        let lower = rank.floor() as usize;
        let upper = (lower + 1).min(n - 1);
        sorted[lower] + (sorted[upper] - sorted[lower]) * (rank - lower as f64)
    };
    Ok(Distribution {
        count: n,
        min: sorted[0],
        p10: at(0.10),
        p25: at(0.25),
        p50: at(0.50),
        p75: at(0.75),
        p90: at(0.90),
        max: sorted[n - 1],
        mean: sorted.iter().sum::<f64>() / n as f64,
    })
}
