//! The labels the volatility endpoints print, each a pure function of numbers with its
//! thresholds as constants, so the rule a payload states is the rule that chose the label.
//!
//! - [`iv_state`]: where IV rank puts today's IV, `VERY_LOW` … `VERY_HIGH`.
//! - [`iv_opportunity`]: `SELL_VOL` / `BUY_VOL` / `NO_EXTREME` from the IV z-score.
//! - [`vrp_assessment`]: a plain label for the 30-day premium in points.
//! - [`vrp_signal`] and [`vrp_regime`]: per-expiration premium as a share of realized, and the
//!   curve's average.

/// Sessions in the one-month variants of rank, percentile and averages (today included).
pub const ONE_MONTH_SESSIONS: usize = 21;

/// IV rank below which IV is `VERY_LOW`, 0–100.
pub const IV_STATE_VERY_LOW_BELOW: f64 = 10.0;
/// IV rank below which IV is `LOW`.
pub const IV_STATE_LOW_BELOW: f64 = 30.0;
/// IV rank at or above which IV is `HIGH` (below it, and at or above the `LOW` bound: `NORMAL`).
pub const IV_STATE_HIGH_FROM: f64 = 70.0;
/// IV rank at or above which IV is `VERY_HIGH`.
pub const IV_STATE_VERY_HIGH_FROM: f64 = 90.0;

/// `VERY_LOW`, `LOW`, `NORMAL`, `HIGH` or `VERY_HIGH` for an IV rank (0–100).
pub fn iv_state(iv_rank: f64) -> &'static str {
    match iv_rank {
        r if r < IV_STATE_VERY_LOW_BELOW => "VERY_LOW",
        r if r < IV_STATE_LOW_BELOW => "LOW",
        r if r < IV_STATE_HIGH_FROM => "NORMAL",
        r if r < IV_STATE_VERY_HIGH_FROM => "HIGH",
        _ => "VERY_HIGH",
    }
}

/// The rule behind [`iv_state`], as a payload states it.
pub fn iv_state_rule() -> String {
    format!(
        "iv_rank < {IV_STATE_VERY_LOW_BELOW}: VERY_LOW; < {IV_STATE_LOW_BELOW}: LOW; \
         < {IV_STATE_HIGH_FROM}: NORMAL; < {IV_STATE_VERY_HIGH_FROM}: HIGH; otherwise VERY_HIGH"
    )
}

/// |z| at or above which IV is an extreme worth trading against.
pub const IV_Z_EXTREME: f64 = 1.5;

/// `SELL_VOL` when IV is at least [`IV_Z_EXTREME`] standard deviations above its mean,
/// `BUY_VOL` when as far below, `NO_EXTREME` otherwise.
pub fn iv_opportunity(z_score: f64) -> &'static str {
    if z_score >= IV_Z_EXTREME {
        "SELL_VOL"
    } else if z_score <= -IV_Z_EXTREME {
        "BUY_VOL"
    } else {
        "NO_EXTREME"
    }
}

/// The rule behind [`iv_opportunity`].
pub fn iv_opportunity_rule() -> String {
    format!(
        "z = (current_iv - mean_iv) / std_iv; z >= {IV_Z_EXTREME}: SELL_VOL; \
         z <= -{IV_Z_EXTREME}: BUY_VOL; otherwise NO_EXTREME"
    )
}

/// Premium (IV − realized, points) at or above which options are `RICH`.
pub const VRP_RICH_FROM_POINTS: f64 = 4.0;
/// Premium at or below which options are `CHEAP`.
pub const VRP_CHEAP_TO_POINTS: f64 = -2.0;

/// `RICH`, `CHEAP` or `FAIR` for a 30-day premium in points: options priced well above the move
/// the stock has made, below it, or near it. Most names carry a small positive premium most of
/// the time, hence the asymmetric bounds.
pub fn vrp_assessment(premium_points: f64) -> &'static str {
    if premium_points >= VRP_RICH_FROM_POINTS {
        "RICH"
    } else if premium_points <= VRP_CHEAP_TO_POINTS {
        "CHEAP"
    } else {
        "FAIR"
    }
}

/// The rule behind [`vrp_assessment`].
pub fn vrp_assessment_rule() -> String {
    format!(
        "premium = implied - realized, points; >= {VRP_RICH_FROM_POINTS}: RICH; \
         <= {VRP_CHEAP_TO_POINTS}: CHEAP; otherwise FAIR"
    )
}

/// Premium as a percentage of realized at or above which an expiration is `RICH`.
pub const VRP_SIGNAL_RICH_FROM_PCT: f64 = 15.0;
/// Premium as a percentage of realized at or below which an expiration is `CHEAP`.
pub const VRP_SIGNAL_CHEAP_TO_PCT: f64 = -10.0;

/// `RICH`, `CHEAP` or `NEUTRAL` for one expiration's premium as a percentage of realized.
pub fn vrp_signal(vrp_pct: f64) -> &'static str {
    if vrp_pct >= VRP_SIGNAL_RICH_FROM_PCT {
        "RICH"
    } else if vrp_pct <= VRP_SIGNAL_CHEAP_TO_PCT {
        "CHEAP"
    } else {
        "NEUTRAL"
    }
}

/// The rule behind [`vrp_signal`].
pub fn vrp_signal_rule() -> String {
    format!(
        "vrp_pct = (iv - hv) / hv x 100; >= {VRP_SIGNAL_RICH_FROM_PCT}: RICH; \
         <= {VRP_SIGNAL_CHEAP_TO_PCT}: CHEAP; otherwise NEUTRAL"
    )
}

/// The curve's regime from its expirations' premiums (points) and signals: `RICH` or `CHEAP`
/// when the average premium and a majority of the expirations agree, `MIXED` when
/// expirations disagree in sign, `NEUTRAL` otherwise; with a sentence. `None` without
/// expirations.
pub fn vrp_regime(premiums: &[f64], signals: &[&str]) -> Option<(&'static str, String)> {
    if premiums.is_empty() {
        return None;
    }
    let n = premiums.len();
    let average = premiums.iter().sum::<f64>() / n as f64;
    let rich = signals.iter().filter(|s| **s == "RICH").count();
    let cheap = signals.iter().filter(|s| **s == "CHEAP").count();
    let (regime, desc) = if average > 0.0 && rich * 2 > n {
        (
            "RICH",
            format!("{rich} of {n} expirations price more movement than realized; sellers' curve"),
        )
    } else if average < 0.0 && cheap * 2 > n {
        (
            "CHEAP",
            format!("{cheap} of {n} expirations price less movement than realized; buyers' curve"),
        )
    } else if rich > 0 && cheap > 0 {
        (
            "MIXED",
            format!(
                "{rich} rich and {cheap} cheap of {n} expirations: the premium changes sign along the curve"
            ),
        )
    } else {
        (
            "NEUTRAL",
            format!("no majority of rich or cheap expirations among {n}"),
        )
    };
    Some((regime, desc))
}

/// Curvature percentile at or above which the smile's wings are `STEEP_WINGS`.
pub const CURVATURE_STEEP_FROM: f64 = 80.0;
/// Curvature percentile below which they are `FLAT_WINGS`.
pub const CURVATURE_FLAT_BELOW: f64 = 20.0;
/// |z| of the curvature against its year at or above which the wings are called mispriced.
pub const CURVATURE_Z_MISPRICED: f64 = 2.0;

/// `STEEP_WINGS`, `FLAT_WINGS` or `NORMAL` for a curvature percentile (0–100) in its year.
pub fn curvature_interpretation(percentile: f64) -> &'static str {
    if percentile >= CURVATURE_STEEP_FROM {
        "STEEP_WINGS"
    } else if percentile < CURVATURE_FLAT_BELOW {
        "FLAT_WINGS"
    } else {
        "NORMAL"
    }
}

/// `WINGS_RICH`, `WINGS_CHEAP` or `NONE` for the curvature's z-score against its year.
pub fn curvature_mispricing(z_score: f64) -> &'static str {
    if z_score >= CURVATURE_Z_MISPRICED {
        "WINGS_RICH"
    } else if z_score <= -CURVATURE_Z_MISPRICED {
        "WINGS_CHEAP"
    } else {
        "NONE"
    }
}

/// The rules behind [`curvature_interpretation`] and [`curvature_mispricing`].
pub fn curvature_rule() -> String {
    format!(
        "percentile of today's curvature in its stored year: >= {CURVATURE_STEEP_FROM} \
         STEEP_WINGS, < {CURVATURE_FLAT_BELOW} FLAT_WINGS, otherwise NORMAL; z = (today - mean) \
         / std over the year: >= {CURVATURE_Z_MISPRICED} WINGS_RICH, <= -{CURVATURE_Z_MISPRICED} \
         WINGS_CHEAP, otherwise NONE"
    )
}

/// An AR(1) fitted by least squares to a daily series, xₜ₊₁ − μ = φ (xₜ − μ) + εₜ.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Ar1 {
    /// Long-run mean μ.
    pub mean: f64,
    /// Persistence φ per session.
    pub phi: f64,
    /// Pairs (xₜ, xₜ₊₁) fitted.
    pub observations: usize,
}

/// Fewest pairs for an AR(1) fit.
pub const AR1_MIN_PAIRS: usize = 30;

impl Ar1 {
    /// OLS of xₜ₊₁ on xₜ over consecutive values of `series` (oldest first); `None` below
    /// [`AR1_MIN_PAIRS`] pairs, for a flat series, or when the fitted φ is not in (−1, 1)
    /// (no mean to revert to).
    pub fn fit(series: &[f64]) -> Option<Self> {
        let pairs = series.len().checked_sub(1)?;
        if pairs < AR1_MIN_PAIRS || series.iter().any(|v| !v.is_finite()) {
            return None;
        }
        let (x, y) = (&series[..pairs], &series[1..]);
        let n = pairs as f64;
        let (mx, my) = (x.iter().sum::<f64>() / n, y.iter().sum::<f64>() / n);
        let sxx: f64 = x.iter().map(|v| (v - mx).powi(2)).sum();
        let sxy: f64 = x.iter().zip(y).map(|(a, b)| (a - mx) * (b - my)).sum();
        if sxx <= 0.0 {
            return None;
        }
        let phi = sxy / sxx;
        let intercept = my - phi * mx;
        (phi.abs() < 1.0).then(|| Self {
            mean: intercept / (1.0 - phi),
            phi,
            observations: pairs,
        })
    }

    /// The expected value `sessions` ahead of `now`: μ + φʰ (now − μ).
    pub fn forecast(&self, now: f64, sessions: usize) -> f64 {
        let steps = i32::try_from(sessions).unwrap_or(i32::MAX);
        self.mean + self.phi.powi(steps) * (now - self.mean)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_change_at_their_stated_bounds() {
        assert_eq!(iv_state(9.99), "VERY_LOW");
        assert_eq!(iv_state(10.0), "LOW");
        assert_eq!(iv_state(30.0), "NORMAL");
        assert_eq!(iv_state(70.0), "HIGH");
        assert_eq!(iv_state(90.0), "VERY_HIGH");
        assert_eq!(iv_opportunity(1.5), "SELL_VOL");
        assert_eq!(iv_opportunity(1.49), "NO_EXTREME");
        assert_eq!(iv_opportunity(-1.5), "BUY_VOL");
        assert_eq!(vrp_assessment(4.0), "RICH");
        assert_eq!(vrp_assessment(-2.0), "CHEAP");
        assert_eq!(vrp_assessment(0.0), "FAIR");
        assert_eq!(vrp_signal(15.0), "RICH");
        assert_eq!(vrp_signal(-10.0), "CHEAP");
        assert_eq!(vrp_signal(5.0), "NEUTRAL");
        assert!(iv_state_rule().contains("< 10: VERY_LOW"));
    }

    #[test]
    fn an_ar1_recovers_its_mean_and_persistence() {
        // x_{t+1} = 2 + 0.9 (x_t - 2) exactly, started away from the mean: φ and μ exact.
        let mut series = vec![10.0];
        for _ in 0..60 {
            let last = *series.last().unwrap();
            series.push(2.0 + 0.9 * (last - 2.0));
        }
        let fit = Ar1::fit(&series).unwrap();
        assert!(
            (fit.phi - 0.9).abs() < 1e-12 && (fit.mean - 2.0).abs() < 1e-9,
            "{fit:?}"
        );
        assert!((fit.forecast(4.0, 2) - (2.0 + 0.81 * 2.0)).abs() < 1e-9);
        assert_eq!(Ar1::fit(&series[..20]), None);
        assert_eq!(Ar1::fit(&[1.0; 40]), None);
        assert_eq!(curvature_interpretation(80.0), "STEEP_WINGS");
        assert_eq!(curvature_mispricing(-2.0), "WINGS_CHEAP");
    }

    #[test]
    fn the_regime_needs_a_majority() {
        assert_eq!(vrp_regime(&[], &[]), None);
        let (regime, _) = vrp_regime(&[5.0, 4.0, -1.0], &["RICH", "RICH", "NEUTRAL"]).unwrap();
        assert_eq!(regime, "RICH");
        let (regime, _) = vrp_regime(&[5.0, -4.0], &["RICH", "CHEAP"]).unwrap();
        assert_eq!(regime, "MIXED");
        let (regime, _) = vrp_regime(&[-5.0, -4.0, 1.0], &["CHEAP", "CHEAP", "NEUTRAL"]).unwrap();
        assert_eq!(regime, "CHEAP");
        let (regime, _) = vrp_regime(&[1.0, 0.5], &["NEUTRAL", "NEUTRAL"]).unwrap();
        assert_eq!(regime, "NEUTRAL");
    }
}
