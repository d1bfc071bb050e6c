//! `GET /charm/{ticker}`: dealer charm exposure by strike and in total.

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::exposure::ExposureKind;
use optics_schemas::ExposureRow;
use serde::Serialize;
use utoipa::ToSchema;

use super::{chain_and_exposures, contract_exposures, expiration_summary, type_code};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::handlers::flow::listed_or_nearest;
use crate::openapi::{IsoDate, Timestamp};
use crate::params::QueryParams;
use crate::state::AppState;

/// One strike of `charm_by_strike[]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct CharmAtStrike {
    /// Strike, dollars.
    pub strike: f64,
    /// Net dealer charm exposure, delta shares per day.
    pub charm_exposure: f64,
    /// Call + put open interest, contracts.
    pub oi: u64,
}

/// One contract of the charm `detailed[]`.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, ToSchema)]
pub struct CharmContract {
    /// Strike, dollars.
    pub strike: f64,
    /// `C` or `P`.
    #[serde(rename = "type")]
    pub option_type: &'static str,
    /// Per-share charm, delta per calendar day.
    pub charm: f64,
    /// Dealer-signed charm exposure of the open interest, delta shares per day.
    pub charm_exposure: f64,
    /// Implied volatility, percentage points.
    pub iv: Option<f64>,
    /// Open interest, contracts.
    pub oi: u64,
}

/// The `/charm/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CharmPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The expiration.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Calendar days to it.
    pub dte: i32,
    /// The spot the exposures were scaled with, dollars.
    pub stock_price: f64,
    /// Call charm exposure, delta shares per day.
    pub call_charm: f64,
    /// Put charm exposure (dealer-signed), delta shares per day.
    pub put_charm: f64,
    /// call + put: the shares of delta dealers gain (+) or lose per day passing.
    pub total_charm: f64,
    /// Per strike, ascending.
    pub charm_by_strike: Vec<CharmAtStrike>,
    /// Per contract with an IV and open interest.
    pub detailed: Vec<CharmContract>,
    /// `LIVE` while the exposures' session is open, `EOD` otherwise (an earlier session's too).
    pub data_status: crate::freshness::DataFreshness,
    /// Unit of the charm figures.
    pub units: &'static str,
    /// Units of `iv`.
    pub iv_units: &'static str,
    /// The instant the exposures were priced.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
}

/// `GET /charm/{ticker}`: one expiration (default the nearest that has not expired).
pub async fn charm(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<CharmPayload>>, ApiError> {
    let requested = params.date("expiration")?;
    let reader = state.market_data()?;
    let (chain, exposures) = chain_and_exposures(reader.as_ref(), &ticker)?;
    let expiration = listed_or_nearest(&ticker, &chain, requested)?;
    let summary = expiration_summary(&ticker, &exposures, expiration)?;
    let rows: Vec<&ExposureRow> = exposures
        .rows
        .iter()
        .filter(|r| r.expiration == expiration)
        .collect();
    let mut by_strike: Vec<CharmAtStrike> = Vec::with_capacity(rows.len());
    for row in &rows {
        let oi = row.call_open_interest.saturating_add(row.put_open_interest);
        match by_strike.last_mut() {
            Some(last) if last.strike == row.strike => {
                last.charm_exposure += row.net.charm;
                last.oi = last.oi.saturating_add(oi);
            }
            _ => by_strike.push(CharmAtStrike {
                strike: row.strike,
                charm_exposure: row.net.charm,
                oi,
            }),
        }
    }
    let mut detailed: Vec<CharmContract> = contract_exposures(&chain, expiration)
        .iter()
        .map(|e| CharmContract {
            strike: e.strike,
            option_type: type_code(e.option_type),
            charm: e.greeks.charm,
            charm_exposure: e.exposure.get(ExposureKind::Charm),
            iv: e.iv.map(|iv| 100.0 * iv),
            oi: e.open_interest,
        })
        .collect();
    detailed.sort_by(|a, b| {
        a.strike
            .total_cmp(&b.strike)
            .then(a.option_type.cmp(b.option_type))
    });
    Ok(ok(CharmPayload {
        ticker: ticker.to_string(),
        expiration,
        dte: summary.dte.unwrap_or(0),
        stock_price: summary.spot,
        call_charm: summary.call.charm,
        put_charm: summary.put.charm,
        total_charm: summary.net.charm,
        charm_by_strike: by_strike,
        detailed,
        data_status: state.freshness_of(summary.trade_date).data_freshness,
        units: "delta shares per day",
        iv_units: "percent",
        as_of: summary.as_of,
    }))
}
