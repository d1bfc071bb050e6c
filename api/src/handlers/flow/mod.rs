//! The flow family, one file per endpoint: `/flow/{ticker}`, `/smart-money/{ticker}` and
//! `/volume-profile/{ticker}`.
//!
//! The worker publishes one flow row per contract that traded this session ([`FlowView`]),
//! and beside it the same rows summed by strike and by expiration ([`FlowAggregatesView`]).
//! The summary, largest flows, unusual activity and smart money are `optics_compute::flow`
//! functions over the rows; `top_strikes` and `top_expirations` rank the stored sums of the
//! flow's own cycle (`strike_and_expiration_flows`), or the rows' sums when the store holds
//! none of that cycle, with the same function. The volume profile reads the chain, which
//! carries every listed contract's volume and open interest.
//!
//! Units: premium in dollars (volume × mid × 100), volume and open interest in contracts,
//! ratios unitless. The flow aggregates cumulative session volume per contract; it does not
//! label individual prints. `timestamp` fields are ISO 8601 without a zone, as the interface
//! specifies (spec 2.1); they are UTC, the instant `as_of` gives with its zone.
//!
//! # When the flow is unavailable (503, `data_unavailable: true`)
//!
//! The worker publishes the chain and the flow from one cycle with one `as_of`, so the flow is
//! served only beside a chain it matches ([`servable_flow`]). With a chain held, `/flow`
//! answers 503 when:
//! - no listed contract of the chain carries a session volume (every volume absent or zero):
//!   the volume feed is down;
//! - no flow snapshot is held for the underlying;
//! - the flow is of an earlier session than the chain, was read more than
//!   [`FLOW_MAX_LAG_BEHIND_CHAIN`] before it, or is empty while the chain shows volume: the
//!   volume side stalled while quotes kept arriving;
//! - the market is open and the flow is not of the session in progress, or is older than
//!   [`FLOW_LIVE_MAX_AGE`] by the clock: nothing current to label `LIVE`.
//!
//! Without a chain the answer is 424 (upstream), as elsewhere. `/smart-money`, which reads the
//! same flow, answers 424 in the same cases (the 503 state is the flow endpoint's alone).
//! The freshness block is that of the data's own session ([`AppState::freshness_of`]): an
//! earlier session's chain and flow are that session's `EOD`, never `LIVE`.

#[expect(
    clippy::module_inception,
    reason = "one file per endpoint, named like its path: /flow/{ticker} is flow/flow.rs"
)]
pub mod flow;
pub mod smart_money;
pub mod volume_profile;

use std::sync::Arc;

use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeDelta, Utc};
use optics_compute::flow::{FlowRow, Moneyness};
use optics_compute::pricing::OptionType;
use optics_schemas::{FlowSnapshotRow, MoneynessCode};
use serde::Serialize;
use utoipa::ToSchema;

use self::flow::FlowPayload;
use self::smart_money::SmartMoneyPayload;
use self::volume_profile::VolumeProfilePayload;
use crate::error::ApiError;
use crate::extract::no_chain;
use crate::freshness::{DataFreshness, Freshness};
use crate::market::{ChainView, FlowView};
use crate::openapi::{DataSchema, IsoDate, LocalTimestamp};
use crate::registry::Endpoint;
use crate::state::AppState;
use crate::ticker::Ticker;

/// Flow read longer than this before the chain it would be served beside is stale: the worker
/// publishes both from one cycle (every second by default), so a larger gap means the volume
/// side stopped while quotes kept coming.
pub const FLOW_MAX_LAG_BEHIND_CHAIN: TimeDelta = TimeDelta::minutes(2);
/// During a session, flow older than this by the clock is not live data: at one cycle a
/// second, five minutes without a new flow snapshot means the feed is down.
pub const FLOW_LIVE_MAX_AGE: TimeDelta = TimeDelta::minutes(5);

/// The payload type of each endpoint of the family, for the OpenAPI document and the reference.
pub fn data_schemas() -> Vec<DataSchema> {
    vec![
        DataSchema::of::<FlowPayload>(Endpoint::Flow),
        DataSchema::of::<SmartMoneyPayload>(Endpoint::SmartMoney),
        DataSchema::of::<VolumeProfilePayload>(Endpoint::VolumeProfile),
    ]
}

/// One contract's session flow (`largest_flows[]`, `unusual_activity[]`, `all_flow[]`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct FlowRowPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The instant the flow was read: ISO 8601 without a zone (spec 2.1), UTC.
    #[schema(value_type = LocalTimestamp)]
    pub timestamp: NaiveDateTime,
    /// Expiration date.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Calendar days to it.
    pub dte: i32,
    /// Strike, dollars.
    pub strike: f64,
    /// `CALL` or `PUT`.
    #[serde(rename = "type")]
    pub option_type: &'static str,
    /// Bid, dollars per share.
    pub bid: Option<f64>,
    /// Ask, dollars per share.
    pub ask: Option<f64>,
    /// Mid, dollars per share.
    pub mid: Option<f64>,
    /// Per-share delta.
    pub delta: Option<f64>,
    /// Contracts traded this session.
    pub volume: u64,
    /// Open interest, contracts.
    pub oi: u64,
    /// volume × price × 100, dollars.
    pub premium: Option<f64>,
    /// volume / open interest; null when open interest is 0.
    pub volume_oi_ratio: Option<f64>,
    /// Volume is a multiple of open interest (see the summary's `unusual_rule`).
    pub is_unusual: bool,
    /// `ITM` or `OTM` against spot.
    pub moneyness: &'static str,
}

/// The flow rows of a view in the compute crate's type.
fn compute_rows(view: &FlowView) -> Vec<FlowRow> {
    view.rows.iter().map(compute_row).collect()
}

fn compute_row(row: &FlowSnapshotRow) -> FlowRow {
    FlowRow {
        expiration: row.expiration,
        strike: row.strike,
        option_type: match row.option_type {
            optics_schemas::OptionType::Call => OptionType::Call,
            optics_schemas::OptionType::Put => OptionType::Put,
        },
        dte: i64::from(row.dte),
        bid: row.bid,
        ask: row.ask,
        mid: row.mid,
        delta: row.delta,
        volume: row.volume,
        open_interest: row.open_interest,
        premium_usd: row.premium_usd,
        volume_oi_ratio: row.volume_oi_ratio,
        is_unusual: row.is_unusual,
        moneyness: match row.moneyness {
            MoneynessCode::Itm => Moneyness::Itm,
            MoneynessCode::Otm => Moneyness::Otm,
        },
    }
}

fn row_payload(row: &FlowRow, ticker: &Ticker, timestamp: NaiveDateTime) -> FlowRowPayload {
    FlowRowPayload {
        ticker: ticker.to_string(),
        timestamp,
        expiration: row.expiration,
        dte: i32::try_from(row.dte).unwrap_or(i32::MAX),
        strike: row.strike,
        option_type: match row.option_type {
            OptionType::Call => "CALL",
            OptionType::Put => "PUT",
        },
        bid: row.bid,
        ask: row.ask,
        mid: row.mid,
        delta: row.delta,
        volume: row.volume,
        oi: row.open_interest,
        premium: row.premium_usd,
        volume_oi_ratio: row.volume_oi_ratio,
        is_unusual: row.is_unusual,
        moneyness: row.moneyness.code(),
    }
}

/// The flow of `chain` when it can be served beside it; otherwise why not (see the module
/// docs). `now` and `freshness` are the clock's.
pub(crate) fn servable_flow(
    ticker: &Ticker,
    chain: &ChainView,
    flow: Option<Arc<FlowView>>,
    now: DateTime<Utc>,
    freshness: &Freshness,
) -> Result<Arc<FlowView>, String> {
    let traded = chain.rows.iter().any(|r| {
        [&r.call, &r.put]
            .iter()
            .any(|side| side.is_listed() && side.volume.is_some_and(|v| v > 0))
    });
    if !traded {
        return Err(format!(
            "The options volume feed for {ticker} is down: no contract of the {} chain carries \
             a session volume. Retry later",
            chain.trade_date
        ));
    }
    let Some(flow) = flow else {
        return Err(format!(
            "The options volume feed for {ticker} is unavailable: the chain is current but no \
             flow has been computed. Retry later"
        ));
    };
    // Every flow row carries the cycle's trade date and instant.
    let Some(first) = flow.rows.first() else {
        return Err(format!(
            "The options flow of {ticker} is behind its chain: the chain of {} shows volume but \
             the flow is empty. Retry later",
            chain.as_of
        ));
    };
    if first.trade_date != chain.trade_date || chain.as_of - first.as_of > FLOW_MAX_LAG_BEHIND_CHAIN
    {
        return Err(format!(
            "The options flow of {ticker} is stale: read at {} ({} session) while the chain is \
             of {} ({} session). Retry later",
            first.as_of, first.trade_date, chain.as_of, chain.trade_date
        ));
    }
    if freshness.data_freshness == DataFreshness::Live
        && (first.trade_date != freshness.trade_date || now - first.as_of > FLOW_LIVE_MAX_AGE)
    {
        return Err(format!(
            "The options flow of {ticker} is not current: the market is open for the {} session \
             but the latest flow was read at {} ({} session). Retry later",
            freshness.trade_date, first.as_of, first.trade_date
        ));
    }
    Ok(flow)
}

/// The chain and flow of `ticker`: 424 without a chain, 503 (`data_unavailable`) when the
/// chain is there but its flow cannot be served ([`servable_flow`]). The freshness returned
/// is the flow's session's.
fn chain_and_flow(
    state: &AppState,
    ticker: &Ticker,
) -> Result<(Arc<ChainView>, Arc<FlowView>, Freshness), ApiError> {
    let reader = state.market_data()?;
    let chain = reader.chain(ticker).ok_or_else(|| no_chain(ticker))?;
    let now = state.now();
    let flow = servable_flow(ticker, &chain, reader.flow(ticker), now, &state.freshness())
        .map_err(ApiError::FlowUnavailable)?;
    let freshness = state.freshness_of(chain.trade_date);
    Ok((chain, flow, freshness))
}

/// `requested` when the chain lists it (400 otherwise), else the nearest expiration with time
/// left at the chain's instant.
pub(crate) fn listed_or_nearest(
    ticker: &Ticker,
    chain: &ChainView,
    requested: Option<NaiveDate>,
) -> Result<NaiveDate, ApiError> {
    match requested {
        Some(expiration) if chain.expirations.contains(&expiration) => Ok(expiration),
        Some(expiration) => {
            let listed: Vec<String> = chain.expirations.iter().map(|e| e.to_string()).collect();
            Err(ApiError::bad_request(format!(
                "expiration {expiration} is not a listed expiration of {ticker}; listed: {}",
                listed.join(", ")
            )))
        }
        None => chain.open_expirations().first().copied().ok_or_else(|| {
            ApiError::upstream(format!("The chain of {ticker} lists no open expiration"))
        }),
    }
}
