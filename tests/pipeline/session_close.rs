//! The session close: after a session's closing chains are in the store, its market-wide
//! `vol_daily` partition is published once, from the stored daily bars, earnings and earlier
//! rows — checked against realized volatility, IV rank, beta and correlation recomputed here
//! from the same inputs.

use std::sync::Arc;

use chrono::{NaiveDate, TimeDelta};
use optics_compute::time::ManualClock;
use optics_pipeline::store::{MARKET_WIDE, SnapshotKey, SnapshotStore};
use optics_pipeline::worker::{
    ComputeWorker, SESSION_CLOSE_GRACE, WorkerConfig, close_latest_session,
};
use optics_schemas::bus::snapshot_datasets;
use optics_schemas::{
    ChainRow, DailyBar, DataBatch, EarningsEvent, EarningsTiming, Message, VolDailyRow,
};
use optics_tests::bench::XorShift;

use crate::support::{
    RATE, close, close_enough, memory_store, publish_reference, runtime, sessions_before,
    simulated_quotes, start_price, trade_date,
};

/// Sessions of daily bars before the trade date.
const HISTORY: usize = 300;
/// Earlier `vol_daily` partitions (the IV rank lookback).
const PRIOR: usize = 30;

/// A random-walk close series over `dates`, ending near `last`.
fn walk(dates: &[NaiveDate], seed: u64, vol: f64, last: f64) -> Vec<f64> {
    let mut rng = XorShift(seed);
    let mut level = 0.0_f64;
    let mut logs: Vec<f64> = dates
        .iter()
        .map(|_| {
            level += vol * (rng.next_f64() - 0.5);
            level
        })
        .collect();
    let shift = last.ln() - logs.last().copied().unwrap_or_default();
    for l in &mut logs {
        *l += shift;
    }
    logs.into_iter().map(f64::exp).collect()
}

fn bars(symbol: &str, dates: &[NaiveDate], closes: &[f64]) -> Vec<DailyBar> {
    dates
        .iter()
        .zip(closes)
        .map(|(&date, &close)| DailyBar {
            symbol: symbol.to_owned(),
            date,
            open: close,
            high: close,
            low: close,
            close,
            volume: 1_000_000,
            adj_close: close,
        })
        .collect()
}

/// Sample standard deviation of the last `n` log returns, annualised, percent.
fn hv_pct(closes: &[f64], n: usize, skip: &[usize]) -> f64 {
    let first = closes.len() - n;
    let returns: Vec<f64> = (first..closes.len())
        .filter(|i| !skip.contains(i))
        .map(|i| (closes[i] / closes[i - 1]).ln())
        .collect();
    let mean = returns.iter().sum::<f64>() / returns.len() as f64;
    let var = returns.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (returns.len() - 1) as f64;
    (var * 252.0).sqrt() * 100.0
}

/// (beta, correlation) of the last `n` log returns.
fn beta_correlation(asset: &[f64], benchmark: &[f64], n: usize) -> (f64, f64) {
    let returns = |c: &[f64]| -> Vec<f64> {
        (c.len() - n..c.len())
            .map(|i| (c[i] / c[i - 1]).ln())
            .collect()
    };
    let (a, b) = (returns(asset), returns(benchmark));
    let mean = |x: &[f64]| x.iter().sum::<f64>() / x.len() as f64;
    let (ma, mb) = (mean(&a), mean(&b));
    let cov: f64 = a.iter().zip(&b).map(|(x, y)| (x - ma) * (y - mb)).sum();
    let var_a: f64 = a.iter().map(|x| (x - ma).powi(2)).sum();
    let var_b: f64 = b.iter().map(|y| (y - mb).powi(2)).sum();
    (cov / var_b, cov / (var_a * var_b).sqrt())
}

/// The simulator's closing quotes of `symbols`, built into chain snapshots by an offline worker.
async fn closing_chains(store: &SnapshotStore, symbols: &[&str]) {
    let clock = Arc::new(ManualClock::new(close()));
    let mut worker = ComputeWorker::offline(
        store.clone(),
        clock,
        WorkerConfig {
            rate: RATE,
            chain_only: true,
            ..WorkerConfig::default()
        },
    );
    for symbol in symbols {
        let quotes = simulated_quotes(symbol, close(), start_price(symbol), 5);
        let batch = DataBatch::from_rows(*symbol, &quotes).unwrap();
        worker.apply(&Message::Data(batch)).unwrap();
    }
    worker.publish_dirty(close()).await.unwrap();
}

#[test]
fn the_session_close_publishes_vol_daily_from_the_stored_inputs() {
    runtime().block_on(async {
        let store = memory_store();
        closing_chains(&store, &["SPY", "AAPL"]).await;
        let chain_spot = |rows: &[ChainRow]| rows[0].spot;
        let aapl_spot = {
            let key = SnapshotKey::new(snapshot_datasets::CHAIN, trade_date(), "AAPL");
            let snapshot = store.read(&key).await.unwrap().unwrap();
            chain_spot(&ChainRow::from_batch(&snapshot.batches[0]).unwrap())
        };

        // SPY's bars include the trade date; AAPL's stop the day before (a live close: the
        // vendor's bar comes later), so its close is the closing chain's spot.
        let history = sessions_before(HISTORY);
        let mut spy_dates = history.clone();
        spy_dates.push(trade_date());
        let spy_closes = walk(&spy_dates, 7, 0.02, 580.0);
        let aapl_history = walk(&history, 9, 0.035, aapl_spot * 0.99);
        let mut all_bars = bars("SPY", &spy_dates, &spy_closes);
        all_bars.extend(bars("AAPL", &history, &aapl_history));
        publish_reference(&store, &all_bars, history[HISTORY - 1]).await;
        // An after-close report 8 sessions back: its reaction is the next session's return.
        let report_date = history[HISTORY - 8];
        let report = EarningsEvent {
            symbol: "AAPL".into(),
            report_date,
            timing: EarningsTiming::AfterClose,
            fiscal_quarter: "FY2026 Q4".into(),
            eps_estimate: 1.5,
            eps_actual: Some(1.6),
            revenue_estimate: None,
            revenue_actual: None,
        };
        publish_reference(&store, std::slice::from_ref(&report), history[HISTORY - 1]).await;

        // Earlier vol_daily rows: AAPL's iv30d over the last PRIOR sessions.
        let prior_dates = &history[HISTORY - PRIOR..];
        let prior_iv: Vec<f64> = (0..PRIOR).map(|i| 18.0 + (i as f64 * 1.7) % 11.0).collect();
        for (date, iv) in prior_dates.iter().zip(&prior_iv) {
            let mut row = VolDailyRow::new("AAPL", *date, close(), 200.0);
            row.iv30d_pct = Some(*iv);
            let key = SnapshotKey::new(snapshot_datasets::VOL_DAILY, *date, MARKET_WIDE);
            store
                .publish(&key, &VolDailyRow::to_batch(&[row]).unwrap(), &[], close())
                .await
                .unwrap();
        }

        // Not before the grace period has passed.
        let early = close() + SESSION_CLOSE_GRACE - TimeDelta::seconds(1);
        assert!(close_latest_session(&store, early).await.unwrap().is_none());

        let now = close() + SESSION_CLOSE_GRACE;
        let closed = close_latest_session(&store, now)
            .await
            .unwrap()
            .expect("the session close is published");
        assert_eq!(closed.event.dataset, snapshot_datasets::VOL_DAILY);
        assert_eq!(closed.event.trade_date, trade_date());
        assert_eq!(closed.event.underlying, MARKET_WIDE);
        assert!(closed.skipped.is_empty(), "{:?}", closed.skipped);
        // Published once: the next poll finds it.
        assert!(close_latest_session(&store, now).await.unwrap().is_none());

        let key = SnapshotKey::new(snapshot_datasets::VOL_DAILY, trade_date(), MARKET_WIDE);
        let stored =
            VolDailyRow::from_batch(&store.read(&key).await.unwrap().unwrap().batches[0]).unwrap();
        assert_eq!(stored, closed.rows);
        let names: Vec<&str> = stored.iter().map(|r| r.underlying.as_str()).collect();
        assert_eq!(names, ["AAPL", "SPY"]);
        let (aapl, spy) = (&stored[0], &stored[1]);
        for row in &stored {
            assert_eq!(row.trade_date, trade_date());
            assert_eq!(row.as_of, close());
        }

        // Closes: SPY's bar; AAPL's chain spot.
        assert_eq!(spy.close, spy_closes[HISTORY]);
        assert_eq!(aapl.close, aapl_spot);
        let mut aapl_closes = aapl_history.clone();
        aapl_closes.push(aapl_spot);

        // Realized volatility, with and without the reaction session (index of the session
        // after the report).
        let reaction = HISTORY - 7;
        for (n, got) in [
            (5, aapl.hv_5d_pct),
            (20, aapl.hv_20d_pct),
            (30, aapl.hv_30d_pct),
            (252, aapl.hv_252d_pct),
        ] {
            close_enough(&format!("AAPL hv {n}"), got, hv_pct(&aapl_closes, n, &[]));
        }
        close_enough("SPY hv 60", spy.hv_60d_pct, hv_pct(&spy_closes, 60, &[]));
        close_enough(
            "AAPL hv 30 ex earnings",
            aapl.hv_30d_ex_earnings_pct,
            hv_pct(&aapl_closes, 30, &[reaction]),
        );
        assert_eq!(aapl.earnings_in_hv_30d_window, Some(true));
        assert_eq!(spy.earnings_in_hv_30d_window, Some(false));

        // Beta and correlation over the last 252 returns against SPY.
        let (beta, correlation) = beta_correlation(&aapl_closes, &spy_closes, 252);
        close_enough("AAPL beta", aapl.beta_spy_1y, beta);
        close_enough("AAPL correlation", aapl.correlation_spy_1y, correlation);
        close_enough("SPY beta", spy.beta_spy_1y, 1.0);

        // IV rank and percentile: today's iv30d within the earlier rows and itself.
        let today = aapl.iv30d_pct.expect("a 30-day IV from the chain");
        assert!((5.0..150.0).contains(&today), "{today}");
        let mut lookback = prior_iv.clone();
        lookback.push(today);
        let min = lookback.iter().copied().fold(f64::INFINITY, f64::min);
        let max = lookback.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        close_enough(
            "AAPL iv rank",
            aapl.iv_rank,
            (today - min) / (max - min) * 100.0,
        );
        let below = lookback.iter().filter(|v| **v < today).count();
        close_enough(
            "AAPL iv percentile",
            aapl.iv_percentile,
            below as f64 / lookback.len() as f64 * 100.0,
        );
        close_enough(
            "AAPL vrp",
            aapl.vrp_30d_pct,
            today - hv_pct(&aapl_closes, 30, &[]),
        );
        // SPY has no earlier rows: too short a lookback for a rank.
        assert!(spy.iv30d_pct.is_some());
        assert_eq!((spy.iv_rank, spy.iv_percentile), (None, None));
    });
}
