//! Correlation and beta of daily log returns between two symbols.
//!
//! Both series are closes by session. A return is `ln(close_t / close_{t-1})` between two
//! consecutive stored sessions of one symbol; the two return series are then joined on the
//! dates they share, so a session missing from either side drops out of both.

use chrono::NaiveDate;

/// Returns in the one-month window.
pub const WINDOW_1M: usize = 21;
/// Returns in the one-year window.
pub const WINDOW_1Y: usize = 252;

/// Daily log returns of `closes` (ascending by date), dated by the later session. A pair
/// with a non-positive or non-finite close is skipped.
pub fn log_returns(closes: &[(NaiveDate, f64)]) -> Vec<(NaiveDate, f64)> {
    closes
        .windows(2)
        .filter(|w| w[0].1 > 0.0 && w[1].1 > 0.0 && w[0].1.is_finite() && w[1].1.is_finite())
        .map(|w| (w[1].0, (w[1].1 / w[0].1).ln()))
        .collect()
}

/// The returns of `a` and `b` on the dates both hold, ascending: `(date, a, b)`.
pub fn align(a: &[(NaiveDate, f64)], b: &[(NaiveDate, f64)]) -> Vec<(NaiveDate, f64, f64)> {
    let (mut i, mut j, mut out) = (0, 0, Vec::new());
    while i < a.len() && j < b.len() {
        match a[i].0.cmp(&b[j].0) {
            std::cmp::Ordering::Less => i += 1,
            std::cmp::Ordering::Greater => j += 1,
            std::cmp::Ordering::Equal => {
                out.push((a[i].0, a[i].1, b[j].1));
                i += 1;
                j += 1;
            }
        }
    }
    out
}

/// Sample covariance of the pairs and sample variances of each side (n − 1), `None` below two
/// pairs.
fn moments(pairs: &[(NaiveDate, f64, f64)]) -> Option<(f64, f64, f64)> {
    let n = pairs.len();
    if n < 2 {
        return None;
    }
    let nf = n as f64;
    let mx = pairs.iter().map(|p| p.1).sum::<f64>() / nf;
    let my = pairs.iter().map(|p| p.2).sum::<f64>() / nf;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for p in pairs {
        let (dx, dy) = (p.1 - mx, p.2 - my);
        sxy += dx * dy;
        sxx += dx * dx;
        syy += dy * dy;
    }
    let d = nf - 1.0;
    Some((sxy / d, sxx / d, syy / d))
}

/// Pearson correlation of `(date, x, y)` pairs; `None` below two pairs or when either side
/// does not vary.
pub fn correlation(pairs: &[(NaiveDate, f64, f64)]) -> Option<f64> {
    let (cxy, vx, vy) = moments(pairs)?;
    (vx > 0.0 && vy > 0.0).then(|| (cxy / (vx * vy).sqrt()).clamp(-1.0, 1.0))
}

/// Beta of `x` on the benchmark `y`: cov(x, y) / var(y); `None` below two pairs or when the
/// benchmark does not vary.
pub fn beta(pairs: &[(NaiveDate, f64, f64)]) -> Option<f64> {
    let (cxy, _, vy) = moments(pairs)?;
    (vy > 0.0).then(|| cxy / vy)
}

/// The last `n` pairs, or `None` when fewer are held.
pub fn last_n(pairs: &[(NaiveDate, f64, f64)], n: usize) -> Option<&[(NaiveDate, f64, f64)]> {
    pairs.len().checked_sub(n).map(|s| &pairs[s..])
}

/// One element of a rolling series.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RollingPoint {
    /// The shared session the windows end on.
    pub date: NaiveDate,
    /// Correlation over the last [`WINDOW_1M`] pairs; `None` until that many are held.
    pub correl_1m: Option<f64>,
    /// Correlation over the last [`WINDOW_1Y`] pairs; `None` until that many are held.
    pub correl_1y: Option<f64>,
    /// Beta of `x` on `y` over the last [`WINDOW_1M`] pairs.
    pub beta_1m: Option<f64>,
}

/// The rolling windows ending on each of the last `days` aligned pairs.
pub fn rolling(pairs: &[(NaiveDate, f64, f64)], days: usize) -> Vec<RollingPoint> {
    let start = pairs.len().saturating_sub(days);
    (start..pairs.len())
        .map(|i| {
            let upto = &pairs[..=i];
            let w1m = last_n(upto, WINDOW_1M);
            RollingPoint {
                date: pairs[i].0,
                correl_1m: w1m.and_then(correlation),
                correl_1y: last_n(upto, WINDOW_1Y).and_then(correlation),
                beta_1m: w1m.and_then(beta),
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
    fn log_returns_are_dated_by_the_later_session() {
        let r = log_returns(&[(d(0), 100.0), (d(1), 110.0), (d(3), 99.0)]);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].0, d(1));
        assert!((r[0].1 - (1.1f64).ln()).abs() < 1e-15);
        assert!((r[1].1 - (0.9f64).ln()).abs() < 1e-15);
    }

    #[test]
    fn align_keeps_only_shared_dates() {
        let a = [(d(1), 1.0), (d(2), 2.0), (d(4), 4.0)];
        let b = [(d(2), 20.0), (d(3), 30.0), (d(4), 40.0)];
        assert_eq!(align(&a, &b), vec![(d(2), 2.0, 20.0), (d(4), 4.0, 40.0)]);
    }

    #[test]
    fn scaled_series_has_unit_correlation_and_its_scale_as_beta() {
        let pairs: Vec<_> = (0..30)
            .map(|i| {
                let y = ((i * 7 % 11) as f64 - 5.0) / 100.0;
                (d(i), 2.0 * y + 0.001, y)
            })
            .collect();
        assert!((correlation(&pairs).unwrap() - 1.0).abs() < 1e-12);
        assert!((beta(&pairs).unwrap() - 2.0).abs() < 1e-12);
    }

    #[test]
    fn hand_computed_three_pairs() {
        // x = 1, 2, 3; y = 1, 3, 2: means 2, 2; sxy = (-1)(-1) + 0 + (1)(0) = 1; sxx = 2,
        // syy = 2: corr = 0.5, beta = 0.5.
        let pairs = [(d(0), 1.0, 1.0), (d(1), 2.0, 3.0), (d(2), 3.0, 2.0)];
        assert!((correlation(&pairs).unwrap() - 0.5).abs() < 1e-15);
        assert!((beta(&pairs).unwrap() - 0.5).abs() < 1e-15);
    }

    #[test]
    fn flat_benchmark_and_short_series_have_no_figure() {
        let flat = [(d(0), 1.0, 1.0), (d(1), 2.0, 1.0)];
        assert_eq!(correlation(&flat), None);
        assert_eq!(beta(&flat), None);
        assert_eq!(correlation(&flat[..1]), None);
    }

    #[test]
    fn rolling_is_null_until_the_window_fills() {
        let pairs: Vec<_> = (0..30)
            .map(|i| (d(i), (i as f64).sin(), (i as f64 * 1.3).cos()))
            .collect();
        let s = rolling(&pairs, 12);
        assert_eq!(s.len(), 12);
        assert_eq!(s[0].date, d(18));
        assert_eq!(s[0].correl_1m, None);
        assert_eq!(s[2].date, d(20));
        assert_eq!(s[2].correl_1m, correlation(&pairs[0..21]));
        assert_eq!(s[11].beta_1m, beta(&pairs[9..30]));
        assert!(s.iter().all(|p| p.correl_1y.is_none()));
    }
}
