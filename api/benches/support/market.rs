//! The in-memory market the API benchmarks read (`load`, and the MCP crate's `tool_call`):
//! one SPY-sized chain built by the chain builder from synthetic quotes, its exposures and flow
//! computed as the worker does, and a `vol_daily` history — served for SPY and 24 aliases.

use std::sync::Arc;

use chrono::{Datelike, NaiveDate};
use optics_api::market::{ChainView, Coverage, ExposureView, FlowView};
use optics_api::{ApiError, MarketDataReader, ReadFuture, Ticker, VolSeries};
use optics_compute::chain::{ChainMarket, build_chain};
use optics_compute::exposure::{
    ExposureConfig, compute_exposures, contracts_from_chain, exposure_rows, exposure_summary_rows,
};
use optics_compute::flow::{FlowConfig, flow_rows, flow_snapshot_rows};
use optics_compute::pricing::PricingModel;
use optics_schemas::{ChainRow, VolDailyRow};

/// The symbols the batch route names: SPY and 24 aliases served the same chain and history.
pub const BATCH_SYMBOLS: [&str; 25] = [
    "SPY", "AAA", "BBB", "CCC", "DDD", "EEE", "FFF", "GGG", "HHH", "III", "JJJ", "KKK", "LLL",
    "MMM", "NNN", "OOO", "PPP", "QQQ", "RRR", "SSS", "TTT", "UUU", "VVV", "WWW", "XXX",
];

/// Stored sessions of the synthetic `vol_daily` history.
pub const HISTORY_SESSIONS: usize = 1_000;

/// A reader serving one SPY chain, its exposures, its flow and a `vol_daily` history from
/// memory (the batch symbols are aliases of SPY).
#[derive(Debug)]
pub struct BenchMarket {
    pub spy: Arc<ChainView>,
    pub exposures: Arc<ExposureView>,
    pub flow: Arc<FlowView>,
    pub history: VolSeries,
}

/// Four years of sessions before 2026-11-20: closes from a fixed pseudo-random walk, an iv30d
/// and stored HVs, slope and curvature, as a session close writes them.
fn vol_history() -> Vec<VolDailyRow> {
    let mut day = NaiveDate::from_ymd_opt(2026, 11, 19).expect("date");
    let mut dates = Vec::new();
    while dates.len() < HISTORY_SESSIONS {
        if !matches!(day.weekday(), chrono::Weekday::Sat | chrono::Weekday::Sun) {
            dates.push(day);
        }
        day = day.pred_opt().expect("date");
    }
    dates.reverse();
    let mut close = 450.0f64;
    let mut closes = Vec::new();
    dates
        .into_iter()
        .enumerate()
        .map(|(i, date)| {
            let x = (i as u64)
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            close *= (((x >> 33) as f64 / (1u64 << 31) as f64 - 0.5) * 0.03).exp();
            closes.push(close);
            let as_of = date.and_hms_opt(21, 0, 0).expect("time").and_utc();
            let mut row = VolDailyRow::new("SPY", date, as_of, close);
            let hv = optics_compute::vol::HvSet::from_closes(&closes);
            row.hv_5d_pct = hv.hv_5d_pct;
            row.hv_20d_pct = hv.hv_20d_pct;
            row.hv_252d_pct = hv.hv_252d_pct;
            row.iv30d_pct = Some(18.0 + 6.0 * (i as f64 * 0.05).sin());
            row.skew_slope_30d = Some(-25.0 + 4.0 * (i as f64 * 0.07).sin());
            row.smile_curvature_30d = Some(40.0 + 8.0 * (i as f64 * 0.11).cos());
            row
        })
        .collect()
}

impl BenchMarket {
    /// SPY on Friday 2026-11-20 at 10:00 New York: synthetic quotes priced by `build_chain`,
    /// exposures and flow by the worker's functions.
    pub fn spy(as_of: chrono::DateTime<chrono::Utc>) -> Self {
        // SPY-sized: 30 expirations (SPY lists about that many) of 135 strikes, 8,100
        // contracts, as the compute benches' SPY.
        let quotes =
            optics_tests::fixtures::synthetic_chain("SPY", 600.0, 30, 135, 533.0, 7, usize::MAX);
        let trade_date = NaiveDate::from_ymd_opt(2026, 11, 20).expect("date");
        let market = ChainMarket {
            underlying: "SPY".to_owned(),
            trade_date,
            as_of,
            spot: None,
            rate: 0.043,
            dividend_yield: 0.013,
            model: PricingModel::BlackScholesMerton,
        };
        let snapshot = build_chain(&quotes, &market).expect("synthetic SPY chain builds");
        let (contracts, context) = contracts_from_chain(&snapshot.rows).expect("valid chain");
        let report = compute_exposures(&contracts, &context, &ExposureConfig::default())
            .expect("exposures compute");
        let flow = flow_rows(&contracts, context.spot, &FlowConfig::default()).expect("flow");
        Self {
            exposures: Arc::new(ExposureView::new(
                exposure_rows(&report, trade_date),
                exposure_summary_rows(&report, trade_date),
            )),
            flow: Arc::new(FlowView {
                rows: flow_snapshot_rows(&flow, "SPY", trade_date, as_of),
            }),
            spy: Arc::new(ChainView::new(snapshot.rows).expect("non-empty chain")),
            history: Arc::new(vol_history()),
        }
    }
}

impl MarketDataReader for BenchMarket {
    fn covers(&self, ticker: &Ticker) -> bool {
        BATCH_SYMBOLS.contains(&ticker.as_str())
    }

    fn chain(&self, ticker: &Ticker) -> Option<Arc<ChainView>> {
        self.covers(ticker).then(|| self.spy.clone())
    }

    fn exposures(&self, ticker: &Ticker) -> Option<Arc<ExposureView>> {
        self.covers(ticker).then(|| self.exposures.clone())
    }

    fn flow(&self, ticker: &Ticker) -> Option<Arc<FlowView>> {
        self.covers(ticker).then(|| self.flow.clone())
    }

    fn coverage(&self) -> Arc<Coverage> {
        Arc::default()
    }

    /// The data never changes during the run: one generation, so answers are reused as the
    /// store-backed reader reuses them between snapshot swaps.
    fn generation(&self) -> Option<u64> {
        Some(0)
    }

    fn chain_at_time<'a>(
        &'a self,
        _: &'a Ticker,
        _: NaiveDate,
        _: NaiveDate,
    ) -> ReadFuture<'a, Result<Option<Vec<ChainRow>>, ApiError>> {
        Box::pin(async { Ok(None) })
    }

    fn vol_history<'a>(
        &'a self,
        ticker: &'a Ticker,
    ) -> ReadFuture<'a, Result<VolSeries, ApiError>> {
        let series = if self.covers(ticker) {
            Arc::clone(&self.history)
        } else {
            VolSeries::default()
        };
        Box::pin(async move { Ok(series) })
    }
}
