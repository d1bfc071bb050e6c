//! Tabulated initial guesses for the implied-volatility solve.
//!
//! Jäckel's rational-cubic initial guess is accurate to about 1e-3 relative, so "Let's Be
//! Rational" needs two Householder iterations almost everywhere. The lowest branch (out-of-the-
//! money options worth less than b_l, most short-dated listed wings) and the two middle
//! branches are, once normalised by the branch points that the solver computes anyway, smooth
//! functions of two bounded coordinates; a bicubic interpolation in a table of exact solutions
//! gives a guess within 7e-6 relative (1e-7 and better over most of the tables), after which
//! one iteration of the third-order Householder method reaches machine precision (the error
//! after it is of order guess⁴). The
//! solver still checks the step and iterates a second time where it was not small (the
//! convergence test of `lbr::householder_step`), so a poor tabulated guess costs time, never
//! accuracy. Outside the tables (|x| beyond `S_C_MAX²/2`, prices many decades below b_l, and
//! the highest branch) the rational-cubic guess is used as before.
//!
//! The branch points (b_l, b_c, b_u and their logarithms), functions of |x| alone, are read
//! from a one-dimensional table on the same axis: one interpolation instead of two rational
//! functions, an erfcx and two logarithms per solve (about 5 % of the solve's time).
//!
//! The tables are built on first use from the solver itself (the rational guess and two
//! iterations at every node, 32,000 solves, about 10 ms).

use std::sync::LazyLock;

use super::lbr::BranchRatios;

/// A function of two variables sampled on a regular grid, read back by bicubic (4 × 4 point
/// Lagrange) interpolation: fourth-order accurate in the grid steps.
#[derive(Debug)]
pub(crate) struct Grid2 {
    u0: f64,
    u_max: f64,
    inv_du: f64,
    nu: usize,
    v0: f64,
    v_max: f64,
    inv_dv: f64,
    nv: usize,
    /// Row-major: `values[iu * nv + iv]`.
    values: Box<[f64]>,
}

/// Lagrange weights of the four nodes 0, 1, 2, 3 at position `f` (in node units).
#[inline(always)]
fn lagrange4(f: f64) -> [f64; 4] {
    let a = f;
    let b = f - 1.0;
    let c = f - 2.0;
    let d = f - 3.0;
    let cd = c * d;
    let ab = a * b;
    [
        -(b * cd) * (1.0 / 6.0),
        (a * cd) * 0.5,
        -(ab * d) * 0.5,
        (ab * c) * (1.0 / 6.0),
    ]
}

/// The first node of a four-point stencil around `p` (in node units) within `n` nodes, and
/// the position relative to it.
#[inline(always)]
fn stencil(p: f64, n: usize) -> (usize, f64) {
    // p ≥ 0 here, so the cast truncates towards zero: floor.
    let first = (p as usize).saturating_sub(1).min(n - 4);
    (first, p - first as f64)
}

impl Grid2 {
    /// Samples `f(u, v)` on `nu × nv` nodes spanning `[u0, u_max] × [v0, v_max]`.
    pub(crate) fn sample(
        (u0, u_max, nu): (f64, f64, usize),
        (v0, v_max, nv): (f64, f64, usize),
        f: impl Fn(f64, f64) -> f64,
    ) -> Self {
        assert!(nu >= 4 && nv >= 4 && u_max > u0 && v_max > v0);
        let du = (u_max - u0) / (nu - 1) as f64;
        let dv = (v_max - v0) / (nv - 1) as f64;
        let mut values = Vec::with_capacity(nu * nv);
        for iu in 0..nu {
            let u = if iu == nu - 1 {
                u_max
            } else {
                u0 + iu as f64 * du
            };
            for iv in 0..nv {
                let v = if iv == nv - 1 {
                    v_max
                } else {
                    v0 + iv as f64 * dv
                };
                values.push(f(u, v));
            }
        }
        Self {
            u0,
            u_max,
            inv_du: 1.0 / du,
            nu,
            v0,
            v_max,
            inv_dv: 1.0 / dv,
            nv,
            values: values.into_boxed_slice(),
        }
    }

    /// The interpolated value at `(u, v)`, or `None` outside the grid (or for NaN).
    #[inline]
    pub(crate) fn at(&self, u: f64, v: f64) -> Option<f64> {
        if !(u >= self.u0 && u <= self.u_max && v >= self.v0 && v <= self.v_max) {
            return None;
        }
        let (iu, fu) = stencil((u - self.u0) * self.inv_du, self.nu);
        let (iv, fv) = stencil((v - self.v0) * self.inv_dv, self.nv);
        let wu = lagrange4(fu);
        let wv = lagrange4(fv);
        let mut sum = 0.0;
        for (k, &weight_u) in wu.iter().enumerate() {
            let start = (iu + k) * self.nv + iv;
            let row = &self.values[start..start + 4];
            let along_v = row[0] * wv[0] + row[1] * wv[1] + row[2] * wv[2] + row[3] * wv[3];
            sum += weight_u * along_v;
        }
        Some(sum)
    }
}

/// Several functions of one variable sampled on a regular grid, read back together by cubic
/// (four-point Lagrange) interpolation.
#[derive(Debug)]
pub(crate) struct Grid1<const N: usize> {
    u0: f64,
    u_max: f64,
    inv_du: f64,
    nu: usize,
    values: Box<[[f64; N]]>,
}

impl<const N: usize> Grid1<N> {
    /// Samples `f(u)` on `nu` nodes spanning `[u0, u_max]`.
    pub(crate) fn sample((u0, u_max, nu): (f64, f64, usize), f: impl Fn(f64) -> [f64; N]) -> Self {
        assert!(nu >= 4 && u_max > u0);
        let du = (u_max - u0) / (nu - 1) as f64;
        let values = (0..nu)
            .map(|iu| {
                f(if iu == nu - 1 {
                    u_max
                } else {
                    u0 + iu as f64 * du
                })
            })
            .collect();
        Self {
            u0,
            u_max,
            inv_du: 1.0 / du,
            nu,
            values,
        }
    }

    /// The interpolated values at `u`, or `None` outside the grid (or for NaN).
    #[inline]
    pub(crate) fn at(&self, u: f64) -> Option<[f64; N]> {
        if !(u >= self.u0 && u <= self.u_max) {
            return None;
        }
        let (iu, fu) = stencil((u - self.u0) * self.inv_du, self.nu);
        let weights = lagrange4(fu);
        let rows = &self.values[iu..iu + 4];
        Some(std::array::from_fn(|j| {
            rows[0][j] * weights[0]
                + rows[1][j] * weights[1]
                + rows[2][j] * weights[2]
                + rows[3][j] * weights[3]
        }))
    }
}

/// Largest s_c = √(2|x|) tabulated: |x| up to 50, far beyond listed strikes.
pub(crate) const S_C_MAX: f64 = 10.0;
/// Smallest s_c tabulated (|x| ≥ 1.25e-3); nearer the money the rational guess is used.
pub(crate) const S_C_MIN: f64 = 0.05;
/// Smallest r = ln b_l / ln β of the lowest-branch table; deeper prices (β below b_l^(1/R_MIN))
/// use the rational guess.
pub(crate) const R_MIN: f64 = 0.05;

/// The tables of the solver's initial guess.
#[derive(Debug)]
pub(crate) struct GuessTables {
    /// What the branch choice needs, as functions of s_c alone over √s_c (see
    /// `lbr::BranchRatios`): replaces two rational functions, an erfcx and two logarithms.
    pub(crate) branch_ratios: Grid1<{ BranchRatios::LEN }>,
    /// Lowest branch (β < b_l): w = (s/s_l)²/r over (s_c, r = ln b_l / ln β). As r → 0,
    /// s² ≈ x²/(−2 ln β) is proportional to r, so w stays of order one.
    pub(crate) lowest: Grid2,
    /// Lower middle branch (b_l ≤ β < b_c): (s − s_l)/(s_c − s_l) over
    /// (√s_c, τ = ln(β/b_l)/ln(b_c/b_l)); the logarithm resolves the layer near b_l where b_l
    /// is small (near the money).
    pub(crate) lower_middle: Grid2,
    /// Upper middle branch (b_c ≤ β ≤ b_u): (s − s_c)/(s_u − s_c) over
    /// (√s_c, t = (β − b_c)/(b_u − b_c)).
    pub(crate) upper_middle: Grid2,
}

/// Grid sizes: the smallest that keep every tabulated guess within the single-iteration
/// threshold (see the tests; the worst cases sit at the tables' edges).
const NODES_S_C: usize = 200;
const NODES_LOWEST: usize = 64;
const NODES_MIDDLE: usize = 48;
/// The branch ratios include logarithms of s_c, whose fourth derivative in √s_c is large near
/// S_C_MIN; 512 nodes keep them within 1e-7 relative (20 KB, an L1-sized table).
const NODES_BRANCH_RATIOS: usize = 512;

pub(crate) static GUESS_TABLES: LazyLock<GuessTables> = LazyLock::new(|| {
    use super::lbr::{BranchPoints, reference_solve};
    GuessTables {
        branch_ratios: Grid1::sample(
            (S_C_MIN.sqrt(), S_C_MAX.sqrt(), NODES_BRANCH_RATIOS),
            |root_s_c| BranchRatios::at(root_s_c * root_s_c).to_array(),
        ),
        lowest: Grid2::sample(
            (S_C_MIN.sqrt(), S_C_MAX.sqrt(), NODES_S_C),
            (R_MIN, 1.0, NODES_LOWEST),
            |root_s_c, r| {
                let s_c = root_s_c * root_s_c;
                let points = BranchPoints::at(s_c);
                let beta = (points.b_l.ln() / r).exp();
                let s = reference_solve(beta, points.theta_x);
                (s / points.s_l).powi(2) / r
            },
        ),
        lower_middle: Grid2::sample(
            (S_C_MIN.sqrt(), S_C_MAX.sqrt(), NODES_S_C),
            (0.0, 1.0, NODES_MIDDLE),
            |root_s_c, tau| {
                let s_c = root_s_c * root_s_c;
                let points = BranchPoints::at(s_c);
                let beta = points.b_l * (tau * (points.b_c / points.b_l).ln()).exp();
                let s = reference_solve(beta, points.theta_x);
                (s - points.s_l) / (s_c - points.s_l)
            },
        ),
        upper_middle: Grid2::sample(
            (S_C_MIN.sqrt(), S_C_MAX.sqrt(), NODES_S_C),
            (0.0, 1.0, NODES_MIDDLE),
            |root_s_c, t| {
                let s_c = root_s_c * root_s_c;
                let points = BranchPoints::at(s_c);
                let beta = points.b_c + t * (points.b_u - points.b_c);
                let s = reference_solve(beta, points.theta_x);
                (s - s_c) / (points.s_u - s_c)
            },
        ),
    }
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bicubic_interpolation_is_exact_on_cubics() {
        let cubic = |u: f64, v: f64| 1.0 + u * (2.0 - u * u) + v * v * (3.0 * v - 1.0) + u * v;
        let grid = Grid2::sample((0.0, 2.0, 9), (-1.0, 1.0, 7), cubic);
        for &(u, v) in &[
            (0.0, -1.0),
            (0.1, 0.3),
            (1.37, -0.91),
            (2.0, 1.0),
            (1.999, 0.001),
        ] {
            let got = grid.at(u, v).unwrap();
            assert!((got - cubic(u, v)).abs() < 1e-13, "({u}, {v}): {got}");
        }
        assert!(grid.at(2.0001, 0.0).is_none());
        assert!(grid.at(1.0, -1.0001).is_none());
        assert!(grid.at(f64::NAN, 0.0).is_none());
    }

    #[test]
    fn interpolated_branch_ratios_match_the_exact_ones() {
        let tables = &*GUESS_TABLES;
        let mut worst = [0.0f64; BranchRatios::LEN];
        for i in 0..=100_000 {
            let s_c = S_C_MIN + (S_C_MAX - S_C_MIN) * (i as f64 / 100_000.0);
            let exact = BranchRatios::at(s_c).to_array();
            let got = tables.branch_ratios.at(s_c.sqrt()).unwrap();
            for j in 0..BranchRatios::LEN {
                worst[j] = worst[j].max(((got[j] - exact[j]) / exact[j]).abs());
            }
        }
        println!("worst relative error of the branch ratios: {worst:?}");
        // b_l/b_max is piecewise (four Remez branches whose derivatives do not quite join), so
        // the cubic is least accurate across the joins: ~1e-7, far inside the guess's 1e-5.
        assert!(worst.iter().all(|&e| e < 2e-7), "{worst:?}");
        assert!(tables.branch_ratios.at(S_C_MAX.sqrt() * 1.0001).is_none());
    }

    /// Worst relative error of the tabulated guess against the reference solve over `n`
    /// points of (s_c, coordinate) drawn between the grid nodes.
    fn worst_guess_error(n: usize, mut solve_at: impl FnMut(f64, f64) -> (f64, f64)) -> f64 {
        let mut state = 0x9e37_79b9_7f4a_7c15_u64;
        let mut uniform = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            (state >> 11) as f64 / (1u64 << 53) as f64
        };
        let mut worst = 0.0f64;
        for _ in 0..n {
            let s_c = S_C_MIN + (S_C_MAX - S_C_MIN) * uniform();
            let (guess, exact) = solve_at(s_c, uniform());
            worst = worst.max(((guess - exact) / exact).abs());
        }
        worst
    }

    #[test]
    fn tabulated_guesses_are_close_enough_for_a_single_iteration() {
        use crate::pricing::lbr::{BranchPoints, householder_step, initial_guess, reference_solve};
        // The guess, after checking that one iteration from it converges to the reference.
        let solve_once = |beta: f64, theta_x: f64| {
            let exact = reference_solve(beta, theta_x);
            let mut solve = initial_guess(beta, theta_x).unwrap();
            let guess = solve.s;
            assert!(
                householder_step(&mut solve),
                "second iteration needed at β {beta:e}, θx {theta_x}"
            );
            assert!(
                ((solve.s - exact) / exact).abs() < 1e-14,
                "one iteration: {} vs {exact}",
                solve.s
            );
            (guess, exact)
        };
        let lowest = worst_guess_error(20_000, |s_c, unit| {
            let points = BranchPoints::at(s_c);
            let r = R_MIN + (1.0 - R_MIN) * unit;
            let beta = (points.b_l.ln() / r).exp();
            solve_once(beta, points.theta_x)
        });
        let lower_middle = worst_guess_error(20_000, |s_c, tau| {
            let points = BranchPoints::at(s_c);
            let beta = points.b_l * (tau * (points.b_c / points.b_l).ln()).exp();
            solve_once(beta, points.theta_x)
        });
        let upper_middle = worst_guess_error(20_000, |s_c, t| {
            let points = BranchPoints::at(s_c);
            let beta = points.b_c + t * (points.b_u - points.b_c);
            solve_once(beta, points.theta_x)
        });
        let middle = lower_middle.max(upper_middle);
        println!("worst relative guess error: lowest {lowest:.2e}, middle {middle:.2e}");
        assert!(lowest < 1e-5, "lowest branch {lowest:.2e}");
        assert!(middle < 1e-5, "middle branches {middle:.2e}");
    }
}
