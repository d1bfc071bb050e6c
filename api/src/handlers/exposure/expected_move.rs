//! `GET /expected-move/{ticker}`: the ATM straddle of one expiration.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::exposure::contracts_from_chain;
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::{CoveredTicker, no_chain};
use crate::freshness::Freshness;
use crate::market::ChainView;
use crate::openapi::{IsoDate, Timestamp};
use crate::params::QueryParams;
use crate::state::AppState;
use crate::ticker::Ticker;

/// The `/expected-move/{ticker}` payload (also each `results` entry of `/batch/expected-move`).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ExpectedMovePayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The expiration priced.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Calendar days to it.
    pub dte: i64,
    /// Spot, dollars.
    pub stock_price: f64,
    /// The at-the-money straddle mid, dollars: one expected absolute move.
    pub expected_move_dollars: f64,
    /// The move as a fraction of spot (0.0191 = 1.91 %), as the interface specifies (spec 2.7).
    pub expected_move_percent: f64,
    /// The same move in percentage points of spot (1.91 = 1.91 %), for convenience.
    pub expected_move_pct: f64,
    /// Spot + the move, dollars.
    pub upper_bound: f64,
    /// Spot − the move, dollars.
    pub lower_bound: f64,
    /// Straddle price (call mid + put mid) at the forward, dollars per share.
    pub straddle_price: f64,
    /// Call mid at the forward, dollars per share.
    pub call_price: f64,
    /// Put mid at the forward, dollars per share.
    pub put_price: f64,
    /// The expiration's forward the straddle is centred on, dollars.
    pub forward: f64,
    /// The listed strikes the straddle is read from (interpolated between them when they
    /// differ), dollars.
    pub atm_strikes: [f64; 2],
    /// The unit of each move figure.
    pub units: ExpectedMoveUnits,
    /// The instant the chain was priced.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// `LIVE` or `EOD`, market hours and a sentence.
    #[serde(flatten)]
    pub freshness: Freshness,
}

/// Unit strings of the expected-move figures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, ToSchema)]
pub struct ExpectedMoveUnits {
    /// Unit of `expected_move_dollars`, the bounds and the prices.
    pub expected_move_dollars: &'static str,
    /// Unit of `expected_move_percent`.
    pub expected_move_percent: &'static str,
    /// Unit of `expected_move_pct`.
    pub expected_move_pct: &'static str,
}

const EXPECTED_MOVE_UNITS: ExpectedMoveUnits = ExpectedMoveUnits {
    expected_move_dollars: "dollars",
    expected_move_percent: "fraction of spot (0.0191 = 1.91%)",
    expected_move_pct: "percent of spot (1.91 = 1.91%)",
};

/// `GET /expected-move/{ticker}`: the ATM straddle of the requested expiration, or of the
/// nearest one after today (a same-day expiry is skipped unless asked for by date).
pub async fn expected_move(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<ExpectedMovePayload>>, ApiError> {
    let expiration = params.date("expiration")?;
    let chain = state
        .market_data()?
        .chain(&ticker)
        .ok_or_else(|| no_chain(&ticker))?;
    Ok(ok(expected_move_payload(
        &ticker,
        &chain,
        expiration,
        state.freshness_of(chain.trade_date),
    )?))
}

/// The expected move of `chain` (see [`expected_move`]).
pub(crate) fn expected_move_payload(
    ticker: &Ticker,
    chain: &ChainView,
    expiration: Option<NaiveDate>,
    freshness: Freshness,
) -> Result<ExpectedMovePayload, ApiError> {
    use optics_compute::expected_move::ExpectedMoveRequest;
    if let Some(expiration) = expiration
        && !chain.expirations.contains(&expiration)
    {
        let listed: Vec<String> = chain.expirations.iter().map(|e| e.to_string()).collect();
        return Err(ApiError::bad_request(format!(
            "expiration {expiration} is not a listed expiration of {ticker}; listed: {}",
            listed.join(", ")
        )));
    }
    let (contracts, context) = contracts_from_chain(&chain.rows)?;
    let request = ExpectedMoveRequest {
        expiration,
        include_same_day: false,
    };
    let moved = optics_compute::expected_move::expected_move(&contracts, &context, &request)?;
    Ok(ExpectedMovePayload {
        ticker: ticker.to_string(),
        expiration: moved.expiration,
        dte: moved.dte,
        stock_price: moved.spot,
        expected_move_dollars: moved.expected_move_dollars,
        expected_move_percent: moved.expected_move_fraction,
        expected_move_pct: 100.0 * moved.expected_move_fraction,
        upper_bound: moved.upper_bound,
        lower_bound: moved.lower_bound,
        straddle_price: moved.call_mid + moved.put_mid,
        call_price: moved.call_mid,
        put_price: moved.put_mid,
        forward: moved.forward,
        atm_strikes: [moved.lower_strike, moved.upper_strike],
        units: EXPECTED_MOVE_UNITS,
        as_of: chain.as_of,
        freshness,
    })
}
