//! The session's universe table: one row per covered underlying (its cores row, what the
//! screens read, and its company), so `/screen` and `/market-overview` scan rows in memory
//! instead of walking chains and series per request.
//!
//! The table belongs to one reader generation (see [`MarketDataReader::generation`]): every
//! snapshot or reference table the reader swaps in bumps the generation. The binary rebuilds
//! the table in the background when the generation moved ([`UniverseCache::refresh`]; the
//! session's last cycle leaves the final one), reusing each row whose snapshots did not
//! change, and a request answers from the table held meanwhile, so it never waits for a build
//! after the first. A live chain changes every cycle, and its row's smile fits cost tens of
//! milliseconds, so the rebuilds are spaced by their own cost
//! ([`UniverseCache::refresh_pause`]: at most a tenth of one core), every few seconds for the
//! default universe and every few minutes for thousands of underlyings. A reader without a
//! generation (tests' in-memory markets) is read afresh each time.

use std::sync::Arc;
use std::time::{Duration, Instant};

use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::cores::{CoresHistory, CoresRow};
use optics_compute::screen::ScreenRow;
use optics_compute::time::new_york_date;
use optics_schemas::{AssetClass, Company};

use super::cores::cores_row;
use super::{ChainView, Coverage, FlowView};
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
    /// What the row read of the stored `vol_daily` series: kept with the row so the next
    /// build of the same day and series reuses it instead of reading the series again.
    history: Arc<CoresHistory>,
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
    history: usize,
    today: NaiveDate,
}

fn address<T>(value: &Arc<T>) -> usize {
    Arc::as_ptr(value) as *const u8 as usize
}

impl UniverseRow {
    /// What the row read of its stored `vol_daily` series (cut for the table's day).
    pub fn history(&self) -> &CoresHistory {
        &self.history
    }

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
    /// The reader's `vol_daily` generation it was built at.
    vol_generation: Option<u64>,
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

    /// The index of `ticker`'s row.
    fn position(&self, ticker: &str) -> Option<usize> {
        self.rows
            .binary_search_by(|r| r.ticker.as_str().cmp(ticker))
            .ok()
    }

    /// Builds the table from `reader` at `now`: one row per company of the coverage the
    /// reader covers. A row of `previous` whose inputs are the very same snapshots is reused
    /// instead of computed again; its cut `vol_daily` history is reused while the day and the
    /// reader's `vol_daily` generation are the same, and the others are read in one pass
    /// ([`MarketDataReader::cores_histories`]).
    pub async fn build(
        reader: &dyn MarketDataReader,
        now: DateTime<Utc>,
        previous: Option<&UniverseTable>,
    ) -> Result<Self, ApiError> {
        let generation = reader.generation();
        let vol_generation = reader.vol_generation();
        let today = new_york_date(now);
        let coverage = reader.coverage();
        let covered: Vec<(&Arc<Company>, Ticker)> = covered_companies(reader, &coverage).collect();
        let held_histories = previous.filter(|table| {
            vol_generation.is_some()
                && table.vol_generation == vol_generation
                && table.today == today
        });
        let mut histories: Vec<Option<Arc<CoresHistory>>> = covered
            .iter()
            .map(|(_, ticker)| {
                let table = held_histories?;
                let i = table.position(ticker.as_str())?;
                Some(Arc::clone(&table.rows[i].history))
            })
            .collect();
        let unread: Vec<Ticker> = covered
            .iter()
            .zip(&histories)
            .filter(|(_, held)| held.is_none())
            .map(|((_, ticker), _)| ticker.clone())
            .collect();
        let mut read = reader
            .cores_histories(&unread, today)
            .await?
            .into_iter()
            .map(Arc::new);
        for slot in histories.iter_mut().filter(|h| h.is_none()) {
            *slot = read.next();
        }
        let mut rows: Vec<(UniverseRow, ScreenRow)> = Vec::with_capacity(covered.len());
        let mut to_compute: Vec<RowToCompute> = Vec::new();
        for ((company, ticker), history) in covered.into_iter().zip(histories) {
            let history = history.unwrap_or_default();
            let chain = reader.chain(&ticker);
            let flow = reader.flow(&ticker);
            let inputs = RowInputs {
                coverage: address(&coverage),
                chain: chain.as_ref().map(address),
                flow: flow.as_ref().map(address),
                history: address(&history),
                today,
            };
            let reused = previous.and_then(|table| {
                let i = table.position(ticker.as_str())?;
                (table.rows[i].inputs == inputs)
                    .then(|| (table.rows[i].clone(), table.screens[i].clone()))
            });
            match reused {
                Some(row) => rows.push(row),
                None => to_compute.push(RowToCompute {
                    company: Arc::clone(company),
                    ticker,
                    history,
                    chain,
                    flow,
                    inputs,
                }),
            }
        }
        // The rows are CPU work (smile fits): on the blocking pool, not on the runtime's
        // threads, which serve requests and run the compute worker's loop meanwhile.
        let coverage = Arc::clone(&coverage);
        let computed = tokio::task::spawn_blocking(move || {
            to_compute
                .into_iter()
                .map(|row| row.compute(&coverage, today))
                .collect::<Vec<_>>()
        })
        .await
        .map_err(|e| ApiError::internal("universe table", format!("row build failed: {e}")))?;
        rows.extend(computed);
        rows.sort_by(|a, b| a.0.ticker.cmp(&b.0.ticker));
        let (rows, screens) = rows.into_iter().unzip();
        Ok(Self {
            generation,
            vol_generation,
            today,
            built: Instant::now(),
            rows,
            screens,
        })
    }
}

/// One row of a build whose inputs changed, with what it is computed from.
struct RowToCompute {
    company: Arc<Company>,
    ticker: Ticker,
    history: Arc<CoresHistory>,
    chain: Option<Arc<ChainView>>,
    flow: Option<Arc<FlowView>>,
    inputs: RowInputs,
}

impl RowToCompute {
    fn compute(self, coverage: &Coverage, today: NaiveDate) -> (UniverseRow, ScreenRow) {
        let cores = cores_row(
            coverage,
            self.chain.as_deref(),
            &self.history,
            self.flow.as_deref(),
            self.ticker.as_str(),
            today,
        );
        let screen = screen_row(&cores, &self.company, self.chain.as_deref(), today);
        let row = UniverseRow {
            ticker: self.company.symbol.clone(),
            company: Some(self.company),
            cores,
            chain_trade_date: self.chain.map(|c| c.trade_date),
            history: self.history,
            inputs: self.inputs,
        };
        (row, screen)
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

/// How old (on the machine's clock) a held table may at least be and still answer a request
/// while the reader's generation has moved on (more when the refresh task's pause is longer:
/// [`UniverseCache::refresh_pause`]), so a request never waits for a build once the first one
/// is done.
pub const MAX_STALENESS: Duration = Duration::from_secs(30);
/// The shortest pause of the binary's refresh task between builds when the generation moved
/// (the screens' figures are mostly daily ones; live chains move only their intraday columns).
pub const REFRESH_EVERY: Duration = Duration::from_secs(5);
/// How many times its last build's duration the refresh task pauses before the next build:
/// the builds take at most a tenth of one core.
pub const REFRESH_COST_RATIO: u32 = 9;

/// The universe table of the reader, shared by every request.
#[derive(Debug, Default)]
pub struct UniverseCache {
    held: std::sync::RwLock<Option<Arc<UniverseTable>>>,
    /// One build at a time.
    building: tokio::sync::Mutex<()>,
    /// How long the last build took, microseconds (machine clock).
    last_build_micros: std::sync::atomic::AtomicU64,
}

impl UniverseCache {
    /// How long the refresh task waits before its next build: [`REFRESH_EVERY`], or
    /// [`REFRESH_COST_RATIO`] times the last build's duration when that is longer.
    pub fn refresh_pause(&self) -> Duration {
        REFRESH_EVERY.max(self.last_build() * REFRESH_COST_RATIO)
    }

    fn last_build(&self) -> Duration {
        Duration::from_micros(
            self.last_build_micros
                .load(std::sync::atomic::Ordering::Relaxed),
        )
    }

    /// How old a held table may be and still answer while the generation moved: until the
    /// refresh task's next build is done, with room for one slower build.
    fn staleness_limit(&self) -> Duration {
        MAX_STALENESS.max(self.refresh_pause() + self.last_build() * 2)
    }

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
                && (table.generation == generation
                    || table.built.elapsed() <= self.staleness_limit())
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
        let started = Instant::now();
        let table = Arc::new(UniverseTable::build(reader, now, previous.as_deref()).await?);
        let took = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        self.last_build_micros
            .store(took, std::sync::atomic::Ordering::Relaxed);
        *self
            .held
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Arc::clone(&table));
        Ok(table)
    }
}

/// What the held table holds: `api_universe_table` (items: rows; bytes: the rows, their cores
/// values and screen figures, and the cut `vol_daily` histories: about 33 KB an underlying, 24 KB
/// of it the history).
impl optics_schemas::memory::MemoryHolder for UniverseCache {
    fn held_memory(&self, out: &mut Vec<optics_schemas::memory::HeldMemory>) {
        let Some(table) = self.held() else {
            out.push(optics_schemas::memory::HeldMemory::new(
                "api_universe_table",
                0,
                0,
            ));
            return;
        };
        let bytes: usize = table
            .rows
            .iter()
            .map(|row| {
                size_of::<UniverseRow>()
                    + size_of::<ScreenRow>()
                    + row.ticker.capacity()
                    + row.cores.ticker.capacity()
                    + size_of_val(row.cores.values())
                    + size_of::<CoresHistory>()
                    + row.history.heap_bytes()
            })
            .sum();
        out.push(optics_schemas::memory::HeldMemory::new(
            "api_universe_table",
            table.rows.len(),
            bytes,
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rebuilds_are_spaced_by_their_own_cost() {
        let cache = UniverseCache::default();
        let took = |d: Duration| {
            cache
                .last_build_micros
                .store(d.as_micros() as u64, std::sync::atomic::Ordering::Relaxed);
        };
        // Cheap builds: every REFRESH_EVERY, held tables good for MAX_STALENESS.
        took(Duration::from_millis(100));
        assert_eq!(cache.refresh_pause(), REFRESH_EVERY);
        assert_eq!(cache.staleness_limit(), MAX_STALENESS);
        // A 2 s build: 18 s of rest, a tenth of a core.
        took(Duration::from_secs(2));
        assert_eq!(cache.refresh_pause(), Duration::from_secs(18));
        assert_eq!(cache.staleness_limit(), MAX_STALENESS);
        // A 30 s build (thousands of live chains): 4.5 min of rest, and the held table
        // answers until the next build is done.
        took(Duration::from_secs(30));
        assert_eq!(cache.refresh_pause(), Duration::from_secs(270));
        assert_eq!(cache.staleness_limit(), Duration::from_secs(330));
    }

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
