//! `GET /vrp/{ticker}/timeseries`: the premium per stored session, for charting or a model.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use chrono::NaiveDate;
use optics_compute::vol::hv;
use serde::Serialize;
use utoipa::ToSchema;

use super::{HV_BASIS, IV30_BASIS, Served, VOL_UNITS, VolRead};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::openapi::IsoDate;
use crate::params::QueryParams;
use crate::state::AppState;
use crate::window::{VOL_SERIES_ROWS, Window, WindowRequest, window_last};

/// One session of `timeseries[]`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VrpPoint {
    /// The session.
    #[schema(value_type = IsoDate)]
    pub date: NaiveDate,
    /// Its stored iv30d, percentage points.
    pub iv: Option<f64>,
    /// Realized vol over `hv_period` sessions ending at its close, percentage points.
    pub hv: Option<f64>,
    /// iv − hv, percentage points.
    pub vrp: Option<f64>,
}

/// `current`: today's figures.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VrpNow {
    /// Today's iv30d (the live chain's), percentage points.
    pub iv: Option<f64>,
    /// Realized vol over `hv_period` sessions ending at the last stored close.
    pub hv: Option<f64>,
    /// iv − hv.
    pub vrp: Option<f64>,
    /// The realized window, sessions.
    pub hv_period: usize,
}

/// The `/vrp/{ticker}/timeseries` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VrpTimeseriesPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The last `lookback_days` stored sessions, oldest first.
    pub timeseries: Vec<VrpPoint>,
    /// Today's figures.
    pub current: VrpNow,
    /// Sessions asked for (after clamping).
    pub lookback_days: usize,
    /// The last date of the series.
    #[schema(value_type = Option<IsoDate>)]
    pub last_date: Option<NaiveDate>,
    /// How realized vol is measured.
    pub hv_basis: &'static str,
    /// What iv is.
    pub iv_basis: &'static str,
    /// Unit of every value.
    pub iv_units: &'static str,
    /// The trimmed list's window under compact detail (the most recent sessions kept); absent
    /// under full detail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    /// The chain's session, instant and freshness.
    #[serde(flatten)]
    pub served: Served,
}

/// `GET /vrp/{ticker}/timeseries?lookback_days=60&hv_period=30`.
pub async fn vrp_timeseries(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    headers: HeaderMap,
    params: QueryParams,
) -> Result<Json<Envelope<VrpTimeseriesPayload>>, ApiError> {
    let window_request = WindowRequest::from_request(&headers, &params)?;
    let lookback = usize::try_from(params.int("lookback_days")?.value).unwrap_or(60);
    let hv_period = usize::try_from(params.int("hv_period")?.value).unwrap_or(30);
    let read = VolRead::of(&state, ticker).await?;
    let closes = read.closes();
    let first = read.history().len().saturating_sub(lookback);
    let timeseries: Vec<VrpPoint> = (first..read.history().len())
        .map(|i| {
            let iv = read.history()[i].iv30d_pct;
            let rv = hv(&closes[..=i], hv_period);
            VrpPoint {
                date: read.history()[i].trade_date,
                iv,
                hv: rv,
                vrp: iv.zip(rv).map(|(iv, rv)| iv - rv),
            }
        })
        .collect();
    let iv_now = read.iv30d();
    let hv_now = hv(&closes, hv_period);
    let (kept, window) = window_last(
        timeseries.len(),
        window_request.row_limit(VOL_SERIES_ROWS),
        window_request.detail,
    );
    let reason = (timeseries.len() < lookback).then(|| {
        format!(
            "{} sessions are stored for {}; {lookback} were asked for",
            timeseries.len(),
            read.ticker
        )
    });
    Ok(ok(VrpTimeseriesPayload {
        ticker: read.ticker.to_string(),
        last_date: timeseries.last().map(|p| p.date),
        timeseries: timeseries[kept].to_vec(),
        window: window_request.row_limit(VOL_SERIES_ROWS).map(|_| window),
        current: VrpNow {
            iv: iv_now,
            hv: hv_now,
            vrp: iv_now.zip(hv_now).map(|(iv, rv)| iv - rv),
            hv_period,
        },
        lookback_days: lookback,
        hv_basis: HV_BASIS,
        iv_basis: IV30_BASIS,
        iv_units: VOL_UNITS,
        served: read.served(&state, reason, &params),
    }))
}
