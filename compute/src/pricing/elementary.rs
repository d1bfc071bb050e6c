//! `exp` and `ln` as straight-line arithmetic: no branches, no table, no call, so that a loop
//! over several contracts that uses them can be vectorised by the compiler (a call into the C
//! library cannot). Both are accurate to within one unit in the last place on the domains
//! stated, like the C library's (see the tests), and give the same bits in a vector lane as in a
//! scalar call: they use only IEEE additions, multiplications and divisions and integer bit
//! operations, never a fused multiply-add.
//!
//! The algorithms and coefficients are those of fdlibm's `e_exp.c` and `e_log.c` (the
//! reduction of `ln`'s argument to [√2/2, √2) is musl's branch-free form).
//!
//! Copyright notice required by the source of the algorithms and coefficients:
//! Copyright (C) 1993 by Sun Microsystems, Inc. All rights reserved. Developed at SunPro, a
//! Sun Microsystems, Inc. business. Permission to use, copy, modify, and distribute this
//! software is freely granted, provided that this notice is preserved.

// Coefficients are kept digit for digit as published, so they can be checked against the source.
#![allow(clippy::excessive_precision, clippy::unreadable_literal)]

const LN2_HI: f64 = 6.93147180369123816490e-01;
const LN2_LO: f64 = 1.90821492927058770002e-10;
const INV_LN2: f64 = std::f64::consts::LOG2_E;

/// exp(r) on |r| ≤ ln2/2: a Remez polynomial for r·(e^r + 1)/(e^r − 1).
const P1: f64 = 1.66666666666666019037e-01;
const P2: f64 = -2.77777777770155933842e-03;
const P3: f64 = 6.61375632143793436117e-05;
const P4: f64 = -1.65339022054652515390e-06;
const P5: f64 = 4.13813679705723846039e-08;

/// ln(1 + f) = 2s + s·R(s²), s = f/(2 + f): a Remez polynomial for R.
const LG1: f64 = 6.666666666666735130e-01;
const LG2: f64 = 3.999999999940941908e-01;
const LG3: f64 = 2.857142874366239149e-01;
const LG4: f64 = 2.222219843214978396e-01;
const LG5: f64 = 1.818357216161805012e-01;
const LG6: f64 = 1.531383769920937332e-01;
const LG7: f64 = 1.479819860511658591e-01;

/// 1.5·2⁵²: adding it rounds a double of magnitude below 2⁵¹ to an integer (to nearest, ties
/// to even) and leaves that integer in the low bits of the sum.
const ROUNDING_SHIFT: f64 = 6_755_399_441_055_744.0;

/// The domain on which [`exp_straight`] is valid (2^k stays a normal number).
pub(crate) const EXP_DOMAIN: (f64, f64) = (-708.0, 709.0);
/// The smallest argument for which [`ln_straight`] is valid (normal numbers).
pub(crate) const LN_DOMAIN_MIN: f64 = f64::MIN_POSITIVE;

/// e^x for x in [`EXP_DOMAIN`] (outside it the result is meaningless; callers check).
#[inline(always)]
pub(crate) fn exp_straight(x: f64) -> f64 {
    // x = k·ln2 + r with |r| ≤ ln2/2, r = hi − lo in two parts (Cody and Waite).
    let shifted = x * INV_LN2 + ROUNDING_SHIFT;
    let k = shifted - ROUNDING_SHIFT;
    let k_bits = shifted.to_bits() as i32;
    let hi = x - k * LN2_HI;
    let lo = k * LN2_LO;
    let r = hi - lo;
    let r2 = r * r;
    let c = r - r2 * (P1 + r2 * (P2 + r2 * (P3 + r2 * (P4 + r2 * P5))));
    let y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi);
    // 2^k as a double: the biased exponent in bits 52–62.
    let scale = f64::from_bits(((k_bits + 1023) as u64) << 52);
    y * scale
}

/// ln x for normal positive finite x (x ≥ [`LN_DOMAIN_MIN`]; otherwise meaningless).
#[inline(always)]
pub(crate) fn ln_straight(x: f64) -> f64 {
    // x = 2^k·(1 + f) with 1 + f in [√2/2, √2): shift the high word so that the exponent field
    // counts from √2/2, take k from it, and put the mantissa back with the exponent of √2/2.
    let bits = x.to_bits();
    let high = (bits >> 32) as u32;
    let shifted_high = high.wrapping_add(0x3ff0_0000 - 0x3fe6_a09e);
    let k = (shifted_high >> 20) as i32 - 0x3ff;
    let reduced_high = (shifted_high & 0x000f_ffff) + 0x3fe6_a09e;
    let m = f64::from_bits(((reduced_high as u64) << 32) | (bits & 0xffff_ffff));
    let f = m - 1.0;
    let half_f2 = 0.5 * f * f;
    let s = f / (2.0 + f);
    let z = s * s;
    let w = z * z;
    let t1 = w * (LG2 + w * (LG4 + w * LG6));
    let t2 = z * (LG1 + w * (LG3 + w * (LG5 + w * LG7)));
    let r = t2 + t1;
    let dk = k as f64;
    dk * LN2_HI - ((half_f2 - (s * (half_f2 + r) + dk * LN2_LO)) - f)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Distance in units in the last place between two positive or two negative doubles.
    fn ulps(a: f64, b: f64) -> u64 {
        if a == b {
            return 0;
        }
        (a.to_bits() as i64 - b.to_bits() as i64).unsigned_abs()
    }

    fn uniform_points(n: usize, low: f64, high: f64) -> impl Iterator<Item = f64> {
        let mut state = 0x2545_f491_4f6c_dd1d_u64;
        (0..n).map(move |_| {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            low + (high - low) * ((state >> 11) as f64 / (1u64 << 53) as f64)
        })
    }

    #[test]
    fn exp_is_within_one_ulp_of_the_c_library_over_its_domain() {
        let mut worst = 0;
        for x in uniform_points(400_000, EXP_DOMAIN.0, EXP_DOMAIN.1)
            .chain(uniform_points(200_000, -1.0, 1.0))
            .chain([0.0, -0.0, 1e-300, -1e-300, 0.5, -0.5, 700.0, -700.0])
        {
            worst = worst.max(ulps(exp_straight(x), x.exp()));
        }
        // The C library is itself within ½ ulp (nearly always correctly rounded); one ulp
        // between the two bounds ours within 1.5 ulp of the exact value.
        assert!(worst <= 1, "worst distance {worst} ulp");
        assert_eq!(exp_straight(0.0), 1.0);
    }

    #[test]
    fn ln_is_within_one_ulp_of_the_c_library_on_normal_numbers() {
        let mut worst = 0;
        let points = uniform_points(200_000, -707.0, 709.0)
            .map(f64::exp)
            .chain(uniform_points(200_000, 0.5, 2.0))
            .chain(uniform_points(100_000, 1.0 - 1e-6, 1.0 + 1e-6))
            .chain([
                f64::MIN_POSITIVE,
                f64::MAX,
                1.0,
                2.0,
                0.5,
                std::f64::consts::E,
            ]);
        for x in points {
            let (ours, libm) = (ln_straight(x), x.ln());
            // Near x = 1 ln x → 0: compare absolutely there (both are accurate to ~ε·|f|).
            if (x - 1.0).abs() < 1e-3 {
                assert!(
                    (ours - libm).abs() <= 2.0 * f64::EPSILON * libm.abs().max(f64::MIN_POSITIVE),
                    "ln({x}) = {ours} vs {libm}"
                );
            } else {
                worst = worst.max(ulps(ours, libm));
            }
        }
        assert!(worst <= 1, "worst distance {worst} ulp");
        assert_eq!(ln_straight(1.0), 0.0);
    }
}
