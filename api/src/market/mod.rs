//! Market data as the handlers read it: the latest snapshot of each (dataset, ticker),
//! decoded once when it is published and then shared by every request ([`ChainView`],
//! [`ExposureView`], [`FlowView`], [`FlowAggregatesView`]), plus history read through DataFusion
//! ([`MarketDataReader::chain_at_time`]).
//!
//! [`StoreMarketData`] is the implementation over the snapshot store: it loads the newest
//! snapshots at start and reloads a partition when its `snapshot` event arrives, swapping an
//! `Arc` so a hot read plans no query and takes no lock longer than a pointer copy.
//! It also computes the VIX of every SPX chain it installs into a per-session [`VixTape`].

pub mod cores;
pub(crate) mod history;
mod store_cache;
mod universe;
mod vix_tape;

use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};

use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::flow::{ExpirationFlow, StrikeFlow, flow_groups};
use optics_compute::time::expiration_close_utc;
use optics_compute::vol::{ConstantMaturityIv, ExpirationVol, expiration_vols};
use optics_schemas::{
    BorrowRate, ChainRow, Company, Dividend, EarningsEvent, EconomicEvent, ExposureRow,
    ExposureSummaryRow, FlowAggregateRow, FlowSnapshotRow, PricingModelCode,
};

pub use history::{ChainHistory, snapshot_session_config, store_file_url};
pub use store_cache::{LoadError, StoreMarketData};
pub use universe::{
    REFRESH_EVERY as UNIVERSE_REFRESH_EVERY, UniverseCache, UniverseRow, UniverseTable,
    covered_companies,
};
pub use vix_tape::{VixPrint, VixSession, VixTape};

/// One underlying's latest chain.
#[derive(Debug, Clone)]
pub struct ChainView {
    /// Underlying symbol.
    pub underlying: String,
    /// The session the chain belongs to.
    pub trade_date: NaiveDate,
    /// The instant it was priced.
    pub as_of: DateTime<Utc>,
    /// Rows sorted by expiration, settlement, strike.
    pub rows: Vec<ChainRow>,
    /// Distinct expirations, ascending.
    pub expirations: Vec<NaiveDate>,
    /// How many of `expirations` (the first ones) had expired at `as_of`.
    expired: usize,
    /// The chain's implied-vol summary, computed on first use and kept with the snapshot.
    implied: OnceLock<ImpliedSummary>,
}

/// The implied vols of one chain snapshot that the volatility endpoints read: per-expiration
/// forward-ATM IV and 25-delta wings, and the constant-maturity IVs.
#[derive(Debug, Clone, Default)]
pub struct ImpliedSummary {
    /// Per expiration, nearest first (`optics_compute::vol::expiration_vols`).
    pub expirations: Vec<ExpirationVol>,
    /// 10 days … a year (`optics_compute::vol::ConstantMaturityIv`).
    pub constant_maturity: ConstantMaturityIv,
}

impl ChainView {
    /// A view over `rows` (any order); `None` for an empty chain.
    pub fn new(mut rows: Vec<ChainRow>) -> Option<Self> {
        rows.sort_by(|a, b| {
            a.expiration
                .cmp(&b.expiration)
                .then(a.settlement.as_str().cmp(b.settlement.as_str()))
                .then(a.strike.total_cmp(&b.strike))
        });
        let first = rows.first()?;
        let (underlying, trade_date, as_of) =
            (first.underlying.clone(), first.trade_date, first.as_of);
        let mut expirations: Vec<NaiveDate> = rows.iter().map(|r| r.expiration).collect();
        expirations.dedup();
        let expired = expirations.partition_point(|e| expiration_close_utc(*e) <= as_of);
        Some(Self {
            underlying,
            trade_date,
            as_of,
            rows,
            expirations,
            expired,
            implied: OnceLock::new(),
        })
    }

    /// The chain's implied-vol summary: computed once per snapshot (every request of every
    /// volatility endpoint of the ticker reads the same). A chain whose rows break a rule has
    /// an empty summary rather than failing its readers.
    pub fn implied(&self) -> &ImpliedSummary {
        self.implied.get_or_init(|| {
            let expirations = expiration_vols(&self.rows).unwrap_or_default();
            let constant_maturity = ConstantMaturityIv::from_expirations(&expirations);
            ImpliedSummary {
                expirations,
                constant_maturity,
            }
        })
    }

    /// The expirations with time left at the chain's `as_of`, ascending: what a request without
    /// an expiration chooses from. A chain priced after an expiration's close (the 13:00 close
    /// of an early-close day, say) still holds that expiration's rows, served when asked for by
    /// date, but it is no longer the nearest.
    pub fn open_expirations(&self) -> &[NaiveDate] {
        &self.expirations[self.expired..]
    }

    /// The rows of one expiration (both settlements), by strike within each settlement.
    pub fn rows_of(&self, expiration: NaiveDate) -> &[ChainRow] {
        let start = self.rows.partition_point(|r| r.expiration < expiration);
        let end = self.rows.partition_point(|r| r.expiration <= expiration);
        &self.rows[start..end]
    }

    /// The price the chain is quoted against, as the API reports `stock_price`: the spot for
    /// stocks and ETFs, and for cash indices (priced on the forward) the forward of the nearest
    /// open expiration.
    pub fn stock_price(&self) -> f64 {
        let nearest = self.open_expirations().first().copied();
        let row = nearest
            .and_then(|e| self.rows_of(e).first())
            .or(self.rows.first());
        row.map_or(f64::NAN, quoted_price)
    }

    /// The price `expiration`'s rows are quoted against: the spot for stocks and ETFs, that
    /// expiration's forward for cash indices (each expiration of an index has its own forward);
    /// `None` when the expiration is not listed.
    pub fn price_for(&self, expiration: NaiveDate) -> Option<f64> {
        self.rows_of(expiration).first().map(quoted_price)
    }

    /// Whether the chain is priced on the forward (a cash index).
    pub fn priced_on_forward(&self) -> bool {
        self.rows
            .first()
            .is_some_and(|r| r.model == PricingModelCode::Black76)
    }
}

/// The price a chain row is quoted against: the spot under Black-Scholes-Merton, the forward
/// of its expiration under Black-76 (cash indices, which cannot be held and have no usable
/// spot carry).
pub fn quoted_price(row: &ChainRow) -> f64 {
    match row.model {
        PricingModelCode::Bsm => row.spot,
        PricingModelCode::Black76 => row.forward,
    }
}

/// One underlying's latest dealer exposures. The two halves are shared with the cache's
/// per-dataset entries they were installed from, not copied.
#[derive(Debug, Clone)]
pub struct ExposureView {
    /// Strike rows by expiration then strike.
    pub rows: Arc<Vec<ExposureRow>>,
    /// The aggregate row (expiration `None`) first, then one per expiration.
    pub summary: Arc<Vec<ExposureSummaryRow>>,
}

impl ExposureView {
    /// A view of `rows` and their `summary`.
    pub fn new(rows: Vec<ExposureRow>, summary: Vec<ExposureSummaryRow>) -> Self {
        Self {
            rows: Arc::new(rows),
            summary: Arc::new(summary),
        }
    }
}

/// One underlying's latest session flow, one row per contract.
#[derive(Debug, Clone)]
pub struct FlowView {
    /// The rows.
    pub rows: Vec<FlowSnapshotRow>,
}

/// One underlying's latest session flow summed by strike (across expirations) and by
/// expiration, as the worker publishes it beside the flow, decoded into groups once when the
/// snapshot is published.
#[derive(Debug, Clone)]
pub struct FlowAggregatesView {
    /// The trade date and instant of the flow cycle summed (every row carries its cycle's);
    /// `None` for an empty snapshot.
    pub cycle: Option<(NaiveDate, DateTime<Utc>)>,
    /// Every strike that traded, ascending.
    pub strikes: Vec<StrikeFlow>,
    /// Every expiration that traded, ascending.
    pub expirations: Vec<ExpirationFlow>,
}

impl FlowAggregatesView {
    /// The view of one snapshot's stored `rows`.
    pub fn from_rows(rows: &[FlowAggregateRow]) -> Self {
        let (strikes, expirations) = flow_groups(rows);
        FlowAggregatesView {
            cycle: rows.first().map(|r| (r.trade_date, r.as_of)),
            strikes,
            expirations,
        }
    }
}

/// The coverage universe as the reference data describes it.
#[derive(Debug, Clone, Default)]
pub struct Coverage {
    /// Companies by symbol order.
    pub companies: Vec<Arc<Company>>,
    /// Earnings reports per symbol, ascending by report date, one per date (the newest
    /// `earnings` reference snapshot): timing and EPS figures as the reference data has them.
    pub earnings: BTreeMap<String, Vec<EarningsEvent>>,
    /// Daily bars per symbol, ascending by date, one per session (the newest `daily_bars`
    /// reference snapshot). Shared: it is large and changes far less often than the rest.
    pub bars: Arc<BTreeMap<String, Vec<SessionBar>>>,
    /// Macro releases of every country, ascending by date (the newest `economic_calendar`
    /// reference snapshot). Shared, like `bars`.
    pub economic: Arc<Vec<EconomicEvent>>,
    /// Dividends per symbol, ascending by ex-date, one per ex-date (the newest `dividends`
    /// reference snapshot): declared future ones included.
    pub dividends: BTreeMap<String, Vec<Dividend>>,
    /// Borrow fees per symbol, ascending by date, one per date (the newest `borrow_rates`
    /// reference snapshot); the stored rate is a decimal per year.
    pub borrow: BTreeMap<String, Vec<BorrowRate>>,
}

/// One session's bar of one symbol: prices in dollars, volume in shares.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SessionBar {
    /// The session.
    pub date: NaiveDate,
    /// Opening price.
    pub open: f64,
    /// Highest price.
    pub high: f64,
    /// Lowest price.
    pub low: f64,
    /// Closing price.
    pub close: f64,
    /// Shares traded.
    pub volume: u64,
}

impl Coverage {
    /// The first earnings report of `symbol` on or after `from`.
    pub fn next_earnings(&self, symbol: &str, from: NaiveDate) -> Option<NaiveDate> {
        let reports = self.reports_of(symbol);
        reports
            .get(reports.partition_point(|r| r.report_date < from))
            .map(|r| r.report_date)
    }

    /// Every report of `symbol`, ascending by date (empty for none or an unknown symbol).
    pub fn reports_of(&self, symbol: &str) -> &[EarningsEvent] {
        self.earnings.get(symbol).map_or(&[], Vec::as_slice)
    }

    /// The shares `symbol` traded in its last session on or before `on_or_before`, with that
    /// session's date.
    pub fn share_volume(&self, symbol: &str, on_or_before: NaiveDate) -> Option<(NaiveDate, u64)> {
        let bars = self.bars_of(symbol);
        let end = bars.partition_point(|b| b.date <= on_or_before);
        end.checked_sub(1).map(|i| (bars[i].date, bars[i].volume))
    }

    /// Every bar of `symbol`, ascending by date (empty for none).
    pub fn bars_of(&self, symbol: &str) -> &[SessionBar] {
        self.bars.get(symbol).map_or(&[], Vec::as_slice)
    }

    /// Every dividend of `symbol`, ascending by ex-date (empty for none or an unknown symbol).
    pub fn dividends_of(&self, symbol: &str) -> &[Dividend] {
        self.dividends.get(symbol).map_or(&[], Vec::as_slice)
    }

    /// Every stored borrow fee of `symbol`, ascending by date (empty for none).
    pub fn borrow_of(&self, symbol: &str) -> &[BorrowRate] {
        self.borrow.get(symbol).map_or(&[], Vec::as_slice)
    }

    /// Whether it holds nothing at all.
    pub fn is_empty(&self) -> bool {
        self.companies.is_empty()
            && self.earnings.is_empty()
            && self.bars.is_empty()
            && self.economic.is_empty()
            && self.dividends.is_empty()
            && self.borrow.is_empty()
    }

    /// The releases of `country` dated `from` to `to` (both included), in stored order.
    pub fn economic_events<'a>(
        &'a self,
        country: &'a str,
        from: NaiveDate,
        to: NaiveDate,
    ) -> impl Iterator<Item = &'a EconomicEvent> + 'a {
        let start = self.economic.partition_point(|e| e.date < from);
        self.economic[start..]
            .iter()
            .take_while(move |e| e.date <= to)
            .filter(move |e| e.country == country)
    }

    /// The company of `symbol`.
    pub fn get(&self, symbol: &str) -> Option<&Arc<Company>> {
        self.companies
            .binary_search_by(|c| c.symbol.as_str().cmp(symbol))
            .ok()
            .map(|i| &self.companies[i])
    }
}
