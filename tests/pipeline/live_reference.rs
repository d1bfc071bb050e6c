//! A session run live extends the reference series: daily bars, earnings reports, dividends and
//! borrow fees sent on the bus reach a running worker, are merged into the store's market-wide
//! tables over the seeded history, and the session close reads them — its close and return
//! from the session's bar, its earnings statistics from the stored bars and reports, and its
//! ATM term structure from the closing chains (all recomputed here from the stored rows).

use std::collections::{BTreeMap, BTreeSet};
use std::time::Duration;

use chrono::NaiveDate;
use optics_pipeline::store::{MARKET_WIDE, SnapshotKey};
use optics_pipeline::worker::close::read_reference;
use optics_pipeline::worker::{SESSION_CLOSE_GRACE, WorkerConfig, close_latest_session};
use optics_schemas::bus::{snapshot_datasets, topics};
use optics_schemas::{
    BorrowRate, ChainRow, DailyBar, Dataset, Dividend, EarningsEvent, EarningsTiming,
    MARKET_WIDE_KEY, Message, VolDailyRow, VolTermRow,
};

use crate::support::{
    RATE, borrow_fee, close, close_enough, data, earnings_report, memory_store,
    next_snapshot_events, publish_reference, quarterly_dividend, read_rows, runtime,
    sessions_before, simulated_quotes, trade_date, versions_written, worker_on_embedded_bus,
};

/// Sessions of seeded bars before the trade date.
const HISTORY: usize = 40;

/// A bar whose open is `gap` percent away from the previous close it is given.
fn bar(symbol: &str, date: NaiveDate, open: f64, close: f64) -> DailyBar {
    DailyBar {
        symbol: symbol.to_owned(),
        date,
        open,
        high: open.max(close),
        low: open.min(close),
        close,
        volume: 1_000_000,
        adj_close: close,
    }
}

/// Seeded bars: closes on a zig-zag around `level`, opens 0.5 % above the previous close.
fn history_bars(symbol: &str, dates: &[NaiveDate], level: f64) -> Vec<DailyBar> {
    let mut previous = level;
    dates
        .iter()
        .enumerate()
        .map(|(i, &date)| {
            let step = if i % 3 == 0 { 1.012 } else { 0.995 };
            let close = previous * step;
            let open = previous * 1.005;
            previous = close;
            bar(symbol, date, open, close)
        })
        .collect()
}

fn report(day: NaiveDate, timing: EarningsTiming, actual: Option<f64>) -> EarningsEvent {
    earnings_report("AAPL", day, timing, actual)
}

fn dividend(ex_date: NaiveDate, amount: f64) -> Dividend {
    quarterly_dividend("AAPL", ex_date, amount)
}

fn borrow(date: NaiveDate, rate: f64) -> BorrowRate {
    borrow_fee("AAPL", date, rate)
}

/// The simulator's closing quotes of `symbol` at `spot`.
fn closing_quotes(symbol: &str, spot: f64) -> Message {
    data(symbol, &simulated_quotes(symbol, close(), spot, 5))
}

/// IV (decimal) at `forward` from one expiration's chain rows, written out independently: each
/// strike's out-of-the-money side (the other when it has none, both averaged on the forward),
/// then total variance linear in log-moneyness between the strikes around the forward.
fn atm_iv_by_hand(rows: &[&ChainRow], forward: f64) -> Option<f64> {
    let mut points: Vec<(f64, f64)> = Vec::new();
    for row in rows {
        let (call, put) = (row.call.iv, row.put.iv);
        let iv = if row.strike > forward {
            call.or(put)
        } else if row.strike < forward {
            put.or(call)
        } else {
            match (call, put) {
                (Some(c), Some(p)) => Some((c + p) / 2.0),
                (c, p) => c.or(p),
            }
        };
        if let Some(iv) = iv.filter(|v| *v > 0.0) {
            points.push((row.strike, iv));
        }
    }
    points.sort_by(|a, b| a.0.total_cmp(&b.0));
    let below = points.iter().rev().find(|(k, _)| *k <= forward)?;
    let above = points.iter().find(|(k, _)| *k >= forward)?;
    if above.0 <= below.0 {
        return Some(below.1);
    }
    let x = (forward / below.0).ln() / (above.0 / below.0).ln();
    let variance = (1.0 - x) * below.1 * below.1 + x * above.1 * above.1;
    Some(variance.sqrt())
}

#[test]
fn a_live_session_extends_the_reference_series_its_close_reads() {
    runtime().block_on(async {
        let store = memory_store();
        let history = sessions_before(HISTORY);
        let seeded_on = history[HISTORY - 1];

        // The seeded history: bars, two past AAPL reports (before the open 30 sessions back,
        // after the close 10 back), a dividend and a borrow fee.
        let mut seeded_bars = history_bars("SPY", &history, 580.0);
        seeded_bars.extend(history_bars("AAPL", &history, 230.0));
        publish_reference(&store, &seeded_bars, seeded_on).await;
        let past_reports = [
            report(history[HISTORY - 30], EarningsTiming::BeforeOpen, Some(1.7)),
            report(history[HISTORY - 10], EarningsTiming::AfterClose, Some(1.2)),
            // Tomorrow's report, not known yet in the history.
            report(
                trade_date() + chrono::Days::new(1),
                EarningsTiming::BeforeOpen,
                None,
            ),
        ];
        publish_reference(&store, &past_reports, seeded_on).await;
        publish_reference(&store, &[dividend(history[5], 0.25)], seeded_on).await;
        publish_reference(&store, &[borrow(seeded_on, 0.003)], seeded_on).await;

        // The live session: a worker on the bus at the close.
        let config = WorkerConfig {
            interval: Duration::from_millis(20),
            rate: RATE,
            chain_only: true,
            ..WorkerConfig::default()
        };
        let (bus, mut announcements, worker) =
            worker_on_embedded_bus(&store, close(), config).await;

        let last_close = |symbol: &str| {
            seeded_bars
                .iter()
                .rfind(|b| b.symbol == symbol)
                .map(|b| b.close)
                .unwrap()
        };
        // Today's bars: AAPL gaps 4 % down on a before-open report of today.
        let spy_bar = bar(
            "SPY",
            trade_date(),
            last_close("SPY") * 1.001,
            last_close("SPY") * 1.006,
        );
        let aapl_bar = bar(
            "AAPL",
            trade_date(),
            last_close("AAPL") * 0.96,
            last_close("AAPL") * 0.97,
        );
        // Today's report with its actual (it replaces nothing), tomorrow's estimate again with
        // a revised figure (replaces the seeded row), a new dividend and today's borrow fee.
        let todays_report = report(trade_date(), EarningsTiming::BeforeOpen, Some(1.1));
        let tomorrow = report(
            trade_date() + chrono::Days::new(1),
            EarningsTiming::BeforeOpen,
            None,
        );
        let revised = EarningsEvent {
            eps_estimate: 1.55,
            ..tomorrow
        };
        let new_dividend = dividend(trade_date() + chrono::Days::new(30), 0.26);
        let todays_fee = borrow(trade_date(), 0.0031);
        let messages = [
            (
                topics::REFERENCE,
                data(MARKET_WIDE_KEY, &[todays_report.clone(), revised.clone()]),
            ),
            (
                topics::REFERENCE,
                data(MARKET_WIDE_KEY, std::slice::from_ref(&new_dividend)),
            ),
            (
                topics::REFERENCE,
                data(MARKET_WIDE_KEY, std::slice::from_ref(&todays_fee)),
            ),
            // The last quotes' spot is not quite the official close: the bar's wins.
            (
                topics::OPTION_QUOTES,
                closing_quotes("SPY", spy_bar.close * 1.0004),
            ),
            (
                topics::OPTION_QUOTES,
                closing_quotes("AAPL", aapl_bar.close * 0.9996),
            ),
            (
                topics::DAILY_BARS,
                data("SPY", std::slice::from_ref(&spy_bar)),
            ),
            (
                topics::DAILY_BARS,
                data("AAPL", std::slice::from_ref(&aapl_bar)),
            ),
        ];
        for (topic, message) in messages {
            bus.publish(topic, message).await.unwrap();
        }

        // Wait for every table to hold the session's rows (the bars may take two cycles).
        let wanted: BTreeMap<&str, u64> = [
            (Dataset::DailyBars.name(), seeded_bars.len() as u64 + 2),
            (Dataset::Earnings.name(), past_reports.len() as u64 + 1),
            (Dataset::Dividends.name(), 2),
            (Dataset::BorrowRates.name(), 2),
        ]
        .into_iter()
        .collect();
        let mut done: BTreeSet<String> = BTreeSet::new();
        let mut chains: BTreeSet<String> = BTreeSet::new();
        while done.len() < wanted.len() || chains.len() < 2 {
            for event in next_snapshot_events(&mut announcements, 16).await {
                if event.dataset == snapshot_datasets::CHAIN {
                    chains.insert(event.underlying.clone());
                } else if wanted.get(event.dataset.as_str()) == Some(&event.row_count) {
                    assert_eq!(event.trade_date, trade_date(), "{event:?}");
                    done.insert(event.dataset.clone());
                }
            }
        }
        let stats = worker.stop().await;
        // Each row once, though the lone worker reads the reference topic twice (for its books
        // and for the store): one merge, one new version per table of one message.
        assert_eq!(stats.reference_rows, 6);
        for dataset in [Dataset::Earnings, Dataset::Dividends, Dataset::BorrowRates] {
            assert_eq!(
                versions_written(&store, dataset.name(), trade_date()).await,
                1,
                "{dataset:?}"
            );
        }

        // The stored tables: the history plus the session, read as the session close reads.
        let bars: Vec<DailyBar> = read_reference(&store, trade_date()).await.unwrap();
        assert!(bars.contains(&spy_bar) && bars.contains(&aapl_bar));
        assert!(seeded_bars.iter().all(|b| bars.contains(b)));
        let reports: Vec<EarningsEvent> = read_reference(&store, trade_date()).await.unwrap();
        assert!(reports.contains(&todays_report) && reports.contains(&revised));
        assert!(
            !reports.contains(&past_reports[2]),
            "the revision replaced it"
        );
        let dividends: Vec<Dividend> = read_reference(&store, trade_date()).await.unwrap();
        assert!(
            dividends.contains(&new_dividend) && dividends.contains(&dividend(history[5], 0.25))
        );
        let fees: Vec<BorrowRate> = read_reference(&store, trade_date()).await.unwrap();
        assert!(fees.contains(&todays_fee) && fees.contains(&borrow(seeded_on, 0.003)));
        // The seeded partitions are untouched: an earlier session still reads the history.
        let before: Vec<DailyBar> = read_reference(&store, seeded_on).await.unwrap();
        assert_eq!(before.len(), seeded_bars.len());

        // The session close.
        let closed = close_latest_session(&store, close() + SESSION_CLOSE_GRACE)
            .await
            .unwrap()
            .expect("the session close is published");
        assert!(closed.skipped.is_empty(), "{:?}", closed.skipped);
        let key = SnapshotKey::new(snapshot_datasets::VOL_DAILY, trade_date(), MARKET_WIDE);
        let rows = read_rows(&store, &key, VolDailyRow::from_batch).await;
        let (aapl, spy) = (&rows[0], &rows[1]);
        assert_eq!(
            (aapl.underlying.as_str(), spy.underlying.as_str()),
            ("AAPL", "SPY")
        );

        // Close and return from the stored bars of the last two sessions.
        let stored_close = |symbol: &str, date: NaiveDate| {
            bars.iter()
                .find(|b| b.symbol == symbol && b.date == date)
                .map(|b| b.close)
                .unwrap()
        };
        for row in [aapl, spy] {
            let today = stored_close(&row.underlying, trade_date());
            let yesterday = stored_close(&row.underlying, seeded_on);
            assert_eq!(row.close, today);
            close_enough("log return", row.log_return_1d, (today / yesterday).ln());
        }

        // Earnings: the three reacted reports' gaps (previous close to the reaction open).
        let stored_open = |date: NaiveDate| {
            bars.iter()
                .find(|b| b.symbol == "AAPL" && b.date == date)
                .map(|b| b.open)
                .unwrap()
        };
        let mut dates: Vec<NaiveDate> = history.clone();
        dates.push(trade_date());
        let gap = |reaction: usize| {
            let previous = stored_close("AAPL", dates[reaction - 1]);
            (stored_open(dates[reaction]) / previous - 1.0) * 100.0
        };
        // Before the open 30 back reacts that day; after the close 10 back, the next day;
        // today's before the open, today.
        let gaps = [gap(HISTORY - 30), gap(HISTORY - 9), gap(HISTORY)];
        assert_eq!(aapl.earnings_count, Some(3));
        let ups = gaps.iter().filter(|g| **g >= 0.0).count() as u64;
        assert_eq!(aapl.earnings_up_count, Some(ups));
        assert_eq!(aapl.earnings_down_count, Some(3 - ups));
        // 1.7 and 1.2 against 1.5, and today's 1.1: one beat, two misses.
        assert_eq!(
            (aapl.earnings_beat_count, aapl.earnings_miss_count),
            (Some(1), Some(2))
        );
        let mean_abs = gaps.iter().map(|g| g.abs()).sum::<f64>() / 3.0;
        close_enough("avg abs move", aapl.earnings_avg_abs_move_pct, mean_abs);
        close_enough(
            "avg move",
            aapl.earnings_avg_move_pct,
            gaps.iter().sum::<f64>() / 3.0,
        );
        close_enough("avg beat move", aapl.earnings_avg_beat_move_pct, gaps[0]);
        let down = gaps.iter().copied().fold(f64::INFINITY, f64::min);
        close_enough("max down", aapl.earnings_max_down_pct, down);
        assert!(down < -3.0, "today's gap is about −4 %: {down}");
        assert_eq!(spy.earnings_count, None, "no reports for SPY");

        // The ATM term structure: one row per expiration of each closing chain, each at the IV
        // the stored chain gives at its forward.
        let term = closed.term_event.as_ref().expect("a vol_term partition");
        assert_eq!(term.dataset, snapshot_datasets::VOL_TERM);
        let key = SnapshotKey::new(snapshot_datasets::VOL_TERM, trade_date(), MARKET_WIDE);
        let term_rows = read_rows(&store, &key, VolTermRow::from_batch).await;
        assert_eq!(term_rows, closed.term);
        for symbol in ["AAPL", "SPY"] {
            let key = SnapshotKey::new(snapshot_datasets::CHAIN, trade_date(), symbol);
            let chain = read_rows(&store, &key, ChainRow::from_batch).await;
            let expirations: BTreeSet<NaiveDate> = chain
                .iter()
                .filter(|r| r.expiration > trade_date())
                .map(|r| r.expiration)
                .collect();
            let ours: Vec<&VolTermRow> = term_rows
                .iter()
                .filter(|t| t.underlying == symbol)
                .collect();
            assert_eq!(ours.len(), expirations.len(), "{symbol}");
            let mut with_iv = 0;
            for t in &ours {
                let rows: Vec<&ChainRow> = chain
                    .iter()
                    .filter(|r| r.expiration == t.expiration && r.settlement == t.settlement)
                    .collect();
                assert_eq!(t.forward, rows[0].forward);
                assert_eq!(t.dte, rows[0].dte);
                match atm_iv_by_hand(&rows, t.forward) {
                    Some(iv) => {
                        close_enough("atm iv", t.atm_iv_pct, iv * 100.0);
                        // Near the strike closest to the forward.
                        let nearest = rows
                            .iter()
                            .min_by(|a, b| {
                                (a.strike - t.forward)
                                    .abs()
                                    .total_cmp(&(b.strike - t.forward).abs())
                            })
                            .unwrap();
                        let side = if nearest.strike >= t.forward {
                            nearest.call.iv
                        } else {
                            nearest.put.iv
                        };
                        if let Some(side) = side {
                            let gap = (t.atm_iv_pct.unwrap() - side * 100.0).abs();
                            assert!(gap < 2.0, "{symbol} {}: {gap}", t.expiration);
                        }
                        with_iv += 1;
                    }
                    None => assert_eq!(t.atm_iv_pct, None),
                }
            }
            assert!(
                with_iv * 2 > ours.len(),
                "{symbol}: most expirations have an ATM IV"
            );
            // The front of the term structure is the row's front ATM IV.
            let row = if symbol == "AAPL" { aapl } else { spy };
            let front = ours.iter().find(|t| t.atm_iv_pct.is_some()).unwrap();
            assert_eq!(row.front_expiration, Some(front.expiration));
            assert_eq!(row.front_atm_iv_pct, front.atm_iv_pct);
        }
    });
}
