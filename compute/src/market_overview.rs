//! `/market-overview`'s figures over the session's universe table: the regime read, sector
//! aggregates, volatility breadth, put skew and the ranked lists (movers, unusual activity,
//! IV-versus-HV outliers).
//!
//! Rows are [`ScreenRow`]s, one per underlying; a figure a row lacks leaves that row out of the
//! statistic that needs it (each statistic reports how many rows it used).

use crate::screen::{EARNINGS_WEEK_DAYS, HIGH_IV_PERCENTILE, ScreenRow};
use crate::vol::stats::{mean, median};

/// Regime cut-offs on the median one-year IV percentile of the universe: below
/// [`CALM_BELOW`] calm, from [`ELEVATED_FROM`] elevated, from [`STRESSED_FROM`] stressed,
/// normal between.
pub const CALM_BELOW: f64 = 30.0;
/// See [`CALM_BELOW`].
pub const ELEVATED_FROM: f64 = 60.0;
/// See [`CALM_BELOW`].
pub const STRESSED_FROM: f64 = 80.0;
/// Rows kept in each ranked list.
pub const LIST_ROWS: usize = 10;
/// Unusual activity: session option volume over open interest at or above this.
pub const UNUSUAL_ACTIVITY_RATIO: f64 = 0.5;

/// The regime label of a median IV percentile.
pub fn regime_of(median_iv_percentile: f64) -> &'static str {
    if median_iv_percentile >= STRESSED_FROM {
        "stressed"
    } else if median_iv_percentile >= ELEVATED_FROM {
        "elevated"
    } else if median_iv_percentile < CALM_BELOW {
        "calm"
    } else {
        "normal"
    }
}

/// The regime rule, printed from the constants.
pub fn regime_rule() -> String {
    format!(
        "median one-year IV percentile of the universe: calm below {CALM_BELOW}, normal to \
         {ELEVATED_FROM}, elevated from {ELEVATED_FROM}, stressed from {STRESSED_FROM}"
    )
}

/// `market_stats`.
#[derive(Debug, Clone, PartialEq)]
pub struct MarketStats {
    /// [`regime_of`] the median percentile; `None` without any percentile.
    pub market_regime: Option<&'static str>,
    /// Mean iv30d, percentage points.
    pub avg_iv30d: Option<f64>,
    /// Mean iv30d − hv20d, points.
    pub avg_vrp: Option<f64>,
    /// Median one-year IV percentile.
    pub median_iv_percentile: Option<f64>,
    /// Share of the rows with a percentile at or above [`HIGH_IV_PERCENTILE`], percent.
    pub pct_high_iv: Option<f64>,
    /// Rows with an iv30d.
    pub names_with_iv: usize,
}

/// The universe's regime figures.
pub fn market_stats(rows: &[&ScreenRow]) -> MarketStats {
    let percentiles: Vec<f64> = rows.iter().filter_map(|r| r.iv_percentile).collect();
    let median_pct = median(&percentiles);
    let high = percentiles
        .iter()
        .filter(|p| **p >= HIGH_IV_PERCENTILE)
        .count();
    MarketStats {
        market_regime: median_pct.map(regime_of),
        avg_iv30d: mean(rows.iter().filter_map(|r| r.iv30d)),
        avg_vrp: mean(rows.iter().filter_map(|r| r.vrp())),
        median_iv_percentile: median_pct,
        pct_high_iv: (!percentiles.is_empty())
            .then(|| high as f64 / percentiles.len() as f64 * 100.0),
        names_with_iv: rows.iter().filter(|r| r.iv30d.is_some()).count(),
    }
}

/// One sector of the heatmap.
#[derive(Debug, Clone, PartialEq)]
pub struct SectorCell {
    /// GICS sector.
    pub sector: String,
    /// Names in it.
    pub count: usize,
    /// Mean iv30d, percentage points.
    pub avg_iv30d: Option<f64>,
    /// Mean iv30d − hv20d, points.
    pub avg_vrp: Option<f64>,
    /// Mean one-year IV percentile.
    pub avg_iv_percentile: Option<f64>,
    /// Mean one-session price change, percent.
    pub avg_chg_1d: Option<f64>,
    /// Mean five-session price change, percent.
    pub avg_chg_1w: Option<f64>,
}

/// Rows grouped by sector (rows without one left out), sectors by name.
pub fn sector_heatmap(rows: &[&ScreenRow]) -> Vec<SectorCell> {
    let mut by_sector: std::collections::BTreeMap<&str, Vec<&ScreenRow>> = Default::default();
    for row in rows {
        if let Some(sector) = row.sector.as_deref() {
            by_sector.entry(sector).or_default().push(row);
        }
    }
    by_sector
        .into_iter()
        .map(|(sector, members)| SectorCell {
            sector: sector.to_owned(),
            count: members.len(),
            avg_iv30d: mean(members.iter().filter_map(|r| r.iv30d)),
            avg_vrp: mean(members.iter().filter_map(|r| r.vrp())),
            avg_iv_percentile: mean(members.iter().filter_map(|r| r.iv_percentile)),
            avg_chg_1d: mean(members.iter().filter_map(|r| r.chg_1d_pct)),
            avg_chg_1w: mean(members.iter().filter_map(|r| r.chg_1w_pct)),
        })
        .collect()
}

/// `vol_breadth`: how many names sit where.
#[derive(Debug, Clone, PartialEq)]
pub struct VolBreadth {
    /// Names with both iv30d and hv20d.
    pub names: usize,
    /// Share of them with iv30d above hv20d, percent.
    pub pct_iv_above_hv: Option<f64>,
    /// Share of the names with a percentile at or above 50, percent.
    pub pct_iv_percentile_above_50: Option<f64>,
    /// Share at or above [`HIGH_IV_PERCENTILE`], percent.
    pub pct_iv_percentile_high: Option<f64>,
}

/// The breadth figures.
pub fn vol_breadth(rows: &[&ScreenRow]) -> VolBreadth {
    let share = |n: usize, of: usize| (of > 0).then(|| n as f64 / of as f64 * 100.0);
    let vrps: Vec<f64> = rows.iter().filter_map(|r| r.vrp()).collect();
    let pcts: Vec<f64> = rows.iter().filter_map(|r| r.iv_percentile).collect();
    VolBreadth {
        names: vrps.len(),
        pct_iv_above_hv: share(vrps.iter().filter(|v| **v > 0.0).count(), vrps.len()),
        pct_iv_percentile_above_50: share(pcts.iter().filter(|p| **p >= 50.0).count(), pcts.len()),
        pct_iv_percentile_high: share(
            pcts.iter().filter(|p| **p >= HIGH_IV_PERCENTILE).count(),
            pcts.len(),
        ),
    }
}

/// `put_skew`: 25-delta put − call IV at 30 days across names.
#[derive(Debug, Clone, PartialEq)]
pub struct PutSkewSummary {
    /// Names with a skew.
    pub names: usize,
    /// Mean, points.
    pub avg: Option<f64>,
    /// Median, points.
    pub median: Option<f64>,
    /// Mean one-year percentile of the skew slope.
    pub avg_skew_percentile: Option<f64>,
}

/// The put-skew summary.
pub fn put_skew(rows: &[&ScreenRow]) -> PutSkewSummary {
    let skews: Vec<f64> = rows.iter().filter_map(|r| r.put_skew).collect();
    PutSkewSummary {
        names: skews.len(),
        avg: mean(skews.iter().copied()),
        median: median(&skews),
        avg_skew_percentile: mean(rows.iter().filter_map(|r| r.skew_pctile)),
    }
}

/// Indices of `rows` ranked by `metric` (rows without it left out), largest first when
/// `descending`, at most `n`; ties keep row order.
pub fn ranked(
    rows: &[&ScreenRow],
    metric: impl Fn(&ScreenRow) -> Option<f64>,
    descending: bool,
    n: usize,
) -> Vec<(usize, f64)> {
    let mut scored: Vec<(usize, f64)> = rows
        .iter()
        .enumerate()
        .filter_map(|(i, r)| metric(r).filter(|m| m.is_finite()).map(|m| (i, m)))
        .collect();
    scored.sort_by(|a, b| {
        let order = a.1.total_cmp(&b.1);
        (if descending { order.reverse() } else { order }).then(a.0.cmp(&b.0))
    });
    scored.truncate(n);
    scored
}

/// Unusual activity: rows with volume / OI at or above [`UNUSUAL_ACTIVITY_RATIO`], largest
/// first, at most [`LIST_ROWS`].
pub fn unusual_activity(rows: &[&ScreenRow]) -> Vec<(usize, f64)> {
    ranked(
        rows,
        |r| r.volume_oi_ratio().filter(|m| *m >= UNUSUAL_ACTIVITY_RATIO),
        true,
        LIST_ROWS,
    )
}

/// Rows reporting within [`EARNINGS_WEEK_DAYS`], soonest first.
pub fn earnings_this_week(rows: &[&ScreenRow]) -> Vec<(usize, f64)> {
    ranked(
        rows,
        |r| {
            r.days_to_earnings
                .filter(|d| (0..=EARNINGS_WEEK_DAYS).contains(d))
                .map(|d| d as f64)
        },
        false,
        usize::MAX,
    )
}

/// iv30d / hv20d of a row.
pub fn iv_hv_ratio(row: &ScreenRow) -> Option<f64> {
    let hv = row.hv20d.filter(|h| *h > 0.0)?;
    Some(row.iv30d? / hv)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(iv: f64, hv: f64, pct: f64, sector: &str) -> ScreenRow {
        ScreenRow {
            iv30d: Some(iv),
            hv20d: Some(hv),
            iv_percentile: Some(pct),
            sector: Some(sector.to_owned()),
            ..ScreenRow::default()
        }
    }

    #[test]
    fn regime_cut_offs() {
        assert_eq!(regime_of(29.9), "calm");
        assert_eq!(regime_of(30.0), "normal");
        assert_eq!(regime_of(60.0), "elevated");
        assert_eq!(regime_of(80.0), "stressed");
    }

    #[test]
    fn stats_and_heatmap_by_hand() {
        let rows = [
            row(20.0, 16.0, 10.0, "Energy"),
            row(30.0, 35.0, 50.0, "Energy"),
            row(40.0, 30.0, 90.0, "Utilities"),
        ];
        let refs: Vec<&ScreenRow> = rows.iter().collect();
        let stats = market_stats(&refs);
        assert_eq!(stats.avg_iv30d, Some(30.0));
        assert_eq!(stats.avg_vrp, Some((4.0 - 5.0 + 10.0) / 3.0));
        assert_eq!(stats.median_iv_percentile, Some(50.0));
        assert_eq!(stats.market_regime, Some("normal"));
        assert!((stats.pct_high_iv.unwrap() - 100.0 / 3.0).abs() < 1e-12);
        let cells = sector_heatmap(&refs);
        assert_eq!(cells.len(), 2);
        assert_eq!((cells[0].sector.as_str(), cells[0].count), ("Energy", 2));
        assert_eq!(cells[0].avg_iv30d, Some(25.0));
        let breadth = vol_breadth(&refs);
        assert!((breadth.pct_iv_above_hv.unwrap() - 200.0 / 3.0).abs() < 1e-12);
        let top = ranked(&refs, iv_hv_ratio, true, 2);
        assert_eq!(top.iter().map(|t| t.0).collect::<Vec<_>>(), [2, 0]);
    }
}
