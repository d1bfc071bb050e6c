//! Dealer exposures: gamma (GEX), delta, vanna, charm, vega, theta and the higher-order Greeks,
//! per contract, per strike, per expiration and in aggregate; the gamma flip level re-priced
//! over hypothetical spots; walls, key levels, max pain and the regime read.
//!
//! Everything here is a pure function of plain data: a slice of [`ContractAnalytics`] (one per
//! listed contract, as the chain snapshot knows it) and an [`UnderlyingContext`] (spot, rate,
//! forwards, model). The worker maps chain rows to these; the API serialises the results.
//!
//! # Dealer convention
//!
//! Customers are taken to buy the puts and sell the calls that make up open interest, so
//! **dealers are long calls and short puts**: every call contributes `+Greek × OI × 100`, every
//! put `−Greek × OI × 100` (100 = shares per standard contract). A "put" total is therefore
//! already dealer-signed (put GEX is negative, put delta exposure positive) and
//! `net = call + put`.
//!
//! # Units of every exposure
//!
//! Notation: `n = ±OI × 100` (dealer-signed shares of the contract), `S` the spot, `X` the price
//! the contract's Greeks are taken against (the spot for Black–Scholes–Merton, the expiration's
//! forward `F` for Black-76) and `k = X / S`. Per-share Greeks are those of
//! [`crate::pricing::Greeks`] (gamma per $1, theta/charm/color per calendar day, vega, vanna,
//! zomma, vomma, ultima per vol point). Each figure below is invariant to the model choice:
//! for a forward proportional to spot, `γ_F·F² = γ_S·S²`, `Δ_F·F = Δ_S·S`, and so on.
//!
//! | [`ExposureKind`] | per contract | unit | reads as |
//! | --- | --- | --- | --- |
//! | `Delta` | `Δ·k·n` | shares of the underlying | dealer delta; × S for dollars |
//! | `Gamma` (GEX) | `γ·X²·0.01·n` | dollars per 1 % move | dollars of delta the dealer gains for a 1 % rise |
//! | `DeltaAdjustedGamma` | `GEX·\|Δ·k\|` | dollars per 1 % move | GEX weighted by the contract's \|delta\| (0–1) |
//! | `Vanna` | `vanna·k·n` | delta shares per vol point | delta change for +1 vol point |
//! | `Charm` | `charm·k·n` | delta shares per day | delta change as one calendar day passes (+ = dealers get longer) |
//! | `Vega` | `vega·n` | dollars per vol point | |
//! | `Theta` | `θ·n` | dollars per day | |
//! | `Speed` | `speed·X³·10⁻⁴·n` | dollars per 1 % move, per 1 % move | change of GEX for a 1 % rise (S² scale held) |
//! | `Color` | `color·X²·0.01·n` | dollars per 1 % move, per day | change of GEX as one day passes |
//! | `Zomma` | `zomma·X²·0.01·n` | dollars per 1 % move, per vol point | change of GEX for +1 vol point |
//! | `Vomma` | `vomma·n` | dollars per vol point, per vol point | change of vega exposure for +1 vol point |
//! | `Ultima` | `ultima·n` | dollars per vol point, per vol point² | change of vomma exposure for +1 vol point |
//!
//! GEX is the service's contract (docs/conventions.md): `γ·OI·100·S²·0.01`, dollars per 1 % move.
//! For Black-76 the time Greeks (charm, color, theta) hold the forward fixed, as
//! [`crate::pricing`] documents; the forward's own drift over one day (carry/365) is ignored.
//!
//! **Delta-adjusted gamma** weights each contract's GEX by its absolute spot delta, so
//! far-out-of-the-money gamma (which hedgers rarely carry for long) counts less than gamma of
//! contracts that already behave like stock. Its flip level ([`ExposureSummary::delta_adjusted_flip`])
//! is found the same way as the gamma flip, on the delta-adjusted curve.
//!
//! # Flip level and other levels
//!
//! See [`flip`] for the re-priced flip level (grid, refinement, tolerance, degeneracy) and
//! [`levels`] for walls, key strikes, greek levels, key levels, max pain, `gex_ratio` and the
//! implications rules.

pub mod flip;
mod input;
pub mod levels;
mod report;
mod snapshot;

#[cfg(test)]
mod tests;

use std::fmt;
use std::ops::{Add, AddAssign, Index, IndexMut};

pub use flip::{FlipConfig, FlipDegeneracy, FlipLevel};
pub use input::{ContractAnalytics, UnderlyingContext};
pub use levels::{
    DirectionalBias, GammaLevels, GreekLevels, Implications, ImplicationsConfig, KeyLevels,
    MAGNET_MODERATE_WITHIN_PCT, MAGNET_STRONG_WITHIN_PCT, MaxPain, OpenInterestAtStrike,
    Positioning, PriceLevel, StrikeLevel, StrikePain, VolatilityRegime, cumulative_crossing,
    cumulative_net, distance_pct, gex_ratio, magnet_rule, magnet_strength, max_pain,
    running_sum_crossing,
};
pub use report::{
    ContractExposure, ExposureConfig, ExposureReport, ExposureSummary, StrikeExposure,
    compute_exposures, contract_exposure,
};
pub use snapshot::{contracts_from_chain, exposure_batch, exposure_rows, exposure_summary_rows};
pub(crate) use snapshot::{forwards_by_date, priced_as_solved, with_greeks};

/// Shares per standard US equity/index option contract.
pub const CONTRACT_MULTIPLIER: f64 = 100.0;

/// One percent, the move GEX and its relatives are quoted per.
pub const ONE_PERCENT: f64 = 0.01;

/// The exposures computed for every contract; units in the module table.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ExposureKind {
    /// Dealer delta, shares of the underlying.
    Delta,
    /// GEX, dollars per 1 % move.
    Gamma,
    /// GEX × |spot delta|, dollars per 1 % move.
    DeltaAdjustedGamma,
    /// Delta shares per vol point.
    Vanna,
    /// Delta shares per calendar day.
    Charm,
    /// Dollars per vol point.
    Vega,
    /// Dollars per calendar day.
    Theta,
    /// Dollars per 1 % move, per 1 % move.
    Speed,
    /// Dollars per 1 % move, per calendar day.
    Color,
    /// Dollars per 1 % move, per vol point.
    Zomma,
    /// Dollars per vol point, per vol point.
    Vomma,
    /// Dollars per vol point, per vol point squared.
    Ultima,
}

impl ExposureKind {
    /// Number of kinds.
    pub const COUNT: usize = 12;

    /// Every kind, in declaration order (the index order of [`ExposureVector`]).
    pub const ALL: [ExposureKind; Self::COUNT] = [
        Self::Delta,
        Self::Gamma,
        Self::DeltaAdjustedGamma,
        Self::Vanna,
        Self::Charm,
        Self::Vega,
        Self::Theta,
        Self::Speed,
        Self::Color,
        Self::Zomma,
        Self::Vomma,
        Self::Ultima,
    ];

    /// The name the API uses (`exposures.<name>`, `greek_levels.<name>`).
    pub const fn name(self) -> &'static str {
        match self {
            Self::Delta => "delta",
            Self::Gamma => "gamma",
            Self::DeltaAdjustedGamma => "delta_adjusted_gamma",
            Self::Vanna => "vanna",
            Self::Charm => "charm",
            Self::Vega => "vega",
            Self::Theta => "theta",
            Self::Speed => "speed",
            Self::Color => "color",
            Self::Zomma => "zomma",
            Self::Vomma => "vomma",
            Self::Ultima => "ultima",
        }
    }

    /// The unit, in words, for the API's `units.<greek>` block.
    pub const fn unit(self) -> &'static str {
        match self {
            Self::Delta => "shares of the underlying (dealer delta; multiply by spot for dollars)",
            Self::Gamma | Self::DeltaAdjustedGamma => "dollars per 1% move",
            Self::Vanna => "delta shares per vol point",
            Self::Charm => "delta shares per day",
            Self::Vega => "dollars per vol point",
            Self::Theta => "dollars per day",
            Self::Speed => "dollars per 1% move, per 1% move",
            Self::Color => "dollars per 1% move, per day",
            Self::Zomma => "dollars per 1% move, per vol point",
            Self::Vomma => "dollars per vol point, per vol point",
            Self::Ultima => "dollars per vol point, per vol point squared",
        }
    }

    /// Position in [`ExposureVector`].
    #[inline]
    pub const fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for ExposureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One value per [`ExposureKind`] (units in the module table), indexable by kind.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ExposureVector(pub [f64; ExposureKind::COUNT]);

impl ExposureVector {
    /// All zeros.
    pub const ZERO: Self = Self([0.0; ExposureKind::COUNT]);

    /// The value of `kind`.
    #[inline]
    pub fn get(&self, kind: ExposureKind) -> f64 {
        self.0[kind.index()]
    }

    /// `(kind, value)` pairs in [`ExposureKind::ALL`] order.
    pub fn iter(&self) -> impl Iterator<Item = (ExposureKind, f64)> + '_ {
        ExposureKind::ALL.into_iter().map(|k| (k, self.get(k)))
    }
}

impl Index<ExposureKind> for ExposureVector {
    type Output = f64;
    #[inline]
    fn index(&self, kind: ExposureKind) -> &f64 {
        &self.0[kind.index()]
    }
}

impl IndexMut<ExposureKind> for ExposureVector {
    #[inline]
    fn index_mut(&mut self, kind: ExposureKind) -> &mut f64 {
        &mut self.0[kind.index()]
    }
}

impl AddAssign for ExposureVector {
    #[inline]
    fn add_assign(&mut self, other: Self) {
        for (a, b) in self.0.iter_mut().zip(other.0) {
            *a += b;
        }
    }
}

impl Add for ExposureVector {
    type Output = Self;
    #[inline]
    fn add(mut self, other: Self) -> Self {
        self += other;
        self
    }
}

/// Bad input to the exposure functions, naming what is wrong.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ExposureError {
    /// A field of the [`UnderlyingContext`].
    #[error("invalid underlying context: {field} {reason}")]
    Context {
        /// The offending field.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A field of one contract (index into the input slice).
    #[error("invalid contract #{index} ({strike} {option_type} {expiration}): {field} {reason}")]
    Contract {
        /// Position in the input slice.
        index: usize,
        /// The contract's strike, for the message.
        strike: f64,
        /// The contract's type, for the message.
        option_type: crate::pricing::OptionType,
        /// The contract's expiration, for the message.
        expiration: chrono::NaiveDate,
        /// The offending field.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
    /// A configuration value out of its domain.
    #[error("invalid exposure configuration: {field} {reason}")]
    Config {
        /// The offending field.
        field: &'static str,
        /// What is wrong with it.
        reason: String,
    },
}
