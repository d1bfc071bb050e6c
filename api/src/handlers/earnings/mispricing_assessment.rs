//! `GET /mispricing-assessment/{ticker}`: IV rank, the volatility risk premium and the priced
//! move against the typical one, each scored and weighted into one premium signal
//! (`optics_compute::mispricing`).

use axum::Json;
use axum::extract::State;
use chrono::{DateTime, NaiveDate, Utc};
use optics_compute::mispricing::{
    MispricingInputs, TermScore, confidence_rule, iv_rank_formula, mispricing, move_formula,
    score_rule, signal_rule, vrp_formula,
};
use optics_compute::vol::{IV_RANK_LOOKBACK_SESSIONS, earnings_in_window, hv, vrp};
use serde::Serialize;
use utoipa::ToSchema;

use super::expected_vs_actual::PricedAgainstTypical;
use super::historical_moves::{CloseSeries, MoveAnalysis};
use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::extract::CoveredTicker;
use crate::freshness::Freshness;
use crate::handlers::volatility::iv_rank::ranked;
use crate::handlers::volatility::{HV_BASIS, IV30_BASIS, VolRead, no_iv30d, short_history};
use crate::openapi::{IsoDate, Timestamp};
use crate::params::QueryParams;
use crate::state::AppState;

/// The realized window of the VRP term, sessions: `/vrp`'s default.
pub const MISPRICING_HV_WINDOW: usize = 30;

/// `units` of the payload.
pub const MISPRICING_UNITS: &str = "mispricing_score and component scores -100 to +100 \
     (positive: options rich, sell premium); confidence 0 to 100; iv_rank and iv_percentile \
     0 to 100; current_iv, hv and vrp in annualised volatility points; moves in percent of \
     spot; move_ratio unitless; weights fractions of 1";

/// What drove the score: each term's input.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct MispricingComponents {
    /// Today's iv30d between its one-year low (0) and high (100), as `/iv-rank` answers it.
    pub iv_rank: Option<f64>,
    /// Share of the one-year sessions whose iv30d closed below today's, 0–100 (`/iv-rank`'s).
    pub iv_percentile: Option<f64>,
    /// Today's 30-day constant-maturity IV (the VRP basis), volatility points.
    pub current_iv: Option<f64>,
    /// Close-to-close realized vol over the last `hv_window` stored sessions, the VRP's
    /// realized leg, volatility points.
    pub hv: Option<f64>,
    /// current_iv − hv, volatility points.
    pub vrp: Option<f64>,
    /// The move the nearest expiration's straddle prices, percent of spot.
    pub expected_move_pct: Option<f64>,
    /// Mean absolute move over the same number of trading sessions, percent.
    pub historical_avg_move_pct: Option<f64>,
    /// expected_move_pct / historical_avg_move_pct.
    pub move_ratio: Option<f64>,
    /// Whether an earnings reaction session lies inside the realized window (hv then includes
    /// the report's move).
    pub earnings_in_window: bool,
    /// Sessions of the realized window.
    pub hv_window: usize,
    /// Sessions of the IV-rank lookback (today included).
    pub iv_rank_lookback: usize,
    /// The expiration whose straddle is priced.
    #[schema(value_type = Option<IsoDate>)]
    pub expiration: Option<NaiveDate>,
    /// Trading sessions to it: the horizon of the historical moves.
    pub days_to_expiration: Option<usize>,
    /// What `current_iv` is.
    pub iv_basis: &'static str,
    /// How `hv` is measured.
    pub hv_basis: &'static str,
}

/// One term of the score.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ComponentScore {
    /// The term's score, −100 … +100; null when its input is missing.
    pub score: Option<f64>,
    /// The nominal weight.
    pub weight: f64,
    /// The weight after renormalising over the available terms (0 when missing).
    pub weight_used: f64,
    /// How the score is computed from the input.
    pub formula: String,
    /// Why the term is missing, when it is.
    pub reason: Option<String>,
}

impl ComponentScore {
    fn of(term: TermScore, formula: String, reason: Option<String>) -> Self {
        Self {
            score: term.score,
            weight: term.weight,
            weight_used: term.weight_used,
            formula,
            reason: term.score.is_none().then_some(reason).flatten(),
        }
    }
}

/// The three terms.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ComponentScores {
    /// Volatility risk premium term.
    pub vrp: ComponentScore,
    /// IV-rank term.
    pub iv_rank: ComponentScore,
    /// Priced-against-typical move term.
    pub expected_vs_actual: ComponentScore,
}

/// The weight each term carried in this score (renormalised; 0 for a missing term).
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct WeightsUsed {
    /// Weight of the VRP term.
    pub vrp: f64,
    /// Weight of the IV-rank term.
    pub iv_rank: f64,
    /// Weight of the move term.
    pub expected_vs_actual: f64,
}

/// The `/mispricing-assessment/{ticker}` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct MispricingAssessmentPayload {
    /// Underlying symbol.
    pub ticker: String,
    /// `SELL_PREMIUM`, `BUY_PREMIUM` or `NEUTRAL` (`signal_rule`); null when no term is
    /// available.
    pub signal: Option<&'static str>,
    /// The thresholds behind `signal`.
    pub signal_rule: String,
    /// The weighted score, −100 … +100; positive when options look rich.
    pub mispricing_score: Option<f64>,
    /// How the score is formed from the terms.
    pub score_rule: String,
    /// Agreement of the terms × the share of the weight available, 0–100.
    pub confidence: Option<f64>,
    /// How `confidence` is formed.
    pub confidence_rule: String,
    /// The inputs of the terms.
    pub components: MispricingComponents,
    /// Each term's score, weight and formula.
    pub component_scores: ComponentScores,
    /// The weights the score was formed with (renormalised over the terms available).
    pub weights_used: WeightsUsed,
    /// Sum of the available terms' nominal weights, 0–1.
    pub weight_coverage: f64,
    /// The historical move distribution over `components.days_to_expiration` sessions (the
    /// `/historical-moves` block of that horizon); null without a priced expiration.
    pub historical_moves: Option<MoveAnalysis>,
    /// Unit of every figure.
    pub units: &'static str,
    /// Why terms are missing, when any is.
    pub reason: Option<String>,
    /// The instant the chain was priced.
    #[schema(value_type = Timestamp)]
    pub as_of: DateTime<Utc>,
    /// The freshness of the chain's session.
    #[serde(flatten)]
    pub freshness: Freshness,
}

/// `GET /mispricing-assessment/{ticker}`.
pub async fn mispricing_assessment(
    State(state): State<AppState>,
    CoveredTicker(ticker): CoveredTicker,
    _params: QueryParams,
) -> Result<Json<Envelope<MispricingAssessmentPayload>>, ApiError> {
    let read = VolRead::of(&state, ticker).await?;
    let ticker = &read.ticker;
    // IV rank and percentile exactly as /iv-rank answers them by default.
    let current_iv = read.iv30d();
    let ranked =
        current_iv.and_then(|today| ranked(&read.prior_iv30d(), today, IV_RANK_LOOKBACK_SESSIONS));
    let iv_rank = ranked.and_then(|r| r.iv_rank);
    // The premium as /vrp answers it over its default window.
    let closes = read.closes();
    let realized = hv(&closes, MISPRICING_HV_WINDOW);
    let premium = current_iv
        .zip(realized)
        .and_then(|(iv, rv)| vrp(iv, rv).ok())
        .map(|p| p.premium_pct);
    // The priced move against the typical one, as /expected-vs-actual answers it.
    let series = CloseSeries::of(&state, ticker)?;
    let priced = PricedAgainstTypical::of(&state, ticker, &read.chain, &series);
    let (priced, priced_error) = match priced {
        Ok(p) => (Some(p), None),
        Err(e) => (None, Some(e.to_string())),
    };
    let move_ratio = priced
        .as_ref()
        .and_then(|p| p.comparison)
        .and_then(|c| c.ratio);
    let read_out = mispricing(&MispricingInputs {
        iv_rank,
        vrp_points: premium,
        move_ratio,
    });
    let iv_reason = match (current_iv, ranked) {
        (None, _) => Some(no_iv30d(&read)),
        (Some(_), None) => Some(format!(
            "{} sessions with a stored iv30d before today: too few for an IV rank",
            read.prior_iv30d().len()
        )),
        (Some(_), Some(_)) => Some("the year's iv30d is flat (max = min): no IV rank".to_owned()),
    };
    let vrp_reason = match (current_iv, realized) {
        (None, _) => Some(no_iv30d(&read)),
        _ => Some(short_history(&read, MISPRICING_HV_WINDOW)),
    };
    let move_reason = priced_error
        .clone()
        .or_else(|| priced.as_ref().and_then(|p| p.error.clone()));
    let component_scores = ComponentScores {
        vrp: ComponentScore::of(read_out.vrp, vrp_formula(), vrp_reason),
        iv_rank: ComponentScore::of(read_out.iv_rank, iv_rank_formula(), iv_reason),
        expected_vs_actual: ComponentScore::of(
            read_out.expected_vs_actual,
            move_formula(),
            move_reason,
        ),
    };
    let reasons: Vec<String> = [
        ("vrp", &component_scores.vrp),
        ("iv_rank", &component_scores.iv_rank),
        ("expected_vs_actual", &component_scores.expected_vs_actual),
    ]
    .iter()
    .filter_map(|(name, c)| c.reason.as_ref().map(|r| format!("{name}: {r}")))
    .collect();
    Ok(ok(MispricingAssessmentPayload {
        ticker: ticker.to_string(),
        signal: read_out.signal,
        signal_rule: signal_rule(),
        mispricing_score: read_out.score,
        score_rule: score_rule(),
        confidence: read_out.confidence,
        confidence_rule: confidence_rule(),
        components: MispricingComponents {
            iv_rank,
            iv_percentile: ranked.map(|r| r.iv_percentile),
            current_iv,
            hv: realized,
            vrp: premium,
            expected_move_pct: priced.as_ref().map(|p| p.expected.expected_move_pct),
            historical_avg_move_pct: priced.as_ref().and_then(|p| p.moves.avg_abs_move_pct),
            move_ratio,
            earnings_in_window: earnings_in_window(
                closes.len(),
                MISPRICING_HV_WINDOW,
                &read.reaction_sessions,
            ),
            hv_window: MISPRICING_HV_WINDOW,
            iv_rank_lookback: IV_RANK_LOOKBACK_SESSIONS,
            expiration: priced.as_ref().map(|p| p.expected.expiration),
            days_to_expiration: priced.as_ref().map(|p| p.days_to_expiration),
            iv_basis: IV30_BASIS,
            hv_basis: HV_BASIS,
        },
        weights_used: WeightsUsed {
            vrp: read_out.vrp.weight_used,
            iv_rank: read_out.iv_rank.weight_used,
            expected_vs_actual: read_out.expected_vs_actual.weight_used,
        },
        weight_coverage: read_out.coverage,
        component_scores,
        historical_moves: priced.map(|p| p.moves),
        units: MISPRICING_UNITS,
        reason: (!reasons.is_empty()).then(|| reasons.join("; ")),
        as_of: read.chain.as_of,
        freshness: state.freshness_of(read.chain.trade_date),
    }))
}
