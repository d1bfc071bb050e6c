//! The implied-volatility surface of one underlying: SSVI (Gatheral and Jacquier, "Arbitrage-free
//! SVI volatility surfaces", Quantitative Finance 14(1), 2014).
//!
//! # Model
//! Total implied variance at log forward-moneyness `k = ln(K/F)` and time `t` (years) is
//!
//! ```text
//! w(k, t) = θ_t / 2 · (1 + ρ φ k + √((φ k + ρ)² + 1 − ρ²)),   φ = φ(θ_t)
//! φ(θ) = η / (θ^γ (1 + θ)^(1 − γ))        (the "power-law" φ, with γ = 1/2)
//! ```
//!
//! and the implied vol is `√(w / t)`. `θ_t = w(0, t)` is the at-the-money total variance.
//!
//! # No arbitrage
//! - **Butterfly** (Gatheral–Jacquier, Theorem 4.2 and Remark 4.4): with the power-law φ and
//!   γ = 1/2, `η (1 + |ρ|) ≤ 2` suffices (then `θφ(1+|ρ|) < 4` and `θφ²(1+|ρ|) ≤ 4` for every
//!   θ). [`Surface`] clamps η to [`BUTTERFLY_MARGIN`]` · 2 / (1 + |ρ|)`.
//! - **Calendar** (Theorem 4.1): θ_t non-decreasing in t, and `θ φ(θ) = η (θ / (1 + θ))^(1/2)`
//!   non-decreasing in θ (true for γ ≤ 1) and within the theorem's upper bound (true for the
//!   power law with γ = 1/2). The θ_t below is a sum of non-decreasing terms.
//!
//! # At-the-money term structure
//! The diffusive part of θ is the expected integrated variance of a mean-reverting (Heston-like)
//! variance that starts at `σ₀²` and reverts to `σ∞²` at speed κ:
//!
//! ```text
//! θ_diff(t) = σ∞² t + (σ₀² − σ∞²) (1 − e^(−κ t)) / κ
//! ```
//!
//! whose derivative `σ∞² + (σ₀² − σ∞²) e^(−κ t)` is positive, so θ increases. `σ∞` is the
//! underlying's `base_iv`; `σ₀ = base_iv · short_ratio · vol_level`, where `short_ratio` below 1
//! gives the usual upward-sloping (contango) term structure of a calm market and a
//! [`SurfaceInputs::vol_level`] above about 1.2 inverts it, as in a sell-off.
//!
//! # Earnings
//! Each [`EarningsVariance`] adds its event variance `σ_e²` (total variance, not annualised) to
//! θ for every expiration at or after the event: `θ(t) = θ_diff(t) + Σ σ_e² · 1{t ≥ t_e}`. The
//! step keeps θ non-decreasing, so the surface stays calendar-arbitrage free, and the whole
//! smile of the spanning expirations is lifted with it (through θ and φ(θ)).
//!
//! # Skew
//! ρ < 0 puts the skew on the put side. It is strongest for cash indices and index ETFs (index
//! put skew, ρ ≈ −0.7), milder for sector ETFs, milder still for single stocks, whose smiles are
//! more symmetric, and positive for volatility indices (VIX calls are bid).

use optics_schemas::AssetClass;

use super::listing::StrikeStyle;
use super::universe::Underlying;

/// The fraction of the butterfly bound `2 / (1 + |ρ|)` that η is allowed to reach.
pub const BUTTERFLY_MARGIN: f64 = 0.98;

/// The shortest time the surface evaluates (about 30 seconds): shorter times are floored.
pub const MIN_YEARS: f64 = 1.0e-6;

/// The power-law exponent γ of φ.
const GAMMA: f64 = 0.5;

/// An earnings (or other scheduled) event whose variance lifts every expiration after it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EarningsVariance {
    /// Time from the surface's instant to the event's first market reaction, years (the open
    /// after an after-close report, the open of the day of a before-open report).
    pub years: f64,
    /// The event's one-sigma log move, decimal (0.05 = a 5 % one-day move): σ_e. The total
    /// variance added is σ_e².
    pub move_sigma: f64,
}

impl EarningsVariance {
    /// The simulator's typical earnings move for `underlying`: three ordinary daily moves,
    /// `3 · base_iv / √252` (about 5 % for a 26 %-vol stock).
    pub fn typical(underlying: &Underlying, years: f64) -> Self {
        Self {
            years,
            move_sigma: 3.0 * underlying.base_iv / 252f64.sqrt(),
        }
    }
}

/// The market regime a surface is built for.
#[derive(Debug, Clone, PartialEq)]
pub struct SurfaceInputs {
    /// The short-end vol level relative to normal: 1.0 in a normal market, 0.8 when calm, 1.5
    /// to 2.5 in a sell-off (which inverts the term structure). Must be positive.
    pub vol_level: f64,
    /// Scheduled events ahead (earnings), in any order; events in the past are ignored.
    pub events: Vec<EarningsVariance>,
}

impl SurfaceInputs {
    /// A normal market without scheduled events.
    pub fn normal() -> Self {
        Self {
            vol_level: 1.0,
            events: Vec::new(),
        }
    }

    /// A normal-market regime at `vol_level`, without events.
    pub fn at_level(vol_level: f64) -> Self {
        Self {
            vol_level,
            events: Vec::new(),
        }
    }
}

impl Default for SurfaceInputs {
    fn default() -> Self {
        Self::normal()
    }
}

/// An SSVI implied-volatility surface. See the module documentation for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Surface {
    /// Short-end ATM vol σ₀, decimal.
    pub sigma_0: f64,
    /// Long-run ATM vol σ∞, decimal.
    pub sigma_inf: f64,
    /// Mean-reversion speed κ of the ATM variance, per year.
    pub kappa: f64,
    /// Skew correlation ρ, in (−1, 1).
    pub rho: f64,
    /// Curvature level η of the power-law φ, with η (1 + |ρ|) ≤ 2.
    pub eta: f64,
    /// Event variances, by time, ascending.
    events: Vec<EarningsVariance>,
}

impl Surface {
    /// The surface of `underlying` in the regime `inputs`. Non-finite or non-positive vol levels
    /// are treated as 1.
    pub fn for_underlying(underlying: &Underlying, inputs: &SurfaceInputs) -> Self {
        let level = if inputs.vol_level.is_finite() && inputs.vol_level > 0.0 {
            inputs.vol_level
        } else {
            1.0
        };
        let volatility_index = underlying.strike_style == StrikeStyle::Volatility;
        // (short_ratio, kappa, rho, eta before the butterfly clamp)
        let (short_ratio, kappa, rho, eta): (f64, f64, f64, f64) = if volatility_index {
            // VIX options: call skew and a strongly inverted term structure of vol-of-vol.
            (1.25, 4.0, 0.45, 1.3)
        } else {
            match underlying.asset_class {
                AssetClass::Index => (0.85, 2.0, -0.72, 1.15),
                AssetClass::Etf if underlying.sector.is_none() => (0.85, 2.0, -0.68, 1.15),
                AssetClass::Etf => (0.9, 2.0, -0.55, 1.2),
                AssetClass::Stock => (0.95, 1.5, -0.35, 1.3),
            }
        };
        let eta = eta.min(BUTTERFLY_MARGIN * 2.0 / (1.0 + f64::abs(rho)));
        let mut events: Vec<EarningsVariance> = inputs
            .events
            .iter()
            .copied()
            .filter(|e| {
                e.years.is_finite()
                    && e.years >= 0.0
                    && e.move_sigma.is_finite()
                    && e.move_sigma > 0.0
            })
            .collect();
        events.sort_by(|a, b| a.years.total_cmp(&b.years));
        Self {
            sigma_0: underlying.base_iv * short_ratio * level,
            sigma_inf: underlying.base_iv,
            kappa,
            rho,
            eta,
            events,
        }
    }

    /// The event variances the surface carries, ascending by time.
    pub fn events(&self) -> &[EarningsVariance] {
        &self.events
    }

    /// At-the-money total variance θ_t (decimal², not annualised) at `years` (floored at
    /// [`MIN_YEARS`]).
    pub fn atm_total_variance(&self, years: f64) -> f64 {
        let t = clamp_years(years);
        let v0 = self.sigma_0 * self.sigma_0;
        let vinf = self.sigma_inf * self.sigma_inf;
        // (1 − e^{−κt}) / κ without cancellation for small κt.
        let decay = -(-self.kappa * t).exp_m1() / self.kappa;
        let diffusive = vinf * t + (v0 - vinf) * decay;
        let event: f64 = self
            .events
            .iter()
            .filter(|e| t >= e.years)
            .map(|e| e.move_sigma * e.move_sigma)
            .sum();
        diffusive + event
    }

    /// φ(θ) of the power law.
    fn phi(&self, theta: f64) -> f64 {
        self.eta / (theta.powf(GAMMA) * (1.0 + theta).powf(1.0 - GAMMA))
    }

    /// Total implied variance w(k, t) at log forward-moneyness `k = ln(K/F)`.
    pub fn total_variance(&self, log_moneyness: f64, years: f64) -> f64 {
        let theta = self.atm_total_variance(years);
        let phi = self.phi(theta);
        let rho = self.rho;
        let pk = phi * log_moneyness;
        0.5 * theta * (1.0 + rho * pk + ((pk + rho) * (pk + rho) + 1.0 - rho * rho).sqrt())
    }

    /// Implied volatility (decimal, annualised) at log forward-moneyness `k = ln(K/F)` and
    /// `years` to expiry (floored at [`MIN_YEARS`]).
    pub fn iv(&self, log_moneyness: f64, years: f64) -> f64 {
        let t = clamp_years(years);
        (self.total_variance(log_moneyness, t) / t).sqrt()
    }

    /// The at-the-money-forward implied vol at `years`.
    pub fn atm_iv(&self, years: f64) -> f64 {
        self.iv(0.0, years)
    }

    /// The smile at `years` (floored at [`MIN_YEARS`]), with θ and φ(θ) evaluated once: the
    /// same numbers as [`iv`](Self::iv) at that time, for pricing a whole expiration.
    pub fn slice(&self, years: f64) -> SmileSlice {
        let t = clamp_years(years);
        let theta = self.atm_total_variance(t);
        SmileSlice {
            years: t,
            theta,
            phi: self.phi(theta),
            rho: self.rho,
        }
    }
}

/// One expiration's smile of a [`Surface`]: `w(k) = θ/2 · (1 + ρφk + √((φk + ρ)² + 1 − ρ²))`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmileSlice {
    /// Time to expiry, years (floored at [`MIN_YEARS`]).
    pub years: f64,
    /// At-the-money total variance θ.
    pub theta: f64,
    /// φ(θ).
    pub phi: f64,
    /// Skew correlation ρ.
    pub rho: f64,
}

impl SmileSlice {
    /// Total implied variance at log forward-moneyness `k`.
    pub fn total_variance(&self, log_moneyness: f64) -> f64 {
        let (rho, pk) = (self.rho, self.phi * log_moneyness);
        0.5 * self.theta * (1.0 + rho * pk + ((pk + rho) * (pk + rho) + 1.0 - rho * rho).sqrt())
    }

    /// Implied vol (decimal, annualised) at log forward-moneyness `k`.
    pub fn iv(&self, log_moneyness: f64) -> f64 {
        (self.total_variance(log_moneyness) / self.years).sqrt()
    }
}

fn clamp_years(years: f64) -> f64 {
    if years.is_finite() {
        years.max(MIN_YEARS)
    } else {
        MIN_YEARS
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simulator::universe::Universe;

    #[test]
    fn atm_vol_tends_to_base_iv() {
        let universe = Universe::real();
        let spx = Surface::for_underlying(universe.get("SPX").unwrap(), &SurfaceInputs::normal());
        let base = universe.get("SPX").unwrap().base_iv;
        assert!((spx.atm_iv(30.0) - base).abs() < 0.01 * base);
        assert!(
            spx.atm_iv(0.05) < spx.atm_iv(1.0),
            "contango in a normal market"
        );
        let stressed =
            Surface::for_underlying(universe.get("SPX").unwrap(), &SurfaceInputs::at_level(2.0));
        assert!(
            stressed.atm_iv(0.05) > stressed.atm_iv(1.0),
            "inverted when stressed"
        );
    }
}
