//! `GET /chain-at-time/{ticker}`: one expiration as it stood at a past close.

use axum::extract::State;
use chrono::{DateTime, NaiveDate, Utc};
use optics_schemas::{ChainRow, ChainSide, PricingModelCode};
use serde::Serialize;
use utoipa::ToSchema;

use super::rows::{ChainRowPayload, ExpirationPricing};
use super::{Answer, IV_UNITS_DECIMAL};
use crate::envelope::ok;
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::market::quoted_price;
use crate::openapi::{IsoDate, Timestamp};
use crate::params::QueryParams;
use crate::registry::DATA_PREFIX;
use crate::state::AppState;
use crate::ticker::Ticker;

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
