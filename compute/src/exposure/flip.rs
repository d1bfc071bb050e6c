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
//! 2. **Grid.** [`FlipConfig::points`] hypothetical spots from S·(1 − [`FlipConfig::half_width`])
//!    to S·(1 + half_width), spot itself the middle point, evenly spaced in ln S on each side
//!    of spot — by default 161 points over ±20 %: 80 steps of 0.279 % below spot and 80 of
//!    0.228 % above. Even steps in ln S make d1 linear in the step number on each side. Each
//!    contract is evaluated directly at the points where it is not negligible (a few dozen
//!    at most, usually about ten per side): its exponential and Cody's erfc as straight-line
//!    arithmetic in one loop over those points that runs in SIMD lanes — the same formulas
//!    as the refinement's direct sum (step 4), so the value at spot is that sum's bit for bit.
//!    **Sampling.** An expiration whose narrowest contract (smallest σ√T) is wide against the
//!    grid step is sampled at every m-th grid point only, m the largest divisor of the steps
//!    per side for which m steps span at most [`FlipConfig::coarsest_d1_step`] (default 0.5)
//!    of that contract's d1: every contract's Gaussian still gets two or more points per unit
//!    of d1. A long-dated contract spans tens of grid steps per unit of d1, so most of its
//!    points were redundant; same-day and weekly expirations keep every point. The expiration's
//!    own flips are bracketed on its sampled points (exact values). For the aggregate, each
//!    expiration's curve is carried back to every grid point by the cubic through the four
//!    nearest sampled points (error at most h⁴·max|He₄·φ|·max|t(t²−1)(t−2)|/24 ≈ 3.1e-3 of a
//!    contract's amplitude, 0.8 % of its peak, with h = 0.5 of d1 per step); the interpolated
//!    values only place the aggregate's brackets (step 3).
//! 3. **Bracketing.** Every pair of consecutive non-zero grid values of opposite sign brackets a
//!    crossing. Two crossings closer together than one grid step (one sampled step, for an
//!    expiration) can cancel and go unseen. Where the aggregate's values were partly
//!    interpolated, Newton (step 4) starts from the interpolated bracket, and a step that
//!    converges inside it is a crossing on its own evidence. Otherwise the bracket's ends are
//!    evaluated directly; when they do not change sign, the neighbouring intervals are tried,
//!    and a bracket none of them confirms is dropped (the curve came within the interpolation
//!    error of zero without crossing it).
//! 4. **Refinement.** From the zero of the cubic through the grid values around the bracket,
//!    Newton steps on the direct sum with its exact slope, each evaluation
//!    also shrinking the bracket, until a step is below [`FlipConfig::relative_tolerance`] ×
//!    spot (default 1e-9 × spot; convergence is quadratic, so the error left is far smaller)
//!    or the error the step leaves, |f″/(2f′)|·step² from the exact curvature, is below a
//!    hundredth of that (usually after the first evaluation);
//!    when a step would leave the bracket, or six do not converge, Brent's method (Brent 1973,
//!    *Algorithms for Minimization without Derivatives*, ch. 4, "zeroin") finishes on the
//!    bracket to the same tolerance. Only the contracts that are not negligible somewhere in
//!    the bracket are summed (per expiration, from the first such strike to the last).
//!    Expirations and brackets are evaluated in parallel (rayon); each value is a sequential
//!    sum in contract order, so the result does not depend on the number of threads.
//! 5. **Choice.** [`FlipLevel::level`] is the crossing nearest the current spot (the lower one
//!    on a tie). Brackets are refined nearest first and only until the next one cannot hold a
//!    nearer crossing, so [`FlipLevel::crossings`] lists the crossings refined to decide that
//!    (one or two, usually), not every sign change of the curve.
//!
//! When the curve never changes sign over the grid the level is `None` and
//! [`FlipLevel::degeneracy`] says why ([`FlipDegeneracy`]); the API's `flip_degenerate` is
//! `level.is_none()`.

use std::cell::RefCell;
use std::ops::Range;

use rayon::prelude::*;

use super::{CONTRACT_MULTIPLIER, ExposureError, ONE_PERCENT};
use std::f64::consts::FRAC_1_SQRT_2;

use crate::pricing::elementary::exp_straight;
use crate::pricing::special::{
    CODY_LARGE, CODY_THRESHOLD, ONE_OVER_SQRT_PI, ONE_OVER_SQRT_TWO_PI, cody_ab_parts,
    cody_cd_parts, cody_pq_reversed_parts,
};

/// How the flip level is searched for.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FlipConfig {
    /// Half-width of the grid of hypothetical spots, as a fraction of spot (0.20 = ±20 %).
    pub half_width: f64,
    /// Grid points, odd and ≥ 3 so that spot is the middle one.
    pub points: usize,
    /// Refinement tolerance as a fraction of spot.
    pub relative_tolerance: f64,
    /// The widest spacing, in units of d1 of the group's narrowest contract (the smallest
    /// σ√T), at which one expiration's curves are sampled: an expiration whose every contract
    /// is that much wider than the grid step is sampled at every m-th point of the grid only
    /// (see the module's "Sampling"). 0 samples every expiration at every point.
    pub coarsest_d1_step: f64,
}

impl Default for FlipConfig {
    fn default() -> Self {
        Self {
            half_width: 0.20,
            points: 161,
            relative_tolerance: 1e-9,
            coarsest_d1_step: 0.5,
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
        if !(0.0..=1.0).contains(&self.coarsest_d1_step) {
            return Err(bad("flip.coarsest_d1_step", "must be in [0, 1]"));
        }
        Ok(())
    }

    /// Grid steps on each side of spot.
    fn steps_per_side(&self) -> usize {
        self.points / 2
    }

    /// The step in ln S below spot (negative) and above it.
    fn log_steps(&self) -> (f64, f64) {
        let steps = self.steps_per_side().max(1) as f64;
        (
            (1.0 - self.half_width).ln() / steps,
            (1.0 + self.half_width).ln() / steps,
        )
    }

    /// The hypothetical spots of the grid, ascending; the middle one is `spot` exactly and the
    /// ends are `spot·(1 ± half_width)`.
    pub fn grid(&self, spot: f64) -> Vec<f64> {
        let steps = self.steps_per_side();
        let (down, up) = self.log_steps();
        (0..self.points)
            .map(|j| {
                if j == 0 {
                    spot * (1.0 - self.half_width)
                } else if j == 2 * steps {
                    spot * (1.0 + self.half_width)
                } else if j < steps {
                    spot * (down * (steps - j) as f64).exp()
                } else {
                    spot * (up * (j - steps) as f64).exp()
                }
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
    /// The crossings refined to find `level` (those nearest spot), ascending, dollars.
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

/// What every contract of one expiration shares in [`CurveContract::new`]: computed once per
/// expiration rather than once per contract (a square root, an exponential and a logarithm).
#[derive(Debug, Clone, Copy)]
pub(crate) struct CurveTerms {
    /// √T.
    sqrt_years: f64,
    /// e^{−rT}.
    discount: f64,
    /// F/S.
    forward_ratio: f64,
    /// ln(F/S).
    ln_forward_ratio: f64,
}

impl CurveTerms {
    /// The terms of an expiration `years` away whose forward is `forward`, at spot `spot` and
    /// rate `rate`.
    pub(crate) fn new(forward: f64, spot: f64, years: f64, rate: f64) -> Self {
        let forward_ratio = forward / spot;
        Self {
            sqrt_years: years.sqrt(),
            discount: (-rate * years).exp(),
            forward_ratio,
            ln_forward_ratio: forward_ratio.ln(),
        }
    }
}

impl CurveContract {
    /// Builds the curve entry of one contract of the expiration of `terms`; `None` if it
    /// cannot enter the curve.
    pub(crate) fn new(
        theta_sign: f64,
        open_interest: u64,
        strike: f64,
        iv: f64,
        terms: &CurveTerms,
    ) -> Option<Self> {
        let total_vol = iv * terms.sqrt_years;
        if open_interest == 0 || !(total_vol > 0.0 && total_vol.is_finite()) {
            return None;
        }
        let discount = terms.discount;
        let forward_ratio = terms.forward_ratio;
        let weight =
            theta_sign * open_interest as f64 * CONTRACT_MULTIPLIER * ONE_PERCENT * discount;
        Some(Self {
            coefficient: weight * forward_ratio / total_vol * ONE_OVER_SQRT_TWO_PI,
            log_ratio_minus_log_strike: terms.ln_forward_ratio - strike.ln(),
            inv_total_vol: 1.0 / total_vol,
            half_total_vol: 0.5 * total_vol,
            discounted_forward_ratio: discount * forward_ratio,
            theta_sign,
        })
    }

    /// d1 at the hypothetical spot whose log is `ln_spot`: every evaluation's (the grid's at
    /// spot, the direct sums'), so that they agree bit for bit.
    #[inline(always)]
    fn d1(&self, ln_spot: f64) -> f64 {
        (ln_spot + self.log_ratio_minus_log_strike) * self.inv_total_vol + self.half_total_vol
    }

    /// (GEX, delta-adjusted GEX) at spot `spot` (`ln_spot` = ln `spot`), dollars per 1 % move:
    /// the evaluation at one spot the grid is checked against.
    #[cfg(test)]
    fn at(&self, spot: f64, ln_spot: f64) -> (f64, f64) {
        let d1 = self.d1(ln_spot);
        if d1.abs() > NEGLIGIBLE_D1 {
            return (0.0, 0.0);
        }
        self.values(spot, d1, exp_straight(-0.5 * d1 * d1))
    }

    /// One curve's value at `spot` with its first and second derivatives with respect to spot:
    /// GEX (`ADJUSTED` false) or delta-adjusted GEX. With e = e^{−d1²/2} and
    /// d1′ = 1/(S·σ√T): (S·e)′ = e·(1 − d1/(σ√T)), (S·e)″ = e·d1′·(d1²/(σ√T) − d1 − 1/(σ√T)),
    /// N(θ·d1)′ = θ·φ(d1)·d1′ and N(θ·d1)″ = −θ·φ(d1)·d1′/S·(d1/(σ√T) + 1).
    ///
    /// Straight-line code (every case computed, the answer selected) so that
    /// [`ActiveContracts`] evaluates several contracts in SIMD lanes.
    #[inline(always)]
    fn value_slope_curvature<const ADJUSTED: bool>(
        &self,
        spot: f64,
        ln_spot: f64,
    ) -> (f64, f64, f64) {
        let unclamped = self.d1(ln_spot);
        let negligible = unclamped.abs() > NEGLIGIBLE_D1;
        // Clamped so that the exponential stays in its domain; the value is dropped anyway.
        let d1 = unclamped.clamp(-NEGLIGIBLE_D1, NEGLIGIBLE_D1);
        let density = exp_straight(-0.5 * d1 * d1);
        let d1_slope = self.inv_total_vol / spot;
        let c_density = self.coefficient * density;
        // The same product as the grid's, bit for bit.
        let gex = self.coefficient * spot * density;
        let gex_slope = c_density * (1.0 - d1 * self.inv_total_vol);
        let gex_curvature =
            c_density * d1_slope * (d1 * d1 * self.inv_total_vol - d1 - self.inv_total_vol);
        let (value, slope, curvature) = if ADJUSTED {
            let cdf = self.cdf(d1, density);
            let cdf_slope = self.theta_sign * density * ONE_OVER_SQRT_TWO_PI * d1_slope;
            let cdf_curvature = -cdf_slope / spot * (d1 * self.inv_total_vol + 1.0);
            let w = self.discounted_forward_ratio;
            (
                w * gex * cdf,
                w * (gex_slope * cdf + gex * cdf_slope),
                w * (gex_curvature * cdf + 2.0 * gex_slope * cdf_slope + gex * cdf_curvature),
            )
        } else {
            (gex, gex_slope, gex_curvature)
        };
        if negligible {
            (0.0, 0.0, 0.0)
        } else {
            (value, slope, curvature)
        }
    }

    /// (GEX, delta-adjusted GEX) at `spot`, where this contract's d1 is `d1` and
    /// `density` = e^{−d1²/2}.
    #[cfg(test)]
    fn values(&self, spot: f64, d1: f64, density: f64) -> (f64, f64) {
        let gex = self.coefficient * spot * density;
        (
            gex,
            gex * self.discounted_forward_ratio * self.cdf(d1, density),
        )
    }

    /// N(θ·d1), from `density` = e^{−d1²/2}: N(−|d1|) is [`lower_tail`] of y = |d1|/√2.
    #[inline(always)]
    fn cdf(&self, d1: f64, density: f64) -> f64 {
        let lower = lower_tail(d1.abs() * FRAC_1_SQRT_2, density);
        if self.theta_sign * d1 <= 0.0 {
            lower
        } else {
            1.0 - lower
        }
    }

    /// The interval of ln S′ over which |d1| ≤ [`NEGLIGIBLE_D1`] (outside it the contract
    /// contributes nothing).
    #[inline]
    fn active_log_spots(&self) -> (f64, f64) {
        active_log_spots(self.half_total_vol, self.log_ratio_minus_log_strike)
    }

    /// The first and last points of `points` at which the contract is not negligible (its
    /// active interval of ln S′ is contiguous, so they bound every such point); `None` when
    /// there is none.
    #[inline]
    fn active_points(&self, points: &GridPoints<'_>) -> Option<(usize, usize)> {
        let (from, to) = self.active_log_spots();
        let middle = points.middle as f64;
        let (from, to) = (from - points.ln_spot, to - points.ln_spot);
        // Points j ≤ middle sit at (middle − j)·down, points j ≥ middle at (j − middle)·up.
        let index_of = |offset: f64| {
            if offset <= 0.0 {
                middle - offset / points.down
            } else {
                middle + offset / points.up
            }
        };
        let first = index_of(from).ceil().max(0.0);
        let last = index_of(to).floor().min((points.spots.len() - 1) as f64);
        // Both are whole numbers within the grid here.
        (first <= last).then_some((first as usize, last as usize))
    }

    /// Adds the contract's GEX and delta-adjusted GEX at every point of `points` where it is
    /// not negligible to `gamma` and `adjusted`: each value evaluated directly (the
    /// exponential and Cody's erfc as straight-line arithmetic, every branch computed and the
    /// right one selected), in one loop without branches over the contract's active points that
    /// the compiler evaluates in SIMD lanes. At spot (the middle point) d1 is the direct
    /// evaluation's own, so that value is [`Self::value_slope_curvature`]'s bit for bit.
    #[inline]
    fn accumulate(&self, points: &GridPoints<'_>, gamma: &mut [f64], adjusted: &mut [f64]) {
        let Some((first, last)) = self.active_points(points) else {
            return;
        };
        let d1_at_spot = self.d1(points.ln_spot);
        let range = first..last + 1;
        let (spots, steps, step) = (
            &points.spots[range.clone()],
            &points.steps[range.clone()],
            &points.step[range.clone()],
        );
        let (gamma, adjusted) = (&mut gamma[range.clone()], &mut adjusted[range]);
        let n = spots.len();
        let (steps, step, gamma, adjusted) =
            (&steps[..n], &step[..n], &mut gamma[..n], &mut adjusted[..n]);
        for i in 0..n {
            // d1 is linear in the point's number on each side of spot.
            let unclamped = d1_at_spot + steps[i] * (step[i] * self.inv_total_vol);
            let negligible = unclamped.abs() > NEGLIGIBLE_D1;
            // Clamped so that the exponential stays in its domain; the value is dropped anyway.
            let d1 = unclamped.clamp(-NEGLIGIBLE_D1, NEGLIGIBLE_D1);
            let density = exp_straight(-0.5 * d1 * d1);
            let gex = self.coefficient * spots[i] * density;
            let delta_adjusted = self.discounted_forward_ratio * gex * self.cdf(d1, density);
            gamma[i] += if negligible { 0.0 } else { gex };
            adjusted[i] += if negligible { 0.0 } else { delta_adjusted };
        }
    }
}

/// [`CurveContract::active_log_spots`] from the two fields it depends on (σ√T/2 and
/// ln(F/S) − ln K), for the refinement's column-wise contracts too.
#[inline(always)]
fn active_log_spots(half_total_vol: f64, log_ratio_minus_log_strike: f64) -> (f64, f64) {
    let total_vol = 2.0 * half_total_vol;
    (
        (-NEGLIGIBLE_D1 - half_total_vol) * total_vol - log_ratio_minus_log_strike,
        (NEGLIGIBLE_D1 - half_total_vol) * total_vol - log_ratio_minus_log_strike,
    )
}

/// N(−|d1|) = erfc(y)/2 for y = |d1|/√2 ≤ 6.4 (|d1| ≤ [`NEGLIGIBLE_D1`]), `density` =
/// e^{−y²}, by the branch of Cody's erfc that y falls in: y ≤ 0.46875 the rational function
/// (1 − y·A/B)/2, up to 4 e^{−y²}·C/D/2, above it the asymptotic e^{−y²}·(1/√π − P/Q)/(2y).
/// Straight-line: every branch's numerator and denominator are computed, the right pair is
/// selected and divided once (one division instead of one per branch), so that the grid and
/// the direct sums evaluate it in SIMD lanes.
#[inline(always)]
fn lower_tail(y: f64, density: f64) -> f64 {
    let w = y * y;
    let (a, b) = cody_ab_parts(w);
    let small = (0.5 * (b - y * a), b);
    let (c, d) = cody_cd_parts(y);
    let middle = (0.5 * density * c, d);
    // cody_pq(1/w) = p/(w·q).
    let (p, q) = cody_pq_reversed_parts(w);
    let wq = w * q;
    let large = (0.5 * density * (wq * ONE_OVER_SQRT_PI - p), wq * y);
    let (numerator, denominator) = if y <= CODY_THRESHOLD {
        small
    } else if y <= CODY_LARGE {
        middle
    } else {
        large
    };
    numerator / denominator
}

/// The contracts of a curve field by field, in the curve's order, so that the refinement's
/// direct sums run over ranges of them in SIMD lanes without gathering anything.
#[derive(Debug)]
struct CurveColumns {
    coefficient: Vec<f64>,
    log_ratio_minus_log_strike: Vec<f64>,
    inv_total_vol: Vec<f64>,
    half_total_vol: Vec<f64>,
    discounted_forward_ratio: Vec<f64>,
    theta_sign: Vec<f64>,
}

impl CurveColumns {
    fn of(contracts: &[CurveContract]) -> Self {
        let column = |field: fn(&CurveContract) -> f64| -> Vec<f64> {
            contracts.iter().map(field).collect()
        };
        Self {
            coefficient: column(|c| c.coefficient),
            log_ratio_minus_log_strike: column(|c| c.log_ratio_minus_log_strike),
            inv_total_vol: column(|c| c.inv_total_vol),
            half_total_vol: column(|c| c.half_total_vol),
            discounted_forward_ratio: column(|c| c.discounted_forward_ratio),
            theta_sign: column(|c| c.theta_sign),
        }
    }

    /// Whether contract `i` is not negligible somewhere in ln S′ ∈ [`low`, `high`].
    #[inline]
    fn is_active_within(&self, i: usize, low: f64, high: f64) -> bool {
        let (from, to) =
            active_log_spots(self.half_total_vol[i], self.log_ratio_minus_log_strike[i]);
        from <= high && to >= low
    }
}

/// The contracts one refinement sums: in each of some ranges of a curve's contracts (one per
/// expiration), from the first to the last that is not negligible somewhere in the bracket.
/// A chain's contracts come by strike within an expiration, so those between are nearly all
/// active too (the few that are not add exactly zero, at the cost of being evaluated), and the
/// sums run in long SIMD loops without gathering anything.
#[derive(Debug)]
struct ActiveContracts<'c> {
    columns: &'c CurveColumns,
    ranges: Vec<Range<usize>>,
    /// Each contract's value, slope and curvature at the spot last summed, for one range at a
    /// time: written by a loop without branches (vectorised), then added. A cell, since the
    /// root finders take the sum as a plain function.
    values: RefCell<[Vec<f64>; 3]>,
}

/// Running sums of [`ActiveContracts::sum`]: contract i of a range goes to sum i mod 4 (four
/// doubles fill an AVX register).
const SUM_LANES: usize = 4;

impl<'c> ActiveContracts<'c> {
    /// Within each of `groups` (ranges of `columns`), the contracts from the first to the last
    /// that is not negligible somewhere in ln S′ ∈ [`low`, `high`] (the others add exactly
    /// zero there).
    fn within(columns: &'c CurveColumns, groups: &[Range<usize>], low: f64, high: f64) -> Self {
        let active = |i: &usize| columns.is_active_within(*i, low, high);
        let ranges: Vec<Range<usize>> = groups
            .iter()
            .filter_map(|group| {
                let first = group.clone().find(active)?;
                let last = (first..group.end).rev().find(active)?;
                Some(first..last + 1)
            })
            .collect();
        let longest = ranges.iter().map(Range::len).max().unwrap_or(0);
        Self {
            columns,
            ranges,
            values: RefCell::new(std::array::from_fn(|_| vec![0.0; longest])),
        }
    }

    /// How many contracts the sums evaluate.
    #[cfg(test)]
    fn len(&self) -> usize {
        self.ranges.iter().map(Range::len).sum()
    }

    /// The curve (delta-adjusted when `adjusted`) with its first and second derivatives at
    /// `spot`.
    fn value_slope_curvature(&self, spot: f64, adjusted: bool) -> (f64, f64, f64) {
        if adjusted {
            self.sum::<true>(spot)
        } else {
            self.sum::<false>(spot)
        }
    }

    /// Contract i of each range is added to running sum i mod [`SUM_LANES`], range after
    /// range; the sums are added last, in order. The order depends only on the contracts,
    /// never on threads.
    fn sum<const ADJUSTED: bool>(&self, spot: f64) -> (f64, f64, f64) {
        let ln_spot = spot.ln();
        let mut values = self.values.borrow_mut();
        let [value, slope, curvature] = &mut *values;
        let mut lanes = [[0.0; SUM_LANES]; 3];
        let c = self.columns;
        for range in &self.ranges {
            // Every column cut to one length, so that the loop below has no bounds check
            // (which would keep it from being vectorised).
            let n = range.len();
            let (value, slope, curvature) = (&mut value[..n], &mut slope[..n], &mut curvature[..n]);
            let cut = |column: &'c [f64]| &column[range.clone()][..n];
            let (coefficient, log_ratio_minus_log_strike, inv_total_vol) = (
                cut(&c.coefficient),
                cut(&c.log_ratio_minus_log_strike),
                cut(&c.inv_total_vol),
            );
            let (half_total_vol, discounted_forward_ratio, theta_sign) = (
                cut(&c.half_total_vol),
                cut(&c.discounted_forward_ratio),
                cut(&c.theta_sign),
            );
            for i in 0..n {
                let contract = CurveContract {
                    coefficient: coefficient[i],
                    log_ratio_minus_log_strike: log_ratio_minus_log_strike[i],
                    inv_total_vol: inv_total_vol[i],
                    half_total_vol: half_total_vol[i],
                    discounted_forward_ratio: discounted_forward_ratio[i],
                    theta_sign: theta_sign[i],
                };
                (value[i], slope[i], curvature[i]) =
                    contract.value_slope_curvature::<ADJUSTED>(spot, ln_spot);
            }
            for (lanes, of) in lanes.iter_mut().zip([&*value, &*slope, &*curvature]) {
                for (i, v) in of.iter().enumerate() {
                    lanes[i % SUM_LANES] += v;
                }
            }
        }
        let [value, slope, curvature] = lanes.map(|l| l.iter().fold(0.0, |a, b| a + b));
        (value, slope, curvature)
    }
}

/// A grid of hypothetical spots as [`CurveContract::accumulate`] walks it: odd length, spot
/// the middle point, even steps in ln S of `down` < 0 below spot and `up` > 0 above it.
struct GridPoints<'g> {
    spots: &'g [f64],
    /// j − middle, as a number.
    steps: Vec<f64>,
    /// The ln-step of point j's side: −`down` below spot, `up` above (d1 at point j is d1 at
    /// spot + `steps[j]`·`step[j]`/(σ√T)).
    step: Vec<f64>,
    middle: usize,
    ln_spot: f64,
    down: f64,
    up: f64,
}

impl<'g> GridPoints<'g> {
    fn new(grid: &'g [f64], spot: f64, (down, up): (f64, f64)) -> Self {
        let middle = grid.len() / 2;
        Self {
            spots: grid,
            steps: (0..grid.len())
                .map(|j| {
                    if j < middle {
                        -((middle - j) as f64)
                    } else {
                        (j - middle) as f64
                    }
                })
                .collect(),
            step: (0..grid.len())
                .map(|j| if j < middle { -down } else { up })
                .collect(),
            middle,
            ln_spot: spot.ln(),
            down,
            up,
        }
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

/// The re-priced curves (GEX, delta-adjusted GEX) of some contracts at every grid point.
#[derive(Debug, Clone)]
struct GridValues {
    gamma: Vec<f64>,
    adjusted: Vec<f64>,
}

impl GammaCurve {
    /// An empty curve with room for `contracts` contracts.
    pub(crate) fn with_capacity(contracts: usize) -> Self {
        Self {
            contracts: Vec::with_capacity(contracts),
            group_starts: Vec::new(),
        }
    }

    /// Starts a new group; later [`push`](Self::push)es belong to it.
    pub(crate) fn start_group(&mut self) {
        self.group_starts.push(self.contracts.len());
    }

    pub(crate) fn push(&mut self, contract: CurveContract) {
        self.contracts.push(contract);
    }

    /// The positions of group g's contracts.
    fn group_range(&self, g: usize) -> Range<usize> {
        let start = self.group_starts[g];
        let end = self
            .group_starts
            .get(g + 1)
            .copied()
            .unwrap_or(self.contracts.len());
        start..end
    }

    fn group(&self, g: usize) -> &[CurveContract] {
        &self.contracts[self.group_range(g)]
    }

    #[cfg(test)]
    fn sum(contracts: &[CurveContract], spot: f64) -> (f64, f64) {
        let ln_spot = spot.ln();
        contracts.iter().fold((0.0, 0.0), |(g, d), c| {
            let (cg, cd) = c.at(spot, ln_spot);
            (g + cg, d + cd)
        })
    }

    /// Both curves of `contracts` over `grid` (odd length, spot the middle point, even steps
    /// in ln S of `down` < 0 below spot and `up` > 0 above it), each point a sum in contract
    /// order.
    fn grid_values(
        contracts: &[CurveContract],
        grid: &[f64],
        spot: f64,
        steps: (f64, f64),
    ) -> GridValues {
        let points = GridPoints::new(grid, spot, steps);
        let mut gamma = vec![0.0; grid.len()];
        let mut adjusted = vec![0.0; grid.len()];
        for contract in contracts {
            contract.accumulate(&points, &mut gamma, &mut adjusted);
        }
        GridValues { gamma, adjusted }
    }

    /// Flip levels of every group and of the whole, from one pass over the grid per group
    /// (every `stride`-th point of it, [`sampling_stride`]).
    pub(crate) fn flips(&self, spot: f64, config: &FlipConfig) -> Flips {
        let groups = self.group_starts.len();
        let grid = config.grid(spot);
        let tolerance = config.relative_tolerance * spot;
        let (down, up) = config.log_steps();
        let columns = CurveColumns::of(&self.contracts);
        let ranges: Vec<Range<usize>> = (0..groups).map(|g| self.group_range(g)).collect();
        // Each group is independent; rayon keeps the order, so results do not depend on
        // threads.
        let per_group: Vec<(GridValues, usize, (FlipLevel, FlipLevel))> = (0..groups)
            .into_par_iter()
            .map(|g| {
                let contracts = self.group(g);
                let stride = sampling_stride(contracts, config);
                let sampled = sampled_grid(&grid, stride);
                let steps = (stride as f64 * down, stride as f64 * up);
                let values = Self::grid_values(contracts, &sampled, spot, steps);
                let solve = |curve: &[f64], adjusted: bool| {
                    let curve = SampledCurve {
                        grid: &sampled,
                        values: curve,
                        confirmed: true,
                    };
                    let group = &ranges[g..=g];
                    flip_from_curve(&curve, spot, tolerance, (&columns, group), adjusted)
                };
                let flips = (solve(&values.gamma, false), solve(&values.adjusted, true));
                let upsampling = Upsampling::new(sampled.len() / 2, stride);
                let values = GridValues {
                    gamma: upsampling.apply(&values.gamma),
                    adjusted: upsampling.apply(&values.adjusted),
                };
                (values, stride, flips)
            })
            .collect();
        let mut gamma_total = vec![0.0; grid.len()];
        let mut adjusted_total = vec![0.0; grid.len()];
        for (values, _, _) in &per_group {
            for (total, v) in gamma_total.iter_mut().zip(&values.gamma) {
                *total += v;
            }
            for (total, v) in adjusted_total.iter_mut().zip(&values.adjusted) {
                *total += v;
            }
        }
        // Interpolated group values only place the aggregate's brackets; their ends are
        // evaluated directly before refining.
        let confirmed = per_group.iter().all(|(_, stride, _)| *stride == 1);
        let solve = |curve: &[f64], adjusted: bool| {
            let curve = SampledCurve {
                grid: &grid,
                values: curve,
                confirmed,
            };
            flip_from_curve(&curve, spot, tolerance, (&columns, &ranges), adjusted)
        };
        let aggregate = rayon::join(
            || solve(&gamma_total, false),
            || solve(&adjusted_total, true),
        );
        Flips {
            groups: per_group.into_iter().map(|(_, _, flips)| flips).collect(),
            aggregate,
        }
    }
}

/// The stride at which a group's curves are sampled: the largest divisor m of the steps per
/// side such that m grid steps (the wider of the two sides') span at most
/// [`FlipConfig::coarsest_d1_step`] of d1 for the group's narrowest contract. 1 (every point)
/// when even one step is wider than that, or when the setting is 0.
fn sampling_stride(contracts: &[CurveContract], config: &FlipConfig) -> usize {
    let steps = config.steps_per_side().max(1);
    let (down, up) = config.log_steps();
    let widest_step = (-down).max(up);
    let narrowest = contracts
        .iter()
        .map(|c| c.inv_total_vol)
        .fold(0.0_f64, f64::max);
    if narrowest == 0.0 {
        // No contract: every value is zero whatever the stride.
        return steps;
    }
    let limit = config.coarsest_d1_step / (widest_step * narrowest);
    (1..=steps)
        .rev()
        .find(|&m| steps.is_multiple_of(m) && m as f64 <= limit)
        .unwrap_or(1)
}

/// Every `stride`-th point of `grid` counted from its middle (spot) outwards; the ends are
/// kept since `stride` divides the steps per side.
fn sampled_grid(grid: &[f64], stride: usize) -> Vec<f64> {
    let middle = grid.len() / 2;
    let per_side = middle / stride;
    (0..=2 * per_side)
        .map(|k| {
            if k <= per_side {
                grid[middle - (per_side - k) * stride]
            } else {
                grid[middle + (k - per_side) * stride]
            }
        })
        .collect()
}

/// Carries a curve sampled at every `stride`-th point of the grid ([`sampled_grid`]) back to
/// every point: the sampled points exactly, the others by the cubic through the four nearest
/// sampled points of their side (Lagrange, in the point index, which is linear in ln S on a
/// side), or by the chord where a side has fewer than four points or the stencil touches an
/// exact zero (a curve's edge, where a cubic would invent values of either sign). Built once
/// per group and applied to both of its curves.
struct Upsampling {
    stride: usize,
    /// Sampled intervals on each side of spot.
    per_side: usize,
    /// The cubic's weight of each of its four nodes (one column per node, so that an
    /// interval's points are interpolated in one vectorised loop), by the point's place among
    /// the nodes (the first node 0, 1 or 2 sampled steps below it) and its fraction of a step;
    /// empty when a side has fewer than four points (the chord is used).
    weights: [Vec<f64>; 4],
}

impl Upsampling {
    /// For curves of `2·per_side + 1` points sampled at every `stride`-th grid point.
    fn new(per_side: usize, stride: usize) -> Self {
        let slots = if stride == 1 || per_side < 3 {
            0
        } else {
            3 * stride
        };
        let mut weights: [Vec<f64>; 4] = std::array::from_fn(|_| Vec::with_capacity(slots));
        for slot in 0..slots {
            let x = (slot / stride) as f64 + Self::fraction(slot % stride, stride);
            for (column, w) in weights.iter_mut().zip([
                -(x - 1.0) * (x - 2.0) * (x - 3.0) / 6.0,
                x * (x - 2.0) * (x - 3.0) / 2.0,
                -x * (x - 1.0) * (x - 3.0) / 2.0,
                x * (x - 1.0) * (x - 2.0) / 6.0,
            ]) {
                column.push(w);
            }
        }
        Self {
            stride,
            per_side,
            weights,
        }
    }

    /// Point `r` of a sampled step of `stride` points, as a fraction of the step.
    fn fraction(r: usize, stride: usize) -> f64 {
        r as f64 / stride as f64
    }

    /// The values at every grid point of `sampled` (`2·per_side + 1` values).
    fn apply(&self, sampled: &[f64]) -> Vec<f64> {
        if self.stride == 1 {
            return sampled.to_vec();
        }
        let per_side = self.per_side;
        debug_assert_eq!(
            sampled.len(),
            2 * per_side + 1,
            "a curve of the sampled grid"
        );
        let middle = per_side * self.stride;
        let mut values = vec![0.0; 2 * middle + 1];
        // The lower side is built outward from spot, then turned to ascending order; both
        // sides write the value at spot, the same sampled value.
        let below: Vec<f64> = sampled[..=per_side].iter().rev().copied().collect();
        self.side(&below, &mut values[..=middle]);
        values[..=middle].reverse();
        self.side(&sampled[per_side..], &mut values[middle..]);
        values
    }

    /// One side's values outward from spot (spot first) into `values` (`per_side·stride + 1`
    /// of them), from its sampled values `outward`; one sampled interval at a time, so that
    /// its stencil (and whether it touches a zero) is chosen once for the points inside it.
    fn side(&self, outward: &[f64], values: &mut [f64]) {
        let (stride, per_side) = (self.stride, self.per_side);
        let middle = per_side * stride;
        for (k, out) in values[..middle].chunks_exact_mut(stride).enumerate() {
            let (low, high) = (outward[k], outward[k + 1]);
            out[0] = low;
            let first = k.saturating_sub(1).min(per_side.saturating_sub(3));
            let cubic = (per_side >= 3)
                .then(|| &outward[first..first + 4])
                .filter(|nodes| !nodes.contains(&0.0));
            let out = &mut out[1..];
            match cubic {
                Some(nodes) => {
                    let place = (k - first) * stride + 1..(k - first + 1) * stride;
                    let [w0, w1, w2, w3] = self.weights.each_ref().map(|c| &c[place.clone()]);
                    // Every slice cut to the output's length, so that the loop runs without
                    // bounds checks (and in vector lanes).
                    let n = out.len();
                    let (w0, w1, w2, w3) = (&w0[..n], &w1[..n], &w2[..n], &w3[..n]);
                    for r in 0..n {
                        out[r] = nodes[0] * w0[r]
                            + nodes[1] * w1[r]
                            + nodes[2] * w2[r]
                            + nodes[3] * w3[r];
                    }
                }
                None => {
                    for (r, v) in (1..).zip(out.iter_mut()) {
                        *v = low + Self::fraction(r, stride) * (high - low);
                    }
                }
            }
        }
        values[middle] = outward[per_side];
    }
}

/// A curve's values over a grid; `confirmed` when each value is an exact sum (not
/// interpolated).
struct SampledCurve<'a> {
    grid: &'a [f64],
    values: &'a [f64],
    confirmed: bool,
}

impl SampledCurve<'_> {
    /// The value at spot, the grid's middle point (a sampled point of every group, so never
    /// interpolated).
    fn at_spot(&self) -> f64 {
        self.values[self.values.len() / 2]
    }
}

/// Brackets sign changes of `curve` over `grid`, refines each ([`refine`]) on the direct sum
/// over the contracts of `groups` (ranges of `columns`; the delta-adjusted curve when
/// `adjusted`) and picks the one nearest `spot`.
fn flip_from_curve(
    curve: &SampledCurve<'_>,
    spot: f64,
    tolerance: f64,
    (columns, groups): (&CurveColumns, &[Range<usize>]),
    adjusted: bool,
) -> FlipLevel {
    let value_at_spot = curve.at_spot();
    let mut nonzero: Vec<(f64, f64)> = Vec::with_capacity(curve.grid.len());
    nonzero.extend(
        curve
            .grid
            .iter()
            .zip(curve.values)
            .filter(|(_, v)| **v != 0.0)
            .map(|(&s, &v)| (s, v)),
    );
    if nonzero.is_empty() {
        return FlipLevel {
            degeneracy: Some(FlipDegeneracy::NoExposure),
            value_at_spot,
            ..FlipLevel::default()
        };
    }
    // The index in `nonzero` of each bracket's lower end.
    let brackets: Vec<usize> = nonzero
        .windows(2)
        .enumerate()
        .filter(|(_, w)| (w[0].1 > 0.0) != (w[1].1 > 0.0))
        .map(|(i, _)| i)
        .collect();
    // Unconfirmed values may put a bracket one point off where the curve is within the
    // interpolation error of zero: its neighbours are checked too.
    let reach = usize::from(!curve.confirmed);
    let reach_of = |i: usize| {
        (
            i.saturating_sub(reach),
            (i + 1 + reach).min(nonzero.len() - 1),
        )
    };
    let refine_bracket = |i: usize| -> Option<f64> {
        let (first, last) = reach_of(i);
        // Only the contracts that are not negligible somewhere in the bracket count there.
        let (ln_low, ln_high) = (nonzero[first].0.ln(), nonzero[last].0.ln());
        let active = ActiveContracts::within(columns, groups, ln_low, ln_high);
        let value_slope_curvature = |s: f64| active.value_slope_curvature(s, adjusted);
        // Newton starts from the cubic through the grid values around the bracket.
        let around = &nonzero[i.saturating_sub(1)..(i + 3).min(nonzero.len())];
        let start_in = |low: f64, high: f64| cubic_root_estimate(around, (low, high));
        let ((low, f_low), (high, f_high)) = if curve.confirmed {
            (nonzero[i], nonzero[i + 1])
        } else if let Ok(root) = newton(
            &value_slope_curvature,
            nonzero[i],
            nonzero[i + 1],
            start_in(nonzero[i].0, nonzero[i + 1].0),
            tolerance,
        ) {
            // Converged from the interpolated bracket: the root needs no confirmed ends.
            return Some(root);
        } else {
            confirmed_bracket(&nonzero[first..=last], i - first, |s| {
                value_slope_curvature(s).0
            })?
        };
        if f_low == 0.0 {
            return Some(low);
        }
        if f_high == 0.0 {
            return Some(high);
        }
        Some(refine(
            value_slope_curvature,
            (low, f_low),
            (high, f_high),
            start_in(low, high),
            tolerance,
        ))
    };
    // Only the crossing nearest spot is the level: brackets are refined nearest first (by
    // the nearest point of the interval they may end in) until the next cannot beat the best
    // crossing so far — usually one or two per curve instead of all.
    let distance_bound = |i: usize| {
        let (first, last) = reach_of(i);
        let (low, high) = (nonzero[first].0, nonzero[last].0);
        if low <= spot && spot <= high {
            0.0
        } else {
            (low - spot).abs().min((high - spot).abs())
        }
    };
    let mut order = brackets;
    order.sort_by(|&a, &b| distance_bound(a).total_cmp(&distance_bound(b)));
    let mut crossings: Vec<f64> = Vec::new();
    for i in order {
        let nearest = crossings
            .iter()
            .map(|x| (x - spot).abs())
            .fold(f64::INFINITY, f64::min);
        if distance_bound(i) > nearest {
            break;
        }
        crossings.extend(refine_bracket(i));
    }
    crossings.sort_by(f64::total_cmp);
    // A root exactly on a grid point ends two brackets.
    crossings.dedup();
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

/// Two points `(x, f(x))` of a curve whose values differ in sign (or one is zero).
type Bracket = ((f64, f64), (f64, f64));

/// A bracket of the exact curve `f` near an interpolated one: `points[at]` and
/// `points[at + 1]` changed sign in interpolated values; returns the first of that interval
/// and its neighbours in `points` (lower, middle, upper) whose ends, evaluated by `f`, do
/// (a zero value ends the search as a bracket of its own), or `None` when none does — the
/// interpolated sign change was an artefact of the curve lying within the interpolation
/// error of zero without crossing it.
fn confirmed_bracket(points: &[(f64, f64)], at: usize, f: impl Fn(f64) -> f64) -> Option<Bracket> {
    let exact: Vec<std::cell::OnceCell<f64>> = vec![std::cell::OnceCell::new(); points.len()];
    // Each point evaluated once, and only when needed: usually the two ends suffice.
    let at_point = |j: usize| (points[j].0, *exact[j].get_or_init(|| f(points[j].0)));
    let crosses = |j: usize| {
        let (a, b) = (at_point(j), at_point(j + 1));
        (a.1 == 0.0 || b.1 == 0.0 || (a.1 > 0.0) != (b.1 > 0.0)).then_some((a, b))
    };
    crosses(at)
        .or_else(|| at.checked_sub(1).and_then(crosses))
        .or_else(|| (at + 2 < points.len()).then(|| crosses(at + 1)).flatten())
}

/// Where the cubic through `points` (two to four consecutive grid values around the
/// bracket) crosses zero inside `bracket`: a start for [`refine`] good to a small fraction
/// of a grid step where the curve is smooth on that scale. Newton's divided differences,
/// then Newton on the polynomial from the secant point, kept inside the bracket.
fn cubic_root_estimate(points: &[(f64, f64)], (low, high): (f64, f64)) -> f64 {
    let n = points.len().min(4);
    let x: Vec<f64> = points[..n].iter().map(|p| p.0).collect();
    let mut c: Vec<f64> = points[..n].iter().map(|p| p.1).collect();
    for order in 1..n {
        for i in (order..n).rev() {
            c[i] = (c[i] - c[i - 1]) / (x[i] - x[i - order]);
        }
    }
    let polynomial = |t: f64| {
        // p(t) and p′(t) by Horner on the Newton form.
        let (mut p, mut dp) = (c[n - 1], 0.0);
        for i in (0..n - 1).rev() {
            dp = dp * (t - x[i]) + p;
            p = p * (t - x[i]) + c[i];
        }
        (p, dp)
    };
    let (f_low, f_high) = (polynomial(low).0, polynomial(high).0);
    let mut t = low - f_low * (high - low) / (f_high - f_low);
    for _ in 0..8 {
        let (p, dp) = polynomial(t);
        let next = t - p / dp;
        if !(next > low && next < high) {
            break;
        }
        t = next;
    }
    if t > low && t < high {
        t
    } else {
        0.5 * (low + high)
    }
}

/// The root of a curve in the bracket `(a, f(a))`, `(b, f(b))` (f(a)·f(b) < 0) to absolute
/// tolerance `tolerance`: [`newton`] from `start`, then Brent's method on the bracket as
/// Newton left it when its steps do not converge. `value_slope_curvature` gives f, f′ and f″.
fn refine(
    value_slope_curvature: impl Fn(f64) -> (f64, f64, f64),
    a: (f64, f64),
    b: (f64, f64),
    start: f64,
    tolerance: f64,
) -> f64 {
    match newton(&value_slope_curvature, a, b, start, tolerance) {
        Ok(root) => root,
        Err((a, b)) => brent(|s| value_slope_curvature(s).0, a, b, tolerance),
    }
}

/// Newton steps with the exact slope from `start`, each evaluation also shrinking the bracket
/// `(a, f(a))`, `(b, f(b))`, until a step is below `tolerance` or the error the step leaves,
/// |f″/(2f′)|·step², is below a hundredth of it (then the step is taken without evaluating
/// the curve again: from the grid's cubic estimate that is usually after the first
/// evaluation). A converged step is a root on its own evidence (exact value, slope and
/// curvature at the last point), whatever the ends' signs were. `Err` with the bracket so
/// far when a step would leave it or six steps do not converge.
fn newton(
    value_slope_curvature: &impl Fn(f64) -> (f64, f64, f64),
    (mut a, mut f_a): (f64, f64),
    (mut b, mut f_b): (f64, f64),
    start: f64,
    tolerance: f64,
) -> Result<f64, Bracket> {
    const NEWTON_STEPS: usize = 6;
    let mut x = start;
    for _ in 0..NEWTON_STEPS {
        let (value, slope, curvature) = value_slope_curvature(x);
        if value == 0.0 {
            return Ok(x);
        }
        if (value > 0.0) == (f_a > 0.0) {
            (a, f_a) = (x, value);
        } else {
            (b, f_b) = (x, value);
        }
        let step = value / slope;
        let next = x - step;
        if !(next > a && next < b) {
            break;
        }
        x = next;
        let error_left = (0.5 * curvature / slope).abs() * step * step;
        if step.abs() <= tolerance || error_left <= 0.01 * tolerance {
            return Ok(x);
        }
    }
    Err(((a, f_a), (b, f_b)))
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A spread of contracts from one hour to three years, strikes from half to twice spot.
    fn curve(spot: f64) -> GammaCurve {
        let mut curve = GammaCurve::default();
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut uniform = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        for years in [
            1.0 / 24.0 / 365.0,
            1.0 / 365.0,
            0.02,
            0.1,
            0.5,
            1.0,
            3.0_f64,
        ] {
            curve.start_group();
            // By strike within an expiration, as a chain's contracts come.
            let mut strikes: Vec<f64> = (0..400).map(|_| spot * (0.5 + 1.5 * uniform())).collect();
            strikes.sort_by(f64::total_cmp);
            for strike in strikes {
                let sign = if uniform() < 0.5 { 1.0 } else { -1.0 };
                let iv = 0.05 + 1.0 * uniform();
                let open_interest = (uniform() * 20_000.0) as u64;
                let forward = spot * (0.03 * years).exp();
                let terms = CurveTerms::new(forward, spot, years, 0.04);
                if let Some(c) = CurveContract::new(sign, open_interest, strike, iv, &terms) {
                    curve.push(c);
                }
            }
        }
        curve
    }

    #[test]
    fn grid_values_are_the_sums_of_each_contract_at_each_point() {
        let spot = 4_321.5;
        let curve = curve(spot);
        let config = FlipConfig::default();
        let grid = config.grid(spot);
        for g in 0..curve.group_starts.len() {
            let contracts = curve.group(g);
            let values = GammaCurve::grid_values(contracts, &grid, spot, config.log_steps());
            let middle = grid.len() / 2;
            let (down, up) = config.log_steps();
            for (j, &s) in grid.iter().enumerate() {
                // The grid's own abscissa (spot's ln plus whole steps): a grid point's ln differs
                // from it by an ulp, which a one-hour contract's d1 amplifies by 1/(σ√T).
                let ln_s = if j < middle {
                    spot.ln() + (middle - j) as f64 * down
                } else {
                    spot.ln() + (j - middle) as f64 * up
                };
                let (mut gamma, mut adjusted, mut gross) = (0.0, 0.0, 0.0_f64);
                for c in contracts {
                    let (cg, ca) = c.at(s, ln_s);
                    gamma += cg;
                    adjusted += ca;
                    gross += cg.abs();
                }
                let tolerance = 1e-12 * gross.max(f64::MIN_POSITIVE);
                assert!(
                    (values.gamma[j] - gamma).abs() <= tolerance,
                    "group {g} point {j}: {} vs {gamma}",
                    values.gamma[j]
                );
                assert!(
                    (values.adjusted[j] - adjusted).abs() <= tolerance,
                    "group {g} point {j}: {} vs {adjusted}",
                    values.adjusted[j]
                );
            }
            // At spot d1 is the direct evaluation's own: the value is the direct sum, bit for bit.
            assert_eq!(values.gamma[middle], GammaCurve::sum(contracts, spot).0);
        }
    }

    #[test]
    fn the_lower_tail_is_the_normal_distribution() {
        use std::f64::consts::SQRT_2;
        // Every branch and both switch points, against the library's Φ (Cody's erfc, each
        // branch divided on its own, e^{−y²} from the exact square): within a few units in the
        // last place, plus what the density's rounded square carries (about y² of them).
        let steps = (0..)
            .map(|i| f64::from(i) * 0.003_1)
            .take_while(|&d1| d1 <= NEGLIGIBLE_D1);
        for x in steps.chain([CODY_THRESHOLD * SQRT_2, CODY_LARGE * SQRT_2]) {
            let y = x * FRAC_1_SQRT_2;
            let ours = lower_tail(y, exp_straight(-y * y));
            let reference = crate::pricing::special::norm_cdf(-x);
            let ulps = 4.0 + 2.0 * y * y;
            assert!(
                (ours - reference).abs() <= ulps * f64::EPSILON * reference,
                "d1 {x}: {ours} vs {reference}"
            );
        }
    }

    #[test]
    fn sampled_groups_find_the_crossings_of_the_full_grid() {
        // Every expiration at every grid point (coarsest_d1_step 0) against the default
        // sampling: the same levels, each to the refinement tolerance, for every group and
        // for the aggregate, at spots that move the curve's features across the grid.
        let every_point = FlipConfig {
            coarsest_d1_step: 0.0,
            ..FlipConfig::default()
        };
        let sampled = FlipConfig::default();
        let mut compared = 0;
        let mut strided = 0;
        for spot in [250.0, 251.3, 4_321.5] {
            let curve = curve(spot);
            strided += (0..curve.group_starts.len())
                .filter(|&g| sampling_stride(curve.group(g), &sampled) > 1)
                .count();
            let (full, fast) = (curve.flips(spot, &every_point), curve.flips(spot, &sampled));
            let pairs = std::iter::once((&full.aggregate, &fast.aggregate))
                .chain(full.groups.iter().zip(&fast.groups));
            for ((full_gamma, full_adjusted), (gamma, adjusted)) in pairs {
                for (expected, found) in [(full_gamma, gamma), (full_adjusted, adjusted)] {
                    match (expected.level, found.level) {
                        (Some(a), Some(b)) => {
                            assert!((a - b).abs() <= 2.0 * sampled.relative_tolerance * spot);
                            compared += 1;
                        }
                        (a, b) => assert_eq!(a, b, "{spot}"),
                    }
                    assert_eq!(expected.value_at_spot, found.value_at_spot);
                    assert_eq!(expected.degeneracy, found.degeneracy);
                }
            }
        }
        assert!(
            compared >= 20 && strided >= 6,
            "{compared} levels, {strided} strided"
        );
    }

    #[test]
    fn the_level_is_no_farther_than_the_nearest_sign_change_of_the_direct_sum() {
        // Brackets are refined nearest first and the rest skipped: the level must still lie
        // within the nearest sign-change interval of the exact curve over the grid.
        let config = FlipConfig::default();
        let mut checked = 0;
        for spot in [250.0, 4_321.5] {
            let curve = curve(spot);
            let grid = config.grid(spot);
            let flips = curve.flips(spot, &config);
            let groups = (0..curve.group_starts.len()).map(|g| (curve.group(g), &flips.groups[g]));
            for (contracts, (gamma, adjusted)) in
                std::iter::once((&curve.contracts[..], &flips.aggregate)).chain(groups)
            {
                for (flip, is_adjusted) in [(gamma, false), (adjusted, true)] {
                    let exact: Vec<(f64, f64)> = grid
                        .iter()
                        .map(|&s| {
                            let (g, a) = GammaCurve::sum(contracts, s);
                            (s, if is_adjusted { a } else { g })
                        })
                        .filter(|(_, v)| *v != 0.0)
                        .collect();
                    let farthest_end_of_nearest = exact
                        .windows(2)
                        .filter(|w| (w[0].1 > 0.0) != (w[1].1 > 0.0))
                        .map(|w| {
                            let (near, far) = ((w[0].0 - spot).abs(), (w[1].0 - spot).abs());
                            let inside = w[0].0 <= spot && spot <= w[1].0;
                            (if inside { 0.0 } else { near.min(far) }, near.max(far))
                        })
                        .min_by(|a, b| a.0.total_cmp(&b.0))
                        .map(|(_, far)| far);
                    match (flip.level, farthest_end_of_nearest) {
                        (Some(level), Some(bound)) => {
                            assert!((level - spot).abs() <= bound * (1.0 + 1e-12));
                            checked += 1;
                        }
                        (level, bound) => assert_eq!(level.is_some(), bound.is_some()),
                    }
                }
            }
        }
        assert!(checked >= 10, "{checked}");
    }

    #[test]
    fn sampling_stride_keeps_the_narrowest_contract_resolved() {
        let config = FlipConfig::default();
        let (down, up) = config.log_steps();
        let widest = (-down).max(up);
        let spot = 100.0;
        let curve = curve(spot);
        for g in 0..curve.group_starts.len() {
            let contracts = curve.group(g);
            let stride = sampling_stride(contracts, &config);
            assert!(config.steps_per_side().is_multiple_of(stride));
            let narrowest = contracts
                .iter()
                .map(|c| c.inv_total_vol)
                .fold(0.0, f64::max);
            // Within the limit, and the next divisor up would not be.
            assert!(stride == 1 || stride as f64 * widest * narrowest <= config.coarsest_d1_step);
            let next = (stride + 1..=config.steps_per_side())
                .find(|m| config.steps_per_side().is_multiple_of(*m));
            if let Some(next) = next {
                assert!(next as f64 * widest * narrowest > config.coarsest_d1_step);
            }
        }
        let every_point = FlipConfig {
            coarsest_d1_step: 0.0,
            ..config
        };
        assert_eq!(sampling_stride(curve.group(6), &every_point), 1);
    }

    #[test]
    fn upsampling_keeps_sampled_points_and_is_exact_on_cubics() {
        let upsample =
            |sampled: &[f64], stride| Upsampling::new(sampled.len() / 2, stride).apply(sampled);
        // Four points per side at stride 5: a cubic in the distance from spot on each side
        // (a different one above and below, equal at spot) comes back exactly between them.
        let below = |i: f64| 2.0 + 0.5 * i - 0.03 * i * i + 0.001 * i * i * i;
        let above = |i: f64| 2.0 - 0.2 * i + 0.01 * i * i - 0.0005 * i * i * i;
        let stride = 5;
        let per_side = 4;
        let middle = per_side * stride;
        let exact = |j: usize| {
            let distance = j.abs_diff(middle) as f64;
            if j < middle {
                below(distance)
            } else {
                above(distance)
            }
        };
        let sampled: Vec<f64> = (0..=2 * per_side).map(|k| exact(k * stride)).collect();
        let values = upsample(&sampled, stride);
        assert_eq!(values.len(), 2 * middle + 1);
        for (j, v) in values.iter().enumerate() {
            assert!(
                (v - exact(j)).abs() < 1e-12,
                "point {j}: {v} vs {}",
                exact(j)
            );
        }
        // A stencil touching a zero falls back to the chord: no value of the wrong sign.
        let edge = [0.0, 0.0, 0.0, 1.0, 2.0, 0.0, 0.0];
        let values = upsample(&edge, 4);
        assert!(values.iter().all(|v| *v >= 0.0));
        assert_eq!(upsample(&edge, 1), edge.to_vec());
    }

    #[test]
    fn a_contract_is_active_exactly_where_its_d1_is_within_the_cutoff() {
        let spot = 100.0;
        let curve = curve(spot);
        for c in &curve.contracts {
            let (from, to) = c.active_log_spots();
            assert!((c.d1(from) + NEGLIGIBLE_D1).abs() < 1e-9);
            assert!((c.d1(to) - NEGLIGIBLE_D1).abs() < 1e-9);
        }
    }

    /// One contract's [`CurveContract::value_slope_curvature`].
    fn one(c: &CurveContract, s: f64, adjusted: bool) -> (f64, f64, f64) {
        if adjusted {
            c.value_slope_curvature::<true>(s, s.ln())
        } else {
            c.value_slope_curvature::<false>(s, s.ln())
        }
    }

    #[test]
    fn slopes_match_finite_differences() {
        let spot = 250.0;
        let curve = curve(spot);
        for c in curve.contracts.iter().step_by(37) {
            for s in [0.85 * spot, 0.97 * spot, spot, 1.04 * spot, 1.15 * spot] {
                for adjusted in [false, true] {
                    let (value, slope, curvature) = one(c, s, adjusted);
                    // Steps of 0.001 and 0.0005 in d1, Richardson-extrapolated.
                    let h = 1e-3 * s * 2.0 * c.half_total_vol;
                    let f = |x: f64| one(c, x, adjusted);
                    let central = |h: f64| (f(s + h).0 - f(s - h).0) / (2.0 * h);
                    let numeric = (4.0 * central(0.5 * h) - central(h)) / 3.0;
                    let scale = value.abs() / s + numeric.abs() + 1e-300;
                    assert!(
                        (slope - numeric).abs() <= 1e-6 * scale,
                        "adjusted {adjusted} at {s}: {slope} vs {numeric}"
                    );
                    // The curvature against central differences of the exact slope.
                    let slope_central = |h: f64| (f(s + h).1 - f(s - h).1) / (2.0 * h);
                    let numeric = (4.0 * slope_central(0.5 * h) - slope_central(h)) / 3.0;
                    let scale = slope.abs() / s + value.abs() / (s * s) + numeric.abs() + 1e-300;
                    assert!(
                        (curvature - numeric).abs() <= 1e-6 * scale,
                        "adjusted {adjusted} at {s}: curvature {curvature} vs {numeric}"
                    );
                    let (g, a) = c.at(s, s.ln());
                    assert_eq!(value, if adjusted { a } else { g });
                }
            }
        }
    }

    #[test]
    fn the_lane_sum_over_active_contracts_is_the_sum_of_every_contract() {
        // The refinement's vectorised sum over the contracts active in a window against each
        // contract evaluated on its own, in order: every spot of the window, both curves, a
        // count that is not a multiple of the lanes.
        let spot = 250.0;
        let curve = curve(spot);
        let mut cut = curve.contracts.len() - 3;
        cut -= usize::from(cut.is_multiple_of(SUM_LANES));
        let contracts = &curve.contracts[..cut];
        assert_ne!(contracts.len() % SUM_LANES, 0);
        let columns = CurveColumns::of(contracts);
        let groups: Vec<Range<usize>> = (0..curve.group_starts.len())
            .map(|g| {
                let range = curve.group_range(g);
                range.start..range.end.min(contracts.len())
            })
            .collect();
        let (low, high) = ((0.93 * spot).ln(), (1.05 * spot).ln());
        let active = ActiveContracts::within(&columns, &groups, low, high);
        // The one-hour expiration's far strikes are left out.
        assert!(active.len() < contracts.len(), "{}", active.len());
        for s in [0.93 * spot, 0.97 * spot, spot, 1.013 * spot, 1.05 * spot] {
            for adjusted in [false, true] {
                let (mut expected, mut gross) = ((0.0, 0.0, 0.0), (0.0, 0.0, 0.0));
                for c in contracts {
                    let (v, dv, d2v) = one(c, s, adjusted);
                    expected = (expected.0 + v, expected.1 + dv, expected.2 + d2v);
                    gross = (gross.0 + v.abs(), gross.1 + dv.abs(), gross.2 + d2v.abs());
                }
                let found = active.value_slope_curvature(s, adjusted);
                for (f, e, g) in [
                    (found.0, expected.0, gross.0),
                    (found.1, expected.1, gross.1),
                    (found.2, expected.2, gross.2),
                ] {
                    assert!(
                        (f - e).abs() <= 1e-13 * g,
                        "adjusted {adjusted} at {s}: {f} vs {e}"
                    );
                }
            }
        }
    }

    #[test]
    fn refined_crossings_meet_the_tolerance() {
        // Every crossing against Brent on the direct sum to 1e-13 × spot: the curvature-aware
        // stop must not return before the configured tolerance is reached.
        let spot = 250.0;
        let curve = curve(spot);
        let config = FlipConfig::default();
        let flips = curve.flips(spot, &config);
        let mut checked = 0;
        let groups = (0..curve.group_starts.len()).map(|g| (curve.group(g), &flips.groups[g]));
        for (contracts, (gamma, adjusted)) in
            std::iter::once((&curve.contracts[..], &flips.aggregate)).chain(groups)
        {
            for (crossings, is_adjusted) in [(&gamma.crossings, false), (&adjusted.crossings, true)]
            {
                for &level in crossings.iter() {
                    let f = |s: f64| {
                        let (g, a) = GammaCurve::sum(contracts, s);
                        if is_adjusted { a } else { g }
                    };
                    let (low, high) = (level - 1e-7 * spot, level + 1e-7 * spot);
                    assert!(f(low) * f(high) < 0.0, "no sign change around {level}");
                    let exact = brent(f, (low, f(low)), (high, f(high)), 1e-13 * spot);
                    assert!(
                        (level - exact).abs() <= config.relative_tolerance * spot,
                        "{level} vs {exact}"
                    );
                    checked += 1;
                }
            }
        }
        assert!(checked >= 10, "{checked} crossings");
    }

    #[test]
    fn refine_converges_with_newton_and_falls_back_to_brent() {
        // e^x − 3: root ln 3; Newton from inside the bracket.
        let f = |x: f64| (x.exp() - 3.0, x.exp(), x.exp());
        let root = refine(f, (0.5, f(0.5).0), (2.0, f(2.0).0), 1.0, 1e-12);
        assert!((root - 3f64.ln()).abs() < 1e-12);
        // atan(x − 1): Newton from 3.5 overshoots out of the bracket; Brent finishes.
        let g = |x: f64| {
            let u = x - 1.0;
            let slope = 1.0 / (1.0 + u * u);
            (u.atan(), slope, -2.0 * u * slope * slope)
        };
        let root = refine(g, (-4.0, g(-4.0).0), (4.0, g(4.0).0), 3.5, 1e-12);
        assert!((root - 1.0).abs() < 1e-11);
    }

    #[test]
    fn cubic_estimate_is_exact_on_a_cubic() {
        // (x − 1.3)(x + 2)(x − 4) through four points; the root in [1, 2] is 1.3.
        let p = |x: f64| (x - 1.3) * (x + 2.0) * (x - 4.0);
        let points: Vec<(f64, f64)> = [0.0, 1.0, 2.0, 3.0].iter().map(|&x| (x, p(x))).collect();
        let estimate = cubic_root_estimate(&points, (1.0, 2.0));
        assert!((estimate - 1.3).abs() < 1e-12, "{estimate}");
        // Two points: the secant.
        let estimate = cubic_root_estimate(&points[1..3], (1.0, 2.0));
        assert!(estimate > 1.0 && estimate < 2.0);
    }
}
