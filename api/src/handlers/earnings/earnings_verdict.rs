//! `GET /earnings-verdict/{ticker}`: buy, sell or leave the straddle over the next report —
//! the priced event move against the past gaps, the straddle's past returns, the direction and
//! its consistency, the IV crush, the drift and the earnings smile.

use axum::Json;
use axum::extract::State;
use chrono::NaiveDate;
use optics_compute::earnings::{
    BUY_STRADDLE_FROM_EDGE, DRIFT_SIGNAL_HORIZON, HISTORY_REPORTS, PRELIMINARY_BEYOND_DAYS,
    SELL_STRADDLE_TO_EDGE, confidence_rule, direction_bias, drift_action, drift_statistics,
    edge_rule, edge_score, mean, median, straddle_move_from_iv, straddle_return_pct,
    straddle_signal, verdict_confidence,
};
use optics_compute::vol::ExpirationVol;
use serde::Serialize;
use utoipa::ToSchema;

use super::event::EventSetup;
use super::read::{EarningsRead, PastReport, timing_label};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::{CoveredTicker, latest_chain};
use crate::handlers::volatility::Served;
use crate::openapi::IsoDate;
use crate::params::QueryParams;
use crate::state::AppState;

/// Points by which an event wing's premium over the ATM must exceed the reference
/// expiration's to be called bid.
pub const WING_BID_FROM_POINTS: f64 = 1.0;

/// The answer.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct Verdict {
    /// `BUY_STRADDLE`, `SELL_STRADDLE`, `NEUTRAL` or `NO_EARNINGS`.
    pub signal: &'static str,
    /// 0–100.
    pub confidence: f64,
    /// The report is more than 30 days out.
    pub preliminary: bool,
    /// The numbers behind the signal, one sentence each.
    pub reasons: Vec<String>,
    /// Structures that express the signal, with the strikes and expiration they use.
    pub suggested_structures: Vec<String>,
    /// How the signal and the confidence are decided.
    pub rule: String,
    /// How the confidence is computed.
    pub confidence_rule: String,
}

/// The setup of the next report.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VerdictTiming {
    /// The report date.
    #[schema(value_type = IsoDate)]
    pub earnings_date: NaiveDate,
    /// `bmo`, `amc` or `tbd`.
    pub timing: &'static str,
    /// The session whose open first trades on it.
    #[schema(value_type = IsoDate)]
    pub reaction_date: NaiveDate,
    /// Calendar days to the report.
    pub days_to_earnings: i64,
    /// The first expiration carrying the reaction.
    #[schema(value_type = Option<IsoDate>)]
    pub event_expiration: Option<NaiveDate>,
    /// Its ATM IV, percentage points.
    pub atm_iv: Option<f64>,
    /// Its ATM straddle, dollars.
    pub straddle_price: Option<f64>,
    /// The straddle's expected absolute move, percent of spot.
    pub straddle_move_pct: Option<f64>,
    /// Calendar days the straddle runs.
    pub straddle_dte: Option<i64>,
    /// The diffusion of its other days at the diffusion vol, percent.
    pub diffusion_move_pct: Option<f64>,
    /// The diffusion vol, percentage points.
    pub diffusion_iv: Option<f64>,
    /// Where it comes from.
    pub diffusion_basis: Option<String>,
    /// The event-only move: √(straddle² − diffusion²), percent.
    pub implied_move_pct: Option<f64>,
    /// The move expected from the report: the event-only move, percent.
    pub expected_move_pct: Option<f64>,
    /// event² / straddle², 0–1.
    pub event_variance_share: Option<f64>,
}

/// The gaps of past reports.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VerdictHistory {
    /// Past reports read (at most twelve).
    pub reports_used: usize,
    /// Mean |gap|, percent.
    pub historical_avg_move_pct: Option<f64>,
    /// Median |gap|, percent.
    pub median_abs_move_pct: Option<f64>,
    /// Largest |gap|, percent.
    pub max_abs_move_pct: Option<f64>,
    /// historical_avg_move_pct / implied_move_pct.
    pub move_ratio: Option<f64>,
}

/// How the straddle has paid.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VerdictEdge {
    /// 0–100: 50 break-even, above favours buying, below selling.
    pub edge_score: Option<f64>,
    /// A sentence.
    pub edge_interpretation: String,
    /// Mean return of the front straddle bought at the close before past reactions, percent.
    pub avg_straddle_return: Option<f64>,
    /// Share of those that paid (return > 0), percent.
    pub straddle_win_rate: Option<f64>,
    /// Past reports with a stored front IV to price the straddle.
    pub reports_priced: usize,
    /// (historical_avg_move_pct / implied_move_pct − 1) × 100: today's straddle against the
    /// past gaps, percent.
    pub current_edge_pct: Option<f64>,
    /// How the past straddles are priced.
    pub basis: &'static str,
}

/// Bias and consistency of past gaps.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VerdictDirection {
    /// `UP`, `DOWN` or `NONE` (named from 65 % of the gaps one way).
    pub bias: &'static str,
    /// max(up, down) / reports × 100.
    pub confidence: Option<f64>,
    /// Gaps ≥ 0.
    pub up_count: usize,
    /// Gaps < 0.
    pub down_count: usize,
    /// Mean up gap, percent.
    pub avg_up_move_pct: Option<f64>,
    /// Mean down gap, percent.
    pub avg_down_move_pct: Option<f64>,
}

/// IV around past reports.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VerdictCrush {
    /// Mean crush of the 30-day IV at past reactions, percent.
    pub avg_iv_crush_pct: Option<f64>,
    /// Median of the same.
    pub median_iv_crush_pct: Option<f64>,
    /// The event expiration's ATM IV after that crush, percentage points.
    pub estimated_iv_after_event: Option<f64>,
}

/// The drift after past gaps.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VerdictDrift {
    /// Continuation rate at 5 sessions, percent.
    pub continuation_rate_5d: Option<f64>,
    /// Events counted.
    pub events: usize,
    /// `FOLLOW_GAP`, `FADE_GAP`, `NO_EDGE` or `INSUFFICIENT_DATA`.
    pub action: &'static str,
}

/// One expiration's smile.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct WingSmile {
    /// The expiration.
    #[schema(value_type = IsoDate)]
    pub expiration: NaiveDate,
    /// ATM IV, percentage points.
    pub atm_iv: Option<f64>,
    /// 25-delta put IV.
    pub put25_iv: Option<f64>,
    /// 25-delta call IV.
    pub call25_iv: Option<f64>,
    /// put25 − call25.
    pub skew25: Option<f64>,
}

impl From<&ExpirationVol> for WingSmile {
    fn from(v: &ExpirationVol) -> Self {
        Self {
            expiration: v.expiration,
            atm_iv: v.atm_iv_pct,
            put25_iv: v.put25_iv_pct,
            call25_iv: v.call25_iv_pct,
            skew25: v.skew25_pct,
        }
    }
}

/// The earnings smile against the reference expiration.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct VerdictWings {
    /// The event expiration's smile.
    pub event: Option<WingSmile>,
    /// The next expiration's.
    pub reference: Option<WingSmile>,
    /// (event put25 − event ATM) − (reference put25 − reference ATM), points.
    pub put_wing_premium: Option<f64>,
    /// The same for the 25-delta calls.
    pub call_wing_premium: Option<f64>,
    /// A sentence.
    pub interpretation: String,
}

/// The `/earnings-verdict/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct EarningsVerdictPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// The answer.
    pub verdict: Verdict,
    /// The verdict's confidence, 0–100.
    pub confidence: f64,
    /// The verdict's reasons.
    pub reasons: Vec<String>,
    /// The next report's setup; null when none is scheduled.
    pub timing: Option<VerdictTiming>,
    /// Past gaps.
    pub historical: VerdictHistory,
    /// The straddle's edge.
    pub edge: VerdictEdge,
    /// Direction of past gaps.
    pub direction: VerdictDirection,
    /// IV crush.
    pub iv_crush: VerdictCrush,
    /// Drift.
    pub drift: VerdictDrift,
    /// The earnings smile; null without an event expiration.
    pub wings: Option<VerdictWings>,
    /// Units.
    pub units: &'static str,
    /// Session, instant, freshness, reason, clamps.
    #[serde(flatten)]
    pub served: Served,
}

/// `basis` of the edge block.
pub const STRADDLE_RETURN_BASIS: &str = "each past report: the front expiration's ATM straddle \
     at the close before the reaction, priced as sqrt(2/pi) x stored front ATM IV x sqrt(days to \
     that expiration / 365) percent of spot (only when it expires on or after the reaction), \
     against the reaction gap: (|gap| - priced) / priced x 100";

/// The front straddle's return over each past reaction it covered.
fn past_straddle_returns(read: &EarningsRead, past: &[PastReport<'_>]) -> Vec<f64> {
    past.iter()
        .filter_map(|p| {
            let before = read.dates[p.reaction.session - 1];
            let (front, iv) = read.front_on(before)?;
            if front < p.reaction_date {
                return None;
            }
            let priced = straddle_move_from_iv(iv, (front - before).num_days() as f64)?;
            straddle_return_pct(p.reaction.gap_move_pct, priced)
        })
        .collect()
}

fn wings_of(setup: &EventSetup) -> Option<VerdictWings> {
    let event = setup.event_expiration.as_ref()?;
    let reference = setup.reference_expiration.as_ref();
    let premium = |wing: fn(&ExpirationVol) -> Option<f64>| {
        let r = reference?;
        Some((wing(event)? - event.atm_iv_pct?) - (wing(r)? - r.atm_iv_pct?))
    };
    let put = premium(|v| v.put25_iv_pct);
    let call = premium(|v| v.call25_iv_pct);
    let interpretation = match (put, call) {
        (Some(p), Some(c)) => {
            let side = |x: f64| {
                if x >= WING_BID_FROM_POINTS {
                    "bid"
                } else if x <= -WING_BID_FROM_POINTS {
                    "offered"
                } else {
                    "in line"
                }
            };
            format!(
                "against the {} smile, the event expiration's puts are {} ({p:+.2} points) and \
                 its calls {} ({c:+.2} points); a wing is bid or offered beyond \
                 {WING_BID_FROM_POINTS} point",
                r_date(reference),
                side(p),
                side(c)
            )
        }
        _ => "no reference expiration with 25-delta wings to compare against".to_owned(),
    };
    Some(VerdictWings {
        event: Some(event.into()),
        reference: reference.map(WingSmile::from),
        put_wing_premium: put,
        call_wing_premium: call,
        interpretation,
    })
}

fn r_date(reference: Option<&ExpirationVol>) -> String {
    reference.map_or_else(String::new, |r| r.expiration.to_string())
}

/// `GET /earnings-verdict/{ticker}`.
pub async fn earnings_verdict(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    params: QueryParams,
) -> Result<Json<Envelope<EarningsVerdictPayload>>, ApiError> {
    let chain = latest_chain(&state, &ticker)?;
    let read = EarningsRead::of(&state, ticker).await?;
    let past = read.past(HISTORY_REPORTS);
    let gaps: Vec<f64> = past.iter().map(|p| p.reaction.gap_move_pct).collect();
    let abs_gaps: Vec<f64> = gaps.iter().map(|g| g.abs()).collect();
    let setup = EventSetup::of(&state, &read, &chain);
    let implied = setup
        .as_ref()
        .and_then(|s| s.event.map(|e| e.implied_move_pct));
    let hist_avg = mean(abs_gaps.iter().copied());
    let move_ratio = hist_avg
        .zip(implied.filter(|i| *i > 0.0))
        .map(|(h, i)| h / i);
    let returns = past_straddle_returns(&read, &past);
    let avg_return = mean(returns.iter().copied());
    let current_edge = move_ratio.map(|r| (r - 1.0) * 100.0);
    let blended = mean(avg_return.into_iter().chain(current_edge));
    let score = blended.map(edge_score);
    let (bias, consistency) = direction_bias(
        gaps.iter().filter(|g| **g >= 0.0).count(),
        gaps.iter().filter(|g| **g < 0.0).count(),
    );
    let crushes: Vec<f64> = past.iter().filter_map(|p| p.moved.iv_crush_pct()).collect();
    let avg_crush = mean(crushes.iter().copied());
    let drift_events = read.drift_events(&past, &[DRIFT_SIGNAL_HORIZON]);
    let drift = drift_statistics(&drift_events, &[DRIFT_SIGNAL_HORIZON])[0];
    let preliminary = setup.as_ref().is_some_and(|s| s.preliminary);
    let signal = match (&setup, score) {
        (None, _) => "NO_EARNINGS",
        (Some(_), Some(score)) => straddle_signal(score),
        (Some(_), None) => "NEUTRAL",
    };
    let confidence = match (&setup, score) {
        // The historical returns count their priced reports; without them the current edge
        // rests on the gaps of the reports read.
        (Some(_), Some(_)) => verdict_confidence(
            if avg_return.is_some() {
                returns.len()
            } else {
                past.len()
            },
            avg_return,
            current_edge,
            preliminary,
        ),
        _ => 0.0,
    };
    let mut reasons = Vec::new();
    match &setup {
        None => reasons.push(format!(
            "no report of {} is scheduled on or after {}",
            read.ticker, read.as_of_date
        )),
        Some(s) => {
            if let (Some(e), Some(h)) = (s.event, hist_avg) {
                reasons.push(format!(
                    "the {} straddle prices a {:.2} % event move ({:.0} % of its variance) \
                     against a {h:.2} % mean gap over the last {} reports",
                    s.event_expiration
                        .as_ref()
                        .map_or_else(String::new, |v| v.expiration.to_string()),
                    e.implied_move_pct,
                    e.event_variance_share * 100.0,
                    past.len()
                ));
            }
            if let Some(r) = avg_return {
                reasons.push(format!(
                    "bought at the close before past reactions, the front straddle returned \
                     {r:+.1} % on average ({} of {} paid)",
                    returns.iter().filter(|x| **x > 0.0).count(),
                    returns.len()
                ));
            }
            if s.preliminary {
                reasons.push(format!(
                    "preliminary: the report is {} days out (beyond {PRELIMINARY_BEYOND_DAYS})",
                    s.days_to_earnings
                ));
            }
            if let Some(reason) = &s.reason {
                reasons.push(reason.clone());
            }
        }
    }
    if let Some(c) = avg_crush {
        reasons.push(format!(
            "the 30-day IV fell {c:.1} % on average at past reactions"
        ));
    }
    if bias != "NONE"
        && let Some(share) = consistency
    {
        reasons.push(format!(
            "{share:.0} % of past gaps were {}",
            bias.to_lowercase()
        ));
    }
    if past.is_empty() {
        reasons.push(format!(
            "no past report of {} has reacted inside the stored daily bars",
            read.ticker
        ));
    }
    let suggested_structures = match (signal, &setup) {
        (_, Some(s)) if s.straddle.is_some() => {
            let m = s.straddle.as_ref().expect("checked");
            let atm = m.atm_strikes[0];
            match signal {
                "BUY_STRADDLE" => vec![format!(
                    "long straddle {} {atm} (about {:.2} per share), held through the report",
                    m.expiration, m.straddle_price
                )],
                "SELL_STRADDLE" => vec![format!(
                    "short iron condor {} with short strikes outside {:.2} - {:.2} (spot +/- \
                     the straddle's move), long wings further out to cap the loss",
                    m.expiration, m.lower_bound, m.upper_bound
                )],
                _ => s
                    .reference_expiration
                    .as_ref()
                    .map(|r| {
                        format!(
                            "no straddle edge: a calendar (short {} {atm}, long {} {atm}) owns \
                             the crush without the direction",
                            m.expiration, r.expiration
                        )
                    })
                    .into_iter()
                    .collect(),
            }
        }
        _ => Vec::new(),
    };
    let edge_interpretation = match score {
        Some(s) if s >= BUY_STRADDLE_FROM_EDGE => format!("{s:.0}: buying the straddle has paid"),
        Some(s) if s <= SELL_STRADDLE_TO_EDGE => format!("{s:.0}: selling the straddle has paid"),
        Some(s) => format!("{s:.0}: no consistent edge either way"),
        None => "no past straddle and no priced event move to score".to_owned(),
    };
    // Null figures say why: no report, no past reaction, or no event straddle.
    let served_reason = if setup.is_none() || past.is_empty() {
        Some(reasons.join("; "))
    } else {
        setup.as_ref().and_then(|s| s.reason.clone())
    };
    let timing = setup.as_ref().map(|s| VerdictTiming {
        earnings_date: s.report.report_date,
        timing: timing_label(s.report.timing),
        reaction_date: s.reaction_date,
        days_to_earnings: s.days_to_earnings,
        event_expiration: s.event_expiration.as_ref().map(|e| e.expiration),
        atm_iv: s.event_expiration.as_ref().and_then(|e| e.atm_iv_pct),
        straddle_price: s.straddle.as_ref().map(|m| m.straddle_price),
        straddle_move_pct: s.event.map(|e| e.straddle_move_pct),
        straddle_dte: s.straddle.as_ref().map(|m| m.dte),
        diffusion_move_pct: s.event.map(|e| e.diffusion_move_pct),
        diffusion_iv: s.diffusion.as_ref().map(|d| d.0),
        diffusion_basis: s.diffusion.as_ref().map(|d| d.1.clone()),
        implied_move_pct: implied,
        expected_move_pct: implied,
        event_variance_share: s.event.map(|e| e.event_variance_share),
    });
    let atm_iv = timing.as_ref().and_then(|t| t.atm_iv);
    let ups: Vec<f64> = gaps.iter().copied().filter(|g| *g >= 0.0).collect();
    let downs: Vec<f64> = gaps.iter().copied().filter(|g| *g < 0.0).collect();
    Ok(ok(EarningsVerdictPayload {
        ticker: read.ticker.to_string(),
        confidence,
        reasons: reasons.clone(),
        verdict: Verdict {
            signal,
            confidence,
            preliminary,
            reasons,
            suggested_structures,
            rule: edge_rule(),
            confidence_rule: confidence_rule(),
        },
        timing,
        historical: VerdictHistory {
            reports_used: past.len(),
            historical_avg_move_pct: hist_avg,
            median_abs_move_pct: median(&abs_gaps),
            max_abs_move_pct: abs_gaps.iter().copied().reduce(f64::max),
            move_ratio,
        },
        edge: VerdictEdge {
            edge_score: score,
            edge_interpretation,
            avg_straddle_return: avg_return,
            straddle_win_rate: (!returns.is_empty()).then(|| {
                returns.iter().filter(|r| **r > 0.0).count() as f64 / returns.len() as f64 * 100.0
            }),
            reports_priced: returns.len(),
            current_edge_pct: current_edge,
            basis: STRADDLE_RETURN_BASIS,
        },
        direction: VerdictDirection {
            bias,
            confidence: consistency,
            up_count: ups.len(),
            down_count: downs.len(),
            avg_up_move_pct: mean(ups),
            avg_down_move_pct: mean(downs),
        },
        iv_crush: VerdictCrush {
            avg_iv_crush_pct: avg_crush,
            median_iv_crush_pct: median(&crushes),
            estimated_iv_after_event: atm_iv.zip(avg_crush).map(|(iv, c)| iv * (1.0 - c / 100.0)),
        },
        drift: VerdictDrift {
            continuation_rate_5d: drift.continuation_rate,
            events: drift.events,
            action: drift_action(drift.continuation_rate, drift.events),
        },
        wings: setup.as_ref().and_then(wings_of),
        units: "moves, returns and crush in percent; IVs in percentage points; edge_score and \
                confidence 0 to 100; prices in dollars",
        served: Served::of(&state, &chain, served_reason, params.clamp_notices()),
    }))
}
