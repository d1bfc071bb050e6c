//! The session's universe table: one row per covered underlying (its cores row, what the
//! screens read, and its company), so `/screen` and `/market-overview` scan rows in memory
//! instead of walking chains and series per request.
//!
//! The table belongs to one reader generation (see [`MarketDataReader::generation`]): every
//! snapshot or reference table the reader swaps in bumps the generation, and the next read
//! builds the table again (each compute cycle refreshes it; the session's last cycle leaves
//! the final one). The binary also rebuilds it in the background as soon as the generation
//! moves ([`UniverseCache::refresh`]), so a screen request finds it built. A reader without a
//! generation (tests' in-memory markets) is read afresh each time.

use std::sync::Arc;

use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::cores::CoresRow;
use optics_compute::screen::ScreenRow;
use optics_compute::time::new_york_date;
use optics_schemas::{AssetClass, Company};

use super::ChainView;
use super::cores::cores_row;
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
    /// The instant of the build.
    pub built_at: DateTime<Utc>,
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

    /// The row of `ticker`.
    pub fn get(&self, ticker: &str) -> Option<&UniverseRow> {
        self.rows
            .binary_search_by(|r| r.ticker.as_str().cmp(ticker))
            .ok()
            .map(|i| &self.rows[i])
    }

    /// Builds the table from `reader` at `now`: one row per company of the coverage the
    /// reader covers.
    pub async fn build(
        reader: &dyn MarketDataReader,
        now: DateTime<Utc>,
    ) -> Result<Self, ApiError> {
        let generation = reader.generation();
        let today = new_york_date(now);
        let coverage = reader.coverage();
        let mut rows: Vec<(UniverseRow, ScreenRow)> = Vec::with_capacity(coverage.companies.len());
        for company in &coverage.companies {
            let Ok(ticker) = Ticker::parse(&company.symbol) else {
                continue;
            };
            if !reader.covers(&ticker) {
                continue;
            }
            let chain = reader.chain(&ticker);
            let vol = reader.vol_history(&ticker).await?;
            let flow = reader.flow(&ticker);
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
            };
            rows.push((row, screen));
        }
        rows.sort_by(|a, b| a.0.ticker.cmp(&b.0.ticker));
        let (rows, screens) = rows.into_iter().unzip();
        Ok(Self {
            generation,
            today,
            built_at: now,
            rows,
            screens,
        })
    }
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

/// The table of the reader's current generation, built at most once per generation.
#[derive(Debug, Default)]
pub struct UniverseCache {
    held: tokio::sync::Mutex<Option<Arc<UniverseTable>>>,
}

impl UniverseCache {
    /// The table for `reader` now: the held one when its generation and date still hold, else
    /// a new build (concurrent callers wait for the one build).
    pub async fn table(
        &self,
        reader: &dyn MarketDataReader,
        now: DateTime<Utc>,
    ) -> Result<Arc<UniverseTable>, ApiError> {
        let mut held = self.held.lock().await;
        let generation = reader.generation();
        if let Some(table) = held.as_ref()
            && generation.is_some()
            && table.generation == generation
            && table.today == new_york_date(now)
        {
            return Ok(Arc::clone(table));
        }
        let table = Arc::new(UniverseTable::build(reader, now).await?);
        *held = Some(Arc::clone(&table));
        Ok(table)
    }

    /// Builds the table now when the generation moved (what the binary's refresh task calls
    /// after each cycle); returns whether it built.
    pub async fn refresh(
        &self,
        reader: &dyn MarketDataReader,
        now: DateTime<Utc>,
    ) -> Result<bool, ApiError> {
        let before = self.held.lock().await.as_ref().map(|t| t.generation);
        let table = self.table(reader, now).await?;
        Ok(before != Some(table.generation))
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
