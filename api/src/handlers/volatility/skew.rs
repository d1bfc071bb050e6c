//! `GET /skew/{ticker}`: the slope and curvature of the 30-day smile now, against their own
//! history and against the sector ETF's.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use chrono::NaiveDate;
use optics_compute::vol::signals::{
    Ar1, ONE_MONTH_SESSIONS, curvature_interpretation, curvature_mispricing, curvature_rule,
};
use optics_compute::vol::{IV_RANK_LOOKBACK_SESSIONS, SmileShape, smile_shape_at, standing};
use serde::Serialize;
use utoipa::ToSchema;

use super::{Served, VolRead};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::openapi::IsoDate;
use crate::params::QueryParams;
use crate::state::AppState;
use crate::ticker::Ticker;
use crate::window::{VOL_SERIES_ROWS, Window, WindowRequest, window_last};

/// The tenor of every figure, calendar days.
pub const SKEW_TENOR_DAYS: f64 = 30.0;
/// Sessions ahead the slope forecast looks.
pub const SLOPE_FORECAST_SESSIONS: usize = ONE_MONTH_SESSIONS;

/// How slope and curvature are measured.
pub const SKEW_BASIS: &str = "raw SVI fits of the two expirations around 30 days (linear in time \
                              between them); slope = dσ/dk, curvature = d²σ/dk² of the fitted IV \
                              in points at k = ln(K/F) = 0; history from the stored session \
                              closes (skew_slope_30d, smile_curvature_30d)";

/// `current`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SkewNow {
    /// Today's 30-day slope, points per unit of ln(K/F) (negative: puts richer).
    pub slope: Option<f64>,
    /// Today's 30-day curvature, points per unit of ln(K/F)².
    pub curvature: Option<f64>,
    /// The slope expected `forecast_sessions` ahead by an AR(1) fitted to the stored year.
    pub slope_forecast: Option<f64>,
    /// Sessions ahead of the forecast.
    pub forecast_sessions: usize,
    /// The AR(1)'s long-run mean of the slope.
    pub slope_long_run_mean: Option<f64>,
    /// The AR(1)'s persistence per session.
    pub slope_persistence: Option<f64>,
}

/// `percentile`: today's slope against its stored history.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SkewPercentile {
    /// Share of the stored year's slopes below today's, 0–100.
    pub current: Option<f64>,
    /// Mean slope of the last month (21 stored sessions).
    pub avg_1m: Option<f64>,
    /// Mean slope of the stored year (252 sessions).
    pub avg_1y: Option<f64>,
    /// Sample standard deviation of the year's slopes.
    pub stdv_1y: Option<f64>,
    /// (today − avg_1y) / stdv_1y.
    pub z_1y: Option<f64>,
    /// Stored sessions with a slope in the year.
    pub observations: usize,
}

/// `curvature`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SkewCurvature {
    /// Today's curvature, points.
    pub value: Option<f64>,
    /// Share of the stored year's curvatures below today's, 0–100.
    pub percentile: Option<f64>,
    /// Mean of the year.
    pub avg_1y: Option<f64>,
    /// (today − avg_1y) / its standard deviation.
    pub z_1y: Option<f64>,
    /// `STEEP_WINGS`, `FLAT_WINGS` or `NORMAL`.
    pub interpretation: Option<&'static str>,
    /// `WINGS_RICH`, `WINGS_CHEAP` or `NONE`.
    pub mispricing: Option<&'static str>,
    /// The thresholds behind both labels.
    pub rule: String,
}

/// `sector_relative`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SkewSectorRelative {
    /// The sector ETF of the reference data.
    pub etf: Option<String>,
    /// Its 30-day slope now.
    pub etf_slope: Option<f64>,
    /// slope / etf_slope.
    pub etf_slope_ratio: Option<f64>,
    /// Why the comparison is null, when it is.
    pub reason: Option<String>,
}

/// One session of `history[]`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SkewDay {
    /// The session.
    #[schema(value_type = IsoDate)]
    pub date: NaiveDate,
    /// The stored 30-day slope.
    pub slope: Option<f64>,
    /// The stored 30-day curvature.
    pub curvature: Option<f64>,
}

/// The `/skew/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SkewPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// `analysis`, `history` or `curvature`.
    pub view: &'static str,
    /// analysis: today's figures.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub current: Option<SkewNow>,
    /// analysis: the slope against its history.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub percentile: Option<SkewPercentile>,
    /// analysis and curvature: the curvature block.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub curvature: Option<SkewCurvature>,
    /// analysis: against the sector ETF.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sector_relative: Option<SkewSectorRelative>,
    /// history: the last `days` stored sessions, oldest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub history: Option<Vec<SkewDay>>,
    /// Sessions asked for by view=history (after clamping).
    pub days: usize,
    /// The day series' window under compact detail (the most recent sessions kept); absent
    /// under full detail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,

    /// How the figures are measured.
    pub basis: &'static str,
    /// The chain's session, instant and freshness; reason and clamp notices.
    #[serde(flatten)]
    pub served: Served,
}

/// `GET /skew/{ticker}?view=analysis&days=252`.
pub async fn skew(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    headers: HeaderMap,
    params: QueryParams,
) -> Result<Json<Envelope<SkewPayload>>, ApiError> {
    let window_request = WindowRequest::from_request(&headers, &params)?;
    let view = params.choice("view")?.unwrap_or("analysis");
    let days = usize::try_from(params.int("days")?.value).unwrap_or(IV_RANK_LOOKBACK_SESSIONS);
    let read = VolRead::of(&state, ticker).await?;
    let today = smile_shape_at(&read.chain.rows, SKEW_TENOR_DAYS);
    let prior = read
        .history()
        .partition_point(|r| r.trade_date < read.chain.trade_date);
    let year = &read.history()[prior.saturating_sub(IV_RANK_LOOKBACK_SESSIONS)..prior];
    let slopes: Vec<f64> = year.iter().filter_map(|r| r.skew_slope_30d).collect();
    let curvatures: Vec<f64> = year.iter().filter_map(|r| r.smile_curvature_30d).collect();
    let reason = today.is_none().then(|| {
        format!(
            "no 30-day smile could be fitted to {}'s chain (an expiration around 30 days with \
             fewer than 5 quoted strikes, or a failed fit)",
            read.ticker
        )
    });
    let mut payload = SkewPayload {
        ticker: read.ticker.to_string(),
        view,
        current: None,
        percentile: None,
        curvature: None,
        sector_relative: None,
        history: None,
        days,
        window: None,
        basis: SKEW_BASIS,
        served: read.served(&state, reason, &params),
    };
    match view {
        "history" => {
            let all = read.history().len().saturating_sub(days);
            let limit = window_request.row_limit(VOL_SERIES_ROWS);
            let (kept, window) =
                window_last(read.history().len() - all, limit, window_request.detail);
            payload.window = limit.map(|_| window);
            let start = all + kept.start;
            payload.history = Some(
                read.history()[start..]
                    .iter()
                    .map(|r| SkewDay {
                        date: r.trade_date,
                        slope: r.skew_slope_30d,
                        curvature: r.smile_curvature_30d,
                    })
                    .collect(),
            );
        }
        "curvature" => payload.curvature = Some(curvature_block(today, &curvatures)),
        _ => {
            let ar1 = Ar1::fit(&slopes);
            let slope = today.map(|s| s.slope);
            payload.current = Some(SkewNow {
                slope,
                curvature: today.map(|s| s.curvature),
                slope_forecast: slope
                    .zip(ar1)
                    .map(|(s, fit)| fit.forecast(s, SLOPE_FORECAST_SESSIONS)),
                forecast_sessions: SLOPE_FORECAST_SESSIONS,
                slope_long_run_mean: ar1.map(|f| f.mean),
                slope_persistence: ar1.map(|f| f.phi),
            });
            payload.percentile = Some(slope_percentile(slope, &slopes));
            payload.curvature = Some(curvature_block(today, &curvatures));
            payload.sector_relative = Some(sector_relative(&state, &read.ticker, slope));
        }
    }
    Ok(ok(payload))
}

fn slope_percentile(slope: Option<f64>, year: &[f64]) -> SkewPercentile {
    let in_year = standing(year, slope);
    let month = &year[year.len().saturating_sub(ONE_MONTH_SESSIONS)..];
    SkewPercentile {
        current: in_year.percentile,
        avg_1m: standing(month, None).mean,
        avg_1y: in_year.mean,
        stdv_1y: in_year.std,
        z_1y: in_year.z_score,
        observations: year.len(),
    }
}

fn curvature_block(today: Option<SmileShape>, year: &[f64]) -> SkewCurvature {
    let value = today.map(|s| s.curvature);
    let in_year = standing(year, value);
    SkewCurvature {
        value,
        percentile: in_year.percentile,
        avg_1y: in_year.mean,
        z_1y: in_year.z_score,
        interpretation: in_year.percentile.map(curvature_interpretation),
        mispricing: in_year.z_score.map(curvature_mispricing),
        rule: curvature_rule(),
    }
}

/// The slope against the sector ETF's live 30-day slope.
fn sector_relative(state: &AppState, ticker: &Ticker, slope: Option<f64>) -> SkewSectorRelative {
    let mut out = SkewSectorRelative {
        etf: None,
        etf_slope: None,
        etf_slope_ratio: None,
        reason: None,
    };
    let Ok(reader) = state.market_data() else {
        out.reason = Some("market data is not loaded".to_owned());
        return out;
    };
    let coverage = reader.coverage();
    out.etf = coverage
        .get(ticker.as_str())
        .and_then(|c| c.sector_etf.clone());
    let Some(etf) = out.etf.as_deref() else {
        out.reason = Some(format!(
            "the reference data names no sector ETF for {ticker}"
        ));
        return out;
    };
    let chain = Ticker::parse(etf).ok().and_then(|t| reader.chain(&t));
    out.etf_slope = chain
        .as_deref()
        .and_then(|c| smile_shape_at(&c.rows, SKEW_TENOR_DAYS))
        .map(|s| s.slope);
    out.etf_slope_ratio = slope
        .zip(out.etf_slope)
        .filter(|(_, e)| *e != 0.0)
        .map(|(s, e)| s / e);
    if out.etf_slope.is_none() {
        out.reason = Some(format!("no 30-day smile of {etf} to compare with"));
    }
    out
}
