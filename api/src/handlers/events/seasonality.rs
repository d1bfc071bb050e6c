//! `GET /seasonality/{ticker}`: close-to-close returns by month of the year and by quarter.

use std::collections::BTreeMap;

use axum::Json;
use axum::extract::State;
use chrono::NaiveDate;
use optics_compute::seasonality::{PeriodStats, seasonality};
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::freshness::Freshness;
use crate::openapi::IsoDate;
use crate::params::{ClampNotice, QueryParams};
use crate::state::AppState;

/// Month names, the keys of `monthly_seasonality`.
const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];

/// One month of the year (or one quarter) over the window.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct PeriodSeasonality {
    /// Mean return, percent.
    pub avg_return_pct: f64,
    /// Median return, percent.
    pub median_return_pct: f64,
    /// Sample standard deviation of the returns, percent; null below two.
    pub volatility_pct: Option<f64>,
    /// Share of the returns above zero, percent.
    pub positive_pct: f64,
    /// Returns in the window.
    pub sample_size: usize,
}

impl From<&PeriodStats> for PeriodSeasonality {
    fn from(s: &PeriodStats) -> Self {
        Self {
            avg_return_pct: s.avg_return_pct,
            median_return_pct: s.median_return_pct,
            volatility_pct: s.volatility_pct,
            positive_pct: s.positive_pct,
            sample_size: s.returns_pct.len(),
        }
    }
}

/// `best_month` / `worst_month`.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ExtremeMonth {
    /// The month's name.
    pub month: &'static str,
    /// Its mean return, percent.
    pub avg_return_pct: f64,
}

/// The `/seasonality/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct SeasonalityPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// Years of complete months asked for (after clamping).
    pub analysis_years: u32,
    /// By month name (`January` …): the month's close-to-close returns in the window.
    pub monthly_seasonality: BTreeMap<&'static str, PeriodSeasonality>,
    /// By quarter (`Q1` … `Q4`).
    pub quarterly_seasonality: BTreeMap<String, PeriodSeasonality>,
    /// The month with the highest mean return.
    pub best_month: Option<ExtremeMonth>,
    /// The month with the lowest mean return.
    pub worst_month: Option<ExtremeMonth>,
    /// The first month measured (its first day).
    #[schema(value_type = Option<IsoDate>)]
    pub first_month: Option<NaiveDate>,
    /// The last month measured (its first day).
    #[schema(value_type = Option<IsoDate>)]
    pub last_month: Option<NaiveDate>,
    /// How the returns are measured.
    pub basis: &'static str,
    /// Unit of every figure.
    pub units: &'static str,
    /// The last daily bar's session.
    #[schema(value_type = Option<IsoDate>)]
    pub last_bar: Option<NaiveDate>,
    /// Why the figures are empty, when they are.
    pub reason: Option<String>,
    /// The freshness of the bars' session.
    #[serde(flatten)]
    pub freshness: Freshness,
    /// Parameters moved into their documented range.
    pub clamped: Vec<ClampNotice>,
}

/// `basis` of the payload.
const BASIS: &str = "close-to-close returns of complete calendar months (quarters): the \
                     period's last daily close over the previous period's last close, - 1; the \
                     last analysis_years x 12 complete months of the stored daily bars";

/// `GET /seasonality/{ticker}?years=3`.
pub async fn seasonality_of(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<SeasonalityPayload>>, ApiError> {
    let years = u32::try_from(params.int("years")?.value).unwrap_or(3);
    let coverage = state.market_data()?.coverage();
    let closes: Vec<(NaiveDate, f64)> = coverage
        .bars_of(ticker.as_str())
        .iter()
        .map(|b| (b.date, b.close))
        .collect();
    let found = seasonality(&closes, years);
    let monthly: BTreeMap<&'static str, PeriodSeasonality> = found
        .monthly
        .iter()
        .map(|(m, s)| (MONTHS[(*m as usize - 1) % 12], s.into()))
        .collect();
    let extreme = |pick: fn(f64, f64) -> bool| {
        found
            .monthly
            .iter()
            .reduce(|a, b| {
                if pick(b.1.avg_return_pct, a.1.avg_return_pct) {
                    b
                } else {
                    a
                }
            })
            .map(|(m, s)| ExtremeMonth {
                month: MONTHS[(*m as usize - 1) % 12],
                avg_return_pct: s.avg_return_pct,
            })
    };
    let month_start = |(y, m): (i32, u32)| NaiveDate::from_ymd_opt(y, m, 1);
    let last_bar = closes.last().map(|(d, _)| *d);
    Ok(ok(SeasonalityPayload {
        ticker: ticker.to_string(),
        analysis_years: years,
        reason: monthly.is_empty().then(|| {
            format!(
                "{} daily bars are stored for {ticker}: no complete month to measure",
                closes.len()
            )
        }),
        monthly_seasonality: monthly,
        quarterly_seasonality: found
            .quarterly
            .iter()
            .map(|(q, s)| (format!("Q{q}"), s.into()))
            .collect(),
        best_month: extreme(|b, a| b > a),
        worst_month: extreme(|b, a| b < a),
        first_month: found.months_measured.and_then(|(a, _)| month_start(a)),
        last_month: found.months_measured.and_then(|(_, b)| month_start(b)),
        basis: BASIS,
        units: "percent",
        last_bar,
        freshness: state.freshness_of(last_bar.unwrap_or_default()),
        clamped: params.clamp_notices(),
    }))
}
