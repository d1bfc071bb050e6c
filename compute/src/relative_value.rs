//! Relative value of implied volatility: the ratio of a ticker's 30-day constant-maturity IV to
//! a benchmark's (SPY, or the sector ETF), joined on trade dates, with its 1m / 1y averages,
//! sample standard deviation, z-score, percentile, sigma bands and a RICH / CHEAP / NEUTRAL
//! signal. Pure functions over dated slices; IVs in percentage points, ratios unitless.

use chrono::NaiveDate;

/// Sessions in the 1m average of the ratio.
pub const WINDOW_1M: usize = 21;
/// Sessions in the 1y distribution of the ratio (average, std, z-score, percentile, bands).
pub const WINDOW_1Y: usize = 252;
/// Fewest ratios the 1y distribution needs before its statistics are given.
pub const MIN_1Y_SAMPLE: usize = 60;
/// |z| at or beyond which the current ratio is RICH (z ≥) or CHEAP (z ≤ −).
pub const Z_SIGNAL: f64 = 1.5;
/// The rule of the signal, stated in payloads.
pub const SIGNAL_RULE: &str = "RICH when the current iv_spy_ratio's z-score vs its 1y \
                               distribution is >= Z_SIGNAL, CHEAP when <= -Z_SIGNAL, else NEUTRAL";

/// One joined session: the date, the ticker's IV, the benchmark's IV and their ratio.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioPoint {
    /// Trade date.
    pub date: NaiveDate,
    /// The ticker's IV, percentage points.
    pub iv: f64,
    /// The benchmark's IV, percentage points.
    pub benchmark_iv: f64,
    /// `iv / benchmark_iv`.
    pub ratio: f64,
}

/// Joins two ascending dated IV series on their shared dates; a date is kept when both IVs are
/// finite and > 0.
pub fn ratio_series(
    ticker: &[(NaiveDate, f64)],
    benchmark: &[(NaiveDate, f64)],
) -> Vec<RatioPoint> {
    let (mut i, mut j) = (0, 0);
    let mut out = Vec::new();
    while i < ticker.len() && j < benchmark.len() {
        let (da, a) = ticker[i];
        let (db, b) = benchmark[j];
        match da.cmp(&db) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                if a.is_finite() && b.is_finite() && a > 0.0 && b > 0.0 {
                    out.push(RatioPoint {
                        date: da,
                        iv: a,
                        benchmark_iv: b,
                        ratio: a / b,
                    });
                }
                i += 1;
                j += 1;
            }
        }
    }
    out
}

/// Arithmetic mean; `None` for none.
pub fn mean(values: &[f64]) -> Option<f64> {
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// Sample standard deviation (n − 1 denominator); `None` below two values.
pub fn sample_std(values: &[f64]) -> Option<f64> {
    let m = mean(values)?;
    (values.len() >= 2).then(|| {
        let ss: f64 = values.iter().map(|v| (v - m) * (v - m)).sum();
        (ss / (values.len() - 1) as f64).sqrt()
    })
}

/// Share of `values` strictly below `current`, percent 0–100.
pub fn percentile_of(values: &[f64], current: f64) -> Option<f64> {
    (!values.is_empty()).then(|| {
        100.0 * values.iter().filter(|v| **v < current).count() as f64 / values.len() as f64
    })
}

/// The signal label for a z-score.
pub fn signal(z: Option<f64>) -> &'static str {
    match z {
        Some(z) if z >= Z_SIGNAL => "RICH",
        Some(z) if z <= -Z_SIGNAL => "CHEAP",
        _ => "NEUTRAL",
    }
}

/// Statistics of the ratio series as of its last point.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RatioStats {
    /// The last ratio.
    pub current: f64,
    /// Mean of the last [`WINDOW_1M`] ratios; `None` with fewer.
    pub avg_1m: Option<f64>,
    /// Mean of the last up to [`WINDOW_1Y`] ratios (current included); `None` below
    /// [`MIN_1Y_SAMPLE`].
    pub avg_1y: Option<f64>,
    /// Sample std of the same window.
    pub std_1y: Option<f64>,
    /// (current − avg_1y) / std_1y; `None` when the std is 0 or missing.
    pub z: Option<f64>,
    /// Share of the 1y window strictly below the current ratio, percent.
    pub percentile: Option<f64>,
    /// Ratios in the 1y window.
    pub sample_1y: usize,
}

/// The statistics of `ratios` (ascending by date) as of the last one; `None` for none.
pub fn ratio_stats(ratios: &[f64]) -> Option<RatioStats> {
    let current = *ratios.last()?;
    let n = ratios.len();
    let m1 = (n >= WINDOW_1M).then(|| &ratios[n - WINDOW_1M..]);
    let y = &ratios[n.saturating_sub(WINDOW_1Y)..];
    let enough = y.len() >= MIN_1Y_SAMPLE;
    let avg_1y = enough.then(|| mean(y)).flatten();
    let std_1y = enough.then(|| sample_std(y)).flatten();
    let z = match (avg_1y, std_1y) {
        (Some(a), Some(s)) if s > 0.0 => Some((current - a) / s),
        _ => None,
    };
    Some(RatioStats {
        current,
        avg_1m: m1.and_then(mean),
        avg_1y,
        std_1y,
        z,
        percentile: enough.then(|| percentile_of(y, current)).flatten(),
        sample_1y: y.len(),
    })
}

/// One sigma band of the 1y ratio and the ticker IV it implies at today's benchmark IV.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Band {
    /// Multiple of the std: −2, −1, 1 or 2.
    pub sigmas: f64,
    /// avg_1y + sigmas × std_1y.
    pub ratio: f64,
    /// ratio × benchmark IV, percentage points.
    pub implied_iv: f64,
}

/// Bands at −2σ, −1σ, +1σ, +2σ around the 1y average.
pub fn sigma_bands(avg_1y: f64, std_1y: f64, benchmark_iv: f64) -> Vec<Band> {
    [-2.0, -1.0, 1.0, 2.0]
        .into_iter()
        .map(|sigmas| {
            let ratio = avg_1y + sigmas * std_1y;
            Band {
                sigmas,
                ratio,
                implied_iv: ratio * benchmark_iv,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn d(i: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 1, 1).unwrap() + chrono::Days::new(u64::from(i))
    }

    #[test]
    fn join_keeps_shared_positive_dates() {
        let a = [(d(0), 20.0), (d(1), 30.0), (d(3), 40.0)];
        let b = [(d(1), 15.0), (d(2), 10.0), (d(3), 0.0)];
        let r = ratio_series(&a, &b);
        assert_eq!(r.len(), 1);
        assert_eq!(r[0].date, d(1));
        assert!((r[0].ratio - 2.0).abs() < 1e-15);
    }

    #[test]
    fn hand_checked_stats() {
        // 59 ones and 1 three: mean = 62/60, z and percentile by hand.
        let mut v = vec![1.0; 59];
        v.push(3.0);
        let s = ratio_stats(&v).unwrap();
        let m = 62.0 / 60.0;
        let var = (59.0 * (1.0 - m) * (1.0 - m) + (3.0 - m) * (3.0 - m)) / 59.0;
        assert!((s.avg_1y.unwrap() - m).abs() < 1e-12);
        assert!((s.z.unwrap() - (3.0 - m) / var.sqrt()).abs() < 1e-12);
        assert!((s.percentile.unwrap() - 59.0 / 60.0 * 100.0).abs() < 1e-12);
        assert_eq!(signal(s.z), "RICH");
        assert!((s.avg_1m.unwrap() - 23.0 / 21.0).abs() < 1e-12);
        assert_eq!(ratio_stats(&v[..59]).unwrap().z, None);
    }

    #[test]
    fn bands_are_symmetric() {
        let b = sigma_bands(1.2, 0.1, 20.0);
        assert_eq!(b.len(), 4);
        assert!((b[0].ratio - 1.0).abs() < 1e-12);
        assert!((b[3].implied_iv - 28.0).abs() < 1e-12);
    }
}
