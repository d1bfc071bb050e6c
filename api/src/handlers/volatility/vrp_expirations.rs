//! `GET /vrp/{ticker}/expirations`: the premium of each expiration's IV over the realized vol of
//! a window as long as the time left to it.

use axum::Json;
use axum::extract::State;
use chrono::NaiveDate;
use optics_compute::vol::hv;
use optics_compute::vol::signals::{vrp_regime, vrp_signal, vrp_signal_rule};
use serde::Serialize;
use utoipa::ToSchema;

use super::{HV_BASIS, Served, VOL_UNITS, VolRead};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::openapi::IsoDate;
use crate::params::QueryParams;
use crate::state::AppState;

/// Shortest realized window matched to an expiration, sessions (a week).
pub const MIN_MATCHED_WINDOW: usize = 5;
/// Longest, sessions (a year).
pub const MAX_MATCHED_WINDOW: usize = 252;

/// One expiration of `vrp_by_expiration[]`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ExpirationVrp {
    /// The expiration.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Calendar days to it.
    pub dte: i32,
    /// Trading sessions from the chain's session to the expiration (the expiration included).
    pub sessions_to_expiry: usize,
    /// Its forward-ATM IV, percentage points.
    pub iv: f64,
    /// Realized vol over `hv_window` sessions, percentage points.
    pub hv: Option<f64>,
    /// `sessions_to_expiry` held within 5…252.
    pub hv_window: usize,
    /// iv − hv, percentage points.
    pub vrp: Option<f64>,
    /// vrp as a percentage of hv.
    pub vrp_pct: Option<f64>,
    /// `RICH`, `CHEAP` or `NEUTRAL` (`signal_rule`).
    pub signal: Option<&'static str>,
}

/// The `/vrp/{ticker}/expirations` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VrpExpirationsPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The open expirations with an ATM IV, nearest first (at most `max_expirations`).
    pub vrp_by_expiration: Vec<ExpirationVrp>,
    /// Mean `vrp` over the expirations that have one, percentage points.
    pub avg_vrp: Option<f64>,
    /// `RICH`, `CHEAP`, `MIXED` or `NEUTRAL`: the curve in one word.
    pub regime: Option<&'static str>,
    /// The curve in one sentence.
    pub regime_desc: Option<String>,
    /// The thresholds behind each `signal`.
    pub signal_rule: String,
    /// How realized vol is measured.
    pub hv_basis: &'static str,
    /// What each `iv` is.
    pub iv_basis: &'static str,
    /// Unit of iv, hv and vrp.
    pub units: &'static str,
    /// The chain's session, instant and freshness.
    #[serde(flatten)]
    pub served: Served,
}

/// `iv_basis` of the per-expiration IVs.
const EXPIRATION_IV_BASIS: &str =
    "the expiration's implied vol at its forward (ATM), from the live chain";

/// `GET /vrp/{ticker}/expirations?max_expirations=10`.
pub async fn vrp_expirations(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<VrpExpirationsPayload>>, ApiError> {
    let wanted = usize::try_from(params.int("max_expirations")?.value).unwrap_or(1);
    let read = VolRead::of(&state, ticker).await?;
    let closes = read.closes();
    let open = read.chain.open_expirations();
    let rows: Vec<ExpirationVrp> = read
        .expirations
        .iter()
        .filter(|e| open.contains(&e.expiration))
        .filter_map(|e| Some((e, e.atm_iv_pct?)))
        .take(wanted)
        .map(|(e, iv)| {
            let sessions = super::sessions_between(read.chain.trade_date, e.expiration);
            let window = sessions.clamp(MIN_MATCHED_WINDOW, MAX_MATCHED_WINDOW);
            let realized = hv(&closes, window);
            let premium = realized.map(|rv| iv - rv);
            let pct = premium
                .zip(realized)
                .filter(|(_, rv)| *rv > 0.0)
                .map(|(p, rv)| p / rv * 100.0);
            ExpirationVrp {
                expiration: e.expiration,
                dte: e.dte,
                sessions_to_expiry: sessions,
                iv,
                hv: realized,
                hv_window: window,
                vrp: premium,
                vrp_pct: pct,
                signal: pct.map(vrp_signal),
            }
        })
        .collect();
    let premiums: Vec<f64> = rows.iter().filter_map(|r| r.vrp).collect();
    let signals: Vec<&str> = rows.iter().filter_map(|r| r.signal).collect();
    let regime = vrp_regime(&premiums, &signals);
    Ok(ok(VrpExpirationsPayload {
        ticker: read.ticker.to_string(),
        avg_vrp: (!premiums.is_empty())
            .then(|| premiums.iter().sum::<f64>() / premiums.len() as f64),
        regime: regime.as_ref().map(|(r, _)| *r),
        regime_desc: regime.map(|(_, d)| d),
        vrp_by_expiration: rows,
        signal_rule: vrp_signal_rule(),
        hv_basis: HV_BASIS,
        iv_basis: EXPIRATION_IV_BASIS,
        units: VOL_UNITS,
        served: read.served(&state, None, &params),
    }))
}
