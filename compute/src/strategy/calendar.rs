//! Mixed expirations (calendars, diagonals): the P&L at the first expiration, numerically.
//!
//! The legs expiring first are worth their intrinsic value; every later leg is priced by
//! Black–Scholes at its own IV with its remaining time τ = T_leg − T_first, the spot and the
//! market's rate and dividend yield. On the spot model ([`PricingModel::BlackScholesMerton`],
//! equity and ETF options, which are American) a later leg is worth at least its intrinsic
//! value — the early-exercise floor — so a long deep-in-the-money back month never falls below
//! what exercising it would pay. On the forward model ([`PricingModel::Black76`], European
//! index options) there is no floor, and a later leg's forward at the first expiration is the
//! settlement price there times F(T_leg) / F(T_first), the ratio of the two expirations'
//! forwards on the market's curve: the carry the listed forwards imply between the two dates
//! (1 without a curve).
//!
//! The P&L is smooth between the first-expiration strikes, so the numbers are found on a grid:
//! 2,000 equal cells on [0, 3·max(strikes, reference price)] plus every strike. Breakevens are sign changes
//! between grid nodes refined by bisection to 1e-10 dollars of underlying price; a sign change
//! beyond the grid is found from the analytic asymptote (the slope and intercept of the P&L as
//! S → ∞). The maximum and minimum are the best grid nodes refined by golden-section search
//! between their neighbours, compared with the asymptotic limit when the P&L tends to a constant.
//! Two roots closer together than one cell (0.15 % of the range) would be missed; no listed
//! structure has that shape.

use super::leg::Leg;
use super::payoff::{Bound, IntervalSet, breakevens_of, net_premium_usd};
use super::{CONTRACT_MULTIPLIER, StrategyError};
use crate::pricing::{OptionInputs, OptionType, PricingModel, price_unchecked};
use crate::strategy::analysis::Market;

/// Equal cells of the search grid.
pub(crate) const GRID_CELLS: usize = 2_000;
/// The grid spans [0, GRID_SPAN × max(strikes, spot)].
pub(crate) const GRID_SPAN: f64 = 3.0;
/// Bisection stops when the bracket is narrower than this, dollars of underlying price.
const ROOT_TOLERANCE: f64 = 1e-10;

/// A later leg, pre-digested for fast repeated valuation.
#[derive(Debug, Clone, Copy)]
struct LaterLeg {
    leg: Leg,
    remaining_years: f64,
    iv: f64,
    /// Forward model: the leg's forward per dollar of first-expiration settlement price,
    /// F(T_leg) / F(T_first). 1 on the spot model (its carry is in the pricing formula).
    forward_per_price: f64,
}

/// The first-expiration P&L of a mixed-expiration position.
#[derive(Debug, Clone)]
pub(crate) struct FirstExpirationPnl {
    front: Vec<Leg>,
    later: Vec<LaterLeg>,
    market: Market,
    /// The price level of the first expiration (spot, or its forward): sizes the grid.
    reference_price: f64,
    net_premium_usd: f64,
    /// P&L ~ slope·S + intercept as S → ∞ (dollars per $1, dollars).
    asymptote_slope: f64,
    asymptote_intercept: f64,
}

impl FirstExpirationPnl {
    /// Splits the legs at the first expiration `first_years` (legs within `tolerance` of it
    /// are front legs). Later legs need an IV.
    pub(crate) fn new(
        legs: &[Leg],
        indices_later: impl Fn(usize) -> bool,
        first_years: f64,
        market: Market,
    ) -> Result<Self, StrategyError> {
        let mut front = Vec::new();
        let mut later = Vec::new();
        for (index, leg) in legs.iter().enumerate() {
            if indices_later(index) {
                let iv = leg.iv.ok_or_else(|| {
                    StrategyError::leg(
                        index,
                        "iv",
                        "is required for a leg expiring after the first expiration (it is \
                         priced by Black–Scholes at that date)",
                    )
                })?;
                let forward_per_price = match market.model {
                    PricingModel::BlackScholesMerton => 1.0,
                    PricingModel::Black76 => {
                        market.forward_at(leg.years_to_expiry) / market.forward_at(first_years)
                    }
                };
                later.push(LaterLeg {
                    leg: *leg,
                    remaining_years: leg.years_to_expiry - first_years,
                    iv,
                    forward_per_price,
                });
            } else {
                front.push(*leg);
            }
        }
        let net_premium = net_premium_usd(legs);
        let (mut slope, mut intercept) = (0.0, net_premium);
        for leg in front.iter().filter(|l| l.option_type == OptionType::Call) {
            slope += CONTRACT_MULTIPLIER * leg.signed_quantity();
            intercept -= CONTRACT_MULTIPLIER * leg.signed_quantity() * leg.strike;
        }
        for later_leg in later
            .iter()
            .filter(|l| l.leg.option_type == OptionType::Call)
        {
            let (s, i) = call_asymptote(later_leg, &market);
            slope += CONTRACT_MULTIPLIER * later_leg.leg.signed_quantity() * s;
            intercept += CONTRACT_MULTIPLIER * later_leg.leg.signed_quantity() * i;
        }
        let reference_price = market.reference_price(first_years);
        Ok(Self {
            front,
            later,
            market,
            reference_price,
            net_premium_usd: net_premium,
            asymptote_slope: slope,
            asymptote_intercept: intercept,
        })
    }

    /// P&L at the first expiration, dollars per one-lot.
    pub(crate) fn pnl_usd(&self, price: f64) -> f64 {
        let front: f64 = self
            .front
            .iter()
            .map(|leg| leg.signed_quantity() * leg.intrinsic(price))
            .sum();
        let later: f64 = self
            .later
            .iter()
            .map(|l| l.leg.signed_quantity() * later_value(l, &self.market, price))
            .sum();
        self.net_premium_usd + CONTRACT_MULTIPLIER * (front + later)
    }

    /// Strikes of every leg (the first-expiration kinks among them).
    fn strikes(&self) -> impl Iterator<Item = f64> + '_ {
        self.front
            .iter()
            .map(|l| l.strike)
            .chain(self.later.iter().map(|l| l.leg.strike))
    }

    fn is_front_strike(&self, price: f64) -> bool {
        self.front.iter().any(|l| l.strike == price)
    }

    /// Profit intervals, extremes; the numeric counterpart of
    /// [`super::payoff::expiration_payoff`].
    pub(crate) fn summary(&self) -> super::payoff::PayoffSummary {
        let top = self
            .strikes()
            .chain(std::iter::once(self.reference_price))
            .fold(0.0, f64::max)
            * GRID_SPAN;
        let mut nodes: Vec<f64> = (0..=GRID_CELLS)
            .map(|i| top * i as f64 / GRID_CELLS as f64)
            .chain(self.strikes())
            .collect();
        nodes.sort_by(f64::total_cmp);
        nodes.dedup();
        let values: Vec<f64> = nodes.iter().map(|&s| self.pnl_usd(s)).collect();

        let mut intervals = IntervalSet::default();
        let mut start = (values[0] > 0.0).then_some(0.0);
        for k in 1..nodes.len() {
            let (was, is) = (values[k - 1] > 0.0, values[k] > 0.0);
            if was != is {
                let root = self.bisect(nodes[k - 1], nodes[k], was);
                if is {
                    start = Some(root);
                } else if let Some(lower) = start.take() {
                    intervals.push(lower, Some(root));
                }
            }
        }
        // Beyond the grid: the sign the P&L ends with as S → ∞.
        let last = nodes.len() - 1;
        let ends_in_profit = if self.asymptote_slope != 0.0 {
            self.asymptote_slope > 0.0
        } else {
            self.asymptote_intercept > 0.0
        };
        let at_top_in_profit = values[last] > 0.0;
        if at_top_in_profit == ends_in_profit {
            if let Some(lower) = start.take() {
                intervals.push(lower, None);
            }
        } else if let Some(root) = self.root_beyond(nodes[last], at_top_in_profit) {
            if at_top_in_profit {
                if let Some(lower) = start.take() {
                    intervals.push(lower, Some(root));
                }
            } else {
                intervals.push(root, None);
            }
        } else if let Some(lower) = start.take() {
            intervals.push(lower, None);
        }
        let profit_intervals = intervals.into_vec();

        let max_profit = if self.asymptote_slope > 0.0 {
            Bound::Unbounded
        } else {
            let best = self.refine_extreme(&nodes, &values, 1.0);
            let limit = (self.asymptote_slope == 0.0).then_some(self.asymptote_intercept);
            Bound::Finite(limit.map_or(best, |l| best.max(l)))
        };
        let max_loss = if self.asymptote_slope < 0.0 {
            Bound::Unbounded
        } else {
            let worst = -self.refine_extreme(&nodes, &values, -1.0);
            let limit = (self.asymptote_slope == 0.0).then_some(self.asymptote_intercept);
            Bound::Finite(limit.map_or(worst, |l| worst.min(l)))
        };
        super::payoff::PayoffSummary {
            net_premium_usd: self.net_premium_usd,
            max_profit_usd: max_profit,
            max_loss_usd: max_loss,
            breakevens: breakevens_of(&profit_intervals),
            profit_intervals,
        }
    }

    /// The root in [a, b] where the P&L leaves (`left_in_profit`) or enters profit.
    fn bisect(&self, mut a: f64, mut b: f64, left_in_profit: bool) -> f64 {
        for _ in 0..200 {
            if b - a <= ROOT_TOLERANCE {
                break;
            }
            let mid = 0.5 * (a + b);
            if (self.pnl_usd(mid) > 0.0) == left_in_profit {
                a = mid;
            } else {
                b = mid;
            }
        }
        0.5 * (a + b)
    }

    /// The sign change above `top`, bracketed by doubling.
    fn root_beyond(&self, top: f64, top_in_profit: bool) -> Option<f64> {
        let mut a = top;
        let mut b = 2.0 * top;
        for _ in 0..60 {
            if (self.pnl_usd(b) > 0.0) != top_in_profit {
                return Some(self.bisect(a, b, top_in_profit));
            }
            a = b;
            b *= 2.0;
        }
        None
    }

    /// max over the grid of `sign`·P&L, refined by golden-section search between the best
    /// node's neighbours (unless it is a first-expiration kink, where the extreme is exact).
    /// Returns `sign`·(the extreme).
    fn refine_extreme(&self, nodes: &[f64], values: &[f64], sign: f64) -> f64 {
        let (best_index, best) = values.iter().map(|v| sign * v).enumerate().fold(
            (0, f64::NEG_INFINITY),
            |acc, (i, v)| {
                if v > acc.1 { (i, v) } else { acc }
            },
        );
        if best_index == 0
            || best_index + 1 == nodes.len()
            || self.is_front_strike(nodes[best_index])
        {
            return best;
        }
        let f = |s: f64| sign * self.pnl_usd(s);
        let (mut a, mut b) = (nodes[best_index - 1], nodes[best_index + 1]);
        let ratio = 0.5 * (5f64.sqrt() - 1.0);
        let mut c = b - ratio * (b - a);
        let mut d = a + ratio * (b - a);
        let (mut fc, mut fd) = (f(c), f(d));
        for _ in 0..80 {
            if b - a <= ROOT_TOLERANCE {
                break;
            }
            if fc > fd {
                b = d;
                d = c;
                fd = fc;
                c = b - ratio * (b - a);
                fc = f(c);
            } else {
                a = c;
                c = d;
                fc = fd;
                d = a + ratio * (b - a);
                fd = f(d);
            }
        }
        best.max(fc).max(fd)
    }
}

/// Slope and intercept of a later call's value as S → ∞ (per share).
fn call_asymptote(leg: &LaterLeg, market: &Market) -> (f64, f64) {
    let tau = leg.remaining_years;
    let discounted_strike = leg.leg.strike * (-market.rate * tau).exp();
    match market.model {
        PricingModel::Black76 => {
            // e^{−rτ}(ratio·S − K): the later forward is ratio·S.
            let discount = (-market.rate * tau).exp();
            (discount * leg.forward_per_price, -discounted_strike)
        }
        PricingModel::BlackScholesMerton => {
            let carry = (-market.dividend_yield * tau).exp();
            if market.dividend_yield > 0.0 {
                // e^{−qτ}·S − K·e^{−rτ} eventually falls below S − K: the floor rules.
                (1.0, -leg.leg.strike)
            } else {
                // q ≤ 0: e^{−qτ}·S − K·e^{−rτ} stays the larger term when e^{−qτ} > 1 or
                // r ≥ 0; only with q = 0 and r < 0 does the floor S − K win.
                let intercept = if market.rate >= 0.0 || carry > 1.0 {
                    -discounted_strike
                } else {
                    -leg.leg.strike
                };
                (carry, intercept)
            }
        }
    }
}

/// A later leg's value per share at the first expiration for underlying price `price`.
fn later_value(leg: &LaterLeg, market: &Market, price: f64) -> f64 {
    let tau = leg.remaining_years;
    let model_value = if price <= 0.0 {
        match leg.leg.option_type {
            OptionType::Call => 0.0,
            OptionType::Put => leg.leg.strike * (-market.rate * tau).exp(),
        }
    } else {
        let inputs = OptionInputs {
            option_type: leg.leg.option_type,
            model: market.model,
            underlying: price * leg.forward_per_price,
            strike: leg.leg.strike,
            years: tau,
            rate: market.rate,
            dividend_yield: match market.model {
                PricingModel::BlackScholesMerton => market.dividend_yield,
                PricingModel::Black76 => 0.0,
            },
        };
        price_unchecked(&inputs, leg.iv)
    };
    match market.model {
        PricingModel::BlackScholesMerton => model_value.max(leg.leg.intrinsic(price)),
        PricingModel::Black76 => model_value,
    }
}
