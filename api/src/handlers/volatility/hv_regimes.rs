//! `GET /hv-regimes/{ticker}`: realized vol by window over time, its term structure against an
//! intraday-range estimator, a GARCH(1,1) forecast, regime signals, the decomposition of
//! variance, and the 30-session figure with earnings dropped.

use axum::Json;
use axum::extract::State;
use axum::http::HeaderMap;
use chrono::NaiveDate;
use optics_compute::vol::regimes::{
    VarianceDecomposition, crossovers, hv_level, hv_level_rule, hv_trend, hv_trend_rule,
    variance_decomposition,
};
use optics_compute::vol::{
    GarchFit, HV_WINDOWS, OhlcBar, RangeEstimator, earnings_in_window, fit_garch11_recent, hv,
    hv_ex_earnings, hv_series, percentile_of, range_vol,
};
use optics_schemas::{EarningsEvent, VolDailyRow};
use serde::Serialize;
use utoipa::ToSchema;

use super::{HV_BASIS, Served, VOL_UNITS, VolRead};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::market::SessionBar;
use crate::openapi::IsoDate;
use crate::params::QueryParams;
use crate::state::AppState;
use crate::window::{VOL_SERIES_ROWS, Window, WindowRequest, window_last};

/// The intraday-range estimator of `or_hv`.
pub const RANGE_ESTIMATOR: RangeEstimator = RangeEstimator::YangZhang;
/// Returns the GARCH fit reads at most (four years of sessions).
pub const GARCH_MAX_RETURNS: usize = 1_000;
/// Sessions the forecast block forecasts over.
pub const FORECAST_HORIZON: usize = 20;
/// The short and long windows the signals compare.
pub const SIGNAL_WINDOWS: (usize, usize) = (10, 60);
/// The window whose level the signals read, and that `ex_earnings` recomputes.
pub const LEVEL_WINDOW: usize = 30;

/// One session of the dashboard's `timeseries[]`: the stored close-to-close HVs.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct HvDay {
    /// The session.
    #[schema(value_type = IsoDate)]
    pub date: NaiveDate,
    /// 5-session HV, points.
    #[serde(rename = "clsHv5d")]
    pub cls_hv_5d: Option<f64>,
    /// 10-session HV.
    #[serde(rename = "clsHv10d")]
    pub cls_hv_10d: Option<f64>,
    /// 20-session HV.
    #[serde(rename = "clsHv20d")]
    pub cls_hv_20d: Option<f64>,
    /// 30-session HV.
    #[serde(rename = "clsHv30d")]
    pub cls_hv_30d: Option<f64>,
    /// 60-session HV.
    #[serde(rename = "clsHv60d")]
    pub cls_hv_60d: Option<f64>,
    /// 90-session HV.
    #[serde(rename = "clsHv90d")]
    pub cls_hv_90d: Option<f64>,
    /// 120-session HV.
    #[serde(rename = "clsHv120d")]
    pub cls_hv_120d: Option<f64>,
    /// 180-session HV.
    #[serde(rename = "clsHv180d")]
    pub cls_hv_180d: Option<f64>,
    /// 252-session HV.
    #[serde(rename = "clsHv252d")]
    pub cls_hv_252d: Option<f64>,
}

impl HvDay {
    fn of(row: &VolDailyRow) -> Self {
        Self {
            date: row.trade_date,
            cls_hv_5d: row.hv_5d_pct,
            cls_hv_10d: row.hv_10d_pct,
            cls_hv_20d: row.hv_20d_pct,
            cls_hv_30d: row.hv_30d_pct,
            cls_hv_60d: row.hv_60d_pct,
            cls_hv_90d: row.hv_90d_pct,
            cls_hv_120d: row.hv_120d_pct,
            cls_hv_180d: row.hv_180d_pct,
            cls_hv_252d: row.hv_252d_pct,
        }
    }
}

/// One window of `term_structure[]`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct HvTermPoint {
    /// Sessions.
    pub window: usize,
    /// Close-to-close HV over the last `window` sessions, points.
    pub cls_hv: Option<f64>,
    /// The intraday-range HV (`or_estimator`) over the same sessions, points.
    pub or_hv: Option<f64>,
}

/// The `forecast` block: a GARCH(1,1) fitted to the stored closes.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct HvForecast {
    /// `GARCH(1,1)`: constant mean, Gaussian maximum likelihood on daily percent log returns.
    pub model: &'static str,
    /// Annualised vol expected over the next `horizon_sessions` sessions, points.
    pub forecast_vol: Option<f64>,
    /// Sessions forecast over.
    pub horizon_sessions: usize,
    /// Annualised vol expected for the next session, points.
    pub next_session_vol: Option<f64>,
    /// The long-run vol √(252 ω / (1 − α − β)), points.
    pub long_run_vol: Option<f64>,
    /// μ, percent per session.
    pub mu: Option<f64>,
    /// ω, percent² per session.
    pub omega: Option<f64>,
    /// α.
    pub alpha: Option<f64>,
    /// β.
    pub beta: Option<f64>,
    /// α + β.
    pub persistence: Option<f64>,
    /// Sessions for a variance shock to halve.
    pub half_life_sessions: Option<f64>,
    /// Maximised log-likelihood.
    pub log_likelihood: Option<f64>,
    /// Returns fitted.
    pub observations: usize,
    /// Why there is no fit: `insufficient_history`, `no_variance`, `not_converged`,
    /// `non_stationary` or `bad_input`, with a sentence.
    pub reason: Option<String>,
}

impl HvForecast {
    fn of(closes: &[f64]) -> Self {
        let fitted = fit_garch11_recent(closes, GARCH_MAX_RETURNS);
        let fit: Option<&GarchFit> = fitted.as_ref().ok();
        Self {
            model: "GARCH(1,1)",
            forecast_vol: fit.and_then(|f| f.forecast_vol_pct(FORECAST_HORIZON)),
            horizon_sessions: FORECAST_HORIZON,
            next_session_vol: fit.and_then(|f| f.forecast_vol_pct(1)),
            long_run_vol: fit.map(|f| f.long_run_vol_pct),
            mu: fit.map(|f| f.params.mu),
            omega: fit.map(|f| f.params.omega),
            alpha: fit.map(|f| f.params.alpha),
            beta: fit.map(|f| f.params.beta),
            persistence: fit.map(|f| f.persistence),
            half_life_sessions: fit.map(|f| f.half_life_sessions).filter(|h| h.is_finite()),
            log_likelihood: fit.map(|f| f.log_likelihood),
            observations: fit.map_or(closes.len().saturating_sub(1).min(GARCH_MAX_RETURNS), |f| {
                f.observations
            }),
            reason: fitted.err().map(|e| format!("{}: {e}", e.code())),
        }
    }
}

/// A session where the short HV crossed the long one.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct HvCrossover {
    /// The session.
    #[schema(value_type = IsoDate)]
    pub date: NaiveDate,
    /// `SHORT_ABOVE` or `SHORT_BELOW`.
    pub direction: &'static str,
}

/// The `signals` view.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct HvSignals {
    /// The short window, sessions.
    pub short_window: usize,
    /// The long window, sessions.
    pub long_window: usize,
    /// HV over the short window, points.
    pub short_hv: Option<f64>,
    /// HV over the long window, points.
    pub long_hv: Option<f64>,
    /// short_hv / long_hv.
    pub short_long_ratio: Option<f64>,
    /// `EXPANDING`, `CONTRACTING` or `STABLE`.
    pub trend: Option<&'static str>,
    /// The thresholds behind `trend`.
    pub trend_rule: String,
    /// The window whose level is read, sessions.
    pub level_window: usize,
    /// Its HV now, points.
    pub level_hv: Option<f64>,
    /// Share of the last `days` sessions' HV of that window below today's, 0–100.
    pub level_percentile: Option<f64>,
    /// `HIGH`, `NORMAL` or `LOW`.
    pub level: Option<&'static str>,
    /// The thresholds behind `level`.
    pub level_rule: String,
    /// Today's iv30d over `level_hv`: how implied prices the move realized now.
    pub iv_hv_ratio: Option<f64>,
    /// Sessions in the last `days` where the short HV crossed the long one, oldest first.
    pub crossovers: Vec<HvCrossover>,
}

/// The `decomposition` view: the last `days` sessions' close-to-close variance.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct HvDecomposition {
    /// Returns in the window.
    pub sessions: usize,
    /// Close-to-close vol of the window, points.
    pub close_to_close_vol: f64,
    /// Vol of the overnight returns ln(open / previous close), points.
    pub overnight_vol: f64,
    /// Vol of the intraday returns ln(close / open), points.
    pub intraday_vol: f64,
    /// var(overnight) / var(close-to-close) × 100.
    pub overnight_share_pct: f64,
    /// var(intraday) / var(close-to-close) × 100.
    pub intraday_share_pct: f64,
    /// 2 cov(overnight, intraday) / var(close-to-close) × 100 (the three shares add to 100).
    pub covariance_share_pct: f64,
    /// Earnings reaction sessions inside the window.
    pub earnings_sessions: usize,
    /// Their share of the window's squared deviations, percent.
    pub earnings_share_pct: f64,
}

impl From<VarianceDecomposition> for HvDecomposition {
    fn from(d: VarianceDecomposition) -> Self {
        Self {
            sessions: d.sessions,
            close_to_close_vol: d.close_to_close_vol,
            overnight_vol: d.overnight_vol,
            intraday_vol: d.intraday_vol,
            overnight_share_pct: d.overnight_share_pct,
            intraday_share_pct: d.intraday_share_pct,
            covariance_share_pct: d.covariance_share_pct,
            earnings_sessions: d.earnings_sessions,
            earnings_share_pct: d.earnings_share_pct,
        }
    }
}

/// One session of the `ex_earnings` view.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ExEarningsDay {
    /// The session.
    #[schema(value_type = IsoDate)]
    pub date: NaiveDate,
    /// 30-session close-to-close HV ending at its close, points.
    pub cls_hv_30d: Option<f64>,
    /// The same with the reaction sessions' returns dropped.
    pub cls_hv_30d_ex_earnings: Option<f64>,
    /// Whether a reaction session lies in that window.
    pub earnings_in_window: bool,
}

/// The `/hv-regimes/{ticker}` payload: the common fields and the block of the view asked for.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct HvRegimesPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// `dashboard`, `signals`, `decomposition` or `ex_earnings`.
    pub view: &'static str,
    /// Sessions asked for (after clamping).
    pub days: usize,
    /// Stored sessions available.
    pub sessions_stored: usize,
    /// dashboard: the stored HVs per session, the last `days` sessions, oldest first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeseries: Option<Vec<HvDay>>,
    /// dashboard: close-to-close against intraday-range HV at the standard windows.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub term_structure: Option<Vec<HvTermPoint>>,
    /// dashboard: the GARCH(1,1) forecast.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forecast: Option<HvForecast>,
    /// signals.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signals: Option<HvSignals>,
    /// decomposition (null inside the view when the bars are too few).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decomposition: Option<Option<HvDecomposition>>,
    /// ex_earnings: the 30-session HV with and without reaction sessions, the last `days`
    /// sessions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ex_earnings: Option<Vec<ExEarningsDay>>,
    /// The day series' window under compact detail (the most recent sessions kept); absent
    /// under full detail.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub window: Option<Window>,
    /// How close-to-close HV is measured.
    pub hv_basis: &'static str,
    /// The intraday-range estimator of `or_hv` (`yang_zhang`, over daily OHLC bars).
    pub or_estimator: &'static str,
    /// Unit of every volatility.
    pub units: &'static str,
    /// The chain's session, instant and freshness; reason and clamp notices.
    #[serde(flatten)]
    pub served: Served,
}

/// `GET /hv-regimes/{ticker}?view=dashboard&days=252`.
pub async fn hv_regimes(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    headers: HeaderMap,
    params: QueryParams,
) -> Result<Json<Envelope<HvRegimesPayload>>, ApiError> {
    let window_request = WindowRequest::from_request(&headers, &params)?;
    let limit = window_request.row_limit(VOL_SERIES_ROWS);
    let view = params.choice("view")?.unwrap_or("dashboard");
    let days = usize::try_from(params.int("days")?.value).unwrap_or(252);
    let read = VolRead::of(&state, ticker).await?;
    let closes = read.closes();
    let all = read.history().len().saturating_sub(days)..read.history().len();
    // The day series: the last `days` sessions, and under compact the most recent `limit`.
    let (kept, window) = window_last(all.len(), limit, window_request.detail);
    let tail = all.start + kept.start;
    let mut payload = HvRegimesPayload {
        ticker: read.ticker.to_string(),
        view,
        days,
        sessions_stored: read.history().len(),
        timeseries: None,
        term_structure: None,
        forecast: None,
        signals: None,
        decomposition: None,
        ex_earnings: None,
        window: None,
        hv_basis: HV_BASIS,
        or_estimator: RANGE_ESTIMATOR.code(),
        units: VOL_UNITS,
        served: read.served(&state, None, &params),
    };
    let coverage = state.market_data()?.coverage();
    let bars = ohlc_through(coverage.bars_of(read.ticker.as_str()), read.last_session());
    match view {
        "signals" => payload.signals = Some(signals(&read, &closes, days)),
        "decomposition" => {
            let reports: Vec<&EarningsEvent> =
                coverage.reports_of(read.ticker.as_str()).iter().collect();
            let dates: Vec<NaiveDate> = bars.iter().map(|(d, _)| *d).collect();
            let reactions = optics_compute::vol::close::reaction_sessions(&dates, &reports);
            let ohlc: Vec<OhlcBar> = bars.iter().map(|(_, b)| *b).collect();
            let window = days.min(ohlc.len().saturating_sub(1));
            let found = variance_decomposition(&ohlc, window, &reactions)
                .ok()
                .flatten()
                .map(HvDecomposition::from);
            if found.is_none() {
                payload.served.reason = Some(format!(
                    "{} daily bars with an open are stored for {}; the decomposition needs at \
                     least 3",
                    ohlc.len(),
                    read.ticker
                ));
            }
            payload.decomposition = Some(found);
        }
        "ex_earnings" => {
            payload.window = limit.map(|_| window);
            payload.ex_earnings = Some(
                (tail..read.history().len())
                    .map(|i| ExEarningsDay {
                        date: read.history()[i].trade_date,
                        cls_hv_30d: hv(&closes[..=i], LEVEL_WINDOW),
                        cls_hv_30d_ex_earnings: hv_ex_earnings(
                            &closes[..=i],
                            LEVEL_WINDOW,
                            &read.reaction_sessions,
                        ),
                        earnings_in_window: earnings_in_window(
                            i + 1,
                            LEVEL_WINDOW,
                            &read.reaction_sessions,
                        ),
                    })
                    .collect(),
            );
        }
        _ => {
            let ohlc: Vec<OhlcBar> = bars.iter().map(|(_, b)| *b).collect();
            payload.window = limit.map(|_| window);
            payload.timeseries = Some(read.history()[tail..].iter().map(HvDay::of).collect());
            payload.term_structure = Some(
                HV_WINDOWS
                    .iter()
                    .map(|&window| HvTermPoint {
                        window,
                        cls_hv: hv(&closes, window),
                        or_hv: range_vol(&ohlc, window, RANGE_ESTIMATOR).ok().flatten(),
                    })
                    .collect(),
            );
            payload.forecast = Some(HvForecast::of(&closes));
        }
    }
    Ok(ok(payload))
}

/// The bars of the ticker up to `through` (the last stored session), with their dates.
fn ohlc_through(bars: &[SessionBar], through: Option<NaiveDate>) -> Vec<(NaiveDate, OhlcBar)> {
    bars.iter()
        .filter(|b| through.is_some_and(|t| b.date <= t))
        .map(|b| {
            (
                b.date,
                OhlcBar {
                    open: b.open,
                    high: b.high,
                    low: b.low,
                    close: b.close,
                },
            )
        })
        .collect()
}

/// The `signals` view over the last `days` sessions.
fn signals(read: &VolRead, closes: &[f64], days: usize) -> HvSignals {
    let (short_window, long_window) = SIGNAL_WINDOWS;
    let short_hv = hv(closes, short_window);
    let long_hv = hv(closes, long_window);
    let level_hv = hv(closes, LEVEL_WINDOW);
    let level_series: Vec<Option<f64>> = hv_series(closes, LEVEL_WINDOW);
    let tail = closes.len().saturating_sub(days);
    let history: Vec<f64> = level_series[tail..].iter().flatten().copied().collect();
    let level_percentile = level_hv
        .filter(|_| !history.is_empty())
        .and_then(|now| percentile_of(&history, now).ok());
    let short_series = &hv_series(closes, short_window)[tail..];
    let long_series = &hv_series(closes, long_window)[tail..];
    HvSignals {
        short_window,
        long_window,
        short_hv,
        long_hv,
        short_long_ratio: short_hv
            .zip(long_hv)
            .map(|(s, l)| s / l)
            .filter(|r| r.is_finite()),
        trend: short_hv.zip(long_hv).and_then(|(s, l)| hv_trend(s, l)),
        trend_rule: hv_trend_rule(),
        level_window: LEVEL_WINDOW,
        level_hv,
        level_percentile,
        level: level_percentile.map(hv_level),
        level_rule: hv_level_rule(),
        iv_hv_ratio: read
            .iv30d()
            .zip(level_hv)
            .map(|(iv, rv)| iv / rv)
            .filter(|r| r.is_finite()),
        crossovers: crossovers(short_series, long_series)
            .into_iter()
            .map(|c| HvCrossover {
                date: read.history()[tail + c.index].trade_date,
                direction: c.direction,
            })
            .collect(),
    }
}
