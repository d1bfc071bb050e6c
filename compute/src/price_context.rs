//! `/price-context` figures: period returns, the 52-week range, the momentum, vol and flow
//! labels with their thresholds, and the sentences built from those numbers. Pure functions
//! over closes ascending by date.

use crate::vol::stats::percentile_of;

/// The return periods: label and sessions back.
pub const RETURN_PERIODS: [(&str, usize); 5] =
    [("1w", 5), ("1m", 21), ("3m", 63), ("6m", 126), ("1y", 252)];
/// Sessions of the 52-week range (the latest close included).
pub const RANGE_SESSIONS: usize = 252;
/// Sessions of the IV percentile's history.
pub const IV_PCTILE_SESSIONS: usize = 252;

/// 3-month return (percent) from which momentum is `STRONG_UPTREND` (or below its negative,
/// `STRONG_DOWNTREND`).
pub const MOMENTUM_STRONG_PCT: f64 = 10.0;
/// 3-month return (percent) from which momentum is `UPTREND` (or below its negative,
/// `DOWNTREND`); between, `SIDEWAYS`.
pub const MOMENTUM_MILD_PCT: f64 = 2.0;
/// IV percentile from which the vol regime is `HIGH`.
pub const VOL_HIGH_PCTILE: f64 = 80.0;
/// IV percentile from which the vol regime is `ELEVATED`.
pub const VOL_ELEVATED_PCTILE: f64 = 50.0;
/// IV percentile from which the vol regime is `NORMAL` (below: `LOW`).
pub const VOL_NORMAL_PCTILE: f64 = 20.0;
/// Call share of the option premium from which flow is `BULLISH` (at most 1 − this:
/// `BEARISH`).
pub const FLOW_BULLISH_SHARE: f64 = 0.6;

/// (last close ÷ the close `sessions` earlier − 1) × 100; `None` without that close or for a
/// non-positive base.
pub fn period_return(closes: &[f64], sessions: usize) -> Option<f64> {
    let last = *closes.last()?;
    let base = *closes.get(closes.len().checked_sub(sessions + 1)?)?;
    (base > 0.0).then(|| (last / base - 1.0) * 100.0)
}

/// Where the latest close sits in the range of the last [`RANGE_SESSIONS`] closes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Range52w {
    /// Highest close, dollars.
    pub high: f64,
    /// Lowest close, dollars.
    pub low: f64,
    /// (price − low) ÷ (high − low) × 100; 50 for a flat range.
    pub position: f64,
    /// (price ÷ high − 1) × 100, ≤ 0.
    pub pct_from_high: f64,
    /// (price ÷ low − 1) × 100, ≥ 0.
    pub pct_from_low: f64,
}

/// The [`Range52w`] of the latest close; `None` without closes or with a non-positive low.
pub fn range_52w(closes: &[f64]) -> Option<Range52w> {
    let window = &closes[closes.len().saturating_sub(RANGE_SESSIONS)..];
    let price = *window.last()?;
    let high = window.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let low = window.iter().copied().fold(f64::INFINITY, f64::min);
    if low <= 0.0 {
        return None;
    }
    Some(Range52w {
        high,
        low,
        position: if high > low {
            (price - low) / (high - low) * 100.0
        } else {
            50.0
        },
        pct_from_high: (price / high - 1.0) * 100.0,
        pct_from_low: (price / low - 1.0) * 100.0,
    })
}

/// A label and its color.
pub type Label = (&'static str, &'static str);

/// Momentum from the 3-month return: `STRONG_UPTREND` (green) from [`MOMENTUM_STRONG_PCT`],
/// `UPTREND` (lightgreen) from [`MOMENTUM_MILD_PCT`], `SIDEWAYS` (gray) above
/// −[`MOMENTUM_MILD_PCT`], `DOWNTREND` (orange) above −[`MOMENTUM_STRONG_PCT`], else
/// `STRONG_DOWNTREND` (red).
pub fn momentum_regime(return_3m: f64) -> Label {
    if return_3m >= MOMENTUM_STRONG_PCT {
        ("STRONG_UPTREND", "green")
    } else if return_3m >= MOMENTUM_MILD_PCT {
        ("UPTREND", "lightgreen")
    } else if return_3m > -MOMENTUM_MILD_PCT {
        ("SIDEWAYS", "gray")
    } else if return_3m > -MOMENTUM_STRONG_PCT {
        ("DOWNTREND", "orange")
    } else {
        ("STRONG_DOWNTREND", "red")
    }
}

/// Vol regime from the 1-year IV percentile: `HIGH` (red) from [`VOL_HIGH_PCTILE`], `ELEVATED`
/// (orange) from [`VOL_ELEVATED_PCTILE`], `NORMAL` (gray) from [`VOL_NORMAL_PCTILE`], else
/// `LOW` (green).
pub fn vol_regime(iv_pctile: f64) -> Label {
    if iv_pctile >= VOL_HIGH_PCTILE {
        ("HIGH", "red")
    } else if iv_pctile >= VOL_ELEVATED_PCTILE {
        ("ELEVATED", "orange")
    } else if iv_pctile >= VOL_NORMAL_PCTILE {
        ("NORMAL", "gray")
    } else {
        ("LOW", "green")
    }
}

/// Flow from the call share of option premium: `BULLISH` (green) from
/// [`FLOW_BULLISH_SHARE`], `BEARISH` (red) at most 1 − that, else `NEUTRAL` (gray); `None`
/// without premium.
pub fn flow_sentiment(call_premium: f64, put_premium: f64) -> Option<(Label, f64)> {
    let total = call_premium + put_premium;
    if total.partial_cmp(&0.0) != Some(std::cmp::Ordering::Greater) {
        return None;
    }
    let share = call_premium / total;
    let label = if share >= FLOW_BULLISH_SHARE {
        ("BULLISH", "green")
    } else if share <= 1.0 - FLOW_BULLISH_SHARE {
        ("BEARISH", "red")
    } else {
        ("NEUTRAL", "gray")
    };
    Some((label, share))
}

/// Share of the last [`IV_PCTILE_SESSIONS`] stored IVs strictly below `iv`, 0–100.
pub fn iv_pctile_1y(history: &[f64], iv: f64) -> Option<f64> {
    percentile_of(
        &history[history.len().saturating_sub(IV_PCTILE_SESSIONS)..],
        iv,
    )
    .ok()
}

/// The numbers the sentences are built from.
#[derive(Debug, Clone, PartialEq)]
pub struct Facts<'a> {
    /// Symbol.
    pub ticker: &'a str,
    /// Last close, dollars.
    pub price: f64,
    /// 1-month return, percent.
    pub return_1m: Option<f64>,
    /// 1-year return, percent.
    pub return_1y: Option<f64>,
    /// 52-week range position, 0–100.
    pub range_position: Option<f64>,
    /// Momentum label.
    pub momentum: Option<&'static str>,
    /// Vol label.
    pub vol: Option<&'static str>,
    /// 30-day IV, points.
    pub iv_30d: Option<f64>,
    /// 20-day HV, points.
    pub hv_20d: Option<f64>,
    /// Days to the next report.
    pub days_to_earnings: Option<i64>,
    /// Flow label.
    pub flow: Option<&'static str>,
}

fn pct(v: Option<f64>) -> String {
    v.map_or_else(|| "n/a".to_owned(), |v| format!("{v:+.1}%"))
}

/// One sentence: price, 1-month return, momentum and vol labels.
pub fn quick_take(f: &Facts) -> String {
    format!(
        "{} at ${:.2}, {} over 1 month, momentum {}, volatility {}.",
        f.ticker,
        f.price,
        pct(f.return_1m),
        f.momentum.unwrap_or("unknown"),
        f.vol.unwrap_or("unknown"),
    )
}

/// A few sentences from the same numbers.
pub fn essentials_summary(f: &Facts) -> String {
    let mut out = vec![format!(
        "{} closed at ${:.2}: {} over 1 month and {} over 1 year.",
        f.ticker,
        f.price,
        pct(f.return_1m),
        pct(f.return_1y)
    )];
    if let Some(p) = f.range_position {
        out.push(format!("It sits at {p:.0}% of its 52-week range."));
    }
    match (f.iv_30d, f.hv_20d) {
        (Some(iv), Some(hv)) => out.push(format!(
            "30-day IV is {iv:.1} against 20-day realized {hv:.1}, a premium of {:+.1} points.",
            iv - hv
        )),
        (Some(iv), None) => out.push(format!("30-day IV is {iv:.1}.")),
        _ => {}
    }
    if let Some(d) = f.days_to_earnings {
        out.push(format!("Earnings are due in {d} days."));
    }
    if let Some(flow) = f.flow {
        out.push(format!("Today's option flow reads {flow}."));
    }
    out.join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn returns_and_range_by_hand() {
        let closes: Vec<f64> = (0..300).map(|i| 100.0 + f64::from(i)).collect();
        assert!((period_return(&closes, 5).unwrap() - (399.0 / 394.0 - 1.0) * 100.0).abs() < 1e-12);
        assert_eq!(period_return(&closes[..5], 5), None);
        let r = range_52w(&closes).unwrap();
        assert_eq!((r.high, r.low), (399.0, 148.0));
        assert!((r.position - 100.0).abs() < 1e-12);
    }

    #[test]
    fn labels_follow_the_thresholds() {
        assert_eq!(momentum_regime(12.0).0, "STRONG_UPTREND");
        assert_eq!(momentum_regime(0.0).0, "SIDEWAYS");
        assert_eq!(momentum_regime(-12.0).0, "STRONG_DOWNTREND");
        assert_eq!(vol_regime(85.0).0, "HIGH");
        assert_eq!(vol_regime(10.0).0, "LOW");
        assert_eq!(flow_sentiment(0.0, 0.0), None);
        assert_eq!(flow_sentiment(3.0, 1.0).unwrap().0.0, "BULLISH");
    }
}
