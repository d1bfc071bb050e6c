//! Fixtures of the exposure and flow family tests: an in-memory [`MarketDataReader`] holding
//! chains built from synthetic quotes with the worker's own steps (chain → exposures → flow).

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Datelike, NaiveDate, TimeZone, Utc, Weekday};
use optics_api::{ApiError, MarketDataReader, ReadFuture, Ticker, VolSeries};
use optics_compute::chain::{ChainMarket, build_chain};
use optics_compute::exposure::{
    ExposureConfig, compute_exposures, contracts_from_chain, exposure_rows, exposure_summary_rows,
};
use optics_compute::flow::{FlowConfig, flow_rows, flow_snapshot_rows};
use optics_compute::pricing::PricingModel;
use optics_schemas::{
    AssetClass, BorrowRate, ChainRow, Company, Dividend, EarningsEvent, EarningsTiming,
    EconomicEvent, VolDailyRow,
};
use serde_json::Value;

use optics_api::market::{ChainView, Coverage, ExposureView, FlowView, SessionBar};

/// The session of the fixtures (a Friday; its first expiration is the same day).
pub fn trade_date() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 11, 20).unwrap()
}

/// `count` weekdays before the fixtures' session, oldest first.
pub fn weekdays_before(count: usize) -> Vec<NaiveDate> {
    let mut dates = Vec::new();
    let mut day = trade_date().pred_opt().unwrap();
    while dates.len() < count {
        if !matches!(day.weekday(), Weekday::Sat | Weekday::Sun) {
            dates.push(day);
        }
        day = day.pred_opt().unwrap();
    }
    dates.reverse();
    dates
}

/// A deterministic number in [-0.5, 0.5) (a fixed linear congruential sequence).
pub fn noise(i: u64, seed: u64) -> f64 {
    let x = (i ^ (seed << 20))
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (x >> 33) as f64 / (1u64 << 31) as f64 - 0.5
}

/// Bars on `dates` with open = high = low = close, starting at 100, whose log return on the
/// `i`-th date is `ret(i)`.
pub fn flat_bars(dates: &[NaiveDate], ret: impl Fn(u64) -> f64) -> Vec<SessionBar> {
    let mut close: f64 = 100.0;
    dates
        .iter()
        .enumerate()
        .map(|(i, &date)| {
            if i > 0 {
                close *= ret(i as u64).exp();
            }
            SessionBar {
                date,
                open: close,
                high: close,
                low: close,
                close,
                volume: 1_000,
            }
        })
        .collect()
}

/// The sample correlation of `xs` and `ys` and the beta of `xs` on `ys`, computed with plain
/// loops (the series are of the same length).
pub fn correlation_and_beta(xs: &[f64], ys: &[f64]) -> (f64, f64) {
    let n = xs.len();
    let mx = xs.iter().sum::<f64>() / n as f64;
    let my = ys.iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for k in 0..n {
        sxy += (xs[k] - mx) * (ys[k] - my);
        sxx += (xs[k] - mx) * (xs[k] - mx);
        syy += (ys[k] - my) * (ys[k] - my);
    }
    (sxy / (sxx * syy).sqrt(), sxy / syy)
}

/// Apple as the company reference lists it.
pub fn apple() -> Company {
    Company {
        symbol: "AAPL".to_owned(),
        name: "Apple Inc.".to_owned(),
        asset_class: AssetClass::Stock,
        sector: Some("Information Technology".to_owned()),
        sector_etf: Some("XLK".to_owned()),
        market_cap: Some(3.4e12),
        beta_spy: 1.2,
        corr_spy: 0.7,
        priced_on_forward: false,
        industry: None,
    }
}

/// The `ticker` of each of an answer's `results`, in order.
pub fn result_tickers(data: &Value) -> Vec<&str> {
    data["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["ticker"].as_str().unwrap())
        .collect()
}

/// The instant the synthetic quotes carry (15:30 UTC, 10:30 New York).
pub fn quoted_at() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 20, 15, 30, 0).unwrap()
}

/// One underlying's datasets, as the worker would publish them.
#[derive(Debug, Clone)]
pub struct Market {
    pub chain: Arc<ChainView>,
    pub exposures: Arc<ExposureView>,
    pub flow: Arc<FlowView>,
}

/// A chain of `underlying` around `spot` (3 weekly expirations from the trade date,
/// `strikes` one-dollar strikes centred on spot), its exposures and flow.
pub fn market(underlying: &str, spot: f64, strikes: u32, seed: u64) -> Market {
    let first_strike = (spot - f64::from(strikes / 2)).round();
    let quotes = optics_tests::fixtures::synthetic_chain(
        underlying,
        spot,
        3,
        strikes,
        first_strike,
        seed,
        usize::MAX,
    );
    let snapshot = build_chain(
        &quotes,
        &ChainMarket {
            underlying: underlying.to_owned(),
            trade_date: trade_date(),
            as_of: quoted_at(),
            spot: Some(spot),
            rate: 0.04,
            dividend_yield: 0.01,
            model: PricingModel::BlackScholesMerton,
        },
    )
    .expect("synthetic quotes build a chain");
    market_from_rows(snapshot.rows)
}

/// The exposures and flow of `rows`, computed as the worker does.
pub fn market_from_rows(rows: Vec<ChainRow>) -> Market {
    let (contracts, context) = contracts_from_chain(&rows).expect("valid chain");
    let report = compute_exposures(&contracts, &context, &ExposureConfig::default())
        .expect("exposures compute");
    let flow = flow_rows(&contracts, context.spot, &FlowConfig::default()).expect("flow rows");
    let chain = ChainView::new(rows).expect("non-empty chain");
    let flow = flow_snapshot_rows(&flow, &chain.underlying, chain.trade_date, chain.as_of);
    Market {
        exposures: Arc::new(ExposureView::new(
            exposure_rows(&report, chain.trade_date),
            exposure_summary_rows(&report, chain.trade_date),
        )),
        flow: Arc::new(FlowView { rows: flow }),
        chain: Arc::new(chain),
    }
}

/// An in-memory reader: covered symbols and whichever datasets each has.
#[derive(Debug, Default)]
pub struct MemoryMarket {
    pub covered: Vec<String>,
    pub chains: BTreeMap<String, Arc<ChainView>>,
    pub exposures: BTreeMap<String, Arc<ExposureView>>,
    pub flows: BTreeMap<String, Arc<FlowView>>,
    /// Earnings reports per symbol (the reference data's).
    pub earnings: BTreeMap<String, Vec<EarningsEvent>>,
    /// The reader's generation; `Some` turns the response cache on.
    pub generation: Option<u64>,
    /// Stored `vol_daily` rows per symbol, ascending by session.
    pub vol_daily: BTreeMap<String, Vec<VolDailyRow>>,
    /// Daily bars per symbol, ascending by session.
    pub bars: BTreeMap<String, Vec<SessionBar>>,
    /// Macro releases (the reference data's economic calendar).
    pub economic: Vec<EconomicEvent>,
    /// The company map.
    pub companies: Vec<Arc<Company>>,
    /// Stored dividends per symbol.
    pub dividends: BTreeMap<String, Vec<Dividend>>,
    /// Stored borrow fees per symbol.
    pub borrow: BTreeMap<String, Vec<BorrowRate>>,
}

impl MemoryMarket {
    /// Adds every dataset of `market`.
    pub fn with(mut self, market: &Market) -> Self {
        let symbol = market.chain.underlying.clone();
        self.covered.push(symbol.clone());
        self.chains.insert(symbol.clone(), market.chain.clone());
        self.exposures
            .insert(symbol.clone(), market.exposures.clone());
        self.flows.insert(symbol, market.flow.clone());
        self
    }

    /// Schedules an earnings report of `symbol` on `date`, after the close.
    pub fn with_earnings(self, symbol: &str, date: NaiveDate) -> Self {
        self.with_report(EarningsEvent {
            symbol: symbol.to_owned(),
            report_date: date,
            timing: EarningsTiming::AfterClose,
            fiscal_quarter: "FY2026 Q3".to_owned(),
            eps_estimate: 1.0,
            eps_actual: None,
            revenue_estimate: None,
            revenue_actual: None,
        })
    }

    /// Adds an earnings report.
    pub fn with_report(mut self, report: EarningsEvent) -> Self {
        self.earnings
            .entry(report.symbol.clone())
            .or_default()
            .push(report);
        self
    }

    /// Stores `rows` as the `vol_daily` history of `symbol`.
    pub fn with_vol_history(mut self, symbol: &str, mut rows: Vec<VolDailyRow>) -> Self {
        rows.sort_by_key(|r| r.trade_date);
        self.vol_daily.insert(symbol.to_owned(), rows);
        self
    }

    /// Stores `bars` as the daily bars of `symbol`.
    pub fn with_bars(mut self, symbol: &str, bars: Vec<SessionBar>) -> Self {
        self.bars.insert(symbol.to_owned(), bars);
        self
    }

    /// Adds macro releases to the stored economic calendar.
    pub fn with_economic(mut self, events: Vec<EconomicEvent>) -> Self {
        self.economic.extend(events);
        self
    }

    /// Adds a dividend (past or declared) to the stored `dividends` table.
    pub fn with_dividend(mut self, dividend: Dividend) -> Self {
        self.dividends
            .entry(dividend.symbol.clone())
            .or_default()
            .push(dividend);
        self
    }

    /// Adds a day's borrow fee to the stored `borrow_rates` table.
    pub fn with_borrow(mut self, rate: BorrowRate) -> Self {
        self.borrow
            .entry(rate.symbol.clone())
            .or_default()
            .push(rate);
        self
    }

    /// Adds `company` to the company map.
    pub fn with_company(mut self, company: Company) -> Self {
        self.companies.push(Arc::new(company));
        self
    }

    /// Covers `symbol` without any data.
    pub fn covering(mut self, symbol: &str) -> Self {
        self.covered.push(symbol.to_owned());
        self
    }
}

impl MarketDataReader for MemoryMarket {
    fn covers(&self, ticker: &Ticker) -> bool {
        self.covered.iter().any(|s| s == ticker.as_str())
    }

    fn chain(&self, ticker: &Ticker) -> Option<Arc<ChainView>> {
        self.chains.get(ticker.as_str()).cloned()
    }

    fn exposures(&self, ticker: &Ticker) -> Option<Arc<ExposureView>> {
        self.exposures.get(ticker.as_str()).cloned()
    }

    fn flow(&self, ticker: &Ticker) -> Option<Arc<FlowView>> {
        self.flows.get(ticker.as_str()).cloned()
    }

    fn coverage(&self) -> Arc<Coverage> {
        let mut earnings = self.earnings.clone();
        for reports in earnings.values_mut() {
            reports.sort_by_key(|r| r.report_date);
        }
        let mut economic = self.economic.clone();
        economic.sort_by(|a, b| {
            (a.date, a.time.is_none(), a.time).cmp(&(b.date, b.time.is_none(), b.time))
        });
        let mut companies = self.companies.clone();
        companies.sort_by(|a, b| a.symbol.cmp(&b.symbol));
        let mut dividends = self.dividends.clone();
        for paid in dividends.values_mut() {
            paid.sort_by_key(|d| d.ex_date);
        }
        let mut borrow = self.borrow.clone();
        for rates in borrow.values_mut() {
            rates.sort_by_key(|r| r.date);
        }
        Arc::new(Coverage {
            earnings,
            bars: Arc::new(self.bars.clone()),
            economic: Arc::new(economic),
            companies,
            dividends,
            borrow,
        })
    }

    fn generation(&self) -> Option<u64> {
        self.generation
    }

    fn vol_history<'a>(
        &'a self,
        ticker: &'a Ticker,
    ) -> ReadFuture<'a, Result<VolSeries, ApiError>> {
        let stored = self
            .vol_daily
            .get(ticker.as_str())
            .cloned()
            .unwrap_or_default();
        Box::pin(async move { Ok(Arc::new(stored)) })
    }

    fn chain_at_time<'a>(
        &'a self,
        _ticker: &'a Ticker,
        _trade_date: NaiveDate,
        _expiration: NaiveDate,
    ) -> ReadFuture<'a, Result<Option<Vec<ChainRow>>, ApiError>> {
        Box::pin(async { Ok(None) })
    }
}

/// The router over `reader` with the clock at `at`.
pub fn app(reader: MemoryMarket, at: DateTime<Utc>) -> axum::Router {
    let state = optics_api::AppState::new(Arc::new(optics_compute::time::ManualClock::new(at)))
        .with_market_data(Arc::new(reader));
    optics_api::router(state)
}

/// Asserts `actual` is within `tolerance` (relative, with an absolute floor of 1e-9 × scale).
pub fn assert_close(actual: f64, expected: f64, relative: f64, what: &str) {
    let scale = expected.abs().max(1.0);
    assert!(
        (actual - expected).abs() <= relative * scale,
        "{what}: {actual} vs expected {expected} (relative tolerance {relative})"
    );
}

/// `value` as a number (panics naming `what` when it is not one).
pub fn num(value: &Value, what: &str) -> f64 {
    value
        .as_f64()
        .unwrap_or_else(|| panic!("{what} is not a number: {value}"))
}

/// The traded totals a flow summary is checked against, recomputed by the test.
#[derive(Debug, Clone, Copy)]
pub struct FlowTotals {
    pub call_premium: f64,
    pub put_premium: f64,
    pub call_volume: u64,
    pub put_volume: u64,
    /// How many contracts traded.
    pub count: usize,
}

/// Asserts a flow `summary` carries `expected`: the premiums and the net premium within
/// `premium_tolerance`, the volumes and count exactly, the call/put volume ratio within 1e-12,
/// and the sentiment by the documented rule (net beyond ±10 % of the total premium).
pub fn assert_flow_summary(summary: &Value, expected: FlowTotals, premium_tolerance: f64) {
    let FlowTotals {
        call_premium,
        put_premium,
        call_volume,
        put_volume,
        count,
    } = expected;
    assert_close(
        num(&summary["total_call_premium"], "cp"),
        call_premium,
        premium_tolerance,
        "call premium",
    );
    assert_close(
        num(&summary["total_put_premium"], "pp"),
        put_premium,
        premium_tolerance,
        "put premium",
    );
    assert_eq!(summary["total_call_volume"], call_volume);
    assert_eq!(summary["total_put_volume"], put_volume);
    assert_eq!(summary["total_flow_count"], count);
    assert_close(
        num(&summary["call_put_ratio"], "cpr"),
        call_volume as f64 / put_volume as f64,
        1e-12,
        "call/put",
    );
    let net = call_premium - put_premium;
    assert_close(
        num(&summary["net_premium"], "net"),
        net,
        premium_tolerance,
        "net premium",
    );
    let total = call_premium + put_premium;
    let sentiment = if net > 0.1 * total {
        "BULLISH"
    } else if net < -0.1 * total {
        "BEARISH"
    } else {
        "NEUTRAL"
    };
    assert_eq!(summary["sentiment"], sentiment);
}
