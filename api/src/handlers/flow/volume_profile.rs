//! `GET /volume-profile/{ticker}`: volume and open interest by strike of one expiration.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::exposure::contracts_from_chain;
use optics_compute::flow::volume_profile;
use serde::Serialize;
use utoipa::ToSchema;

use super::listed_or_nearest;
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredChain;
use crate::freshness::Freshness;
use crate::openapi::{IsoDate, Timestamp};
use crate::params::QueryParams;
use crate::state::AppState;

/// Strikes listed in `top_volume_strikes` and `top_oi_strikes`.
const TOP_PROFILE_STRIKES: usize = 10;

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
