//! Closed-form Greeks of the generalised Black–Scholes model with cost of carry b
//! (b = r − q for Black–Scholes–Merton on a spot, b = 0 for Black-76 on a forward).
//!
//! Formula reference for every Greek: E. G. Haug, *The Complete Guide to Option Pricing
//! Formulas*, 2nd ed. (McGraw-Hill, 2007), §2.2–2.3 (generalised BSM sensitivities). The
//! committed reference vectors (compute/tests/data/) check each one against high-precision
//! numerical differentiation of the price, independently of these formulas.

use super::special::norm_cdf;
use super::{InvalidInput, MarketTerms, OptionInputs, PricingModel, black};
use crate::time::DAYS_PER_YEAR;

/// Price and the full Greek set of one contract, per share.
///
/// "Per day" means per calendar day of time passing (1/365 year), with the sign of the value
/// change as the day passes; "per vol point" means per 0.01 of annualised volatility; "per
/// point" of rate or yield means per 0.01. S is the spot (BSM) or the forward (Black-76).
/// Notation: θ = ±1 for calls/puts, b the cost of carry, d1 = (ln(S/K) + (b + σ²/2)T)/(σ√T),
/// d2 = d1 − σ√T, n and N the standard normal density and distribution. References are to
/// Haug (2007) §2.2 and his names for the Greeks; the "per unit" forms are his, scaled here to
/// the service's units.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Greeks {
    /// Option value, dollars.
    pub price: f64,
    /// ∂V/∂S = θ·e^{(b−r)T}·N(θ·d1) (Haug §2.2).
    pub delta: f64,
    /// ∂²V/∂S², per $1: e^{(b−r)T}·n(d1)/(S·σ√T) (Haug §2.2).
    pub gamma: f64,
    /// −∂V/∂T / 365, dollars per calendar day:
    /// [−S·e^{(b−r)T}·n(d1)·σ/(2√T) − θ(b−r)·S·e^{(b−r)T}·N(θd1) − θ·r·K·e^{−rT}·N(θd2)]/365
    /// (Haug §2.2).
    pub theta: f64,
    /// ∂V/∂σ / 100, dollars per vol point: S·e^{(b−r)T}·n(d1)·√T/100 (Haug §2.2).
    pub vega: f64,
    /// ∂V/∂r / 100, dollars per point of rate: θ·K·T·e^{−rT}·N(θd2)/100 for BSM (S and q
    /// fixed), −T·V/100 for Black-76 (F fixed) (Haug §2.2).
    pub rho: f64,
    /// ∂V/∂q / 100, dollars per point of dividend yield: −θ·S·T·e^{−qT}·N(θd1)/100 (BSM;
    /// zero for Black-76, whose forward already carries the yield) (Haug §2.2).
    pub epsilon: f64,
    /// ∂²V/∂S∂σ / 100, delta per vol point: −e^{(b−r)T}·n(d1)·d2/σ/100 (Haug §2.2, DdeltaDvol).
    pub vanna: f64,
    /// −∂²V/∂S∂T / 365, delta per calendar day:
    /// −e^{(b−r)T}·[n(d1)·(b/(σ√T) − d2/(2T)) + θ(b−r)·N(θd1)]/365 (Haug §2.2, DdeltaDtime).
    pub charm: f64,
    /// ∂²V/∂σ² / 100², vega per vol point: vega·d1·d2/σ (per unit²) /10⁴ (Haug §2.2, DvegaDvol).
    pub vomma: f64,
    /// −∂²V/∂σ∂T / (100·365), vega per calendar day:
    /// vega·[r − b + b·d1/(σ√T) − (1 + d1·d2)/(2T)] (per unit) /(100·365) (Haug §2.2, DvegaDtime).
    pub veta: f64,
    /// ∂³V/∂S³, gamma per $1: −Γ/S·(1 + d1/(σ√T)) (Haug §2.2, DgammaDspot).
    pub speed: f64,
    /// ∂³V/∂S²∂σ / 100, gamma per vol point: Γ·(d1·d2 − 1)/σ/100 (Haug §2.2, DgammaDvol).
    pub zomma: f64,
    /// −∂³V/∂S²∂T / 365, gamma per calendar day:
    /// Γ·[r − b + b·d1/(σ√T) + (1 − d1·d2)/(2T)]/365 (Haug §2.2, DgammaDtime).
    pub color: f64,
    /// ∂³V/∂σ³ / 100³, vomma per vol point: −vega/σ²·[d1·d2·(1 − d1·d2) + d1² + d2²] (per
    /// unit³) /10⁶ (Haug §2.2, DvommaDvol, rearranged to avoid dividing by d1 or d2).
    pub ultima: f64,
    /// ∂V/∂K, dollars per $1 of strike: −θ·e^{−rT}·N(θd2) (Haug §2.2).
    pub dual_delta: f64,
}

const PER_VOL_POINT: f64 = 0.01;
const PER_RATE_POINT: f64 = 0.01;

/// Price and every Greek at volatility `vol` (decimal).
pub fn greeks(inputs: &OptionInputs, vol: f64) -> Result<Greeks, InvalidInput> {
    inputs.validate()?;
    if !(vol.is_finite() && vol > 0.0) {
        return Err(InvalidInput {
            field: "vol",
            reason: "must be a finite number > 0",
        });
    }
    Ok(greeks_unchecked(inputs, vol))
}

/// [`greeks`] without validation, for batch kernels that validated up front.
#[inline]
pub fn greeks_unchecked(inputs: &OptionInputs, vol: f64) -> Greeks {
    greeks_with(inputs, &inputs.market_terms(), vol)
}

/// [`greeks_unchecked`] with the contract's market terms already computed (a batch computes
/// them once for the solve and the Greeks, and the exponentials once per expiration).
#[inline]
pub(crate) fn greeks_with(inputs: &OptionInputs, terms: &MarketTerms, vol: f64) -> Greeks {
    let theta_sign = inputs.option_type.sign();
    let t = inputs.years;
    let r = inputs.rate;
    let s_price = inputs.underlying;
    let k = inputs.strike;
    let sqrt_t = t.sqrt();
    let total_vol = vol * sqrt_t;
    let MarketTerms {
        discount,
        forward,
        log_moneyness: x,
    } = *terms;
    // The cost of carry: r − q for BSM on a spot, 0 for Black-76 on a forward.
    let carry = match inputs.model {
        PricingModel::BlackScholesMerton => r - inputs.dividend_yield,
        PricingModel::Black76 => 0.0,
    };
    // e^{(b−r)T}: e^{−qT} for BSM, e^{−rT} for Black-76; equals F·D/S.
    let carry_discount = forward * discount / s_price;
    let inv_total_vol = 1.0 / total_vol;
    let inv_vol = 1.0 / vol;
    let half_inv_t = 0.5 / t;
    // Divided, not multiplied by the reciprocal: Φ(d1) amplifies d1's rounding by d1².
    let d1 = x / total_vol + 0.5 * total_vol;
    let d2 = d1 - total_vol;
    let sqrt_fk = forward.sqrt() * k.sqrt();
    // One out-of-the-money evaluation gives b, the vega and Φ(h ± t) (h = −|x|/s, t = s/2);
    // N(θ·d1) and N(θ·d2) are those probabilities or their complements (put–call symmetry).
    let (undiscounted, normalised_vega, cdf_d1, cdf_d2) = if x != 0.0 && total_vol > 0.0 {
        let terms = black::otm_black_terms(-x.abs(), total_vol);
        let intrinsic = if theta_sign < 0.0 {
            (k - forward).max(0.0)
        } else {
            (forward - k).max(0.0)
        };
        let out_of_the_money = theta_sign * x < 0.0;
        let (cdf_d1, cdf_d2) = match (theta_sign > 0.0, out_of_the_money) {
            (true, true) => (terms.cdf_plus, terms.cdf_minus),
            (true, false) => (1.0 - terms.cdf_minus, 1.0 - terms.cdf_plus),
            (false, true) => (terms.cdf_minus, terms.cdf_plus),
            (false, false) => (1.0 - terms.cdf_plus, 1.0 - terms.cdf_minus),
        };
        (intrinsic + sqrt_fk * terms.b, terms.vega, cdf_d1, cdf_d2)
    } else {
        (
            black::undiscounted_black_from_log_moneyness(forward, k, x, total_vol, theta_sign),
            black::normalised_vega(x, total_vol),
            norm_cdf(theta_sign * d1),
            norm_cdf(theta_sign * d2),
        )
    };
    // S·e^{(b−r)T}·φ(d1) = D·√(FK)·exp(−(h²+t²)/2)/√(2π): no overflow of φ's argument.
    let spot_pdf = discount * sqrt_fk * normalised_vega;

    let price = discount * undiscounted;

    let inv_s_price = 1.0 / s_price;
    let delta = theta_sign * carry_discount * cdf_d1;
    let gamma = spot_pdf * (inv_s_price * inv_s_price * inv_total_vol);
    let vega_per_unit = spot_pdf * sqrt_t;
    let theta_per_year = -spot_pdf * vol * (0.5 / sqrt_t)
        - theta_sign * (carry - r) * s_price * carry_discount * cdf_d1
        - theta_sign * r * k * discount * cdf_d2;
    let (rho_per_unit, epsilon_per_unit) = match inputs.model {
        PricingModel::BlackScholesMerton => (
            theta_sign * k * t * discount * cdf_d2,
            -theta_sign * s_price * t * carry_discount * cdf_d1,
        ),
        PricingModel::Black76 => (-t * price, 0.0),
    };
    // e^{(b−r)T}·φ(d1), the density part shared by the delta-type Greeks.
    let delta_pdf = spot_pdf * inv_s_price;
    let vanna_per_unit = -delta_pdf * d2 * inv_vol;
    let d1_time_slope = carry * inv_total_vol - d2 * half_inv_t;
    let charm_per_year =
        -delta_pdf * d1_time_slope - theta_sign * (carry - r) * carry_discount * cdf_d1;
    let d1d2 = d1 * d2;
    let vomma_per_unit = vega_per_unit * d1d2 * inv_vol;
    let carry_term = carry * d1 * inv_total_vol;
    let veta_per_year = vega_per_unit * ((r - carry) + carry_term - (1.0 + d1d2) * half_inv_t);
    let speed = -gamma * inv_s_price * (1.0 + d1 * inv_total_vol);
    let zomma_per_unit = gamma * (d1d2 - 1.0) * inv_vol;
    let color_per_year = gamma * ((r - carry) + carry_term + (1.0 - d1d2) * half_inv_t);
    let ultima_per_unit =
        -vega_per_unit * (inv_vol * inv_vol) * (d1d2 * (1.0 - d1d2) + d1 * d1 + d2 * d2);
    let dual_delta = -theta_sign * discount * cdf_d2;

    Greeks {
        price,
        delta,
        gamma,
        theta: theta_per_year / DAYS_PER_YEAR,
        vega: vega_per_unit * PER_VOL_POINT,
        rho: rho_per_unit * PER_RATE_POINT,
        epsilon: epsilon_per_unit * PER_RATE_POINT,
        vanna: vanna_per_unit * PER_VOL_POINT,
        charm: charm_per_year / DAYS_PER_YEAR,
        vomma: vomma_per_unit * PER_VOL_POINT * PER_VOL_POINT,
        veta: veta_per_year * PER_VOL_POINT / DAYS_PER_YEAR,
        speed,
        zomma: zomma_per_unit * PER_VOL_POINT,
        color: color_per_year / DAYS_PER_YEAR,
        ultima: ultima_per_unit * PER_VOL_POINT * PER_VOL_POINT * PER_VOL_POINT,
        dual_delta,
    }
}
