//! Implied volatility of one contract from its price, with a typed reason when none exists.

pub(crate) use super::lbr::householder_step;
use super::lbr::{NormalisedFailure, Solve, initial_guess};
use super::{InvalidInput, OptionInputs};

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
    let mut solve = prepare(inputs, price)?;
    if !householder_step(&mut solve) {
        householder_step(&mut solve);
    }
    Ok(finish(inputs, &solve))
}

/// Normalises the price and computes the initial guess: the first stage of a solve. Batch
/// kernels run [`prepare`], [`householder_step`] (once, then again where it returns false)
/// and [`finish`] row by row, exactly as [`implied_vol_unchecked`] does, so both give
/// identical bits.
#[inline]
pub(crate) fn prepare(inputs: &OptionInputs, price: f64) -> Result<Solve, ImpliedVolError> {
    let discount = inputs.discount();
    let forward = inputs.forward();
    let strike = inputs.strike;
    let theta = inputs.option_type.sign();
    let x = inputs.log_moneyness();
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
    let beta = (undiscounted - intrinsic) / sqrt_fk;
    initial_guess(beta, -x.abs()).map_err(|failure| match failure {
        NormalisedFailure::BelowIntrinsic => ImpliedVolError::BelowIntrinsic {
            price,
            intrinsic: intrinsic * discount,
        },
        NormalisedFailure::NoTimeValue => ImpliedVolError::NoTimeValue { price },
        NormalisedFailure::AboveMaximum => ImpliedVolError::AboveMaximum {
            price,
            maximum: maximum * discount,
        },
    })
}

/// The annualised volatility of a finished solve.
#[inline]
pub(crate) fn finish(inputs: &OptionInputs, solve: &Solve) -> f64 {
    solve.s / inputs.years.sqrt()
}
