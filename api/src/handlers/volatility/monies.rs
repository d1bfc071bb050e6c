//! `GET /monies/{ticker}`: the smile of each expiration, fitted (raw SVI) to the live chain and
//! sampled at fixed call deltas, against a GARCH(1,1) forecast of the vol to each expiration.

use axum::Json;
use axum::extract::State;
use chrono::NaiveDate;
use optics_compute::vol::signals::{vrp_signal, vrp_signal_rule};
use optics_compute::vol::{
    GarchFit, STANDARD_CALL_DELTAS, SVI_MIN_POINTS, SviFit, earnings_effect_pct,
    fit_garch11_recent, fit_svi, smile_points,
};
use optics_schemas::{EarningsEvent, EarningsTiming};
use serde::Serialize;
use utoipa::ToSchema;

use super::hv_regimes::GARCH_MAX_RETURNS;
use super::{Served, VOL_UNITS, VolRead, sessions_between};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::openapi::IsoDate;
use crate::params::QueryParams;
use crate::state::AppState;

/// How the implied surface is built.
pub const SMILE_MODEL: &str = "raw SVI per expiration: weighted least squares in total variance \
                               over the out-of-the-money mid IVs (puts below the forward, calls \
                               above), Lee's wing bound, butterfly check on g(k)";
/// How slope and curvature are defined.
pub const SLOPE_DEFINITION: &str = "slope = dσ/dk and curvature = d²σ/dk² of the fitted IV \
                                    (points) at k = ln(K/F) = 0";
/// How the forecast surface is built.
pub const FORECAST_MODEL: &str = "GARCH(1,1) on up to 1,000 daily percent log returns: the \
                                  annualised vol expected over the trading sessions to each \
                                  expiration; flat across deltas (the model has no smile)";
/// How `earn_effect` is measured.
pub const EARN_EFFECT_DEFINITION: &str = "atm_iv minus the ATM IV with one earnings move's \
                                          variance removed: σ_ex = √(max(0, σ²T − e²)/T), \
                                          e = stored mean absolute earnings gap move × √(π/2); \
                                          0 when no report falls before the expiration";

/// The fit behind one expiration.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SmileFit {
    /// Quotes fitted.
    pub points: usize,
    /// RMS of fitted − quoted IV, points.
    pub rmse_iv: f64,
    /// Largest |fitted − quoted IV|, points.
    pub max_abs_error_iv: f64,
    /// No butterfly arbitrage on the check grid.
    pub butterfly_free: bool,
}

/// One expiration of `expirations[]`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct MoniesExpiration {
    /// The expiration.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// Calendar days to it.
    pub dte: i32,
    /// Trading sessions to it (the forecast horizon).
    pub sessions_to_expiry: usize,
    /// Years to its close (ACT/365), the T of the fit.
    pub years_to_expiry: f64,
    /// Its forward, dollars.
    pub forward: f64,
    /// ATM IV of the surface asked for, points (comparison: implied − forecast).
    pub atm_iv: Option<f64>,
    /// dσ/dk at the money (comparison: the implied slope).
    pub slope: Option<f64>,
    /// d²σ/dk² at the money (comparison: the implied curvature).
    pub curvature: Option<f64>,
    /// IV at each of `delta_points`, points (comparison: implied − forecast).
    pub smile: Vec<Option<f64>>,
    /// Earnings contribution to the implied ATM IV, points (`earn_effect_definition`).
    pub earn_effect: Option<f64>,
    /// The report inside the expiration, if any.
    #[schema(value_type = Option<IsoDate>)]
    pub earnings_date: Option<NaiveDate>,
    /// The implied ATM IV (comparison and forecast views), points.
    pub implied_atm_iv: Option<f64>,
    /// The forecast vol to the expiration (comparison and forecast views), points.
    pub forecast_atm_iv: Option<f64>,
    /// comparison: `RICH`, `CHEAP` or `NEUTRAL` from (implied − forecast) / forecast.
    pub signal: Option<&'static str>,
    /// The SVI fit.
    pub fit: Option<SmileFit>,
    /// Why the figures are null, when they are.
    pub reason: Option<String>,
}

/// The `/monies/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct MoniesPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// `implied`, `forecast` or `comparison`.
    pub surface: &'static str,
    /// The call deltas the smiles are sampled at (undiscounted Black-76 N(d₁)).
    pub delta_points: Vec<f64>,
    /// The open expirations, nearest first.
    pub expirations: Vec<MoniesExpiration>,
    /// How the implied surface is built.
    pub smile_model: &'static str,
    /// How the forecast surface is built.
    pub forecast_model: &'static str,
    /// How slope and curvature are defined.
    pub slope_definition: &'static str,
    /// How `earn_effect` is measured.
    pub earn_effect_definition: &'static str,
    /// The thresholds behind `signal`.
    pub signal_rule: String,
    /// Unit of every IV.
    pub units: &'static str,
    /// The chain's session, instant and freshness; reason and clamp notices.
    #[serde(flatten)]
    pub served: Served,
}

/// `GET /monies/{ticker}?surface=implied`.
pub async fn monies(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<MoniesPayload>>, ApiError> {
    let surface = params.choice("surface")?.unwrap_or("implied");
    let read = VolRead::of(&state, ticker).await?;
    let closes = read.closes();
    let garch = (surface != "implied").then(|| fit_garch11_recent(&closes, GARCH_MAX_RETURNS));
    let coverage = state.market_data()?.coverage();
    let reports = coverage.reports_of(read.ticker.as_str());
    let avg_abs_move = read
        .history()
        .iter()
        .rev()
        .find_map(|r| r.earnings_avg_abs_move_pct);
    let expirations = read
        .chain
        .open_expirations()
        .iter()
        .map(|&expiration| {
            let sessions = sessions_between(read.chain.trade_date, expiration);
            let forecast = match &garch {
                Some(Ok(fit)) => forecast_vol(fit, sessions),
                _ => None,
            };
            let mut row = implied_expiration(&read, expiration, sessions);
            let report = report_before(reports, read.chain.trade_date, expiration);
            row.earnings_date = report.map(|r| r.report_date);
            row.earn_effect = earn_effect(&row, report.is_some(), avg_abs_move);
            shape_for(surface, &mut row, forecast);
            if row.reason.is_none()
                && surface != "implied"
                && let Some(Err(e)) = &garch
            {
                row.reason = Some(format!("no forecast: {}: {e}", e.code()));
            }
            row
        })
        .collect();
    Ok(ok(MoniesPayload {
        ticker: read.ticker.to_string(),
        surface,
        delta_points: STANDARD_CALL_DELTAS.to_vec(),
        expirations,
        smile_model: SMILE_MODEL,
        forecast_model: FORECAST_MODEL,
        slope_definition: SLOPE_DEFINITION,
        earn_effect_definition: EARN_EFFECT_DEFINITION,
        signal_rule: vrp_signal_rule(),
        units: VOL_UNITS,
        served: read.served(&state, None, &params),
    }))
}

/// The annualised GARCH vol over `sessions` sessions (at least one).
fn forecast_vol(fit: &GarchFit, sessions: usize) -> Option<f64> {
    fit.forecast_vol_pct(sessions.max(1))
}

/// The implied figures of one expiration (the standard series when an index lists two
/// settlements on the date: the one with more quotes).
fn implied_expiration(read: &VolRead, expiration: NaiveDate, sessions: usize) -> MoniesExpiration {
    let rows = read.chain.rows_of(expiration);
    let first = rows.first();
    let mut out = MoniesExpiration {
        expiration,
        dte: first.map_or(0, |r| r.dte),
        sessions_to_expiry: sessions,
        years_to_expiry: first.map_or(0.0, |r| r.years_to_expiry),
        forward: first.map_or(f64::NAN, |r| r.forward),
        atm_iv: None,
        slope: None,
        curvature: None,
        smile: vec![None; STANDARD_CALL_DELTAS.len()],
        earn_effect: None,
        earnings_date: None,
        implied_atm_iv: None,
        forecast_atm_iv: None,
        signal: None,
        fit: None,
        reason: None,
    };
    let settlement = rows
        .iter()
        .map(|r| r.settlement)
        .max_by_key(|s| rows.iter().filter(|r| r.settlement == *s).count());
    let series: Vec<_> = rows
        .iter()
        .filter(|r| Some(r.settlement) == settlement)
        .cloned()
        .collect();
    let Some(front) = series.first() else {
        out.reason = Some("no rows".to_owned());
        return out;
    };
    out.forward = front.forward;
    out.years_to_expiry = front.years_to_expiry;
    let points = smile_points(&series);
    if points.len() < SVI_MIN_POINTS {
        out.reason = Some(format!(
            "{} strikes with an implied vol; a smile fit needs {SVI_MIN_POINTS}",
            points.len()
        ));
        return out;
    }
    let fit: SviFit = match fit_svi(&points, front.years_to_expiry) {
        Ok(fit) => fit,
        Err(e) => {
            out.reason = Some(format!("the smile fit failed: {e}"));
            return out;
        }
    };
    out.atm_iv = fit.atm_iv_pct();
    out.implied_atm_iv = out.atm_iv;
    out.slope = fit.slope();
    out.curvature = fit.curvature();
    out.smile = STANDARD_CALL_DELTAS
        .iter()
        .map(|&delta| fit.at_call_delta(delta, front.forward).map(|p| p.iv_pct))
        .collect();
    out.fit = Some(SmileFit {
        points: fit.points,
        rmse_iv: fit.rmse_iv_pct,
        max_abs_error_iv: fit.max_abs_error_iv_pct,
        butterfly_free: fit.butterfly_free,
    });
    out
}

/// The first report still ahead of the session `today` whose reaction falls on or before
/// `expiration`: after today (or after today's close), and before the expiration day or
/// before its open.
fn report_before(
    reports: &[EarningsEvent],
    today: NaiveDate,
    expiration: NaiveDate,
) -> Option<&EarningsEvent> {
    let ahead = |r: &&EarningsEvent| {
        r.report_date > today || (r.report_date == today && r.timing == EarningsTiming::AfterClose)
    };
    let inside = |r: &&EarningsEvent| {
        r.report_date < expiration
            || (r.report_date == expiration && r.timing == EarningsTiming::BeforeOpen)
    };
    reports.iter().filter(ahead).find(inside)
}

/// `earn_effect` of a row with its implied ATM IV (see [`EARN_EFFECT_DEFINITION`]).
fn earn_effect(row: &MoniesExpiration, has_report: bool, avg_abs_move: Option<f64>) -> Option<f64> {
    let atm = row.implied_atm_iv?;
    if !has_report {
        return Some(0.0);
    }
    earnings_effect_pct(atm, row.years_to_expiry, avg_abs_move?)
}

/// Turns the implied row into the surface asked for.
fn shape_for(surface: &str, row: &mut MoniesExpiration, forecast: Option<f64>) {
    match surface {
        "forecast" => {
            row.forecast_atm_iv = forecast;
            row.atm_iv = forecast;
            row.slope = forecast.map(|_| 0.0);
            row.curvature = forecast.map(|_| 0.0);
            row.smile = vec![forecast; STANDARD_CALL_DELTAS.len()];
        }
        "comparison" => {
            row.forecast_atm_iv = forecast;
            row.atm_iv = row.implied_atm_iv.zip(forecast).map(|(i, f)| i - f);
            row.smile = row
                .smile
                .iter()
                .map(|iv| iv.zip(forecast).map(|(i, f)| i - f))
                .collect();
            row.signal = row
                .implied_atm_iv
                .zip(forecast)
                .filter(|(_, f)| *f > 0.0)
                .map(|(i, f)| vrp_signal((i - f) / f * 100.0));
        }
        _ => {}
    }
}
