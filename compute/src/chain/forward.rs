//! The forward of one expiration: implied from call and put quotes by put–call parity, or
//! carried from the spot when the quotes do not allow it.
//!
//! **Parity.** For European options C − P = e^{−rT}(F − K), so each strike where both the call
//! and the put are two-sided gives F_K = K + e^{rT}(C_mid − P_mid). Away from the money one of
//! the two mids is mostly intrinsic value with a wide spread, and American contracts carry an
//! early-exercise premium that grows in the money, so only the strikes nearest the money are
//! used:
//!
//! 1. the anchor is the strike where |C_mid − P_mid| is smallest (the money, as the Cboe VIX
//!    methodology picks it) and F₀ its F_K;
//! 2. the [`MAX_PARITY_STRIKES`] strikes nearest F₀ are the candidates;
//! 3. candidates further than [`OUTLIER_ROBUST_SIGMAS`] robust standard deviations (1.4826 ×
//!    the median absolute deviation, never less than [`OUTLIER_FLOOR_DOLLARS`] × e^{rT}) from
//!    their median are dropped — a stale or crossed pair cannot move the forward;
//! 4. the rest are averaged with weights 1 / (e^{rT} × (call spread + put spread)), the width of
//!    F_K's own uncertainty, with spreads below [`MIN_WEIGHT_SPREAD_DOLLARS`] counted as that
//!    (a sub-tick spread is no more informative than a one-tick spread).
//!
//! For American single-stock and ETF contracts parity is an approximation: the put's
//! early-exercise premium lowers F_K slightly. Near the money the premium is smallest, which is
//! why the candidates are the strikes nearest the money; the implied carry then absorbs the
//! remainder (it is the carry the quotes actually price).
//!
//! **Carry.** Without a single two-sided pair, or at T ≤ 0, the forward is
//! spot × e^{(r − q)T} with the dividend yield q the caller gives.

use optics_schemas::ForwardSource;

/// At most this many strikes nearest the money are combined.
pub const MAX_PARITY_STRIKES: usize = 6;
/// Candidates beyond this many robust standard deviations from the median F_K are outliers.
pub const OUTLIER_ROBUST_SIGMAS: f64 = 3.0;
/// The outlier threshold never goes below this many dollars (× e^{rT}): half a one-cent tick,
/// the rounding of a mid. Keeps exact or nearly exact pairs from being dropped for rounding.
pub const OUTLIER_FLOOR_DOLLARS: f64 = 0.005;
/// Spreads narrower than this (dollars, call + put) weigh as much as this: one tick.
pub const MIN_WEIGHT_SPREAD_DOLLARS: f64 = 0.01;
/// Median absolute deviation to standard deviation, for normally distributed values.
const MAD_TO_SIGMA: f64 = 1.4826;

/// One strike where both the call and the put are two-sided (bid > 0, ask ≥ bid); dollars per
/// share.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParityPair {
    /// Strike, dollars.
    pub strike: f64,
    /// Call bid.
    pub call_bid: f64,
    /// Call ask.
    pub call_ask: f64,
    /// Put bid.
    pub put_bid: f64,
    /// Put ask.
    pub put_ask: f64,
}

impl ParityPair {
    fn is_usable(&self) -> bool {
        let two_sided = |bid: f64, ask: f64| bid > 0.0 && ask >= bid && ask.is_finite();
        self.strike.is_finite()
            && self.strike > 0.0
            && two_sided(self.call_bid, self.call_ask)
            && two_sided(self.put_bid, self.put_ask)
    }

    /// C_mid − P_mid, dollars.
    fn mid_difference(&self) -> f64 {
        0.5 * (self.call_bid + self.call_ask) - 0.5 * (self.put_bid + self.put_ask)
    }

    /// Call spread + put spread, dollars.
    fn spread_sum(&self) -> f64 {
        (self.call_ask - self.call_bid) + (self.put_ask - self.put_bid)
    }
}

/// The market of one expiration, for [`estimate_forward`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ForwardMarket {
    /// Underlying price, dollars (cash level for indices); > 0.
    pub spot: f64,
    /// Continuous risk-free rate, decimal.
    pub rate: f64,
    /// Years to expiry (ACT/365 to the expiration day's close).
    pub years: f64,
    /// The caller's continuous dividend yield, decimal: used only by the carry fallback.
    pub dividend_yield: f64,
}

/// The forward of one expiration and how it was obtained.
#[derive(Debug, Clone, PartialEq)]
pub struct ForwardEstimate {
    /// Forward price, dollars.
    pub forward: f64,
    /// The continuous yield the forward implies, decimal: q = r − ln(F/S)/T; the caller's
    /// dividend yield for a carry forward and whenever T ≤ 0.
    pub carry_yield: f64,
    /// Parity or carry.
    pub source: ForwardSource,
    /// The strikes whose F_K were averaged, ascending (empty for carry).
    pub strikes_used: Vec<f64>,
}

/// spot × e^{(r − q)T} with the caller's dividend yield q (T ≤ 0 counts as 0: the forward is
/// the spot).
pub fn carry_forward(market: &ForwardMarket) -> ForwardEstimate {
    let years = market.years.max(0.0);
    ForwardEstimate {
        forward: market.spot * ((market.rate - market.dividend_yield) * years).exp(),
        carry_yield: market.dividend_yield,
        source: ForwardSource::Carry,
        strikes_used: Vec::new(),
    }
}

/// The parity forward from `pairs` (any order; unusable pairs are ignored), or the carry
/// forward when no pair is usable, T ≤ 0, or the parity forward is not a positive number.
/// `market.spot` must be a positive number (it only enters the carry yield and the fallback).
pub fn estimate_forward(pairs: &[ParityPair], market: &ForwardMarket) -> ForwardEstimate {
    let years = market.years;
    if !(years > 0.0 && years.is_finite()) {
        return carry_forward(market);
    }
    let growth = (market.rate * years).exp();
    struct Candidate {
        strike: f64,
        forward: f64,
        mid_difference: f64,
        weight: f64,
    }
    let mut candidates: Vec<Candidate> = pairs
        .iter()
        .filter(|p| p.is_usable())
        .map(|p| Candidate {
            strike: p.strike,
            forward: p.strike + growth * p.mid_difference(),
            mid_difference: p.mid_difference(),
            weight: 1.0 / (growth * p.spread_sum()).max(MIN_WEIGHT_SPREAD_DOLLARS),
        })
        .filter(|c| c.forward > 0.0 && c.forward.is_finite())
        .collect();
    // The anchor: the smallest |C − P| (ties to the lower strike, for a deterministic result).
    let Some(anchor) = candidates
        .iter()
        .min_by(|a, b| {
            a.mid_difference
                .abs()
                .total_cmp(&b.mid_difference.abs())
                .then(a.strike.total_cmp(&b.strike))
        })
        .map(|c| c.forward)
    else {
        return carry_forward(market);
    };
    candidates.sort_by(|a, b| {
        (a.strike - anchor)
            .abs()
            .total_cmp(&(b.strike - anchor).abs())
            .then(a.strike.total_cmp(&b.strike))
    });
    candidates.truncate(MAX_PARITY_STRIKES);

    let forwards: Vec<f64> = candidates.iter().map(|c| c.forward).collect();
    let center = median(&forwards);
    let deviations: Vec<f64> = forwards.iter().map(|f| (f - center).abs()).collect();
    let threshold = (OUTLIER_ROBUST_SIGMAS * MAD_TO_SIGMA * median(&deviations))
        .max(OUTLIER_FLOOR_DOLLARS * growth);
    // At least half the candidates lie within one MAD of the median, so some always remain.
    candidates.retain(|c| (c.forward - center).abs() <= threshold);

    let total_weight: f64 = candidates.iter().map(|c| c.weight).sum();
    let forward = candidates.iter().map(|c| c.weight * c.forward).sum::<f64>() / total_weight;
    let carry_yield = market.rate - (forward / market.spot).ln() / years;
    if !(forward > 0.0 && forward.is_finite() && carry_yield.is_finite()) {
        return carry_forward(market);
    }
    let mut strikes_used: Vec<f64> = candidates.iter().map(|c| c.strike).collect();
    strikes_used.sort_by(f64::total_cmp);
    ForwardEstimate {
        forward,
        carry_yield,
        source: ForwardSource::Parity,
        strikes_used,
    }
}

/// The median (the mean of the two middle values for an even count); 0 for no values.
fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let n = sorted.len();
    match n {
        0 => 0.0,
        _ if n.is_multiple_of(2) => 0.5 * (sorted[n / 2 - 1] + sorted[n / 2]),
        _ => sorted[n / 2],
    }
}
