//! The session's universe table: one row per covered underlying (its cores row, what the
//! screens read, and its company), so `/screen` and `/market-overview` scan rows in memory
//! instead of walking chains and series per request.
//!
//! The table belongs to one reader generation (see [`MarketDataReader::generation`]): every
//! snapshot or reference table the reader swaps in bumps the generation. The binary rebuilds
//! the table in the background every few seconds when the generation moved
//! ([`UniverseCache::refresh`]; the session's last cycle leaves the final one), reusing each
//! row whose snapshots did not change, and a request answers from the table held meanwhile
//! ([`MAX_STALENESS`]), so it never waits for a build after the first. A reader without a
//! generation (tests' in-memory markets) is read afresh each time.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::cores::CoresRow;
use optics_compute::screen::ScreenRow;
use optics_compute::time::new_york_date;
use optics_schemas::{AssetClass, Company};

use super::cores::cores_row;
use super::{ChainView, Coverage};
use crate::error::ApiError;
use crate::state::MarketDataReader;
use crate::ticker::Ticker;

/// One underlying of the table.
#[derive(Debug, Clone)]
pub struct UniverseRow {
    /// Symbol.
    pub ticker: String,
    /// Its company (sector, asset class, market cap), when the reference data has one.
    pub company: Option<Arc<Company>>,
    /// The analytics row `/cores` serves.
    pub cores: CoresRow,
    /// The session of its chain, when one is held.
    pub chain_trade_date: Option<NaiveDate>,
    /// What the row was computed from, to reuse it when none of it changed.
    inputs: RowInputs,
}

/// The identity of a row's inputs: the shared snapshots it read (pointers: a swapped snapshot
/// is a new allocation) and the day.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RowInputs {
    coverage: usize,
    chain: Option<usize>,
    flow: Option<usize>,
    vol: usize,
    vol_len: usize,
    today: NaiveDate,
}

fn address<T>(value: &Arc<T>) -> usize {
    Arc::as_ptr(value) as *const u8 as usize
}

impl UniverseRow {
    /// Stock, ETF or index (a symbol without a company counts as a stock).
    pub fn asset_class(&self) -> AssetClass {
        self.company
            .as_ref()
            .map_or(AssetClass::Stock, |c| c.asset_class)
    }
}

/// Every covered underlying's row at one reader generation.
#[derive(Debug, Clone)]
pub struct UniverseTable {
    /// The reader generation it was built at.
    pub generation: Option<u64>,
    /// The clock's New York date at the build.
    pub today: NaiveDate,
    /// When it was built, on the machine's monotonic clock (how stale a held table is).
    built: Instant,
    /// Rows by symbol.
    pub rows: Vec<UniverseRow>,
    /// What the screens and the overview read of each row, in the same order (kept apart so
    /// a screen scans a slice without copying).
    pub screens: Vec<ScreenRow>,
}

impl UniverseTable {
    /// The newest chain session among the rows.
    pub fn latest_session(&self) -> Option<NaiveDate> {
        self.rows.iter().filter_map(|r| r.chain_trade_date).max()
    }

    /// Builds the table from `reader` at `now`: one row per company of the coverage the
    /// reader covers. A row of `previous` whose inputs are the very same snapshots is reused
    /// instead of computed again.
    pub async fn build(
        reader: &dyn MarketDataReader,
        now: DateTime<Utc>,
        previous: Option<&UniverseTable>,
    ) -> Result<Self, ApiError> {
        let generation = reader.generation();
        let today = new_york_date(now);
        let coverage = reader.coverage();
        let mut rows: Vec<(UniverseRow, ScreenRow)> = Vec::with_capacity(coverage.companies.len());
        let covered: Vec<Ticker> = covered_companies(reader, &coverage)
            .map(|(_, ticker)| ticker)
            .collect();
        let tickers: Vec<&str> = covered.iter().map(Ticker::as_str).collect();
        reader.prefetch_vol_history(&tickers).await?;
        for (company, ticker) in covered_companies(reader, &coverage) {
            let chain = reader.chain(&ticker);
            let vol = reader.vol_history(&ticker).await?;
            let flow = reader.flow(&ticker);
            let inputs = RowInputs {
                coverage: address(&coverage),
                chain: chain.as_ref().map(address),
                flow: flow.as_ref().map(address),
                vol: address(&vol),
                vol_len: vol.len(),
                today,
            };
            let reused = previous.and_then(|table| {
                let i = table
                    .rows
                    .binary_search_by(|r| r.ticker.as_str().cmp(ticker.as_str()))
                    .ok()?;
                (table.rows[i].inputs == inputs)
                    .then(|| (table.rows[i].clone(), table.screens[i].clone()))
            });
            if let Some(row) = reused {
                rows.push(row);
                continue;
            }
            let cores = cores_row(
                &coverage,
                chain.as_deref(),
                &vol,
                flow.as_deref(),
                ticker.as_str(),
                today,
            );
            let screen = screen_row(&cores, company, chain.as_deref(), today);
            let row = UniverseRow {
                ticker: company.symbol.clone(),
                company: Some(Arc::clone(company)),
                cores,
                chain_trade_date: chain.map(|c| c.trade_date),
                inputs,
            };
            rows.push((row, screen));
            // A long build yields between rows: requests keep being served meanwhile.
            tokio::task::yield_now().await;
        }
        rows.sort_by(|a, b| a.0.ticker.cmp(&b.0.ticker));
        let (rows, screens) = rows.into_iter().unzip();
        Ok(Self {
            generation,
            today,
            built: Instant::now(),
            rows,
            screens,
        })
    }
}

/// The companies of `coverage` whose symbol is a ticker `reader` covers, with that ticker:
/// the universe the table holds a row for.
pub fn covered_companies<'a>(
    reader: &'a dyn MarketDataReader,
    coverage: &'a Coverage,
) -> impl Iterator<Item = (&'a Arc<Company>, Ticker)> + 'a {
    coverage.companies.iter().filter_map(move |company| {
        let ticker = Ticker::parse(&company.symbol).ok()?;
        reader.covers(&ticker).then_some((company, ticker))
    })
}

/// What the screens read of one underlying: the cores fields by name, the company's size and
/// sector, and the pin figures of the chain's front expiration.
fn screen_row(
    cores: &CoresRow,
    company: &Company,
    chain: Option<&ChainView>,
    today: NaiveDate,
) -> ScreenRow {
    let field = |name: &str| cores.get(name);
    let (front_days, pin_distance_pct) = chain.and_then(|c| pin_of(c, today)).unzip();
    ScreenRow {
        price: field("stkPx"),
        chg_1d_pct: field("stkPxChng1d"),
        chg_1w_pct: field("stkPxChng1wk"),
        chg_1m_pct: field("stkPxChng1m"),
        market_cap: field("mktCap").or(company.market_cap),
        sector: company.sector.clone(),
        iv30d: field("iv30d"),
        contango: field("contango"),
        hv20d: field("clsHv20d"),
        iv_percentile: field("ivPctile1y"),
        skew_pctile: field("slopePctile1y").map(|p| 100.0 - p),
        iv30d_mean_1y: field("iv30dMean1y"),
        iv30d_stdv_1y: field("iv30dStdv1y"),
        days_to_earnings: field("daysToNextErn").map(|d| d as i64),
        imp_earn_move: field("impErnMv"),
        correl_spy_1m: field("correlSpy1m"),
        correl_spy_1y: field("correlSpy1y"),
        option_volume: field("cVolu").zip(field("pVolu")).map(|(c, p)| c + p),
        open_interest: field("cOi").zip(field("pOi")).map(|(c, p)| c + p),
        call_volume: field("cVolu"),
        put_volume: field("pVolu"),
        put_skew: field("skew25d30d"),
        front_days,
        pin_distance_pct,
    }
}

/// Calendar days to the chain's front open expiration and spot's distance from its largest
/// open-interest strike (calls and puts summed), percent of spot.
fn pin_of(chain: &ChainView, today: NaiveDate) -> Option<(i64, f64)> {
    let front = *chain.open_expirations().first()?;
    let spot = chain.price_for(front)?;
    let rows = chain.rows_of(front);
    let (strike, oi) = rows
        .iter()
        .map(|r| {
            let oi = r.call.open_interest.unwrap_or(0) + r.put.open_interest.unwrap_or(0);
            (r.strike, oi)
        })
        .max_by(|a, b| a.1.cmp(&b.1).then(b.0.total_cmp(&a.0)))?;
    (oi > 0 && spot > 0.0).then(|| {
        (
            (front - today).num_days(),
            (spot - strike).abs() / spot * 100.0,
        )
    })
}

/// How old (on the machine's clock) a held table may be and still answer a request while the
/// reader's generation has moved on: the binary rebuilds it every [`REFRESH_EVERY`], so a
/// request never waits for a build once the first one is done.
pub const MAX_STALENESS: Duration = Duration::from_secs(30);
/// How often the binary's refresh task rebuilds the table when the generation moved (the
/// screens' figures are daily ones; live chains move only their intraday columns).
pub const REFRESH_EVERY: Duration = Duration::from_secs(5);

/// The universe table of the reader, shared by every request.
#[derive(Debug, Default)]
pub struct UniverseCache {
    held: std::sync::RwLock<Option<Arc<UniverseTable>>>,
    /// One build at a time.
    building: tokio::sync::Mutex<()>,
}

impl UniverseCache {
    fn held(&self) -> Option<Arc<UniverseTable>> {
        self.held
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The table for a request now: the held one when it is of the reader's generation, or
    /// of today and at most [`MAX_STALENESS`] old (the refresh task is rebuilding it); else a
    /// build by this request, unless one is already running: then the held table of today
    /// whatever its age, or, without one (the first build after a start or on a new day),
    /// the running build's table once it is done — a request waits for it rather than being
    /// refused, bounded by the server's request timeout. A reader without a generation (a
    /// test's in-memory market) is read afresh each time.
    pub async fn table(
        &self,
        reader: &dyn MarketDataReader,
        now: DateTime<Utc>,
    ) -> Result<Arc<UniverseTable>, ApiError> {
        let usable = |table: &UniverseTable| {
            let generation = reader.generation();
            generation.is_some()
                && table.today == new_york_date(now)
                && (table.generation == generation || table.built.elapsed() <= MAX_STALENESS)
        };
        if let Some(table) = self.held().filter(|t| usable(t)) {
            return Ok(table);
        }
        let _building = match self.building.try_lock() {
            Ok(building) => building,
            Err(_) => {
                // A table of today, however old, beats waiting while its successor is built.
                if let Some(table) = self
                    .held()
                    .filter(|t| reader.generation().is_some() && t.today == new_york_date(now))
                {
                    return Ok(table);
                }
                self.building.lock().await
            }
        };
        if let Some(table) = self.held().filter(|t| usable(t)) {
            return Ok(table);
        }
        self.rebuild(reader, now).await
    }

    /// Rebuilds the table now when the reader's generation moved since the held one (what
    /// the binary's refresh task calls); whether it built.
    pub async fn refresh(
        &self,
        reader: &dyn MarketDataReader,
        now: DateTime<Utc>,
    ) -> Result<bool, ApiError> {
        let _building = self.building.lock().await;
        let current = self.held().is_some_and(|t| {
            t.generation.is_some()
                && t.generation == reader.generation()
                && t.today == new_york_date(now)
        });
        if current {
            return Ok(false);
        }
        self.rebuild(reader, now).await?;
        Ok(true)
    }

    async fn rebuild(
        &self,
        reader: &dyn MarketDataReader,
        now: DateTime<Utc>,
    ) -> Result<Arc<UniverseTable>, ApiError> {
        let previous = self.held();
        let table = Arc::new(UniverseTable::build(reader, now, previous.as_deref()).await?);
        *self
            .held
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Arc::clone(&table));
        Ok(table)
    }
}

#[cfg(test)]
mod tests {
    /// Every cores field the screens read by name is in the catalog (a renamed field would
    /// otherwise read as null everywhere).
    #[test]
    fn the_fields_the_screens_read_exist() {
        for name in [
            "stkPx",
            "stkPxChng1d",
            "stkPxChng1wk",
            "stkPxChng1m",
            "mktCap",
            "iv30d",
            "iv60d",
            "contango",
            "clsHv20d",
            "ivPctile1y",
            "slopePctile1y",
            "iv30dMean1y",
            "iv30dStdv1y",
            "daysToNextErn",
            "impErnMv",
            "correlSpy1m",
            "correlSpy1y",
            "cVolu",
            "pVolu",
            "cOi",
            "pOi",
            "skew25d30d",
        ] {
            assert!(
                optics_compute::cores::field_index(name).is_some(),
                "{name} is not a cores field"
            );
        }
    }
}
