//! The VIX by the Cboe white-paper method: the model-free variance of each of two expirations
//! from its strip of out-of-the-money options, interpolated to 30 days.
//!
//! | quantity | unit |
//! | --- | --- |
//! | strikes, quotes, forward | index points (dollars for an equity) |
//! | `years` T | years to expiration, minutes-based as the paper: minutes to settlement / 525,600 (the caller decides the settlement time) |
//! | `rate` R | continuously compounded risk-free rate to expiration, decimal |
//! | per-term variance σ² | annualised, decimal (0.0192 ≈ 13.9 vol) |
//! | VIX | annualised percentage points |
//!
//! # One expiration ("Step 1" and "Step 2" of the white paper)
//!
//! 1. Mids `Q = (bid + ask)/2`. The **forward strike** is the strike, among those whose call and
//!    put both have a bid > 0, where |call mid − put mid| is smallest (the lowest such strike on a
//!    tie); `F = K + e^{RT} (C − P)` there.
//! 2. `K₀` is the largest listed strike ≤ F; both its call and its put must be quoted, and
//!    `Q(K₀)` is the average of the two mids.
//! 3. Puts below K₀, walking down: a put with a zero bid (or no quote) is skipped; after two
//!    consecutive skipped strikes no lower strike is considered. Calls above K₀ likewise, walking
//!    up.
//! 4. `ΔKᵢ = (Kᵢ₊₁ − Kᵢ₋₁)/2` over the **selected** strikes (a skipped strike is not a
//!    neighbour); at either end of the strip, the distance to the single neighbour.
//! 5. `σ² = (2/T) Σ ΔKᵢ/Kᵢ² · e^{RT} Q(Kᵢ) − (1/T)(F/K₀ − 1)²`.
//!
//! # 30 days ("Step 3")
//!
//! With `N₁ = T₁·525,600` and `N₂ = T₂·525,600` minutes, `N₃₀ = 43,200`, `N₃₆₅ = 525,600`:
//! `VIX = 100 · √{ [T₁σ₁² (N₂ − N₃₀)/(N₂ − N₁) + T₂σ₂² (N₃₀ − N₁)/(N₂ − N₁)] · N₃₆₅/N₃₀ }`.
//! The near expiration must be within 30 days and the next beyond it (T₁ ≤ 30/365 ≤ T₂, T₁ < T₂);
//! the paper's method interpolates and never extrapolates.
//!
//! Checked against the white paper's worked example (`compute/tests/vix_white_paper.rs`) and
//! an independent Python implementation on synthetic chains (`compute/tests/vol_reference.rs`).
//! Not reproduced: the 2025 rule that also skips an option with a zero **ask**, and the
//! paper's selection of which expirations to use (the caller passes the two; [`super::vix_chain`]
//! chooses them from an SPX chain).

use super::VolError;

/// Minutes in a 365-day year (N₃₆₅).
pub const MINUTES_PER_YEAR: f64 = 525_600.0;
/// Minutes in 30 days (N₃₀).
pub const MINUTES_30_DAYS: f64 = 43_200.0;

/// A two-sided quote.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BidAsk {
    /// Bid, ≥ 0 (0 = no bid).
    pub bid: f64,
    /// Ask, ≥ bid.
    pub ask: f64,
}

impl BidAsk {
    /// (bid + ask)/2.
    pub fn mid(&self) -> f64 {
        0.5 * (self.bid + self.ask)
    }
}

/// One strike of an expiration's chain.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VixStrike {
    /// Strike, > 0.
    pub strike: f64,
    /// The call's quote, if listed and quoted.
    pub call: Option<BidAsk>,
    /// The put's quote, if listed and quoted.
    pub put: Option<BidAsk>,
}

/// Which option a strip strike contributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StripSide {
    /// An out-of-the-money put (K < K₀).
    Put,
    /// The average of the call and the put at K₀.
    CallPutAverage,
    /// An out-of-the-money call (K > K₀).
    Call,
}

/// One strike of the strip and its share of the sum.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StripContribution {
    /// Strike.
    pub strike: f64,
    /// Which option.
    pub side: StripSide,
    /// Q(K), the mid used.
    pub mid: f64,
    /// ΔK.
    pub delta_k: f64,
    /// `ΔK/K² · e^{RT} · Q(K)`.
    pub contribution: f64,
}

/// One expiration's variance and the intermediates the paper prints.
#[derive(Debug, Clone, PartialEq)]
pub struct TermVariance {
    /// T, years.
    pub years: f64,
    /// R, decimal.
    pub rate: f64,
    /// The strike where |call mid − put mid| is smallest.
    pub forward_strike: f64,
    /// F.
    pub forward: f64,
    /// K₀.
    pub k0: f64,
    /// Σ contributions (before the 2/T factor).
    pub strip_sum: f64,
    /// `(1/T)(F/K₀ − 1)²`, the term subtracted.
    pub forward_adjustment: f64,
    /// σ², annualised decimal.
    pub variance: f64,
    /// Out-of-the-money puts in the strip.
    pub puts_used: usize,
    /// Out-of-the-money calls in the strip.
    pub calls_used: usize,
    /// The strip, lowest strike first (puts, K₀, calls).
    pub strip: Vec<StripContribution>,
}

impl TermVariance {
    /// Strikes in the strip (puts + calls + K₀).
    pub fn strikes_used(&self) -> usize {
        self.strip.len()
    }
}

/// The 30-day index and its weights.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VixIndex {
    /// The index, points (`100 · √variance_30d`).
    pub vix: f64,
    /// The 30-day variance, annualised decimal.
    pub variance_30d: f64,
    /// Weight of the near term, `(N₂ − N₃₀)/(N₂ − N₁)`.
    pub near_weight: f64,
    /// Weight of the next term, `(N₃₀ − N₁)/(N₂ − N₁)`.
    pub next_weight: f64,
}

fn not_computable(what: &'static str, reason: impl Into<String>) -> VolError {
    VolError::NotComputable {
        what,
        reason: reason.into(),
    }
}

fn bad(what: &'static str, index: usize, value: f64, rule: &'static str) -> VolError {
    VolError::BadValue {
        what,
        index,
        value,
        rule,
    }
}

fn check_chain(strikes: &[VixStrike], years: f64, rate: f64) -> Result<(), VolError> {
    if !(years.is_finite() && years > 0.0) {
        return Err(bad("years to expiration", 0, years, "a finite number > 0"));
    }
    if !rate.is_finite() {
        return Err(bad("rate", 0, rate, "a finite number"));
    }
    for (i, s) in strikes.iter().enumerate() {
        if !(s.strike.is_finite() && s.strike > 0.0) {
            return Err(bad("strike", i, s.strike, "a finite number > 0"));
        }
        if i > 0 && !(s.strike > strikes[i - 1].strike) {
            return Err(bad(
                "strike",
                i,
                s.strike,
                "above the previous strike (ascending, unique)",
            ));
        }
        for (what, quote) in [("call quote", s.call), ("put quote", s.put)] {
            if let Some(q) = quote
                && !(q.bid.is_finite() && q.ask.is_finite() && q.bid >= 0.0 && q.ask >= q.bid)
            {
                return Err(bad(what, i, q.bid, "bid ≥ 0 and ask ≥ bid, both finite"));
            }
        }
    }
    Ok(())
}

/// A quote with a bid > 0 (the white paper's "non-zero bid").
fn bid(quote: Option<BidAsk>) -> Option<BidAsk> {
    quote.filter(|q| q.bid > 0.0)
}

/// One expiration's σ² by the white-paper method (see the module documentation). `strikes`
/// must be in ascending order without duplicates.
///
/// Errors on a bad input; and, as [`VolError::NotComputable`], when no strike has both a call
/// and a put bid, no strike is ≤ F, K₀'s call or put is unquoted, the strip has K₀ alone, or σ²
/// is not positive.
pub fn vix_term_variance(
    strikes: &[VixStrike],
    years: f64,
    rate: f64,
) -> Result<TermVariance, VolError> {
    check_chain(strikes, years, rate)?;
    let growth = (rate * years).exp();
    let (forward_strike, call_mid, put_mid) = strikes
        .iter()
        .filter_map(|s| Some((s.strike, bid(s.call)?.mid(), bid(s.put)?.mid())))
        .min_by(|a, b| (a.1 - a.2).abs().total_cmp(&(b.1 - b.2).abs()))
        .ok_or_else(|| not_computable("VIX forward", "no strike has both a call and a put bid"))?;
    let forward = forward_strike + growth * (call_mid - put_mid);
    let i0 = strikes
        .iter()
        .rposition(|s| s.strike <= forward)
        .ok_or_else(|| not_computable("VIX K0", format!("no strike at or below F = {forward}")))?;
    let at_k0 = &strikes[i0];
    let (Some(k0_call), Some(k0_put)) = (at_k0.call, at_k0.put) else {
        return Err(not_computable(
            "VIX K0",
            format!("K0 = {} needs both a call and a put quote", at_k0.strike),
        ));
    };

    // (strike, side, mid), lowest strike first.
    let mut selected: Vec<(f64, StripSide, f64)> = Vec::new();
    let walk = |indices: &mut dyn Iterator<Item = usize>,
                leg: fn(&VixStrike) -> Option<BidAsk>,
                side: StripSide|
     -> Vec<(f64, StripSide, f64)> {
        let mut out = Vec::new();
        let mut zero_bids = 0;
        for i in indices {
            match bid(leg(&strikes[i])) {
                Some(q) => {
                    zero_bids = 0;
                    out.push((strikes[i].strike, side, q.mid()));
                }
                None => {
                    zero_bids += 1;
                    if zero_bids == 2 {
                        break;
                    }
                }
            }
        }
        out
    };
    let mut puts = walk(&mut (0..i0).rev(), |s| s.put, StripSide::Put);
    puts.reverse();
    let calls = walk(&mut (i0 + 1..strikes.len()), |s| s.call, StripSide::Call);
    let (puts_used, calls_used) = (puts.len(), calls.len());
    selected.extend(puts);
    selected.push((
        at_k0.strike,
        StripSide::CallPutAverage,
        0.5 * (k0_call.mid() + k0_put.mid()),
    ));
    selected.extend(calls);
    if selected.len() < 2 {
        return Err(not_computable(
            "VIX strip",
            "no out-of-the-money option with a bid on either side of K0",
        ));
    }

    let last = selected.len() - 1;
    let strip: Vec<StripContribution> = selected
        .iter()
        .enumerate()
        .map(|(j, &(strike, side, mid))| {
            let delta_k = match j {
                0 => selected[1].0 - strike,
                j if j == last => strike - selected[j - 1].0,
                j => 0.5 * (selected[j + 1].0 - selected[j - 1].0),
            };
            StripContribution {
                strike,
                side,
                mid,
                delta_k,
                contribution: delta_k / (strike * strike) * growth * mid,
            }
        })
        .collect();
    let strip_sum: f64 = strip.iter().map(|c| c.contribution).sum();
    let k0 = at_k0.strike;
    let forward_adjustment = (forward / k0 - 1.0).powi(2) / years;
    let variance = 2.0 / years * strip_sum - forward_adjustment;
    if !(variance > 0.0 && variance.is_finite()) {
        return Err(not_computable(
            "VIX variance",
            format!("sigma^2 = {variance} is not positive"),
        ));
    }
    Ok(TermVariance {
        years,
        rate,
        forward_strike,
        forward,
        k0,
        strip_sum,
        forward_adjustment,
        variance,
        puts_used,
        calls_used,
        strip,
    })
}

/// The 30-day index from the near and next terms (see the module documentation). Errors when
/// the terms do not bracket 30 days.
pub fn vix_index(near: &TermVariance, next: &TermVariance) -> Result<VixIndex, VolError> {
    let (n1, n2) = (near.years * MINUTES_PER_YEAR, next.years * MINUTES_PER_YEAR);
    if !(n1 <= MINUTES_30_DAYS && MINUTES_30_DAYS <= n2 && n1 < n2) {
        return Err(not_computable(
            "VIX 30-day interpolation",
            format!(
                "the terms ({:.4} and {:.4} years) do not bracket 30 days",
                near.years, next.years
            ),
        ));
    }
    let near_weight = (n2 - MINUTES_30_DAYS) / (n2 - n1);
    let next_weight = (MINUTES_30_DAYS - n1) / (n2 - n1);
    let variance_30d = (near.years * near.variance * near_weight
        + next.years * next.variance * next_weight)
        * (MINUTES_PER_YEAR / MINUTES_30_DAYS);
    Ok(VixIndex {
        vix: 100.0 * variance_30d.sqrt(),
        variance_30d,
        near_weight,
        next_weight,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn quote(bid: f64, ask: f64) -> Option<BidAsk> {
        Some(BidAsk { bid, ask })
    }

    fn row(strike: f64, call: (f64, f64), put: (f64, f64)) -> VixStrike {
        VixStrike {
            strike,
            call: quote(call.0, call.1),
            put: quote(put.0, put.1),
        }
    }

    /// Unevenly spaced strikes, a lone zero bid that does not stop the walk and a pair that
    /// does; the expected figures are worked out by hand in the comments.
    #[test]
    fn a_small_chain_by_hand() {
        let chain = vec![
            row(60.0, (40.0, 41.0), (0.05, 0.15)), // beyond the two zero bids: never read
            row(65.0, (35.0, 36.0), (0.0, 0.10)),  // zero bid } stop
            row(70.0, (30.0, 31.0), (0.0, 0.10)),  // zero bid }
            row(80.0, (20.5, 21.5), (0.20, 0.40)), // put 0.30
            row(90.0, (11.5, 12.5), (1.00, 1.20)), // put 1.10
            row(95.0, (7.6, 8.0), (2.4, 2.8)),     // put 2.60
            row(100.0, (4.9, 5.1), (4.9, 5.1)),    // forward strike and K0: C − P = 0
            row(105.0, (2.9, 3.1), (7.8, 8.2)),    // call 3.00
            row(110.0, (0.0, 0.2), (12.0, 12.5)),  // lone zero bid: skipped
            row(120.0, (0.4, 0.6), (20.0, 21.0)),  // call 0.50
        ];
        let (t, r) = (0.1, 0.05);
        let term = vix_term_variance(&chain, t, r).unwrap();
        assert_eq!(term.forward_strike, 100.0);
        assert_eq!(term.forward, 100.0);
        assert_eq!(term.k0, 100.0);
        assert_eq!(
            (term.puts_used, term.calls_used, term.strikes_used()),
            (3, 2, 6)
        );
        let dk: Vec<f64> = term.strip.iter().map(|c| c.delta_k).collect();
        // 90−80; (95−80)/2; (100−90)/2; (105−95)/2; (120−100)/2 (110 skipped); 120−105.
        assert_eq!(dk, vec![10.0, 7.5, 5.0, 5.0, 10.0, 15.0]);
        let g = (r * t).exp();
        let sum = g
            * (10.0 * 0.30 / 6400.0
                + 7.5 * 1.10 / 8100.0
                + 5.0 * 2.60 / 9025.0
                + 5.0 * 5.0 / 10000.0
                + 10.0 * 3.00 / 11025.0
                + 15.0 * 0.50 / 14400.0);
        assert!((term.strip_sum - sum).abs() < 1e-15);
        assert!((term.variance - 2.0 / t * sum).abs() < 1e-14);
    }

    #[test]
    fn forward_off_a_strike_and_the_adjustment() {
        // C − P = +1 at 100, so F = 100 + e^{RT}: K0 = 100, adjustment (F/100 − 1)²/T.
        let chain = vec![
            row(90.0, (11.0, 11.4), (0.8, 1.0)),
            row(100.0, (5.4, 5.6), (4.4, 4.6)),
            row(110.0, (1.9, 2.1), (10.8, 11.2)),
        ];
        let term = vix_term_variance(&chain, 0.25, 0.02).unwrap();
        let f = 100.0 + (0.02f64 * 0.25).exp();
        assert!((term.forward - f).abs() < 1e-12);
        assert_eq!(term.k0, 100.0);
        assert!((term.forward_adjustment - (f / 100.0 - 1.0).powi(2) / 0.25).abs() < 1e-15);
    }

    #[test]
    fn interpolation_weights_and_bracketing() {
        let term = |years: f64, variance: f64| TermVariance {
            years,
            rate: 0.0,
            forward_strike: 100.0,
            forward: 100.0,
            k0: 100.0,
            strip_sum: 0.0,
            forward_adjustment: 0.0,
            variance,
            puts_used: 1,
            calls_used: 1,
            strip: Vec::new(),
        };
        // Same variance on both sides: the index is that vol.
        let flat = vix_index(&term(20.0 / 365.0, 0.04), &term(40.0 / 365.0, 0.04)).unwrap();
        assert!((flat.vix - 20.0).abs() < 1e-12);
        assert!((flat.near_weight - 0.5).abs() < 1e-12);
        assert!(vix_index(&term(31.0 / 365.0, 0.04), &term(40.0 / 365.0, 0.04)).is_err());
        assert!(vix_index(&term(20.0 / 365.0, 0.04), &term(29.0 / 365.0, 0.04)).is_err());
    }

    #[test]
    fn refusals() {
        let chain = vec![
            row(90.0, (11.0, 11.4), (0.8, 1.0)),
            row(100.0, (5.4, 5.6), (4.4, 4.6)),
        ];
        let mut unsorted = chain.clone();
        unsorted.swap(0, 1);
        assert!(matches!(
            vix_term_variance(&unsorted, 0.1, 0.0),
            Err(VolError::BadValue { index: 1, .. })
        ));
        let mut crossed = chain.clone();
        crossed[0].put = quote(1.0, 0.9);
        assert!(vix_term_variance(&crossed, 0.1, 0.0).is_err());
        let calls_only: Vec<VixStrike> = chain
            .iter()
            .map(|s| VixStrike { put: None, ..*s })
            .collect();
        assert!(matches!(
            vix_term_variance(&calls_only, 0.1, 0.0),
            Err(VolError::NotComputable { .. })
        ));
        assert!(vix_term_variance(&chain, 0.0, 0.0).is_err());
    }
}
