//! The credit-spread and iron-condor optimizer over one expiration's listed strikes.
//!
//! # Candidates
//! A put credit spread sells a put struck at or below the underlying price and buys a lower
//! one; a call credit spread sells a call at or above it and buys a higher one; an iron
//! condor is one of each with the short put strictly below the short call. Constraints
//! ([`OptimizeConstraints`]): each short's |delta| within the range, each wing at most
//! `max_width_dollars` wide, each vertical's credit (short mid − long mid) above 0 and below
//! its width (otherwise its quotes are inconsistent), the total credit at least
//! `min_credit_per_share`, and the total credit below the widest wing (a combination that
//! cannot lose at these mids is a quote artefact and is skipped).
//!
//! "At or below the underlying price" compares with the spot, or on the forward model (cash
//! indices) with the forward of the expiration searched, which is also the forward of the
//! probability objective.
//!
//! When nothing qualifies the error says why: no usable quote on a side, or no short in the
//! |delta| range, is missing data ([`StrategyError::MissingQuotes`]); no wing within
//! `max_width`, or no combination reaching `min_credit` (with the largest credit that is
//! available), is the request's constraint ([`StrategyError::Unsatisfiable`]).
//!
//! # Objectives (larger is better; C = credit per share, W = the wider wing)
//! - `max_profit`: C (max profit = 100·C per one-lot).
//! - `min_loss`: C − W (max loss = 100·(C − W), the least negative wins).
//! - `risk_reward`: C / (W − C), the analysis's risk_reward_ratio.
//! - `probability`: the probability of profit by the service's rule (lognormal at expiry, the
//!   IV of the short struck closest to the spot, the mean of both on a tie).
//!
//! Ties (equal objective to the last bit) go to the larger credit, then the narrower wider
//! wing, then the lower strikes (long put, short put, short call, long call in that order).
//!
//! # Search
//! [`optimize_exhaustive`] evaluates every combination. [`optimize`] returns the same winner
//! with far fewer probability evaluations: for a fixed put spread and short call strike, the
//! probability depends on the call wing only through the total credit C and through whether
//! the call side can lose at all (C > its width), and it never decreases as C grows — both
//! breakevens move outward. So within each of those two classes only the largest-credit wing
//! (ties as above) can win, and it alone is priced: at most two normal-distribution
//! evaluations per (put spread, short call) instead of one per call wing. The other objectives
//! are a few arithmetic operations per combination and are evaluated directly. Both searches
//! apply the same feasibility test and the same comparison, and the test suite checks they
//! agree on random chains. Cost: O(P·Q) cheap steps and O(P·S_c) probabilities, with P, Q the
//! feasible put / call spreads and S_c the short-call strikes (a full SPY expiration with the
//! default constraints: a few hundred spreads per side).

use super::StrategyError;
use super::analysis::{Market, StrategyAnalysis, analyze};
use super::builder::{StrategyType, strategy_name};
use super::chain::{ChainRow, ExpirationChain};
use super::leg::{Action, Leg};
use crate::pricing::OptionType;
use crate::probability::probability_between;

/// What the optimizer maximizes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptimizeTarget {
    /// The credit (max profit).
    MaxProfit,
    /// The max loss (least negative).
    MinLoss,
    /// Profit per dollar at risk.
    RiskReward,
    /// The probability of profit.
    Probability,
}

impl OptimizeTarget {
    /// Parses `max_profit`, `min_loss`, `risk_reward` or `probability` (any case), and
    /// `credit` (or `max_credit`) for `max_profit`: the structures searched are credit
    /// structures, whose max profit is their net credit (the original service's public
    /// assistant client sends `credit` by default).
    pub fn parse(text: &str) -> Result<Self, StrategyError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "max_profit" | "credit" | "max_credit" => Ok(Self::MaxProfit),
            "min_loss" => Ok(Self::MinLoss),
            "risk_reward" => Ok(Self::RiskReward),
            "probability" => Ok(Self::Probability),
            _ => Err(StrategyError::UnknownTarget(text.to_owned())),
        }
    }

    /// The name echoed as optimization_target.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::MaxProfit => "max_profit",
            Self::MinLoss => "min_loss",
            Self::RiskReward => "risk_reward",
            Self::Probability => "probability",
        }
    }
}

/// Every `target` [`OptimizeTarget::parse`] accepts.
pub const OPTIMIZE_TARGET_NAMES: &[&str] = &[
    "max_profit",
    "min_loss",
    "risk_reward",
    "probability",
    "credit",
    "max_credit",
];

/// Every `strategy_type` [`OptimizeStructure::parse`] accepts.
pub const OPTIMIZE_STRUCTURE_NAMES: &[&str] = &[
    "iron_condor",
    "credit_spread",
    "put_credit_spread",
    "bull_put_spread",
    "call_credit_spread",
    "bear_call_spread",
];

/// Which structure to search.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OptimizeStructure {
    /// Put spread + call spread.
    IronCondor,
    /// A credit spread on the given side, or on either side (`None`: the better one wins).
    CreditSpread(Option<OptionType>),
}

impl OptimizeStructure {
    /// Parses `iron_condor`, `credit_spread` (either side), `put_credit_spread` (or
    /// `bull_put_spread`) or `call_credit_spread` (or `bear_call_spread`), any case; anything
    /// else is a [`StrategyError::Input`] on `strategy_type` listing them.
    pub fn parse(text: &str) -> Result<Self, StrategyError> {
        match text.trim().to_ascii_lowercase().as_str() {
            "iron_condor" => Ok(Self::IronCondor),
            "credit_spread" => Ok(Self::CreditSpread(None)),
            "put_credit_spread" | "bull_put_spread" => {
                Ok(Self::CreditSpread(Some(OptionType::Put)))
            }
            "call_credit_spread" | "bear_call_spread" => {
                Ok(Self::CreditSpread(Some(OptionType::Call)))
            }
            _ => Err(StrategyError::Input {
                field: "strategy_type",
                reason: format!(
                    "{text:?} cannot be optimized; expected iron_condor or credit_spread \
                     (put_credit_spread, call_credit_spread)"
                ),
            }),
        }
    }

    /// The canonical name, echoed as the optimize endpoint's `strategy_type`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::IronCondor => "iron_condor",
            Self::CreditSpread(None) => "credit_spread",
            Self::CreditSpread(Some(OptionType::Put)) => "put_credit_spread",
            Self::CreditSpread(Some(OptionType::Call)) => "call_credit_spread",
        }
    }
}

/// The widest wing searched, as a fraction of the underlying price: a wider wing is no
/// credit spread a trader would quote, and the search grows with the fourth power of the
/// strikes a wing may span.
pub const MAX_WIDTH_SPOT_FRACTION: f64 = 0.5;
/// The most (put spread, call spread) pairs an iron-condor search examines; a request whose
/// constraints allow more is refused before the search starts.
pub const MAX_CONDOR_PAIRS: usize = 2_000_000;

/// The search constraints.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OptimizeConstraints {
    /// Widest wing (long strike to short strike), dollars. Default 10.
    pub max_width_dollars: f64,
    /// Smallest total credit, dollars per share. Default 0.10.
    pub min_credit_per_share: f64,
    /// Smallest |delta| of a short leg. Default 0.05.
    pub min_short_abs_delta: f64,
    /// Largest |delta| of a short leg. Default 0.50.
    pub max_short_abs_delta: f64,
}

impl Default for OptimizeConstraints {
    fn default() -> Self {
        Self {
            max_width_dollars: 10.0,
            min_credit_per_share: 0.10,
            min_short_abs_delta: 0.05,
            max_short_abs_delta: 0.50,
        }
    }
}

impl OptimizeConstraints {
    fn validate(&self) -> Result<(), StrategyError> {
        if !self.max_width_dollars.is_finite() || self.max_width_dollars <= 0.0 {
            return Err(StrategyError::input(
                "max_width",
                "must be a finite number of dollars greater than zero",
            ));
        }
        if !self.min_credit_per_share.is_finite() || self.min_credit_per_share < 0.0 {
            return Err(StrategyError::input(
                "min_credit",
                "must be a finite number of dollars, zero or more",
            ));
        }
        let (lo, hi) = (self.min_short_abs_delta, self.max_short_abs_delta);
        if !(lo.is_finite() && hi.is_finite() && (0.0..=1.0).contains(&lo) && lo <= hi && hi <= 1.0)
        {
            return Err(StrategyError::input(
                "short_delta",
                "the short |delta| range must satisfy 0 ≤ min ≤ max ≤ 1",
            ));
        }
        Ok(())
    }
}

/// The optimizer's answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Optimized {
    /// What the winner is: an iron condor, or a credit spread on the side that won (a bull
    /// put or bear call credit spread).
    pub strategy: StrategyType,
    /// Its display name with the strikes, as the builder names it
    /// (`Iron Condor 570/580/620/630`).
    pub name: String,
    /// The winning legs (premiums at the mid).
    pub legs: Vec<Leg>,
    /// Their analysis record.
    pub analysis: StrategyAnalysis,
    /// The objective echoed.
    pub target: OptimizeTarget,
    /// The winner's objective value (units per [`OptimizeTarget`]; probability as a
    /// fraction).
    pub objective: f64,
    /// The winner's credit, dollars per share.
    pub credit_per_share: f64,
    /// Feasible combinations the search covered.
    pub combinations: u64,
}

/// One feasible vertical credit spread.
#[derive(Debug, Clone, Copy)]
struct Spread {
    side: OptionType,
    short_row: usize,
    long_row: usize,
    short_strike: f64,
    long_strike: f64,
    credit: f64,
    width: f64,
    short_iv: f64,
}

/// A scored candidate (one or two spreads).
#[derive(Debug, Clone, Copy)]
struct Candidate {
    objective: f64,
    credit: f64,
    width: f64,
    /// Strikes in the order long put, short put, short call, long call (absent legs 0).
    strikes: [f64; 4],
    spreads: [Option<Spread>; 2],
}

impl Candidate {
    /// The service's total order: objective, then credit, then narrower, then lower strikes.
    fn beats(&self, other: &Self) -> bool {
        if self.objective != other.objective {
            return self.objective > other.objective;
        }
        if self.credit != other.credit {
            return self.credit > other.credit;
        }
        if self.width != other.width {
            return self.width < other.width;
        }
        self.strikes
            .iter()
            .zip(&other.strikes)
            .find(|(a, b)| a != b)
            .is_some_and(|(a, b)| a < b)
    }
}

fn keep_best(best: &mut Option<Candidate>, candidate: Candidate) {
    if best.as_ref().is_none_or(|b| candidate.beats(b)) {
        *best = Some(candidate);
    }
}

/// What the objective needs besides the spreads.
#[derive(Debug, Clone, Copy)]
struct Context {
    target: OptimizeTarget,
    spot: f64,
    forward: f64,
    years: f64,
    min_credit: f64,
}

impl Context {
    /// Objective of a credit C over wings (w_put, w_call), or `None` when infeasible. `put`
    /// and `call` are the optional sides; probability needs the short strikes and IVs.
    fn objective(&self, put: Option<&Spread>, call: Option<&Spread>) -> Option<(f64, f64, f64)> {
        let credit = put.map_or(0.0, |s| s.credit) + call.map_or(0.0, |s| s.credit);
        let width = put
            .map_or(0.0, |s| s.width)
            .max(call.map_or(0.0, |s| s.width));
        if credit < self.min_credit || credit >= width {
            return None;
        }
        let objective = match self.target {
            OptimizeTarget::MaxProfit => credit,
            OptimizeTarget::MinLoss => credit - width,
            OptimizeTarget::RiskReward => credit / (width - credit),
            OptimizeTarget::Probability => self.probability(put, call, credit),
        };
        Some((objective, credit, width))
    }

    /// P(profit) at expiry: the profit region is (short put − C, short call + C), open on a
    /// side whose credit covers its width (that side cannot lose).
    fn probability(&self, put: Option<&Spread>, call: Option<&Spread>, credit: f64) -> f64 {
        let lower = put.and_then(|s| (credit <= s.width).then_some(s.short_strike - credit));
        let upper = call.and_then(|s| (credit <= s.width).then_some(s.short_strike + credit));
        let vol = match (put, call) {
            (Some(p), Some(c)) => {
                let (dp, dc) = (
                    (p.short_strike - self.spot).abs(),
                    (c.short_strike - self.spot).abs(),
                );
                if dp < dc {
                    p.short_iv
                } else if dc < dp {
                    c.short_iv
                } else {
                    0.5 * (p.short_iv + c.short_iv)
                }
            }
            (Some(s), None) | (None, Some(s)) => s.short_iv,
            (None, None) => return 0.0,
        };
        probability_between(
            self.forward,
            lower.filter(|l| *l > 0.0),
            upper,
            vol,
            self.years,
        )
    }

    fn candidate(&self, put: Option<&Spread>, call: Option<&Spread>) -> Option<Candidate> {
        let (objective, credit, width) = self.objective(put, call)?;
        Some(Candidate {
            objective,
            credit,
            width,
            strikes: [
                put.map_or(0.0, |s| s.long_strike),
                put.map_or(0.0, |s| s.short_strike),
                call.map_or(0.0, |s| s.short_strike),
                call.map_or(0.0, |s| s.long_strike),
            ],
            spreads: [put.copied(), call.copied()],
        })
    }
}

/// Every feasible vertical on `side`, grouped by short strike (ascending), wings outward.
fn spreads(
    rows: &[ChainRow],
    side: OptionType,
    spot: f64,
    constraints: &OptimizeConstraints,
) -> Vec<Spread> {
    let mut out = Vec::new();
    for (short_row, row) in rows.iter().enumerate() {
        let Some(short) = row.side(side) else {
            continue;
        };
        let out_of_the_money = match side {
            OptionType::Put => row.strike <= spot,
            OptionType::Call => row.strike >= spot,
        };
        let abs_delta = short.delta.abs();
        if !out_of_the_money
            || abs_delta < constraints.min_short_abs_delta
            || abs_delta > constraints.max_short_abs_delta
        {
            continue;
        }
        let wings: Box<dyn Iterator<Item = usize>> = match side {
            OptionType::Put => Box::new((0..short_row).rev()),
            OptionType::Call => Box::new(short_row + 1..rows.len()),
        };
        for long_row in wings {
            let width = (rows[long_row].strike - row.strike).abs();
            if width > constraints.max_width_dollars {
                break;
            }
            let Some(long) = rows[long_row].side(side) else {
                continue;
            };
            let credit = short.mid() - long.mid();
            if credit > 0.0 && credit < width {
                out.push(Spread {
                    side,
                    short_row,
                    long_row,
                    short_strike: row.strike,
                    long_strike: rows[long_row].strike,
                    credit,
                    width,
                    short_iv: short.iv,
                });
            }
        }
    }
    out
}

struct Prepared {
    rows: Vec<ChainRow>,
    context: Context,
    puts: Vec<Spread>,
    calls: Vec<Spread>,
    structure: OptimizeStructure,
    constraints: OptimizeConstraints,
}

fn prepare(
    structure: OptimizeStructure,
    target: OptimizeTarget,
    chain: &ExpirationChain,
    market: &Market,
    constraints: &OptimizeConstraints,
) -> Result<Prepared, StrategyError> {
    market.validate()?;
    constraints.validate()?;
    let rows = chain.sorted_rows()?;
    let spot = market.reference_price(chain.years_to_expiry);
    let widest = MAX_WIDTH_SPOT_FRACTION * spot;
    if constraints.max_width_dollars > widest {
        return Err(StrategyError::input(
            "max_width",
            format!(
                "at most {widest:.2} dollars ({}% of the underlying price {spot:.2}) is searched",
                MAX_WIDTH_SPOT_FRACTION * 100.0
            ),
        ));
    }
    let wants = |side| match structure {
        OptimizeStructure::IronCondor | OptimizeStructure::CreditSpread(None) => true,
        OptimizeStructure::CreditSpread(Some(s)) => s == side,
    };
    let puts = if wants(OptionType::Put) {
        spreads(&rows, OptionType::Put, spot, constraints)
    } else {
        Vec::new()
    };
    let calls = if wants(OptionType::Call) {
        spreads(&rows, OptionType::Call, spot, constraints)
    } else {
        Vec::new()
    };
    let pairs = puts.len().saturating_mul(calls.len());
    if structure == OptimizeStructure::IronCondor && pairs > MAX_CONDOR_PAIRS {
        return Err(StrategyError::input(
            "max_width",
            format!(
                "{} put spreads and {} call spreads make {pairs} condors, more than the \
                 {MAX_CONDOR_PAIRS} one search examines: narrow max_width or the short delta range",
                puts.len(),
                calls.len()
            ),
        ));
    }
    let context = Context {
        target,
        spot,
        forward: market.forward_at(chain.years_to_expiry),
        years: chain.years_to_expiry,
        min_credit: constraints.min_credit_per_share,
    };
    Ok(Prepared {
        rows,
        context,
        puts,
        calls,
        structure,
        constraints: *constraints,
    })
}

/// The best credit spread or iron condor in `chain` for `target` under `constraints`.
pub fn optimize(
    structure: OptimizeStructure,
    target: OptimizeTarget,
    chain: &ExpirationChain,
    market: &Market,
    constraints: &OptimizeConstraints,
) -> Result<Optimized, StrategyError> {
    search(
        structure,
        target,
        chain,
        market,
        constraints,
        condors_pruned,
    )
}

/// [`optimize`] by plain enumeration of every combination: the reference the tests and the
/// benchmark compare it with.
pub fn optimize_exhaustive(
    structure: OptimizeStructure,
    target: OptimizeTarget,
    chain: &ExpirationChain,
    market: &Market,
    constraints: &OptimizeConstraints,
) -> Result<Optimized, StrategyError> {
    search(
        structure,
        target,
        chain,
        market,
        constraints,
        condors_exhaustive,
    )
}

/// The search both optimizers share; they differ only in how they enumerate iron condors.
fn search(
    structure: OptimizeStructure,
    target: OptimizeTarget,
    chain: &ExpirationChain,
    market: &Market,
    constraints: &OptimizeConstraints,
    condors: fn(&Prepared) -> (Option<Candidate>, u64),
) -> Result<Optimized, StrategyError> {
    let prepared = prepare(structure, target, chain, market, constraints)?;
    let (best, combinations) = match structure {
        OptimizeStructure::CreditSpread(_) => single_spreads(&prepared),
        OptimizeStructure::IronCondor => condors(&prepared),
    };
    finish(best, combinations, &prepared, chain, market, target)
}

/// Every put spread with every call spread above it.
fn condors_exhaustive(prepared: &Prepared) -> (Option<Candidate>, u64) {
    let mut best = None;
    let mut combinations = 0u64;
    for put in &prepared.puts {
        for call in &prepared.calls {
            if put.short_strike >= call.short_strike {
                continue;
            }
            if let Some(candidate) = prepared.context.candidate(Some(put), Some(call)) {
                combinations += 1;
                keep_best(&mut best, candidate);
            }
        }
    }
    (best, combinations)
}

fn single_spreads(prepared: &Prepared) -> (Option<Candidate>, u64) {
    let mut best = None;
    let mut combinations = 0u64;
    for spread in prepared.puts.iter().chain(&prepared.calls) {
        let candidate = match spread.side {
            OptionType::Put => prepared.context.candidate(Some(spread), None),
            OptionType::Call => prepared.context.candidate(None, Some(spread)),
        };
        if let Some(candidate) = candidate {
            combinations += 1;
            keep_best(&mut best, candidate);
        }
    }
    (best, combinations)
}

/// The iron-condor search with the probability evaluations pruned (module docs).
fn condors_pruned(prepared: &Prepared) -> (Option<Candidate>, u64) {
    let context = &prepared.context;
    // Call spreads grouped by short strike: [start, end) ranges into `calls`.
    let calls = &prepared.calls;
    let mut groups: Vec<(usize, usize)> = Vec::new();
    for (i, spread) in calls.iter().enumerate() {
        match groups.last_mut() {
            Some((_, end)) if calls[*end - 1].short_row == spread.short_row => *end = i + 1,
            _ => groups.push((i, i + 1)),
        }
    }
    let mut best: Option<Candidate> = None;
    let mut combinations = 0u64;
    let probability = context.target == OptimizeTarget::Probability;
    for put in &prepared.puts {
        for &(start, end) in &groups {
            if calls[start].short_strike <= put.short_strike {
                continue;
            }
            if !probability {
                for call in &calls[start..end] {
                    if let Some(candidate) = context.candidate(Some(put), Some(call)) {
                        combinations += 1;
                        keep_best(&mut best, candidate);
                    }
                }
                continue;
            }
            // Probability: per class (call side can / cannot lose), the wing with the largest
            // credit, then the narrower wider-wing, then the lower long call strike.
            let mut class_best: [Option<&Spread>; 2] = [None, None];
            for call in &calls[start..end] {
                let credit = put.credit + call.credit;
                let width = put.width.max(call.width);
                if credit < context.min_credit || credit >= width {
                    continue;
                }
                combinations += 1;
                let class = usize::from(credit > call.width);
                let slot = &mut class_best[class];
                let better = slot.is_none_or(|b| {
                    let b_credit = put.credit + b.credit;
                    let b_width = put.width.max(b.width);
                    credit > b_credit
                        || (credit == b_credit
                            && (width < b_width
                                || (width == b_width && call.long_strike < b.long_strike)))
                });
                if better {
                    *slot = Some(call);
                }
            }
            for call in class_best.into_iter().flatten() {
                if let Some(candidate) = context.candidate(Some(put), Some(call)) {
                    keep_best(&mut best, candidate);
                }
            }
        }
    }
    (best, combinations)
}

fn finish(
    best: Option<Candidate>,
    combinations: u64,
    prepared: &Prepared,
    chain: &ExpirationChain,
    market: &Market,
    target: OptimizeTarget,
) -> Result<Optimized, StrategyError> {
    let best = best.ok_or_else(|| no_winner(prepared))?;
    let mut legs = Vec::with_capacity(4);
    for spread in best.spreads.iter().flatten() {
        let short = &prepared.rows[spread.short_row];
        let long = &prepared.rows[spread.long_row];
        let pair = match spread.side {
            OptionType::Put => [(long, Action::Buy), (short, Action::Sell)],
            OptionType::Call => [(short, Action::Sell), (long, Action::Buy)],
        };
        for (row, action) in pair {
            legs.push(chain.leg(row, spread.side, action, 1).ok_or_else(|| {
                StrategyError::MissingQuotes("a chosen strike lost its quote".into())
            })?);
        }
    }
    let strategy = match best.spreads {
        [Some(_), Some(_)] => StrategyType::IronCondor,
        [Some(only), None] | [None, Some(only)] => StrategyType::CreditSpread(only.side),
        [None, None] => {
            return Err(StrategyError::MissingQuotes(
                "the winning combination has no spread".into(),
            ));
        }
    };
    let name = strategy_name(strategy, &legs);
    let analysis = analyze(&legs, market)?;
    Ok(Optimized {
        strategy,
        name,
        legs,
        analysis,
        target,
        objective: best.objective,
        credit_per_share: best.credit,
        combinations,
    })
}

/// Why no combination qualified: the first side or constraint that leaves nothing.
fn no_winner(prepared: &Prepared) -> StrategyError {
    let constraints = &prepared.constraints;
    let side_spreads = |side| match side {
        OptionType::Put => &prepared.puts,
        OptionType::Call => &prepared.calls,
    };
    // Why one side has no feasible vertical.
    let side_error = |side: OptionType| -> StrategyError {
        let spot = prepared.context.spot;
        let quoted = prepared.rows.iter().filter(|r| r.side(side).is_some());
        if quoted.clone().next().is_none() {
            return StrategyError::MissingQuotes(format!("no {side} has a usable quote"));
        }
        let shorts = quoted
            .filter(|r| match side {
                OptionType::Put => r.strike <= spot,
                OptionType::Call => r.strike >= spot,
            })
            .filter(|r| {
                r.side(side).is_some_and(|q| {
                    (constraints.min_short_abs_delta..=constraints.max_short_abs_delta)
                        .contains(&q.delta.abs())
                })
            })
            .count();
        if shorts == 0 {
            return StrategyError::MissingQuotes(format!(
                "no out-of-the-money {side} with a usable quote has |delta| between {} and {}",
                constraints.min_short_abs_delta, constraints.max_short_abs_delta
            ));
        }
        StrategyError::unsatisfiable(
            "max_width",
            format!(
                "no {side} wing within ${} of a short strike is quoted for a credit between 0 \
                 and its width",
                constraints.max_width_dollars
            ),
        )
    };
    let short_of_min_credit = |best_credit: f64, what: &str| {
        StrategyError::unsatisfiable(
            "min_credit",
            format!(
                "no {what} within max_width ${} collects ${} a share; the most one collects is \
                 ${:.2}",
                constraints.max_width_dollars, constraints.min_credit_per_share, best_credit
            ),
        )
    };
    let max_credit = |spreads: &[Spread]| spreads.iter().map(|s| s.credit).fold(0.0, f64::max);
    match prepared.structure {
        OptimizeStructure::CreditSpread(Some(side)) => {
            let spreads = side_spreads(side);
            if spreads.is_empty() {
                side_error(side)
            } else {
                short_of_min_credit(max_credit(spreads), &format!("{side} credit spread"))
            }
        }
        OptimizeStructure::CreditSpread(None) => {
            if prepared.puts.is_empty() && prepared.calls.is_empty() {
                // Report the put side first unless only it lacks quotes outright.
                let put = side_error(OptionType::Put);
                let call = side_error(OptionType::Call);
                match (&put, &call) {
                    (StrategyError::Unsatisfiable { .. }, _) => put,
                    (_, StrategyError::Unsatisfiable { .. }) => call,
                    _ => put,
                }
            } else {
                let best = max_credit(&prepared.puts).max(max_credit(&prepared.calls));
                short_of_min_credit(best, "credit spread")
            }
        }
        OptimizeStructure::IronCondor => {
            if prepared.puts.is_empty() {
                return side_error(OptionType::Put);
            }
            if prepared.calls.is_empty() {
                return side_error(OptionType::Call);
            }
            // Only reached when nothing qualified: the plain pair scan costs O(P·Q) once.
            let mut best_credit: Option<f64> = None;
            for put in &prepared.puts {
                for call in &prepared.calls {
                    let credit = put.credit + call.credit;
                    if put.short_strike < call.short_strike && credit < put.width.max(call.width) {
                        best_credit = Some(best_credit.map_or(credit, |b: f64| b.max(credit)));
                    }
                }
            }
            match best_credit {
                Some(credit) => short_of_min_credit(credit, "iron condor"),
                None => StrategyError::unsatisfiable(
                    "max_width",
                    format!(
                        "no put spread and call spread within ${} combine into a condor (short \
                         put below the short call, credit below the widest wing)",
                        constraints.max_width_dollars
                    ),
                ),
            }
        }
    }
}

#[cfg(test)]
mod structure_tests {
    use super::{
        OPTIMIZE_STRUCTURE_NAMES, OPTIMIZE_TARGET_NAMES, OptimizeStructure, OptimizeTarget,
    };
    use crate::pricing::OptionType;

    #[test]
    fn every_listed_name_parses() {
        for name in OPTIMIZE_STRUCTURE_NAMES {
            assert!(OptimizeStructure::parse(name).is_ok(), "{name}");
        }
        for name in OPTIMIZE_TARGET_NAMES {
            assert!(OptimizeTarget::parse(name).is_ok(), "{name}");
        }
        assert!(OptimizeTarget::parse("best").is_err());
    }

    #[test]
    fn structures_parse_in_any_case_with_their_aliases() {
        let cases = [
            ("iron_condor", OptimizeStructure::IronCondor, "iron_condor"),
            (
                " Iron_Condor ",
                OptimizeStructure::IronCondor,
                "iron_condor",
            ),
            (
                "CREDIT_SPREAD",
                OptimizeStructure::CreditSpread(None),
                "credit_spread",
            ),
            (
                "bull_put_spread",
                OptimizeStructure::CreditSpread(Some(OptionType::Put)),
                "put_credit_spread",
            ),
            (
                "Put_Credit_Spread",
                OptimizeStructure::CreditSpread(Some(OptionType::Put)),
                "put_credit_spread",
            ),
            (
                "bear_call_spread",
                OptimizeStructure::CreditSpread(Some(OptionType::Call)),
                "call_credit_spread",
            ),
        ];
        for (text, structure, name) in cases {
            assert_eq!(OptimizeStructure::parse(text).unwrap(), structure, "{text}");
            assert_eq!(structure.as_str(), name);
        }
        assert_eq!(
            OptimizeStructure::parse("straddle")
                .unwrap_err()
                .to_string(),
            "strategy_type: \"straddle\" cannot be optimized; expected iron_condor or \
             credit_spread (put_credit_spread, call_credit_spread)"
        );
    }
}
