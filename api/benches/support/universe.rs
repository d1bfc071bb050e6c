//! A synthetic universe of thousands of stocks for the screens' benchmarks (`load`'s screens,
//! `universe_refresh`): companies over the eleven sectors, daily bars, and `vol_daily`
//! histories shared by variant.

use std::sync::Arc;

use chrono::{Datelike, NaiveDate};
use optics_api::market::{ChainView, Coverage, ExposureView, FlowView};
use optics_api::{ApiError, MarketDataReader, ReadFuture, Ticker, VolSeries};
use optics_schemas::{ChainRow, VolDailyRow};

/// Distinct stored histories the synthetic underlyings share (by index modulo).
pub const UNIVERSE_VARIANTS: usize = 16;
/// GICS sectors the synthetic underlyings are spread over.
const UNIVERSE_SECTORS: [&str; 11] = [
    "Information Technology",
    "Financials",
    "Health Care",
    "Consumer Discretionary",
    "Communication Services",
    "Industrials",
    "Consumer Staples",
    "Energy",
    "Utilities",
    "Real Estate",
    "Materials",
];

/// A universe of `n` synthetic stocks (`U00001`, …): companies spread over the sectors with
/// market caps from $0.5bn up, 60 daily bars each, and one of [`UNIVERSE_VARIANTS`] stored
/// `vol_daily` histories of `sessions` sessions each, ending 2026-11-19 (iv30d, HVs and skew
/// slope moving differently per variant). No live chains: the rows are read from the stored
/// sessions, as after the close.
#[derive(Debug)]
pub struct UniverseMarket {
    /// The companies and their bars.
    pub coverage: Arc<Coverage>,
    /// The stored histories the underlyings share, by variant (row symbols are `U`).
    pub histories: Vec<VolSeries>,
}

impl UniverseMarket {
    /// `n` stocks over `sessions` stored sessions (at least 60).
    pub fn new(n: usize, sessions: usize) -> Self {
        let mut day = NaiveDate::from_ymd_opt(2026, 11, 19).expect("date");
        let mut dates = Vec::new();
        while dates.len() < sessions {
            if !matches!(day.weekday(), chrono::Weekday::Sat | chrono::Weekday::Sun) {
                dates.push(day);
            }
            day = day.pred_opt().expect("date");
        }
        dates.reverse();
        let histories: Vec<VolSeries> = (0..UNIVERSE_VARIANTS)
            .map(|v| {
                let mut close = 50.0 + 10.0 * v as f64;
                let rows = dates
                    .iter()
                    .enumerate()
                    .map(|(i, date)| {
                        let x = ((i * 31 + v * 7919) as u64)
                            .wrapping_mul(6364136223846793005)
                            .wrapping_add(1442695040888963407);
                        close *= (((x >> 33) as f64 / (1u64 << 31) as f64 - 0.5) * 0.04).exp();
                        let as_of = date.and_hms_opt(21, 0, 0).expect("time").and_utc();
                        let mut row = VolDailyRow::new("U", *date, as_of, close);
                        let phase = i as f64 * (0.03 + 0.01 * v as f64);
                        let iv = 20.0 + 2.0 * v as f64 + 8.0 * phase.sin();
                        row.iv30d_pct = Some(iv);
                        row.iv60d_pct = Some(iv * 1.02);
                        row.iv90d_pct = Some(iv * (1.0 + 0.01 * v as f64));
                        row.hv_20d_pct = Some(iv * (0.7 + 0.04 * v as f64));
                        row.hv_30d_pct = row.hv_20d_pct;
                        row.skew_slope_30d = Some(-30.0 + 6.0 * (phase * 1.7).cos());
                        row
                    })
                    .collect();
                Arc::new(rows)
            })
            .collect();
        let mut companies = Vec::with_capacity(n);
        let mut bars = std::collections::BTreeMap::new();
        for i in 1..=n {
            let symbol = format!("U{i:05}");
            let variant = &histories[i % UNIVERSE_VARIANTS];
            let sessions = &variant[variant.len() - 60..];
            bars.insert(
                symbol.clone(),
                sessions
                    .iter()
                    .map(|r| optics_api::market::SessionBar {
                        date: r.trade_date,
                        open: r.close,
                        high: r.close * 1.01,
                        low: r.close * 0.99,
                        close: r.close,
                        volume: 1_000_000 + i as u64,
                    })
                    .collect(),
            );
            companies.push(Arc::new(optics_schemas::Company {
                symbol,
                name: format!("Synthetic {i}"),
                asset_class: optics_schemas::AssetClass::Stock,
                sector: Some(UNIVERSE_SECTORS[i % UNIVERSE_SECTORS.len()].to_owned()),
                sector_etf: None,
                market_cap: Some(5e8 * (1.0 + (i % 97) as f64)),
                beta_spy: 1.0,
                corr_spy: 0.6,
                priced_on_forward: false,
                industry: None,
            }));
        }
        companies.sort_by(|a, b| a.symbol.cmp(&b.symbol));
        Self {
            coverage: Arc::new(Coverage {
                companies,
                bars: Arc::new(bars),
                ..Coverage::default()
            }),
            histories,
        }
    }

    /// The history variant of a synthetic symbol.
    pub fn variant(&self, ticker: &Ticker) -> Option<usize> {
        let number: usize = ticker.as_str().strip_prefix('U')?.parse().ok()?;
        (1..=self.coverage.companies.len())
            .contains(&number)
            .then_some(number % UNIVERSE_VARIANTS)
    }
}

impl MarketDataReader for UniverseMarket {
    fn covers(&self, ticker: &Ticker) -> bool {
        self.variant(ticker).is_some()
    }

    fn chain(&self, _: &Ticker) -> Option<Arc<ChainView>> {
        None
    }

    fn exposures(&self, _: &Ticker) -> Option<Arc<ExposureView>> {
        None
    }

    fn flow(&self, _: &Ticker) -> Option<Arc<FlowView>> {
        None
    }

    fn coverage(&self) -> Arc<Coverage> {
        Arc::clone(&self.coverage)
    }

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
        let series = self
            .variant(ticker)
            .map_or_else(VolSeries::default, |v| Arc::clone(&self.histories[v]));
        Box::pin(async move { Ok(series) })
    }
}
