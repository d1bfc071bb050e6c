//! The gamma flip level: the spot at which total dealer GEX, re-priced at hypothetical spots,
//! changes sign.
//!
//! # Method
//!
//! 1. **Re-pricing.** At a hypothetical spot S′ every contract keeps its own implied volatility
//!    σ and time T; its forward moves in proportion (F′ = F·S′/S, so the carry is unchanged).
//!    Its GEX is then, in either model,
//!    `±OI·100·0.01·e^{−rT}·F′·φ(d1)/(σ√T)` with `d1 = ln(F′/K)/(σ√T) + σ√T/2` — the closed form
//!    of `γ·X²·0.01·OI·100` (Haug 2007 §2.2; `X` = S for Black–Scholes–Merton, F for Black-76).
//!    Contracts without an IV, already expired, or with no open interest do not enter the curve;
//!    a contract whose |d1| exceeds 9 at S′ contributes nothing there (its φ(d1) is below
//!    2.6e-18 of its peak).
//! 2. **Grid.** [`FlipConfig::points`] evenly spaced spots over S·(1 ± [`FlipConfig::half_width`])
//!    — by default 161 points over ±20 %, a step of 0.25 % of spot, spot itself the middle point.
//! 3. **Bracketing.** Every pair of consecutive non-zero grid values of opposite sign brackets a
//!    crossing. Two crossings closer together than one grid step can cancel and go unseen.
//! 4. **Refinement.** Brent's method (Brent 1973, *Algorithms for Minimization without
//!    Derivatives*, ch. 4, "zeroin") on each bracket, to an absolute tolerance of
//!    [`FlipConfig::relative_tolerance`] × spot (default 1e-9 × spot). Grid points, brackets
//!    and expirations are evaluated in parallel (rayon); each value is a sequential sum, so the
//!    result does not depend on the number of threads.
//! 5. **Choice.** [`FlipLevel::level`] is the crossing nearest the current spot (the lower one
//!    on a tie); every crossing is listed in [`FlipLevel::crossings`].
//!
//! When the curve never changes sign over the grid the level is `None` and
//! [`FlipLevel::degeneracy`] says why ([`FlipDegeneracy`]); the API's `flip_degenerate` is
//! `level.is_none()`.

use rayon::prelude::*;

use super::{CONTRACT_MULTIPLIER, ExposureError, ONE_PERCENT};
use std::f64::consts::FRAC_1_SQRT_2;

use crate::pricing::special::{erfc, erfcx};

/// How the flip level is searched for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlipConfig {
    /// Half-width of the grid of hypothetical spots, as a fraction of spot (0.20 = ±20 %).
    pub half_width: f64,
    /// Grid points, odd and ≥ 3 so that spot is the middle one.
    pub points: usize,
    /// Refinement tolerance as a fraction of spot.
    pub relative_tolerance: f64,
}

impl Default for FlipConfig {
    fn default() -> Self {
        Self {
            half_width: 0.20,
            points: 161,
            relative_tolerance: 1e-9,
        }
    }
}

impl FlipConfig {
    pub(crate) fn validate(&self) -> Result<(), ExposureError> {
        let bad = |field, reason: &str| ExposureError::Config {
            field,
            reason: reason.to_owned(),
        };
        if !(self.half_width > 0.0 && self.half_width < 1.0) {
            return Err(bad("flip.half_width", "must be in (0, 1)"));
        }
        if self.points < 3 || self.points.is_multiple_of(2) {
            return Err(bad("flip.points", "must be odd and at least 3"));
        }
        if !(self.relative_tolerance > 0.0 && self.relative_tolerance < 1e-2) {
            return Err(bad("flip.relative_tolerance", "must be in (0, 0.01)"));
        }
        Ok(())
    }

    /// The hypothetical spots of the grid, ascending; the middle one is `spot` exactly.
    pub fn grid(&self, spot: f64) -> Vec<f64> {
        let last = self.points.saturating_sub(1).max(1) as f64;
        (0..self.points)
            .map(|j| {
                let offset = self.half_width * (2.0 * j as f64 - last) / last;
                spot * (1.0 + offset)
            })
            .collect()
    }
}

/// Why there is no flip level.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlipDegeneracy {
    /// No contract with an IV and open interest: the curve is zero everywhere.
    NoExposure,
    /// Total GEX is positive at every grid spot.
    AlwaysPositive,
    /// Total GEX is negative at every grid spot.
    AlwaysNegative,
}

impl FlipDegeneracy {
    /// A code for the API (`no_exposure`, `always_positive`, `always_negative`).
    pub const fn code(self) -> &'static str {
        match self {
            Self::NoExposure => "no_exposure",
            Self::AlwaysPositive => "always_positive",
            Self::AlwaysNegative => "always_negative",
        }
    }

    /// One sentence for the API's explanation.
    pub const fn explanation(self) -> &'static str {
        match self {
            Self::NoExposure => "no contract with an implied volatility and open interest",
            Self::AlwaysPositive => {
                "net dealer gamma stays positive across the whole grid of hypothetical spots"
            }
            Self::AlwaysNegative => {
                "net dealer gamma stays negative across the whole grid of hypothetical spots"
            }
        }
    }
}

/// The outcome of a flip search.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct FlipLevel {
    /// The crossing nearest spot, dollars; `None` when the curve never changes sign.
    pub level: Option<f64>,
    /// Every crossing found, ascending, dollars.
    pub crossings: Vec<f64>,
    /// Why `level` is `None`.
    pub degeneracy: Option<FlipDegeneracy>,
    /// The re-priced curve's value at the current spot, dollars per 1 % move.
    pub value_at_spot: f64,
}

impl FlipLevel {
    /// True when there is no flip level (`flip_degenerate`).
    pub fn is_degenerate(&self) -> bool {
        self.level.is_none()
    }
}

/// Beyond |d1| = 9 a contract's φ(d1) is below 1.1e-18 (2.6e-18 of its peak): its gamma at
/// that spot is dropped without evaluating the exponentials. Far-from-the-money contracts of
/// short expirations are most of a chain at most grid spots, so this saves most of the work.
const NEGLIGIBLE_D1: f64 = 9.0;

/// 1/√(2π).
const ONE_OVER_SQRT_TWO_PI: f64 = 0.398_942_280_401_432_7;

/// One contract of the re-priced curve.
#[derive(Debug, Clone, Copy)]
pub(crate) struct CurveContract {
    /// ±OI·100·0.01·e^{−rT}·(F/S)/(σ√T)/√(2π): GEX at S′ is this × S′ × e^{−d1²/2}.
    coefficient: f64,
    /// ln(F/S) − ln K, so ln(F′/K) = ln S′ + this.
    log_ratio_minus_log_strike: f64,
    /// 1/(σ√T).
    inv_total_vol: f64,
    /// σ√T / 2.
    half_total_vol: f64,
    /// e^{−rT}·F/S: |spot delta| = this × N(θ·d1).
    discounted_forward_ratio: f64,
    /// ±1.
    theta_sign: f64,
}

impl CurveContract {
    /// Builds the curve entry of one contract; `None` if it cannot enter the curve.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn new(
        theta_sign: f64,
        open_interest: u64,
        strike: f64,
        forward: f64,
        spot: f64,
        iv: f64,
        years: f64,
        rate: f64,
    ) -> Option<Self> {
        let total_vol = iv * years.sqrt();
        if open_interest == 0 || !(total_vol > 0.0 && total_vol.is_finite()) {
            return None;
        }
        let discount = (-rate * years).exp();
        let forward_ratio = forward / spot;
        let weight =
            theta_sign * open_interest as f64 * CONTRACT_MULTIPLIER * ONE_PERCENT * discount;
        Some(Self {
            coefficient: weight * forward_ratio / total_vol * ONE_OVER_SQRT_TWO_PI,
            log_ratio_minus_log_strike: forward_ratio.ln() - strike.ln(),
            inv_total_vol: 1.0 / total_vol,
            half_total_vol: 0.5 * total_vol,
            discounted_forward_ratio: discount * forward_ratio,
            theta_sign,
        })
    }

    /// (GEX, delta-adjusted GEX) at spot `spot` (`ln_spot` = ln `spot`), dollars per 1 % move.
    #[inline]
    fn at(&self, spot: f64, ln_spot: f64) -> (f64, f64) {
        let d1 =
            (ln_spot + self.log_ratio_minus_log_strike) * self.inv_total_vol + self.half_total_vol;
        if d1.abs() > NEGLIGIBLE_D1 {
            return (0.0, 0.0);
        }
        let density = (-0.5 * d1 * d1).exp();
        let gex = self.coefficient * spot * density;
        // N(−|d1|) = erfc(y)/2 with y = |d1|/√2, from the density already computed:
        // erfc(y) = e^{−y²}·erfcx(y), and erfcx needs no exponential above Cody's 0.46875
        // (below it erfc itself is a plain rational function).
        let y = d1.abs() * FRAC_1_SQRT_2;
        let lower_tail = 0.5
            * if y <= 0.468_75 {
                erfc(y)
            } else {
                density * erfcx(y)
            };
        let cdf = if self.theta_sign * d1 <= 0.0 {
            lower_tail
        } else {
            1.0 - lower_tail
        };
        (gex, gex * self.discounted_forward_ratio * cdf)
    }
}

/// The contracts of the re-priced curve, grouped (one group per expiration).
#[derive(Debug, Clone, Default)]
pub(crate) struct GammaCurve {
    contracts: Vec<CurveContract>,
    /// `contracts[group_starts[g]..group_starts[g + 1]]` is group g.
    group_starts: Vec<usize>,
}

/// The flip levels of each group and of all groups together.
#[derive(Debug, Clone, Default)]
pub(crate) struct Flips {
    /// Per group: (gamma flip, delta-adjusted gamma flip).
    pub(crate) groups: Vec<(FlipLevel, FlipLevel)>,
    /// All groups: (gamma flip, delta-adjusted gamma flip).
    pub(crate) aggregate: (FlipLevel, FlipLevel),
}

impl GammaCurve {
    /// Starts a new group; later [`push`](Self::push)es belong to it.
    pub(crate) fn start_group(&mut self) {
        self.group_starts.push(self.contracts.len());
    }

    pub(crate) fn push(&mut self, contract: CurveContract) {
        self.contracts.push(contract);
    }

    fn group(&self, g: usize) -> &[CurveContract] {
        let start = self.group_starts[g];
        let end = self
            .group_starts
            .get(g + 1)
            .copied()
            .unwrap_or(self.contracts.len());
        &self.contracts[start..end]
    }

    fn sum(contracts: &[CurveContract], spot: f64) -> (f64, f64) {
        let ln_spot = spot.ln();
        contracts.iter().fold((0.0, 0.0), |(g, d), c| {
            let (cg, cd) = c.at(spot, ln_spot);
            (g + cg, d + cd)
        })
    }

    /// Flip levels of every group and of the whole, from one pass over the grid.
    pub(crate) fn flips(&self, spot: f64, config: &FlipConfig) -> Flips {
        let groups = self.group_starts.len();
        let grid = config.grid(spot);
        // values[j][g] = (GEX, delta-adjusted GEX) of group g at grid point j.
        let values: Vec<Vec<(f64, f64)>> = grid
            .par_iter()
            .map(|&s| (0..groups).map(|g| Self::sum(self.group(g), s)).collect())
            .collect();
        let tolerance = config.relative_tolerance * spot;
        let middle = grid.len() / 2;
        let solve = |contracts: &[CurveContract], curve: &[f64], adjusted: bool| {
            let f = |s: f64| {
                let (g, d) = Self::sum(contracts, s);
                if adjusted { d } else { g }
            };
            flip_from_curve(&grid, curve, curve[middle], spot, tolerance, f)
        };
        // Each solve is independent; rayon keeps the order, so results do not depend on threads.
        let per_group = (0..groups)
            .into_par_iter()
            .map(|g| {
                let gamma: Vec<f64> = values.iter().map(|row| row[g].0).collect();
                let adjusted: Vec<f64> = values.iter().map(|row| row[g].1).collect();
                (
                    solve(self.group(g), &gamma, false),
                    solve(self.group(g), &adjusted, true),
                )
            })
            .collect();
        let total = |pick: fn(&(f64, f64)) -> f64| -> Vec<f64> {
            values
                .iter()
                .map(|row| row.iter().map(pick).sum())
                .collect()
        };
        let (gamma_total, adjusted_total) = (total(|v| v.0), total(|v| v.1));
        let aggregate = rayon::join(
            || solve(&self.contracts, &gamma_total, false),
            || solve(&self.contracts, &adjusted_total, true),
        );
        Flips {
            groups: per_group,
            aggregate,
        }
    }
}

/// Brackets sign changes of `curve` over `grid`, refines each with Brent and picks the one
/// nearest `spot`.
fn flip_from_curve(
    grid: &[f64],
    curve: &[f64],
    value_at_spot: f64,
    spot: f64,
    tolerance: f64,
    f: impl Fn(f64) -> f64 + Sync,
) -> FlipLevel {
    let nonzero: Vec<(f64, f64)> = grid
        .iter()
        .zip(curve)
        .filter(|(_, v)| **v != 0.0)
        .map(|(&s, &v)| (s, v))
        .collect();
    if nonzero.is_empty() {
        return FlipLevel {
            degeneracy: Some(FlipDegeneracy::NoExposure),
            value_at_spot,
            ..FlipLevel::default()
        };
    }
    let brackets: Vec<&[(f64, f64)]> = nonzero
        .windows(2)
        .filter(|w| (w[0].1 > 0.0) != (w[1].1 > 0.0))
        .collect();
    let crossings: Vec<f64> = brackets
        .par_iter()
        .map(|w| brent(&f, w[0], w[1], tolerance))
        .collect();
    if crossings.is_empty() {
        let degeneracy = if nonzero[0].1 > 0.0 {
            FlipDegeneracy::AlwaysPositive
        } else {
            FlipDegeneracy::AlwaysNegative
        };
        return FlipLevel {
            degeneracy: Some(degeneracy),
            value_at_spot,
            ..FlipLevel::default()
        };
    }
    let level = crossings
        .iter()
        .copied()
        .fold(None, |best: Option<f64>, x| match best {
            Some(b) if (b - spot).abs() <= (x - spot).abs() => Some(b),
            _ => Some(x),
        });
    FlipLevel {
        level,
        crossings,
        degeneracy: None,
        value_at_spot,
    }
}

/// Brent's zeroin on a bracket `(a, f(a))`, `(b, f(b))` with f(a)·f(b) < 0, to absolute
/// tolerance `tolerance` in x (Brent 1973, ch. 4; the ALGOL 60 procedure `zero` transcribed).
pub(crate) fn brent(
    f: impl Fn(f64) -> f64,
    (mut a, mut fa): (f64, f64),
    (mut b, mut fb): (f64, f64),
    tolerance: f64,
) -> f64 {
    const MAX_ITERATIONS: usize = 200;
    let mut c = a;
    let mut fc = fa;
    let mut d = b - a;
    let mut e = d;
    for _ in 0..MAX_ITERATIONS {
        if (fb > 0.0) == (fc > 0.0) {
            c = a;
            fc = fa;
            d = b - a;
            e = d;
        }
        if fc.abs() < fb.abs() {
            a = b;
            b = c;
            c = a;
            fa = fb;
            fb = fc;
            fc = fa;
        }
        let tol = 2.0 * f64::EPSILON * b.abs() + 0.5 * tolerance;
        let m = 0.5 * (c - b);
        if m.abs() <= tol || fb == 0.0 {
            return b;
        }
        if e.abs() < tol || fa.abs() <= fb.abs() {
            // Bisection.
            d = m;
            e = m;
        } else {
            let s = fb / fa;
            let (mut p, mut q);
            if a == c {
                // Secant.
                p = 2.0 * m * s;
                q = 1.0 - s;
            } else {
                // Inverse quadratic interpolation.
                let qa = fa / fc;
                let r = fb / fc;
                p = s * (2.0 * m * qa * (qa - r) - (b - a) * (r - 1.0));
                q = (qa - 1.0) * (r - 1.0) * (s - 1.0);
            }
            if p > 0.0 {
                q = -q;
            } else {
                p = -p;
            }
            if 2.0 * p < 3.0 * m * q - (tol * q).abs() && p < (0.5 * e * q).abs() {
                e = d;
                d = p / q;
            } else {
                d = m;
                e = m;
            }
        }
        a = b;
        fa = fb;
        b += if d.abs() > tol {
            d
        } else if m > 0.0 {
            tol
        } else {
            -tol
        };
        fb = f(b);
    }
    b
}
