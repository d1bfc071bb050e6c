//! Option pricing: Black–Scholes–Merton and Black-76 prices, the closed-form Greek set, and
//! implied volatility, for one contract or for whole arrays of them.
//!
//! # Conventions (the service's contract, see docs/conventions.md)
//! - Time `years` is calendar time to expiry / 365 ([`crate::time`] computes it).
//! - `rate` and `dividend_yield` are continuously compounded decimals (0.05 = 5 %).
//! - [`PricingModel::BlackScholesMerton`] takes the spot S and a dividend yield q; the forward is
//!   F = S·e^{(r−q)T}. [`PricingModel::Black76`] takes the forward F directly (index options are
//!   priced on the forward); its Greeks are with respect to F and hold F fixed when T or r move.
//! - Greek units are per share and listed on [`Greeks`].
//!
//! Prices are computed through Jäckel's normalised Black function, so far out-of-the-money
//! values keep full relative precision instead of suffering the cancellation of the textbook
//! formula; implied volatility is "Let's Be Rational".

mod batch;
mod black;
pub(crate) mod elementary;
mod greeks;
mod guess_table;
mod implied_vol;
mod lbr;
pub mod special;

pub use batch::{
    ArrowBatchError, ArrowChain, ChainColumns, GreekColumns, IvStatus, greeks_arrow,
    implied_vol_and_greeks_batch, implied_vol_arrow, implied_vols_batch,
};
pub use black::normalised_black;
pub use greeks::{Greeks, greeks, greeks_unchecked};
pub use implied_vol::{ImpliedVolError, implied_vol};

use std::fmt;

/// Call or put.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum OptionType {
    /// Right to buy at the strike.
    Call,
    /// Right to sell at the strike.
    Put,
}

impl OptionType {
    /// θ = +1 for calls, −1 for puts.
    #[inline]
    pub fn sign(self) -> f64 {
        match self {
            Self::Call => 1.0,
            Self::Put => -1.0,
        }
    }
}

impl fmt::Display for OptionType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Call => "call",
            Self::Put => "put",
        })
    }
}

/// Which model the underlying price is quoted in.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub enum PricingModel {
    /// Spot with continuous dividend yield (equities, ETFs).
    #[default]
    BlackScholesMerton,
    /// Forward (cash-settled index options).
    Black76,
}

/// The code the `chain` dataset stores for a model.
impl From<PricingModel> for optics_schemas::PricingModelCode {
    fn from(model: PricingModel) -> Self {
        match model {
            PricingModel::BlackScholesMerton => Self::Bsm,
            PricingModel::Black76 => Self::Black76,
        }
    }
}

/// The model of a stored `chain` row's code.
impl From<optics_schemas::PricingModelCode> for PricingModel {
    fn from(code: optics_schemas::PricingModelCode) -> Self {
        match code {
            optics_schemas::PricingModelCode::Bsm => Self::BlackScholesMerton,
            optics_schemas::PricingModelCode::Black76 => Self::Black76,
        }
    }
}

/// One contract and its market, in the service's units.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct OptionInputs {
    /// Call or put.
    pub option_type: OptionType,
    /// Spot (BSM) or forward (Black-76).
    pub model: PricingModel,
    /// Spot price for BSM, forward price for Black-76; dollars, > 0.
    pub underlying: f64,
    /// Strike; dollars, > 0.
    pub strike: f64,
    /// Time to expiry in years (calendar days / 365), > 0.
    pub years: f64,
    /// Continuously compounded risk-free rate, decimal.
    pub rate: f64,
    /// Continuously compounded dividend yield, decimal (BSM only; must be 0 for Black-76).
    pub dividend_yield: f64,
}

/// A rejected input, naming the field and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("invalid {field}: {reason}")]
pub struct InvalidInput {
    /// The offending field.
    pub field: &'static str,
    /// What is wrong with it.
    pub reason: &'static str,
}

impl OptionInputs {
    /// Checks every field is finite and in its domain.
    pub fn validate(&self) -> Result<(), InvalidInput> {
        // Every rule below in one test without a branch per field (a batch validates every
        // row); the checks that name the field run only when it fails.
        let finite_positive = |value: f64| value.is_finite() & (value > 0.0);
        let in_domain = finite_positive(self.underlying)
            & finite_positive(self.strike)
            & finite_positive(self.years)
            & self.rate.is_finite()
            & self.dividend_yield.is_finite()
            & ((self.model != PricingModel::Black76) | (self.dividend_yield == 0.0));
        if in_domain {
            return Ok(());
        }
        let positive = |value: f64, field: &'static str| {
            if !value.is_finite() {
                Err(InvalidInput {
                    field,
                    reason: "must be a finite number",
                })
            } else if value <= 0.0 {
                Err(InvalidInput {
                    field,
                    reason: "must be greater than zero",
                })
            } else {
                Ok(())
            }
        };
        positive(self.underlying, "underlying")?;
        positive(self.strike, "strike")?;
        if self.years.is_nan() || self.years.is_infinite() {
            return Err(InvalidInput {
                field: "years",
                reason: "must be a finite number",
            });
        }
        if self.years <= 0.0 {
            return Err(InvalidInput {
                field: "years",
                reason: "the option has expired",
            });
        }
        if !self.rate.is_finite() {
            return Err(InvalidInput {
                field: "rate",
                reason: "must be a finite number",
            });
        }
        if !self.dividend_yield.is_finite() {
            return Err(InvalidInput {
                field: "dividend_yield",
                reason: "must be a finite number",
            });
        }
        if self.model == PricingModel::Black76 && self.dividend_yield != 0.0 {
            return Err(InvalidInput {
                field: "dividend_yield",
                reason: "does not apply to Black-76; the forward already carries it",
            });
        }
        Ok(())
    }

    /// ln(F/K), computed from spot, rate and yield without rounding F first.
    #[inline]
    pub fn log_moneyness(&self) -> f64 {
        let x = (self.underlying / self.strike).ln();
        match self.model {
            PricingModel::BlackScholesMerton => x + (self.rate - self.dividend_yield) * self.years,
            PricingModel::Black76 => x,
        }
    }

    /// The forward F.
    #[inline]
    pub fn forward(&self) -> f64 {
        match self.model {
            PricingModel::BlackScholesMerton => {
                self.underlying * ((self.rate - self.dividend_yield) * self.years).exp()
            }
            PricingModel::Black76 => self.underlying,
        }
    }

    /// The discount factor e^{−rT}.
    #[inline]
    pub fn discount(&self) -> f64 {
        (-self.rate * self.years).exp()
    }

    /// The discount, forward and log-moneyness, as [`discount`](Self::discount),
    /// [`forward`](Self::forward) and [`log_moneyness`](Self::log_moneyness) give them.
    #[inline]
    pub(crate) fn market_terms(&self) -> MarketTerms {
        MarketTerms {
            discount: self.discount(),
            forward: self.forward(),
            log_moneyness: self.log_moneyness(),
        }
    }

    /// Discounted intrinsic value on the forward: D·max(θ(F − K), 0).
    #[inline]
    pub fn intrinsic_value(&self) -> f64 {
        let forward = self.forward();
        let undiscounted = match self.option_type {
            OptionType::Call => (forward - self.strike).max(0.0),
            OptionType::Put => (self.strike - forward).max(0.0),
        };
        self.discount() * undiscounted
    }
}

/// Option value at volatility `vol` (decimal, annualised).
pub fn price(inputs: &OptionInputs, vol: f64) -> Result<f64, InvalidInput> {
    inputs.validate()?;
    if !(vol.is_finite() && vol >= 0.0) {
        return Err(InvalidInput {
            field: "vol",
            reason: "must be a finite number ≥ 0",
        });
    }
    Ok(price_unchecked(inputs, vol))
}

/// [`price`] without validation, for batch kernels that validated up front.
#[inline]
pub fn price_unchecked(inputs: &OptionInputs, vol: f64) -> f64 {
    let forward = inputs.forward();
    let x = inputs.log_moneyness();
    inputs.discount()
        * black::undiscounted_black_from_log_moneyness(
            forward,
            inputs.strike,
            x,
            vol * inputs.years.sqrt(),
            inputs.option_type.sign(),
        )
}

/// What pricing a contract derives from its market before any volatility: e^{−rT}, the forward
/// and ln(F/K), as [`OptionInputs::market_terms`] computes them. The implied-volatility solve
/// and the Greeks of one contract share them, and a batch shares the first two between the
/// contracts of one expiration ([`MarketTermsMemo`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct MarketTerms {
    /// e^{−rT}.
    pub(crate) discount: f64,
    /// The forward F.
    pub(crate) forward: f64,
    /// ln(F/K).
    pub(crate) log_moneyness: f64,
}

/// [`OptionInputs::market_terms`] over a run of contracts: the discount and forward (two
/// exponentials) are kept from the previous contract when its underlying, time, rate, yield and
/// model are the same bits (the contracts of one expiration), so each result is the one a
/// fresh computation gives.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct MarketTermsMemo {
    last: Option<([u64; 4], PricingModel, f64, f64)>,
}

impl MarketTermsMemo {
    #[inline]
    pub(crate) fn terms(&mut self, inputs: &OptionInputs) -> MarketTerms {
        let key = [
            inputs.underlying.to_bits(),
            inputs.years.to_bits(),
            inputs.rate.to_bits(),
            inputs.dividend_yield.to_bits(),
        ];
        let (discount, forward) = match self.last {
            Some((k, model, discount, forward)) if k == key && model == inputs.model => {
                (discount, forward)
            }
            _ => {
                let (discount, forward) = (inputs.discount(), inputs.forward());
                self.last = Some((key, inputs.model, discount, forward));
                (discount, forward)
            }
        };
        MarketTerms {
            discount,
            forward,
            log_moneyness: inputs.log_moneyness(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn valid(model: PricingModel) -> OptionInputs {
        OptionInputs {
            option_type: OptionType::Call,
            model,
            underlying: 100.0,
            strike: 95.0,
            years: 0.25,
            rate: 0.04,
            dividend_yield: 0.0,
        }
    }

    #[test]
    fn validation_names_the_first_field_out_of_its_domain() {
        let bsm = valid(PricingModel::BlackScholesMerton);
        assert_eq!(bsm.validate(), Ok(()));
        assert_eq!(valid(PricingModel::Black76).validate(), Ok(()));
        // Negative rates and yields are markets, not errors.
        let negative = OptionInputs {
            rate: -0.005,
            dividend_yield: -0.01,
            ..bsm
        };
        assert_eq!(negative.validate(), Ok(()));
        let field_of = |inputs: OptionInputs| inputs.validate().map_err(|e| e.field);
        for bad in [0.0, -1.0, f64::NAN, f64::INFINITY] {
            assert_eq!(
                field_of(OptionInputs {
                    underlying: bad,
                    ..bsm
                }),
                Err("underlying")
            );
            assert_eq!(field_of(OptionInputs { strike: bad, ..bsm }), Err("strike"));
            assert_eq!(field_of(OptionInputs { years: bad, ..bsm }), Err("years"));
        }
        for bad in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert_eq!(field_of(OptionInputs { rate: bad, ..bsm }), Err("rate"));
            assert_eq!(
                field_of(OptionInputs {
                    dividend_yield: bad,
                    ..bsm
                }),
                Err("dividend_yield")
            );
        }
        let black_with_yield = OptionInputs {
            dividend_yield: 0.01,
            ..valid(PricingModel::Black76)
        };
        assert_eq!(field_of(black_with_yield), Err("dividend_yield"));
        assert_eq!(
            OptionInputs { years: 0.0, ..bsm }
                .validate()
                .map_err(|e| e.reason),
            Err("the option has expired")
        );
    }
}
