//! `GET /flow/{ticker}`: the session's options flow, its summary and rankings.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use chrono::{DateTime, NaiveDate, NaiveDateTime, Utc};
use optics_compute::flow::{
    ExpirationFlow, FlowConfig, FlowRow, StrikeFlow, expiration_flows, largest_flows, strike_flows,
    summarize_flow, top_flow_groups, unusual_activity,
};
use serde::Serialize;
use utoipa::ToSchema;

use super::{FlowRowPayload, chain_and_flow, compute_rows, row_payload};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::freshness::Freshness;
use crate::market::{FlowAggregatesView, FlowView};
use crate::openapi::{IsoDate, LocalTimestamp, Timestamp};
use crate::params::{ClampNotice, QueryParams};
use crate::state::AppState;
use crate::window::{self, Detail, Window, WindowRequest};

/// flow under compact: traded strikes kept each side of spot when `strikes_around` is not
/// given (spec §8: 20 per side).
pub const FLOW_STRIKES_PER_SIDE: usize = 20;

/// Rows of `largest_flows` under full detail: the biggest tickets by premium. A ranking, not
/// the whole list (`all_flow` is that); compact keeps [`window::FLOW_TOP_ROWS`].
pub const LARGEST_FLOWS_FULL_ROWS: usize = 50;

/// Entries of `top_strikes` and `top_expirations` (never trimmed further).
const TOP_CLUSTERS: usize = 10;

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
