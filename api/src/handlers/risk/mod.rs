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

use optics_compute::risk::{self, MAX_POSITIONS, Position, PositionInput, UnderlyingPrice};
use optics_compute::time::years_to_expiry;
use serde::Deserialize;
use utoipa::ToSchema;

use crate::body::{self, List, Prices, required};
use crate::error::ApiError;
use crate::openapi::IsoDate;
use crate::state::AppState;
use crate::ticker::Ticker;

/// The request-body types of the family, by registry slug ([`crate::openapi::body_schemas`]).
pub fn body_schemas() -> Vec<crate::openapi::DataSchema> {
    use crate::openapi::DataSchema;
    use crate::registry::Endpoint;
    vec![
        DataSchema::of::<portfolio::PortfolioRequest>(Endpoint::PortfolioGreeks),
        DataSchema::of::<scenario::ScenarioRequest>(Endpoint::ScenarioAnalysis),
        DataSchema::of::<stress::StressRequest>(Endpoint::StressTests),
        DataSchema::of::<hedge::HedgeRequest>(Endpoint::HedgeRecommendations),
    ]
}

/// Where `/hedge-recommendations` hedges when `hedge_ticker` is absent.
pub const DEFAULT_HEDGE_TICKER: &str = "SPY";

/// The `positions` of a risk body: at most [`MAX_POSITIONS`], an array or a string holding one.
pub type PositionsBody = Option<List<PositionBody, MAX_POSITIONS>>;

/// The `underlying_prices` of a risk body: ticker → price, dollars, at most
/// [`MAX_POSITIONS`] entries (one per ticker of the largest book).
pub type PricesBody = Option<Prices<MAX_POSITIONS>>;

/// A risk endpoint's request type: `positions` and `underlying_prices`, then its own fields.
macro_rules! book_request {
    ($(#[$meta:meta])* $name:ident { $($(#[$field_meta:meta])* $field:ident: $ty:ty,)* }) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Default, serde::Deserialize, utoipa::ToSchema)]
        #[serde(expecting = "a JSON object")]
        pub struct $name {
            /// The positions (required, 1 to 1,000; an array or a string holding one).
            #[serde(default)]
            #[schema(value_type = Vec<PositionBody>, required = true, min_items = 1, max_items = 1000)]
            pub positions: PositionsBody,
            /// Price per ticker, dollars (`{"SPY": 601.5}`), before STOCK positions and live
            /// chains.
            #[serde(default)]
            #[schema(value_type = Option<BTreeMap<String, f64>>)]
            pub underlying_prices: PricesBody,
            $($(#[$field_meta])* pub $field: $ty,)*
        }
    };
}
pub(crate) use book_request;

/// One position (`positions[]`); which fields each `position_type` requires is in
/// [`optics_compute::risk`]. Enumerations are matched in any case.
#[derive(Debug, Clone, Default, Deserialize, ToSchema)]
#[serde(expecting = "an object")]
pub struct PositionBody {
    /// The underlying.
    #[serde(default, deserialize_with = "body::text")]
    pub ticker: Option<String>,
    /// STOCK, CALL or PUT.
    #[serde(default, deserialize_with = "body::text")]
    pub position_type: Option<String>,
    /// Shares or contracts, negative for a short.
    #[serde(default, deserialize_with = "body::number")]
    pub quantity: Option<f64>,
    /// Strike, dollars (options).
    #[serde(default, deserialize_with = "body::number")]
    pub strike: Option<f64>,
    /// Expiration, YYYY-MM-DD (options).
    #[serde(default, deserialize_with = "body::date")]
    #[schema(value_type = Option<IsoDate>)]
    pub expiration: Option<chrono::NaiveDate>,
    /// Entry price, dollars per share.
    #[serde(default, deserialize_with = "body::number")]
    pub entry_price: Option<f64>,
    /// Current price, dollars per share.
    #[serde(default, deserialize_with = "body::number")]
    pub current_price: Option<f64>,
    /// Per-share delta (options).
    #[serde(default, deserialize_with = "body::number")]
    pub delta: Option<f64>,
    /// Per-share gamma, per $1 (options).
    #[serde(default, deserialize_with = "body::number")]
    pub gamma: Option<f64>,
    /// Per-share theta, dollars per calendar day (options).
    #[serde(default, deserialize_with = "body::number")]
    pub theta: Option<f64>,
    /// Per-share vega, dollars per vol point (options).
    #[serde(default, deserialize_with = "body::number")]
    pub vega: Option<f64>,
    /// IV, decimal (options).
    #[serde(default, deserialize_with = "body::number")]
    pub iv: Option<f64>,
}

impl PositionBody {
    /// The position of `positions[index]` for the math, expiring at its expiration from `now`.
    fn input(
        self,
        index: usize,
        now: chrono::DateTime<chrono::Utc>,
    ) -> Result<PositionInput, ApiError> {
        // A symbol's syntax is checked here (coverage only where a live price is needed).
        let ticker = self
            .ticker
            .filter(|raw| !raw.trim().is_empty())
            .map(|raw| {
                Ticker::parse(&raw)
                    .map(|t| t.as_str().to_owned())
                    .map_err(|e| {
                        ApiError::bad_request(format!("positions[{index}].ticker: {}", e.body()))
                    })
            })
            .transpose()?;
        Ok(PositionInput {
            ticker,
            position_type: self.position_type,
            quantity: self.quantity,
            strike: self.strike,
            years_to_expiry: self.expiration.map(|e| years_to_expiry(now, e)),
            expiration: self.expiration,
            entry_price: self.entry_price,
            current_price: self.current_price,
            delta: self.delta,
            gamma: self.gamma,
            theta: self.theta,
            vega: self.vega,
            iv: self.iv,
        })
    }
}

/// The validated positions of the body (required, at least one).
pub(crate) fn positions(
    state: &AppState,
    positions: PositionsBody,
) -> Result<Vec<Position>, ApiError> {
    let now = state.now();
    let inputs = required(positions, "positions")?
        .non_empty("positions")?
        .into_iter()
        .enumerate()
        .map(|(index, position)| position.input(index, now))
        .collect::<Result<Vec<_>, _>>()?;
    Ok(risk::validate_positions(&inputs)?)
}

/// The positions and the price of each of their tickers.
pub(crate) fn book(
    state: &AppState,
    positions_body: PositionsBody,
    supplied: PricesBody,
) -> Result<(Vec<Position>, Vec<UnderlyingPrice>), ApiError> {
    let positions = positions(state, positions_body)?;
    let prices = underlying_prices(state, supplied, &positions)?;
    Ok((positions, prices))
}

/// A price per ticker of the book (module docs: supplied, STOCK position, live chain).
pub(crate) fn underlying_prices(
    state: &AppState,
    supplied: PricesBody,
    positions: &[Position],
) -> Result<Vec<UnderlyingPrice>, ApiError> {
    let mut prices: BTreeMap<String, f64> = BTreeMap::new();
    for (ticker, price) in supplied.unwrap_or_default().0 {
        prices.insert(ticker.trim().to_ascii_uppercase(), price);
    }
    let prices =
        risk::complete_underlying_prices(prices, positions, |ticker| live_price(state, ticker))?;
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
