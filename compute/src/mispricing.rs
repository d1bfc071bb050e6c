//! The composite premium read of `/mispricing-assessment`: three terms, each a score in
//! −100 … +100 (positive = options rich, a reason to sell premium), weighted into one
//! `mispricing_score`, a signal and a confidence.
//!
//! # Terms
//!
//! | term | input | unit of input | score | weight |
//! | --- | --- | --- | --- | --- |
//! | `vrp` | iv30d − 30-session realized vol | volatility points | clamp(100 · vrp / [`VRP_FULL_SCALE_POINTS`]) | [`VRP_WEIGHT`] |
//! | `iv_rank` | IV rank of iv30d over one year | 0–100 | clamp([`IV_RANK_SCORE_PER_POINT`] · (rank − [`IV_RANK_NEUTRAL`])) | [`IV_RANK_WEIGHT`] |
//! | `expected_vs_actual` | priced move / historical average move, same horizon | ratio | clamp(100 · (ratio − 1) / [`MOVE_RATIO_FULL_SCALE`]) | [`MOVE_WEIGHT`] |
//!
//! clamp() bounds a score to ±[`SCORE_LIMIT`]. The VRP term weighs 40 % (interface spec,
//! part 9); the nominal weights add up to 1.
//!
//! # Combination
//!
//! A term without its input (no IV history, no chain straddle, too few closes) drops out and
//! the weights of the others are renormalised: with A the available terms and wᵢ their nominal
//! weights,
//!
//! - `mispricing_score = Σ_A wᵢ·sᵢ / Σ_A wᵢ` (so still in −100 … +100);
//! - signal `SELL_PREMIUM` when the score is at least [`SELL_PREMIUM_FROM_SCORE`],
//!   `BUY_PREMIUM` when at most [`BUY_PREMIUM_TO_SCORE`], `NEUTRAL` otherwise;
//! - `confidence = 100 · agreement · coverage`, agreement = |Σ_A wᵢ·sᵢ| / Σ_A wᵢ·|sᵢ| (1 when
//!   every available term points the same way, lower as they cancel; 0 when every score is 0)
//!   and coverage = Σ_A wᵢ / Σ wᵢ (the share of the nominal weight that was available).
//!
//! No term available: no score, signal or confidence.

/// Weight of the volatility-risk-premium term.
pub const VRP_WEIGHT: f64 = 0.40;
/// Weight of the IV-rank term.
pub const IV_RANK_WEIGHT: f64 = 0.30;
/// Weight of the expected-versus-actual move term.
pub const MOVE_WEIGHT: f64 = 0.30;
/// Every term score and the composite lie within ± this.
pub const SCORE_LIMIT: f64 = 100.0;
/// The IV rank that scores 0.
pub const IV_RANK_NEUTRAL: f64 = 50.0;
/// Score points per IV-rank point away from [`IV_RANK_NEUTRAL`] (rank 100 scores +100).
pub const IV_RANK_SCORE_PER_POINT: f64 = 2.0;
/// The premium (volatility points) that scores ±100.
pub const VRP_FULL_SCALE_POINTS: f64 = 10.0;
/// The distance of the move ratio from 1 that scores ±100.
pub const MOVE_RATIO_FULL_SCALE: f64 = 0.5;
/// Composite score at or above which the signal is `SELL_PREMIUM`.
pub const SELL_PREMIUM_FROM_SCORE: f64 = 25.0;
/// Composite score at or below which the signal is `BUY_PREMIUM`.
pub const BUY_PREMIUM_TO_SCORE: f64 = -25.0;
/// The signals [`premium_signal`] returns.
pub const PREMIUM_SIGNALS: [&str; 3] = ["SELL_PREMIUM", "NEUTRAL", "BUY_PREMIUM"];

fn bounded(score: f64) -> f64 {
    score.clamp(-SCORE_LIMIT, SCORE_LIMIT)
}

/// The IV-rank term's score of `iv_rank` (0–100).
pub fn iv_rank_score(iv_rank: f64) -> f64 {
    bounded(IV_RANK_SCORE_PER_POINT * (iv_rank - IV_RANK_NEUTRAL))
}

/// The VRP term's score of a premium in volatility points.
pub fn vrp_score(vrp_points: f64) -> f64 {
    bounded(SCORE_LIMIT * vrp_points / VRP_FULL_SCALE_POINTS)
}

/// The move term's score of a priced / historical move ratio.
pub fn move_score(move_ratio: f64) -> f64 {
    bounded(SCORE_LIMIT * (move_ratio - 1.0) / MOVE_RATIO_FULL_SCALE)
}

/// The formula of [`iv_rank_score`], as a payload states it.
pub fn iv_rank_formula() -> String {
    format!(
        "clamp({IV_RANK_SCORE_PER_POINT} x (iv_rank - {IV_RANK_NEUTRAL}), \
         -{SCORE_LIMIT}, {SCORE_LIMIT})"
    )
}

/// The formula of [`vrp_score`].
pub fn vrp_formula() -> String {
    format!(
        "clamp({SCORE_LIMIT} x vrp / {VRP_FULL_SCALE_POINTS} points, -{SCORE_LIMIT}, \
         {SCORE_LIMIT})"
    )
}

/// The formula of [`move_score`].
pub fn move_formula() -> String {
    format!(
        "clamp({SCORE_LIMIT} x (move_ratio - 1) / {MOVE_RATIO_FULL_SCALE}, -{SCORE_LIMIT}, \
         {SCORE_LIMIT})"
    )
}

/// `SELL_PREMIUM`, `BUY_PREMIUM` or `NEUTRAL` for a composite score.
pub fn premium_signal(score: f64) -> &'static str {
    if score >= SELL_PREMIUM_FROM_SCORE {
        "SELL_PREMIUM"
    } else if score <= BUY_PREMIUM_TO_SCORE {
        "BUY_PREMIUM"
    } else {
        "NEUTRAL"
    }
}

/// The rule behind [`premium_signal`].
pub fn signal_rule() -> String {
    format!(
        "mispricing_score >= {SELL_PREMIUM_FROM_SCORE}: SELL_PREMIUM; \
         <= {BUY_PREMIUM_TO_SCORE}: BUY_PREMIUM; otherwise NEUTRAL"
    )
}

/// How the composite is formed.
pub fn score_rule() -> String {
    format!(
        "mispricing_score = sum(w x score) / sum(w) over the terms available; nominal weights \
         vrp {VRP_WEIGHT}, iv_rank {IV_RANK_WEIGHT}, expected_vs_actual {MOVE_WEIGHT}; a term \
         without its input drops out and the others' weights are renormalised (weights_used)"
    )
}

/// How the confidence is formed.
pub fn confidence_rule() -> String {
    "confidence = 100 x agreement x coverage; agreement = |sum(w x score)| / sum(w x |score|) \
     over the available terms (0 when every score is 0); coverage = sum of the available \
     terms' nominal weights / 1.0"
        .to_owned()
}

/// The inputs of the three terms; `None` (or a non-finite value) drops the term.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct MispricingInputs {
    /// IV rank, 0–100.
    pub iv_rank: Option<f64>,
    /// iv30d − realized vol, volatility points.
    pub vrp_points: Option<f64>,
    /// Priced / historical move ratio.
    pub move_ratio: Option<f64>,
}

/// One term of the composite.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct TermScore {
    /// The score, −100 … +100; `None` when the input is missing.
    pub score: Option<f64>,
    /// The nominal weight.
    pub weight: f64,
    /// The weight after renormalising over the available terms (0 when missing).
    pub weight_used: f64,
}

/// The composite read.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Mispricing {
    /// The VRP term.
    pub vrp: TermScore,
    /// The IV-rank term.
    pub iv_rank: TermScore,
    /// The expected-versus-actual term.
    pub expected_vs_actual: TermScore,
    /// Σ of the available terms' nominal weights, 0–1.
    pub coverage: f64,
    /// The composite, −100 … +100.
    pub score: Option<f64>,
    /// [`premium_signal`] of the score.
    pub signal: Option<&'static str>,
    /// 0–100.
    pub confidence: Option<f64>,
}

/// The composite of `inputs` (see the module docs).
pub fn mispricing(inputs: &MispricingInputs) -> Mispricing {
    let finite = |v: Option<f64>| v.filter(|x| x.is_finite());
    let terms = [
        (finite(inputs.vrp_points).map(vrp_score), VRP_WEIGHT),
        (finite(inputs.iv_rank).map(iv_rank_score), IV_RANK_WEIGHT),
        (finite(inputs.move_ratio).map(move_score), MOVE_WEIGHT),
    ];
    let nominal: f64 = terms.iter().map(|(_, w)| w).sum();
    let available: f64 = terms
        .iter()
        .filter(|(s, _)| s.is_some())
        .map(|(_, w)| w)
        .sum();
    let weighted: f64 = terms.iter().filter_map(|(s, w)| s.map(|s| w * s)).sum();
    let weighted_abs: f64 = terms
        .iter()
        .filter_map(|(s, w)| s.map(|s| w * s.abs()))
        .sum();
    let any = available > 0.0;
    let score = any.then(|| weighted / available);
    let coverage = available / nominal;
    let agreement = if weighted_abs > 0.0 {
        weighted.abs() / weighted_abs
    } else {
        0.0
    };
    let term = |(score, weight): (Option<f64>, f64)| TermScore {
        score,
        weight,
        weight_used: if score.is_some() {
            weight / available
        } else {
            0.0
        },
    };
    Mispricing {
        vrp: term(terms[0]),
        iv_rank: term(terms[1]),
        expected_vs_actual: term(terms[2]),
        coverage,
        score,
        signal: score.map(premium_signal),
        confidence: any.then_some(100.0 * agreement * coverage),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn near(a: f64, b: f64) -> bool {
        (a - b).abs() < 1e-12
    }

    #[test]
    fn weights_add_up_to_one_and_the_vrp_term_weighs_forty_percent() {
        assert!(near(VRP_WEIGHT + IV_RANK_WEIGHT + MOVE_WEIGHT, 1.0));
        assert!(near(VRP_WEIGHT, 0.40));
    }

    #[test]
    fn term_scores_and_their_bounds() {
        assert!(near(iv_rank_score(50.0), 0.0));
        assert!(near(iv_rank_score(80.0), 60.0));
        assert!(near(iv_rank_score(0.0), -100.0));
        assert!(near(iv_rank_score(100.0), 100.0));
        assert!(near(vrp_score(4.0), 40.0));
        assert!(near(vrp_score(25.0), 100.0));
        assert!(near(vrp_score(-12.0), -100.0));
        assert!(near(move_score(1.2), 40.0));
        assert!(near(move_score(0.8), -40.0));
        assert!(near(move_score(3.0), 100.0));
        assert!(near(move_score(0.0), -100.0));
    }

    #[test]
    fn all_terms_combine_with_their_nominal_weights() {
        // vrp 4 → 40, rank 80 → 60, ratio 0.8 → −40.
        let m = mispricing(&MispricingInputs {
            iv_rank: Some(80.0),
            vrp_points: Some(4.0),
            move_ratio: Some(0.8),
        });
        let sum = 0.4 * 40.0 + 0.3 * 60.0 + 0.3 * -40.0;
        assert!(near(m.score.unwrap(), sum));
        assert_eq!(m.signal, Some("NEUTRAL"));
        assert!(near(m.coverage, 1.0));
        let abs = 0.4 * 40.0 + 0.3 * 60.0 + 0.3 * 40.0;
        assert!(near(m.confidence.unwrap(), 100.0 * sum / abs));
        assert!(near(m.vrp.weight_used, 0.4));
        assert_eq!(m.vrp.score, Some(40.0));
    }

    #[test]
    fn a_missing_term_drops_out_and_the_rest_are_renormalised() {
        let m = mispricing(&MispricingInputs {
            iv_rank: Some(90.0),
            vrp_points: Some(6.0),
            move_ratio: None,
        });
        // rank 90 → 80, vrp 6 → 60.
        assert!(near(m.score.unwrap(), (0.3 * 80.0 + 0.4 * 60.0) / 0.7));
        assert_eq!(m.signal, Some("SELL_PREMIUM"));
        assert!(near(m.coverage, 0.7));
        // Both agree: agreement 1, confidence = coverage.
        assert!(near(m.confidence.unwrap(), 70.0));
        assert_eq!(m.expected_vs_actual.score, None);
        assert!(near(m.expected_vs_actual.weight_used, 0.0));
        assert!(near(m.vrp.weight_used, 0.4 / 0.7));
        assert!(near(m.iv_rank.weight_used + m.vrp.weight_used, 1.0));
        // A non-finite input counts as missing.
        let n = mispricing(&MispricingInputs {
            iv_rank: Some(f64::NAN),
            vrp_points: Some(-8.0),
            move_ratio: None,
        });
        assert!(near(n.score.unwrap(), -80.0));
        assert_eq!(n.signal, Some("BUY_PREMIUM"));
        assert!(near(n.confidence.unwrap(), 40.0));
    }

    #[test]
    fn nothing_available_and_all_zero() {
        let none = mispricing(&MispricingInputs::default());
        assert_eq!(
            (none.score, none.signal, none.confidence),
            (None, None, None)
        );
        assert!(near(none.coverage, 0.0));
        let flat = mispricing(&MispricingInputs {
            iv_rank: Some(50.0),
            vrp_points: Some(0.0),
            move_ratio: Some(1.0),
        });
        assert_eq!(flat.score, Some(0.0));
        assert_eq!(flat.signal, Some("NEUTRAL"));
        assert_eq!(flat.confidence, Some(0.0));
    }

    #[test]
    fn signal_thresholds_are_inclusive_and_rules_print_the_constants() {
        assert_eq!(premium_signal(25.0), "SELL_PREMIUM");
        assert_eq!(premium_signal(24.999), "NEUTRAL");
        assert_eq!(premium_signal(-25.0), "BUY_PREMIUM");
        assert_eq!(premium_signal(-24.999), "NEUTRAL");
        let rule = signal_rule();
        assert!(rule.contains(">= 25: SELL_PREMIUM") && rule.contains("<= -25: BUY_PREMIUM"));
        for s in PREMIUM_SIGNALS {
            assert!(rule.contains(s), "{s}");
        }
        assert!(score_rule().contains("vrp 0.4"));
        assert!(vrp_formula().contains("/ 10 points"));
        assert!(iv_rank_formula().contains("2 x (iv_rank - 50)"));
        assert!(move_formula().contains("(move_ratio - 1) / 0.5"));
        assert!(confidence_rule().contains("agreement x coverage"));
    }
}
