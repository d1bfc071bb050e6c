//! `GET /options-by-delta/{ticker}`: the contract nearest a target delta.

use axum::extract::State;
use chrono::NaiveDate;
use optics_schemas::{ChainRow, ChainSide, SettlementStyle};
use serde::Serialize;
use utoipa::ToSchema;

use super::{Answer, IV_UNITS_DECIMAL, SessionState, listed_expiration, nearest_expiration};
use crate::envelope::ok;
use crate::error::ApiError;
use crate::extract::CoveredChain;
use crate::freshness::DataFreshness;
use crate::market::quoted_price;
use crate::openapi::{IsoDate, SettlementCode};
use crate::params::{ClampNotice, QueryParams};
use crate::state::AppState;
use crate::ticker::Ticker;

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
