//! `GET /screen?screen_type=high_iv_rank`: one preset screen over the session's universe table
//! (`screen_type=list`: the catalog of presets).

use std::sync::OnceLock;

use axum::Json;
use axum::extract::State;
use chrono::NaiveDate;
use optics_compute::screen::{ScreenHit, ScreenType, UniverseFilter, run_screen};
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::freshness::Freshness;
use crate::handlers::stock::correlation::returns_of;
use crate::market::{UniverseRow, UniverseTable, covered_companies};
use crate::openapi::IsoDate;
use crate::params::{ClampNotice, QueryParams};
use crate::state::AppState;

/// Units of the rows.
pub const SCREEN_UNITS: &str = "price in dollars; iv30d, iv60d, hv20d in percentage points; vrp \
     and contango in IV points; iv_percentile and skew_pctile 0 to 100; imp_earn_move, chg_1w \
     and chg_1m in percent; market_cap in dollars; days_to_earnings in calendar days";

/// How the rows are made.
pub const SCREEN_BASIS: &str = "one row per covered underlying from the session's universe \
     table (the cores row each compute cycle refreshes): iv30d/iv60d constant-maturity IVs, \
     hv20d close-to-close over 20 sessions, vrp = iv30d - hv20d, iv_percentile over one year \
     of daily iv30d, skew_pctile = 100 - the one-year percentile of the 30-day smile slope (the \
     put skew's steepness against its own year), contango = iv90d - iv30d";

/// One preset of the catalog.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ScreenSpecRow {
    /// The `screen_type` value.
    pub name: &'static str,
    /// What it finds.
    pub description: &'static str,
    /// Membership and order.
    pub rule: String,
}

/// One member of a screen.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ScreenResult {
    /// Symbol.
    pub ticker: String,
    /// GICS sector; null for indices and broad ETFs.
    pub sector: Option<String>,
    /// Last price, dollars.
    pub price: Option<f64>,
    /// 30-day constant-maturity IV, percentage points.
    pub iv30d: Option<f64>,
    /// 60-day constant-maturity IV, percentage points.
    pub iv60d: Option<f64>,
    /// 20-session close-to-close HV, percentage points.
    pub hv20d: Option<f64>,
    /// iv30d − hv20d, points.
    pub vrp: Option<f64>,
    /// One-year IV percentile, 0–100.
    pub iv_percentile: Option<f64>,
    /// How steep the put skew is against its own year: 100 − the one-year percentile of the
    /// 30-day smile slope, 0–100.
    pub skew_pctile: Option<f64>,
    /// iv90d − iv30d, IV percentage points.
    pub contango: Option<f64>,
    /// Calendar days to the next report.
    pub days_to_earnings: Option<i64>,
    /// The move options price for the next report, percent.
    pub imp_earn_move: Option<f64>,
    /// Price change over 5 sessions, percent.
    pub chg_1w: Option<f64>,
    /// Over 21 sessions, percent.
    pub chg_1m: Option<f64>,
    /// Market capitalisation, dollars.
    pub market_cap: Option<f64>,
    /// The figure the screen ranks by (its unit is the screen's `metric`).
    pub metric_value: f64,
    /// `vol_pairs`: the cheap partner.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pair_ticker: Option<String>,
    /// `vol_pairs`: the partner's iv30d, percentage points.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pair_iv30d: Option<f64>,
    /// `vol_pairs`: one-year correlation of the pair's daily log returns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pair_correlation: Option<f64>,
}

/// The `/screen` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ScreenPayload {
    /// The preset run (`list` for the catalog).
    pub screen_name: &'static str,
    /// What it finds.
    pub screen_description: String,
    /// Membership and order, from the constants the screen uses.
    pub rule: String,
    /// What `metric_value` of each row is.
    pub metric: &'static str,
    /// The size and earnings filters applied before the preset.
    pub universe_filter: String,
    /// The members, best first, at most `limit`.
    pub results: Vec<ScreenResult>,
    /// Members before `limit`.
    pub total_matches: usize,
    /// Underlyings that passed the universe filter and were screened.
    pub total_scanned: usize,
    /// Underlyings in the universe table.
    pub universe_size: usize,
    /// Rows asked for.
    pub limit: usize,
    /// `screen_type=list` only: every preset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub screens: Option<Vec<ScreenSpecRow>>,
    /// Units of the rows.
    pub units: &'static str,
    /// How the rows are made.
    pub basis: &'static str,
    /// The newest chain session in the table.
    #[schema(value_type = Option<IsoDate>)]
    pub trade_date: Option<NaiveDate>,
    /// Freshness of that session.
    #[serde(flatten)]
    pub freshness: Freshness,
    /// Parameters moved into their documented range.
    pub clamped: Vec<ClampNotice>,
}

/// What `metric_value` means per preset.
fn metric_of(screen: ScreenType) -> &'static str {
    match screen {
        ScreenType::HighIvRank | ScreenType::LowIvRank => "iv_percentile, 0 to 100",
        ScreenType::HighVrp => "vrp, points",
        ScreenType::EarningsThisWeek => "days_to_earnings, calendar days",
        ScreenType::HighSkew => "skew_pctile, 0 to 100",
        ScreenType::SteepContango => "contango, IV points",
        ScreenType::MeanReversion => "iv30d z-score against its one-year mean, standard deviations",
        ScreenType::VolPairs => "iv30d ratio rich / cheap",
        ScreenType::Decorrelation => "one-year minus one-month correlation to SPY",
        ScreenType::UnusualVolume => "option volume / open interest",
        ScreenType::PinRisk => "distance from the largest open-interest strike, percent of spot",
    }
}

fn result_of(table: &UniverseTable, hit: &ScreenHit) -> ScreenResult {
    let row: &UniverseRow = &table.rows[hit.row];
    let s = &table.screens[hit.row];
    ScreenResult {
        ticker: row.ticker.clone(),
        sector: s.sector.clone(),
        price: s.price,
        iv30d: s.iv30d,
        iv60d: row.cores.get("iv60d"),
        hv20d: s.hv20d,
        vrp: s.vrp(),
        iv_percentile: s.iv_percentile,
        skew_pctile: s.skew_pctile,
        contango: s.contango,
        days_to_earnings: s.days_to_earnings,
        imp_earn_move: s.imp_earn_move,
        chg_1w: s.chg_1w_pct,
        chg_1m: s.chg_1m_pct,
        market_cap: s.market_cap,
        metric_value: hit.metric,
        pair_ticker: hit.partner.map(|i| table.rows[i].ticker.clone()),
        pair_iv30d: hit.partner.and_then(|i| table.screens[i].iv30d),
        pair_correlation: hit.pair_correlation,
    }
}

/// `screen_type=list`: the presets, without reading the universe table (its size is the
/// covered companies').
fn catalog(
    state: &AppState,
    filter: &UniverseFilter,
    limit: usize,
    clamped: Vec<ClampNotice>,
) -> Result<ScreenPayload, ApiError> {
    let reader = state.market_data()?;
    let coverage = reader.coverage();
    let universe_size = covered_companies(reader.as_ref(), &coverage).count();
    let screens = ScreenType::ALL
        .into_iter()
        .map(|s| ScreenSpecRow {
            name: s.name(),
            description: s.description(),
            rule: s.rule(),
        })
        .collect();
    let today = optics_compute::time::new_york_date(state.now());
    Ok(ScreenPayload {
        screen_name: "list",
        screen_description: "The preset screens: pass one as screen_type.".to_owned(),
        rule: "none: the catalog".to_owned(),
        metric: "none",
        universe_filter: filter.rule(),
        results: Vec::new(),
        total_matches: 0,
        total_scanned: 0,
        universe_size,
        limit,
        screens: Some(screens),
        units: SCREEN_UNITS,
        basis: SCREEN_BASIS,
        trade_date: None,
        freshness: state.freshness_of(today),
        clamped,
    })
}

/// `GET /screen`.
pub async fn screen(
    State(state): State<AppState>,
    params: QueryParams,
) -> Result<Json<Envelope<ScreenPayload>>, ApiError> {
    let choice = params.choice("screen_type")?.unwrap_or("high_iv_rank");
    let limit = params.int("limit")?.value as usize;
    let filter = UniverseFilter {
        min_market_cap: params.float("min_market_cap")?.value,
        exclude_earnings_days: params.int("exclude_earnings_days")?.value,
    };
    if params.choice("screen_type")? == Some("list") {
        return Ok(ok(catalog(&state, &filter, limit, params.clamp_notices())?));
    }
    let table = state.universe_table().await?;
    let trade_date = table.latest_session();
    let freshness = state.freshness_of(trade_date.unwrap_or(table.today));
    let base = |name, description: String, rule, metric| ScreenPayload {
        screen_name: name,
        screen_description: description,
        rule,
        metric,
        universe_filter: filter.rule(),
        results: Vec::new(),
        total_matches: 0,
        total_scanned: 0,
        universe_size: table.rows.len(),
        limit,
        screens: None,
        units: SCREEN_UNITS,
        basis: SCREEN_BASIS,
        trade_date,
        freshness: freshness.clone(),
        clamped: params.clamp_notices(),
    };
    let Some(kind) = ScreenType::parse(choice) else {
        return Err(ApiError::internal(
            "screen",
            format!("screen_type {choice} has no preset"),
        ));
    };
    let rows = &table.screens;
    // `vol_pairs` reads daily log returns of the stored closes up to today, for the names it
    // pairs only (each computed on first use).
    let coverage = state.market_data()?.coverage();
    let cells: Vec<OnceLock<Vec<(NaiveDate, f64)>>> = if kind == ScreenType::VolPairs {
        rows.iter().map(|_| OnceLock::new()).collect()
    } else {
        Vec::new()
    };
    let hits = run_screen(kind, rows, &filter, |i| {
        cells.get(i).map_or(&[][..], |cell| {
            cell.get_or_init(|| returns_of(&coverage, &table.rows[i].ticker, table.today))
        })
    });
    let total_scanned = rows.iter().filter(|r| filter.admits(r)).count();
    let mut payload = base(
        kind.name(),
        kind.description().to_owned(),
        kind.rule(),
        metric_of(kind),
    );
    payload.total_matches = hits.len();
    payload.total_scanned = total_scanned;
    payload.results = hits
        .iter()
        .take(limit)
        .map(|h| result_of(&table, h))
        .collect();
    Ok(ok(payload))
}
