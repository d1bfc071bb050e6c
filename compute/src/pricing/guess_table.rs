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

/// One axis of a regular grid: `n` nodes from `min` to `max`.
#[derive(Debug, Clone, Copy)]
struct Axis {
    min: f64,
    max: f64,
    inv_step: f64,
}

impl Axis {
    fn new(min: f64, max: f64, nodes: usize) -> Self {
        Self {
            min,
            max,
            inv_step: (nodes - 1) as f64 / (max - min),
        }
    }

    /// The coordinate of node `i` of `nodes` (the last one exactly `max`).
    fn node(&self, i: usize, nodes: usize) -> f64 {
        if i == nodes - 1 {
            self.max
        } else {
            self.min + i as f64 * ((self.max - self.min) / (nodes - 1) as f64)
        }
    }

    #[inline(always)]
    fn contains(&self, u: f64) -> bool {
        // `&` rather than `&&`: no branch, so lanes of a vector stay in step.
        (u >= self.min) & (u <= self.max)
    }

    /// The first node of the four-point stencil around `u` within `nodes` nodes and the
    /// position relative to it (in node units). Branch-free; for `u` outside the axis (or NaN)
    /// the stencil is clamped to the grid, so indexing never fails, and the caller discards
    /// the value.
    #[inline(always)]
    fn stencil(&self, u: f64, nodes: usize) -> (usize, f64) {
        let position = ((u - self.min) * self.inv_step).max(0.0).min(nodes as f64);
        // position ≥ 0 here, so the cast truncates towards zero: floor.
        let first = ((position as i32) - 1).max(0).min(nodes as i32 - 4) as usize;
        (first, position - first as f64)
    }
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

/// `K` functions of two variables sampled on grids of `NU × NV` nodes that share the first
/// axis, read back by bicubic (4 × 4 point Lagrange) interpolation: fourth-order accurate in
/// the grid steps. One allocation for all `K`, so a lookup can pick its function per contract
/// without a branch (see [`Grid2::at_lane`]).
#[derive(Debug)]
pub(crate) struct Grid2<const K: usize, const NU: usize, const NV: usize> {
    u: Axis,
    v: [Axis; K],
    /// `values[k][iu][iv]`.
    values: Box<[[[f64; NV]; NU]; K]>,
}

impl<const K: usize, const NU: usize, const NV: usize> Grid2<K, NU, NV> {
    /// Samples `f(k, u, v)` for each function `k` on `NU × NV` nodes spanning
    /// `[u_min, u_max] × v_ranges[k]`.
    pub(crate) fn sample(
        (u_min, u_max): (f64, f64),
        v_ranges: [(f64, f64); K],
        f: impl Fn(usize, f64, f64) -> f64,
    ) -> Self {
        assert!(NU >= 4 && NV >= 4 && u_max > u_min);
        let u = Axis::new(u_min, u_max, NU);
        let v = v_ranges.map(|(min, max)| {
            assert!(max > min);
            Axis::new(min, max, NV)
        });
        let mut values: Box<[[[f64; NV]; NU]; K]> = vec![[[0.0; NV]; NU]; K]
            .into_boxed_slice()
            .try_into()
            .expect("K surfaces");
        for (k, surface) in values.iter_mut().enumerate() {
            for (iu, row) in surface.iter_mut().enumerate() {
                for (iv, value) in row.iter_mut().enumerate() {
                    *value = f(k, u.node(iu, NU), v[k].node(iv, NV));
                }
            }
        }
        Self { u, v, values }
    }

    /// Function `k` at `(u, v)`, or `None` outside its grid (or for NaN).
    #[inline]
    pub(crate) fn at(&self, k: usize, u: f64, v: f64) -> Option<f64> {
        let (value, inside) = self.at_lane(k, u, v);
        inside.then_some(value)
    }

    /// Function `k` (which must be below `K`) at `(u, v)` and whether `(u, v)` is inside its
    /// grid, without a branch: outside, the value is that of the nearest stencil, to be
    /// discarded.
    #[inline(always)]
    pub(crate) fn at_lane(&self, k: usize, u: f64, v: f64) -> (f64, bool) {
        let k = k.min(K - 1);
        let v_axis = self.v[k];
        let inside = self.u.contains(u) & v_axis.contains(v);
        let (iu, fu) = self.u.stencil(u, NU);
        let (iv, fv) = v_axis.stencil(v, NV);
        let wu = lagrange4(fu);
        let wv = lagrange4(fv);
        let surface = &self.values[k];
        let mut sum = 0.0;
        for (j, &weight_u) in wu.iter().enumerate() {
            let row = &surface[iu + j];
            let along_v =
                row[iv] * wv[0] + row[iv + 1] * wv[1] + row[iv + 2] * wv[2] + row[iv + 3] * wv[3];
            sum += weight_u * along_v;
        }
        (sum, inside)
    }
}

/// Several functions of one variable sampled on `NU` regular nodes, read back together by cubic
/// (four-point Lagrange) interpolation.
#[derive(Debug)]
pub(crate) struct Grid1<const N: usize, const NU: usize> {
    u: Axis,
    values: Box<[[f64; N]; NU]>,
}

impl<const N: usize, const NU: usize> Grid1<N, NU> {
    /// Samples `f(u)` on `NU` nodes spanning `[u_min, u_max]`.
    pub(crate) fn sample((u_min, u_max): (f64, f64), f: impl Fn(f64) -> [f64; N]) -> Self {
        assert!(NU >= 4 && u_max > u_min);
        let u = Axis::new(u_min, u_max, NU);
        let values: Box<[[f64; N]; NU]> = (0..NU)
            .map(|iu| f(u.node(iu, NU)))
            .collect::<Vec<_>>()
            .into_boxed_slice()
            .try_into()
            .expect("NU nodes");
        Self { u, values }
    }

    /// The interpolated values at `u`, or `None` outside the grid (or for NaN).
    #[inline]
    pub(crate) fn at(&self, u: f64) -> Option<[f64; N]> {
        let (values, inside) = self.at_lane(u);
        inside.then_some(values)
    }

    /// The interpolated values at `u` and whether `u` is inside the grid, without a branch.
    #[inline(always)]
    pub(crate) fn at_lane(&self, u: f64) -> ([f64; N], bool) {
        let inside = self.u.contains(u);
        let (iu, fu) = self.u.stencil(u, NU);
        let weights = lagrange4(fu);
        let rows = &self.values[iu..iu + 4];
        (
            std::array::from_fn(|j| {
                rows[0][j] * weights[0]
                    + rows[1][j] * weights[1]
                    + rows[2][j] * weights[2]
                    + rows[3][j] * weights[3]
            }),
            inside,
        )
    }
}

/// Largest s_c = √(2|x|) tabulated: |x| up to 50, far beyond listed strikes.
pub(crate) const S_C_MAX: f64 = 10.0;
/// Smallest s_c tabulated (|x| ≥ 1.25e-3); nearer the money the rational guess is used.
pub(crate) const S_C_MIN: f64 = 0.05;
/// Smallest r = ln b_l / ln β of the lowest-branch table; deeper prices (β below b_l^(1/R_MIN))
/// use the rational guess.
pub(crate) const R_MIN: f64 = 0.05;

/// Which of the guess surfaces (the index into [`GuessTables::surfaces`]).
pub(crate) const LOWEST: usize = 0;
/// See [`LOWEST`].
pub(crate) const LOWER_MIDDLE: usize = 1;
/// See [`LOWEST`].
pub(crate) const UPPER_MIDDLE: usize = 2;

/// Grid sizes: the smallest that keep every tabulated guess within the single-iteration
/// threshold (see the tests; the worst cases sit at the tables' edges). The three surfaces
/// share one size so that a lookup can choose among them per contract.
pub(crate) const NODES_S_C: usize = 200;
pub(crate) const NODES_V: usize = 64;
/// The branch ratios include logarithms of s_c, whose fourth derivative in √s_c is large near
/// S_C_MIN; 512 nodes keep them within 1e-7 relative (20 KB, an L1-sized table).
pub(crate) const NODES_BRANCH_RATIOS: usize = 512;

/// The tables of the solver's initial guess.
#[derive(Debug)]
pub(crate) struct GuessTables {
    /// What the branch choice needs, as functions of s_c alone over √s_c (see
    /// `lbr::BranchRatios`): replaces two rational functions, an erfcx and two logarithms.
    pub(crate) branch_ratios: Grid1<{ BranchRatios::LEN }, NODES_BRANCH_RATIOS>,
    /// Over (√s_c, a coordinate of the branch):
    /// - [`LOWEST`] (β < b_l): w = (s/s_l)²/r over r = ln b_l / ln β. As r → 0,
    ///   s² ≈ x²/(−2 ln β) is proportional to r, so w stays of order one.
    /// - [`LOWER_MIDDLE`] (b_l ≤ β < b_c): (s − s_l)/(s_c − s_l) over
    ///   τ = ln(β/b_l)/ln(b_c/b_l); the logarithm resolves the layer near b_l where b_l is small
    ///   (near the money).
    /// - [`UPPER_MIDDLE`] (b_c ≤ β ≤ b_u): (s − s_c)/(s_u − s_c) over t = (β − b_c)/(b_u − b_c).
    pub(crate) surfaces: Grid2<3, NODES_S_C, NODES_V>,
}

pub(crate) static GUESS_TABLES: LazyLock<GuessTables> = LazyLock::new(|| {
    use super::lbr::{BranchPoints, reference_solve};
    let root_s_c_range = (S_C_MIN.sqrt(), S_C_MAX.sqrt());
    GuessTables {
        branch_ratios: Grid1::sample(root_s_c_range, |root_s_c| {
            BranchRatios::at(root_s_c * root_s_c).to_array()
        }),
        surfaces: Grid2::sample(
            root_s_c_range,
            [(R_MIN, 1.0), (0.0, 1.0), (0.0, 1.0)],
            |surface, root_s_c, v| {
                let s_c = root_s_c * root_s_c;
                let points = BranchPoints::at(s_c);
                match surface {
                    LOWEST => {
                        let r = v;
                        let beta = (points.b_l.ln() / r).exp();
                        let s = reference_solve(beta, points.theta_x);
                        (s / points.s_l).powi(2) / r
                    }
                    LOWER_MIDDLE => {
                        let tau = v;
                        let beta = points.b_l * (tau * (points.b_c / points.b_l).ln()).exp();
                        let s = reference_solve(beta, points.theta_x);
                        (s - points.s_l) / (s_c - points.s_l)
                    }
                    _ => {
                        let t = v;
                        let beta = points.b_c + t * (points.b_u - points.b_c);
                        let s = reference_solve(beta, points.theta_x);
                        (s - s_c) / (points.s_u - s_c)
                    }
                }
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
        let grid = Grid2::<2, 9, 7>::sample((0.0, 2.0), [(-1.0, 1.0), (0.0, 3.0)], |k, u, v| {
            cubic(u, v) + k as f64
        });
        for &(u, v) in &[
            (0.0, -1.0),
            (0.1, 0.3),
            (1.37, -0.91),
            (2.0, 1.0),
            (1.999, 0.001),
        ] {
            let got = grid.at(0, u, v).unwrap();
            assert!((got - cubic(u, v)).abs() < 1e-13, "({u}, {v}): {got}");
            let got = grid.at(1, u, v + 2.0).unwrap();
            assert!(
                (got - cubic(u, v + 2.0) - 1.0).abs() < 1e-12,
                "({u}, {v}): {got}"
            );
        }
        assert!(grid.at(0, 2.0001, 0.0).is_none());
        assert!(grid.at(0, 1.0, -1.0001).is_none());
        assert!(grid.at(1, 1.0, -0.5).is_none());
        assert!(grid.at(0, f64::NAN, 0.0).is_none());
        assert!(grid.at(0, 1.0, f64::NAN).is_none());
        // Outside the grid the lane form still answers (a clamped stencil) and says so.
        assert!(!grid.at_lane(0, -5.0, 7.0).1);
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
