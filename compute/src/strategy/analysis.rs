//! The strategy analysis record (spec 2.3) and the probability of profit.
//!
//! [`analyze`] values the legs at the first expiration — exactly when every leg expires then
//! ([`super::payoff`]), numerically otherwise (the calendar valuation, see the `calendar`
//! module docs) — and adds the probability of profit, the risk/reward ratio, net Greeks and
//! the P&L curve. [`probability_of_profit`] is the same computation without the rest, so the
//! pop and analyze-strategy endpoints agree for the same legs.

use super::calendar::FirstExpirationPnl;
use super::leg::Leg;
use super::payoff::{Bound, PayoffSummary, PriceInterval, expiration_payoff, expiration_pnl_usd};
use super::{CONTRACT_MULTIPLIER, MAX_LEGS, MAX_PRICE, StrategyError};
use crate::pricing::{OptionInputs, OptionType, PricingModel, greeks_unchecked};
use crate::probability::probability_between;

/// Legs whose years to expiry differ by less than this (about 32 seconds) expire together.
pub const SAME_EXPIRY_TOLERANCE_YEARS: f64 = 1e-6;

/// Points of the P&L curve spread evenly over its range (strikes and breakevens are added).
pub const PNL_CURVE_POINTS: usize = 101;

/// The forward of one listed expiration (forward model).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForwardPoint {
    /// Years to the expiration (calendar days / 365), > 0.
    pub years: f64,
    /// The expiration's forward, dollars, > 0.
    pub forward: f64,
}

/// The market the legs are valued in.
///
/// On the spot model the forward of a horizon T is S·e^{(r−q)T}. On the forward model (cash
/// indices, Black-76) every expiration has its own forward: `forward_curve` lists them, and
/// a leg is priced on the forward of its own expiration ([`Market::forward_at`]).
/// `underlying_price` is then the reference level the curve is quoted against (the service
/// reports the nearest expiration's forward as the index's `stock_price`), and moving it
/// moves every forward in proportion ([`Market::with_underlying_price`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Market {
    /// Spot (spot model), or the reference forward of the curve (forward model), dollars, > 0.
    pub underlying_price: f64,
    /// Continuously compounded risk-free rate, decimal.
    pub rate: f64,
    /// Continuously compounded dividend yield, decimal (0 on the forward model).
    pub dividend_yield: f64,
    /// Spot with yield (equities, ETFs) or forward (cash-settled indices).
    pub model: PricingModel,
    /// Forward model only: the forward of each listed expiration, ascending in years. Empty:
    /// `underlying_price` is the forward at every horizon.
    pub forward_curve: Vec<ForwardPoint>,
}

/// Curve points closer than this in years (about 32 seconds) are the same expiration.
const CURVE_YEARS_TOLERANCE: f64 = SAME_EXPIRY_TOLERANCE_YEARS;

impl Market {
    /// A spot-model market.
    pub fn spot(underlying_price: f64, rate: f64, dividend_yield: f64) -> Self {
        Self {
            underlying_price,
            rate,
            dividend_yield,
            model: PricingModel::BlackScholesMerton,
            forward_curve: Vec::new(),
        }
    }

    /// A forward-model market with one forward for every horizon.
    pub fn single_forward(forward: f64, rate: f64) -> Self {
        Self {
            underlying_price: forward,
            rate,
            dividend_yield: 0.0,
            model: PricingModel::Black76,
            forward_curve: Vec::new(),
        }
    }

    /// A forward-model market on a curve of per-expiration forwards (sorted here), quoted
    /// against `reference_price`.
    pub fn forward_curve(reference_price: f64, rate: f64, mut curve: Vec<ForwardPoint>) -> Self {
        curve.sort_by(|a, b| a.years.total_cmp(&b.years));
        Self {
            underlying_price: reference_price,
            rate,
            dividend_yield: 0.0,
            model: PricingModel::Black76,
            forward_curve: curve,
        }
    }

    /// The same market at another underlying price. On the forward model the price is read on
    /// the curve's own basis (the reference forward) and every forward moves in proportion,
    /// keeping the carry the curve implies between expirations.
    pub fn with_underlying_price(&self, price: f64) -> Self {
        let scale = price / self.underlying_price;
        Self {
            underlying_price: price,
            forward_curve: self
                .forward_curve
                .iter()
                .map(|p| ForwardPoint {
                    years: p.years,
                    forward: p.forward * scale,
                })
                .collect(),
            ..self.clone()
        }
    }

    /// Checks the fields are finite and in their domains.
    pub fn validate(&self) -> Result<(), StrategyError> {
        if !self.underlying_price.is_finite() || self.underlying_price <= 0.0 {
            return Err(StrategyError::input(
                "stock_price",
                "must be a finite number greater than zero",
            ));
        }
        if self.underlying_price > MAX_PRICE {
            return Err(StrategyError::input(
                "stock_price",
                format!("must be at most {MAX_PRICE:e} dollars"),
            ));
        }
        if !self.rate.is_finite() {
            return Err(StrategyError::input("rate", "must be a finite number"));
        }
        if !self.dividend_yield.is_finite() {
            return Err(StrategyError::input(
                "dividend_yield",
                "must be a finite number",
            ));
        }
        if self.model == PricingModel::Black76 && self.dividend_yield != 0.0 {
            return Err(StrategyError::input(
                "dividend_yield",
                "does not apply on the forward model",
            ));
        }
        if self.model == PricingModel::BlackScholesMerton && !self.forward_curve.is_empty() {
            return Err(StrategyError::input(
                "forward_curve",
                "applies to the forward model only (the spot model carries at r − q)",
            ));
        }
        let valid_points = self.forward_curve.iter().all(|p| {
            p.years.is_finite() && p.years >= 0.0 && p.forward.is_finite() && p.forward > 0.0
        });
        let ascending = self
            .forward_curve
            .windows(2)
            .all(|w| w[1].years > w[0].years);
        if !valid_points || !ascending {
            return Err(StrategyError::input(
                "forward_curve",
                "needs finite, positive forwards at distinct, ascending horizons",
            ));
        }
        Ok(())
    }

    /// The forward for a horizon of `years`. Spot model: S·e^{(r−q)T}. Forward model: the
    /// curve's forward at a listed expiration; between two, log-linear in time (a constant
    /// carry between them); before the first or after the last, that end's forward; without
    /// a curve, `underlying_price`.
    pub fn forward_at(&self, years: f64) -> f64 {
        match self.model {
            PricingModel::BlackScholesMerton => {
                self.underlying_price * ((self.rate - self.dividend_yield) * years).exp()
            }
            PricingModel::Black76 => {
                let curve = &self.forward_curve;
                let (Some(first), Some(last)) = (curve.first(), curve.last()) else {
                    return self.underlying_price;
                };
                if years <= first.years + CURVE_YEARS_TOLERANCE {
                    return first.forward;
                }
                if years >= last.years - CURVE_YEARS_TOLERANCE {
                    return last.forward;
                }
                let after = curve.partition_point(|p| p.years < years);
                let (a, b) = (curve[after - 1], curve[after]);
                if (b.years - years).abs() <= CURVE_YEARS_TOLERANCE {
                    return b.forward;
                }
                if (years - a.years).abs() <= CURVE_YEARS_TOLERANCE {
                    return a.forward;
                }
                let weight = (years - a.years) / (b.years - a.years);
                (a.forward.ln() + weight * (b.forward / a.forward).ln()).exp()
            }
        }
    }

    /// The price level the strikes of an expiration `years` away are compared with: the
    /// spot on the spot model, that expiration's forward on the forward model. "At the
    /// money", "out of the money" and "the leg struck closest to the price" use it.
    pub fn reference_price(&self, years: f64) -> f64 {
        match self.model {
            PricingModel::BlackScholesMerton => self.underlying_price,
            PricingModel::Black76 => self.forward_at(years),
        }
    }
}

/// How the payoff numbers were obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ValuationMethod {
    /// Every leg expires together: exact piecewise-linear analysis.
    ExactPiecewiseLinear,
    /// Mixed expirations: valued at the first expiration, later legs by Black–Scholes;
    /// breakevens and extremes are numeric.
    NumericFirstExpiration,
}

/// Aggregate Greeks per one-lot.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NetGreeks {
    /// Σ side·qty·100·delta: share-equivalents.
    pub delta_shares: f64,
    /// Σ side·qty·100·theta: dollars per calendar day.
    pub theta_usd_per_day: f64,
    /// Σ side·qty·100·vega: dollars per vol point.
    pub vega_usd_per_vol_point: f64,
}

/// The strategy analysis record.
#[derive(Debug, Clone, PartialEq)]
pub struct StrategyAnalysis {
    /// Credit positive, dollars per one-lot.
    pub net_premium_usd: f64,
    /// Largest P&L at the first expiration, dollars per one-lot.
    pub max_profit_usd: Bound,
    /// Smallest P&L at the first expiration, dollars per one-lot (negative when a loss is
    /// possible).
    pub max_loss_usd: Bound,
    /// max_profit / |max_loss|: dollars of potential profit per dollar at risk. Unbounded
    /// when the profit is unbounded or no loss is possible; 0 when the loss is unbounded or
    /// no profit is possible.
    pub risk_reward_ratio: Bound,
    /// Prices where the P&L changes sign, ascending.
    pub breakevens: Vec<f64>,
    /// Where the P&L is positive.
    pub profit_intervals: Vec<PriceInterval>,
    /// Probability that S at the first expiration lies in a profit interval, percent.
    pub probability_of_profit_pct: f64,
    /// The volatility used for that probability (decimal): see the module docs of
    /// [`super`].
    pub probability_vol: f64,
    /// Years to the first expiration (the valuation date).
    pub valuation_years: f64,
    /// The forward of the first expiration, dollars: the centre of the lognormal law.
    pub forward_at_valuation: f64,
    /// Aggregate Greeks.
    pub net_greeks: NetGreeks,
    /// (price, P&L) at the first expiration, ascending in price, dollars per one-lot.
    pub pnl_curve: Vec<(f64, f64)>,
    /// Exact or numeric.
    pub method: ValuationMethod,
}

/// Everything but the Greeks and the curve: the shared core of analyze and pop.
struct Valuation {
    summary: PayoffSummary,
    method: ValuationMethod,
    first_years: f64,
    front: Vec<bool>,
    numeric: Option<FirstExpirationPnl>,
}

fn value_legs(legs: &[Leg], market: &Market) -> Result<Valuation, StrategyError> {
    market.validate()?;
    if legs.is_empty() {
        return Err(StrategyError::NoLegs);
    }
    if legs.len() > MAX_LEGS {
        return Err(StrategyError::TooManyLegs {
            count: legs.len(),
            max: MAX_LEGS,
        });
    }
    let first_years = legs
        .iter()
        .map(|l| l.years_to_expiry)
        .fold(f64::INFINITY, f64::min);
    let front: Vec<bool> = legs
        .iter()
        .map(|l| l.years_to_expiry - first_years <= SAME_EXPIRY_TOLERANCE_YEARS)
        .collect();
    if front.iter().all(|&f| f) {
        Ok(Valuation {
            summary: expiration_payoff(legs)?,
            method: ValuationMethod::ExactPiecewiseLinear,
            first_years,
            front,
            numeric: None,
        })
    } else {
        let numeric = FirstExpirationPnl::new(legs, |i| !front[i], first_years, market.clone())?;
        Ok(Valuation {
            summary: numeric.summary(),
            method: ValuationMethod::NumericFirstExpiration,
            first_years,
            front,
            numeric: Some(numeric),
        })
    }
}

/// The volatility of the probability of profit: the IV of the leg struck closest to
/// `reference_price` (the spot, or the first expiration's forward on the forward model)
/// among the legs flagged in `front` (those expiring first), the mean of their IVs when
/// several legs tie. Errors name a tying leg without an IV.
pub fn probability_vol(
    legs: &[Leg],
    front: &[bool],
    reference_price: f64,
) -> Result<f64, StrategyError> {
    let distance = |leg: &Leg| (leg.strike - reference_price).abs();
    let nearest = legs
        .iter()
        .zip(front)
        .filter(|(_, f)| **f)
        .map(|(leg, _)| distance(leg))
        .fold(f64::INFINITY, f64::min);
    let (mut sum, mut count) = (0.0, 0u32);
    for (index, leg) in legs.iter().enumerate() {
        if front[index] && distance(leg) == nearest {
            let iv = leg.iv.ok_or_else(|| {
                StrategyError::leg(
                    index,
                    "iv",
                    "is required: the probability of profit uses the IV of the leg struck \
                     closest to the price",
                )
            })?;
            sum += iv;
            count += 1;
        }
    }
    if count == 0 {
        return Err(StrategyError::NoLegs);
    }
    Ok(sum / f64::from(count))
}

/// P(S_T in one of `intervals`) under the lognormal law, as a probability in [0, 1].
pub(crate) fn probability_in(
    intervals: &[PriceInterval],
    forward: f64,
    vol: f64,
    years: f64,
) -> f64 {
    intervals
        .iter()
        .map(|i| {
            let lower = (i.lower > 0.0).then_some(i.lower);
            probability_between(forward, lower, i.upper, vol, years)
        })
        .sum::<f64>()
        .clamp(0.0, 1.0)
}

/// The probability of profit and what it rests on: the pop endpoint's answer. It needs
/// nothing but the payoff and the IVs it uses (no Greeks).
#[derive(Debug, Clone, PartialEq)]
pub struct ProfitProbability {
    /// P(S at the first expiration lies in a profit interval), percent.
    pub probability_of_profit_pct: f64,
    /// The volatility used, decimal (see [`probability_vol`]).
    pub probability_vol: f64,
    /// Years to the first expiration.
    pub valuation_years: f64,
    /// The first expiration's forward, dollars.
    pub forward_at_valuation: f64,
    /// Prices where the P&L at the first expiration changes sign, ascending.
    pub breakevens: Vec<f64>,
    /// Where the P&L at the first expiration is positive.
    pub profit_intervals: Vec<PriceInterval>,
}

fn profit_probability_of(
    legs: &[Leg],
    market: &Market,
    valuation: &Valuation,
) -> Result<ProfitProbability, StrategyError> {
    let years = valuation.first_years;
    let vol = probability_vol(legs, &valuation.front, market.reference_price(years))?;
    let forward = market.forward_at(years);
    let intervals = &valuation.summary.profit_intervals;
    Ok(ProfitProbability {
        probability_of_profit_pct: 100.0 * probability_in(intervals, forward, vol, years),
        probability_vol: vol,
        valuation_years: years,
        forward_at_valuation: forward,
        breakevens: valuation.summary.breakevens.clone(),
        profit_intervals: intervals.clone(),
    })
}

/// The probability of profit of `legs` in `market` with its inputs (the pop endpoint). Same
/// numbers as [`analyze`]'s for the same legs and market.
pub fn profit_probability(
    legs: &[Leg],
    market: &Market,
) -> Result<ProfitProbability, StrategyError> {
    let valuation = value_legs(legs, market)?;
    profit_probability_of(legs, market, &valuation)
}

/// The probability of profit at the first expiration, percent: [`profit_probability`]'s
/// figure alone.
pub fn probability_of_profit(legs: &[Leg], market: &Market) -> Result<f64, StrategyError> {
    Ok(profit_probability(legs, market)?.probability_of_profit_pct)
}

/// The full analysis record of `legs` in `market`. Legs need an IV where it is used: the leg
/// struck closest to the price (probability), every leg expiring after the first (calendar
/// valuation), and every leg whose delta, theta or vega is not supplied (net Greeks).
pub fn analyze(legs: &[Leg], market: &Market) -> Result<StrategyAnalysis, StrategyError> {
    let valuation = value_legs(legs, market)?;
    let probability = profit_probability_of(legs, market, &valuation)?;
    let summary = valuation.summary;
    let net_greeks = net_greeks(legs, market)?;
    let (low, high) = pnl_curve_range(
        legs,
        &summary.breakevens,
        market.reference_price(valuation.first_years),
    );
    let mut prices: Vec<f64> = (0..PNL_CURVE_POINTS)
        .map(|i| low + (high - low) * i as f64 / (PNL_CURVE_POINTS - 1) as f64)
        .chain(legs.iter().map(|l| l.strike))
        .chain(summary.breakevens.iter().copied())
        .filter(|p| (low..=high).contains(p))
        .collect();
    prices.sort_by(f64::total_cmp);
    prices.dedup();
    let pnl_curve = prices
        .into_iter()
        .map(|price| {
            let pnl = match &valuation.numeric {
                None => expiration_pnl_usd(legs, summary.net_premium_usd, price),
                Some(numeric) => numeric.pnl_usd(price),
            };
            (price, pnl)
        })
        .collect();
    Ok(StrategyAnalysis {
        net_premium_usd: summary.net_premium_usd,
        risk_reward_ratio: risk_reward_ratio(summary.max_profit_usd, summary.max_loss_usd),
        max_profit_usd: summary.max_profit_usd,
        max_loss_usd: summary.max_loss_usd,
        breakevens: summary.breakevens,
        profit_intervals: summary.profit_intervals,
        probability_of_profit_pct: probability.probability_of_profit_pct,
        probability_vol: probability.probability_vol,
        valuation_years: valuation.first_years,
        forward_at_valuation: probability.forward_at_valuation,
        net_greeks,
        pnl_curve,
        method: valuation.method,
    })
}

/// The P&L at the first expiration, dollars per one-lot, at each of `prices`: exact intrinsic
/// values when every leg expires then, the calendar valuation otherwise (later legs by
/// Black–Scholes at their IV, as in [`analyze`]).
pub fn pnl_at_first_expiration(
    legs: &[Leg],
    market: &Market,
    prices: &[f64],
) -> Result<Vec<f64>, StrategyError> {
    let valuation = value_legs(legs, market)?;
    Ok(prices
        .iter()
        .map(|&price| match &valuation.numeric {
            None => expiration_pnl_usd(legs, valuation.summary.net_premium_usd, price),
            Some(numeric) => numeric.pnl_usd(price),
        })
        .collect())
}

/// max_profit / |max_loss| with the unbounded cases spelled out (see
/// [`StrategyAnalysis::risk_reward_ratio`]).
pub fn risk_reward_ratio(max_profit: Bound, max_loss: Bound) -> Bound {
    match (max_profit, max_loss) {
        (_, Bound::Unbounded) => Bound::Finite(0.0),
        (Bound::Unbounded, Bound::Finite(_)) => Bound::Unbounded,
        (Bound::Finite(profit), Bound::Finite(loss)) => {
            if profit <= 0.0 {
                Bound::Finite(0.0)
            } else if loss >= 0.0 {
                Bound::Unbounded
            } else {
                Bound::Finite(profit / -loss)
            }
        }
    }
}

/// The P&L curve's price range: from the lowest to the highest of the strikes, breakevens and
/// the reference price (the spot, or the first expiration's forward), widened on each side by
/// a quarter of that span or 5 % of the reference price, whichever is larger, and cut at zero.
pub fn pnl_curve_range(legs: &[Leg], breakevens: &[f64], underlying_price: f64) -> (f64, f64) {
    let points = legs
        .iter()
        .map(|l| l.strike)
        .chain(breakevens.iter().copied())
        .chain(std::iter::once(underlying_price));
    let (low, high) = points.fold((f64::INFINITY, f64::NEG_INFINITY), |(lo, hi), p| {
        (lo.min(p), hi.max(p))
    });
    let pad = (0.25 * (high - low)).max(0.05 * underlying_price);
    ((low - pad).max(0.0), high + pad)
}

/// Σ side·qty·100·greek per one-lot; supplied per-share Greeks win, the others come from
/// the market's model at the leg's IV — on the forward model at the forward of the leg's own
/// expiration (an expired leg: delta 1 in the money, theta and vega 0).
pub fn net_greeks(legs: &[Leg], market: &Market) -> Result<NetGreeks, StrategyError> {
    let mut total = NetGreeks::default();
    for (index, leg) in legs.iter().enumerate() {
        let (delta, theta, vega) = match (leg.delta, leg.theta, leg.vega) {
            (Some(d), Some(t), Some(v)) => (d, t, v),
            (d, t, v) => {
                let model = model_greeks(leg, market).ok_or_else(|| {
                    StrategyError::leg(
                        index,
                        "iv",
                        "is required to compute the Greeks the leg does not supply (delta, \
                         theta, vega)",
                    )
                })?;
                (
                    d.unwrap_or(model.0),
                    t.unwrap_or(model.1),
                    v.unwrap_or(model.2),
                )
            }
        };
        let weight = CONTRACT_MULTIPLIER * leg.signed_quantity();
        total.delta_shares += weight * delta;
        total.theta_usd_per_day += weight * theta;
        total.vega_usd_per_vol_point += weight * vega;
    }
    Ok(total)
}

/// (delta, theta, vega) per share from the model, or `None` without an IV.
fn model_greeks(leg: &Leg, market: &Market) -> Option<(f64, f64, f64)> {
    let iv = leg.iv?;
    let underlying = match market.model {
        PricingModel::BlackScholesMerton => market.underlying_price,
        PricingModel::Black76 => market.forward_at(leg.years_to_expiry),
    };
    if leg.years_to_expiry <= 0.0 {
        let in_the_money = match leg.option_type {
            OptionType::Call => underlying > leg.strike,
            OptionType::Put => underlying < leg.strike,
        };
        let delta = if in_the_money {
            leg.option_type.sign()
        } else {
            0.0
        };
        return Some((delta, 0.0, 0.0));
    }
    let inputs = OptionInputs {
        option_type: leg.option_type,
        model: market.model,
        underlying,
        strike: leg.strike,
        years: leg.years_to_expiry,
        rate: market.rate,
        dividend_yield: market.dividend_yield,
    };
    let greeks = greeks_unchecked(&inputs, iv);
    Some((greeks.delta, greeks.theta, greeks.vega))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::strategy::leg::Action;

    #[test]
    fn risk_reward_cases() {
        use Bound::{Finite, Unbounded};
        assert_eq!(
            risk_reward_ratio(Finite(300.0), Finite(-200.0)),
            Finite(1.5)
        );
        assert_eq!(risk_reward_ratio(Unbounded, Finite(-200.0)), Unbounded);
        assert_eq!(risk_reward_ratio(Finite(300.0), Unbounded), Finite(0.0));
        assert_eq!(risk_reward_ratio(Finite(300.0), Finite(0.0)), Unbounded);
        assert_eq!(risk_reward_ratio(Finite(-5.0), Finite(-200.0)), Finite(0.0));
    }

    #[test]
    fn curve_range_contains_strikes_breakevens_and_spot() {
        let leg = Leg {
            option_type: OptionType::Call,
            action: Action::Buy,
            strike: 120.0,
            years_to_expiry: 0.1,
            expiration: None,
            premium_per_share: 1.0,
            quantity: 1,
            iv: Some(0.3),
            iv_units_read: None,
            delta: None,
            theta: None,
            vega: None,
        };
        let (low, high) = pnl_curve_range(&[leg], &[121.0], 100.0);
        // Span 100..121, padded by max(¼·21, 5 % of 100) = 5.25 on each side.
        assert_eq!((low, high), (94.75, 126.25));
    }
}
