//! The risk family (POST, JSON bodies): `/portfolio-greeks`, `/scenario-analysis`,
//! `/stress-tests`, `/hedge-recommendations`.
//!
//! Positions carry their own per-share Greeks (spec 2.2); the math and its units are in
//! [`optics_compute::risk`] (deltas in share-equivalents, theta in dollars per calendar day,
//! vega in dollars per vol point, percentages of the gross market value). Which fields each
//! `position_type` requires is in that module's docs; a missing or malformed one is a 400
//! naming `positions[i].field`.
//!
//! # Underlying prices
//! Dollar delta needs each ticker's price. It is taken, in order, from the optional body
//! object `underlying_prices` (`{"SPY": 601.5}`), from a STOCK position's `current_price`, and
//! from the ticker's live chain; a ticker with none of them is a 424.
//!
//! # Layout
//! One file per endpoint, each with its request and payload types: [`portfolio`]
//! (`/portfolio-greeks`), [`scenario`] (`/scenario-analysis`), [`stress`] (`/stress-tests`),
//! [`hedge`] (`/hedge-recommendations`); the positions and prices they share are read here.

pub mod hedge;
pub mod portfolio;
pub mod scenario;
pub mod stress;

pub use hedge::{
    BookGreeks, Hedge, HedgeDetails, HedgeLiquidity, HedgePayload, ProjectedGreeks,
    hedge_recommendations,
};
pub use portfolio::{
    PortfolioPayload, PortfolioSummary, RiskLevelScale, TickerSummary, portfolio_greeks,
};
pub use scenario::{Contributions, ScenarioPayload, ScenarioResult, scenario_analysis};
pub use stress::stress_tests;

use std::collections::BTreeMap;

use optics_compute::risk::{
    self, MAX_POSITIONS, Position, PositionInput, PositionType, RiskError, UnderlyingPrice,
};
use optics_compute::time::years_to_expiry;
use serde_json::{Map, Value};

use crate::error::ApiError;
use crate::handlers::strategy::fields::{object_array, opt_date, opt_number, opt_text};
use crate::state::AppState;
use crate::ticker::Ticker;

/// Where `/hedge-recommendations` hedges when `hedge_ticker` is absent.
pub const DEFAULT_HEDGE_TICKER: &str = "SPY";

pub(crate) fn risk_error(error: RiskError) -> ApiError {
    match error {
        RiskError::NoHedgeContract(_) | RiskError::MissingUnderlyingPrice { .. } => {
            ApiError::upstream(error.to_string())
        }
        other => ApiError::bad_request(other.to_string()),
    }
}

pub(crate) fn position_input(
    object: &Map<String, Value>,
    index: usize,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<PositionInput, ApiError> {
    let path = format!("positions[{index}].");
    let expiration = opt_date(object, "expiration", &path)?;
    // A symbol's syntax is checked here (coverage only where a live price is needed).
    let ticker = opt_text(object, "ticker", &path)?
        .filter(|raw| !raw.trim().is_empty())
        .map(|raw| {
            Ticker::parse(raw)
                .map(|t| t.as_str().to_owned())
                .map_err(|e| ApiError::bad_request(format!("{path}ticker: {}", e.body())))
        })
        .transpose()?;
    Ok(PositionInput {
        ticker,
        position_type: opt_text(object, "position_type", &path)?.map(str::to_owned),
        quantity: opt_number(object, "quantity", &path)?,
        strike: opt_number(object, "strike", &path)?,
        years_to_expiry: expiration.map(|e| years_to_expiry(now, e)),
        expiration,
        entry_price: opt_number(object, "entry_price", &path)?,
        current_price: opt_number(object, "current_price", &path)?,
        delta: opt_number(object, "delta", &path)?,
        gamma: opt_number(object, "gamma", &path)?,
        theta: opt_number(object, "theta", &path)?,
        vega: opt_number(object, "vega", &path)?,
        iv: opt_number(object, "iv", &path)?,
    })
}

/// The validated positions of the body.
pub(crate) fn positions(
    state: &AppState,
    object: &Map<String, Value>,
) -> Result<Vec<Position>, ApiError> {
    let now = state.now();
    let inputs = object_array(object, "positions", MAX_POSITIONS)?
        .into_iter()
        .enumerate()
        .map(|(index, position)| position_input(position, index, now))
        .collect::<Result<Vec<_>, _>>()?;
    risk::validate_positions(&inputs).map_err(risk_error)
}

/// A price per ticker of the book (module docs: supplied, STOCK position, live chain).
pub(crate) fn underlying_prices(
    state: &AppState,
    object: &Map<String, Value>,
    positions: &[Position],
) -> Result<Vec<UnderlyingPrice>, ApiError> {
    let mut prices: BTreeMap<String, f64> = BTreeMap::new();
    match object.get("underlying_prices") {
        None | Some(Value::Null) => {}
        Some(Value::Object(supplied)) => {
            for (ticker, value) in supplied {
                let price = value.as_f64().ok_or_else(|| {
                    ApiError::bad_request(format!(
                        "underlying_prices.{ticker}: must be a number of dollars"
                    ))
                })?;
                prices.insert(ticker.trim().to_ascii_uppercase(), price);
            }
        }
        Some(_) => {
            return Err(ApiError::bad_request(
                "underlying_prices: must be an object of ticker → price",
            ));
        }
    }
    for position in positions {
        if position.position_type == PositionType::Stock {
            prices
                .entry(position.ticker.clone())
                .or_insert(position.current_price);
        }
    }
    for position in positions {
        if !prices.contains_key(&position.ticker) {
            let price = live_price(state, &position.ticker)?;
            prices.insert(position.ticker.clone(), price);
        }
    }
    Ok(prices
        .into_iter()
        .map(|(ticker, price)| UnderlyingPrice { ticker, price })
        .collect())
}

/// The live chain's price of `raw`: 400/404 for a bad or uncovered symbol, 424 when there is
/// no chain or no usable price.
pub(crate) fn live_price(state: &AppState, raw: &str) -> Result<f64, ApiError> {
    let ticker = state.covered_ticker(raw)?;
    let price = state
        .market_data()?
        .chain(&ticker)
        .map(|chain| chain.stock_price())
        .filter(|p| p.is_finite() && *p > 0.0);
    price.ok_or_else(|| {
        ApiError::upstream(format!(
            "No live price for {ticker}: send a STOCK position in it or underlying_prices"
        ))
    })
}
