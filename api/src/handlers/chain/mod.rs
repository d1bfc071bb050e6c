//! The options-chain family, one file per endpoint: `/expirations`, `/chain`, `/stock`, `/search`,
//! `/options-by-delta` and `/chain-at-time`.
//!
//! Every handler reads the latest snapshots through [`crate::MarketDataReader`] and only
//! reshapes them: quotes, IV and Greeks come from the chain rows compute published (per share,
//! IV as a decimal, so every payload that carries IV says `iv_units: "decimal"`).
//!
//! Every payload derives `ToSchema`: [`data_schemas`] hands the types to the OpenAPI document
//! and the served reference, so both list exactly the fields serialized here.
//!
//! Rules shared by the family:
//! - an unknown or uncovered ticker is a 400/404 ([`AppState::covered_ticker`]); a covered ticker
//!   without a chain yet, or a past session that is not carried, is a 424;
//! - an `expiration` that is not listed is a 400 naming the listed ones;
//! - freshness is the data's, not the clock's ([`AppState::freshness_of`] of the chain's trade
//!   date): `data_freshness` and `data_type` are `LIVE` only while the session
//!   is open **and** the chain belongs to that session; a chain from an earlier session (Monday
//!   morning before the first cycle) is `EOD` and its `message` names that session;
//! - the market state (`is_market_hours`, `data_freshness`, `message`) sits at the top of
//!   `data`, where gex and flow put it ([`SessionState`]); chain, expirations and stock also keep
//!   the nested `freshness` block they carried first;
//! - cash indices are priced on the forward (Black-76): their `stock_price` is the forward of
//!   the expiration shown, and `priced_on_forward` says so.

#[expect(
    clippy::module_inception,
    reason = "one file per endpoint, named like its path: /chain/{ticker} is chain/chain.rs"
)]
pub mod chain;
pub mod chain_at_time;
pub mod expirations;
pub mod options_by_delta;
pub mod rows;
pub mod search;
pub mod stock;

use axum::Json;
use chrono::NaiveDate;
use serde::Serialize;
use utoipa::ToSchema;

use self::chain::ChainPayload;
use self::chain_at_time::ChainAtTimePayload;
use self::expirations::ExpirationsPayload;
use self::options_by_delta::OptionByDeltaPayload;
use self::search::SearchPayload;
use self::stock::StockPayload;
use crate::envelope::Envelope;
use crate::error::ApiError;
use crate::freshness::{DataFreshness, Freshness};
use crate::market::ChainView;
use crate::openapi::DataSchema;
use crate::registry::{DATA_PREFIX, Endpoint};
use crate::ticker::Ticker;

/// The unit every IV of this family is in.
pub const IV_UNITS_DECIMAL: &str = "decimal";

type Answer<T> = Result<Json<Envelope<T>>, ApiError>;

/// The payload type of each endpoint of the family, for the OpenAPI document and the reference.
pub fn data_schemas() -> Vec<DataSchema> {
    vec![
        DataSchema::of::<ExpirationsPayload>(Endpoint::Expirations),
        DataSchema::of::<ChainPayload>(Endpoint::Chain),
        DataSchema::of::<StockPayload>(Endpoint::Stock),
        DataSchema::of::<SearchPayload>(Endpoint::Search),
        DataSchema::of::<OptionByDeltaPayload>(Endpoint::OptionsByDelta),
        DataSchema::of::<ChainAtTimePayload>(Endpoint::ChainAtTime),
    ]
}

/// The market state at the top of `data`, as gex and flow carry it: `is_market_hours` is the
/// clock's; `data_freshness` and `message` describe the payload's data (`LIVE` only while the
/// session it belongs to is open).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, ToSchema)]
pub struct SessionState {
    /// True during a regular NYSE session.
    pub is_market_hours: bool,
    /// `LIVE` while the session the data belongs to is open, `EOD` otherwise.
    pub data_freshness: DataFreshness,
    /// One sentence: open or closed, which session's data, and when that changes.
    pub message: String,
}

impl From<&Freshness> for SessionState {
    fn from(freshness: &Freshness) -> Self {
        Self {
            is_market_hours: freshness.is_market_hours,
            data_freshness: freshness.data_freshness,
            message: freshness.message.clone(),
        }
    }
}

/// The requested expiration if listed (400 naming the listed ones otherwise).
fn listed_expiration(
    ticker: &Ticker,
    chain: &ChainView,
    expiration: NaiveDate,
) -> Result<NaiveDate, ApiError> {
    if chain.expirations.binary_search(&expiration).is_ok() {
        return Ok(expiration);
    }
    let listed: Vec<String> = chain
        .expirations
        .iter()
        .take(8)
        .map(NaiveDate::to_string)
        .collect();
    let more = if chain.expirations.len() > listed.len() {
        ", …"
    } else {
        ""
    };
    Err(ApiError::bad_request(format!(
        "Expiration {expiration} is not listed for {ticker}; listed: {}{more} \
         (see {DATA_PREFIX}/expirations/{ticker})",
        listed.join(", ")
    )))
}

/// The nearest expiration with time left at the chain's instant.
fn nearest_expiration(ticker: &Ticker, chain: &ChainView) -> Result<NaiveDate, ApiError> {
    chain.open_expirations().first().copied().ok_or_else(|| {
        ApiError::upstream(format!("The chain of {ticker} lists no open expiration"))
    })
}
