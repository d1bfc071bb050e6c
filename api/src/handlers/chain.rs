//! The options-chain family: `/expirations`, `/chain`, `/stock`, `/search`,
//! `/options-by-delta` and `/chain-at-time`.
//!
//! Every handler reads the latest snapshots through [`crate::MarketDataReader`] and only
//! reshapes them: quotes, IV and Greeks come from the chain rows compute published (per share,
//! IV as a decimal, so every payload that carries IV says `iv_units: "decimal"`).
//!
//! Every payload derives `ToSchema`: [`data_schemas`] hands the types to the OpenAPI document
//! and the served reference, so both list exactly the fields serialized here.
//!
//! Rules shared by the family:
//! - an unknown or uncovered ticker is a 400/404 ([`AppState::covered_ticker`]); a covered ticker
//!   without a chain yet, or a past session that is not carried, is a 424;
//! - an `expiration` that is not listed is a 400 naming the listed ones;
//! - freshness is the data's, not the clock's ([`AppState::freshness_of`] of the chain's trade
//!   date): `data_freshness` and `data_type` are `LIVE` only while the session
//!   is open **and** the chain belongs to that session; a chain from an earlier session (Monday
//!   morning before the first cycle) is `EOD` and its `message` names that session;
//! - the market state (`is_market_hours`, `data_freshness`, `message`) sits at the top of
//!   `data`, where gex and flow put it ([`SessionState`]); chain, expirations and stock also keep
//!   the nested `freshness` block they carried first;
//! - cash indices are priced on the forward (Black-76): their `stock_price` is the forward of
//!   the expiration shown, and `priced_on_forward` says so.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, NaiveDate, Utc};
use optics_schemas::{
    AssetClass, ChainRow, ChainSide, Company, ForwardSource, PricingModelCode, SettlementStyle,
};
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::{CoveredChain, CoveredTicker};
use crate::freshness::{DataFreshness, Freshness};
use crate::market::{ChainView, quoted_price};
use crate::openapi::{
    AssetClassCode, DataSchema, ForwardSourceCode, IsoDate, SettlementCode, Timestamp,
};
use crate::params::{ClampNotice, QueryParams};
use crate::registry::DATA_PREFIX;
use crate::state::AppState;
use crate::ticker::Ticker;
use crate::window::{Detail, window_around_strike};

/// The unit every IV of this family is in.
pub const IV_UNITS_DECIMAL: &str = "decimal";

/// Longest `q` accepted by `/search`, characters.
pub const MAX_SEARCH_QUERY_CHARS: usize = 64;

type Answer<T> = Result<Json<Envelope<T>>, ApiError>;

/// The payload type of each endpoint of the family, for the OpenAPI document and the reference.
pub fn data_schemas() -> Vec<DataSchema> {
    vec![
        DataSchema::of::<ExpirationsPayload>("expirations"),
        DataSchema::of::<ChainPayload>("chain"),
        DataSchema::of::<StockPayload>("stock"),
        DataSchema::of::<SearchPayload>("search"),
        DataSchema::of::<OptionByDeltaPayload>("options-by-delta"),
        DataSchema::of::<ChainAtTimePayload>("chain-at-time"),
    ]
}

/// The market state at the top of `data`, as gex and flow carry it: `is_market_hours` is the
/// clock's; `data_freshness` and `message` describe the payload's data (`LIVE` only while the
/// session it belongs to is open).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct SessionState {
    /// True during a regular NYSE session.
    pub is_market_hours: bool,
    /// `LIVE` while the session the data belongs to is open, `EOD` otherwise.
    pub data_freshness: DataFreshness,
    /// One sentence: open or closed, which session's data, and when that changes.
    pub message: String,
}

impl From<&Freshness> for SessionState {
    fn from(freshness: &Freshness) -> Self {
        Self {
            is_market_hours: freshness.is_market_hours,
            data_freshness: freshness.data_freshness,
            message: freshness.message.clone(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Shared reads

/// The requested expiration if listed (400 naming the listed ones otherwise).
fn listed_expiration(
    ticker: &Ticker,
    chain: &ChainView,
    expiration: NaiveDate,
) -> Result<NaiveDate, ApiError> {
    if chain.expirations.binary_search(&expiration).is_ok() {
        return Ok(expiration);
    }
    let listed: Vec<String> = chain
        .expirations
        .iter()
        .take(8)
        .map(NaiveDate::to_string)
        .collect();
    let more = if chain.expirations.len() > listed.len() {
        ", …"
    } else {
        ""
    };
    Err(ApiError::bad_request(format!(
        "Expiration {expiration} is not listed for {ticker}; listed: {}{more} \
         (see {DATA_PREFIX}/expirations/{ticker})",
        listed.join(", ")
    )))
}

/// The nearest expiration with time left at the chain's instant.
fn nearest_expiration(ticker: &Ticker, chain: &ChainView) -> Result<NaiveDate, ApiError> {
    chain.open_expirations().first().copied().ok_or_else(|| {
        ApiError::upstream(format!("The chain of {ticker} lists no open expiration"))
    })
}

// ---------------------------------------------------------------------------------------------
// /expirations/{ticker}

/// `GET /expirations/{ticker}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ExpirationsPayload {
    /// The underlying.
    pub ticker: Ticker,
    /// Listed expirations with time left at `as_of`, nearest first.
    #[schema(value_type = Vec<IsoDate>)]
    pub expirations: Vec<NaiveDate>,
    /// How many.
    pub count: usize,
    /// Each expiration with its calendar days from the chain's trade date.
    pub details: Vec<ExpirationDetail>,
    /// The session the listing comes from.
    #[schema(value_type = IsoDate)]
    pub trade_date: NaiveDate,
    /// When the chain was priced (UTC).
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// `LIVE` when the listing belongs to the session in progress, `EOD` otherwise.
    pub data_type: DataFreshness,
    /// Market state and the data's freshness (top level, as on gex and flow).
    #[serde(flatten)]
    pub session: SessionState,
    /// The same with the data's session date (the block this payload carried first).
    pub freshness: Freshness,
}

/// One listed expiration.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ExpirationDetail {
    /// The date.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Calendar days from the chain's trade date.
    pub dte: i32,
    /// Settlements listed on that date (`AM`, `PM`).
    #[schema(value_type = Vec<SettlementCode>)]
    pub settlements: Vec<SettlementStyle>,
}

/// Expirations of a covered ticker with time left at the chain's instant, nearest first.
pub async fn expirations(
    State(state): State<AppState>,
    CoveredChain { ticker, chain }: CoveredChain,
) -> Answer<ExpirationsPayload> {
    let details = chain
        .open_expirations()
        .iter()
        .map(|&expiration| {
            let rows = chain.rows_of(expiration);
            let mut settlements: Vec<SettlementStyle> = rows.iter().map(|r| r.settlement).collect();
            settlements.dedup();
            ExpirationDetail {
                expiration,
                dte: rows.first().map_or(0, |r| r.dte),
                settlements,
            }
        })
        .collect();
    let freshness = state.freshness_of(chain.trade_date);
    Ok(ok(ExpirationsPayload {
        ticker,
        count: chain.open_expirations().len(),
        expirations: chain.open_expirations().to_vec(),
        details,
        trade_date: chain.trade_date,
        as_of: chain.as_of,
        data_type: freshness.data_freshness,
        session: SessionState::from(&freshness),
        freshness,
    }))
}

// ---------------------------------------------------------------------------------------------
// Chain rows (spec 2.4)

/// One strike of one expiration, call and put side by side, with the spec's keys. Prices are
/// dollars per share, IV decimal, Greeks per share in the units of
/// [`optics_schemas::ChainGreeks`], volume and open interest in contracts. A value the side
/// does not have (not listed, no two-sided quote, no IV) is `null`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
#[schema(as = ChainRow)]
pub struct ChainRowPayload {
    /// Strike, dollars.
    #[serde(rename = "Strike")]
    pub strike: f64,
    /// `AM` or `PM` settlement of the series.
    #[serde(rename = "Settlement")]
    #[schema(value_type = SettlementCode)]
    pub settlement: SettlementStyle,
    /// Best bid of the call, dollars per share.
    #[serde(rename = "Call Bid")]
    pub call_bid: Option<f64>,
    /// Best ask of the call, dollars per share.
    #[serde(rename = "Call Ask")]
    pub call_ask: Option<f64>,
    /// Mid of the call's two-sided quote, dollars per share.
    #[serde(rename = "Call Mid")]
    pub call_mid: Option<f64>,
    /// Last trade of the call, dollars per share.
    #[serde(rename = "Call Last")]
    pub call_last: Option<f64>,
    /// Best bid of the put, dollars per share.
    #[serde(rename = "Put Bid")]
    pub put_bid: Option<f64>,
    /// Best ask of the put, dollars per share.
    #[serde(rename = "Put Ask")]
    pub put_ask: Option<f64>,
    /// Mid of the put's two-sided quote, dollars per share.
    #[serde(rename = "Put Mid")]
    pub put_mid: Option<f64>,
    /// Last trade of the put, dollars per share.
    #[serde(rename = "Put Last")]
    pub put_last: Option<f64>,
    /// Implied volatility of the call's mid, decimal.
    #[serde(rename = "IV Call")]
    pub iv_call: Option<f64>,
    /// Implied volatility of the put's mid, decimal.
    #[serde(rename = "IV Put")]
    pub iv_put: Option<f64>,
    /// Delta of the call, per share.
    #[serde(rename = "Delta Call")]
    pub delta_call: Option<f64>,
    /// Delta of the put, per share.
    #[serde(rename = "Delta Put")]
    pub delta_put: Option<f64>,
    /// Gamma of the call, per $1 of the underlying.
    #[serde(rename = "Gamma Call")]
    pub gamma_call: Option<f64>,
    /// Gamma of the put, per $1 of the underlying.
    #[serde(rename = "Gamma Put")]
    pub gamma_put: Option<f64>,
    /// Theta of the call, dollars per calendar day.
    #[serde(rename = "Theta Call")]
    pub theta_call: Option<f64>,
    /// Theta of the put, dollars per calendar day.
    #[serde(rename = "Theta Put")]
    pub theta_put: Option<f64>,
    /// Vega of the call, dollars per vol point.
    #[serde(rename = "Vega Call")]
    pub vega_call: Option<f64>,
    /// Vega of the put, dollars per vol point.
    #[serde(rename = "Vega Put")]
    pub vega_put: Option<f64>,
    /// Rho of the call, dollars per point of rate.
    #[serde(rename = "Rho Call")]
    pub rho_call: Option<f64>,
    /// Rho of the put, dollars per point of rate.
    #[serde(rename = "Rho Put")]
    pub rho_put: Option<f64>,
    /// Epsilon of the call, dollars per point of yield.
    #[serde(rename = "Epsilon Call")]
    pub epsilon_call: Option<f64>,
    /// Epsilon of the put, dollars per point of yield.
    #[serde(rename = "Epsilon Put")]
    pub epsilon_put: Option<f64>,
    /// Time value of the call's mid, dollars per share.
    #[serde(rename = "Extrinsic Call")]
    pub extrinsic_call: Option<f64>,
    /// Time value of the put's mid, dollars per share.
    #[serde(rename = "Extrinsic Put")]
    pub extrinsic_put: Option<f64>,
    /// Call contracts traded this session.
    #[serde(rename = "Call Volume")]
    pub call_volume: Option<u64>,
    /// Put contracts traded this session.
    #[serde(rename = "Put Volume")]
    pub put_volume: Option<u64>,
    /// Open interest of the call, contracts.
    #[serde(rename = "Call OI")]
    pub call_oi: Option<u64>,
    /// Open interest of the put, contracts.
    #[serde(rename = "Put OI")]
    pub put_oi: Option<u64>,
    /// OCC symbol of the call.
    #[serde(rename = "Call Symbol")]
    pub call_symbol: Option<String>,
    /// OCC symbol of the put.
    #[serde(rename = "Put Symbol")]
    pub put_symbol: Option<String>,
}

impl ChainRowPayload {
    /// The payload row of a chain row.
    pub fn from_row(row: &ChainRow) -> Self {
        let (c, p) = (&row.call, &row.put);
        Self {
            strike: row.strike,
            settlement: row.settlement,
            call_bid: c.bid,
            call_ask: c.ask,
            call_mid: c.mid,
            call_last: c.last,
            put_bid: p.bid,
            put_ask: p.ask,
            put_mid: p.mid,
            put_last: p.last,
            iv_call: c.iv,
            iv_put: p.iv,
            delta_call: c.greeks.delta,
            delta_put: p.greeks.delta,
            gamma_call: c.greeks.gamma,
            gamma_put: p.greeks.gamma,
            theta_call: c.greeks.theta,
            theta_put: p.greeks.theta,
            vega_call: c.greeks.vega,
            vega_put: p.greeks.vega,
            rho_call: c.greeks.rho,
            rho_put: p.greeks.rho,
            epsilon_call: c.greeks.epsilon,
            epsilon_put: p.greeks.epsilon,
            extrinsic_call: c.extrinsic,
            extrinsic_put: p.extrinsic,
            call_volume: c.volume,
            put_volume: p.volume,
            call_oi: c.open_interest,
            put_oi: p.open_interest,
            call_symbol: c.option_symbol.clone(),
            put_symbol: p.option_symbol.clone(),
        }
    }
}

/// How one expiration was priced.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ExpirationPricing {
    /// Forward of the expiration, dollars.
    pub forward: f64,
    /// `parity` (from call and put mids) or `carry` (spot × e^{(r − q)T}).
    #[schema(value_type = ForwardSourceCode)]
    pub forward_source: ForwardSource,
    /// Strikes combined into a parity forward (0 for carry).
    pub forward_strike_count: u32,
    /// Calendar days from the trade date.
    pub dte: i32,
    /// Years to the expiration day's close (16:00 New York, 13:00 on early-close days; ACT/365).
    pub years_to_expiry: f64,
    /// Continuous risk-free rate, decimal.
    pub rate: f64,
    /// Continuous yield the forward implies, decimal.
    pub carry_yield: f64,
}

impl ExpirationPricing {
    fn of(row: &ChainRow) -> Self {
        Self {
            forward: row.forward,
            forward_source: row.forward_source,
            forward_strike_count: row.forward_strike_count,
            dte: row.dte,
            years_to_expiry: row.years_to_expiry,
            rate: row.rate,
            carry_yield: row.carry_yield,
        }
    }
}

/// `strike_window`: how the rows were trimmed around the money.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct StrikeWindow {
    /// Strikes kept per side of the centre; 0 = the full chain.
    pub strikes_around: usize,
    /// The centre of every expiration's window: `forward`, its forward (the at-the-money
    /// strike level).
    pub centre: &'static str,
    /// True when any expiration lost rows.
    pub truncated: bool,
    /// Rows before trimming, all expirations.
    pub rows_total: usize,
    /// Rows returned, all expirations.
    pub rows_returned: usize,
}

/// `GET /chain/{ticker}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChainPayload {
    /// The underlying.
    pub ticker: Ticker,
    /// The price the chain is quoted against, dollars: the spot for stocks and ETFs; for cash
    /// indices the forward of the first expiration returned.
    pub stock_price: f64,
    /// Whether the chain is priced on the forward (Black-76, cash indices).
    pub priced_on_forward: bool,
    /// The expirations returned, nearest first.
    #[schema(value_type = Vec<IsoDate>)]
    pub expirations: Vec<NaiveDate>,
    /// Rows by expiration (`YYYY-MM-DD` keys), each sorted by settlement then strike.
    #[schema(value_type = BTreeMap<String, Vec<ChainRowPayload>>)]
    pub chains: BTreeMap<NaiveDate, Vec<ChainRowPayload>>,
    /// Forward, its source and the carry of each returned expiration (`YYYY-MM-DD` keys).
    #[schema(value_type = BTreeMap<String, ExpirationPricing>)]
    pub forwards: BTreeMap<NaiveDate, ExpirationPricing>,
    /// Every listed expiration (for paging with `expiration`).
    #[schema(value_type = Vec<IsoDate>)]
    pub available_expirations: Vec<NaiveDate>,
    /// `LIVE` when the chain belongs to the session in progress, `EOD` otherwise.
    pub data_type: DataFreshness,
    /// The window applied.
    pub strike_window: StrikeWindow,
    /// Always `decimal`: `IV Call`/`IV Put` are decimals.
    pub iv_units: &'static str,
    /// The session the chain belongs to.
    #[schema(value_type = IsoDate)]
    pub trade_date: NaiveDate,
    /// When it was priced (UTC).
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// Market state and the data's freshness (top level, as on gex and flow).
    #[serde(flatten)]
    pub session: SessionState,
    /// The same with the data's session date (the block this payload carried first).
    pub freshness: Freshness,
    /// Parameters moved into their documented range.
    pub clamped: Vec<ClampNotice>,
}

/// Rows of `rows` (one expiration, sorted by settlement then strike) kept by a window of
/// `per_side` strikes below and at/above `centre` in each settlement.
fn windowed_rows(
    rows: &[ChainRow],
    centre: f64,
    per_side: Option<usize>,
) -> (Vec<ChainRowPayload>, usize) {
    let mut kept = Vec::new();
    let mut start = 0;
    while start < rows.len() {
        let settlement = rows[start].settlement;
        let len = rows[start..]
            .iter()
            .take_while(|r| r.settlement == settlement)
            .count();
        let group = &rows[start..start + len];
        let (range, _) = window_around_strike(group, |r| r.strike, centre, per_side, Detail::Full);
        kept.extend(group[range].iter().map(ChainRowPayload::from_row));
        start += len;
    }
    (kept, rows.len())
}

/// Chain rows near the money for one or more expirations.
pub async fn chain(
    State(state): State<AppState>,
    CoveredChain {
        ticker,
        chain: view,
    }: CoveredChain,
    params: QueryParams,
) -> Answer<ChainPayload> {
    let num_expirations = params.int("num_expirations")?.value;
    let strikes_around = params.int("strikes_around")?;
    // Clamping a negative count to 0 would answer the full chain, the opposite of the narrow
    // window the caller was reaching for: refuse it instead.
    if strikes_around.requested < 0 {
        return Err(ApiError::bad_request(format!(
            "strikes_around is a count of strikes per side, 0 (the full chain) to {}; got {}",
            strikes_around.max.unwrap_or(i64::MAX),
            strikes_around.requested
        )));
    }
    let strikes_around = strikes_around.value;
    let requested = params.date("expiration")?;

    // `expiration` overrides `num_expirations` (spec 4.1).
    let selected: Vec<NaiveDate> = match requested {
        Some(expiration) => vec![listed_expiration(&ticker, &view, expiration)?],
        None => {
            let count = usize::try_from(num_expirations).unwrap_or(1);
            view.open_expirations()
                .iter()
                .take(count)
                .copied()
                .collect()
        }
    };
    let per_side = match usize::try_from(strikes_around).unwrap_or(0) {
        0 => None,
        n => Some(n),
    };

    let mut chains = BTreeMap::new();
    let mut forwards = BTreeMap::new();
    let (mut rows_total, mut rows_returned) = (0, 0);
    for &expiration in &selected {
        let rows = view.rows_of(expiration);
        let Some(first) = rows.first() else { continue };
        let (kept, total) = windowed_rows(rows, first.forward, per_side);
        rows_total += total;
        rows_returned += kept.len();
        forwards.insert(expiration, ExpirationPricing::of(first));
        chains.insert(expiration, kept);
    }

    // An index's expirations each have their own forward: quote the first one shown.
    let stock_price = selected
        .first()
        .and_then(|&expiration| view.price_for(expiration))
        .unwrap_or_else(|| view.stock_price());
    let freshness = state.freshness_of(view.trade_date);
    Ok(ok(ChainPayload {
        ticker,
        stock_price,
        priced_on_forward: view.priced_on_forward(),
        expirations: selected,
        chains,
        forwards,
        available_expirations: view.expirations.clone(),
        data_type: freshness.data_freshness,
        strike_window: StrikeWindow {
            strikes_around: per_side.unwrap_or(0),
            centre: "forward",
            truncated: rows_returned < rows_total,
            rows_total,
            rows_returned,
        },
        iv_units: IV_UNITS_DECIMAL,
        trade_date: view.trade_date,
        as_of: view.as_of,
        session: SessionState::from(&freshness),
        freshness,
        clamped: params.clamp_notices(),
    }))
}

// ---------------------------------------------------------------------------------------------
// /stock/{ticker}

/// `GET /stock/{ticker}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct StockPayload {
    /// The underlying.
    pub ticker: Ticker,
    /// Dollars: the spot the chain is priced on; for cash indices the forward of the nearest
    /// expiration (`priced_on_forward`).
    pub price: f64,
    /// Whether `price` is a forward (cash indices, priced with Black-76).
    pub priced_on_forward: bool,
    /// Company, fund or index name.
    pub company_name: Option<String>,
    /// `INDEX`, `ETF` or `STOCK`.
    #[schema(value_type = Option<AssetClassCode>)]
    pub asset_class: Option<AssetClass>,
    /// GICS sector; `null` for indices and broad ETFs.
    pub sector: Option<String>,
    /// GICS industry within the sector (`Semiconductors & Semiconductor Equipment`); `null`
    /// for indices and funds.
    pub industry: Option<String>,
    /// Market capitalisation, formatted (`$3.45T`); `null` for funds and indices.
    pub market_cap: Option<String>,
    /// Shares traded in the last session of the daily bars on or before `trade_date`,
    /// formatted (`52.31M`); `null` for cash indices (not traded) and without bars.
    pub volume: Option<String>,
    /// The same volume, shares.
    pub volume_shares: Option<u64>,
    /// The session `volume` is from.
    #[schema(value_type = Option<IsoDate>)]
    pub volume_date: Option<NaiveDate>,
    /// Option contracts traded this session across the chain, formatted (`1.25M`).
    pub options_volume: String,
    /// Beta to SPY, formatted to two decimals.
    pub beta: Option<String>,
    /// Next earnings report on or after the chain's session, from the reference data; `null`
    /// when none is scheduled.
    #[schema(value_type = Option<IsoDate>)]
    pub earnings_date: Option<NaiveDate>,
    /// The session the price belongs to.
    #[schema(value_type = IsoDate)]
    pub trade_date: NaiveDate,
    /// When it was priced (UTC).
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// `LIVE` when the price belongs to the session in progress, `EOD` otherwise.
    pub data_type: DataFreshness,
    /// Market state and the data's freshness (top level, as on gex and flow).
    #[serde(flatten)]
    pub session: SessionState,
    /// The same with the data's session date (the block this payload carried first).
    pub freshness: Freshness,
}

/// Dollars with a magnitude suffix: `$3.45T`, `$512.30B`, `$850.00M`, `$12,345`.
pub fn format_dollars(value: f64) -> String {
    format!("${}", format_magnitude(value))
}

/// A count or amount with a magnitude suffix (`T`, `B`, `M`, `K`), two decimals.
pub fn format_magnitude(value: f64) -> String {
    let magnitude = value.abs();
    let (scaled, suffix) = if magnitude >= 1e12 {
        (value / 1e12, "T")
    } else if magnitude >= 1e9 {
        (value / 1e9, "B")
    } else if magnitude >= 1e6 {
        (value / 1e6, "M")
    } else if magnitude >= 1e3 {
        (value / 1e3, "K")
    } else {
        return format!("{value:.0}");
    };
    format!("{scaled:.2}{suffix}")
}

/// Underlying price and company profile.
pub async fn stock(
    State(state): State<AppState>,
    CoveredChain {
        ticker,
        chain: view,
    }: CoveredChain,
) -> Answer<StockPayload> {
    let price = view.stock_price();
    if !price.is_finite() {
        return Err(ApiError::upstream(format!(
            "No usable price for {ticker} in its chain"
        )));
    }
    let coverage = state.market_data()?.coverage();
    let company: Option<&Arc<Company>> = coverage.get(ticker.as_str());
    let options_volume: u64 = view
        .rows
        .iter()
        .map(|r| {
            r.call
                .volume
                .unwrap_or(0)
                .saturating_add(r.put.volume.unwrap_or(0))
        })
        .fold(0, u64::saturating_add);
    // Exact below 2^53 contracts, far beyond any session.
    #[allow(clippy::cast_precision_loss)]
    let options_volume = format_magnitude(options_volume as f64);
    // A cash index's bars carry no shares: it is not traded.
    let is_index = company.is_some_and(|c| c.asset_class == AssetClass::Index);
    let share_volume = coverage
        .share_volume(ticker.as_str(), view.trade_date)
        .filter(|_| !is_index);
    // Exact below 2^53 shares.
    #[allow(clippy::cast_precision_loss)]
    let volume = share_volume.map(|(_, shares)| format_magnitude(shares as f64));
    let freshness = state.freshness_of(view.trade_date);
    Ok(ok(StockPayload {
        price,
        priced_on_forward: view.priced_on_forward(),
        company_name: company.map(|c| c.name.clone()),
        asset_class: company.map(|c| c.asset_class),
        sector: company.and_then(|c| c.sector.clone()),
        industry: company.and_then(|c| c.industry.clone()),
        market_cap: company.and_then(|c| c.market_cap).map(format_dollars),
        volume,
        volume_shares: share_volume.map(|(_, shares)| shares),
        volume_date: share_volume.map(|(date, _)| date),
        options_volume,
        beta: company.map(|c| format!("{:.2}", c.beta_spy)),
        earnings_date: coverage.next_earnings(ticker.as_str(), view.trade_date),
        trade_date: view.trade_date,
        as_of: view.as_of,
        data_type: freshness.data_freshness,
        session: SessionState::from(&freshness),
        freshness,
        ticker,
    }))
}

// ---------------------------------------------------------------------------------------------
// /search

/// One match of `/search`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SearchResult {
    /// The symbol.
    pub symbol: String,
    /// Company, fund or index name.
    pub name: String,
    /// GICS sector; `null` for indices and broad ETFs.
    pub sector: Option<String>,
    /// `mega` (≥ $200B), `large` (≥ $10B), `mid` (≥ $2B), `small` (≥ $300M), `micro`; `null`
    /// for funds and indices (no market cap).
    pub market_cap_tier: Option<&'static str>,
    /// `INDEX`, `ETF` or `STOCK`.
    #[schema(value_type = AssetClassCode)]
    pub asset_class: AssetClass,
    /// How it matched: `symbol`, `symbol_prefix`, `name_prefix`, `name`, `symbol_contains`.
    pub matched_on: &'static str,
}

/// `GET /search`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct SearchPayload {
    /// The query as given (trimmed).
    pub query: String,
    /// Matches, best first.
    pub results: Vec<SearchResult>,
    /// How many results.
    pub count: usize,
    /// True when the query is exactly a covered symbol (options data is served for it).
    pub supported: bool,
    /// True when the query is exactly a symbol of the coverage universe.
    pub exact_match: bool,
    /// Parameters moved into their documented range.
    pub clamped: Vec<ClampNotice>,
}

/// The market-cap tier of a capitalisation in dollars.
pub fn market_cap_tier(market_cap_usd: f64) -> &'static str {
    if market_cap_usd >= 200e9 {
        "mega"
    } else if market_cap_usd >= 10e9 {
        "large"
    } else if market_cap_usd >= 2e9 {
        "mid"
    } else if market_cap_usd >= 300e6 {
        "small"
    } else {
        "micro"
    }
}

/// How well `company` matches the upper-case query: lower rank is better; `None` = no match.
fn match_rank(company: &Company, query_upper: &str) -> Option<(u8, &'static str)> {
    let symbol = company.symbol.as_str();
    let name = company.name.to_uppercase();
    if symbol == query_upper {
        Some((0, "symbol"))
    } else if symbol.starts_with(query_upper) {
        Some((1, "symbol_prefix"))
    } else if name.starts_with(query_upper)
        || name
            .split(|c: char| !c.is_alphanumeric())
            .any(|word| word.starts_with(query_upper))
    {
        Some((2, "name_prefix"))
    } else if name.contains(query_upper) {
        Some((3, "name"))
    } else if symbol.contains(query_upper) {
        Some((4, "symbol_contains"))
    } else {
        None
    }
}

/// Covered symbols by symbol or name: exact symbol first, then symbol prefixes, names whose
/// word starts with the query, names containing it; larger market caps first within a rank.
pub async fn search(State(state): State<AppState>, params: QueryParams) -> Answer<SearchPayload> {
    let limit = usize::try_from(params.int("limit")?.value).unwrap_or(1);
    let query = params.text("q")?.unwrap_or_default().to_owned();
    if query.chars().count() > MAX_SEARCH_QUERY_CHARS {
        return Err(ApiError::bad_request(format!(
            "q is at most {MAX_SEARCH_QUERY_CHARS} characters"
        )));
    }
    let reader = state.market_data()?;
    let coverage = reader.coverage();
    if coverage.companies.is_empty() {
        return Err(ApiError::upstream(
            "The coverage universe is not loaded yet; retry in a few seconds",
        ));
    }
    let query_upper = query.to_uppercase();
    let mut matches: Vec<(u8, &'static str, &Arc<Company>)> = coverage
        .companies
        .iter()
        .filter_map(|c| match_rank(c, &query_upper).map(|(rank, how)| (rank, how, c)))
        .collect();
    matches.sort_by(|a, b| {
        a.0.cmp(&b.0)
            .then(
                b.2.market_cap
                    .unwrap_or(f64::INFINITY)
                    .total_cmp(&a.2.market_cap.unwrap_or(f64::INFINITY)),
            )
            .then(a.2.symbol.cmp(&b.2.symbol))
    });
    let results: Vec<SearchResult> = matches
        .into_iter()
        .take(limit)
        .map(|(_, matched_on, c)| SearchResult {
            symbol: c.symbol.clone(),
            name: c.name.clone(),
            sector: c.sector.clone(),
            market_cap_tier: c.market_cap.map(market_cap_tier),
            asset_class: c.asset_class,
            matched_on,
        })
        .collect();
    let exact_match = coverage.get(&query_upper).is_some();
    let supported =
        exact_match && Ticker::parse(&query_upper).is_ok_and(|ticker| reader.covers(&ticker));
    Ok(ok(SearchPayload {
        count: results.len(),
        results,
        supported,
        exact_match,
        query,
        clamped: params.clamp_notices(),
    }))
}

// ---------------------------------------------------------------------------------------------
// /options-by-delta/{ticker}

/// `GET /options-by-delta/{ticker}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct OptionByDeltaPayload {
    /// The underlying.
    pub ticker: Ticker,
    /// `call` or `put`.
    pub option_type: &'static str,
    /// OCC symbol of the contract chosen.
    pub option_symbol: Option<String>,
    /// Strike, dollars.
    pub strike: f64,
    /// `AM` or `PM`.
    #[schema(value_type = SettlementCode)]
    pub settlement: SettlementStyle,
    /// The contract's delta from the chain (negative for puts).
    pub actual_delta: f64,
    /// The absolute delta asked for (after clamping to 0.01–0.99).
    pub target_delta: f64,
    /// |actual_delta| − target_delta.
    pub delta_difference: f64,
    /// Dollars per share.
    pub bid: Option<f64>,
    /// Dollars per share.
    pub ask: Option<f64>,
    /// Dollars per share.
    pub mid: Option<f64>,
    /// Implied volatility, decimal.
    pub iv: f64,
    /// The same, percentage points.
    pub iv_pct: f64,
    /// `decimal` (the unit of `iv`).
    pub iv_units: &'static str,
    /// The expiration searched.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Calendar days to it.
    pub dte: i32,
    /// The price the expiration is quoted against, dollars: the spot for stocks and ETFs,
    /// the expiration's forward for cash indices.
    pub stock_price: f64,
    /// Whether `stock_price` is a forward (cash indices, priced with Black-76).
    pub priced_on_forward: bool,
    /// Contracts traded this session.
    pub volume: Option<u64>,
    /// Open interest, contracts.
    pub open_interest: Option<u64>,
    /// `LIVE` when the chain belongs to the session in progress, `EOD` otherwise.
    pub data_type: DataFreshness,
    /// Market state and the data's freshness (top level, as on gex and flow).
    #[serde(flatten)]
    pub session: SessionState,
    /// Parameters moved into their documented range.
    pub clamped: Vec<ClampNotice>,
}

/// The call or put of one expiration whose |delta| is nearest the target (ties: lower strike).
pub async fn options_by_delta(
    State(state): State<AppState>,
    CoveredChain {
        ticker,
        chain: view,
    }: CoveredChain,
    params: QueryParams,
) -> Answer<OptionByDeltaPayload> {
    let target_delta = params.float("delta")?.value;
    let option_type = params.choice("option_type")?.unwrap_or("call");
    let requested = params.date("expiration")?;
    let expiration = match requested {
        Some(expiration) => listed_expiration(&ticker, &view, expiration)?,
        None => nearest_expiration(&ticker, &view)?,
    };
    let put = option_type == "put";
    let side_of = |row: &ChainRow| -> ChainSide {
        if put {
            row.put.clone()
        } else {
            row.call.clone()
        }
    };
    let mut best: Option<(f64, &ChainRow, f64)> = None;
    for row in view.rows_of(expiration) {
        let side = if put { &row.put } else { &row.call };
        let (Some(delta), Some(_)) = (side.greeks.delta, side.iv) else {
            continue;
        };
        let distance = (delta.abs() - target_delta).abs();
        let better =
            best.is_none_or(|(d, b, _)| distance < d || (distance == d && row.strike < b.strike));
        if better {
            best = Some((distance, row, delta));
        }
    }
    let Some((_, row, actual_delta)) = best else {
        return Err(ApiError::upstream(format!(
            "No {option_type} of {ticker} expiring {expiration} has a two-sided quote to \
             price a delta from"
        )));
    };
    let side = side_of(row);
    let iv = side.iv.unwrap_or(f64::NAN);
    let freshness = state.freshness_of(view.trade_date);
    Ok(ok(OptionByDeltaPayload {
        option_type,
        option_symbol: side.option_symbol,
        strike: row.strike,
        settlement: row.settlement,
        actual_delta,
        target_delta,
        delta_difference: actual_delta.abs() - target_delta,
        bid: side.bid,
        ask: side.ask,
        mid: side.mid,
        iv,
        iv_pct: iv * 100.0,
        iv_units: IV_UNITS_DECIMAL,
        expiration,
        dte: row.dte,
        stock_price: quoted_price(row),
        priced_on_forward: view.priced_on_forward(),
        volume: side.volume,
        open_interest: side.open_interest,
        data_type: freshness.data_freshness,
        session: SessionState::from(&freshness),
        clamped: params.clamp_notices(),
        ticker,
    }))
}

// ---------------------------------------------------------------------------------------------
// /chain-at-time/{ticker}

/// One side of a strike in `calls[]` / `puts[]` of `/chain-at-time`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SideAtTime {
    /// Strike, dollars.
    pub strike: f64,
    /// OCC symbol.
    pub option_symbol: Option<String>,
    /// Dollars per share.
    pub bid: Option<f64>,
    /// Dollars per share.
    pub ask: Option<f64>,
    /// Dollars per share.
    pub mid: Option<f64>,
    /// Implied volatility, decimal.
    pub implied_vol: Option<f64>,
    /// Per share.
    pub delta: Option<f64>,
    /// Per share, per $1.
    pub gamma: Option<f64>,
    /// Dollars per calendar day.
    pub theta: Option<f64>,
    /// Dollars per vol point.
    pub vega: Option<f64>,
    /// Dollars per point of rate.
    pub rho: Option<f64>,
    /// Contracts traded that session.
    pub volume: Option<u64>,
    /// Open interest, contracts.
    pub open_interest: Option<u64>,
}

impl SideAtTime {
    fn of(strike: f64, side: &ChainSide) -> Self {
        Self {
            strike,
            option_symbol: side.option_symbol.clone(),
            bid: side.bid,
            ask: side.ask,
            mid: side.mid,
            implied_vol: side.iv,
            delta: side.greeks.delta,
            gamma: side.greeks.gamma,
            theta: side.greeks.theta,
            vega: side.greeks.vega,
            rho: side.greeks.rho,
            volume: side.volume,
            open_interest: side.open_interest,
        }
    }
}

/// `GET /chain-at-time/{ticker}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ChainAtTimePayload {
    /// The underlying.
    pub ticker: Ticker,
    /// The session whose close was used.
    #[schema(value_type = IsoDate)]
    pub trade_date: NaiveDate,
    /// `close`: the rows are the end-of-day snapshot.
    pub time_of_day: &'static str,
    /// When the rows were priced (UTC).
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// The expiration.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Calendar days from the trade date to the expiration.
    pub dte: i32,
    /// The price the chain was quoted against that day, dollars: the spot; for cash indices
    /// the expiration's forward.
    pub underlying_price: f64,
    /// Whether `underlying_price` is a forward (cash indices, priced with Black-76).
    pub priced_on_forward: bool,
    /// The forward of the expiration that day, and how it was obtained.
    pub pricing: ExpirationPricing,
    /// Rows with the keys of `/chain`, by settlement then strike.
    pub chain: Vec<ChainRowPayload>,
    /// Listed calls, by strike.
    pub calls: Vec<SideAtTime>,
    /// Listed puts, by strike.
    pub puts: Vec<SideAtTime>,
    /// Always `decimal`.
    pub iv_units: &'static str,
}

/// Why `chain-at-time` has no rows: 404 naming the expirations listed that day when the
/// session is carried but did not list `expiration` (asking again will not help), 424 when the
/// session itself is not carried.
async fn not_at_time(
    state: &AppState,
    ticker: &Ticker,
    trade_date: NaiveDate,
    expiration: NaiveDate,
) -> ApiError {
    let listed = match state.market_data() {
        Ok(reader) => match reader.expirations_at(ticker, trade_date).await {
            Ok(listed) => listed.unwrap_or_default(),
            Err(error) => return error,
        },
        Err(error) => return error,
    };
    if listed.is_empty() {
        return ApiError::upstream(format!(
            "No end-of-day chain for {ticker} expiring {expiration} on {trade_date}"
        ));
    }
    const SHOWN: usize = 12;
    let shown: Vec<String> = listed
        .iter()
        .take(SHOWN)
        .map(NaiveDate::to_string)
        .collect();
    let more = if listed.len() > SHOWN {
        format!(" and {} more", listed.len() - SHOWN)
    } else {
        String::new()
    };
    ApiError::not_found(format!(
        "{ticker} listed no {expiration} expiration on {trade_date}; listed that day: {}{more}",
        shown.join(", ")
    ))
}

/// One expiration's chain at a past session's close.
pub async fn chain_at_time(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Answer<ChainAtTimePayload> {
    let (Some(expiration), Some(trade_date)) =
        (params.date("expiration")?, params.date("trade_date")?)
    else {
        // Both are required in the registry, so parsing already refused their absence.
        return Err(ApiError::bad_request(
            "expiration and trade_date are required (YYYY-MM-DD)",
        ));
    };
    // While a session is open its close is still ahead: the last closed one is the day before.
    let freshness = state.freshness();
    let last_closed = if freshness.is_market_hours {
        state.calendar().previous_trading_day(freshness.trade_date)
    } else {
        freshness.trade_date
    };
    if trade_date > last_closed {
        return Err(ApiError::bad_request(format!(
            "trade_date {trade_date} has not closed yet; the last closed session is \
             {last_closed} (use {DATA_PREFIX}/chain/{ticker} for the current chain)"
        )));
    }
    if !state.calendar().is_trading_day(trade_date) {
        return Err(ApiError::bad_request(format!(
            "trade_date {trade_date} is not a trading day; the session before it is {}",
            state.calendar().previous_trading_day(trade_date)
        )));
    }
    if expiration < trade_date {
        return Err(ApiError::bad_request(format!(
            "expiration {expiration} is before trade_date {trade_date}: the contract had \
             expired by then"
        )));
    }
    let rows = state
        .market_data()?
        .chain_at_time(&ticker, trade_date, expiration)
        .await?;
    let Some(mut rows) = rows.filter(|rows| !rows.is_empty()) else {
        return Err(not_at_time(&state, &ticker, trade_date, expiration).await);
    };
    rows.sort_by(|a, b| {
        a.settlement
            .as_str()
            .cmp(b.settlement.as_str())
            .then(a.strike.total_cmp(&b.strike))
    });
    let first = &rows[0];
    let listed = |pick: fn(&ChainRow) -> &ChainSide| -> Vec<SideAtTime> {
        let mut sides: Vec<SideAtTime> = rows
            .iter()
            .filter(|r| pick(r).is_listed())
            .map(|r| SideAtTime::of(r.strike, pick(r)))
            .collect();
        sides.sort_by(|a, b| a.strike.total_cmp(&b.strike));
        sides
    };
    let calls = listed(|r| &r.call);
    let puts = listed(|r| &r.put);
    Ok(ok(ChainAtTimePayload {
        trade_date,
        time_of_day: "close",
        as_of: first.as_of,
        expiration,
        dte: first.dte,
        underlying_price: quoted_price(first),
        priced_on_forward: first.model == PricingModelCode::Black76,
        pricing: ExpirationPricing::of(first),
        chain: rows.iter().map(ChainRowPayload::from_row).collect(),
        calls,
        puts,
        iv_units: IV_UNITS_DECIMAL,
        ticker,
    }))
}
