//! The flow family: `/flow/{ticker}`, `/smart-money/{ticker}` and `/volume-profile/{ticker}`.
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

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use chrono::{DateTime, NaiveDate, NaiveDateTime, TimeDelta, Utc};
use optics_compute::exposure::contracts_from_chain;
use optics_compute::flow::{
    ExpirationFlow, FlowConfig, FlowRow, Moneyness, SmartMoneyConfig, StrikeFlow, expiration_flows,
    largest_flows, smart_money, strike_flows, summarize_flow, top_flow_groups, unusual_activity,
    volume_profile,
};
use optics_compute::pricing::OptionType;
use optics_schemas::{FlowSnapshotRow, MoneynessCode};
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::{CoveredChain, CoveredTicker, no_chain};
use crate::freshness::{DataFreshness, Freshness};
use crate::market::{ChainView, FlowAggregatesView, FlowView};
use crate::openapi::{DataSchema, IsoDate, LocalTimestamp, Timestamp};
use crate::params::{ClampNotice, QueryParams};
use crate::state::AppState;
use crate::ticker::Ticker;
use crate::window::{self, Detail, Window, WindowRequest};

/// flow under compact: traded strikes kept each side of spot when `strikes_around` is not
/// given (spec §8: 20 per side).
pub const FLOW_STRIKES_PER_SIDE: usize = 20;
/// Rows of `largest_flows` under full detail: the biggest tickets by premium. A ranking, not
/// the whole list (`all_flow` is that); compact keeps [`window::FLOW_TOP_ROWS`].
pub const LARGEST_FLOWS_FULL_ROWS: usize = 50;
/// Entries of `top_strikes` and `top_expirations` (never trimmed further).
const TOP_CLUSTERS: usize = 10;
/// Strikes listed in `top_volume_strikes` and `top_oi_strikes`.
const TOP_PROFILE_STRIKES: usize = 10;
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
        DataSchema::of::<FlowPayload>("flow"),
        DataSchema::of::<SmartMoneyPayload>("smart-money"),
        DataSchema::of::<VolumeProfilePayload>("volume-profile"),
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

/// The `summary` block of `/flow`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct FlowSummaryPayload {
    /// Call volume / put volume.
    pub call_put_ratio: Option<f64>,
    /// Put volume / call volume.
    pub put_call_ratio: Option<f64>,
    /// Call premium − put premium, dollars.
    pub net_premium: f64,
    /// `BULLISH`, `BEARISH` or `NEUTRAL` from the premium balance.
    pub sentiment: &'static str,
    /// Σ call premium, dollars.
    pub total_call_premium: f64,
    /// Σ put premium, dollars.
    pub total_put_premium: f64,
    /// Σ call volume, contracts.
    pub total_call_volume: u64,
    /// Σ put volume, contracts.
    pub total_put_volume: u64,
    /// Contracts that traded.
    pub total_flow_count: usize,
    /// How `is_unusual` is decided.
    pub unusual_rule: String,
    /// How `sentiment` is decided.
    pub sentiment_rule: String,
}

/// Premium and volume of one expiration (`top_expirations[][1]`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct ExpirationFlowPayload {
    /// Σ premium, dollars.
    pub premium: f64,
    /// Σ volume, contracts.
    pub volume: u64,
}

/// Volume and premium at one strike (`top_strikes[][1]`).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct StrikeFlowPayload {
    /// Σ call volume, contracts.
    pub calls: u64,
    /// Σ put volume, contracts.
    pub puts: u64,
    /// Σ premium, dollars.
    pub premium: f64,
    /// Σ volume, contracts.
    pub volume: u64,
}

/// The `/flow/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct FlowPayload {
    /// Always true (the payload repeats the envelope's flag, as the spec shows).
    pub success: bool,
    /// Underlying symbol.
    pub ticker: String,
    /// The instant the flow was read: ISO 8601 without a zone (spec 2.1), UTC.
    #[schema(value_type = LocalTimestamp)]
    pub timestamp: NaiveDateTime,
    /// The same instant with its zone.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// The chain's price, dollars.
    pub stock_price: f64,
    /// Totals and the sentiment read (never trimmed).
    pub summary: FlowSummaryPayload,
    /// The contracts with the most premium, descending (then most volume, then expiration,
    /// strike, call before put): the top 50 under full detail, 10 under compact.
    pub largest_flows: Vec<FlowRowPayload>,
    /// Every unusual contract, highest volume/OI first (10 under compact).
    pub unusual_activity: Vec<FlowRowPayload>,
    /// Every contract that traded, by expiration, strike, call before put.
    pub all_flow: Vec<FlowRowPayload>,
    /// `[strike, {calls, premium, puts, volume}]`, by premium descending.
    pub top_strikes: Vec<(f64, StrikeFlowPayload)>,
    /// `[expiration, {premium, volume}]`, by premium descending.
    #[schema(value_type = Vec<(IsoDate, ExpirationFlowPayload)>)]
    pub top_expirations: Vec<(NaiveDate, ExpirationFlowPayload)>,
    /// `LIVE` or `EOD`, market hours and which data is shown.
    #[serde(flatten)]
    pub freshness: Freshness,
    /// all_flow, largest_flows and unusual_activity together (row counts summed):
    /// `rows_total` the rows the full payload carries in them, `rows_returned` this one's,
    /// with the `strikes_around` and `limit` applied under compact.
    pub window: Window,
    /// Parameters moved into their documented range (empty when none was).
    pub clamped: Vec<ClampNotice>,
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

/// The flow of every strike (across expirations) and every expiration of `view`: the stored
/// `flow_aggregates` when they are of the flow's own cycle (same session and instant), else
/// the sums of `rows` (the view's rows) — a store written before the worker published
/// aggregates, or an aggregate snapshot not swapped in yet beside a newer flow.
fn strike_and_expiration_flows(
    view: &FlowView,
    rows: &[FlowRow],
    stored: Option<&FlowAggregatesView>,
) -> (Vec<StrikeFlow>, Vec<ExpirationFlow>) {
    // Every row of a snapshot carries its cycle's trade date and instant.
    let flow_cycle = view.rows.first().map(|r| (r.trade_date, r.as_of));
    match stored {
        // Both `None` only when both are empty: no groups either way.
        Some(stored) if stored.cycle == flow_cycle => {
            (stored.strikes.clone(), stored.expirations.clone())
        }
        _ => (strike_flows(rows), expiration_flows(rows)),
    }
}

/// The strikes kept by a window of `per_side` listed strikes each side of `spot` over the
/// strikes of `rows`: `(lowest, highest)`, or `None` to keep every strike.
fn strike_band(rows: &[FlowRow], spot: f64, per_side: Option<usize>) -> Option<(f64, f64)> {
    let per_side = per_side?;
    let mut strikes: Vec<f64> = rows.iter().map(|r| r.strike).collect();
    strikes.sort_by(f64::total_cmp);
    strikes.dedup();
    let (range, _) =
        window::window_around_strike(&strikes, |k| *k, spot, Some(per_side), Detail::Compact);
    let kept = &strikes[range];
    Some((*kept.first()?, *kept.last()?))
}

/// The rows of `list` inside `band` (all when `None`), then the first `limit` of them, in
/// `list`'s order.
fn in_band(list: &[FlowRow], band: Option<(f64, f64)>, limit: Option<usize>) -> Vec<FlowRow> {
    let mut kept: Vec<FlowRow> = list
        .iter()
        .filter(|r| band.is_none_or(|(lo, hi)| r.strike >= lo && r.strike <= hi))
        .copied()
        .collect();
    if let Some(limit) = limit {
        kept.truncate(limit);
    }
    kept
}

/// `GET /flow/{ticker}`.
///
/// Full detail: `all_flow` is every contract that traded, `unusual_activity` every unusual
/// one, and `largest_flows` the [`LARGEST_FLOWS_FULL_ROWS`] with the most premium (a ranking:
/// repeating the whole list by premium would add nothing a client cannot sort itself).
/// Under compact detail the three lists are trimmed: first to the contracts whose strike is
/// among the `strikes_around` traded strikes each side of spot (default
/// [`FLOW_STRIKES_PER_SIDE`]; 0 keeps every strike), then `all_flow` to `limit` rows (default
/// 25) and `largest_flows` and `unusual_activity` to 10 each (the biggest tickets and the most
/// unusual inside the band). The summary and the strike and expiration clusters are never
/// trimmed.
pub async fn flow(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    headers: HeaderMap,
    params: QueryParams,
) -> Result<Json<Envelope<FlowPayload>>, ApiError> {
    let window_request = WindowRequest::from_request(&headers, &params)?;
    let (chain, view, freshness) = chain_and_flow(&state, &ticker)?;
    let stored_aggregates = state.market_data()?.flow_aggregates(&ticker);
    let config = FlowConfig::default();
    let rows = compute_rows(&view);
    let (strikes, expirations) =
        strike_and_expiration_flows(&view, &rows, stored_aggregates.as_deref());
    let as_of = view.rows.first().map_or(chain.as_of, |r| r.as_of);
    let timestamp = as_of.naive_utc();
    let spot = chain.stock_price();
    let summary = summarize_flow(&rows, &config);
    let detail = window_request.detail;
    let per_side = window_request.strikes_per_side(FLOW_STRIKES_PER_SIDE);
    let band = strike_band(&rows, spot, per_side);
    let all_limit = window_request.row_limit(window::FLOW_ALL_FLOW_ROWS);
    let top_limit = (detail == Detail::Compact).then_some(window::FLOW_TOP_ROWS);
    // Every row ranked, then banded: compact's biggest tickets are the band's, which need not
    // be among the full payload's top 50.
    let by_premium = largest_flows(&rows, rows.len());
    let largest_full_rows = by_premium.len().min(LARGEST_FLOWS_FULL_ROWS);
    let largest_limit = top_limit.unwrap_or(LARGEST_FLOWS_FULL_ROWS);
    let unusual = unusual_activity(&rows, rows.len());
    let all_kept = in_band(&rows, band, all_limit);
    let largest_kept = in_band(&by_premium, band, Some(largest_limit));
    let unusual_kept = in_band(&unusual, band, top_limit);
    let list_window = |full_rows, returned, limit| Window {
        detail,
        rows_total: full_rows,
        rows_returned: returned,
        truncated: returned < full_rows,
        strikes_around: per_side,
        limit,
    };
    let window = list_window(rows.len(), all_kept.len(), all_limit)
        .combine(list_window(
            largest_full_rows,
            largest_kept.len(),
            top_limit,
        ))
        .combine(list_window(unusual.len(), unusual_kept.len(), top_limit));
    let shape = |list: &[FlowRow]| -> Vec<FlowRowPayload> {
        list.iter()
            .map(|r| row_payload(r, &ticker, timestamp))
            .collect()
    };
    Ok(ok(FlowPayload {
        success: true,
        ticker: ticker.to_string(),
        timestamp,
        as_of,
        stock_price: spot,
        summary: FlowSummaryPayload {
            call_put_ratio: summary.call_put_ratio,
            put_call_ratio: summary.put_call_ratio,
            net_premium: summary.net_premium,
            sentiment: summary.sentiment.code(),
            total_call_premium: summary.total_call_premium,
            total_put_premium: summary.total_put_premium,
            total_call_volume: summary.total_call_volume,
            total_put_volume: summary.total_put_volume,
            total_flow_count: summary.total_flow_count,
            unusual_rule: format!(
                "volume >= {} contracts and volume >= {}x open interest (or no open interest)",
                config.unusual_min_volume, config.unusual_volume_multiple
            ),
            sentiment_rule: format!(
                "BULLISH when call minus put premium exceeds {:.0}% of total premium, BEARISH \
                 below -{:.0}%, NEUTRAL otherwise",
                100.0 * config.sentiment_threshold,
                100.0 * config.sentiment_threshold
            ),
        },
        largest_flows: shape(&largest_kept),
        unusual_activity: shape(&unusual_kept),
        all_flow: shape(&all_kept),
        top_strikes: top_flow_groups(strikes, TOP_CLUSTERS)
            .iter()
            .map(|s: &StrikeFlow| {
                (
                    s.key,
                    StrikeFlowPayload {
                        calls: s.totals.call_volume,
                        puts: s.totals.put_volume,
                        premium: s.totals.premium_usd,
                        volume: s.totals.volume,
                    },
                )
            })
            .collect(),
        top_expirations: top_flow_groups(expirations, TOP_CLUSTERS)
            .iter()
            .map(|e: &ExpirationFlow| {
                (
                    e.key,
                    ExpirationFlowPayload {
                        premium: e.totals.premium_usd,
                        volume: e.totals.volume,
                    },
                )
            })
            .collect(),
        freshness,
        window,
        clamped: params.clamp_notices(),
    }))
}

/// One `smart_money_trades[]` entry: the flow row, the filters it met and its score.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SmartMoneyTradePayload {
    /// The contract's flow.
    #[serde(flatten)]
    pub row: FlowRowPayload,
    /// `large_premium`, `likely_opening`, `otm_with_time`.
    pub criteria: Vec<&'static str>,
    /// 100 × filters met / 3, rounded (a 0–100 heuristic).
    pub smart_money_score: u8,
}

/// The thresholds of the smart-money filters.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct SmartMoneyFilters {
    /// `large_premium`: premium at least this, dollars (required).
    pub min_premium: f64,
    /// `likely_opening`: volume above this multiple of open interest.
    pub opening_volume_oi_ratio: f64,
    /// `otm_with_time`: out of the money with at least this many days left.
    pub min_dte: i64,
}

/// The `/smart-money/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SmartMoneyPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The chain's price, dollars.
    pub stock_price: f64,
    /// Qualifying contracts, by score then premium.
    pub smart_money_trades: Vec<SmartMoneyTradePayload>,
    /// How many qualified.
    pub total_smart_trades: usize,
    /// Σ premium of the qualifying contracts, dollars.
    pub total_smart_premium: f64,
    /// The filters (a contract needs `large_premium` and one other).
    pub filters: SmartMoneyFilters,
    /// The instant the flow was read: ISO 8601 without a zone (spec 2.1), UTC.
    #[schema(value_type = LocalTimestamp)]
    pub timestamp: NaiveDateTime,
    /// The same instant with its zone.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// `LIVE` or `EOD`, market hours and a sentence.
    #[serde(flatten)]
    pub freshness: Freshness,
}

/// `GET /smart-money/{ticker}`: 424 when the flow cannot be served (the cases of the module
/// docs).
pub async fn smart_money_flow(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
) -> Result<Json<Envelope<SmartMoneyPayload>>, ApiError> {
    let (chain, view, freshness) = chain_and_flow(&state, &ticker).map_err(|e| match e {
        ApiError::FlowUnavailable(reason) => ApiError::upstream(reason),
        other => other,
    })?;
    let rows = compute_rows(&view);
    let as_of = view.rows.first().map_or(chain.as_of, |r| r.as_of);
    let timestamp = as_of.naive_utc();
    let config = SmartMoneyConfig::default();
    let trades: Vec<SmartMoneyTradePayload> = smart_money(&rows, &config)
        .iter()
        .map(|t| SmartMoneyTradePayload {
            row: row_payload(&t.row, &ticker, timestamp),
            criteria: t.criteria.iter().map(|c| c.code()).collect(),
            smart_money_score: t.score,
        })
        .collect();
    Ok(ok(SmartMoneyPayload {
        ticker: ticker.to_string(),
        stock_price: chain.stock_price(),
        total_smart_trades: trades.len(),
        total_smart_premium: trades.iter().filter_map(|t| t.row.premium).sum(),
        smart_money_trades: trades,
        filters: SmartMoneyFilters {
            min_premium: config.min_premium_usd,
            opening_volume_oi_ratio: config.opening_volume_oi_ratio,
            min_dte: config.min_dte,
        },
        timestamp,
        as_of,
        freshness,
    }))
}

/// One strike of `volume_profile[]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct VolumeProfilePoint {
    /// Strike, dollars.
    pub strike: f64,
    /// Call volume, contracts.
    pub call_volume: u64,
    /// Put volume, contracts.
    pub put_volume: u64,
    /// Call open interest, contracts.
    pub call_oi: u64,
    /// Put open interest, contracts.
    pub put_oi: u64,
    /// (strike − spot) / spot, percent.
    pub distance_from_spot_pct: f64,
}

/// The `/volume-profile/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VolumeProfilePayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The expiration profiled.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// The chain's price, dollars.
    pub stock_price: f64,
    /// Every listed strike, ascending.
    pub volume_profile: Vec<VolumeProfilePoint>,
    /// The strikes with the most call + put volume, descending.
    pub top_volume_strikes: Vec<f64>,
    /// The strikes with the most call + put open interest, descending.
    pub top_oi_strikes: Vec<f64>,
    /// Σ put volume / Σ call volume.
    pub put_call_ratio: Option<f64>,
    /// Σ call volume, contracts.
    pub total_call_volume: u64,
    /// Σ put volume, contracts.
    pub total_put_volume: u64,
    /// The instant the chain was priced.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// `LIVE` or `EOD`, market hours and a sentence.
    #[serde(flatten)]
    pub freshness: Freshness,
}

/// `GET /volume-profile/{ticker}`: one expiration (default the nearest that has not expired).
pub async fn volume_profile_of(
    State(state): State<AppState>,
    CoveredChain { ticker, chain }: CoveredChain,
    params: QueryParams,
) -> Result<Json<Envelope<VolumeProfilePayload>>, ApiError> {
    let requested = params.date("expiration")?;
    let expiration = listed_or_nearest(&ticker, &chain, requested)?;
    let (contracts, _) = contracts_from_chain(chain.rows_of(expiration))?;
    let profile = volume_profile(&contracts, expiration, TOP_PROFILE_STRIKES);
    let spot = chain.stock_price();
    Ok(ok(VolumeProfilePayload {
        ticker: ticker.to_string(),
        expiration,
        stock_price: spot,
        volume_profile: profile
            .rows
            .iter()
            .map(|r| VolumeProfilePoint {
                strike: r.strike,
                call_volume: r.call_volume,
                put_volume: r.put_volume,
                call_oi: r.call_oi,
                put_oi: r.put_oi,
                distance_from_spot_pct: 100.0 * (r.strike - spot) / spot,
            })
            .collect(),
        top_volume_strikes: profile.top_volume_strikes,
        top_oi_strikes: profile.top_oi_strikes,
        put_call_ratio: profile.put_call_ratio,
        total_call_volume: profile.total_call_volume,
        total_put_volume: profile.total_put_volume,
        as_of: chain.as_of,
        freshness: state.freshness_of(chain.trade_date),
    }))
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
