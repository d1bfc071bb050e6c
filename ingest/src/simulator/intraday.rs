//! Intraday paths: how prices and the market's variance move between the daily model's open
//! and close of one session ([`super::market`] gives the day's open, close, jumps and variance).
//!
//! # Model
//! Time within the session is the session fraction `p` ∈ [0, 1]; variance accrues along the
//! U-shaped clock `τ = f(p)` of [`intraday_profile`] (faster at the open and the close).
//!
//! - **Market.** Two standard Brownian bridges on τ, `B_m` (the market's return noise) and
//!   `B_v` (the variance's own noise), pinned to 0 at both ends. The market variance ratio is
//!   the Heston step of the day, bridged: `x(τ) = x₀ + (x₁ − x₀)τ + ξ√(x₀Δ)·(L·B_m + √(1−L²)·B_v)`
//!   with the daily leverage L = −0.7 and ξ = 1 (floored at 0.05), so intraday sell-offs lift
//!   the variance and the day ends on the daily model's value `x₁`.
//! - **An underlying** with correlation ρ, its own bridge `B_i`, the day's diffusive vol σ and
//!   jumps `J_m` (the market's, β-scaled, at the market's jump time) and `J_o` (its own, at its
//!   own time):
//!
//!   ```text
//!   ln S(p) = ln O + (ln C − J_m − J_o − ln O)·τ + σ√((1−f)Δ)·(ρ B_m(τ) + √(1−ρ²) B_i(τ))
//!             + J_m·1{p ≥ p_m} + J_o·1{p ≥ p_o}
//!   ```
//!
//!   where `f` is the overnight share of the day's variance ([`OVERNIGHT_VARIANCE_SHARE`]).
//!   Conditioned on its end points a Brownian motion is exactly this line plus a bridge, so the
//!   path opens at the day's open, closes at the day's close, and its moves are correlated with
//!   the market's as the daily returns are.
//! - **A volatility index** (VIX) is the market's variance level, not a random walk:
//!   `VIX(p) = O·(C/O)^τ · √(x(τ) / (x₀ + (x₁ − x₀)τ))`.
//! - **The vol level** of an underlying's surface at `p` is `√(x(τ)·s)`, with `s` its own
//!   variance ratio of the day: the ATM level follows the market's (and the underlying's)
//!   variance through the session.
//!
//! Bridges are sampled sequentially on the session's grid (`b' = b·(1−Δτ/(1−τ)) +
//! √(Δτ(1−τ')/(1−τ))·z`), so a session needs O(1) memory per underlying whatever its
//! interval, and the same grid gives the same path whichever instants are emitted.

use chrono::NaiveDate;

use super::listing::StrikeStyle;
use super::market::{
    DT, LEVERAGE, MARKET_XI, MarketFactor, OVERNIGHT_VARIANCE_SHARE, PricePath, VARIANCE_FLOOR,
    fnv1a, normal,
};
use super::quotes::intraday_profile;
use super::rng::{SplitMix64, derive_seed};
use super::universe::Underlying;

/// The stream tag of intraday draws ("INTRADAY").
const INTRADAY: u64 = 0x494E_5452_4144_4159;

/// A standard Brownian bridge on [0, 1]: 0 at both ends, variance `t(1 − t)` at `t`.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BrownianBridge {
    value: f64,
    time: f64,
}

impl BrownianBridge {
    /// A bridge at time 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// The current value.
    pub fn value(&self) -> f64 {
        self.value
    }

    /// Moves the bridge to time `to` (clamped to [current time, 1]) with the standard normal
    /// draw `z`: the exact conditional step. At time 1 the value is 0.
    pub fn advance(&mut self, to: f64, z: f64) -> f64 {
        let to = if to.is_finite() { to.min(1.0) } else { 1.0 };
        if to <= self.time {
            return self.value;
        }
        let remaining = 1.0 - self.time;
        let step = to - self.time;
        if to >= 1.0 || remaining <= 0.0 {
            self.value = 0.0;
        } else {
            let mean = self.value * (1.0 - step / remaining);
            let variance = (step * (1.0 - to) / remaining).max(0.0);
            self.value = mean + variance.sqrt() * z;
        }
        self.time = to;
        self.value
    }
}

/// The market's intraday state of one session.
#[derive(Debug, Clone)]
pub struct MarketIntraday {
    rng: SplitMix64,
    price_bridge: BrownianBridge,
    variance_bridge: BrownianBridge,
    start_ratio: f64,
    close_ratio: f64,
    variance_noise_scale: f64,
    /// Session fraction at which the day's market jump (if any) lands.
    pub jump_fraction: f64,
    tau: f64,
}

impl MarketIntraday {
    /// The market's session on day `day` of `factor` (day 0 has no move).
    pub fn new(factor: &MarketFactor, day: usize, seed: u64) -> Self {
        let date = factor.dates.get(day).copied().unwrap_or(NaiveDate::MIN);
        let mut rng = SplitMix64::new(day_seed(derive_seed(seed, INTRADAY), date));
        let jump_fraction = rng.uniform(0.05, 0.95);
        let start_ratio = factor.variance_ratio.get(day).copied().unwrap_or(1.0);
        let close_ratio = factor.close_ratio.get(day).copied().unwrap_or(start_ratio);
        Self {
            rng,
            price_bridge: BrownianBridge::new(),
            variance_bridge: BrownianBridge::new(),
            start_ratio,
            close_ratio,
            variance_noise_scale: if day == 0 {
                0.0
            } else {
                MARKET_XI * (start_ratio.max(0.0) * DT).sqrt()
            },
            jump_fraction,
            tau: 0.0,
        }
    }

    /// Moves to session fraction `p`.
    pub fn advance(&mut self, session_fraction: f64) {
        let tau = intraday_profile(session_fraction);
        let (z1, z2) = (normal(&mut self.rng), normal(&mut self.rng));
        self.price_bridge.advance(tau, z1);
        self.variance_bridge.advance(tau, z2);
        self.tau = tau;
    }

    /// The market bridge `B_m(τ)`.
    pub fn price_bridge(&self) -> f64 {
        self.price_bridge.value()
    }

    /// The variance ratio interpolated linearly between the day's start and close values.
    pub fn variance_ratio_line(&self) -> f64 {
        (self.start_ratio + (self.close_ratio - self.start_ratio) * self.tau).max(VARIANCE_FLOOR)
    }

    /// The market variance ratio `x(τ)` now (floored at 0.05).
    pub fn variance_ratio(&self) -> f64 {
        let noise = LEVERAGE * self.price_bridge.value()
            + (1.0 - LEVERAGE * LEVERAGE).sqrt() * self.variance_bridge.value();
        (self.start_ratio
            + (self.close_ratio - self.start_ratio) * self.tau
            + self.variance_noise_scale * noise)
            .max(VARIANCE_FLOOR)
    }

    /// The variance clock τ now.
    pub fn tau(&self) -> f64 {
        self.tau
    }
}

/// One underlying's intraday state of one session.
#[derive(Debug, Clone)]
pub struct UnderlyingIntraday {
    rng: SplitMix64,
    bridge: BrownianBridge,
    ln_open: f64,
    ln_close_ex_jumps: f64,
    market_jump: f64,
    own_jump: f64,
    own_jump_fraction: f64,
    sigma_intraday: f64,
    rho: f64,
    idio: f64,
    own_ratio: f64,
    volatility_index: bool,
    ln_price: f64,
}

impl UnderlyingIntraday {
    /// The session of `underlying` on day `day` of its `path`.
    pub fn new(underlying: &Underlying, path: &PricePath, day: usize, seed: u64) -> Self {
        let date = path.dates.get(day).copied().unwrap_or(NaiveDate::MIN);
        let symbol_seed = derive_seed(seed, fnv1a(underlying.symbol.as_bytes()));
        let mut rng = SplitMix64::new(day_seed(derive_seed(symbol_seed, INTRADAY), date));
        let own_jump_fraction = rng.uniform(0.05, 0.95);
        let close = path
            .closes
            .get(day)
            .copied()
            .unwrap_or(underlying.start_price);
        let open = path.opens.get(day).copied().unwrap_or(close);
        let market_jump = path.market_jump.get(day).copied().unwrap_or(0.0);
        let own_jump = path.own_jump.get(day).copied().unwrap_or(0.0);
        let vol = path.vols.get(day).copied().unwrap_or(underlying.base_iv);
        let rho = underlying.correlation.clamp(-1.0, 1.0);
        let ln_open = open.ln();
        Self {
            rng,
            bridge: BrownianBridge::new(),
            ln_open,
            ln_close_ex_jumps: close.ln() - market_jump - own_jump,
            market_jump,
            own_jump,
            own_jump_fraction,
            sigma_intraday: vol * ((1.0 - OVERNIGHT_VARIANCE_SHARE) * DT).sqrt(),
            rho,
            idio: (1.0 - rho * rho).max(0.0).sqrt(),
            own_ratio: path.own_ratio.get(day).copied().unwrap_or(1.0),
            volatility_index: underlying.strike_style == StrikeStyle::Volatility,
            ln_price: ln_open,
        }
    }

    /// Moves to session fraction `p`, after `market` has moved there.
    pub fn advance(&mut self, market: &MarketIntraday, session_fraction: f64) {
        let tau = market.tau();
        let z = normal(&mut self.rng);
        self.bridge.advance(tau, z);
        let line = self.ln_open + (self.ln_close_ex_jumps - self.ln_open) * tau;
        self.ln_price = if self.volatility_index {
            line + 0.5 * (market.variance_ratio() / market.variance_ratio_line()).ln()
        } else {
            let mut ln_price = line
                + self.sigma_intraday
                    * (self.rho * market.price_bridge() + self.idio * self.bridge.value());
            if session_fraction >= market.jump_fraction {
                ln_price += self.market_jump;
            }
            if session_fraction >= self.own_jump_fraction {
                ln_price += self.own_jump;
            }
            ln_price
        };
    }

    /// The price now, dollars (index points).
    pub fn price(&self) -> f64 {
        self.ln_price.exp()
    }

    /// The surface's vol level now: `√(x(τ)·s)`.
    pub fn vol_level(&self, market: &MarketIntraday) -> f64 {
        (market.variance_ratio() * self.own_ratio).sqrt()
    }
}

fn day_seed(stream: u64, date: NaiveDate) -> u64 {
    derive_seed(stream, optics_schemas::date_to_days(date) as i64 as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bridge_is_pinned_and_has_the_bridge_variance() {
        // Sample many bridges on a 100-step grid: the value at t = 0.5 has variance 0.25, and
        // every bridge ends at 0.
        let mut rng = SplitMix64::new(3);
        let n = 20_000;
        let mut sum_sq = 0.0;
        for _ in 0..n {
            let mut b = BrownianBridge::new();
            let mut at_half = 0.0;
            for k in 1..=100 {
                let t = f64::from(k) / 100.0;
                let v = b.advance(t, normal(&mut rng));
                if k == 50 {
                    at_half = v;
                }
            }
            assert_eq!(b.value(), 0.0);
            sum_sq += at_half * at_half;
        }
        let variance = sum_sq / f64::from(n);
        // Standard error of a variance estimate of a normal: σ²·√(2/n) ≈ 0.0025.
        assert!((variance - 0.25).abs() < 0.01, "{variance}");
    }
}
