//! `GET /market-overview`: the volatility state of the whole covered universe in one call, read
//! from the session's universe table.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use chrono::NaiveDate;
use optics_compute::market_overview::{
    LIST_ROWS, MarketStats, PutSkewSummary, SectorCell, VolBreadth, earnings_this_week,
    iv_hv_ratio, market_stats, put_skew, ranked, regime_rule, sector_heatmap, unusual_activity,
    vol_breadth,
};
use optics_compute::screen::ScreenRow;
use optics_schemas::AssetClass;
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::freshness::Freshness;
use crate::market::{ChainView, UniverseTable};
use crate::openapi::IsoDate;
use crate::state::AppState;
use crate::ticker::Ticker;

/// Units of the payload.
pub const OVERVIEW_UNITS: &str = "IVs and HVs in percentage points; vrp and put skew in points; \
     price changes in percent; rates in percent a year; volumes and open interest in contracts; \
     market cap in dollars";

/// How the figures are made.
pub const OVERVIEW_BASIS: &str = "every covered underlying's row of the session's universe \
     table (the cores row each compute cycle refreshes): averages and shares over the names \
     holding the figure; vrp = iv30d - hv20d (close-to-close, 20 sessions); put skew = 30-day \
     25-delta put IV - 25-delta call IV; price changes from the stored daily closes";

/// Chains whose pricing rates are reported as `treasury_rates`, in order of preference.
pub const RATE_SOURCES: [&str; 3] = ["SPX", "SPY", "QQQ"];
/// Tenors of `treasury_rates`, calendar days (the nearest listed expiration is read).
pub const RATE_TENORS_DAYS: [i64; 4] = [30, 91, 182, 365];

/// `market_stats`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct MarketStatsBlock {
    /// calm, normal, elevated or stressed (see `regime_rule`); null without IV percentiles.
    pub market_regime: Option<&'static str>,
    /// The regime cut-offs.
    pub regime_rule: String,
    /// Mean iv30d, percentage points.
    pub avg_iv30d: Option<f64>,
    /// Mean iv30d − hv20d, points.
    pub avg_vrp: Option<f64>,
    /// Median one-year IV percentile, 0–100.
    pub median_iv_percentile: Option<f64>,
    /// Share of names with a one-year IV percentile of 80 or more, percent.
    pub pct_high_iv: Option<f64>,
    /// Names with an iv30d.
    pub names_with_iv: usize,
    /// Underlyings in the table.
    pub universe_size: usize,
}

impl MarketStatsBlock {
    fn of(stats: MarketStats, universe_size: usize) -> Self {
        Self {
            market_regime: stats.market_regime,
            regime_rule: regime_rule(),
            avg_iv30d: stats.avg_iv30d,
            avg_vrp: stats.avg_vrp,
            median_iv_percentile: stats.median_iv_percentile,
            pct_high_iv: stats.pct_high_iv,
            names_with_iv: stats.names_with_iv,
            universe_size,
        }
    }
}

/// One sector of `sector_heatmap`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SectorHeat {
    /// GICS sector.
    pub sector: String,
    /// Names in it.
    pub count: usize,
    /// Mean iv30d, percentage points.
    pub avg_iv30d: Option<f64>,
    /// Mean vrp, points.
    pub avg_vrp: Option<f64>,
    /// Mean one-year IV percentile.
    pub avg_iv_percentile: Option<f64>,
    /// Mean one-session price change, percent.
    pub avg_chg_1d: Option<f64>,
    /// Mean five-session price change, percent.
    pub avg_chg_1w: Option<f64>,
}

impl From<SectorCell> for SectorHeat {
    fn from(c: SectorCell) -> Self {
        Self {
            sector: c.sector,
            count: c.count,
            avg_iv30d: c.avg_iv30d,
            avg_vrp: c.avg_vrp,
            avg_iv_percentile: c.avg_iv_percentile,
            avg_chg_1d: c.avg_chg_1d,
            avg_chg_1w: c.avg_chg_1w,
        }
    }
}

/// One symbol's line (the ETF heatmap, index levels, movers, outliers).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SymbolLine {
    /// Symbol.
    pub ticker: String,
    /// Last price, dollars.
    pub price: Option<f64>,
    /// One-session change, percent.
    pub chg_1d: Option<f64>,
    /// Five-session change, percent.
    pub chg_1w: Option<f64>,
    /// 30-day constant-maturity IV, percentage points.
    pub iv30d: Option<f64>,
    /// 20-session close-to-close HV, percentage points.
    pub hv20d: Option<f64>,
    /// iv30d − hv20d, points.
    pub vrp: Option<f64>,
    /// iv30d / hv20d.
    pub iv_hv_ratio: Option<f64>,
    /// One-year IV percentile.
    pub iv_percentile: Option<f64>,
}

/// One `unusual_activity` row.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ActivityLine {
    /// Symbol.
    pub ticker: String,
    /// Contracts traded this session, calls and puts.
    pub option_volume: Option<f64>,
    /// Open interest, contracts.
    pub open_interest: Option<f64>,
    /// option_volume / open_interest.
    pub volume_oi_ratio: f64,
    /// Call contracts traded.
    pub call_volume: Option<f64>,
    /// Put contracts traded.
    pub put_volume: Option<f64>,
}

/// One `earnings_this_week` row.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct EarningsLine {
    /// Symbol.
    pub ticker: String,
    /// The report date.
    #[schema(value_type = IsoDate)]
    pub report_date: NaiveDate,
    /// Calendar days away.
    pub days_to_earnings: i64,
    /// The move options price for it, percent.
    pub imp_earn_move: Option<f64>,
}

/// `iv_hv_outliers`: the richest and cheapest implied vol against realized.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct IvHvOutliers {
    /// Highest iv30d / hv20d first.
    pub rich: Vec<SymbolLine>,
    /// Lowest first.
    pub cheap: Vec<SymbolLine>,
}

/// `vol_breadth`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct BreadthBlock {
    /// Names with iv30d and hv20d.
    pub names: usize,
    /// Share with iv30d above hv20d, percent.
    pub pct_iv_above_hv: Option<f64>,
    /// Share with a one-year IV percentile of 50 or more, percent.
    pub pct_iv_percentile_above_50: Option<f64>,
    /// Share at 80 or more, percent.
    pub pct_iv_percentile_high: Option<f64>,
}

impl From<VolBreadth> for BreadthBlock {
    fn from(b: VolBreadth) -> Self {
        Self {
            names: b.names,
            pct_iv_above_hv: b.pct_iv_above_hv,
            pct_iv_percentile_above_50: b.pct_iv_percentile_above_50,
            pct_iv_percentile_high: b.pct_iv_percentile_high,
        }
    }
}

/// `put_skew`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PutSkewBlock {
    /// Names with a 30-day 25-delta skew.
    pub names: usize,
    /// Mean 25-delta put − call IV, points.
    pub avg: Option<f64>,
    /// Median, points.
    pub median: Option<f64>,
    /// Mean one-year percentile of the skew slope.
    pub avg_skew_percentile: Option<f64>,
}

impl From<PutSkewSummary> for PutSkewBlock {
    fn from(p: PutSkewSummary) -> Self {
        Self {
            names: p.names,
            avg: p.avg,
            median: p.median,
            avg_skew_percentile: p.avg_skew_percentile,
        }
    }
}

/// One tenor of `treasury_rates`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RatePoint {
    /// The tenor asked for, calendar days.
    pub tenor_days: i64,
    /// The listed expiration read (nearest to the tenor).
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Its risk-free rate, percent a year.
    pub rate_pct: f64,
}

/// `treasury_rates`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RatesBlock {
    /// The chain the rates are read from; null when none of the sources is held.
    pub source: Option<String>,
    /// What the rates are.
    pub basis: String,
    /// One point per tenor.
    pub points: Vec<RatePoint>,
}

/// The `/market-overview` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct MarketOverviewPayload {
    /// The regime read.
    pub market_stats: MarketStatsBlock,
    /// Per sector, by name.
    pub sector_heatmap: Vec<SectorHeat>,
    /// Every covered ETF, by symbol.
    pub etf_heatmap: Vec<SymbolLine>,
    /// Every covered index's level, by symbol.
    pub index_prices: BTreeMap<String, SymbolLine>,
    /// Risk-free rates by tenor.
    pub treasury_rates: RatesBlock,
    /// Where names sit.
    pub vol_breadth: BreadthBlock,
    /// Put skew across names.
    pub put_skew: PutSkewBlock,
    /// The largest one-session moves either way, largest |change| first (10).
    pub top_movers: Vec<SymbolLine>,
    /// Option volume large against open interest, largest ratio first (10).
    pub unusual_activity: Vec<ActivityLine>,
    /// IV far from HV either way (10 each).
    pub iv_hv_outliers: IvHvOutliers,
    /// Names reporting within 7 days, soonest first.
    pub earnings_this_week: Vec<EarningsLine>,
    /// Units.
    pub units: &'static str,
    /// How the figures are made.
    pub basis: &'static str,
    /// The newest chain session in the table.
    #[schema(value_type = Option<IsoDate>)]
    pub trade_date: Option<NaiveDate>,
    /// Freshness of that session.
    #[serde(flatten)]
    pub freshness: Freshness,
}

fn line(table: &UniverseTable, i: usize) -> SymbolLine {
    let s: &ScreenRow = &table.screens[i];
    SymbolLine {
        ticker: table.rows[i].ticker.clone(),
        price: s.price,
        chg_1d: s.chg_1d_pct,
        chg_1w: s.chg_1w_pct,
        iv30d: s.iv30d,
        hv20d: s.hv20d,
        vrp: s.vrp(),
        iv_hv_ratio: iv_hv_ratio(s),
        iv_percentile: s.iv_percentile,
    }
}

/// The rate points of `chain`: per tenor, the listed open expiration nearest to it.
fn rate_points(chain: &ChainView) -> Vec<RatePoint> {
    let open = chain.open_expirations();
    RATE_TENORS_DAYS
        .iter()
        .filter_map(|&tenor| {
            let target = chain.trade_date + chrono::Days::new(tenor as u64);
            let expiration = *open
                .iter()
                .min_by_key(|e| (**e - target).num_days().abs())?;
            let row = chain.rows_of(expiration).first()?;
            Some(RatePoint {
                tenor_days: tenor,
                expiration,
                rate_pct: row.rate * 100.0,
            })
        })
        .collect()
}

/// `GET /market-overview`.
pub async fn market_overview(
    State(state): State<AppState>,
) -> Result<Json<Envelope<MarketOverviewPayload>>, ApiError> {
    let table = state.universe_table().await?;
    let reader = state.market_data()?;
    let all: Vec<usize> = (0..table.rows.len()).collect();
    let of_class = |class: AssetClass| -> Vec<usize> {
        all.iter()
            .copied()
            .filter(|&i| table.rows[i].asset_class() == class)
            .collect()
    };
    // Regime, breadth, skew and sectors read single names and ETFs; index levels stand apart.
    let names: Vec<usize> = all
        .iter()
        .copied()
        .filter(|&i| table.rows[i].asset_class() != AssetClass::Index)
        .collect();
    let name_rows: Vec<&ScreenRow> = names.iter().map(|&i| &table.screens[i]).collect();
    let pick = |ranked: Vec<(usize, f64)>| -> Vec<usize> {
        ranked.into_iter().map(|(k, _)| names[k]).collect()
    };

    let rates = RATE_SOURCES.iter().find_map(|symbol| {
        let ticker = Ticker::parse(symbol).ok()?;
        let chain = reader.chain(&ticker)?;
        Some((symbol.to_string(), rate_points(&chain)))
    });
    let treasury_rates = match rates {
        Some((source, points)) => RatesBlock {
            basis: format!(
                "the continuously compounded risk-free rate {source}'s chain is priced with at \
                 the listed expiration nearest each tenor (the quote feed's curve), percent"
            ),
            source: Some(source),
            points,
        },
        None => RatesBlock {
            source: None,
            basis: format!(
                "no chain of {} is held, so no pricing rate can be read",
                RATE_SOURCES.join(", ")
            ),
            points: Vec::new(),
        },
    };

    let movers = pick(ranked(
        &name_rows,
        |r| r.chg_1d_pct.map(f64::abs),
        true,
        LIST_ROWS,
    ));
    let activity = unusual_activity(&name_rows)
        .into_iter()
        .map(|(k, ratio)| {
            let s = name_rows[k];
            ActivityLine {
                ticker: table.rows[names[k]].ticker.clone(),
                option_volume: s.option_volume,
                open_interest: s.open_interest,
                volume_oi_ratio: ratio,
                call_volume: s.call_volume,
                put_volume: s.put_volume,
            }
        })
        .collect();
    let earnings = earnings_this_week(&name_rows)
        .into_iter()
        .map(|(k, days)| EarningsLine {
            ticker: table.rows[names[k]].ticker.clone(),
            report_date: table.today + chrono::Days::new(days as u64),
            days_to_earnings: days as i64,
            imp_earn_move: name_rows[k].imp_earn_move,
        })
        .collect();
    let trade_date = table.latest_session();
    Ok(ok(MarketOverviewPayload {
        market_stats: MarketStatsBlock::of(market_stats(&name_rows), table.rows.len()),
        sector_heatmap: sector_heatmap(&name_rows)
            .into_iter()
            .map(Into::into)
            .collect(),
        etf_heatmap: of_class(AssetClass::Etf)
            .into_iter()
            .map(|i| line(&table, i))
            .collect(),
        index_prices: of_class(AssetClass::Index)
            .into_iter()
            .map(|i| (table.rows[i].ticker.clone(), line(&table, i)))
            .collect(),
        treasury_rates,
        vol_breadth: vol_breadth(&name_rows).into(),
        put_skew: put_skew(&name_rows).into(),
        top_movers: movers.into_iter().map(|i| line(&table, i)).collect(),
        unusual_activity: activity,
        iv_hv_outliers: IvHvOutliers {
            rich: pick(ranked(&name_rows, iv_hv_ratio, true, LIST_ROWS))
                .into_iter()
                .map(|i| line(&table, i))
                .collect(),
            cheap: pick(ranked(&name_rows, iv_hv_ratio, false, LIST_ROWS))
                .into_iter()
                .map(|i| line(&table, i))
                .collect(),
        },
        earnings_this_week: earnings,
        units: OVERVIEW_UNITS,
        basis: OVERVIEW_BASIS,
        trade_date,
        freshness: state.freshness_of(trade_date.unwrap_or(table.today)),
    }))
}
