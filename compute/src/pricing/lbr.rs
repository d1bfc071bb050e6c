//! Implied volatility by P. Jäckel's "Let's Be Rational" (Wilmott, January 2015, pp. 40–53;
//! 2024 revision of the reference implementation): a four-branch rational-cubic initial guess
//! in transformed coordinates, then at most two Householder iterations of third order (fourth
//! order for |x| beyond 190 / 580) on a branch-dependent objective function. The result is
//! accurate to the attainable precision (1 + |b/(s·∂b/∂s)|)·ε of the normalised price.
//!
//! One departure: in the lowest and middle branches the initial guess comes from tables of
//! exact solutions (`guess_table`) wherever they reach, accurate enough that one iteration
//! suffices; the rational-cubic guess remains the fallback and builds the tables.
//!
//! Copyright notice required by the reference code this module is ported from:
//! Copyright © 2013-2024 Peter Jäckel. Permission to use, copy, modify, and distribute this
//! software is freely granted, provided that this notice is preserved. The software is provided
//! "as is" without warranty of any kind.

// Coefficients are kept digit for digit as published, so they can be checked against the source.
#![allow(clippy::excessive_precision, clippy::unreadable_literal)]

use super::black::{
    inv_normalised_vega, normalised_black_and_inv_vega, normalised_vega, rational_cubic,
    scaled_normalised_black_and_ln_vega, vega_over_complementary_normalised_black,
};
use super::guess_table::{GUESS_TABLES, GuessTables, LOWER_MIDDLE, LOWEST, UPPER_MIDDLE};
use super::special::{
    ONE_OVER_SQRT_TWO, SQRT_PI_OVER_TWO, SQRT_TWO, SQRT_TWO_PI, cbrt_positive, erfc, erfcx,
    erfcx_above_threshold, erfinv, exp_of_negative_square, inverse_norm_cdf,
    inverse_norm_cdf_for_low_probabilities_from_ln, norm_pdf,
};

pub(crate) mod lanes;

const TWO_PI: f64 = std::f64::consts::TAU;
const SQRT_THREE: f64 = 1.732050807568877293527446341505872366942805253810;
const SQRT_ONE_OVER_THREE: f64 = 0.577350269189625764509148780501957455647601751270;
const TWO_PI_OVER_SQRT_TWENTY_SEVEN: f64 = 1.209199576156145233729385505094770488189377498728;
const SQRT_THREE_OVER_THIRD_ROOT_TWO_PI: f64 = 0.938643487427383566075051356115075878414688769574;
const PI_OVER_SIX: f64 = std::f64::consts::FRAC_PI_6;
const SQRT_DBL_MAX: f64 = 1.3407807929942596e154;

// At most two Householder iterations: the initial guess makes two always sufficient.

/// A step smaller than this (relative to s) leaves an error of order (step)⁴ ≈ 1e-20 after a
/// fourth-order Householder iteration, so the second iteration is skipped. The reference code
/// always runs two; this saves most of the second one at no measurable cost in accuracy (see
/// the `guess_table` tests and the benchmark's accuracy figures).
const CONVERGED_STEP: f64 = 1e-5;

#[inline(always)]
fn householder3_factor(nu: f64, h2: f64, h3: f64) -> f64 {
    (1.0 + 0.5 * h2 * nu) / (1.0 + nu * (h2 + h3 * nu * (1.0 / 6.0)))
}

#[inline(always)]
fn householder4_factor(nu: f64, h2: f64, h3: f64, h4: f64) -> f64 {
    (1.0 + nu * (h2 + nu * h3 * (1.0 / 6.0)))
        / (1.0
            + nu * (1.5 * h2 + nu * (h2 * h2 * 0.25 + h3 * (1.0 / 3.0) + nu * h4 * (1.0 / 24.0))))
}

/// 1 − erfcx(x) without cancellation near 0.
#[inline]
#[rustfmt::skip] // generated coefficient expressions, kept as published
fn one_minus_erfcx(x: f64) -> f64 {
    if !(-1.0 / 5.0..=1.0 / 3.0).contains(&x) {
        return 1.0 - erfcx(x);
    }
    x * (std::f64::consts::FRAC_2_SQRT_PI - x * (1.0000000000000002 + x * (1.1514967181784756 + x * (5.7689001208873741E-1 + x * (1.4069188744609651E-1 + 1.4069285713634565E-2 * x)))) / (1.0 + x * (1.9037494962421563 + x * (1.5089908593742723 + x * (6.2486081658640257E-1 + x * (1.358008134514386E-1 + 1.2463320728346347E-2 * x))))))
}

/// b_l(x)/b_max(x) as a univariate function of s_c = √(2|x|) (four Remez branches).
#[inline]
#[rustfmt::skip] // generated coefficient expressions, kept as published
fn b_l_over_b_max(s_c: f64) -> f64 {
    if s_c < 2.6267851073127395 {
        if s_c < 0.7099295739719539 {
            let g = (8.0741072372882856924E-2 + s_c * (9.8078911786358897272E-2 + s_c * (3.9760631445677058375E-2 + s_c * (5.9716928459589189876E-3 + s_c * (-6.4036399341479799981E-6 + 4.5425102093616062245E-7 * s_c))))) / (1.0 + s_c * (1.8594977672287664353 + s_c * (1.3658801475711790419 + s_c * (4.6132707108655653215E-1 + 6.1254597049831720643E-2 * s_c))));
            return (s_c * s_c) * (0.07560996640296361767172 + s_c * (s_c * g - 0.09672719281339436290858));
        }
        return (1.9795737927598581235E-9 + s_c * (-2.7081288564685588037E-8 + s_c * (7.5610142272549044609E-2 + s_c * (6.917130174466834016E-2 + s_c * (2.9537058950963019803E-2 + s_c * (6.5849252702302307774E-3 + 6.9711400639834715731E-4 * s_c)))))) / (1.0 + s_c * (2.1941448525586579756 + s_c * (2.1297103549995181357 + s_c * (1.1571483187179784072 + s_c * (3.7831622253060456794E-1 + s_c * (7.1714862448829349869E-2 + 6.6361975827861200167E-3 * s_c))))));
    }
    if s_c < 7.348469228349534 {
        return (-9.3325115354837883291E-5 + s_c * (5.3118033972794648837E-4 + s_c * (7.4114855448345002595E-2 + s_c * (7.4039658186822817454E-2 + s_c * (3.9225177407687604785E-2 + s_c * (1.0022913378254090083E-2 + 1.7012579407246055469E-3 * s_c)))))) / (1.0 + s_c * (2.2217238132228132256 + s_c * (2.3441816707087403282 + s_c * (1.3912323646271141826 + s_c * (5.3231258443501838354E-1 + s_c * (1.1744005919716101572E-1 + 1.6195405895930935811E-2 * s_c))))));
    }
    (1.4500072297240603183E-3 + s_c * (-1.5116692485011195757E-3 + s_c * (7.1682178310936334831E-2 + s_c * (3.921610857820463493E-2 + s_c * (2.9342405658628443931E-2 + s_c * (5.1832526171631521426E-3 + 1.6930208078421474854E-3 * s_c)))))) / (1.0 + s_c * (1.6176313502305414664 + s_c * (1.6823159175281531664 + s_c * (8.4878307567372222113E-1 + s_c * (3.7543742137375791321E-1 + s_c * (7.126137099644302999E-2 + 1.6116992546788676159E-2 * s_c))))))
}

/// b_u(x)/b_max(x) as a univariate function of s_c = √(2|x|) (four Remez branches).
#[inline]
#[rustfmt::skip] // generated coefficient expressions, kept as published
fn b_u_over_b_max(s_c: f64) -> f64 {
    if s_c < 1.7888543819998317 {
        if s_c < 0.7745966692414833 {
            let g = (-6.063099881233561706E-2 + s_c * (-8.1011946637120604985E-2 + s_c * (-4.2505564862438753828E-2 + s_c * (-8.9880000946868691788E-3 + s_c * (-7.5603072110443268356E-6 + 4.3879556621540147458E-7 * s_c))))) / (1.0 + s_c * (1.8400371530721828756 + s_c * (1.5709283443886143691 + s_c * (6.8913245453611400484E-1 + 1.4703173061720980923E-1 * s_c))));
            return 0.7899085945560627246288 + (s_c * s_c) * (0.0614616805805147403487 + s_c * g);
        }
        return (7.8990944435755287611E-1 + s_c * (-1.2655410534988972886 + s_c * (-2.8803040699221003256 + s_c * (-2.6936198689113258727 + s_c * (-1.1213067281643205754 + s_c * (-2.1277793801691629892E-1 + 5.1486445905299802703E-6 * s_c)))))) / (1.0 + s_c * (-1.6021222722060444448 + s_c * (-3.7242680976480704555 + s_c * (-3.2083117718907365085 + s_c * (-1.2922333835930958583 - 2.3762328334050001161E-1 * s_c)))));
    }
    if s_c < 6.164414002968976 {
        return (7.8990640048967596475E-1 + s_c * (1.5993699253596663678 + s_c * (1.6481729039140370242 + s_c * (9.8227188109869200166E-1 + s_c * (3.6313557966186936883E-1 + s_c * (7.8277036261179606301E-2 + 9.3404307364538726214E-3 * s_c)))))) / (1.0 + s_c * (2.0247407005640401446 + s_c * (2.0087454279103740489 + s_c * (1.1627561803056961973 + s_c * (4.2004672123723823581E-1 + s_c * (8.9130862793887234546E-2 + 1.0436767768858021717E-2 * s_c))))));
    }
    (7.91133825948419359E-1 + s_c * (1.24653733210880042 + s_c * (1.32747426980537386 + s_c * (6.95009705717846778E-1 + s_c * (3.05965944268228457E-1 + s_c * (6.02200363391352887E-2 + 1.29050244454344842E-2 * s_c)))))) / (1.0 + s_c * (1.58117486714634672 + s_c * (1.60144713247629644 + s_c * (8.30040185836882436E-1 + s_c * (3.53071863813401531E-1 + s_c * (6.95901684131758475E-2 + 1.44197580643890011E-2 * s_c))))))
}

/// f_lower(s) = 2π/√27·|x|·Φ(−|x|/(√3·s))³ and its first two derivatives with respect to β.
/// Two `exp` calls: Φ(−z) and Φ(−z)/φ(z) share exp(−z²/2) (Φ(−z) = ½·erfcx(z/√2)·exp(−z²/2)
/// beyond Cody's threshold), and exp(2y + s²/4) = exp(y + s²/8)².
#[inline]
fn f_lower_map_and_first_two_derivatives(x: f64, s: f64) -> (f64, f64, f64) {
    const CODYS_THRESHOLD: f64 = 0.46875;
    let ax = x.abs();
    let z = SQRT_ONE_OVER_THREE * ax / s;
    let y = z * z;
    let s2 = s * s;
    let q = ONE_OVER_SQRT_TWO * z;
    let (phi_cdf, cdf_over_pdf) = if q > CODYS_THRESHOLD {
        let scaled = erfcx_above_threshold(q);
        (
            0.5 * scaled * exp_of_negative_square(q),
            SQRT_PI_OVER_TWO * scaled,
        )
    } else {
        let phi_cdf = 0.5 * erfc(q);
        (phi_cdf, phi_cdf / norm_pdf(z))
    };
    let g = (y + 0.125 * s2).exp();
    let fpp = PI_OVER_SIX * y / (s2 * s)
        * phi_cdf
        * (8.0 * SQRT_THREE * s * ax + (3.0 * s2 * (s2 - 8.0) - 8.0 * x * x) * cdf_over_pdf)
        * (g * g);
    let phi2 = phi_cdf * phi_cdf;
    let fp = TWO_PI * y * phi2 * g;
    let f = TWO_PI_OVER_SQRT_TWENTY_SEVEN * ax * (phi2 * phi_cdf);
    (f, fp, fpp)
}

/// Inverse of the lower map, formula (4.38): |x|/(√3·|Φ⁻¹(c·∛(f/|x|))|), c = √3/∛(2π).
/// In the tail branch of Φ⁻¹ (p ≤ ½ − U_MAX) only ln p is needed, so no cube root is taken;
/// ln(f/|x|) is split into ln f − ln|x| where f/|x| would be subnormal (f near
/// f64::MIN_POSITIVE and |x| > 1, the underflow Jäckel's two separate cube roots avoid).
#[inline]
fn inverse_f_lower_map(x: f64, f: f64) -> f64 {
    /// ln c.
    const LN_C: f64 = -0.063_319_544_469_060_315;
    /// (½ − U_MAX)³/c³: below it p = c·∛(f/|x|) is in the tail branch of Φ⁻¹.
    const RATIO_TAIL: f64 = 0.004_829_046_216_021_381;
    let ax = x.abs();
    let ratio = f / ax;
    let z = if ratio < RATIO_TAIL {
        let ln_ratio = if ratio >= f64::MIN_POSITIVE {
            ratio.ln()
        } else {
            f.ln() - ax.ln()
        };
        inverse_norm_cdf_for_low_probabilities_from_ln(LN_C + ln_ratio * (1.0 / 3.0))
    } else {
        inverse_norm_cdf(SQRT_THREE_OVER_THIRD_ROOT_TWO_PI * cbrt_positive(ratio))
    };
    (x / (SQRT_THREE * z)).abs()
}

/// f_upper(s) = Φ(−s/2) and its first two derivatives with respect to β.
#[inline]
fn f_upper_map_and_first_two_derivatives(x: f64, s: f64) -> (f64, f64, f64) {
    let f = 0.5 * erfc((0.5 * ONE_OVER_SQRT_TWO) * s);
    let w = (x / s) * (x / s);
    let fp = -0.5 * (0.5 * w).exp();
    let fpp = SQRT_PI_OVER_TWO * (w + 0.125 * s * s).exp() * w / s;
    (f, fp, fpp)
}

#[inline]
fn inverse_f_upper_map(f: f64) -> f64 {
    -2.0 * inverse_norm_cdf(f)
}

/// Why a normalised price has no implied volatility.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum NormalisedFailure {
    /// β < 0 after removing the intrinsic value.
    BelowIntrinsic,
    /// β = 0: the price is exactly intrinsic, no time value left.
    NoTimeValue,
    /// β ≥ b_max = exp(θx/2).
    AboveMaximum,
}

/// Which objective function the Householder iterations of a solve use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Objective {
    /// Exact (θx = 0): no iteration.
    Exact,
    /// Lowest branch: g(s) = 1/ln(b(s)) − 1/ln(β).
    Lowest,
    /// Middle branches: g(s) = b(s) − β.
    Middle,
    /// Highest branch with β > b_max/2: g(s) = ln(b_max − β) − ln(b_max − b(s)).
    Highest,
}

/// A solve in progress: the current total volatility and what the iterations need.
/// A solve is: `initial_guess`, `householder_step`, and a second step where the first
/// returned false.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Solve {
    /// Current total volatility s.
    pub(crate) s: f64,
    theta_x: f64,
    beta: f64,
    /// ln β (lowest branch) or b_max − β (highest branch).
    aux: f64,
    /// 1/ln β (lowest branch).
    aux2: f64,
    objective: Objective,
}

/// The branch points of the initial guess for θx = −s_c²/2 (what the tables are built on).
#[derive(Debug, Clone, Copy)]
pub(crate) struct BranchPoints {
    pub(crate) theta_x: f64,
    pub(crate) s_l: f64,
    pub(crate) b_l: f64,
    pub(crate) b_c: f64,
    pub(crate) s_u: f64,
    pub(crate) b_u: f64,
}

impl BranchPoints {
    pub(crate) fn at(s_c: f64) -> Self {
        let theta_x = -0.5 * s_c * s_c;
        let b_max = (0.5 * theta_x).exp();
        let ome = one_minus_erfcx((-theta_x).sqrt());
        Self {
            theta_x,
            s_l: s_c - SQRT_PI_OVER_TWO * ome,
            b_l: b_l_over_b_max(s_c) * b_max,
            b_c: 0.5 * b_max * ome,
            s_u: s_c + SQRT_PI_OVER_TWO * (2.0 - ome),
            b_u: b_u_over_b_max(s_c) * b_max,
        }
    }
}

/// The functions of s_c = √(2|x|) alone that pick the initial guess's branch, relative to
/// b_max = exp(θx/2) so that they stay of order one. Tabulated in `guess_table`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) struct BranchRatios {
    /// 1 − erfcx(s_c/√2): b_c = ½·b_max·ome, s_l = s_c − √(π/2)·ome, s_u = s_c + √(π/2)·(2 − ome).
    pub(crate) ome: f64,
    /// b_l/b_max.
    pub(crate) b_l: f64,
    /// b_u/b_max.
    pub(crate) b_u: f64,
    /// ln(b_l/b_max).
    pub(crate) ln_b_l: f64,
    /// 1/ln(b_c/b_l).
    pub(crate) inv_ln_b_c_over_b_l: f64,
}

impl BranchRatios {
    pub(crate) const LEN: usize = 5;

    pub(crate) fn at(s_c: f64) -> Self {
        let ome = one_minus_erfcx(s_c * ONE_OVER_SQRT_TWO);
        let b_l = b_l_over_b_max(s_c);
        Self {
            ome,
            b_l,
            b_u: b_u_over_b_max(s_c),
            ln_b_l: b_l.ln(),
            inv_ln_b_c_over_b_l: 1.0 / (0.5 * ome / b_l).ln(),
        }
    }

    pub(crate) fn to_array(self) -> [f64; Self::LEN] {
        [
            self.ome,
            self.b_l,
            self.b_u,
            self.ln_b_l,
            self.inv_ln_b_c_over_b_l,
        ]
    }

    #[inline(always)]
    pub(crate) fn from_array(
        [ome, b_l, b_u, ln_b_l, inv_ln_b_c_over_b_l]: [f64; Self::LEN],
    ) -> Self {
        Self {
            ome,
            b_l,
            b_u,
            ln_b_l,
            inv_ln_b_c_over_b_l,
        }
    }
}

/// The initial guess from the tables alone (branch ratios included), or `None` where they do
/// not reach; then the exact branch points and the rational guess decide. Interpolated branch
/// points can put a price within ~1e-7 (relative) of b_l, b_c or b_u on the neighbouring branch: its table
/// covers it (both objectives converge there) or answers `None`.
#[inline]
fn tabulated_guess(tables: &GuessTables, solve: &mut Solve, b_max: f64, s_c: f64) -> Option<f64> {
    let root_s_c = s_c.sqrt();
    let ratios = BranchRatios::from_array(tables.branch_ratios.at(root_s_c)?);
    let beta = solve.beta;
    let b_c = 0.5 * b_max * ratios.ome;
    if beta < b_c {
        let s_l = s_c - SQRT_PI_OVER_TWO * ratios.ome;
        let b_l = ratios.b_l * b_max;
        if beta < b_l {
            let ln_beta = beta.ln();
            let inv_ln_beta = 1.0 / ln_beta;
            // r = ln b_l / ln β with ln b_l = ln(b_l/b_max) + θx/2.
            let r = (ratios.ln_b_l + 0.5 * solve.theta_x) * inv_ln_beta;
            let w = tables.surfaces.at(LOWEST, root_s_c, r)?;
            solve.aux = ln_beta;
            solve.aux2 = inv_ln_beta;
            solve.objective = Objective::Lowest;
            return Some(s_l * (w * r).sqrt());
        }
        let tau = (beta / b_l).ln() * ratios.inv_ln_b_c_over_b_l;
        let fraction = tables.surfaces.at(LOWER_MIDDLE, root_s_c, tau)?;
        return Some(s_l + fraction * (s_c - s_l));
    }
    let b_u = ratios.b_u * b_max;
    if beta > b_u {
        return None;
    }
    let s_u = s_c + SQRT_PI_OVER_TWO * (2.0 - ratios.ome);
    let t = (beta - b_c) / (b_u - b_c);
    let fraction = tables.surfaces.at(UPPER_MIDDLE, root_s_c, t)?;
    Some(s_c + fraction * (s_u - s_c))
}

/// The total volatility for a normalised price by the reference algorithm: the rational-cubic
/// guess and two Householder iterations. Builds the guess tables (NaN where there is no
/// solution, which the tables never ask for).
pub(crate) fn reference_solve(beta: f64, theta_x: f64) -> f64 {
    match initial_guess_from(beta, theta_x, None) {
        Ok(mut solve) => {
            householder_step(&mut solve);
            householder_step(&mut solve);
            solve.s
        }
        Err(_) => f64::NAN,
    }
}

/// Rejects prices without a volatility and computes the initial guess: tabulated where the
/// tables reach (see `guess_table`), else Jäckel's four rational-cubic branches.
#[inline]
pub(crate) fn initial_guess(beta: f64, theta_x: f64) -> Result<Solve, NormalisedFailure> {
    initial_guess_from(beta, theta_x, Some(&GUESS_TABLES))
}

#[inline]
fn initial_guess_from(
    beta: f64,
    theta_x: f64,
    tables: Option<&GuessTables>,
) -> Result<Solve, NormalisedFailure> {
    debug_assert!(theta_x <= 0.0);
    if beta.is_nan() {
        return Err(NormalisedFailure::BelowIntrinsic);
    }
    if beta <= 0.0 {
        return Err(if beta == 0.0 {
            NormalisedFailure::NoTimeValue
        } else {
            NormalisedFailure::BelowIntrinsic
        });
    }
    let b_max = (0.5 * theta_x).exp();
    if beta >= b_max {
        return Err(NormalisedFailure::AboveMaximum);
    }
    let mut solve = Solve {
        s: 0.0,
        theta_x,
        beta,
        aux: 0.0,
        aux2: 0.0,
        objective: Objective::Middle,
    };
    if theta_x == 0.0 {
        // b_atm(s) = erf(s/√8)
        solve.s = (2.0 * SQRT_TWO) * erfinv(beta);
        solve.objective = Objective::Exact;
        return Ok(solve);
    }
    // b_c = b(θx, s_c) with s_c = √(2|x|) reduces to exp(−|x|/2)/2·[1 − erfcx(√|x|)].
    let sqrt_ax = (-theta_x).sqrt();
    let s_c = SQRT_TWO * sqrt_ax;
    if let Some(tables) = tables
        && let Some(s) = tabulated_guess(tables, &mut solve, b_max, s_c)
    {
        solve.s = s;
        return Ok(solve);
    }
    let ome = one_minus_erfcx(sqrt_ax);
    let b_c = 0.5 * b_max * ome;
    if beta < b_c {
        // Lower half: s < s_c.
        let s_l = s_c - SQRT_PI_OVER_TWO * ome;
        let b_l = b_l_over_b_max(s_c) * b_max;
        if beta < b_l {
            // Lowest branch, objective g(s) = 1/ln(b(s)) − 1/ln(β).
            let ln_beta = beta.ln();
            let inv_ln_beta = 1.0 / ln_beta;
            solve.aux = ln_beta;
            solve.aux2 = inv_ln_beta;
            solve.objective = Objective::Lowest;
            // r = ln b_l / ln β ∈ (0, 1); the table holds (s/s_l)²/r.
            let r = b_l.ln() * inv_ln_beta;
            if let Some(w) = tables.and_then(|t| t.surfaces.at(LOWEST, s_c.sqrt(), r)) {
                solve.s = s_l * (w * r).sqrt();
                return Ok(solve);
            }
            let (f_lower_map_l, d_f_lower_map_l_d_beta, d2_f_lower_map_l_d_beta2) =
                f_lower_map_and_first_two_derivatives(theta_x, s_l);
            let r_ll =
                rational_cubic::convex_control_parameter_to_fit_second_derivative_at_right_side(
                    0.0,
                    b_l,
                    0.0,
                    f_lower_map_l,
                    1.0,
                    d_f_lower_map_l_d_beta,
                    d2_f_lower_map_l_d_beta2,
                    true,
                );
            let mut f = rational_cubic::interpolation(
                beta,
                0.0,
                b_l,
                0.0,
                f_lower_map_l,
                1.0,
                d_f_lower_map_l_d_beta,
                r_ll,
            );
            if !(f > 0.0) {
                // Round-off for extreme |x|: quadratic through f(0)=0, f(b_l), f'(0)=1.
                let t = beta / b_l;
                f = (f_lower_map_l * t + b_l * (1.0 - t)) * t;
            }
            solve.s = inverse_f_lower_map(theta_x, f);
            return Ok(solve);
        }
        // Lower middle: s_l ≤ s < s_c.
        if let Some(tables) = tables {
            let tau = (beta / b_l).ln() / (b_c / b_l).ln();
            if let Some(fraction) = tables.surfaces.at(LOWER_MIDDLE, s_c.sqrt(), tau) {
                solve.s = s_l + fraction * (s_c - s_l);
                return Ok(solve);
            }
        }
        let inv_v_c = SQRT_TWO_PI / b_max;
        let inv_v_l = inv_normalised_vega(theta_x, s_l);
        let r_lm = rational_cubic::convex_control_parameter_to_fit_second_derivative_at_right_side(
            b_l, b_c, s_l, s_c, inv_v_l, inv_v_c, 0.0, false,
        );
        solve.s = rational_cubic::interpolation(beta, b_l, b_c, s_l, s_c, inv_v_l, inv_v_c, r_lm);
    } else {
        // Upper half: s_c ≤ s.
        let s_u = s_c + SQRT_PI_OVER_TWO * (2.0 - ome);
        let b_u = b_u_over_b_max(s_c) * b_max;
        if beta <= b_u {
            // Upper middle: s_c ≤ s ≤ s_u.
            if let Some(tables) = tables {
                let t = (beta - b_c) / (b_u - b_c);
                if let Some(fraction) = tables.surfaces.at(UPPER_MIDDLE, s_c.sqrt(), t) {
                    solve.s = s_c + fraction * (s_u - s_c);
                    return Ok(solve);
                }
            }
            let inv_v_c = SQRT_TWO_PI / b_max;
            let inv_v_u = inv_normalised_vega(theta_x, s_u);
            let r_um =
                rational_cubic::convex_control_parameter_to_fit_second_derivative_at_left_side(
                    b_c, b_u, s_c, s_u, inv_v_c, inv_v_u, 0.0, false,
                );
            solve.s =
                rational_cubic::interpolation(beta, b_c, b_u, s_c, s_u, inv_v_c, inv_v_u, r_um);
        } else {
            // Highest branch: s_u < s, β ∈ (b_u, b_max).
            let (f_upper_map_h, d_f_upper_map_h_d_beta, d2_f_upper_map_h_d_beta2) =
                f_upper_map_and_first_two_derivatives(theta_x, s_u);
            let mut f = -f64::MAX;
            if d2_f_upper_map_h_d_beta2 > -SQRT_DBL_MAX && d2_f_upper_map_h_d_beta2 < SQRT_DBL_MAX {
                let r_uu =
                    rational_cubic::convex_control_parameter_to_fit_second_derivative_at_left_side(
                        b_u,
                        b_max,
                        f_upper_map_h,
                        0.0,
                        d_f_upper_map_h_d_beta,
                        -0.5,
                        d2_f_upper_map_h_d_beta2,
                        true,
                    );
                f = rational_cubic::interpolation(
                    beta,
                    b_u,
                    b_max,
                    f_upper_map_h,
                    0.0,
                    d_f_upper_map_h_d_beta,
                    -0.5,
                    r_uu,
                );
            }
            if f <= 0.0 {
                // Quadratic through f(b_u), f(b_max)=0, f'(b_max)=−½.
                let h = b_max - b_u;
                let t = (beta - b_u) / h;
                f = (f_upper_map_h * (1.0 - t) + 0.5 * h * t) * (1.0 - t);
            }
            solve.s = inverse_f_upper_map(f);
            if beta > 0.5 * b_max {
                solve.aux = b_max - beta;
                solve.objective = Objective::Highest;
            }
        }
    }
    Ok(solve)
}

/// One Householder iteration on the solve's objective. Returns true when the step was below
/// CONVERGED_STEP·s, i.e. no further iteration is needed.
#[inline]
pub(crate) fn householder_step(solve: &mut Solve) -> bool {
    let theta_x = solve.theta_x;
    let s_iter = solve.s;
    let ds = match solve.objective {
        Objective::Exact => return true,
        Objective::Lowest => {
            let ln_beta = solve.aux;
            let inv_ln_beta = solve.aux2;
            let (bx, ln_vega) = scaled_normalised_black_and_ln_vega(theta_x, s_iter);
            let ln_b = bx.ln() + ln_vega;
            let bpob = 1.0 / bx;
            let inv_s = 1.0 / s_iter;
            let h = theta_x * inv_s;
            let x2_over_s3 = h * h * inv_s;
            let b_h2 = x2_over_s3 - s_iter * 0.25;
            let nu = (ln_beta - ln_b) * ln_b * inv_ln_beta * bx;
            let lambda = 1.0 / ln_b;
            let otl = 1.0 + 2.0 * lambda;
            let h2 = b_h2 - bpob * otl;
            let c = 3.0 * (x2_over_s3 * inv_s);
            let b_h3 = b_h2 * b_h2 - c - 0.25;
            let sq_bpob = bpob * bpob;
            let bppob = b_h2 * bpob;
            let mu = 6.0 * lambda * (1.0 + lambda);
            let h3 = b_h3 + sq_bpob * (2.0 + mu) - bppob * 3.0 * otl;
            if theta_x < -190.0 {
                let h4 = (b_h2 * (b_h3 - 0.5) - (b_h2 - 2.0 * inv_s) * 2.0 * c)
                    - bpob
                        * (sq_bpob * (6.0 + lambda * (22.0 + lambda * (36.0 + lambda * 24.0)))
                            - bppob * (12.0 + 6.0 * mu))
                    - bppob * b_h2 * 3.0 * otl
                    - b_h3 * bpob * 4.0 * otl;
                nu * householder4_factor(nu, h2, h3, h4)
            } else {
                nu * householder3_factor(nu, h2, h3)
            }
        }
        Objective::Highest => {
            let beta_bar = solve.aux;
            let h = theta_x / s_iter;
            let gp = vega_over_complementary_normalised_black(theta_x, s_iter);
            let b_bar = normalised_vega(theta_x, s_iter) / gp;
            let g = (beta_bar / b_bar).ln();
            let x2_over_s3 = (h * h) / s_iter;
            let b_h2 = x2_over_s3 - s_iter / 4.0;
            let c = 3.0 * (x2_over_s3 / s_iter);
            let b_h3 = b_h2 * b_h2 - c - 0.25;
            let nu = -g / gp;
            let h2 = b_h2 + gp;
            let h3 = b_h3 + gp * (2.0 * gp + 3.0 * b_h2);
            if theta_x < -580.0 {
                let h4 = (b_h2 * (b_h3 - 0.5) - (b_h2 - 2.0 / s_iter) * 2.0 * c)
                    + gp * (6.0 * gp * (gp + 2.0 * b_h2) + 3.0 * b_h2 * b_h2 + 4.0 * b_h3);
                nu * householder4_factor(nu, h2, h3, h4)
            } else {
                nu * householder3_factor(nu, h2, h3)
            }
        }
        Objective::Middle => {
            let beta = solve.beta;
            let (b, inv_bp) = normalised_black_and_inv_vega(theta_x, s_iter);
            let nu = (beta - b) * inv_bp;
            let inv_s = 1.0 / s_iter;
            let h = theta_x * inv_s;
            let x2_over_s3 = (h * h) * inv_s;
            let h2 = x2_over_s3 - s_iter * 0.25;
            let h3 = h2 * h2 - 3.0 * (x2_over_s3 * inv_s) - 0.25;
            nu * householder3_factor(nu, h2, h3)
        }
    };
    let s_new = s_iter + ds;
    solve.s = s_new;
    ds.abs() <= CONVERGED_STEP * s_new
}
