//! Strategy legs: the unvalidated input a parser fills, and the validated [`Leg`].

use chrono::NaiveDate;

use super::{
    IV_PERCENT_THRESHOLD, MAX_IV_DECIMAL, MAX_LEGS, MAX_PRICE, MAX_QUANTITY, StrategyError,
};
use crate::pricing::OptionType;

/// Buy or sell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Action {
    /// Long the contract.
    Buy,
    /// Short the contract.
    Sell,
}

impl Action {
    /// +1 for a long leg, −1 for a short one.
    #[inline]
    pub fn sign(self) -> f64 {
        match self {
            Self::Buy => 1.0,
            Self::Sell => -1.0,
        }
    }

    /// `BUY` / `SELL` in any letter case.
    pub fn parse(text: &str) -> Option<Self> {
        let text = text.trim();
        if text.eq_ignore_ascii_case("buy") {
            Some(Self::Buy)
        } else if text.eq_ignore_ascii_case("sell") {
            Some(Self::Sell)
        } else {
            None
        }
    }

    /// The upper-case label of the API.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Buy => "BUY",
            Self::Sell => "SELL",
        }
    }
}

/// `CALL` / `PUT` in any letter case.
pub fn parse_option_type(text: &str) -> Option<OptionType> {
    let text = text.trim();
    if text.eq_ignore_ascii_case("call") {
        Some(OptionType::Call)
    } else if text.eq_ignore_ascii_case("put") {
        Some(OptionType::Put)
    } else {
        None
    }
}

/// How a supplied IV number was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IvUnits {
    /// As a decimal (0.325 = 32.5 %).
    Decimal,
    /// As percentage points (32.5 = 32.5 %), because it was above [`IV_PERCENT_THRESHOLD`].
    PercentagePoints,
}

impl IvUnits {
    /// `decimal` / `percentage_points`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Decimal => "decimal",
            Self::PercentagePoints => "percentage_points",
        }
    }
}

/// Reads a supplied IV: finite and positive; above 5 it is percentage points. Returns the
/// decimal IV and how it was read, or why it was rejected.
pub fn read_iv(value: f64) -> Result<(f64, IvUnits), &'static str> {
    if !value.is_finite() {
        return Err("must be a finite number");
    }
    if value <= 0.0 {
        return Err("must be greater than zero");
    }
    let (decimal, units) = if value > IV_PERCENT_THRESHOLD {
        (value / 100.0, IvUnits::PercentagePoints)
    } else {
        (value, IvUnits::Decimal)
    };
    if decimal > MAX_IV_DECIMAL {
        return Err("is above 1000 % once read as percentage points");
    }
    Ok((decimal, units))
}

/// One leg as a parser delivers it: every field optional, types still text. JSON field names
/// (analyze-strategy / pop) are in brackets.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct LegInput {
    /// `CALL` or `PUT`, any case (`type`, or `option_type` for pop).
    pub option_type: Option<String>,
    /// `BUY` or `SELL`, any case (`action`).
    pub action: Option<String>,
    /// Strike in dollars (`strike`).
    pub strike: Option<f64>,
    /// Years to expiry, calendar days / 365: the caller converts `expiration` (or pop's
    /// `days_to_exp`) with [`crate::time::years_to_expiry`] and its clock.
    pub years_to_expiry: Option<f64>,
    /// The expiration date, echoed in outputs when known (`expiration`).
    pub expiration: Option<NaiveDate>,
    /// Premium in dollars per share (`premium`).
    pub premium: Option<f64>,
    /// Contracts; 1 when absent (`quantity`). A whole positive number.
    pub quantity: Option<f64>,
    /// IV, decimal or (above 5) percentage points (`iv`).
    pub iv: Option<f64>,
    /// Per-share delta (`delta`).
    pub delta: Option<f64>,
    /// Per-share theta, dollars per calendar day (`theta`).
    pub theta: Option<f64>,
    /// Per-share vega, dollars per vol point (`vega`).
    pub vega: Option<f64>,
}

/// A validated leg.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Leg {
    /// Call or put.
    pub option_type: OptionType,
    /// Buy or sell.
    pub action: Action,
    /// Strike, dollars, > 0.
    pub strike: f64,
    /// Years to expiry (calendar days / 365), ≥ 0.
    pub years_to_expiry: f64,
    /// Expiration date, when known.
    pub expiration: Option<NaiveDate>,
    /// Premium, dollars per share, ≥ 0.
    pub premium_per_share: f64,
    /// Contracts, ≥ 1.
    pub quantity: u32,
    /// IV as a decimal, when known.
    pub iv: Option<f64>,
    /// How the supplied IV was read (`None` when no IV was supplied).
    pub iv_units_read: Option<IvUnits>,
    /// Supplied per-share delta.
    pub delta: Option<f64>,
    /// Supplied per-share theta, dollars per calendar day.
    pub theta: Option<f64>,
    /// Supplied per-share vega, dollars per vol point.
    pub vega: Option<f64>,
}

impl Leg {
    /// side·quantity: +q for a long leg, −q for a short one.
    #[inline]
    pub fn signed_quantity(&self) -> f64 {
        self.action.sign() * f64::from(self.quantity)
    }

    /// Payoff per share at expiry for an underlying price `price`.
    #[inline]
    pub fn intrinsic(&self, price: f64) -> f64 {
        match self.option_type {
            OptionType::Call => (price - self.strike).max(0.0),
            OptionType::Put => (self.strike - price).max(0.0),
        }
    }
}

/// Validates parsed legs: at least one and at most [`MAX_LEGS`], every field present where
/// required, finite and in its domain. The error names the leg index and the JSON field
/// (the option type as `type`, analyze-strategy's name for it).
pub fn validate_legs(inputs: &[LegInput]) -> Result<Vec<Leg>, StrategyError> {
    validate_legs_named(inputs, "type")
}

/// [`validate_legs`] for a body that names the option type `type_field` (pop's legs call it
/// `option_type`), so that errors name the field the client sent.
pub fn validate_legs_named(
    inputs: &[LegInput],
    type_field: &'static str,
) -> Result<Vec<Leg>, StrategyError> {
    if inputs.is_empty() {
        return Err(StrategyError::NoLegs);
    }
    if inputs.len() > MAX_LEGS {
        return Err(StrategyError::TooManyLegs {
            count: inputs.len(),
            max: MAX_LEGS,
        });
    }
    inputs
        .iter()
        .enumerate()
        .map(|(index, input)| validate_leg(index, input, type_field))
        .collect()
}

fn validate_leg(
    index: usize,
    input: &LegInput,
    type_field: &'static str,
) -> Result<Leg, StrategyError> {
    let err = |field, reason: &str| StrategyError::leg(index, field, reason);
    let option_type = match input.option_type.as_deref() {
        None => return Err(err(type_field, "is required (CALL or PUT)")),
        Some(text) => parse_option_type(text).ok_or_else(|| {
            StrategyError::leg(
                index,
                type_field,
                format!("unknown option type {text:?}; expected CALL or PUT"),
            )
        })?,
    };
    let action = match input.action.as_deref() {
        None => return Err(err("action", "is required (BUY or SELL)")),
        Some(text) => Action::parse(text).ok_or_else(|| {
            StrategyError::leg(
                index,
                "action",
                format!("unknown action {text:?}; expected BUY or SELL"),
            )
        })?,
    };
    let strike = required_finite(index, "strike", input.strike)?;
    if strike <= 0.0 {
        return Err(err("strike", "must be greater than zero"));
    }
    if strike > MAX_PRICE {
        return Err(err("strike", "is above $1,000,000,000"));
    }
    let years_to_expiry = required_finite(index, "expiration", input.years_to_expiry)?;
    if years_to_expiry < 0.0 {
        return Err(err("expiration", "is in the past"));
    }
    let premium_per_share = required_finite(index, "premium", input.premium)?;
    if premium_per_share < 0.0 {
        return Err(err(
            "premium",
            "must not be negative (dollars per share; the action gives the side)",
        ));
    }
    if premium_per_share > MAX_PRICE {
        return Err(err("premium", "is above $1,000,000,000"));
    }
    let quantity = match input.quantity {
        None => 1,
        Some(q) if !q.is_finite() => return Err(err("quantity", "must be a finite number")),
        Some(q) if q <= 0.0 => {
            return Err(err(
                "quantity",
                "must be a positive number of contracts (use action SELL for a short leg)",
            ));
        }
        Some(q) if q.fract() != 0.0 => {
            return Err(err("quantity", "must be a whole number of contracts"));
        }
        Some(q) if q > f64::from(MAX_QUANTITY) => {
            return Err(StrategyError::leg(
                index,
                "quantity",
                format!("must be at most {MAX_QUANTITY} contracts"),
            ));
        }
        // Whole, positive and below MAX_QUANTITY: the conversion is exact.
        Some(q) => q as u32,
    };
    let (iv, iv_units_read) = match input.iv {
        None => (None, None),
        Some(value) => {
            let (decimal, units) = read_iv(value).map_err(|reason| err("iv", reason))?;
            (Some(decimal), Some(units))
        }
    };
    let delta = optional_finite(index, "delta", input.delta)?;
    if delta.is_some_and(|d| d.abs() > 1.0) {
        return Err(err("delta", "must be between −1 and 1 (per share)"));
    }
    Ok(Leg {
        option_type,
        action,
        strike,
        years_to_expiry,
        expiration: input.expiration,
        premium_per_share,
        quantity,
        iv,
        iv_units_read,
        delta,
        theta: optional_finite(index, "theta", input.theta)?,
        vega: optional_finite(index, "vega", input.vega)?,
    })
}

fn required_finite(
    index: usize,
    field: &'static str,
    value: Option<f64>,
) -> Result<f64, StrategyError> {
    match value {
        None => Err(StrategyError::leg(index, field, "is required")),
        Some(v) if !v.is_finite() => {
            Err(StrategyError::leg(index, field, "must be a finite number"))
        }
        Some(v) => Ok(v),
    }
}

fn optional_finite(
    index: usize,
    field: &'static str,
    value: Option<f64>,
) -> Result<Option<f64>, StrategyError> {
    match value {
        Some(v) if !v.is_finite() => {
            Err(StrategyError::leg(index, field, "must be a finite number"))
        }
        other => Ok(other),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn good() -> LegInput {
        LegInput {
            option_type: Some("call".into()),
            action: Some("Sell".into()),
            strike: Some(100.0),
            years_to_expiry: Some(30.0 / 365.0),
            premium: Some(2.5),
            ..LegInput::default()
        }
    }

    fn leg_error(input: LegInput) -> (usize, &'static str) {
        match validate_legs(&[good(), input]) {
            Err(StrategyError::Leg { index, field, .. }) => (index, field),
            other => panic!("expected a leg error, got {other:?}"),
        }
    }

    #[test]
    fn accepts_any_letter_case_and_defaults_quantity_to_one() {
        let legs = validate_legs(&[good()]).unwrap();
        assert_eq!(legs[0].option_type, OptionType::Call);
        assert_eq!(legs[0].action, Action::Sell);
        assert_eq!(legs[0].quantity, 1);
        assert_eq!(legs[0].signed_quantity(), -1.0);
        assert_eq!(parse_option_type(" PuT "), Some(OptionType::Put));
        assert_eq!(Action::parse("BUY"), Some(Action::Buy));
    }

    #[test]
    fn errors_name_the_leg_and_field() {
        assert_eq!(
            leg_error(LegInput {
                option_type: None,
                ..good()
            }),
            (1, "type")
        );
        assert_eq!(
            leg_error(LegInput {
                option_type: Some("straddle".into()),
                ..good()
            }),
            (1, "type")
        );
        assert_eq!(
            leg_error(LegInput {
                action: Some("hold".into()),
                ..good()
            }),
            (1, "action")
        );
        assert_eq!(
            leg_error(LegInput {
                strike: Some(-5.0),
                ..good()
            }),
            (1, "strike")
        );
        assert_eq!(
            leg_error(LegInput {
                strike: Some(f64::NAN),
                ..good()
            }),
            (1, "strike")
        );
        assert_eq!(
            leg_error(LegInput {
                premium: None,
                ..good()
            }),
            (1, "premium")
        );
        assert_eq!(
            leg_error(LegInput {
                quantity: Some(0.0),
                ..good()
            }),
            (1, "quantity")
        );
        assert_eq!(
            leg_error(LegInput {
                quantity: Some(1.5),
                ..good()
            }),
            (1, "quantity")
        );
        assert_eq!(
            leg_error(LegInput {
                years_to_expiry: Some(-0.01),
                ..good()
            }),
            (1, "expiration")
        );
        assert_eq!(
            leg_error(LegInput {
                iv: Some(0.0),
                ..good()
            }),
            (1, "iv")
        );
        assert_eq!(
            leg_error(LegInput {
                delta: Some(1.5),
                ..good()
            }),
            (1, "delta")
        );
        assert_eq!(
            leg_error(LegInput {
                strike: Some(1e12),
                ..good()
            }),
            (1, "strike")
        );
    }

    #[test]
    fn errors_name_the_type_field_the_body_uses() {
        let bad = LegInput {
            option_type: Some("future".into()),
            ..good()
        };
        match validate_legs_named(&[good(), bad], "option_type") {
            Err(StrategyError::Leg { index, field, .. }) => {
                assert_eq!((index, field), (1, "option_type"));
            }
            other => panic!("expected a leg error, got {other:?}"),
        }
    }

    #[test]
    fn empty_and_oversized_leg_lists_are_rejected() {
        assert_eq!(validate_legs(&[]), Err(StrategyError::NoLegs));
        let many = vec![good(); 10_000];
        assert_eq!(
            validate_legs(&many),
            Err(StrategyError::TooManyLegs {
                count: 10_000,
                max: MAX_LEGS
            })
        );
        assert!(validate_legs(&vec![good(); MAX_LEGS]).is_ok());
    }

    #[test]
    fn iv_above_five_is_read_as_points() {
        assert_eq!(read_iv(0.325), Ok((0.325, IvUnits::Decimal)));
        assert_eq!(read_iv(5.0), Ok((5.0, IvUnits::Decimal)));
        let (decimal, units) = read_iv(32.5).unwrap();
        assert!((decimal - 0.325).abs() < 1e-15);
        assert_eq!(units, IvUnits::PercentagePoints);
        assert!(read_iv(-0.2).is_err());
        assert!(read_iv(f64::INFINITY).is_err());
        assert!(read_iv(5000.0).is_err());
    }
}
