//! `GET /correlation/{ticker}/compare/{ticker2}`: rolling 1m / 1y correlation and 1m beta of
//! the two symbols' daily log returns, joined on shared sessions.

use axum::Json;
use axum::extract::{FromRequestParts, RawPathParams, State};
use axum::http::HeaderMap;
use axum::http::request::Parts;
use chrono::NaiveDate;
use optics_compute::correlation::{WINDOW_1M, WINDOW_1Y, align, rolling};
use optics_compute::time::new_york_date;
use serde::Serialize;
use utoipa::ToSchema;

use super::correlation::returns_of;
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::freshness::Freshness;
use crate::openapi::IsoDate;
use crate::params::QueryParams;
use crate::state::AppState;
use crate::window::{VOL_SERIES_ROWS, Window, WindowRequest, window_last};

/// The `{ticker2}` path segment, validated and covered (400 malformed, 404 not covered with
/// the same wording as `{ticker}`).
#[derive(Debug, Clone)]
pub struct CoveredTicker2(pub crate::ticker::Ticker);

impl FromRequestParts<AppState> for CoveredTicker2 {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        let params = RawPathParams::from_request_parts(parts, state)
            .await
            .map_err(|rejection| ApiError::bad_request(rejection.body_text()))?;
        let raw = params
            .iter()
            .find_map(|(name, value)| (name == "ticker2").then(|| value.to_owned()))
            .ok_or_else(|| {
                ApiError::internal(
                    "extracting ticker2",
                    "route has no {ticker2} segment but its handler asks for one",
                )
            })?;
        Ok(Self(state.covered_ticker(&raw)?))
    }
}

/// One session of `timeseries[]`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CompareDay {
    /// The session (the later close of the return).
    #[schema(value_type = IsoDate)]
    pub date: NaiveDate,
    /// Pearson correlation of the last 21 shared daily log returns ending here, -1 to 1; null
    /// until 21 are held.
    pub correl1m: Option<f64>,
    /// The same over the last 252 shared returns; null until 252 are held.
    pub correl1y: Option<f64>,
    /// Beta of `ticker1` on `ticker2` over the last 21 shared returns (sample cov / sample var
    /// of ticker2); unitless.
    pub beta1m: Option<f64>,
}

/// The `/correlation/{ticker}/compare/{ticker2}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct CorrelationComparePayload {
    /// The first symbol (the regressed one of `beta1m`).
    pub ticker1: String,
    /// The second symbol (the regressor).
    pub ticker2: String,
    /// Sessions asked for (`days`).
    pub days: usize,
    /// Shared daily returns of the two symbols held.
    pub shared_returns: usize,
    /// Rolling figures ending on each of the last `days` shared sessions, oldest first.
    pub timeseries: Vec<CompareDay>,
    /// The series' window under compact detail (the most recent sessions kept); absent under
    /// full detail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    /// Element shape, return definition and windows.
    pub basis: String,
    /// Units of the figures.
    pub units: &'static str,
    /// Why the series is empty or its early figures null.
    pub reason: Option<String>,
    /// The freshness of the last shared session.
    #[serde(flatten)]
    pub freshness: Freshness,
}

/// `GET /correlation/{ticker}/compare/{ticker2}?days=400`.
pub async fn correlation_compare(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    CoveredTicker2(ticker2): CoveredTicker2,
    headers: HeaderMap,
    params: QueryParams,
) -> Result<Json<Envelope<CorrelationComparePayload>>, ApiError> {
    let window_request = WindowRequest::from_request(&headers, &params)?;
    let limit = window_request.row_limit(VOL_SERIES_ROWS);
    let days = usize::try_from(params.int("days")?.value).unwrap_or(400);
    let today = new_york_date(state.now());
    let reader = state.market_data()?;
    let coverage = reader.coverage();
    let a = returns_of(&coverage, ticker.as_str(), today);
    let b = returns_of(&coverage, ticker2.as_str(), today);
    if b.is_empty() {
        return Err(ApiError::not_found(format!(
            "No stored daily bars for {ticker2}: the comparison needs its daily closes (see {}/search)",
            crate::registry::DATA_PREFIX
        )));
    }
    let pairs = align(&a, &b);
    let series = rolling(&pairs, days);
    let (kept, window) = window_last(series.len(), limit, window_request.detail);
    let timeseries: Vec<CompareDay> = series[kept]
        .iter()
        .map(|p| CompareDay {
            date: p.date,
            correl1m: p.correl_1m,
            correl1y: p.correl_1y,
            beta1m: p.beta_1m,
        })
        .collect();
    let mut reasons = Vec::new();
    if a.is_empty() {
        reasons.push(format!("no daily bars are stored for {ticker}"));
    }
    if pairs.len() < WINDOW_1Y {
        reasons.push(format!(
            "{} shared daily returns: correl1m and beta1m need {WINDOW_1M}, correl1y needs \
             {WINDOW_1Y} ending on the session",
            pairs.len()
        ));
    }
    let last = pairs.last().map(|p| p.0);
    Ok(ok(CorrelationComparePayload {
        ticker1: ticker.to_string(),
        ticker2: ticker2.to_string(),
        days,
        shared_returns: pairs.len(),
        timeseries,
        window: limit.map(|_| window),
        basis: format!(
            "timeseries[] = {{date, correl1m, correl1y, beta1m}} per shared session, oldest \
             first, the last `days` sessions; daily log returns ln(close_t / close_t-1) of the \
             stored daily bars up to today (New York) joined on the sessions both symbols \
             share; correl1m / beta1m over the last {WINDOW_1M} shared returns ending on the \
             date, correl1y over the last {WINDOW_1Y}; Pearson correlation; beta1m = sample \
             cov({ticker}, {ticker2}) / sample var({ticker2})"
        ),
        units: "correlations -1 to 1; beta unitless",
        reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
        freshness: state.freshness_of(last.unwrap_or_default()),
    }))
}
