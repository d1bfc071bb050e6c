//! `GET /chain/{ticker}`: chain rows near the money, per expiration.

use std::collections::BTreeMap;

use axum::extract::State;
use chrono::{DateTime, NaiveDate, Utc};
use optics_schemas::ChainRow;
use serde::Serialize;
use utoipa::ToSchema;

use super::rows::{ChainRowPayload, ExpirationPricing};
use super::{Answer, IV_UNITS_DECIMAL, SessionState, listed_expiration};
use crate::envelope::ok;
use crate::error::ApiError;
use crate::extract::CoveredChain;
use crate::freshness::{DataFreshness, Freshness};
use crate::openapi::{IsoDate, Timestamp};
use crate::params::{ClampNotice, QueryParams};
use crate::state::AppState;
use crate::ticker::Ticker;
use crate::window::{Detail, window_around_strike};

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
