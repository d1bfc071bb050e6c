//! `GET /vix`: the VIX computed by the Cboe white-paper method from the SPX chain, with the
//! session's open, high and low from the prints this server recorded, and the previous close
//! from the stored end-of-day SPX chain of the session before.
//!
//! - `price`: [`optics_compute::vol::chain_vix`] of the latest SPX chain, at its `as_of`.
//! - `open`/`high`/`low`: the reader's tape ([`crate::market::VixTape`], one print per SPX
//!   chain snapshot installed) with the current print included; `prints` and
//!   `first_print_at` say how much of the session it saw.
//! - `prev_close`: the same method on the previous session's stored closing chain (its
//!   Friday-cycle expirations read one by one); null with a reason when that session is not
//!   stored.
//! - `close`: the price, once the chain is the closing chain of a finished session; else null.

use std::sync::Arc;

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::vol::{
    ChainVix, VIX_UNDERLYING, VixTerm, chain_vix, vix_candidate_expirations,
};
use optics_schemas::ChainRow;
use serde::Serialize;
use utoipa::ToSchema;

use super::Served;
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::latest_chain;
use crate::freshness::DataFreshness;
use crate::market::{ChainView, VixPrint, VixSession};
use crate::openapi::{IsoDate, Timestamp};
use crate::state::{AppState, MarketDataReader};
use crate::ticker::Ticker;

/// `units` of the payload.
pub const VIX_UNITS: &str = "VIX points (100 x the square root of the annualised 30-day \
                             variance); change in points, change_pct in percent";
/// `basis` of the payload.
pub const VIX_BASIS: &str = "computed here from SPX option quotes by the Cboe VIX white-paper \
                             method: per term the out-of-the-money strip (two zero bids end \
                             each side), F from put-call parity at the strike with the smallest \
                             |call mid - put mid|, K0 the strike at or below F, Delta-K weights; \
                             near and next Friday-cycle terms (AM standard or PM weekly) with \
                             23 to 37 days to settlement, else the two bracketing 30 days; \
                             T = minutes to settlement (AM 09:30, PM the close, New York) / \
                             525,600; the two variances interpolated to 30 days. Not Cboe's \
                             published index";
/// `range_basis` of the payload.
pub const VIX_RANGE_BASIS: &str = "open, high and low are over the VIX prints this server \
                                   computed for the session, one per SPX chain snapshot it \
                                   received (prints, from first_print_at); a server started \
                                   mid-session reports its first print as the open";

/// One term of the index, with the white paper's intermediates.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VixTermPayload {
    /// The expiration.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// `AM` (standard monthly, settles at 09:30 New York) or `PM` (weekly, settles at the
    /// close).
    pub settlement: &'static str,
    /// The settlement instant.
    #[schema(value_type = Timestamp)]
    pub settles_at: DateTime<Utc>,
    /// Minutes from the chain's `as_of` to `settles_at` on the New York wall clock.
    pub minutes_to_settlement: f64,
    /// T = minutes_to_settlement / 525,600, years.
    pub years: f64,
    /// R, the continuously compounded rate of the expiration, decimal.
    pub rate: f64,
    /// The strike where |call mid − put mid| is smallest, index points.
    pub forward_strike: f64,
    /// F = forward_strike + e^{RT} (call mid − put mid) there, index points.
    pub forward: f64,
    /// K₀, the listed strike at or below F, index points.
    pub k0: f64,
    /// Out-of-the-money puts in the strip.
    pub puts_used: usize,
    /// Out-of-the-money calls in the strip.
    pub calls_used: usize,
    /// Strikes in the strip (puts, K₀, calls).
    pub strikes_used: usize,
    /// The lowest strike of the strip.
    pub lowest_strike: f64,
    /// The highest strike of the strip.
    pub highest_strike: f64,
    /// Σ ΔKᵢ/Kᵢ² · e^{RT} · Q(Kᵢ).
    pub strip_sum: f64,
    /// (1/T)(F/K₀ − 1)².
    pub forward_adjustment: f64,
    /// σ² = (2/T)·strip_sum − forward_adjustment, annualised decimal.
    pub variance: f64,
}

impl VixTermPayload {
    fn of(term: &VixTerm) -> Self {
        let v = &term.variance;
        Self {
            expiration: term.expiration,
            settlement: term.settlement.as_str(),
            settles_at: term.settles_at,
            minutes_to_settlement: term.minutes,
            years: v.years,
            rate: v.rate,
            forward_strike: v.forward_strike,
            forward: v.forward,
            k0: v.k0,
            puts_used: v.puts_used,
            calls_used: v.calls_used,
            strikes_used: v.strikes_used(),
            lowest_strike: v.strip.first().map_or(v.k0, |c| c.strike),
            highest_strike: v.strip.last().map_or(v.k0, |c| c.strike),
            strip_sum: v.strip_sum,
            forward_adjustment: v.forward_adjustment,
            variance: v.variance,
        }
    }
}

/// Where `prev_close` comes from.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VixPrevCloseSource {
    /// The previous session.
    #[schema(value_type = IsoDate)]
    pub session: NaiveDate,
    /// The instant its stored closing chain was priced.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// The near term's expiration.
    #[schema(value_type = IsoDate)]
    pub near_expiration: NaiveDate,
    /// The next term's expiration.
    #[schema(value_type = IsoDate)]
    pub next_expiration: NaiveDate,
}

/// The `/vix` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VixPayload {
    /// `VIX`.
    pub symbol: &'static str,
    /// The index whose options it is computed from: `SPX`.
    pub underlying: &'static str,
    /// The VIX now: from the latest SPX chain, at `as_of`, points.
    pub price: f64,
    /// The session's closing VIX (from the closing chain) once the session is over; null
    /// while it trades.
    pub close: Option<f64>,
    /// The VIX of the previous session's stored closing chain, points; null with a `reason`
    /// when that session is not stored.
    pub prev_close: Option<f64>,
    /// price − prev_close, points.
    pub change: Option<f64>,
    /// change / prev_close × 100, percent.
    pub change_pct: Option<f64>,
    /// The session's first print this server computed, points.
    pub open: f64,
    /// The highest print of the session so far, points.
    pub high: f64,
    /// The lowest print of the session so far, points.
    pub low: f64,
    /// Prints open/high/low are taken over (the current one included).
    pub prints: u64,
    /// When the first of them was priced.
    #[schema(value_type = Timestamp)]
    pub first_print_at: DateTime<Utc>,
    /// The near term (settling at or before 30 days).
    pub near_term: VixTermPayload,
    /// The next term (settling after 30 days).
    pub next_term: VixTermPayload,
    /// Weight of the near term in the 30-day variance, (N₂ − N₃₀)/(N₂ − N₁).
    pub near_weight: f64,
    /// Weight of the next term, (N₃₀ − N₁)/(N₂ − N₁).
    pub next_weight: f64,
    /// The 30-day variance, annualised decimal (price = 100·√variance_30d).
    pub variance_30d: f64,
    /// How the terms were chosen: `WINDOW_23_37` (both with 23 to 37 days to settlement) or
    /// `BRACKETING_30` (the window lacked one; the candidates bracketing 30 days).
    pub term_selection: &'static str,
    /// The closing chain `prev_close` is computed from; null with it.
    pub prev_close_source: Option<VixPrevCloseSource>,
    /// Units of the figures.
    pub units: &'static str,
    /// How the index is computed.
    pub basis: &'static str,
    /// What open, high and low are taken over.
    pub range_basis: &'static str,
    /// The chain's session, instant and freshness.
    #[serde(flatten)]
    pub served: Served,
}

/// `GET /vix`.
pub async fn vix(State(state): State<AppState>) -> Result<Json<Envelope<VixPayload>>, ApiError> {
    let ticker = state.covered_ticker(VIX_UNDERLYING)?;
    let chain = latest_chain(&state, &ticker)?;
    let now = chain_vix(&chain.rows, chain.as_of).map_err(|e| {
        ApiError::upstream(format!(
            "No VIX can be computed from the SPX chain priced at {}: {e}",
            chain.as_of
        ))
    })?;
    let reader = Arc::clone(state.market_data()?);
    let price = now.vix();
    let print = VixPrint {
        at: chain.as_of,
        vix: price,
    };
    let session = reader
        .vix_session()
        .filter(|s| s.trade_date == chain.trade_date)
        .map_or_else(
            || VixSession::new(chain.trade_date, print),
            |s| s.including(print),
        );
    let mut reasons = Vec::new();
    let previous = state.calendar().previous_trading_day(chain.trade_date);
    let prev = match previous_close(reader.as_ref(), &ticker, previous).await? {
        Ok(prev) => Some(prev),
        Err(reason) => {
            reasons.push(reason);
            None
        }
    };
    let close = match closing(&state, &chain) {
        Ok(()) => Some(price),
        Err(reason) => {
            reasons.push(reason);
            None
        }
    };
    let prev_close = prev.as_ref().map(|(v, _)| v.vix());
    let change = prev_close.map(|p| price - p);
    let reason = (!reasons.is_empty()).then(|| reasons.join("; "));
    Ok(ok(VixPayload {
        symbol: "VIX",
        underlying: VIX_UNDERLYING,
        price,
        close,
        prev_close,
        change,
        change_pct: prev_close.zip(change).map(|(p, c)| c / p * 100.0),
        open: session.first.vix,
        high: session.high.vix,
        low: session.low.vix,
        prints: session.prints,
        first_print_at: session.first.at,
        near_term: VixTermPayload::of(&now.near),
        next_term: VixTermPayload::of(&now.next),
        near_weight: now.index.near_weight,
        next_weight: now.index.next_weight,
        variance_30d: now.index.variance_30d,
        term_selection: now.selection.code(),
        prev_close_source: prev.map(|(v, session)| VixPrevCloseSource {
            session,
            as_of: v.as_of,
            near_expiration: v.near.expiration,
            next_expiration: v.next.expiration,
        }),
        units: VIX_UNITS,
        basis: VIX_BASIS,
        range_basis: VIX_RANGE_BASIS,
        served: Served::of(&state, &chain, reason, Vec::new()),
    }))
}

/// `Ok(())` when `chain` is the closing chain of a session that is over; else why `close` is
/// null.
fn closing(state: &AppState, chain: &ChainView) -> Result<(), String> {
    if state.freshness_of(chain.trade_date).data_freshness == DataFreshness::Live {
        return Err(format!(
            "close is null while the {} session trades",
            chain.trade_date
        ));
    }
    let close = state
        .calendar()
        .session(chain.trade_date)
        .map(|s| s.close.with_timezone(&Utc));
    match close {
        Some(close) if chain.as_of >= close => Ok(()),
        Some(close) => Err(format!(
            "close is null: the newest SPX chain of the {} session was priced at {}, before its \
             {close} close",
            chain.trade_date, chain.as_of
        )),
        None => Err(format!(
            "close is null: {} has no session",
            chain.trade_date
        )),
    }
}

/// The VIX of the stored closing chain of `session` and the session, or why there is none.
async fn previous_close(
    reader: &dyn MarketDataReader,
    ticker: &Ticker,
    session: NaiveDate,
) -> Result<Result<(ChainVix, NaiveDate), String>, ApiError> {
    let Some(listed) = reader.expirations_at(ticker, session).await? else {
        return Ok(Err(format!(
            "prev_close is null: the end-of-day SPX chain of the {session} session is not stored"
        )));
    };
    let mut rows: Vec<ChainRow> = Vec::new();
    for expiration in vix_candidate_expirations(session, &listed) {
        if let Some(stored) = reader.chain_at_time(ticker, session, expiration).await? {
            rows.extend(stored);
        }
    }
    let Some(as_of) = rows.iter().map(|r| r.as_of).max() else {
        return Ok(Err(format!(
            "prev_close is null: the stored {session} SPX chain lists no Friday-cycle expiration"
        )));
    };
    Ok(chain_vix(&rows, as_of)
        .map(|v| (v, session))
        .map_err(|e| format!("prev_close is null: no VIX from the {session} closing chain: {e}")))
}
