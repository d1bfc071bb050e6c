//! The exact expiration payoff of legs sharing one expiration.
//!
//! At expiration the P&L is piecewise linear in the underlying price S with kinks at the
//! strikes: P&L(S) = net_premium + 100·Σ side·qty·max(θ(S − K), 0). Its slope on each piece is
//! an exact integer multiple of 100 (Σ side·qty over the legs in the money there), so the
//! maxima and minima are found exactly among S = 0 and the strikes, the behaviour above the
//! highest strike is the sign of the call slope, and each breakeven is the root of one linear
//! piece.

use super::leg::Leg;
use super::{CONTRACT_MULTIPLIER, StrategyError};
use crate::pricing::OptionType;

/// A profit or loss extreme that may be unbounded.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Bound {
    /// A finite extreme, dollars per one-lot.
    Finite(f64),
    /// No finite extreme: the P&L grows without limit (profit) or falls without limit (loss)
    /// as the underlying rises.
    Unbounded,
}

impl Bound {
    /// The finite value, if any.
    pub fn finite(self) -> Option<f64> {
        match self {
            Self::Finite(value) => Some(value),
            Self::Unbounded => None,
        }
    }
}

/// An open interval of underlying prices (lower, upper); `upper = None` is +∞. A `lower` of 0
/// means "from zero": it is not a breakeven.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PriceInterval {
    /// Lower end, dollars, ≥ 0.
    pub lower: f64,
    /// Upper end, dollars; `None` for no upper end.
    pub upper: Option<f64>,
}

/// The economics of a position at its (first) expiration.
#[derive(Debug, Clone, PartialEq)]
pub struct PayoffSummary {
    /// Credit positive, dollars per one-lot: Σ −side·premium·qty·100.
    pub net_premium_usd: f64,
    /// The largest P&L, dollars per one-lot (negative when the position cannot profit).
    pub max_profit_usd: Bound,
    /// The smallest P&L, dollars per one-lot: negative whenever a loss is possible.
    pub max_loss_usd: Bound,
    /// Prices where the P&L changes sign, ascending.
    pub breakevens: Vec<f64>,
    /// Maximal intervals where the P&L is strictly positive, ascending and disjoint.
    pub profit_intervals: Vec<PriceInterval>,
}

/// Net premium of the legs, credit positive, dollars per one-lot.
pub fn net_premium_usd(legs: &[Leg]) -> f64 {
    -CONTRACT_MULTIPLIER
        * legs
            .iter()
            .map(|leg| leg.signed_quantity() * leg.premium_per_share)
            .sum::<f64>()
}

/// P&L at expiration, dollars per one-lot, for an underlying price `price` (all legs valued
/// at intrinsic value).
pub fn expiration_pnl_usd(legs: &[Leg], net_premium_usd: f64, price: f64) -> f64 {
    net_premium_usd
        + CONTRACT_MULTIPLIER
            * legs
                .iter()
                .map(|leg| leg.signed_quantity() * leg.intrinsic(price))
                .sum::<f64>()
}

/// The exact expiration analysis of legs that expire together (their `years_to_expiry` is
/// ignored). Fails only on an empty slice.
pub fn expiration_payoff(legs: &[Leg]) -> Result<PayoffSummary, StrategyError> {
    if legs.is_empty() {
        return Err(StrategyError::NoLegs);
    }
    let net_premium = net_premium_usd(legs);
    let mut nodes: Vec<f64> = legs.iter().map(|leg| leg.strike).collect();
    nodes.push(0.0);
    nodes.sort_by(f64::total_cmp);
    nodes.dedup();
    let values: Vec<f64> = nodes
        .iter()
        .map(|&price| expiration_pnl_usd(legs, net_premium, price))
        .collect();

    // Slope on each piece, exact: below the lowest strike only the puts move (−1 each per
    // share); crossing a strike adds side·qty for every leg struck there (a call starts to
    // gain, a put stops losing).
    let mut slopes = Vec::with_capacity(nodes.len());
    let mut slope = CONTRACT_MULTIPLIER
        * legs
            .iter()
            .filter(|leg| leg.option_type == OptionType::Put)
            .map(|leg| -leg.signed_quantity())
            .sum::<f64>();
    for &node in &nodes {
        slope += CONTRACT_MULTIPLIER
            * legs
                .iter()
                .filter(|leg| leg.strike == node)
                .map(Leg::signed_quantity)
                .sum::<f64>();
        // `slopes[k]` is the slope on (nodes[k], nodes[k + 1]), the last one to +∞.
        slopes.push(slope);
    }
    let tail_slope = slope;

    let mut intervals = IntervalSet::default();
    for k in 0..nodes.len() {
        let (a, va, m) = (nodes[k], values[k], slopes[k]);
        if let Some(&b) = nodes.get(k + 1) {
            let vb = values[k + 1];
            match (va > 0.0, vb > 0.0) {
                (true, true) => intervals.push(a, Some(b)),
                (true, false) => {
                    let root = if vb == 0.0 || m >= 0.0 {
                        b
                    } else {
                        (a - va / m).clamp(a, b)
                    };
                    intervals.push(a, Some(root));
                }
                (false, true) => {
                    let root = if va == 0.0 || m <= 0.0 {
                        a
                    } else {
                        (a - va / m).clamp(a, b)
                    };
                    intervals.push(root, Some(b));
                }
                (false, false) => {}
            }
        } else if va > 0.0 {
            let upper = (m < 0.0).then(|| a - va / m);
            intervals.push(a, upper);
        } else if m > 0.0 {
            intervals.push(a - va / m, None);
        }
    }

    let finite_max = values.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    let finite_min = values.iter().copied().fold(f64::INFINITY, f64::min);
    let profit_intervals = intervals.into_vec();
    Ok(PayoffSummary {
        net_premium_usd: net_premium,
        max_profit_usd: if tail_slope > 0.0 {
            Bound::Unbounded
        } else {
            Bound::Finite(finite_max)
        },
        max_loss_usd: if tail_slope < 0.0 {
            Bound::Unbounded
        } else {
            Bound::Finite(finite_min)
        },
        breakevens: breakevens_of(&profit_intervals),
        profit_intervals,
    })
}

/// The finite ends of the profit intervals, except a lower end at zero.
pub(crate) fn breakevens_of(intervals: &[PriceInterval]) -> Vec<f64> {
    let mut breakevens = Vec::with_capacity(2 * intervals.len());
    for interval in intervals {
        if interval.lower > 0.0 {
            breakevens.push(interval.lower);
        }
        if let Some(upper) = interval.upper {
            breakevens.push(upper);
        }
    }
    breakevens
}

/// Profit intervals collected left to right; touching intervals merge (a single price where
/// the P&L touches zero inside a profit region is not a breakeven).
#[derive(Debug, Default)]
pub(crate) struct IntervalSet {
    intervals: Vec<PriceInterval>,
}

impl IntervalSet {
    pub(crate) fn push(&mut self, lower: f64, upper: Option<f64>) {
        if upper.is_some_and(|u| u <= lower) {
            return;
        }
        if let Some(last) = self.intervals.last_mut()
            && last.upper.is_some_and(|u| u >= lower)
        {
            last.upper = upper;
            return;
        }
        self.intervals.push(PriceInterval { lower, upper });
    }

    pub(crate) fn into_vec(self) -> Vec<PriceInterval> {
        self.intervals
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::leg::Action;

    fn leg(option_type: OptionType, action: Action, strike: f64, premium: f64, qty: u32) -> Leg {
        Leg {
            option_type,
            action,
            strike,
            years_to_expiry: 0.1,
            expiration: None,
            premium_per_share: premium,
            quantity: qty,
            iv: Some(0.2),
            iv_units_read: None,
            delta: None,
            theta: None,
            vega: None,
        }
    }

    #[test]
    fn long_call_is_unbounded_above_and_loses_the_premium_below() {
        let summary =
            expiration_payoff(&[leg(OptionType::Call, Action::Buy, 100.0, 3.0, 1)]).unwrap();
        assert_eq!(summary.net_premium_usd, -300.0);
        assert_eq!(summary.max_profit_usd, Bound::Unbounded);
        assert_eq!(summary.max_loss_usd, Bound::Finite(-300.0));
        assert_eq!(summary.breakevens, vec![103.0]);
        assert_eq!(
            summary.profit_intervals,
            vec![PriceInterval {
                lower: 103.0,
                upper: None
            }]
        );
    }

    #[test]
    fn short_put_profit_starts_at_the_breakeven_and_loss_is_bounded_at_zero() {
        let summary =
            expiration_payoff(&[leg(OptionType::Put, Action::Sell, 50.0, 2.0, 1)]).unwrap();
        assert_eq!(summary.max_profit_usd, Bound::Finite(200.0));
        // At S = 0 the short put pays 50 − 2 per share.
        assert_eq!(summary.max_loss_usd, Bound::Finite(-4_800.0));
        assert_eq!(summary.breakevens, vec![48.0]);
    }

    #[test]
    fn flat_zero_segment_is_neither_profit_nor_a_breakeven() {
        // Long 100 call and short 100 call at the same premium: P&L ≡ 0.
        let summary = expiration_payoff(&[
            leg(OptionType::Call, Action::Buy, 100.0, 1.0, 1),
            leg(OptionType::Call, Action::Sell, 100.0, 1.0, 1),
        ])
        .unwrap();
        assert!(summary.profit_intervals.is_empty());
        assert!(summary.breakevens.is_empty());
        assert_eq!(summary.max_profit_usd, Bound::Finite(0.0));
        assert_eq!(summary.max_loss_usd, Bound::Finite(0.0));
    }

    #[test]
    fn touching_zero_inside_a_profit_region_keeps_one_interval() {
        // Long straddle at 100 with zero premium touches zero at 100 only.
        let summary = expiration_payoff(&[
            leg(OptionType::Call, Action::Buy, 100.0, 0.0, 1),
            leg(OptionType::Put, Action::Buy, 100.0, 0.0, 1),
        ])
        .unwrap();
        assert_eq!(
            summary.profit_intervals,
            vec![PriceInterval {
                lower: 0.0,
                upper: None
            }]
        );
        assert!(summary.breakevens.is_empty());
    }
}
