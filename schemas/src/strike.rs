//! [`StrikeKey`]: a strike as an exact integer key.
//!
//! OCC symbols carry strikes in thousandths of a dollar, so every listed strike — including
//! adjusted ones such as 33.375 — is an exact integer there. Grouping or joining by the `f64`
//! strike, or by cents, can split one strike in two or merge two (33.375 and 33.37 share a
//! cent); this key cannot.

use std::fmt;

/// A strike in thousandths of a dollar: exact for every listed strike, ordered like the strike.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct StrikeKey(i64);

impl StrikeKey {
    /// Thousandths in one dollar.
    pub const PER_DOLLAR: f64 = 1_000.0;

    /// The key of a strike in dollars, rounded to the nearest thousandth (a listed strike's
    /// `f64` is within float noise of its exact thousandths).
    #[must_use]
    pub fn from_dollars(strike: f64) -> Self {
        Self((strike * Self::PER_DOLLAR).round() as i64)
    }

    /// The key of a strike given in thousandths (an OCC symbol's eight digits).
    #[must_use]
    pub const fn from_thousandths(thousandths: i64) -> Self {
        Self(thousandths)
    }

    /// The strike in thousandths of a dollar.
    #[must_use]
    pub const fn thousandths(self) -> i64 {
        self.0
    }

    /// The strike in dollars.
    #[must_use]
    pub fn dollars(self) -> f64 {
        self.0 as f64 / Self::PER_DOLLAR
    }
}

impl From<f64> for StrikeKey {
    fn from(strike: f64) -> Self {
        Self::from_dollars(strike)
    }
}

impl fmt::Display for StrikeKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.dollars())
    }
}

#[cfg(test)]
mod tests {
    use super::StrikeKey;

    #[test]
    fn adjusted_strikes_a_cent_apart_stay_distinct() {
        assert_ne!(
            StrikeKey::from_dollars(33.375),
            StrikeKey::from_dollars(33.37)
        );
        assert_eq!(StrikeKey::from_dollars(33.375).thousandths(), 33_375);
    }

    #[test]
    fn float_noise_lands_on_the_listed_strike() {
        let noisy = 0.1 + 0.2 + 99.7; // 100.00000000000001
        assert_eq!(
            StrikeKey::from_dollars(noisy),
            StrikeKey::from_dollars(100.0)
        );
        assert_eq!(StrikeKey::from_thousandths(100_000).dollars(), 100.0);
        assert!(StrikeKey::from_dollars(99.5) < StrikeKey::from_dollars(100.0));
    }
}
