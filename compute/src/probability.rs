//! Lognormal probabilities at expiration, the basis of probability-of-profit figures.
//!
//! Under the risk-neutral lognormal law with forward F, the terminal price S_T satisfies
//! P(S_T > K) = N(d2) with d2 = (ln(F/K) − σ²T/2)/(σ√T) — the "N(d2) style" the spec names.
//! Time basis: `years` is calendar time to expiry / 365, as everywhere in the service.

use crate::pricing::special::norm_cdf;

/// P(S_T > level) for a lognormal terminal price with the given forward, volatility (decimal)
/// and time in years. Degenerate inputs (σ√T = 0) give the deterministic answer.
pub fn probability_above(forward: f64, level: f64, vol: f64, years: f64) -> f64 {
    if level <= 0.0 {
        return 1.0;
    }
    let total_vol = vol * years.max(0.0).sqrt();
    if !(total_vol > 0.0) {
        return if forward > level { 1.0 } else { 0.0 };
    }
    let d2 = (forward / level).ln() / total_vol - 0.5 * total_vol;
    norm_cdf(d2)
}

/// P(S_T < level); the complement of [`probability_above`], computed without cancellation.
pub fn probability_below(forward: f64, level: f64, vol: f64, years: f64) -> f64 {
    if level <= 0.0 {
        return 0.0;
    }
    let total_vol = vol * years.max(0.0).sqrt();
    if !(total_vol > 0.0) {
        return if forward < level { 1.0 } else { 0.0 };
    }
    let d2 = (forward / level).ln() / total_vol - 0.5 * total_vol;
    norm_cdf(-d2)
}

/// P(lower < S_T < upper); `None` bounds are open ends (0 and +∞).
pub fn probability_between(
    forward: f64,
    lower: Option<f64>,
    upper: Option<f64>,
    vol: f64,
    years: f64,
) -> f64 {
    let above_lower = lower.map_or(1.0, |l| probability_above(forward, l, vol, years));
    let above_upper = upper.map_or(0.0, |u| probability_above(forward, u, vol, years));
    (above_lower - above_upper).clamp(0.0, 1.0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn at_the_forward_the_median_is_below_it() {
        // The lognormal median e^{−σ²T/2}·F lies below F, so P(S_T > F) < ½.
        let p = probability_above(100.0, 100.0, 0.2, 1.0);
        assert!((p - norm_cdf(-0.1)).abs() < 1e-16);
        assert!(p < 0.5);
    }

    #[test]
    fn complements_and_intervals_add_up() {
        for &level in &[50.0, 90.0, 100.0, 130.0, 400.0] {
            let a = probability_above(100.0, level, 0.35, 0.25);
            let b = probability_below(100.0, level, 0.35, 0.25);
            assert!((a + b - 1.0).abs() < 1e-15);
        }
        let inside = probability_between(100.0, Some(90.0), Some(110.0), 0.3, 0.5);
        let outside =
            probability_below(100.0, 90.0, 0.3, 0.5) + probability_above(100.0, 110.0, 0.3, 0.5);
        assert!((inside + outside - 1.0).abs() < 1e-15);
    }

    #[test]
    fn zero_volatility_is_deterministic() {
        assert_eq!(probability_above(100.0, 99.0, 0.0, 1.0), 1.0);
        assert_eq!(probability_above(100.0, 101.0, 0.3, 0.0), 0.0);
    }
}
