//! Implied volatility of one contract from its price, with a typed reason when none exists.

use super::lbr::lanes::{LaneOutcome, solve_block};
use super::lbr::{NormalisedFailure, householder_step, initial_guess};
use super::{InvalidInput, MarketTerms, OptionInputs};

/// Why a price has no implied volatility. Never a NaN or a made-up number.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
pub enum ImpliedVolError {
    /// The contract description itself is invalid (non-positive strike, expired, …).
    #[error(transparent)]
    InvalidInput(#[from] InvalidInput),
    /// The price is below the discounted intrinsic value: an arbitrage no volatility explains.
    #[error("price {price} is below the intrinsic value {intrinsic}; no volatility reproduces it")]
    BelowIntrinsic {
        /// The price given.
        price: f64,
        /// Discounted intrinsic value on the forward.
        intrinsic: f64,
    },
    /// The price equals the intrinsic value: there is no time value to imply a volatility from.
    #[error(
        "price {price} equals the intrinsic value; no time value is left to imply a volatility"
    )]
    NoTimeValue {
        /// The price given.
        price: f64,
    },
    /// The price reaches the no-arbitrage maximum (discounted forward for a call, discounted
    /// strike for a put), which only an infinite volatility attains.
    #[error("price {price} is at or above the no-arbitrage maximum {maximum}")]
    AboveMaximum {
        /// The price given.
        price: f64,
        /// The supremum of prices over all volatilities.
        maximum: f64,
    },
}

impl ImpliedVolError {
    /// A stable machine-readable code for payloads and Arrow columns.
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidInput(_) => "invalid_input",
            Self::BelowIntrinsic { .. } => "below_intrinsic",
            Self::NoTimeValue { .. } => "no_time_value",
            Self::AboveMaximum { .. } => "above_maximum",
        }
    }
}

/// Implied volatility (decimal, annualised) of `inputs` priced at `price` dollars.
pub fn implied_vol(inputs: &OptionInputs, price: f64) -> Result<f64, ImpliedVolError> {
    inputs.validate()?;
    if !price.is_finite() {
        return Err(InvalidInput {
            field: "price",
            reason: "must be a finite number",
        }
        .into());
    }
    implied_vol_unchecked(inputs, price)
}

/// [`implied_vol`] for inputs already validated (batch kernels validate once per row).
#[inline]
pub(crate) fn implied_vol_unchecked(
    inputs: &OptionInputs,
    price: f64,
) -> Result<f64, ImpliedVolError> {
    let normalised = normalise(inputs, price)?;
    let [outcome] = solve_block(&[normalised.beta], &[normalised.theta_x]);
    Ok(normalised.complete(outcome)? / inputs.years.sqrt())
}

/// A price in the coordinates of "Let's Be Rational" — the out-of-the-money normalised price
/// β = (undiscounted price − intrinsic)/√(F·K) at θx = −|ln(F/K)| — with what a failure
/// reports in dollars. A solve is: [`normalise`], [`solve_block`] (the common path, for one
/// contract or a block of them), then [`Normalised::complete`]; the batch kernels run exactly
/// these steps, so a contract gets the same bits alone or in a batch.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Normalised {
    pub(crate) beta: f64,
    pub(crate) theta_x: f64,
    price: f64,
    /// Discounted intrinsic value on the forward.
    intrinsic: f64,
    /// The discounted no-arbitrage maximum.
    maximum: f64,
}

/// Normalises `price` for `inputs`; a price at or above the no-arbitrage maximum fails here.
#[inline]
pub(crate) fn normalise(inputs: &OptionInputs, price: f64) -> Result<Normalised, ImpliedVolError> {
    normalise_with(inputs, &inputs.market_terms(), price)
}

/// [`normalise`] with the contract's market terms already computed.
#[inline]
pub(crate) fn normalise_with(
    inputs: &OptionInputs,
    terms: &MarketTerms,
    price: f64,
) -> Result<Normalised, ImpliedVolError> {
    let MarketTerms {
        discount,
        forward,
        log_moneyness: x,
    } = *terms;
    let strike = inputs.strike;
    let theta = inputs.option_type.sign();
    let undiscounted = price / discount;
    let sqrt_fk = forward.sqrt() * strike.sqrt();
    let maximum = if theta < 0.0 { strike } else { forward };
    if undiscounted >= maximum {
        return Err(ImpliedVolError::AboveMaximum {
            price,
            maximum: maximum * discount,
        });
    }
    // Reduce to the out-of-the-money option by put–call symmetry. The intrinsic part is removed
    // in price space, where F − K is exact for nearby values (Sterbenz), so deep in-the-money
    // time values keep every digit the price carries.
    let intrinsic = if theta < 0.0 {
        (strike - forward).max(0.0)
    } else {
        (forward - strike).max(0.0)
    };
    Ok(Normalised {
        beta: (undiscounted - intrinsic) / sqrt_fk,
        theta_x: -x.abs(),
        price,
        intrinsic: intrinsic * discount,
        maximum: maximum * discount,
    })
}

impl Normalised {
    /// The total volatility s = σ√T from the common path's outcome for this price.
    #[inline]
    pub(crate) fn complete(&self, outcome: LaneOutcome) -> Result<f64, ImpliedVolError> {
        match outcome {
            LaneOutcome::Solved(s) => Ok(s),
            LaneOutcome::Iterate(mut solve) => {
                householder_step(&mut solve);
                Ok(solve.s)
            }
            LaneOutcome::General => self.solve_general(),
        }
    }

    /// The general solve: the initial guess (which rejects prices without a volatility, with
    /// the reason) and at most two iterations.
    #[cold]
    fn solve_general(&self) -> Result<f64, ImpliedVolError> {
        let mut solve =
            initial_guess(self.beta, self.theta_x).map_err(|failure| match failure {
                NormalisedFailure::BelowIntrinsic => ImpliedVolError::BelowIntrinsic {
                    price: self.price,
                    intrinsic: self.intrinsic,
                },
                NormalisedFailure::NoTimeValue => {
                    ImpliedVolError::NoTimeValue { price: self.price }
                }
                NormalisedFailure::AboveMaximum => ImpliedVolError::AboveMaximum {
                    price: self.price,
                    maximum: self.maximum,
                },
            })?;
        if !householder_step(&mut solve) {
            householder_step(&mut solve);
        }
        Ok(solve.s)
    }
}
