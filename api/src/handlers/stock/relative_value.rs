//! `GET /relative-value/{ticker}`: the ticker's 30-day IV against SPY's and its sector ETF's,
//! with the ratios' 1m / 1y averages, z-scores, percentiles, sigma bands and a signal.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use chrono::NaiveDate;
use optics_compute::cores::NewestStored;
use optics_compute::relative_value::{
    MIN_1Y_SAMPLE, RatioPoint, RatioStats, WINDOW_1M, WINDOW_1Y, Z_SIGNAL, ratio_series,
    ratio_stats, sigma_bands, signal,
};
use optics_compute::time::new_york_date;
use serde::Serialize;
use utoipa::ToSchema;

use super::correlation::MARKET;
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::freshness::Freshness;
use crate::market::ChainView;
use crate::openapi::IsoDate;
use crate::params::QueryParams;
use crate::state::AppState;
use crate::ticker::Ticker;
use crate::window::{VOL_SERIES_ROWS, Window, WindowRequest, window_last};

/// How the ratios are measured, stated in payloads and the reference.
pub const RATIO_BASIS: &str = "iv30d_pct (30-day constant-maturity IV, points) of the stored \
    vol_daily rows, today's figure replaced by the live chain's iv30d when a chain is built; \
    ticker and benchmark joined on trade_date; ratio = ticker iv30d / benchmark iv30d; avg_1m = \
    mean of the last 21 ratios; avg_1y, std_1y (sample, n-1), z and percentile over the last up \
    to 252 ratios (current included, at least 60); z = (current - avg_1y) / std_1y; percentile \
    = share of that window strictly below the current ratio x 100";

/// The dated 30-day IV series of `ticker` up to `today`: stored vol_daily `iv30d_pct`, with
/// today's point set from the live chain's iv30d when present. Also the last stored row's VRP,
/// IV percentile and iv30d basis.
pub async fn iv30d_series(state: &AppState, ticker: &Ticker, today: NaiveDate) -> IvSeries {
    let Ok(reader) = state.market_data() else {
        return IvSeries::default();
    };
    let rows = reader.vol_history(ticker).await.ok().unwrap_or_default();
    let points = rows
        .iter()
        .filter(|r| r.trade_date <= today)
        .filter_map(|r| r.iv30d_pct.map(|iv| (r.trade_date, iv)))
        .collect();
    let last = rows.iter().rev().find(|r| r.trade_date <= today);
    IvSeries::with_live(
        points,
        reader.chain(ticker).as_deref(),
        today,
        last.map(NewestStored::of),
    )
}

impl IvSeries {
    /// `points` (stored, ascending, up to `today`) with today's point set from `chain`'s live
    /// iv30d when it has one, and the last stored row's VRP, IV percentile and IV rank.
    pub fn with_live(
        mut points: Vec<(NaiveDate, f64)>,
        chain: Option<&ChainView>,
        today: NaiveDate,
        last: Option<NewestStored>,
    ) -> Self {
        let live = chain.and_then(|c| c.implied().constant_maturity.iv30d_pct);
        if let Some(iv) = live {
            if points.last().is_some_and(|p| p.0 == today) {
                points.pop();
            }
            points.push((today, iv));
        }
        Self {
            points,
            live: live.is_some(),
            vrp: last.and_then(|l| l.vrp_30d_pct),
            iv_percentile: last.and_then(|l| l.iv_percentile),
            iv_rank: last.and_then(|l| l.iv_rank),
        }
    }
}

/// A symbol's dated iv30d and context from its last stored row.
#[derive(Debug, Clone, Default)]
pub struct IvSeries {
    /// (trade date, iv30d points), ascending.
    pub points: Vec<(NaiveDate, f64)>,
    /// Whether the last point is the live chain's.
    pub live: bool,
    /// The last stored row's 30-day VRP, points.
    pub vrp: Option<f64>,
    /// The last stored row's 1y IV percentile, 0–100.
    pub iv_percentile: Option<f64>,
    /// The last stored row's IV rank, 0–100.
    pub iv_rank: Option<f64>,
}

/// `ratios`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Ratios {
    /// The ticker's iv30d over SPY's on the last shared session; unitless.
    pub iv_spy_ratio: Option<f64>,
    /// Mean of the last 21 SPY ratios; null with fewer.
    pub iv_spy_ratio_avg_1m: Option<f64>,
    /// Mean of the last up to 252 SPY ratios; null below 60.
    pub iv_spy_ratio_avg_1y: Option<f64>,
    /// The ticker's iv30d over its sector ETF's on the last shared session; unitless.
    pub iv_etf_ratio: Option<f64>,
    /// Mean of the last 21 ETF ratios.
    pub iv_etf_ratio_avg_1m: Option<f64>,
    /// Mean of the last up to 252 ETF ratios; null below 60.
    pub iv_etf_ratio_avg_1y: Option<f64>,
}

/// `z_scores.percentiles`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Percentiles {
    /// Share of the 1y SPY-ratio window strictly below today's ratio, 0–100.
    pub spy_ratio: Option<f64>,
    /// The same for the ETF ratio, 0–100.
    pub etf_ratio: Option<f64>,
}

/// `z_scores`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ZScores {
    /// (iv_spy_ratio − avg_1y) / sample std_1y, standard deviations.
    pub spy_ratio_z: Option<f64>,
    /// The same for the ETF ratio.
    pub etf_ratio_z: Option<f64>,
    /// Percentiles of the current ratios in their 1y windows.
    pub percentiles: Percentiles,
}

/// One sigma band.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SigmaBand {
    /// Multiple of the 1y std: −2, −1, 1, 2.
    pub sigmas: f64,
    /// avg_1y + sigmas × std_1y; unitless.
    pub ratio: f64,
    /// The ticker iv30d this ratio implies at the benchmark's latest iv30d, points.
    pub implied_iv30d: f64,
}

/// `sigma_bands`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SigmaBands {
    /// Bands of the SPY ratio; empty without a 1y distribution.
    pub spy: Vec<SigmaBand>,
    /// Bands of the sector-ETF ratio.
    pub etf: Vec<SigmaBand>,
}

/// One session of `timeseries[]`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RelativeValueDay {
    /// Trade date.
    #[schema(value_type = IsoDate)]
    pub date: NaiveDate,
    /// The ticker's iv30d, points.
    pub iv30d: f64,
    /// SPY's iv30d, points.
    pub spy_iv30d: f64,
    /// iv30d / spy_iv30d.
    pub iv_spy_ratio: f64,
    /// The sector ETF's iv30d that session, points; null when it has none.
    pub etf_iv30d: Option<f64>,
    /// iv30d / etf_iv30d.
    pub iv_etf_ratio: Option<f64>,
}

/// `context`: the ticker's vol levels.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VolContext {
    /// The ticker's latest iv30d, points.
    pub iv30d: Option<f64>,
    /// SPY's latest iv30d, points.
    pub spy_iv30d: Option<f64>,
    /// The sector ETF's latest iv30d, points.
    pub etf_iv30d: Option<f64>,
    /// 30-day VRP (iv30d − hv30d) of the last stored row, points.
    pub vrp: Option<f64>,
    /// 1y IV percentile of the last stored row, 0–100.
    pub iv_percentile: Option<f64>,
    /// IV rank of the last stored row, 0–100.
    pub iv_rank: Option<f64>,
}

/// The `/relative-value/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RelativeValuePayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The company's sector SPDR ETF; null for indices and broad ETFs.
    pub sector_etf: Option<String>,
    /// RICH, CHEAP or NEUTRAL by `z_scores.spy_ratio_z` (see `signal_rule`).
    pub signal: &'static str,
    /// The rule of `signal`.
    pub signal_rule: String,
    /// |z| threshold of the signal, standard deviations.
    pub signal_threshold: f64,
    /// The ratios and their averages.
    pub ratios: Ratios,
    /// How stretched the ratios are.
    pub z_scores: ZScores,
    /// avg_1y ± 1σ and 2σ of each ratio with the implied ticker iv30d.
    pub sigma_bands: SigmaBands,
    /// Vol levels as context.
    pub context: VolContext,
    /// Sessions asked for (`days`).
    pub days: usize,
    /// The last `days` joined sessions, oldest first.
    pub timeseries: Vec<RelativeValueDay>,
    /// The series' window under compact detail (most recent sessions kept); absent under full.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    /// How the ratios and statistics are measured.
    pub basis: &'static str,
    /// Units of the figures.
    pub units: &'static str,
    /// Why any figure is null.
    pub reason: Option<String>,
    /// The freshness of the last shared session.
    #[serde(flatten)]
    pub freshness: Freshness,
}

fn bands(stats: Option<&RatioStats>, benchmark_iv: Option<f64>) -> Vec<SigmaBand> {
    match (stats.and_then(|s| s.avg_1y.zip(s.std_1y)), benchmark_iv) {
        (Some((avg, std)), Some(iv)) => sigma_bands(avg, std, iv)
            .into_iter()
            .map(|b| SigmaBand {
                sigmas: b.sigmas,
                ratio: b.ratio,
                implied_iv30d: b.implied_iv,
            })
            .collect(),
        _ => Vec::new(),
    }
}

fn stats_of(points: &[RatioPoint]) -> Option<RatioStats> {
    ratio_stats(&points.iter().map(|p| p.ratio).collect::<Vec<_>>())
}

fn short_reason(what: &str, n: usize) -> Option<String> {
    (n < MIN_1Y_SAMPLE).then(|| {
        format!(
            "{n} {what} ratios joined: averages over {WINDOW_1M} (1m) and up to {WINDOW_1Y} \
             (1y, at least {MIN_1Y_SAMPLE}) sessions"
        )
    })
}

/// `GET /relative-value/{ticker}?days=252`.
pub async fn relative_value(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    headers: HeaderMap,
    params: QueryParams,
) -> Result<Json<Envelope<RelativeValuePayload>>, ApiError> {
    let window_request = WindowRequest::from_request(&headers, &params)?;
    let limit = window_request.row_limit(VOL_SERIES_ROWS);
    let days = usize::try_from(params.int("days")?.value).unwrap_or(252);
    let today = new_york_date(state.now());
    let coverage = state.market_data()?.coverage();
    let sector_etf = coverage
        .get(ticker.as_str())
        .and_then(|c| c.sector_etf.clone());
    let own = iv30d_series(&state, &ticker, today).await;
    let spy = iv30d_series(&state, &Ticker::parse(MARKET)?, today).await;
    let etf = match sector_etf.as_deref().map(Ticker::parse) {
        Some(Ok(t)) => iv30d_series(&state, &t, today).await,
        _ => IvSeries::default(),
    };
    let spy_ratios = ratio_series(&own.points, &spy.points);
    let etf_ratios = ratio_series(&own.points, &etf.points);
    let spy_stats = stats_of(&spy_ratios);
    let etf_stats = stats_of(&etf_ratios);
    let mut reasons: Vec<String> = Vec::new();
    if own.points.is_empty() {
        reasons.push(format!("no stored or live iv30d for {ticker}"));
    }
    reasons.extend(short_reason(MARKET, spy_ratios.len()));
    match &sector_etf {
        None => reasons.push(format!("{ticker} has no sector ETF: ETF ratios are null")),
        Some(e) => reasons.extend(short_reason(e, etf_ratios.len())),
    }
    let start = spy_ratios.len().saturating_sub(days);
    let all: Vec<RelativeValueDay> = spy_ratios[start..]
        .iter()
        .map(|p| {
            let e = etf_ratios.iter().find(|q| q.date == p.date);
            RelativeValueDay {
                date: p.date,
                iv30d: p.iv,
                spy_iv30d: p.benchmark_iv,
                iv_spy_ratio: p.ratio,
                etf_iv30d: e.map(|q| q.benchmark_iv),
                iv_etf_ratio: e.map(|q| q.ratio),
            }
        })
        .collect();
    let (kept, window) = window_last(all.len(), limit, window_request.detail);
    let spy_z = spy_stats.and_then(|s| s.z);
    let last = spy_ratios.last().map(|p| p.date);
    Ok(ok(RelativeValuePayload {
        ticker: ticker.to_string(),
        sector_etf,
        signal: signal(spy_z),
        signal_rule: SIGNAL_RULE_TEXT.replace("Z_SIGNAL", &Z_SIGNAL.to_string()),
        signal_threshold: Z_SIGNAL,
        ratios: Ratios {
            iv_spy_ratio: spy_stats.map(|s| s.current),
            iv_spy_ratio_avg_1m: spy_stats.and_then(|s| s.avg_1m),
            iv_spy_ratio_avg_1y: spy_stats.and_then(|s| s.avg_1y),
            iv_etf_ratio: etf_stats.map(|s| s.current),
            iv_etf_ratio_avg_1m: etf_stats.and_then(|s| s.avg_1m),
            iv_etf_ratio_avg_1y: etf_stats.and_then(|s| s.avg_1y),
        },
        z_scores: ZScores {
            spy_ratio_z: spy_z,
            etf_ratio_z: etf_stats.and_then(|s| s.z),
            percentiles: Percentiles {
                spy_ratio: spy_stats.and_then(|s| s.percentile),
                etf_ratio: etf_stats.and_then(|s| s.percentile),
            },
        },
        sigma_bands: SigmaBands {
            spy: bands(
                spy_stats.as_ref(),
                spy_ratios.last().map(|p| p.benchmark_iv),
            ),
            etf: bands(
                etf_stats.as_ref(),
                etf_ratios.last().map(|p| p.benchmark_iv),
            ),
        },
        context: VolContext {
            iv30d: own.points.last().map(|p| p.1),
            spy_iv30d: spy.points.last().map(|p| p.1),
            etf_iv30d: etf.points.last().map(|p| p.1),
            vrp: own.vrp,
            iv_percentile: own.iv_percentile,
            iv_rank: own.iv_rank,
        },
        days,
        timeseries: all[kept].to_vec(),
        window: limit.map(|_| window),
        basis: RATIO_BASIS,
        units: "IVs in percentage points; ratios unitless; z-scores in standard deviations; \
                percentiles 0 to 100; vrp in points",
        reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
        freshness: state.freshness_of(last.unwrap_or_default()),
    }))
}

/// The signal rule with `Z_SIGNAL` substituted.
const SIGNAL_RULE_TEXT: &str = optics_compute::relative_value::SIGNAL_RULE;
