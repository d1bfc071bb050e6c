//! Strategy builders: strikes chosen from one expiration's chain (two for calendars) by delta
//! and width, premiums at the mid, then the full analysis.
//!
//! # Selection rules
//! - `target_delta` is the absolute per-share delta sought for the delta-chosen leg(s); it is
//!   clamped to [0.05, 0.50] ([`clamp_target_delta`] says whether it was).
//! - **By delta**: the usable side whose |delta| is nearest `target_delta`; a tie goes to the
//!   lower strike.
//! - **Width**: a wing is the listed strike beyond the reference strike (below for puts, above
//!   for calls) whose distance is nearest `width` dollars (fractional widths allowed); a tie
//!   goes to the wider one. A width smaller than the strike spacing gives the adjacent strike.
//! - **At the money**: the strike nearest the price with every needed side quoted; a tie
//!   goes to the lower strike. The price is the spot, or on the forward model (cash indices)
//!   the forward of the expiration searched ([`Market::reference_price`]).
//! - A side is usable when it has a two-sided uncrossed quote ([`super::SideQuote::is_usable`]).
//!
//! # Errors
//! A side with no usable quote at all, no strike quoted in both expirations of a calendar, or
//! wing strikes that are listed but unquoted are missing data
//! ([`StrategyError::MissingQuotes`]). Shorts that cross at the target delta (the put not
//! below the call) and a wing beyond the last listed strike are the request's constraints
//! ([`StrategyError::Unsatisfiable`], naming `target_delta` or `width`).
//!
//! # Structures (one-lot)
//! | strategy_type | legs |
//! | --- | --- |
//! | iron_condor | buy put wing, sell put by delta, sell call by delta, buy call wing |
//! | iron_butterfly | buy put wing, sell ATM put, sell ATM call, buy call wing |
//! | credit_spread, put_credit_spread, bull_put_spread | sell put by delta, buy put wing below |
//! | call_credit_spread, bear_call_spread | sell call by delta, buy call wing above |
//! | debit_spread, call_debit_spread, bull_call_spread | buy call by delta, sell call wing above |
//! | put_debit_spread, bear_put_spread | buy put by delta, sell put wing below |
//! | straddle | buy ATM call and put (long volatility) |
//! | strangle | buy call by delta and put by delta (put strike below call strike) |
//! | butterfly, call_butterfly / put_butterfly | buy wing below, sell 2 ATM, buy wing above (calls / puts) |
//! | calendar, call_calendar / put_calendar | sell the near ATM option, buy the far one at the same strike |

use super::StrategyError;
use super::analysis::{Market, StrategyAnalysis, analyze};
use super::chain::{ChainRow, ExpirationChain};
use super::leg::{Action, Leg};
use crate::pricing::OptionType;

/// The lowest and highest target delta accepted.
pub const TARGET_DELTA_RANGE: (f64, f64) = (0.05, 0.50);

/// Every strategy_type name [`StrategyType::parse`] accepts.
pub const STRATEGY_TYPE_NAMES: &[&str] = &[
    "iron_condor",
    "iron_butterfly",
    "credit_spread",
    "put_credit_spread",
    "bull_put_spread",
    "call_credit_spread",
    "bear_call_spread",
    "debit_spread",
    "call_debit_spread",
    "bull_call_spread",
    "put_debit_spread",
    "bear_put_spread",
    "straddle",
    "strangle",
    "butterfly",
    "call_butterfly",
    "put_butterfly",
    "calendar",
    "call_calendar",
    "put_calendar",
];

/// A structure the builder can assemble.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StrategyType {
    /// Short strangle with long wings.
    IronCondor,
    /// Short ATM straddle with long wings.
    IronButterfly,
    /// Short vertical on the given side (put: bull put spread; call: bear call spread).
    CreditSpread(OptionType),
    /// Long vertical on the given side (call: bull call spread; put: bear put spread).
    DebitSpread(OptionType),
    /// Long ATM call and put.
    Straddle,
    /// Long OTM call and put by delta.
    Strangle,
    /// Long butterfly on the given side, centred at the money.
    Butterfly(OptionType),
    /// Short near, long far at one strike on the given side.
    Calendar(OptionType),
}

impl StrategyType {
    /// Parses a strategy_type: any letter case, `-` or space for `_`.
    pub fn parse(text: &str) -> Result<Self, StrategyError> {
        let key = text.trim().to_ascii_lowercase().replace(['-', ' '], "_");
        Ok(match key.as_str() {
            "iron_condor" => Self::IronCondor,
            "iron_butterfly" => Self::IronButterfly,
            "credit_spread" | "put_credit_spread" | "bull_put_spread" => {
                Self::CreditSpread(OptionType::Put)
            }
            "call_credit_spread" | "bear_call_spread" => Self::CreditSpread(OptionType::Call),
            "debit_spread" | "call_debit_spread" | "bull_call_spread" => {
                Self::DebitSpread(OptionType::Call)
            }
            "put_debit_spread" | "bear_put_spread" => Self::DebitSpread(OptionType::Put),
            "straddle" => Self::Straddle,
            "strangle" => Self::Strangle,
            "butterfly" | "call_butterfly" => Self::Butterfly(OptionType::Call),
            "put_butterfly" => Self::Butterfly(OptionType::Put),
            "calendar" | "call_calendar" => Self::Calendar(OptionType::Call),
            "put_calendar" => Self::Calendar(OptionType::Put),
            _ => return Err(StrategyError::UnknownStrategyType(text.to_owned())),
        })
    }

    /// The display name.
    pub fn display_name(self) -> &'static str {
        match self {
            Self::IronCondor => "Iron Condor",
            Self::IronButterfly => "Iron Butterfly",
            Self::CreditSpread(OptionType::Put) => "Bull Put Credit Spread",
            Self::CreditSpread(OptionType::Call) => "Bear Call Credit Spread",
            Self::DebitSpread(OptionType::Call) => "Bull Call Debit Spread",
            Self::DebitSpread(OptionType::Put) => "Bear Put Debit Spread",
            Self::Straddle => "Long Straddle",
            Self::Strangle => "Long Strangle",
            Self::Butterfly(OptionType::Call) => "Long Call Butterfly",
            Self::Butterfly(OptionType::Put) => "Long Put Butterfly",
            Self::Calendar(OptionType::Call) => "Call Calendar",
            Self::Calendar(OptionType::Put) => "Put Calendar",
        }
    }

    /// Whether the structure needs a second, later expiration.
    pub fn needs_far_expiration(self) -> bool {
        matches!(self, Self::Calendar(_))
    }
}

/// Clamps a target delta to [`TARGET_DELTA_RANGE`]; returns it and whether it was clamped.
/// A non-finite value is an error.
pub fn clamp_target_delta(value: f64) -> Result<(f64, bool), StrategyError> {
    if !value.is_finite() {
        return Err(StrategyError::input(
            "target_delta",
            "must be a finite number",
        ));
    }
    let clamped = value.clamp(TARGET_DELTA_RANGE.0, TARGET_DELTA_RANGE.1);
    Ok((clamped, clamped != value))
}

/// A built strategy.
#[derive(Debug, Clone, PartialEq)]
pub struct BuiltStrategy {
    /// What was built.
    pub strategy: StrategyType,
    /// Display name with the strikes, e.g. `Iron Condor 95/100/110/115`.
    pub name: String,
    /// The legs, premiums at the mid, with the chain's Greeks and IV.
    pub legs: Vec<Leg>,
    /// The analysis record of the legs.
    pub analysis: StrategyAnalysis,
    /// The target delta used after clamping.
    pub target_delta: f64,
    /// Whether the requested target delta was clamped.
    pub target_delta_clamped: bool,
}

/// The display name of `strategy` with the strikes of `legs` in leg order, repeats dropped:
/// `Iron Condor 95/100/110/115`, `Bull Put Credit Spread 570/580`.
pub fn strategy_name(strategy: StrategyType, legs: &[Leg]) -> String {
    let mut strikes: Vec<f64> = legs.iter().map(|l| l.strike).collect();
    strikes.dedup();
    format!(
        "{} {}",
        strategy.display_name(),
        strikes
            .iter()
            .map(|s| s.to_string())
            .collect::<Vec<_>>()
            .join("/")
    )
}

/// Builds `strategy` from `near` (and `far` for calendars) around `target_delta` (clamped)
/// and `width_dollars`, then analyses it in `market`.
pub fn build_strategy(
    strategy: StrategyType,
    target_delta: f64,
    width_dollars: f64,
    near: &ExpirationChain,
    far: Option<&ExpirationChain>,
    market: &Market,
) -> Result<BuiltStrategy, StrategyError> {
    market.validate()?;
    let (target, clamped) = clamp_target_delta(target_delta)?;
    if !width_dollars.is_finite() || width_dollars <= 0.0 {
        return Err(StrategyError::input(
            "width",
            "must be a finite number of dollars greater than zero",
        ));
    }
    let rows = near.sorted_rows()?;
    let spot = market.reference_price(near.years_to_expiry);
    let picker = Picker {
        rows: &rows,
        target,
        width: width_dollars,
    };
    use Action::{Buy, Sell};
    use OptionType::{Call, Put};
    let leg = |index: usize, side: OptionType, action: Action, quantity: u32| {
        near.leg(&rows[index], side, action, quantity)
            .ok_or_else(|| StrategyError::MissingQuotes("a chosen strike lost its quote".into()))
    };
    let legs: Vec<Leg> = match strategy {
        StrategyType::IronCondor => {
            let short_put = picker.by_delta(Put)?;
            let short_call = picker.by_delta(Call)?;
            if rows[short_put].strike >= rows[short_call].strike {
                return Err(StrategyError::unsatisfiable(
                    "target_delta",
                    format!(
                        "at |delta| {target} the short put ({}) is not below the short call \
                         ({}); use a lower target_delta",
                        rows[short_put].strike, rows[short_call].strike
                    ),
                ));
            }
            let long_put = picker.wing(short_put, Put, "target_delta")?;
            let long_call = picker.wing(short_call, Call, "target_delta")?;
            vec![
                leg(long_put, Put, Buy, 1)?,
                leg(short_put, Put, Sell, 1)?,
                leg(short_call, Call, Sell, 1)?,
                leg(long_call, Call, Buy, 1)?,
            ]
        }
        StrategyType::IronButterfly => {
            let centre = picker.at_the_money(spot, &[Call, Put])?;
            let long_put = picker.wing(centre, Put, "width")?;
            let long_call = picker.wing(centre, Call, "width")?;
            vec![
                leg(long_put, Put, Buy, 1)?,
                leg(centre, Put, Sell, 1)?,
                leg(centre, Call, Sell, 1)?,
                leg(long_call, Call, Buy, 1)?,
            ]
        }
        StrategyType::CreditSpread(side) => {
            let short = picker.by_delta(side)?;
            let long = picker.wing(short, side, "target_delta")?;
            vec![leg(short, side, Sell, 1)?, leg(long, side, Buy, 1)?]
        }
        StrategyType::DebitSpread(side) => {
            let long = picker.by_delta(side)?;
            let short = picker.wing(long, side, "target_delta")?;
            vec![leg(long, side, Buy, 1)?, leg(short, side, Sell, 1)?]
        }
        StrategyType::Straddle => {
            let centre = picker.at_the_money(spot, &[Call, Put])?;
            vec![leg(centre, Call, Buy, 1)?, leg(centre, Put, Buy, 1)?]
        }
        StrategyType::Strangle => {
            let put = picker.by_delta(Put)?;
            let call = picker.by_delta(Call)?;
            if rows[put].strike >= rows[call].strike {
                return Err(StrategyError::unsatisfiable(
                    "target_delta",
                    format!(
                        "at |delta| {target} the put ({}) is not below the call ({}); use a \
                         lower target_delta",
                        rows[put].strike, rows[call].strike
                    ),
                ));
            }
            vec![leg(put, Put, Buy, 1)?, leg(call, Call, Buy, 1)?]
        }
        StrategyType::Butterfly(side) => {
            let centre = picker.at_the_money(spot, &[side])?;
            let lower = picker.wing_towards(centre, side, true, "width")?;
            let upper = picker.wing_towards(centre, side, false, "width")?;
            vec![
                leg(lower, side, Buy, 1)?,
                leg(centre, side, Sell, 2)?,
                leg(upper, side, Buy, 1)?,
            ]
        }
        StrategyType::Calendar(side) => {
            let far = far.ok_or_else(|| {
                StrategyError::input("expiration", "a calendar needs a second, later expiration")
            })?;
            if far.years_to_expiry <= near.years_to_expiry {
                return Err(StrategyError::input(
                    "expiration",
                    "the far expiration must be after the near one",
                ));
            }
            let far_rows = far.sorted_rows()?;
            let far_row = |strike: f64| {
                far_rows
                    .iter()
                    .find(|r| r.strike == strike && r.side(side).is_some())
            };
            let centre = rows
                .iter()
                .enumerate()
                .filter(|(_, r)| r.side(side).is_some() && far_row(r.strike).is_some())
                .min_by(|(_, a), (_, b)| {
                    (a.strike - spot).abs().total_cmp(&(b.strike - spot).abs())
                })
                .map(|(i, _)| i)
                .ok_or_else(|| {
                    StrategyError::MissingQuotes(format!(
                        "no {side} strike is quoted in both expirations"
                    ))
                })?;
            let back = far_row(rows[centre].strike)
                .and_then(|r| far.leg(r, side, Buy, 1))
                .ok_or_else(|| StrategyError::MissingQuotes("the far leg has no quote".into()))?;
            vec![leg(centre, side, Sell, 1)?, back]
        }
    };
    let analysis = analyze(&legs, market)?;
    let name = strategy_name(strategy, &legs);
    Ok(BuiltStrategy {
        strategy,
        name,
        legs,
        analysis,
        target_delta: target,
        target_delta_clamped: clamped,
    })
}

/// Strike selection over sorted rows.
struct Picker<'a> {
    rows: &'a [ChainRow],
    target: f64,
    width: f64,
}

impl Picker<'_> {
    /// The row whose `side` |delta| is nearest the target; ties to the lower strike.
    fn by_delta(&self, side: OptionType) -> Result<usize, StrategyError> {
        let mut best: Option<(usize, f64)> = None;
        for (index, row) in self.rows.iter().enumerate() {
            if let Some(quote) = row.side(side) {
                let miss = (quote.delta.abs() - self.target).abs();
                if best.is_none_or(|(_, m)| miss < m) {
                    best = Some((index, miss));
                }
            }
        }
        best.map(|(i, _)| i).ok_or_else(|| {
            StrategyError::MissingQuotes(format!("no {side} in the chain has a usable quote"))
        })
    }

    /// The wing beyond row `from` on the `side` where that option type is out of the money
    /// (below for puts, above for calls). `chosen_by` names the parameter that placed row
    /// `from`, for the error when no strike is listed beyond it.
    fn wing(
        &self,
        from: usize,
        side: OptionType,
        chosen_by: &'static str,
    ) -> Result<usize, StrategyError> {
        self.wing_towards(from, side, side == OptionType::Put, chosen_by)
    }

    /// The wing below (`below`) or above row `from` at the listed strike nearest `width`
    /// away with a usable `side`; ties to the wider. No strike listed beyond `from` is the
    /// request's constraint (`chosen_by` put it at the edge); strikes listed but unquoted
    /// are missing data.
    fn wing_towards(
        &self,
        from: usize,
        side: OptionType,
        below: bool,
        chosen_by: &'static str,
    ) -> Result<usize, StrategyError> {
        let reference = self.rows[from].strike;
        let candidates: Box<dyn Iterator<Item = usize>> = if below {
            Box::new((0..from).rev())
        } else {
            Box::new(from + 1..self.rows.len())
        };
        let mut best: Option<(usize, f64)> = None;
        for index in candidates {
            if self.rows[index].side(side).is_none() {
                continue;
            }
            let miss = ((self.rows[index].strike - reference).abs() - self.width).abs();
            // Walking outward, `<=` lets the wider strike win a tie.
            if best.is_none_or(|(_, m)| miss <= m) {
                best = Some((index, miss));
            }
        }
        let direction = if below { "below" } else { "above" };
        let listed_beyond = if below {
            from > 0
        } else {
            from + 1 < self.rows.len()
        };
        best.map(|(i, _)| i).ok_or_else(|| {
            if listed_beyond {
                StrategyError::MissingQuotes(format!(
                    "no {side} strike {direction} {reference} has a usable quote for the wing"
                ))
            } else {
                StrategyError::unsatisfiable(
                    chosen_by,
                    format!(
                        "no strike is listed {direction} the {side} at {reference} for the \
                         wing; {}",
                        if chosen_by == "target_delta" {
                            "choose a target_delta that lands nearer the money"
                        } else {
                            "choose another expiration"
                        }
                    ),
                )
            }
        })
    }

    /// The strike nearest `spot` with every side in `sides` usable; ties to the lower strike.
    fn at_the_money(&self, spot: f64, sides: &[OptionType]) -> Result<usize, StrategyError> {
        let mut best: Option<(usize, f64)> = None;
        for (index, row) in self.rows.iter().enumerate() {
            if sides.iter().all(|&s| row.side(s).is_some()) {
                let distance = (row.strike - spot).abs();
                if best.is_none_or(|(_, d)| distance < d) {
                    best = Some((index, distance));
                }
            }
        }
        best.map(|(i, _)| i).ok_or_else(|| {
            StrategyError::MissingQuotes("no strike has the quotes needed at the money".into())
        })
    }
}
