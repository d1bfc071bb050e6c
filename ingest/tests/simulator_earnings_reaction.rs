//! The simulator's earnings reactions ([`EarningsReaction`]) have no dataset of their own:
//! every field follows from what the store holds — the `earnings` rows (report date, timing),
//! the `daily_bars` rows (as-traded opens and closes) and the `vol_daily` rows of the history
//! (`iv30d_pct` = 100 × the history's 30-day IV). This test derives each reaction from those
//! rows alone, with the session rule the session close uses, and compares.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use optics_compute::vol::close::reaction_sessions;
use optics_compute::vol::gap_move_pct;
use optics_ingest::simulator::history::{HistoryConfig, generate_history};
use optics_ingest::simulator::universe::Universe;
use optics_schemas::DailyBar;

#[test]
fn every_reaction_follows_from_the_stored_earnings_bars_and_iv() {
    let history = generate_history(
        &Universe::real(),
        &HistoryConfig {
            seed: 19,
            end: NaiveDate::from_ymd_opt(2026, 11, 20).unwrap(),
            years: 1,
        },
    )
    .unwrap();
    let mut bars: BTreeMap<&str, Vec<&DailyBar>> = BTreeMap::new();
    for bar in &history.bars {
        bars.entry(bar.symbol.as_str()).or_default().push(bar);
    }
    // What seeding stores as `vol_daily.iv30d_pct` for each history session.
    let iv30d_pct: BTreeMap<(&str, NaiveDate), f64> = history
        .iv
        .iter()
        .map(|iv| ((iv.symbol.as_str(), iv.date), iv.iv30 * 100.0))
        .collect();
    assert!(history.reactions.len() > 100, "{}", history.reactions.len());
    for r in &history.reactions {
        let report = history
            .earnings
            .iter()
            .find(|e| e.symbol == r.symbol && e.report_date == r.report_date)
            .unwrap_or_else(|| panic!("no earnings row for {r:?}"));
        assert_eq!(report.timing, r.timing);
        let series = &bars[r.symbol.as_str()];
        let dates: Vec<NaiveDate> = series.iter().map(|b| b.date).collect();
        let sessions = reaction_sessions(&dates, &[report]);
        assert_eq!(sessions.len(), 1, "{r:?}");
        let k = sessions[0];
        assert_eq!(dates[k], r.reaction_date);
        let (before, on) = (series[k - 1], series[k]);
        assert_eq!(before.close, r.previous_close);
        assert_eq!(on.open, r.reaction_open);
        assert_eq!(on.close, r.reaction_close);
        let gap = gap_move_pct(before.close, on.open).unwrap();
        assert!((gap - r.gap_move_pct).abs() < 1e-9, "{gap} vs {r:?}");
        let close_move = (on.close / before.close - 1.0) * 100.0;
        assert!((close_move - r.close_move_pct).abs() < 1e-9);
        let iv_before = iv30d_pct[&(r.symbol.as_str(), before.date)];
        let iv_after = iv30d_pct[&(r.symbol.as_str(), on.date)];
        assert!((iv_before / 100.0 - r.iv30_before).abs() < 1e-12);
        assert!((iv_after / 100.0 - r.iv30_after).abs() < 1e-12);
    }
}
