//! The normalised Black function b(x, s) and the undiscounted Black price, accurate to the last
//! few ulps in every region (no subtractive cancellation for far out-of-the-money options).
//!
//! Notation (Jäckel, "Let's Be Rational", Wilmott 2015, eq. 2.3): x = ln(F/K), s = σ√T,
//! θ = +1 for calls and −1 for puts, and
//!
//! ```text
//! b(x, s, θ) = B(F, K, σ, T, θ) / √(F·K)
//!            = θ·[ exp(x/2)·Φ(θ·(x/s + s/2)) − exp(−x/2)·Φ(θ·(x/s − s/2)) ].
//! ```
//!
//! In-the-money options are reduced to out-of-the-money ones by put–call symmetry, so the
//! kernels below all take θ·x < 0. Four evaluation regions follow the 2024 revision of the
//! reference implementation: an asymptotic expansion for very small values (region I), a
//! small-s expansion (region II), and Cody's erfc/erfcx combined to minimise `exp` calls
//! (the rest).
//!
//! Copyright notice required by the reference code this module is ported from:
//! Copyright © 2013-2024 Peter Jäckel. Permission to use, copy, modify, and distribute this
//! software is freely granted, provided that this notice is preserved. The software is provided
//! "as is" without warranty of any kind.

// Coefficients are kept digit for digit as published, so they can be checked against the source.
#![allow(clippy::excessive_precision, clippy::unreadable_literal)]

use super::special::{
    LN_TWO_PI, ONE_OVER_SQRT_TWO, ONE_OVER_SQRT_TWO_PI, SQRT_PI_OVER_TWO, SQRT_TWO_PI, erf, erfc,
    erfcx, erfcx_above_threshold,
};

/// η of the region partition.
const ETA: f64 = -13.0;
/// τ = 2·ε^(1/16) with ε = 2⁻⁵² (f64::EPSILON).
pub(crate) const TAU: f64 = 0.21022410381342863;

#[inline(always)]
pub(crate) fn is_region_i(theta_x: f64, s: f64) -> bool {
    // h < η and t < (τ + ½) + (|h| − |η|), with h = θx/s and t = s/2, without dividing by s.
    theta_x < s * ETA && s * (0.5 * s - (TAU + 0.5 + ETA)) + theta_x < 0.0
}

#[inline(always)]
pub(crate) fn is_region_ii(theta_x: f64, s: f64) -> bool {
    // t < τ + (½/|η|)·|h|
    s * (s - 2.0 * TAU) - theta_x * (1.0 / ETA) < 0.0
}

/// Normalised intrinsic value: 2·sinh(θx/2) when θx > 0, else 0.
#[inline]
pub(crate) fn normalised_intrinsic(theta_x: f64) -> f64 {
    if theta_x <= 0.0 {
        0.0
    } else {
        2.0 * (0.5 * theta_x).sinh()
    }
}

/// ∂b/∂s = exp(−(h² + t²)/2)/√(2π) with h = x/s, t = s/2.
#[inline(always)]
pub(crate) fn normalised_vega(x: f64, s: f64) -> f64 {
    let h = x / s;
    let t = 0.5 * s;
    ONE_OVER_SQRT_TWO_PI * (-0.5 * (h * h + t * t)).exp()
}

#[inline(always)]
pub(crate) fn inv_normalised_vega(x: f64, s: f64) -> f64 {
    let h = x / s;
    let t = 0.5 * s;
    SQRT_TWO_PI * (0.5 * (h * h + t * t)).exp()
}

#[inline(always)]
pub(crate) fn ln_normalised_vega(x: f64, s: f64) -> f64 {
    let h = x / s;
    let t = 0.5 * s;
    -(LN_TWO_PI * 0.5) - 0.5 * (h * h + t * t)
}

/// Region I: asymptotic expansion (Abramowitz & Stegun 26.2.12) of the scaled normalised Black
/// function bx := b/(∂b/∂s) = Y(h+t) − Y(h−t), Y(z) := Φ(z)/φ(z), with the number of terms
/// chosen from a threshold table for DBL_EPSILON/2 accuracy.
#[allow(clippy::neg_multiply)]
#[rustfmt::skip] // generated coefficient expressions, kept as published
fn asymptotic_expansion_of_scaled_normalised_black(h: f64, t: f64) -> f64 {
    const THRESHOLDS: [f64; 12] = [
        12.347, 12.958, 13.729, 14.718, 16.016, 17.769, 20.221, 23.816, 29.419, 38.93, 57.171,
        99.347,
    ];
    let e = (t / h) * (t / h);
    let r = (h + t) * (h - t);
    let q = (h / r) * (h / r);
    let v = -h - t + TAU + 0.5;
    // upper_bound: index of the first threshold strictly greater than v.
    let k = THRESHOLDS.iter().take_while(|&&th| th <= v).count();
    let mut omega = 0.0;
    if k == 0 {
        omega = q * (1.26653197415257012E19+e*(2.09399953059891594E21+e*(9.10889795810528434E22+e*(1.63960163245895118E24+e*(1.48019591819210871E25+e*(7.42789224401858187E25+e*(2.19979885688242617E26+e*(3.98058840769200926E26+e*(4.47816195865351041E26+e*(3.1425697955463231E26+e*(1.36178024473674001E26+e*(3.55247020366106089E25+e*(5.32870530549159134E24+e*(4.25081904711579936E23+e*(1.57049964794918696E22+e*(2.0264511586441122E20+3.8379756792502125E17*e))))))))))))))) + omega);
    }
    if k <= 1 {
        omega = q * (-3.8379756792502125E17+e*(-5.56506473491280812E19+e*(-2.10359446979704147E21+e*(-3.25556286992399275E22+e*(-2.49593153360839444E23+e*(-1.04829124411552567E24+e*(-2.55352995361474201E24+e*(-3.72085793241005264E24+e*(-3.28310994036181115E24+e*(-1.74715207352587611E24+e*(-5.49104937393846778E23+e*(-9.76668860977197826E22+e*(-9.11557603578717971E21+e*(-3.89554531443896569E20+e*(-5.75696351887531875E18-1.238056670725875E16*e)))))))))))))) + omega);
    }
    if k <= 2 {
        omega = q * (1.238056670725875E16+e*(1.5599514051146025E18+e*(5.06984206662245812E19+e*(6.66322100184665925E20+e*(4.27556680951827302E21+e*(1.47701398874267613E22+e*(2.89721974714909549E22+e*(3.31110828245610914E22+e*(2.2155209831140142E22+e*(8.55113361903654604E21+e*(1.83238577550783129E21+e*(2.02793682664898325E20+e*(1.01396841332449162E19+e*(1.733279339016225E17+4.2691609335375E14*e))))))))))))) + omega);
    }
    if k <= 3 {
        omega = q * (-4.2691609335375E14+e*(-4.624924344665625E16+e*(-1.2764791191277125E18+e*(-1.40412703104048375E19+e*(-7.41067044160255312E19+e*(-2.06151377739125569E20+e*(-3.17155965752500875E20+e*(-2.74868503652167425E20+e*(-1.33392067948845956E20+e*(-3.51031757760120938E19+e*(-4.6804234368016125E18+e*(-2.774954606799375E17+e*(-5.54990921359875E15-1.581170716125E13*e)))))))))))) + omega);
    }
    if k <= 4 {
        omega = q * (1.581170716125E13+e*(1.454677058835E15+e*(3.36030400590885E16+e*(3.04027505296515E17+e*(1.29211689751018875E18+e*(2.81916414002223E18+e*(3.289024830025935E18+e*(2.067387036016302E18+e*(6.8406188691715875E17+e*(1.12010133530295E17+e*(8.0007238235925E15+e*(1.89740485935E14+6.3246828645E11*e))))))))))) + omega);
    }
    if k <= 5 {
        omega = q * (-6.3246828645E11+e*(-4.870005805665E13+e*(-9.2530110307635E14+e*(-6.74147946527055E15+e*(-2.24715982175685E16+e*(-3.71802806872497E16+e*(-3.14602375045959E16+e*(-1.34829589305411E16+e*(-2.77590330922905E15+e*(-2.4350029028325E14+e*(-6.95715115095E12-2.749862115E10*e)))))))))) + omega);
    }
    if k <= 6 {
        omega = q * (2.749862115E10+e*(1.7415793395E12+e*(2.664616389435E13+e*(1.52263793682E14+e*(3.848890340295E14+e*(4.618668408354E14+e*(2.664616389435E14+e*(7.10564370516E13+e*(7.83710702775E12+e*(2.749862115E11+1.30945815E9*e))))))))) + omega);
    }
    if k <= 7 {
        omega = q * (-1.30945815E9+e*(-6.678236565E10+e*(-8.013883878E11+e*(-3.4726830138E12+e*(-6.3665855253E12+e*(-5.2090245207E12+e*(-1.8699062382E12+e*(-2.671294626E11+e*(-1.178512335E10-6.891885E7*e)))))))) + omega);
    }
    if k <= 8 {
        omega = q * (6.891885E7+e*(2.756754E9+e*(2.50864614E10+e*(7.88431644E10+e*(9.85539555E10+e*(5.01729228E10+e*(9.648639E9+e*(5.513508E8+4.05405E6*e))))))) + omega);
    }
    if k <= 9 {
        omega = q * (-4.05405E6+e*(-1.2297285E8+e*(-8.1162081E8+e*(-1.73918745E9+e*(-1.35270135E9+e*(-3.6891855E8+e*(-2.837835E7-2.7027E5*e)))))) + omega);
    }
    if k <= 10 {
        omega = q * (2.7027E5+e*(5.94594E6+e*(2.675673E7+e*(3.567564E7+e*(1.486485E7+e*(1.62162E6+2.079E4*e))))) + omega);
    }
    if k <= 11 {
        omega = q * (-2.079E4+e*(-3.1185E5+e*(-8.7318E5+e*(-6.237E5+e*(-1.0395E5-1.89E3*e)))) + omega);
    }
    omega = 2.0
        + q * ((-6.0-2.0*e)
            + q * ((30.0+e*(60.0+6.0*e)) + q * ((-2.1E2+e*(-1.05E3+e*(-6.3E2-30.0*e))) + q * ((1.89E3+e*(1.764E4+e*(2.646E4+e*(7.56E3+2.1E2*e)))) + omega))));
    (t / r) * omega
}

/// Y'(h) = 1 + h·Y(h) without subtractive cancellation (Remez-optimised rational functions).
#[inline]
fn y_prime(h: f64) -> f64 {
    if h < -4.0 {
        return y_prime_below_minus_four(h);
    }
    if h <= -0.46875 {
        return y_prime_between_minus_four_and_codys_threshold(h);
    }
    1.0 + h * SQRT_PI_OVER_TWO * erfcx(-ONE_OVER_SQRT_TWO * h)
}

/// [`y_prime`] on h ≤ −0.46875 without a branch (both rational functions are evaluated), and
/// whether h is in that range; for h above it the value is meaningless.
#[inline(always)]
pub(crate) fn y_prime_lane(h: f64) -> (f64, bool) {
    let far = y_prime_below_minus_four(h);
    let near = y_prime_between_minus_four_and_codys_threshold(h);
    (if h < -4.0 { far } else { near }, h <= -0.46875)
}

#[inline(always)]
#[rustfmt::skip] // generated coefficient expressions, kept as published
fn y_prime_below_minus_four(h: f64) -> f64 {
    let w = 1.0 / (h * h);
    w * (1.0 + w * (-2.9999999999994663866 + w * (-1.7556263323542206288E2 + w * (-3.4735035445495633334E3 + w * (-2.7805745693864308643E4 + w * (-8.3836021460741980839E4 - 6.6818249032616849037E4 * w))))) / (1.0 + w * (6.3520877744831739102E1 + w * (1.4404389037604337538E3 + w * (1.4562545638507033944E4 + w * (6.6886794165651675684E4 + w * (1.2569970380923908488E5 + 6.9286518679803751694E4 * w)))))))
}

#[inline(always)]
#[rustfmt::skip] // generated coefficient expressions, kept as published
fn y_prime_between_minus_four_and_codys_threshold(h: f64) -> f64 {
    (1.0000000000594317229 - h * (6.1911449879694112749E-1 - h * (2.2180844736576013957E-1 - h * (4.5650900351352987865E-2 - h * (5.545521007735379052E-3 - h * (3.0717392274913902347E-4 - h * (4.2766597835908713583E-8 + 8.4592436406580605619E-10 * h))))))) / (1.0 - h * (1.8724286369589162071 - h * (1.5685497236077651429 - h * (7.6576489836589035112E-1 - h * (2.3677701403094640361E-1 - h * (4.6762548903194957675E-2 - h * (5.5290453576936595892E-3 - 3.0822020417927147113E-4 * h)))))))
}

/// Region II: expansion of the scaled normalised Black function to twelfth order in t.
#[inline]
fn small_t_expansion_of_scaled_normalised_black(h: f64, t: f64) -> f64 {
    small_t_expansion_from_y_prime(y_prime(h), h, t)
}

/// [`small_t_expansion_of_scaled_normalised_black`] given a = Y'(h).
/// The series in t² is summed by Estrin's scheme (three levels after the coefficients instead
/// of Horner's six: the coefficients wait for the rational function Y'(h), so this shortens
/// the critical path; the terms decrease, so the rounding error is the same as Horner's).
#[inline(always)]
pub(crate) fn small_t_expansion_from_y_prime(a: f64, h: f64, t: f64) -> f64 {
    let h2 = h * h;
    let t2 = t * t;
    let b0 = 2.0 * a;
    let b1 = (-1.0 + a * (3.0 + h2)) * (1.0 / 3.0);
    let b2 = (-7.0 - h2 + a * (15.0 + h2 * (10.0 + h2))) * (1.0 / 60.0);
    let b3 = (-57.0 + (-18.0 - h2) * h2 + a * (105.0 + h2 * (105.0 + h2 * (21.0 + h2))))
        * (1.0 / 2520.0);
    let b4 = (-561.0
        + h2 * (-285.0 + (-33.0 - h2) * h2)
        + a * (945.0 + h2 * (1260.0 + h2 * (378.0 + h2 * (36.0 + h2)))))
        * (1.0 / 181440.0);
    let b5 = (-6555.0
        + h2 * (-4680.0 + h2 * (-840.0 + (-52.0 - h2) * h2))
        + a * (10395.0 + h2 * (17325.0 + h2 * (6930.0 + h2 * (990.0 + h2 * (55.0 + h2))))))
        * (1.0 / 19958400.0);
    let b6 = (-89055.0
        + h2 * (-82845.0 + h2 * (-20370.0 + h2 * (-1926.0 + (-75.0 - h2) * h2)))
        + a * (135135.0
            + h2 * (270270.0
                + h2 * (135135.0 + h2 * (25740.0 + h2 * (2145.0 + h2 * (78.0 + h2)))))))
        * (1.0 / 3113510400.0);
    let t4 = t2 * t2;
    let t8 = t4 * t4;
    let b01 = b0 + t2 * b1;
    let b23 = b2 + t2 * b3;
    let b45 = b4 + t2 * b5;
    let b0123 = b01 + t4 * b23;
    let b456 = b45 + t4 * b6;
    t * (b0123 + t8 * b456)
}

/// Regions III/IV: Cody's erfc and erfcx combined so that as few `exp` calls as possible are
/// made (introduced in the reference code on 2017-02-18). `e` = exp(−(h² + t²)/2), shared
/// with the vega by the caller.
#[inline(always)]
fn codys_two_b(theta_x: f64, h: f64, t: f64, e: impl Fn() -> f64) -> f64 {
    const CODYS_THRESHOLD: f64 = 0.46875;
    let q1 = -ONE_OVER_SQRT_TWO * (h + t);
    let q2 = -ONE_OVER_SQRT_TWO * (h - t);
    if q1 < CODYS_THRESHOLD {
        if q2 < CODYS_THRESHOLD {
            (0.5 * theta_x).exp() * erfc(q1) - (-0.5 * theta_x).exp() * erfc(q2)
        } else {
            (0.5 * theta_x).exp() * erfc(q1) - e() * erfcx(q2)
        }
    } else if q2 < CODYS_THRESHOLD {
        e() * erfcx(q1) - (-0.5 * theta_x).exp() * erfc(q2)
    } else {
        e() * (erfcx(q1) - erfcx(q2))
    }
}

#[inline]
fn normalised_black_with_optimal_use_of_codys_functions(theta_x: f64, s: f64) -> f64 {
    let h = theta_x / s;
    let t = 0.5 * s;
    let two_b = codys_two_b(theta_x, h, t, || (-0.5 * (h * h + t * t)).exp());
    (0.5 * two_b).max(0.0)
}

/// (b(θx, s), 1/(∂b/∂s)) for θx < 0 and s > 0, with one exponential for both where the region
/// allows (the vega's exp(−(h² + t²)/2) is the factor the expansions and Cody's form need).
#[inline]
pub(crate) fn normalised_black_and_inv_vega(theta_x: f64, s: f64) -> (f64, f64) {
    debug_assert!(theta_x < 0.0 && s > 0.0);
    let h = theta_x / s;
    let t = 0.5 * s;
    let e = (-0.5 * (h * h + t * t)).exp();
    let inv_vega = if e >= f64::MIN_POSITIVE {
        SQRT_TWO_PI / e
    } else {
        SQRT_TWO_PI * (0.5 * (h * h + t * t)).exp()
    };
    let vega = ONE_OVER_SQRT_TWO_PI * e;
    let b = if is_region_i(theta_x, s) {
        asymptotic_expansion_of_scaled_normalised_black(h, t) * vega
    } else if is_region_ii(theta_x, s) {
        small_t_expansion_of_scaled_normalised_black(h, t) * vega
    } else {
        (0.5 * codys_two_b(theta_x, h, t, || e)).max(0.0)
    };
    (b, inv_vega)
}

/// What the Greek kernel needs from one out-of-the-money evaluation, sharing two exponentials.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OtmBlackTerms {
    /// b(θx, s), the out-of-the-money normalised price.
    pub(crate) b: f64,
    /// ∂b/∂s = exp(−(h² + t²)/2)/√(2π).
    pub(crate) vega: f64,
    /// Φ(h + t) with h = θx/s, t = s/2.
    pub(crate) cdf_plus: f64,
    /// Φ(h − t).
    pub(crate) cdf_minus: f64,
}

/// Φ(z) given g = exp(−z²/2), on Cody's branches: erfc(q) = erfcx(q)·exp(−q²) with q = −z/√2,
/// so only the rational part is evaluated here (no exp of its own).
#[inline(always)]
fn cdf_from_gaussian(z: f64, gaussian: f64) -> f64 {
    let q = -ONE_OVER_SQRT_TWO * z;
    if q.abs() <= 0.46875 {
        0.5 * erfc(q) // rational branch, no exponential
    } else if q > 0.0 {
        0.5 * erfcx_above_threshold(q) * gaussian
    } else {
        1.0 - 0.5 * erfcx_above_threshold(-q) * gaussian
    }
}

/// b, ∂b/∂s and Φ(h ± t) for θx < 0, s > 0 with two exponentials in all: E = exp(−(h²+t²)/2)
/// and e^{θx/2}. Because h·t = θx/2, exp(−(h ± t)²/2) = E·e^{∓θx/2}, so both normal
/// probabilities come from E without further `exp` calls. The price is Jäckel's: his expansions
/// in regions I and II, his two-term form with Cody's functions elsewhere.
#[inline]
pub(crate) fn otm_black_terms(theta_x: f64, s: f64) -> OtmBlackTerms {
    debug_assert!(theta_x < 0.0 && s > 0.0);
    let h = theta_x / s;
    let t = 0.5 * s;
    let half_exponent = 0.5 * (h * h + t * t);
    if half_exponent > 690.0 || theta_x < -1400.0 {
        // E would underflow while exp(−(h ± t)²/2) need not: evaluate term by term.
        return OtmBlackTerms {
            b: normalised_black_otm(theta_x, s),
            vega: normalised_vega(theta_x, s),
            cdf_plus: super::special::norm_cdf(h + t),
            cdf_minus: super::special::norm_cdf(h - t),
        };
    }
    let e = (-half_exponent).exp();
    let vega = ONE_OVER_SQRT_TWO_PI * e;
    let e_half_x = (0.5 * theta_x).exp(); // e^{θx/2} ≤ 1
    let inv_e_half_x = 1.0 / e_half_x;
    // exp(−(h+t)²/2) = E·e^{−θx/2} and exp(−(h−t)²/2) = E·e^{θx/2}.
    let cdf_plus = cdf_from_gaussian(h + t, e * inv_e_half_x);
    let cdf_minus = cdf_from_gaussian(h - t, e * e_half_x);
    let b = if is_region_i(theta_x, s) {
        asymptotic_expansion_of_scaled_normalised_black(h, t) * vega
    } else if is_region_ii(theta_x, s) {
        small_t_expansion_of_scaled_normalised_black(h, t) * vega
    } else {
        // b = e^{θx/2}·Φ(h+t) − e^{−θx/2}·Φ(h−t), the form Jäckel evaluates in these regions.
        (e_half_x * cdf_plus - inv_e_half_x * cdf_minus).max(0.0)
    };
    OtmBlackTerms {
        b,
        vega,
        cdf_plus,
        cdf_minus,
    }
}

/// b(θx, s) for θx < 0 and s > 0: the out-of-the-money normalised Black price.
#[inline]
pub(crate) fn normalised_black_otm(theta_x: f64, s: f64) -> f64 {
    debug_assert!(theta_x < 0.0 && s > 0.0);
    if is_region_i(theta_x, s) {
        return asymptotic_expansion_of_scaled_normalised_black(theta_x / s, 0.5 * s)
            * normalised_vega(theta_x, s);
    }
    if is_region_ii(theta_x, s) {
        return small_t_expansion_of_scaled_normalised_black(theta_x / s, 0.5 * s)
            * normalised_vega(theta_x, s);
    }
    normalised_black_with_optimal_use_of_codys_functions(theta_x, s)
}

/// (b/(∂b/∂s), ln(∂b/∂s)) for θx < 0 and s > 0; the pair stays finite where b underflows.
#[inline]
pub(crate) fn scaled_normalised_black_and_ln_vega(theta_x: f64, s: f64) -> (f64, f64) {
    debug_assert!(theta_x < 0.0 && s > 0.0);
    let ln_vega = ln_normalised_vega(theta_x, s);
    if is_region_i(theta_x, s) {
        return (
            asymptotic_expansion_of_scaled_normalised_black(theta_x / s, 0.5 * s),
            ln_vega,
        );
    }
    if is_region_ii(theta_x, s) {
        return (
            small_t_expansion_of_scaled_normalised_black(theta_x / s, 0.5 * s),
            ln_vega,
        );
    }
    (
        normalised_black_with_optimal_use_of_codys_functions(theta_x, s) * (-ln_vega).exp(),
        ln_vega,
    )
}

/// b̄(x, s) := b_max − b = exp(θx/2)·Φ(−x/s − s/2) + exp(−θx/2)·Φ(x/s − s/2), computed without
/// cancellation, as its ratio to ∂b/∂s: returns (∂b/∂s)/b̄.
#[inline]
pub(crate) fn vega_over_complementary_normalised_black(theta_x: f64, s: f64) -> f64 {
    let h = theta_x / s;
    let t = 0.5 * s;
    (2.0 * ONE_OVER_SQRT_TWO_PI)
        / (erfcx((t + h) * ONE_OVER_SQRT_TWO) + erfcx((t - h) * ONE_OVER_SQRT_TWO))
}

/// The full normalised Black function b(x, s, θ) for any x and s ≥ 0.
#[inline]
pub fn normalised_black(x: f64, s: f64, theta: f64) -> f64 {
    if x == 0.0 {
        // b(0, s) = erf(s/√8)
        return erf((0.5 * ONE_OVER_SQRT_TWO) * s);
    }
    let intrinsic = normalised_intrinsic(if theta < 0.0 { -x } else { x });
    if s <= 0.0 {
        return intrinsic;
    }
    // The same evaluation the prices and Greeks use.
    intrinsic + otm_black_terms(-x.abs(), s).b
}

/// Undiscounted Black price of a call (θ = +1) or put (θ = −1) on a forward F with total
/// volatility s = σ√T, given x = ln(F/K) computed by the caller (it may come from spot, rate
/// and dividend yield without the rounding of F).
#[inline]
pub(crate) fn undiscounted_black_from_log_moneyness(
    forward: f64,
    strike: f64,
    log_moneyness: f64,
    total_vol: f64,
    theta: f64,
) -> f64 {
    let intrinsic = if theta < 0.0 {
        (strike - forward).max(0.0)
    } else {
        (forward - strike).max(0.0)
    };
    if log_moneyness == 0.0 {
        return forward * erf((0.5 * ONE_OVER_SQRT_TWO) * total_vol);
    }
    if total_vol <= 0.0 {
        return intrinsic;
    }
    intrinsic
        + (forward.sqrt() * strike.sqrt()) * otm_black_terms(-log_moneyness.abs(), total_vol).b
}

/// Rational cubic interpolation after Delbourgo & Gregory, "Shape preserving piecewise rational
/// interpolation", SIAM J. Sci. Stat. Comput. 6 (1985), as used for the initial guess.
pub(crate) mod rational_cubic {
    const MINIMUM_CONTROL_PARAMETER: f64 = -(1.0 - 1.4901161193847656e-08);
    const MAXIMUM_CONTROL_PARAMETER: f64 = 2.0 / (f64::EPSILON * f64::EPSILON);

    #[inline(always)]
    fn is_zero(x: f64) -> bool {
        x.abs() < f64::MIN_POSITIVE
    }

    #[allow(clippy::too_many_arguments)]
    #[inline]
    pub(crate) fn interpolation(
        x: f64,
        x_l: f64,
        x_r: f64,
        y_l: f64,
        y_r: f64,
        d_l: f64,
        d_r: f64,
        r: f64,
    ) -> f64 {
        let h = x_r - x_l;
        if h.abs() <= 0.0 {
            return 0.5 * (y_l + y_r);
        }
        let t = (x - x_l) / h;
        if !(r >= MAXIMUM_CONTROL_PARAMETER) {
            let omt = 1.0 - t;
            let t2 = t * t;
            let omt2 = omt * omt;
            return (y_r * t2 * t
                + (r * y_r - h * d_r) * t2 * omt
                + (r * y_l + h * d_l) * t * omt2
                + y_l * omt2 * omt)
                / (1.0 + (r - 3.0) * t * omt);
        }
        y_r * t + y_l * (1.0 - t)
    }

    fn control_parameter_to_fit_second_derivative_at_left_side(
        x_l: f64,
        x_r: f64,
        y_l: f64,
        y_r: f64,
        d_l: f64,
        d_r: f64,
        second_derivative_l: f64,
    ) -> f64 {
        let h = x_r - x_l;
        let numerator = 0.5 * h * second_derivative_l + (d_r - d_l);
        let denominator = (y_r - y_l) / h - d_l;
        if is_zero(denominator) {
            return if numerator > 0.0 {
                MAXIMUM_CONTROL_PARAMETER
            } else {
                MINIMUM_CONTROL_PARAMETER
            };
        }
        numerator / denominator
    }

    fn control_parameter_to_fit_second_derivative_at_right_side(
        x_l: f64,
        x_r: f64,
        y_l: f64,
        y_r: f64,
        d_l: f64,
        d_r: f64,
        second_derivative_r: f64,
    ) -> f64 {
        let h = x_r - x_l;
        let numerator = 0.5 * h * second_derivative_r + (d_r - d_l);
        let denominator = d_r - (y_r - y_l) / h;
        if is_zero(denominator) {
            return if numerator > 0.0 {
                MAXIMUM_CONTROL_PARAMETER
            } else {
                MINIMUM_CONTROL_PARAMETER
            };
        }
        numerator / denominator
    }

    fn minimum_control_parameter(
        d_l: f64,
        d_r: f64,
        s: f64,
        prefer_shape_preservation: bool,
    ) -> f64 {
        let monotonic = d_l * s >= 0.0 && d_r * s >= 0.0;
        let convex = d_l <= s && s <= d_r;
        let concave = d_l >= s && s >= d_r;
        if !monotonic && !convex && !concave {
            return MINIMUM_CONTROL_PARAMETER;
        }
        let d_r_m_d_l = d_r - d_l;
        let d_r_m_s = d_r - s;
        let s_m_d_l = s - d_l;
        let mut r1 = -f64::MAX;
        let mut r2 = r1;
        if monotonic {
            if !is_zero(s) {
                r1 = (d_r + d_l) / s;
            } else if prefer_shape_preservation {
                r1 = MAXIMUM_CONTROL_PARAMETER;
            }
        }
        if convex || concave {
            if !(is_zero(s_m_d_l) || is_zero(d_r_m_s)) {
                r2 = (d_r_m_d_l / d_r_m_s).abs().max((d_r_m_d_l / s_m_d_l).abs());
            } else if prefer_shape_preservation {
                r2 = MAXIMUM_CONTROL_PARAMETER;
            }
        } else if monotonic && prefer_shape_preservation {
            r2 = MAXIMUM_CONTROL_PARAMETER;
        }
        MINIMUM_CONTROL_PARAMETER.max(r1.max(r2))
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn convex_control_parameter_to_fit_second_derivative_at_left_side(
        x_l: f64,
        x_r: f64,
        y_l: f64,
        y_r: f64,
        d_l: f64,
        d_r: f64,
        second_derivative_l: f64,
        prefer_shape_preservation: bool,
    ) -> f64 {
        let r = control_parameter_to_fit_second_derivative_at_left_side(
            x_l,
            x_r,
            y_l,
            y_r,
            d_l,
            d_r,
            second_derivative_l,
        );
        let r_min = minimum_control_parameter(
            d_l,
            d_r,
            (y_r - y_l) / (x_r - x_l),
            prefer_shape_preservation,
        );
        r.max(r_min)
    }

    #[allow(clippy::too_many_arguments)]
    pub(crate) fn convex_control_parameter_to_fit_second_derivative_at_right_side(
        x_l: f64,
        x_r: f64,
        y_l: f64,
        y_r: f64,
        d_l: f64,
        d_r: f64,
        second_derivative_r: f64,
        prefer_shape_preservation: bool,
    ) -> f64 {
        let r = control_parameter_to_fit_second_derivative_at_right_side(
            x_l,
            x_r,
            y_l,
            y_r,
            d_l,
            d_r,
            second_derivative_r,
        );
        let r_min = minimum_control_parameter(
            d_l,
            d_r,
            (y_r - y_l) / (x_r - x_l),
            prefer_shape_preservation,
        );
        r.max(r_min)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::pricing::special::norm_cdf;

    /// Textbook formula, accurate where no cancellation occurs (near the money).
    fn naive(x: f64, s: f64, theta: f64) -> f64 {
        let h = x / s;
        let t = 0.5 * s;
        theta
            * ((0.5 * x).exp() * norm_cdf(theta * (h + t))
                - (-0.5 * x).exp() * norm_cdf(theta * (h - t)))
    }

    #[test]
    fn agrees_with_textbook_formula_near_the_money() {
        for &x in &[-0.3_f64, -0.05, 0.0, 0.02, 0.2] {
            for &s in &[0.05, 0.2, 0.5, 1.0, 2.0] {
                for &theta in &[1.0, -1.0] {
                    if (x / s).abs() > 1.5 {
                        continue; // the textbook form cancels there; the vectors cover it
                    }
                    let got = normalised_black(x, s, theta);
                    let want = naive(x, s, theta);
                    assert!(((got - want) / want).abs() < 1e-13, "x={x} s={s} θ={theta}");
                }
            }
        }
    }

    #[test]
    fn region_boundaries_are_continuous() {
        // Across the region I/II/III borders the value must not jump.
        for &x in &[-0.5, -2.0, -5.0, -20.0] {
            let mut previous = normalised_black(x, 1e-3, 1.0);
            let mut s = 1e-3;
            while s < 10.0 {
                let next_s = s * 1.001;
                let next = normalised_black(x, next_s, 1.0);
                assert!(next >= previous, "b must increase in s: x={x} s={s}");
                s = next_s;
                previous = next;
            }
        }
    }
}
