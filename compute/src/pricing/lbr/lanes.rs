//! The common case of a solve, several contracts at a time.
//!
//! Almost every listed contract takes the same path through "Let's Be Rational": an initial
//! guess from one of the three tabulated surfaces (lowest, lower-middle or upper-middle branch)
//! and one Householder iteration whose normalised Black function is the small-t expansion
//! (region II). Here that path is written as straight-line code — both objectives evaluated,
//! every table read through clamped indices, `exp` and `ln` as plain arithmetic
//! ([`crate::pricing::elementary`]) — so that a loop over a block of contracts has no branch,
//! call or bounds check and the compiler evaluates the block in SIMD lanes. A lane that leaves
//! the path anywhere (outside the tables, another region of b, the highest branch, a price
//! without a volatility, …) is flagged and solved by the general code instead.
//!
//! Every operation is an IEEE operation on one lane's values, so a lane gives the same bits
//! whatever the block size (one for a single contract, [`LANES`] for the batch kernels).

use super::{CONVERGED_STEP, Objective, Solve, householder3_factor};
use crate::pricing::black::{
    is_region_i, is_region_ii, small_t_expansion_from_y_prime, y_prime_lane,
};
use crate::pricing::elementary::{EXP_DOMAIN, LN_DOMAIN_MIN, exp_straight, ln_straight};
use crate::pricing::guess_table::{GUESS_TABLES, GuessTables, LOWER_MIDDLE, LOWEST, UPPER_MIDDLE};
use crate::pricing::special::{
    LN_TWO_PI, ONE_OVER_SQRT_TWO_PI, SQRT_PI_OVER_TWO, SQRT_TWO, SQRT_TWO_PI,
};

use super::BranchRatios;

/// Contracts solved together by the batch kernels: four doubles fill an AVX register.
pub(crate) const LANES: usize = 4;

/// How one lane of a block came out.
#[derive(Debug, Clone, Copy)]
pub(crate) enum LaneOutcome {
    /// One iteration converged: the total volatility s = σ√T.
    Solved(f64),
    /// One iteration done but its step was not small: iterate once more from this state.
    Iterate(Solve),
    /// Not the common case: solve from scratch with the general code.
    General,
}

/// What one lane computes, kept in plain numbers so the block loop stays vectorisable.
#[derive(Debug, Clone, Copy, Default)]
struct LaneValues {
    /// The total volatility after one iteration.
    s: f64,
    ln_beta: f64,
    inv_ln_beta: f64,
    /// The lane is on the common path.
    on_path: bool,
    /// The iteration's step was below `CONVERGED_STEP`·s.
    converged: bool,
    /// Lowest-branch objective (otherwise the middle one).
    lowest: bool,
}

/// Solves `N` normalised prices β at θx = −|x| (see `lbr`), lane by lane.
#[inline]
pub(crate) fn solve_block<const N: usize>(beta: &[f64; N], theta_x: &[f64; N]) -> [LaneOutcome; N] {
    let tables = &*GUESS_TABLES;
    // Plain arrays of numbers, one per field: what the loop vectoriser can store lane-wise.
    let mut s = [0.0; N];
    let mut ln_beta = [0.0; N];
    let mut inv_ln_beta = [0.0; N];
    let mut flags = [0u8; N];
    for i in 0..N {
        let v = lane(beta[i], theta_x[i], tables);
        s[i] = v.s;
        ln_beta[i] = v.ln_beta;
        inv_ln_beta[i] = v.inv_ln_beta;
        flags[i] = u8::from(v.on_path) | (u8::from(v.converged) << 1) | (u8::from(v.lowest) << 2);
    }
    std::array::from_fn(|i| {
        let v = LaneValues {
            s: s[i],
            ln_beta: ln_beta[i],
            inv_ln_beta: inv_ln_beta[i],
            on_path: flags[i] & 1 != 0,
            converged: flags[i] & 2 != 0,
            lowest: flags[i] & 4 != 0,
        };
        if !v.on_path {
            LaneOutcome::General
        } else if v.converged {
            LaneOutcome::Solved(v.s)
        } else {
            LaneOutcome::Iterate(Solve {
                s: v.s,
                theta_x: theta_x[i],
                beta: beta[i],
                aux: if v.lowest { v.ln_beta } else { 0.0 },
                aux2: if v.lowest { v.inv_ln_beta } else { 0.0 },
                objective: if v.lowest {
                    Objective::Lowest
                } else {
                    Objective::Middle
                },
            })
        }
    })
}

/// One contract's guess and first iteration on the common path. The formulas are those of
/// `tabulated_guess` and `householder_step` (lowest and middle objectives) with b in region II.
#[inline(always)]
fn lane(beta: f64, theta_x: f64, tables: &GuessTables) -> LaneValues {
    // The branch points, relative to b_max = exp(θx/2), from the table over √s_c.
    let b_max = exp_straight(0.5 * theta_x);
    let s_c = SQRT_TWO * (-theta_x).sqrt();
    let root_s_c = s_c.sqrt();
    let (ratios, ratios_inside) = tables.branch_ratios.at_lane(root_s_c);
    let ratios = BranchRatios::from_array(ratios);
    let b_c = 0.5 * b_max * ratios.ome;
    let b_l = ratios.b_l * b_max;
    let b_u = ratios.b_u * b_max;
    let s_l = s_c - SQRT_PI_OVER_TWO * ratios.ome;
    let s_u = s_c + SQRT_PI_OVER_TWO * (2.0 - ratios.ome);

    // The branch and its coordinate on the guess surface.
    let ln_beta = ln_straight(beta);
    let inv_ln_beta = 1.0 / ln_beta;
    let ln_b_l = ratios.ln_b_l + 0.5 * theta_x;
    let lowest = beta < b_l;
    let upper = beta >= b_c;
    let r = ln_b_l * inv_ln_beta;
    let tau = (ln_beta - ln_b_l) * ratios.inv_ln_b_c_over_b_l;
    let t_upper = (beta - b_c) / (b_u - b_c);
    let surface = if lowest {
        LOWEST
    } else if upper {
        UPPER_MIDDLE
    } else {
        LOWER_MIDDLE
    };
    let coordinate = if lowest {
        r
    } else if upper {
        t_upper
    } else {
        tau
    };
    let (w, surface_inside) = tables.surfaces.at_lane(surface, root_s_c, coordinate);
    let s_lowest = s_l * (w * r).sqrt();
    let s_lower = s_l + w * (s_c - s_l);
    let s_upper = s_c + w * (s_u - s_c);
    let s = if lowest {
        s_lowest
    } else if upper {
        s_upper
    } else {
        s_lower
    };

    // b/(∂b/∂s) by the small-t expansion, and what both objectives share.
    let h = theta_x / s;
    let t = 0.5 * s;
    let (y_prime, y_prime_inside) = y_prime_lane(h);
    let bx = small_t_expansion_from_y_prime(y_prime, h, t);
    let half_exponent = 0.5 * (h * h + t * t);
    let inv_s = 1.0 / s;
    let h_iter = theta_x * inv_s;
    let x2_over_s3 = h_iter * h_iter * inv_s;
    let b_h2 = x2_over_s3 - s * 0.25;
    let c = 3.0 * (x2_over_s3 * inv_s);
    let b_h3 = b_h2 * b_h2 - c - 0.25;

    // Lowest branch: g(s) = 1/ln(b(s)) − 1/ln(β), with ln b = ln(bx) + ln(∂b/∂s).
    let ln_vega = -(LN_TWO_PI * 0.5) - half_exponent;
    let ln_b = ln_straight(bx) + ln_vega;
    let bpob = 1.0 / bx;
    let nu_lowest = (ln_beta - ln_b) * ln_b * inv_ln_beta * bx;
    let lambda = 1.0 / ln_b;
    let otl = 1.0 + 2.0 * lambda;
    let h2_lowest = b_h2 - bpob * otl;
    let sq_bpob = bpob * bpob;
    let bppob = b_h2 * bpob;
    let mu = 6.0 * lambda * (1.0 + lambda);
    let h3_lowest = b_h3 + sq_bpob * (2.0 + mu) - bppob * 3.0 * otl;
    let ds_lowest = nu_lowest * householder3_factor(nu_lowest, h2_lowest, h3_lowest);

    // Middle branches: g(s) = b(s) − β.
    let e = exp_straight(-half_exponent);
    let b = bx * (ONE_OVER_SQRT_TWO_PI * e);
    let inv_vega = SQRT_TWO_PI / e;
    let nu_middle = (beta - b) * inv_vega;
    let ds_middle = nu_middle * householder3_factor(nu_middle, b_h2, b_h3);

    let ds = if lowest { ds_lowest } else { ds_middle };
    let s_new = s + ds;

    // `&` throughout: every condition is evaluated, no branch.
    let on_path = (theta_x < 0.0)
        & (beta > 0.0)
        & (beta < b_max)
        & (beta >= LN_DOMAIN_MIN)
        & (!upper | (beta <= b_u))
        & ratios_inside
        & surface_inside
        & !is_region_i(theta_x, s)
        & is_region_ii(theta_x, s)
        & y_prime_inside
        & (bx >= LN_DOMAIN_MIN)
        // The middle objective needs ∂b/∂s itself, which must not underflow.
        & (lowest | (-half_exponent > EXP_DOMAIN.0))
        & s_new.is_finite()
        & (s_new > 0.0);
    LaneValues {
        s: s_new,
        ln_beta,
        inv_ln_beta,
        on_path,
        converged: ds.abs() <= CONVERGED_STEP * s_new,
        lowest,
    }
}
