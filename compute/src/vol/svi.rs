//! Raw SVI smile per expiration (`monies`, `skew`): the fit, its error, a butterfly-arbitrage
//! check, and the figures read off it (IV at a log-moneyness, ATM IV, slope, curvature, IV at
//! fixed call deltas).
//!
//! | quantity | unit |
//! | --- | --- |
//! | log-moneyness `k` | `ln(K / F)`, F the expiration's forward |
//! | `years` T | years to expiration |
//! | total variance `w` | `σ_imp² · T` (σ_imp as a decimal) |
//! | IVs, fit errors | annualised percentage points |
//! | slope | IV points per unit of k |
//! | curvature | IV points per unit of k² |
//! | delta | undiscounted Black-76 call delta `N(d₁)`, 0–1 |
//!
//! # Parametrisation (Gatheral 2004, "raw" SVI)
//!
//! `w(k) = a + b (ρ (k − m) + √((k − m)² + σ²))` with `b ≥ 0`, `|ρ| ≤ 1`, `σ > 0`, and a
//! non-negative minimum `a + b σ √(1 − ρ²) ≥ 0`. The wings' slopes `b(1 ± ρ)` are held to
//! `b (1 + |ρ|) ≤ 2`, Lee's (2004) moment bound on total variance (a steeper wing has butterfly
//! arbitrage far out, since `g(k) → ¼ − b²(1 ± ρ)²/16`).
//!
//! # Fit (quasi-explicit, Zeleznik 2005; De Marco & Martini 2009)
//!
//! Weighted least squares in total variance: minimise `Σ Wᵢ (w(kᵢ) − wᵢ)²`, wᵢ = (IVᵢ/100)²·T.
//! For fixed (m, σ), with `y = (k − m)/σ`, the model is linear, `w = a + d·y + c·√(y² + 1)`
//! (`c = bσ`, `d = ρbσ`), and the constraints are linear (`|d| ≤ c`, `c + |d| ≤ 2σ`,
//! `a ≤ max wᵢ`, `a ≥ −c`): the inner problem is a 3-variable convex quadratic programme, solved
//! exactly by enumerating active sets. The outer problem over (m, ln σ) is searched by
//! Nelder–Mead from a 5 × 5 grid of starts (m across the quoted range, σ from 0.02 to 0.5),
//! the best four refined and the best of those restarted; the remaining nonlinear constraint
//! `a + √(c² − d²) ≥ 0` (minimum total variance ≥ 0) is a penalty in the outer objective. On
//! exact SVI data the parameters are recovered to ~10⁻⁶ (tests below).
//!
//! # Figures
//!
//! - Fit error: RMSE and largest absolute error of the fitted IV against the quoted IVs,
//!   unweighted, in IV points.
//! - Butterfly arbitrage (Gatheral & Jacquier 2014): the density is non-negative iff
//!   `g(k) = (1 − k w′/(2w))² − (w′²/4)(1/w + 1/4) + w″/2 ≥ 0` (with w > 0). Checked on 1,001
//!   evenly spaced k over `[min(k_min, −2), max(k_max, 2)]`; [`SviFit::butterfly_free`] is
//!   `min g ≥ −10⁻¹²` there, and the minimum and where it falls are reported.
//! - ATM IV: `σ(0) = 100·√(w(0)/T)` (at-the-forward).
//! - **Slope** `σ′(0)` and **curvature** `σ″(0)`: first and second derivatives of the fitted IV
//!   in points with respect to k at k = 0 (closed form from w′, w″ below). A slope of −30 reads
//!   "IV rises about 3 points for a strike 10 % below the forward"; curvature is the smile's
//!   convexity, σ(k) ≈ σ(0) + σ′(0)k + ½σ″(0)k².
//! - Delta points: the k where the undiscounted call delta `N(d₁(k))`, `d₁ = −k/√w(k) + √w(k)/2`,
//!   equals the target (found by bisection after bracketing outwards from k = 0), its strike
//!   `F·eᵏ` and IV. Put delta is call delta − 1, so the 0.25 call point is the 25-delta put.

use super::optimize::{NelderMeadOptions, nelder_mead};
use super::{VolError, check_finite};
use crate::pricing::special::{inverse_norm_cdf, norm_cdf};

/// The call deltas a smile is sampled at: 0.05, 0.10, …, 0.95.
pub const STANDARD_CALL_DELTAS: [f64; 19] = [
    0.05, 0.10, 0.15, 0.20, 0.25, 0.30, 0.35, 0.40, 0.45, 0.50, 0.55, 0.60, 0.65, 0.70, 0.75, 0.80,
    0.85, 0.90, 0.95,
];

/// Fewest quotes a fit is attempted on (five parameters).
pub const SVI_MIN_POINTS: usize = 5;

/// Lee's bound on the wings' total-variance slope, `b (1 + |ρ|)`.
const MAX_WING_SLOPE: f64 = 2.0;

/// Points on the butterfly-check grid.
const BUTTERFLY_GRID_POINTS: usize = 1001;

/// Raw SVI parameters (total variance, see the module documentation).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SviParams {
    /// Level a (total variance).
    pub a: f64,
    /// Wing slope b ≥ 0.
    pub b: f64,
    /// Rotation ρ, −1 to 1.
    pub rho: f64,
    /// Horizontal shift m (log-moneyness).
    pub m: f64,
    /// ATM smoothness σ > 0 (log-moneyness).
    pub sigma: f64,
}

impl SviParams {
    /// Total variance w(k).
    pub fn total_variance(&self, k: f64) -> f64 {
        let x = k - self.m;
        self.a + self.b * (self.rho * x + (x * x + self.sigma * self.sigma).sqrt())
    }

    /// (w, w′, w″) at k.
    pub fn total_variance_derivatives(&self, k: f64) -> (f64, f64, f64) {
        let x = k - self.m;
        let root = (x * x + self.sigma * self.sigma).sqrt();
        (
            self.a + self.b * (self.rho * x + root),
            self.b * (self.rho + x / root),
            self.b * self.sigma * self.sigma / (root * root * root),
        )
    }

    /// The minimum of w over k, `a + b σ √(1 − ρ²)`.
    pub fn min_total_variance(&self) -> f64 {
        self.a + self.b * self.sigma * (1.0 - self.rho * self.rho).max(0.0).sqrt()
    }

    /// Gatheral–Jacquier's g(k) (≥ 0 ⇔ no butterfly arbitrage at k); −∞ where w ≤ 0.
    pub fn butterfly_g(&self, k: f64) -> f64 {
        let (w, w1, w2) = self.total_variance_derivatives(k);
        if !(w > 0.0) {
            return f64::NEG_INFINITY;
        }
        (1.0 - k * w1 / (2.0 * w)).powi(2) - w1 * w1 / 4.0 * (1.0 / w + 0.25) + w2 / 2.0
    }

    /// The smallest g on an evenly spaced grid of `points` over [`from`, `to`], and its k.
    pub fn min_butterfly_g(&self, from: f64, to: f64, points: usize) -> (f64, f64) {
        let step = (to - from) / (points.max(2) - 1) as f64;
        (0..points.max(2))
            .map(|i| {
                let k = from + step * i as f64;
                (self.butterfly_g(k), k)
            })
            .min_by(|a, b| a.0.total_cmp(&b.0))
            .expect("at least two points")
    }
}

/// One quote of the smile to fit.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmilePoint {
    /// ln(K / F).
    pub log_moneyness: f64,
    /// Implied vol of the mid, points.
    pub iv_pct: f64,
    /// Least-squares weight ≥ 0 (1.0 for equal weights; vega or 1/spread are common).
    pub weight: f64,
}

/// A fitted smile.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SviFit {
    /// The parameters.
    pub params: SviParams,
    /// Years to expiration the fit is for.
    pub years: f64,
    /// Quotes fitted.
    pub points: usize,
    /// Root-mean-square of fitted − quoted IV, points (unweighted).
    pub rmse_iv_pct: f64,
    /// Largest |fitted − quoted IV|, points.
    pub max_abs_error_iv_pct: f64,
    /// No butterfly arbitrage on the check grid (see the module documentation).
    pub butterfly_free: bool,
    /// Smallest g(k) on the grid.
    pub min_butterfly_g: f64,
    /// Where it is.
    pub min_butterfly_g_at: f64,
}

/// The smile at one call delta.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct DeltaPoint {
    /// Undiscounted call delta N(d₁), 0–1.
    pub call_delta: f64,
    /// ln(K / F) where the delta is reached.
    pub log_moneyness: f64,
    /// That strike, F·eᵏ, dollars.
    pub strike: f64,
    /// Fitted IV there, points.
    pub iv_pct: f64,
}

impl SviFit {
    /// Fitted IV at log-moneyness k, points; `None` where the fitted total variance is ≤ 0.
    pub fn iv_pct(&self, k: f64) -> Option<f64> {
        let w = self.params.total_variance(k);
        (w > 0.0).then(|| 100.0 * (w / self.years).sqrt())
    }

    /// IV at the forward (k = 0), points.
    pub fn atm_iv_pct(&self) -> Option<f64> {
        self.iv_pct(0.0)
    }

    /// dσ/dk at k = 0, IV points per unit log-moneyness.
    pub fn slope(&self) -> Option<f64> {
        let (w, w1, _) = self.params.total_variance_derivatives(0.0);
        (w > 0.0).then(|| 100.0 * w1 / (2.0 * (w * self.years).sqrt()))
    }

    /// d²σ/dk² at k = 0, IV points per unit log-moneyness squared.
    pub fn curvature(&self) -> Option<f64> {
        let (w, w1, w2) = self.params.total_variance_derivatives(0.0);
        (w > 0.0).then(|| {
            let root = (w * self.years).sqrt();
            100.0 * (w2 / (2.0 * root) - w1 * w1 / (4.0 * w * root))
        })
    }

    /// Undiscounted call delta at k, `N(−k/√w + √w/2)`; `None` where w ≤ 0.
    pub fn call_delta(&self, k: f64) -> Option<f64> {
        let w = self.params.total_variance(k);
        (w > 0.0).then(|| norm_cdf(d1(k, w)))
    }

    /// The smile at undiscounted call delta `call_delta` (0 < Δ < 1) for forward `forward`;
    /// `None` when Δ is outside (0, 1), the forward is not a finite number > 0, or no k in
    /// [−50, 50] reaches it.
    pub fn at_call_delta(&self, call_delta: f64, forward: f64) -> Option<DeltaPoint> {
        let valid = call_delta > 0.0 && call_delta < 1.0 && forward.is_finite() && forward > 0.0;
        if !valid {
            return None;
        }
        let target = inverse_norm_cdf(call_delta);
        // d₁ − target: positive for deep ITM calls (k → −∞), negative far OTM.
        let f = |k: f64| {
            let w = self.params.total_variance(k);
            if w > 0.0 { d1(k, w) - target } else { f64::NAN }
        };
        let (mut lo, mut hi) = (-0.25, 0.25);
        while !(f(lo) > 0.0) {
            lo *= 2.0;
            if lo < -50.0 {
                return None;
            }
        }
        while !(f(hi) < 0.0) {
            hi *= 2.0;
            if hi > 50.0 {
                return None;
            }
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if mid <= lo || mid >= hi {
                break;
            }
            if f(mid) > 0.0 { lo = mid } else { hi = mid }
        }
        let k = 0.5 * (lo + hi);
        Some(DeltaPoint {
            call_delta,
            log_moneyness: k,
            strike: forward * k.exp(),
            iv_pct: self.iv_pct(k)?,
        })
    }

    /// [`SviFit::at_call_delta`] at each of `call_deltas` (e.g. [`STANDARD_CALL_DELTAS`]).
    pub fn sample_by_call_delta(
        &self,
        call_deltas: &[f64],
        forward: f64,
    ) -> Vec<Option<DeltaPoint>> {
        call_deltas
            .iter()
            .map(|&delta| self.at_call_delta(delta, forward))
            .collect()
    }
}

fn d1(k: f64, w: f64) -> f64 {
    let root = w.sqrt();
    -k / root + 0.5 * root
}

/// Fits raw SVI to one expiration's quotes. Errors when `years` is not a finite number > 0,
/// a quote is not finite (IV ≤ 0, weight < 0), all weights are 0, or there are fewer than
/// [`SVI_MIN_POINTS`] quotes.
pub fn fit_svi(points: &[SmilePoint], years: f64) -> Result<SviFit, VolError> {
    if !(years.is_finite() && years > 0.0) {
        return Err(VolError::BadValue {
            what: "years to expiration",
            index: 0,
            value: years,
            rule: "a finite number > 0",
        });
    }
    for (i, p) in points.iter().enumerate() {
        check_finite("smile log-moneyness", i, p.log_moneyness)?;
        for (what, value, ok) in [
            ("smile IV", p.iv_pct, p.iv_pct > 0.0),
            ("smile weight", p.weight, p.weight >= 0.0),
        ] {
            if !(value.is_finite() && ok) {
                return Err(VolError::BadValue {
                    what,
                    index: i,
                    value,
                    rule: "a finite number > 0 (weights ≥ 0)",
                });
            }
        }
    }
    let weighted = points.iter().filter(|p| p.weight > 0.0).count();
    if weighted < SVI_MIN_POINTS {
        return Err(VolError::TooFewObservations {
            what: "SVI quotes with a positive weight",
            needed: SVI_MIN_POINTS,
            got: weighted,
        });
    }
    let data: Vec<Datum> = points
        .iter()
        .filter(|p| p.weight > 0.0)
        .map(|p| Datum {
            k: p.log_moneyness,
            w: (p.iv_pct / 100.0).powi(2) * years,
            weight: p.weight,
        })
        .collect();
    let params = search(&data);
    Ok(finish(params, points, years))
}

#[derive(Debug, Clone, Copy)]
struct Datum {
    k: f64,
    w: f64,
    weight: f64,
}

/// The outer search over (m, ln σ).
fn search(data: &[Datum]) -> SviParams {
    let k_min = data.iter().map(|d| d.k).fold(f64::INFINITY, f64::min);
    let k_max = data.iter().map(|d| d.k).fold(f64::NEG_INFINITY, f64::max);
    let span = (k_max - k_min).max(1e-3);
    let w_max = data.iter().map(|d| d.w).fold(0.0, f64::max);
    let total_weight: f64 = data.iter().map(|d| d.weight).sum();
    let (m_lo, m_hi) = (k_min - span, k_max + span);
    let (ln_s_lo, ln_s_hi) = (1e-4f64.ln(), 5f64.ln());
    let objective = |x: &[f64]| -> f64 {
        let (m, ln_s) = (x[0], x[1]);
        if !(m_lo..=m_hi).contains(&m) || !(ln_s_lo..=ln_s_hi).contains(&ln_s) {
            return f64::INFINITY;
        }
        let inner = inner_fit(data, m, ln_s.exp(), w_max);
        let shortfall =
            (-(inner.a + (inner.c * inner.c - inner.d * inner.d).max(0.0).sqrt())).max(0.0);
        inner.residual / total_weight + 100.0 * shortfall * shortfall
    };
    let mut starts: Vec<([f64; 2], f64)> = (0..5)
        .flat_map(|i| {
            let m = k_min + span * i as f64 / 4.0;
            [0.02f64, 0.05, 0.1, 0.2, 0.5].map(|s| [m, s.ln()])
        })
        .map(|x| (x, objective(&x)))
        .collect();
    starts.sort_by(|a, b| a.1.total_cmp(&b.1));
    let options = NelderMeadOptions {
        x_tolerance: 1e-10,
        f_tolerance: 1e-20,
        max_evaluations: 4_000,
    };
    let step = [0.1 * span, 0.3];
    let mut best = starts
        .iter()
        .take(4)
        .map(|(x, _)| nelder_mead(objective, x, &step, options))
        .min_by(|a, b| a.value.total_cmp(&b.value))
        .expect("four starts");
    for _ in 0..5 {
        let again = nelder_mead(objective, &best.x, &[0.01 * span, 0.05], options);
        let improved = again.value < best.value * (1.0 - 1e-12);
        if again.value <= best.value {
            best = again;
        }
        if !improved {
            break;
        }
    }
    let (m, sigma) = (best.x[0], best.x[1].exp());
    let inner = inner_fit(data, m, sigma, w_max);
    let b = inner.c / sigma;
    SviParams {
        a: inner.a,
        b,
        rho: if inner.c > 0.0 {
            (inner.d / inner.c).clamp(-1.0, 1.0)
        } else {
            0.0
        },
        m,
        sigma,
    }
}

/// The inner problem's solution for fixed (m, σ).
#[derive(Debug, Clone, Copy)]
struct Inner {
    a: f64,
    d: f64,
    c: f64,
    /// Σ W (model − w)².
    residual: f64,
}

/// Minimises Σ W (a + d·y + c·z − w)² over the polytope |d| ≤ c, c + |d| ≤ 2σ, −c ≤ a ≤ w_max,
/// by solving the equality-constrained problem of every active set of at most three
/// constraints and keeping the best feasible solution (the problem is convex, so that is the
/// optimum).
fn inner_fit(data: &[Datum], m: f64, sigma: f64, w_max: f64) -> Inner {
    let mut h = [[0.0; 3]; 3];
    let mut g = [0.0; 3];
    let mut ww = 0.0;
    for d in data {
        let y = (d.k - m) / sigma;
        let phi = [1.0, y, (y * y + 1.0).sqrt()];
        for r in 0..3 {
            for c in 0..3 {
                h[r][c] += d.weight * phi[r] * phi[c];
            }
            g[r] += d.weight * d.w * phi[r];
        }
        ww += d.weight * d.w * d.w;
    }
    let limit = MAX_WING_SLOPE * sigma;
    // Rows (coefficients on (a, d, c), bound): coefficients · x ≤ bound.
    let constraints: [([f64; 3], f64); 6] = [
        ([0.0, 1.0, -1.0], 0.0),
        ([0.0, -1.0, -1.0], 0.0),
        ([0.0, 1.0, 1.0], limit),
        ([0.0, -1.0, 1.0], limit),
        ([1.0, 0.0, 0.0], w_max),
        ([-1.0, 0.0, -1.0], 0.0),
    ];
    let objective = |x: &[f64; 3]| {
        let mut quad = 0.0;
        for r in 0..3 {
            for c in 0..3 {
                quad += x[r] * h[r][c] * x[c];
            }
        }
        quad - 2.0 * (g[0] * x[0] + g[1] * x[1] + g[2] * x[2]) + ww
    };
    let feasible = |x: &[f64; 3]| {
        constraints.iter().all(|(row, bound)| {
            row[0] * x[0] + row[1] * x[1] + row[2] * x[2] <= bound + 1e-12 * (1.0 + bound.abs())
        })
    };
    let mut best: Option<([f64; 3], f64)> = None;
    let mut consider = |active: &[usize]| {
        if let Some(x) = solve_active(&h, &g, &constraints, active)
            && feasible(&x)
        {
            let value = objective(&x);
            if best.is_none_or(|(_, v)| value < v) {
                best = Some((x, value));
            }
        }
    };
    consider(&[]);
    for i in 0..6 {
        consider(&[i]);
        for j in i + 1..6 {
            consider(&[i, j]);
            for k in j + 1..6 {
                consider(&[i, j, k]);
            }
        }
    }
    // a = d = c = 0 is always feasible, so `best` is set unless every system was singular.
    let (x, residual) = best.unwrap_or(([0.0; 3], ww));
    Inner {
        a: x[0],
        d: x[1],
        c: x[2],
        residual: residual.max(0.0),
    }
}

/// Solves `H x + Gᵀλ = g`, `G x = bound` for the active rows (KKT of the equality-constrained
/// least squares); `None` when the system is singular.
fn solve_active(
    h: &[[f64; 3]; 3],
    g: &[f64; 3],
    constraints: &[([f64; 3], f64); 6],
    active: &[usize],
) -> Option<[f64; 3]> {
    let n = 3 + active.len();
    let mut m = [[0.0; 7]; 6];
    for r in 0..3 {
        m[r][..3].copy_from_slice(&h[r]);
        m[r][6] = g[r];
    }
    for (j, &i) in active.iter().enumerate() {
        let (row, bound) = constraints[i];
        for c in 0..3 {
            m[r_of(j)][c] = row[c];
            m[c][3 + j] = row[c];
        }
        m[r_of(j)][6] = bound;
    }
    // Gaussian elimination with partial pivoting on the n × n system (right side in column 6).
    let scale = h
        .iter()
        .flatten()
        .fold(0.0f64, |s, v| s.max(v.abs()))
        .max(1.0);
    for col in 0..n {
        let pivot = (col..n).max_by(|&a, &b| m[a][col].abs().total_cmp(&m[b][col].abs()))?;
        if m[pivot][col].abs() <= 1e-13 * scale {
            return None;
        }
        m.swap(col, pivot);
        let pivot_row = m[col];
        for (r, row) in m.iter_mut().enumerate().take(n) {
            let factor = row[col] / pivot_row[col];
            if r != col && factor != 0.0 {
                for (x, p) in row[col..n].iter_mut().zip(&pivot_row[col..n]) {
                    *x -= factor * p;
                }
                row[6] -= factor * pivot_row[6];
            }
        }
    }
    let x = [m[0][6] / m[0][0], m[1][6] / m[1][1], m[2][6] / m[2][2]];
    x.iter().all(|v| v.is_finite()).then_some(x)
}

/// Row of the j-th active constraint in the KKT matrix.
fn r_of(j: usize) -> usize {
    3 + j
}

/// Error figures and the arbitrage check of fitted parameters.
fn finish(params: SviParams, points: &[SmilePoint], years: f64) -> SviFit {
    let errors: Vec<f64> = points
        .iter()
        .map(|p| {
            let w = params.total_variance(p.log_moneyness).max(0.0);
            100.0 * (w / years).sqrt() - p.iv_pct
        })
        .collect();
    let n = errors.len() as f64;
    let k_min = points.iter().map(|p| p.log_moneyness).fold(-2.0, f64::min);
    let k_max = points.iter().map(|p| p.log_moneyness).fold(2.0, f64::max);
    let (min_g, at) = params.min_butterfly_g(k_min, k_max, BUTTERFLY_GRID_POINTS);
    SviFit {
        params,
        years,
        points: points.len(),
        rmse_iv_pct: (errors.iter().map(|e| e * e).sum::<f64>() / n).sqrt(),
        max_abs_error_iv_pct: errors.iter().fold(0.0, |m, e| m.max(e.abs())),
        butterfly_free: min_g >= -1e-12,
        min_butterfly_g: min_g,
        min_butterfly_g_at: at,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn svi(a: f64, b: f64, rho: f64, m: f64, sigma: f64) -> SviParams {
        SviParams {
            a,
            b,
            rho,
            m,
            sigma,
        }
    }

    fn smile(params: &SviParams, years: f64, ks: impl Iterator<Item = f64>) -> Vec<SmilePoint> {
        ks.map(|k| SmilePoint {
            log_moneyness: k,
            iv_pct: 100.0 * (params.total_variance(k) / years).sqrt(),
            weight: 1.0,
        })
        .collect()
    }

    fn grid(from: f64, to: f64, n: usize) -> impl Iterator<Item = f64> {
        (0..n).map(move |i| from + (to - from) * i as f64 / (n - 1) as f64)
    }

    fn assert_recovered(truth: &SviParams, years: f64, ks: Vec<f64>) {
        let fit = fit_svi(&smile(truth, years, ks.into_iter()), years).unwrap();
        let p = fit.params;
        for (name, got, want) in [
            ("a", p.a, truth.a),
            ("b", p.b, truth.b),
            ("rho", p.rho, truth.rho),
            ("m", p.m, truth.m),
            ("sigma", p.sigma, truth.sigma),
        ] {
            assert!(
                (got - want).abs() < 1e-5,
                "{name}: {got} vs {want} ({fit:?})"
            );
        }
        assert!(fit.rmse_iv_pct < 1e-5, "{fit:?}");
    }

    #[test]
    fn recovers_known_parameters() {
        // An equity-like skew, 3 months.
        let skew = svi(0.01, 0.1, -0.6, 0.05, 0.15);
        assert_recovered(&skew, 0.25, grid(-0.5, 0.3, 25).collect());
        // Negative a, a long expiry and a wide smile.
        let spx = svi(-0.041, 0.1331, -0.3586, 0.306, 0.4153);
        assert_recovered(&spx, 1.0, grid(-1.0, 1.0, 31).collect());
        // Uneven strikes, a short expiry and a nearly symmetric smile.
        let short = svi(0.001, 0.02, 0.1, -0.01, 0.05);
        let ks = vec![
            -0.2, -0.12, -0.08, -0.05, -0.03, -0.01, 0.0, 0.015, 0.04, 0.07, 0.15,
        ];
        assert_recovered(&short, 0.05, ks);
    }

    #[test]
    fn butterfly_flag() {
        // A calm smile: free of butterfly arbitrage.
        let calm = svi(0.02, 0.1, -0.4, 0.0, 0.2);
        let fit = fit_svi(&smile(&calm, 0.5, grid(-0.6, 0.4, 21)), 0.5).unwrap();
        assert!(fit.butterfly_free, "{fit:?}");
        // Axel Vogt's parameters (Gatheral & Jacquier 2014, §2.2): g < 0 near k ≈ 0.8.
        let vogt = svi(-0.0410, 0.1331, 0.3060, 0.3586, 0.4153);
        let (min_g, at) = vogt.min_butterfly_g(-1.5, 1.5, 3001);
        assert!(min_g < 0.0 && (0.5..1.2).contains(&at), "{min_g} at {at}");
    }

    #[test]
    fn slope_curvature_and_delta_points() {
        let p = svi(0.01, 0.1, -0.6, 0.05, 0.15);
        let years = 0.25;
        let fit = fit_svi(&smile(&p, years, grid(-0.5, 0.3, 25)), years).unwrap();
        let iv = |k: f64| 100.0 * (p.total_variance(k) / years).sqrt();
        let h = 1e-4;
        let slope = (iv(h) - iv(-h)) / (2.0 * h);
        let curvature = (iv(h) - 2.0 * iv(0.0) + iv(-h)) / (h * h);
        assert!(
            (fit.slope().unwrap() - slope).abs() < 1e-4 * slope.abs(),
            "{slope}"
        );
        assert!((fit.curvature().unwrap() - curvature).abs() < 1e-3 * curvature.abs());
        assert!((fit.atm_iv_pct().unwrap() - iv(0.0)).abs() < 1e-5);
        let forward = 4500.0;
        let points = fit.sample_by_call_delta(&STANDARD_CALL_DELTAS, forward);
        for point in points.iter().map(|p| p.unwrap()) {
            // Round trip: Black-76 delta with the fitted IV at that strike.
            let w = (point.iv_pct / 100.0).powi(2) * years;
            let k = (point.strike / forward).ln();
            let delta = norm_cdf(-k / w.sqrt() + 0.5 * w.sqrt());
            assert!((delta - point.call_delta).abs() < 1e-10, "{point:?}");
        }
        // Strikes rise as call delta falls.
        assert!(
            points
                .windows(2)
                .all(|w| w[0].unwrap().strike > w[1].unwrap().strike)
        );
        assert_eq!(fit.at_call_delta(1.0, forward), None);
    }

    #[test]
    fn rejects_bad_input() {
        let p = svi(0.01, 0.1, -0.6, 0.05, 0.15);
        let mut points = smile(&p, 0.25, grid(-0.5, 0.3, 4));
        assert!(matches!(
            fit_svi(&points, 0.25),
            Err(VolError::TooFewObservations { .. })
        ));
        points.extend(smile(&p, 0.25, grid(0.35, 0.4, 2)));
        assert!(fit_svi(&points, 0.0).is_err());
        points[2].iv_pct = -1.0;
        assert!(matches!(
            fit_svi(&points, 0.25),
            Err(VolError::BadValue { index: 2, .. })
        ));
    }
}
