//! `GET /expirations/{ticker}`: the listed expirations, nearest first.

use axum::extract::State;
use chrono::{DateTime, NaiveDate, Utc};
use optics_schemas::SettlementStyle;
use serde::Serialize;
use utoipa::ToSchema;

use super::{Answer, SessionState};
use crate::envelope::ok;
use crate::extract::CoveredChain;
use crate::freshness::{DataFreshness, Freshness};
use crate::openapi::{IsoDate, SettlementCode, Timestamp};
use crate::state::AppState;
use crate::ticker::Ticker;

/// `GET /expirations/{ticker}`.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ExpirationsPayload {
    /// The underlying.
    pub ticker: Ticker,
    /// Listed expirations with time left at `as_of`, nearest first.
    #[schema(value_type = Vec<IsoDate>)]
    pub expirations: Vec<NaiveDate>,
    /// How many.
    pub count: usize,
    /// Each expiration with its calendar days from the chain's trade date.
    pub details: Vec<ExpirationDetail>,
    /// The session the listing comes from.
    #[schema(value_type = IsoDate)]
    pub trade_date: NaiveDate,
    /// When the chain was priced (UTC).
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// `LIVE` when the listing belongs to the session in progress, `EOD` otherwise.
    pub data_type: DataFreshness,
    /// Market state and the data's freshness (top level, as on gex and flow).
    #[serde(flatten)]
    pub session: SessionState,
    /// The same with the data's session date (the block this payload carried first).
    pub freshness: Freshness,
}

/// One listed expiration.
#[derive(Debug, Clone, Serialize, ToSchema)]
pub struct ExpirationDetail {
    /// The date.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Calendar days from the chain's trade date.
    pub dte: i32,
    /// Settlements listed on that date (`AM`, `PM`).
    #[schema(value_type = Vec<SettlementCode>)]
    pub settlements: Vec<SettlementStyle>,
}

/// Expirations of a covered ticker with time left at the chain's instant, nearest first.
pub async fn expirations(
    State(state): State<AppState>,
    CoveredChain { ticker, chain }: CoveredChain,
) -> Answer<ExpirationsPayload> {
    let details = chain
        .open_expirations()
        .iter()
        .map(|&expiration| {
            let rows = chain.rows_of(expiration);
            let mut settlements: Vec<SettlementStyle> = rows.iter().map(|r| r.settlement).collect();
            settlements.dedup();
            ExpirationDetail {
                expiration,
                dte: rows.first().map_or(0, |r| r.dte),
                settlements,
            }
        })
        .collect();
    let freshness = state.freshness_of(chain.trade_date);
    Ok(ok(ExpirationsPayload {
        ticker,
        count: chain.open_expirations().len(),
        expirations: chain.open_expirations().to_vec(),
        details,
        trade_date: chain.trade_date,
        as_of: chain.as_of,
        data_type: freshness.data_freshness,
        session: SessionState::from(&freshness),
        freshness,
    }))
}
