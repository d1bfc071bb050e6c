//! Extractors for the preambles data handlers share: a covered ticker, and its latest chain.
//!
//! A handler that names [`CoveredTicker`] or [`CoveredChain`] in its arguments runs only for a
//! well-formed, covered symbol (400 malformed, 404 not covered, 424 no market data or no chain
//! yet), so its body starts at the work proper.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;

use crate::error::ApiError;
use crate::market::ChainView;
use crate::state::AppState;
use crate::ticker::Ticker;

/// The `{ticker}` path segment, validated and in the coverage universe
/// ([`AppState::covered_ticker`]).
#[derive(Debug, Clone)]
pub struct CoveredTicker(pub Ticker);

impl FromRequestParts<AppState> for CoveredTicker {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let ticker = Ticker::from_request_parts(parts, state).await?;
        Ok(Self(state.covered_ticker(ticker.as_str())?))
    }
}

/// A [`CoveredTicker`] and its latest chain (424 while none is built).
#[derive(Debug, Clone)]
pub struct CoveredChain {
    /// The covered ticker.
    pub ticker: Ticker,
    /// Its latest chain.
    pub chain: Arc<ChainView>,
}

impl FromRequestParts<AppState> for CoveredChain {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let CoveredTicker(ticker) = CoveredTicker::from_request_parts(parts, state).await?;
        let chain = latest_chain(state, &ticker)?;
        Ok(Self { ticker, chain })
    }
}

/// The latest chain of `ticker`, or the 424 every data family answers while none is built.
pub fn latest_chain(state: &AppState, ticker: &Ticker) -> Result<Arc<ChainView>, ApiError> {
    state
        .market_data()?
        .chain(ticker)
        .ok_or_else(|| no_chain(ticker))
}

/// The 424 for a covered ticker whose chain is not built yet.
pub fn no_chain(ticker: &Ticker) -> ApiError {
    ApiError::upstream(format!(
        "No option chain for {ticker} yet; retry in a few seconds"
    ))
}
