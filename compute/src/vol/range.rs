//! Intraday-range realized volatility from daily OHLC bars: Parkinson, Garman–Klass and
//! Yang–Zhang.
//!
//! | quantity | unit |
//! | --- | --- |
//! | prices (`open`, `high`, `low`, `close`) | dollars, finite and > 0 |
//! | window N | sessions (bars) |
//! | result | annualised percentage points: `100 · √(252 · σ²_daily)` |
//!
//! Per bar i, with natural logs: `hlᵢ = ln(Hᵢ/Lᵢ)`, `coᵢ = ln(Cᵢ/Oᵢ)`, the overnight return
//! `ocᵢ = ln(Oᵢ/Cᵢ₋₁)` and the Rogers–Satchell term
//! `rsᵢ = ln(Hᵢ/Cᵢ)·ln(Hᵢ/Oᵢ) + ln(Lᵢ/Cᵢ)·ln(Lᵢ/Oᵢ)`. Over the last N bars:
//!
//! - **Parkinson** (1980): `σ² = Σ hlᵢ² / (4 ln 2 · N)`. Uses N bars.
//! - **Garman–Klass** (1980): `σ² = (1/N) Σ [½ hlᵢ² − (2 ln 2 − 1) coᵢ²]`. Uses N bars.
//! - **Yang–Zhang** (2000): `σ² = σ²_o + k σ²_c + (1 − k) σ²_rs` with `σ²_o` and `σ²_c` the sample
//!   variances (n − 1, mean subtracted) of the N overnight returns `oc` and the N open-to-close
//!   returns `co`, `σ²_rs = (1/N) Σ rsᵢ`, and `k = 0.34 / (1.34 + (N + 1)/(N − 1))`. The first
//!   overnight return needs the close before the window, so Yang–Zhang uses N + 1 bars (N ≥ 2).
//!
//! Parkinson and Garman–Klass assume no drift and no opening jump, so they read low against
//! close-to-close on series with overnight gaps; Yang–Zhang is unbiased under drift and gaps
//! (it is the one the `hv-regimes` payload should name unless a caller asks otherwise).
//!
//! A window with a bad bar (a non-finite or non-positive price, `high < low`, or an open or close
//! outside [low, high]) is a [`VolError::BadValue`] naming the bar; a window longer than the
//! history is `Ok(None)`.

use super::VolError;
use super::realized::TRADING_DAYS_PER_YEAR;

/// One session's open, high, low and close, dollars.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OhlcBar {
    /// First trade (or the official open), dollars.
    pub open: f64,
    /// Session high, dollars.
    pub high: f64,
    /// Session low, dollars.
    pub low: f64,
    /// Close, dollars.
    pub close: f64,
}

/// Which range estimator.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum RangeEstimator {
    /// Parkinson (1980), high–low only.
    Parkinson,
    /// Garman–Klass (1980), high–low and open–close.
    GarmanKlass,
    /// Yang–Zhang (2000), overnight, open–close and Rogers–Satchell terms.
    YangZhang,
}

impl RangeEstimator {
    /// The name a payload states (`"parkinson"`, `"garman_klass"`, `"yang_zhang"`).
    pub fn code(self) -> &'static str {
        match self {
            Self::Parkinson => "parkinson",
            Self::GarmanKlass => "garman_klass",
            Self::YangZhang => "yang_zhang",
        }
    }

    /// Bars a window of `window` sessions reads: N, or N + 1 for Yang–Zhang.
    pub fn bars_needed(self, window: usize) -> usize {
        match self {
            Self::YangZhang => window + 1,
            Self::Parkinson | Self::GarmanKlass => window,
        }
    }

    /// The smallest window the estimator is defined for: 1, or 2 for Yang–Zhang (its sample
    /// variances divide by N − 1).
    pub fn min_window(self) -> usize {
        match self {
            Self::YangZhang => 2,
            Self::Parkinson | Self::GarmanKlass => 1,
        }
    }
}

/// Checks one bar; `index` is its position in the caller's slice.
fn check_bar(bar: &OhlcBar, index: usize) -> Result<(), VolError> {
    let bad = |what, value, rule| VolError::BadValue {
        what,
        index,
        value,
        rule,
    };
    for (what, value) in [
        ("bar open", bar.open),
        ("bar high", bar.high),
        ("bar low", bar.low),
        ("bar close", bar.close),
    ] {
        if !(value.is_finite() && value > 0.0) {
            return Err(bad(what, value, "a finite number > 0"));
        }
    }
    if bar.high < bar.low {
        return Err(bad("bar high", bar.high, "≥ the bar's low"));
    }
    for (what, value) in [("bar open", bar.open), ("bar close", bar.close)] {
        if value > bar.high || value < bar.low {
            return Err(bad(what, value, "within the bar's [low, high]"));
        }
    }
    Ok(())
}

/// Checks every bar of `bars`; `offset` is the index of `bars[0]` in the caller's slice.
fn check_bars(bars: &[OhlcBar], offset: usize) -> Result<(), VolError> {
    bars.iter()
        .enumerate()
        .try_for_each(|(i, bar)| check_bar(bar, offset + i))
}

fn ln_ratio(a: f64, b: f64) -> f64 {
    (a / b).ln()
}

/// Daily variance of the estimator over exactly `bars` (already checked, the right count).
fn daily_variance(bars: &[OhlcBar], estimator: RangeEstimator) -> f64 {
    match estimator {
        RangeEstimator::Parkinson => {
            let n = bars.len() as f64;
            let sum: f64 = bars.iter().map(|b| ln_ratio(b.high, b.low).powi(2)).sum();
            sum / (4.0 * std::f64::consts::LN_2 * n)
        }
        RangeEstimator::GarmanKlass => {
            let n = bars.len() as f64;
            let c = 2.0 * std::f64::consts::LN_2 - 1.0;
            let sum: f64 = bars
                .iter()
                .map(|b| {
                    0.5 * ln_ratio(b.high, b.low).powi(2) - c * ln_ratio(b.close, b.open).powi(2)
                })
                .sum();
            sum / n
        }
        RangeEstimator::YangZhang => {
            // bars[0] only supplies the close before the window.
            let window = &bars[1..];
            let n = window.len() as f64;
            let overnight: Vec<f64> = bars
                .windows(2)
                .map(|w| ln_ratio(w[1].open, w[0].close))
                .collect();
            let open_close: Vec<f64> = window.iter().map(|b| ln_ratio(b.close, b.open)).collect();
            let rogers_satchell: f64 = window
                .iter()
                .map(|b| {
                    ln_ratio(b.high, b.close) * ln_ratio(b.high, b.open)
                        + ln_ratio(b.low, b.close) * ln_ratio(b.low, b.open)
                })
                .sum::<f64>()
                / n;
            let k = 0.34 / (1.34 + (n + 1.0) / (n - 1.0));
            sample_variance(&overnight)
                + k * sample_variance(&open_close)
                + (1.0 - k) * rogers_satchell
        }
    }
}

/// Sample variance (n − 1), two-pass; callers pass ≥ 2 values.
fn sample_variance(values: &[f64]) -> f64 {
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0)
}

fn annualised_pct(daily_variance: f64) -> Option<f64> {
    // Garman–Klass can go (slightly) negative on bars whose open–close move is most of the range.
    let pct = 100.0 * (TRADING_DAYS_PER_YEAR * daily_variance.max(0.0)).sqrt();
    pct.is_finite().then_some(pct)
}

/// The estimator over exactly the last `window` sessions of `bars` (oldest first), annualised
/// percentage points.
///
/// `Ok(None)` when `window` is below [`RangeEstimator::min_window`] or there are fewer bars
/// than [`RangeEstimator::bars_needed`]; an error when a bar in the window is bad (its index is
/// the position in `bars`). A negative Garman–Klass variance (possible on a handful of bars
/// that closed at their extremes) is reported as 0.
pub fn range_vol(
    bars: &[OhlcBar],
    window: usize,
    estimator: RangeEstimator,
) -> Result<Option<f64>, VolError> {
    if window < estimator.min_window() {
        return Ok(None);
    }
    let needed = estimator.bars_needed(window);
    let Some(start) = bars.len().checked_sub(needed) else {
        return Ok(None);
    };
    let used = &bars[start..];
    check_bars(used, start)?;
    Ok(annualised_pct(daily_variance(used, estimator)))
}

/// [`range_vol`] with [`RangeEstimator::Parkinson`].
pub fn parkinson(bars: &[OhlcBar], window: usize) -> Result<Option<f64>, VolError> {
    range_vol(bars, window, RangeEstimator::Parkinson)
}

/// [`range_vol`] with [`RangeEstimator::GarmanKlass`].
pub fn garman_klass(bars: &[OhlcBar], window: usize) -> Result<Option<f64>, VolError> {
    range_vol(bars, window, RangeEstimator::GarmanKlass)
}

/// [`range_vol`] with [`RangeEstimator::YangZhang`].
pub fn yang_zhang(bars: &[OhlcBar], window: usize) -> Result<Option<f64>, VolError> {
    range_vol(bars, window, RangeEstimator::YangZhang)
}

/// The estimator over `window` sessions as of each bar: element i is [`range_vol`] of
/// `bars[..=i]` (`None` until enough bars). Same length as `bars`. Every bar is checked first,
/// so one bad bar anywhere is an error rather than a hole in the series.
pub fn range_vol_series(
    bars: &[OhlcBar],
    window: usize,
    estimator: RangeEstimator,
) -> Result<Vec<Option<f64>>, VolError> {
    check_bars(bars, 0)?;
    let needed = estimator.bars_needed(window);
    // Each window recomputed in full, as `hv_series` does: O(n·N), no running-sum drift.
    Ok((0..bars.len())
        .map(|i| {
            (window >= estimator.min_window() && i + 1 >= needed)
                .then(|| annualised_pct(daily_variance(&bars[i + 1 - needed..=i], estimator)))
                .flatten()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(open: f64, high: f64, low: f64, close: f64) -> OhlcBar {
        OhlcBar {
            open,
            high,
            low,
            close,
        }
    }

    /// Three bars worked by hand (values in the comments are the formulas' terms).
    fn bars() -> Vec<OhlcBar> {
        vec![
            bar(100.0, 102.0, 99.0, 101.0),
            bar(101.5, 103.0, 100.5, 102.0),
            bar(101.0, 101.5, 98.0, 99.0),
        ]
    }

    #[test]
    fn parkinson_matches_the_formula_written_out() {
        let b = bars();
        let hl2: f64 = b[1..].iter().map(|x| (x.high / x.low).ln().powi(2)).sum();
        let expected = 100.0 * (252.0 * hl2 / (4.0 * 2f64.ln() * 2.0)).sqrt();
        let got = parkinson(&b, 2).unwrap().unwrap();
        assert!((got - expected).abs() < 1e-12 * expected);
    }

    #[test]
    fn yang_zhang_uses_the_close_before_the_window() {
        let b = bars();
        let o = [(101.5f64 / 101.0).ln(), (101.0f64 / 102.0).ln()];
        let c = [(102.0f64 / 101.5).ln(), (99.0f64 / 101.0).ln()];
        let var = |x: [f64; 2]| {
            let m = (x[0] + x[1]) / 2.0;
            (x[0] - m).powi(2) + (x[1] - m).powi(2)
        };
        let rs = |x: &OhlcBar| {
            (x.high / x.close).ln() * (x.high / x.open).ln()
                + (x.low / x.close).ln() * (x.low / x.open).ln()
        };
        let k = 0.34 / (1.34 + 3.0);
        let daily = var(o) + k * var(c) + (1.0 - k) * (rs(&b[1]) + rs(&b[2])) / 2.0;
        let got = yang_zhang(&b, 2).unwrap().unwrap();
        assert!((got - 100.0 * (252.0 * daily).sqrt()).abs() < 1e-12 * got);
        assert_eq!(yang_zhang(&b, 3).unwrap(), None, "needs N + 1 bars");
        assert_eq!(yang_zhang(&b, 1).unwrap(), None, "N − 1 denominators");
    }

    #[test]
    fn bad_bars_are_named() {
        let mut b = bars();
        b[1].high = 100.0; // below the open and the close
        let err = garman_klass(&b, 2).unwrap_err();
        assert!(matches!(err, VolError::BadValue { index: 1, .. }), "{err}");
        b[1] = bar(101.5, 103.0, 100.5, f64::NAN);
        assert!(parkinson(&b, 3).is_err());
        // A bad bar outside the window does not matter to the point figure...
        assert!(parkinson(&b, 1).unwrap().is_some());
        // ...but the series checks every bar.
        assert!(range_vol_series(&b, 1, RangeEstimator::Parkinson).is_err());
        b[1] = bar(101.5, 100.0, 102.0, 101.0); // high < low
        assert!(parkinson(&b, 2).is_err());
    }

    #[test]
    fn series_ends_with_the_point_figure() {
        let b = bars();
        for estimator in [
            RangeEstimator::Parkinson,
            RangeEstimator::GarmanKlass,
            RangeEstimator::YangZhang,
        ] {
            let series = range_vol_series(&b, 2, estimator).unwrap();
            assert_eq!(series.len(), 3);
            assert_eq!(
                series[2],
                range_vol(&b, 2, estimator).unwrap(),
                "{estimator:?}"
            );
            assert_eq!(series[0], None);
        }
    }
}
