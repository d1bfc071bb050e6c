//! Realized-volatility regimes: the trend of short against long windows, the level of a
//! window against its own history, the sessions where the short window crossed the long one,
//! and the decomposition of close-to-close variance into its overnight and intraday parts and
//! its earnings sessions. Every threshold is a constant here, so the rule a payload prints is
//! the rule that chose the label.

use super::range::OhlcBar;
use super::{VolError, check_positive};

/// short / long HV at or above which realized vol is `EXPANDING`.
pub const EXPANDING_FROM_RATIO: f64 = 1.2;
/// short / long HV at or below which realized vol is `CONTRACTING`.
pub const CONTRACTING_TO_RATIO: f64 = 0.8;

/// `EXPANDING`, `CONTRACTING` or `STABLE` from a short-window HV over a long-window HV.
pub fn hv_trend(short_hv: f64, long_hv: f64) -> Option<&'static str> {
    let ratio = short_hv / long_hv;
    if !ratio.is_finite() {
        return None;
    }
    Some(if ratio >= EXPANDING_FROM_RATIO {
        "EXPANDING"
    } else if ratio <= CONTRACTING_TO_RATIO {
        "CONTRACTING"
    } else {
        "STABLE"
    })
}

/// The rule behind [`hv_trend`].
pub fn hv_trend_rule() -> String {
    format!(
        "ratio = short HV / long HV; >= {EXPANDING_FROM_RATIO}: EXPANDING; \
         <= {CONTRACTING_TO_RATIO}: CONTRACTING; otherwise STABLE"
    )
}

/// Percentile of a window's HV in its own history at or above which the level is `HIGH`.
pub const HV_LEVEL_HIGH_FROM: f64 = 80.0;
/// Percentile below which the level is `LOW`.
pub const HV_LEVEL_LOW_BELOW: f64 = 20.0;

/// `HIGH`, `NORMAL` or `LOW` for an HV percentile (0–100) in its own history.
pub fn hv_level(percentile: f64) -> &'static str {
    if percentile >= HV_LEVEL_HIGH_FROM {
        "HIGH"
    } else if percentile < HV_LEVEL_LOW_BELOW {
        "LOW"
    } else {
        "NORMAL"
    }
}

/// The rule behind [`hv_level`].
pub fn hv_level_rule() -> String {
    format!(
        "percentile of the window's HV among its stored values; >= {HV_LEVEL_HIGH_FROM}: HIGH; \
         < {HV_LEVEL_LOW_BELOW}: LOW; otherwise NORMAL"
    )
}

/// A session where the short-window HV crossed the long-window one.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Crossover {
    /// Index of the session (into the series).
    pub index: usize,
    /// `SHORT_ABOVE` when the short window rose above the long one, `SHORT_BELOW` otherwise.
    pub direction: &'static str,
}

/// The sessions where `short[i] − long[i]` changes sign against the last session where both
/// were present and differed (ties carry the previous side).
pub fn crossovers(short: &[Option<f64>], long: &[Option<f64>]) -> Vec<Crossover> {
    let mut side: Option<bool> = None;
    let mut out = Vec::new();
    for (index, (s, l)) in short.iter().zip(long).enumerate() {
        let (Some(s), Some(l)) = (s, l) else { continue };
        if s == l {
            continue;
        }
        let above = s > l;
        if side.is_some_and(|was| was != above) {
            out.push(Crossover {
                index,
                direction: if above { "SHORT_ABOVE" } else { "SHORT_BELOW" },
            });
        }
        side = Some(above);
    }
    out
}

/// Close-to-close variance of a window split into its parts. With the overnight return
/// oₜ = ln(Oₜ / Cₜ₋₁) and the intraday return iₜ = ln(Cₜ / Oₜ), the close-to-close return is
/// rₜ = oₜ + iₜ, so var(r) = var(o) + var(i) + 2·cov(o, i) (sample moments, n − 1): the three
/// shares add up to 100. The earnings share is the part of Σ(rₜ − r̄)² that falls on
/// earnings reaction sessions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VarianceDecomposition {
    /// Returns in the window.
    pub sessions: usize,
    /// √(252 · var(r)) × 100, annualised percentage points.
    pub close_to_close_vol: f64,
    /// √(252 · var(o)) × 100.
    pub overnight_vol: f64,
    /// √(252 · var(i)) × 100.
    pub intraday_vol: f64,
    /// var(o) / var(r) × 100.
    pub overnight_share_pct: f64,
    /// var(i) / var(r) × 100.
    pub intraday_share_pct: f64,
    /// 2·cov(o, i) / var(r) × 100.
    pub covariance_share_pct: f64,
    /// Reaction sessions inside the window.
    pub earnings_sessions: usize,
    /// Their share of Σ(rₜ − r̄)², percent.
    pub earnings_share_pct: f64,
}

/// The decomposition of the last `window` returns of `bars` (oldest first, one per session;
/// `window` + 1 bars used). `reaction_sessions` are indices into `bars`. `None` when there are
/// too few bars, `window` < 2 or the window has no variance; an error for a bar whose prices
/// are not finite numbers > 0.
pub fn variance_decomposition(
    bars: &[OhlcBar],
    window: usize,
    reaction_sessions: &[usize],
) -> Result<Option<VarianceDecomposition>, VolError> {
    if window < 2 || bars.len() < window + 1 {
        return Ok(None);
    }
    let first = bars.len() - window;
    for bar in &bars[first - 1..] {
        check_positive("bar prices", &[bar.open, bar.close])?;
    }
    let overnight: Vec<f64> = (first..bars.len())
        .map(|t| (bars[t].open / bars[t - 1].close).ln())
        .collect();
    let intraday: Vec<f64> = (first..bars.len())
        .map(|t| (bars[t].close / bars[t].open).ln())
        .collect();
    let total: Vec<f64> = overnight
        .iter()
        .zip(&intraday)
        .map(|(o, i)| o + i)
        .collect();
    let n = window as f64;
    let mean = |x: &[f64]| x.iter().sum::<f64>() / n;
    let (mo, mi, mr) = (mean(&overnight), mean(&intraday), mean(&total));
    let var = |x: &[f64], m: f64| x.iter().map(|v| (v - m).powi(2)).sum::<f64>() / (n - 1.0);
    let (var_o, var_i, var_r) = (var(&overnight, mo), var(&intraday, mi), var(&total, mr));
    if !(var_r > 0.0 && var_r.is_finite()) {
        return Ok(None);
    }
    let cov = overnight
        .iter()
        .zip(&intraday)
        .map(|(o, i)| (o - mo) * (i - mi))
        .sum::<f64>()
        / (n - 1.0);
    let annualised = |v: f64| (v.max(0.0) * super::TRADING_DAYS_PER_YEAR).sqrt() * 100.0;
    let squares: f64 = total.iter().map(|r| (r - mr).powi(2)).sum();
    let in_window: Vec<usize> = reaction_sessions
        .iter()
        .copied()
        .filter(|&t| t >= first && t < bars.len())
        .collect();
    let earnings: f64 = in_window
        .iter()
        .map(|&t| (total[t - first] - mr).powi(2))
        .sum();
    Ok(Some(VarianceDecomposition {
        sessions: window,
        close_to_close_vol: annualised(var_r),
        overnight_vol: annualised(var_o),
        intraday_vol: annualised(var_i),
        overnight_share_pct: var_o / var_r * 100.0,
        intraday_share_pct: var_i / var_r * 100.0,
        covariance_share_pct: 2.0 * cov / var_r * 100.0,
        earnings_sessions: in_window.len(),
        earnings_share_pct: earnings / squares * 100.0,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bar(open: f64, close: f64) -> OhlcBar {
        OhlcBar {
            open,
            high: open.max(close) * 1.01,
            low: open.min(close) * 0.99,
            close,
        }
    }

    #[test]
    fn labels_change_at_their_stated_bounds() {
        assert_eq!(hv_trend(12.0, 10.0), Some("EXPANDING"));
        assert_eq!(hv_trend(8.0, 10.0), Some("CONTRACTING"));
        assert_eq!(hv_trend(10.0, 10.0), Some("STABLE"));
        assert_eq!(hv_trend(1.0, 0.0), None);
        assert_eq!(hv_level(80.0), "HIGH");
        assert_eq!(hv_level(19.9), "LOW");
        assert_eq!(hv_level(50.0), "NORMAL");
    }

    #[test]
    fn crossovers_are_sign_changes_of_short_minus_long() {
        let short = [Some(1.0), Some(3.0), None, Some(3.0), Some(1.0), Some(2.0)];
        let long = [
            Some(2.0),
            Some(2.0),
            Some(2.0),
            Some(3.0),
            Some(2.0),
            Some(1.0),
        ];
        let found = crossovers(&short, &long);
        assert_eq!(
            found,
            vec![
                Crossover {
                    index: 1,
                    direction: "SHORT_ABOVE"
                },
                Crossover {
                    index: 4,
                    direction: "SHORT_BELOW"
                },
                Crossover {
                    index: 5,
                    direction: "SHORT_ABOVE"
                },
            ]
        );
    }

    #[test]
    fn the_parts_add_up_and_match_a_hand_computation() {
        let bars = [
            bar(100.0, 100.0),
            bar(101.0, 102.0),
            bar(101.5, 100.5),
            bar(99.0, 99.5),
            bar(100.5, 101.5),
            bar(103.0, 102.0),
        ];
        let d = variance_decomposition(&bars, 5, &[4]).unwrap().unwrap();
        let total = d.overnight_share_pct + d.intraday_share_pct + d.covariance_share_pct;
        assert!((total - 100.0).abs() < 1e-9, "{total}");
        // By hand: close-to-close returns and their sample variance.
        let closes = [100.0f64, 102.0, 100.5, 99.5, 101.5, 102.0];
        let r: Vec<f64> = closes.windows(2).map(|w| (w[1] / w[0]).ln()).collect();
        let m = r.iter().sum::<f64>() / 5.0;
        let var = r.iter().map(|x| (x - m).powi(2)).sum::<f64>() / 4.0;
        assert!((d.close_to_close_vol - (var * 252.0).sqrt() * 100.0).abs() < 1e-9);
        let share = (r[3] - m).powi(2) / (var * 4.0) * 100.0;
        assert!((d.earnings_share_pct - share).abs() < 1e-9);
        assert_eq!(d.earnings_sessions, 1);
        assert_eq!(variance_decomposition(&bars, 6, &[]).unwrap(), None);
    }
}
