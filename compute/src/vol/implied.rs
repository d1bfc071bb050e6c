//! Implied-volatility summaries of one chain snapshot (`iv_basis`): the at-the-money IV and the
//! 25-delta skew of each expiration, and constant-maturity IV across expirations. Inputs are
//! the chain's decimal IVs; every output is in annualised percentage points.
//!
//! **ATM IV of an expiration** — the IV at the expiration's forward F. Each strike contributes
//! its out-of-the-money side's IV (the call above F, the put below F, falling back to the other
//! side when that one has no IV; a strike exactly at F averages both sides), since the OTM side
//! is the liquid one and parity makes the two agree up to the quote. Between the two strikes
//! K₁ ≤ F ≤ K₂ with an IV, total variance is interpolated linearly in log-moneyness:
//! `σ² = (1 − x)·σ₁² + x·σ₂²`, `x = ln(F/K₁) / ln(K₂/K₁)` (T is common to both strikes, so this
//! is linear in σ²T). A forward outside the strikes with an IV has no ATM IV — a wing IV is not
//! an at-the-money figure.
//!
//! **25-delta skew** — the put IV at |Δ| = 0.25 minus the call IV at Δ = 0.25, each found by
//! linear interpolation of IV in delta between the nearest listed deltas on either side of
//! 0.25 (the chain's per-share deltas). No listed delta on one side of 0.25 → no figure.
//!
//! **Constant maturity** — ATM IVs of the expirations are interpolated to a target of D calendar
//! days (T = D / 365, the chain's ACT/365 convention) linearly in total variance σ²T between the
//! two expirations bracketing it; before the first or after the last expiration the nearest
//! expiration's vol is used unchanged (flat extrapolation of vol). Same-day expirations
//! (dte 0, still trading before the close) are left out of the constant-maturity figures: in
//! their last hours the IV of a few hours' variance is mostly quote noise.

use std::collections::BTreeMap;

use chrono::NaiveDate;
use optics_schemas::{ChainRow, SettlementStyle};

use super::VolError;

/// The constant-maturity tenors, calendar days: 10, 20, 30, 60, 90 days, 6 months, 1 year.
pub const CONSTANT_MATURITY_DAYS: [u32; 7] = [10, 20, 30, 60, 90, 180, 365];

/// Calendar days per year of the chain's year fractions.
const DAYS_PER_YEAR: f64 = 365.0;

/// The delta the skew is read at.
const SKEW_DELTA: f64 = 0.25;

/// ATM IV and 25-delta skew of one expiration (one settlement style) of a chain.
#[derive(Debug, Clone, PartialEq)]
pub struct ExpirationVol {
    /// Expiration date.
    pub expiration: NaiveDate,
    /// Settlement of the series (an index may list AM and PM series on one date).
    pub settlement: SettlementStyle,
    /// Calendar days from the trade date.
    pub dte: i32,
    /// Years to expiry of the chain rows (ACT/365 to the expiration day's close).
    pub years_to_expiry: f64,
    /// The expiration's forward, dollars.
    pub forward: f64,
    /// IV at the forward, annualised percentage points.
    pub atm_iv_pct: Option<f64>,
    /// Call IV at Δ = 0.25, percentage points.
    pub call25_iv_pct: Option<f64>,
    /// Put IV at Δ = −0.25, percentage points.
    pub put25_iv_pct: Option<f64>,
    /// `put25_iv_pct − call25_iv_pct`, percentage points (positive: puts richer).
    pub skew25_pct: Option<f64>,
}

/// A usable IV: finite and > 0.
fn usable(iv: Option<f64>) -> Option<f64> {
    iv.filter(|v| v.is_finite() && *v > 0.0)
}

/// The IV a strike contributes to the ATM interpolation (decimal), see the module docs.
fn strike_iv(row: &ChainRow) -> Option<f64> {
    let (call, put) = (usable(row.call.iv), usable(row.put.iv));
    if row.strike > row.forward {
        call.or(put)
    } else if row.strike < row.forward {
        put.or(call)
    } else {
        match (call, put) {
            (Some(c), Some(p)) => Some(0.5 * (c + p)),
            (c, p) => c.or(p),
        }
    }
}

/// IV (decimal) at the forward of one expiration's rows; see the module docs.
fn atm_iv(rows: &[&ChainRow], forward: f64) -> Option<f64> {
    let mut below: Option<(f64, f64)> = None; // (strike, iv), largest strike ≤ F
    let mut above: Option<(f64, f64)> = None; // smallest strike ≥ F
    for row in rows {
        let Some(iv) = strike_iv(row) else { continue };
        let k = row.strike;
        if k <= forward && below.is_none_or(|(b, _)| k > b) {
            below = Some((k, iv));
        }
        if k >= forward && above.is_none_or(|(a, _)| k < a) {
            above = Some((k, iv));
        }
    }
    let ((k1, s1), (k2, s2)) = (below?, above?);
    if k2 <= k1 {
        return Some(s1); // the forward sits on a strike
    }
    let x = (forward / k1).ln() / (k2 / k1).ln();
    Some(((1.0 - x) * s1 * s1 + x * s2 * s2).sqrt())
}

/// Linear interpolation of IV in delta at `target` between the nearest points on either side;
/// points are (|delta|, iv decimal).
fn iv_at_delta(points: &[(f64, f64)], target: f64) -> Option<f64> {
    let mut below: Option<(f64, f64)> = None;
    let mut above: Option<(f64, f64)> = None;
    for &(d, iv) in points {
        if d <= target && below.is_none_or(|(b, _)| d > b) {
            below = Some((d, iv));
        }
        if d >= target && above.is_none_or(|(a, _)| d < a) {
            above = Some((d, iv));
        }
    }
    let ((d1, s1), (d2, s2)) = (below?, above?);
    if d2 <= d1 {
        return Some(s1);
    }
    Some(s1 + (s2 - s1) * (target - d1) / (d2 - d1))
}

/// The side's (|delta|, iv) points with both present, finite, iv > 0 and 0 < |delta| < 1.
fn delta_points<'r>(
    rows: &[&'r ChainRow],
    side: impl Fn(&'r ChainRow) -> &'r optics_schemas::ChainSide,
) -> Vec<(f64, f64)> {
    rows.iter()
        .filter_map(|row| {
            let side = side(row);
            let delta = side.greeks.delta?.abs();
            let iv = usable(side.iv)?;
            (delta.is_finite() && delta > 0.0 && delta < 1.0).then_some((delta, iv))
        })
        .collect()
}

fn check_row(index: usize, row: &ChainRow) -> Result<(), VolError> {
    let bad = |what, value, rule| {
        Err(VolError::BadValue {
            what,
            index,
            value,
            rule,
        })
    };
    if !(row.forward.is_finite() && row.forward > 0.0) {
        return bad("chain forward", row.forward, "a finite number > 0");
    }
    if !(row.strike.is_finite() && row.strike > 0.0) {
        return bad("chain strike", row.strike, "a finite number > 0");
    }
    if !row.years_to_expiry.is_finite() {
        return bad(
            "chain years_to_expiry",
            row.years_to_expiry,
            "a finite number",
        );
    }
    Ok(())
}

/// The smile quotes of one expiration's rows (one settlement) for an SVI fit: per strike, the
/// out-of-the-money side's IV (the put below the forward, the call above it, their mean on it;
/// the other side when the preferred one has none), at k = ln(K / F) with the rows' forward,
/// in points, weight 1. Strikes without a usable IV are left out.
pub fn smile_points<'r>(
    rows: impl IntoIterator<Item = &'r ChainRow>,
) -> Vec<super::svi::SmilePoint> {
    rows.into_iter()
        .filter(|r| r.forward.is_finite() && r.forward > 0.0 && r.strike > 0.0)
        .filter_map(|r| {
            Some(super::svi::SmilePoint {
                log_moneyness: (r.strike / r.forward).ln(),
                iv_pct: strike_iv(r)? * 100.0,
                weight: 1.0,
            })
        })
        .collect()
}

/// The part of an ATM IV (points) that one earnings move accounts for: the IV minus the IV
/// with the move's variance removed, σ_ex = √(max(0, σ²T − e²)/T), where e = the mean absolute
/// earnings move (percent) × √(π/2) (the standard deviation of a normal move with that mean
/// absolute value). `None` for T ≤ 0 or a non-finite input.
pub fn earnings_effect_pct(atm_iv_pct: f64, years: f64, mean_abs_move_pct: f64) -> Option<f64> {
    if !(years > 0.0 && atm_iv_pct.is_finite() && mean_abs_move_pct.is_finite()) {
        return None;
    }
    let event = mean_abs_move_pct / 100.0 * (std::f64::consts::PI / 2.0).sqrt();
    let total = (atm_iv_pct / 100.0).powi(2) * years;
    let ex = ((total - event * event).max(0.0) / years).sqrt() * 100.0;
    Some(atm_iv_pct - ex)
}

/// Slope and curvature of a smile at the money (see [`super::svi`]): dσ/dk and d²σ/dk² of the
/// implied vol in percentage points at k = ln(K/F) = 0.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SmileShape {
    /// dσ/dk at k = 0, points.
    pub slope: f64,
    /// d²σ/dk² at k = 0, points.
    pub curvature: f64,
}

/// The smile's slope and curvature at `target_days` calendar days: a raw SVI fit
/// ([`super::svi::fit_svi`] over [`smile_points`]) of each of the two expirations (dte > 0, the
/// settlement series with the most strikes) that bracket the target, linear in years to
/// expiry between them; the nearest one alone when the target lies outside the listed
/// expirations. `None` when an expiration needed has fewer than
/// [`super::svi::SVI_MIN_POINTS`] quotes or its fit fails.
pub fn smile_shape_at(rows: &[ChainRow], target_days: f64) -> Option<SmileShape> {
    let mut series: BTreeMap<(NaiveDate, &str), Vec<&ChainRow>> = BTreeMap::new();
    for row in rows.iter().filter(|r| r.dte > 0 && r.years_to_expiry > 0.0) {
        series
            .entry((row.expiration, row.settlement.as_str()))
            .or_default()
            .push(row);
    }
    // One series per expiration: the one with the most strikes.
    let mut by_expiration: BTreeMap<NaiveDate, Vec<&ChainRow>> = BTreeMap::new();
    for ((expiration, _), rows) in series {
        let held = by_expiration.entry(expiration).or_default();
        if rows.len() > held.len() {
            *held = rows;
        }
    }
    let slices: Vec<(f64, Vec<&ChainRow>)> = by_expiration
        .into_values()
        .map(|rows| (rows[0].years_to_expiry, rows))
        .collect();
    let target = target_days / DAYS_PER_YEAR;
    let upper = slices.iter().position(|(t, _)| *t >= target);
    let shape = |(years, rows): &(f64, Vec<&ChainRow>)| -> Option<(f64, SmileShape)> {
        let fit = super::svi::fit_svi(&smile_points(rows.iter().copied()), *years).ok()?;
        Some((
            *years,
            SmileShape {
                slope: fit.slope()?,
                curvature: fit.curvature()?,
            },
        ))
    };
    match upper {
        None => shape(slices.last()?).map(|(_, s)| s),
        Some(0) => shape(&slices[0]).map(|(_, s)| s),
        Some(i) => {
            let (t1, s1) = shape(&slices[i - 1])?;
            let (t2, s2) = shape(&slices[i])?;
            let x = (target - t1) / (t2 - t1);
            Some(SmileShape {
                slope: s1.slope + (s2.slope - s1.slope) * x,
                curvature: s1.curvature + (s2.curvature - s1.curvature) * x,
            })
        }
    }
}

/// ATM IV and 25-delta skew per expiration of one underlying's chain snapshot, nearest
/// expiration first (by years to expiry). Expirations at or past expiry (years ≤ 0) are left
/// out. The forward of an expiration is its first row's.
///
/// Errors when the rows mix underlyings or trade dates, or a row's forward, strike or years to
/// expiry is not a usable number.
pub fn expiration_vols(rows: &[ChainRow]) -> Result<Vec<ExpirationVol>, VolError> {
    let Some(first) = rows.first() else {
        return Ok(Vec::new());
    };
    let mut groups: BTreeMap<(NaiveDate, SettlementStyle), Vec<&ChainRow>> = BTreeMap::new();
    for (index, row) in rows.iter().enumerate() {
        check_row(index, row)?;
        if row.underlying != first.underlying {
            return Err(VolError::MixedChain {
                what: "underlyings",
                first: first.underlying.clone(),
                other: row.underlying.clone(),
            });
        }
        if row.trade_date != first.trade_date {
            return Err(VolError::MixedChain {
                what: "trade dates",
                first: first.trade_date.to_string(),
                other: row.trade_date.to_string(),
            });
        }
        groups
            .entry((row.expiration, row.settlement))
            .or_default()
            .push(row);
    }
    let mut out: Vec<ExpirationVol> = groups
        .into_iter()
        .filter(|(_, group)| group[0].years_to_expiry > 0.0)
        .map(|((expiration, settlement), group)| {
            let head = group[0];
            let forward = head.forward;
            let pct = |v: Option<f64>| v.map(|v| v * 100.0);
            let call25 = pct(iv_at_delta(&delta_points(&group, |r| &r.call), SKEW_DELTA));
            let put25 = pct(iv_at_delta(&delta_points(&group, |r| &r.put), SKEW_DELTA));
            ExpirationVol {
                expiration,
                settlement,
                dte: head.dte,
                years_to_expiry: head.years_to_expiry,
                forward,
                atm_iv_pct: pct(atm_iv(&group, forward)),
                call25_iv_pct: call25,
                put25_iv_pct: put25,
                skew25_pct: put25.zip(call25).map(|(p, c)| p - c),
            }
        })
        .collect();
    out.sort_by(|a, b| {
        a.years_to_expiry
            .total_cmp(&b.years_to_expiry)
            .then(a.expiration.cmp(&b.expiration))
    });
    Ok(out)
}

/// IV interpolated to `target_days` calendar days from `(years to expiry, IV)` points, linearly
/// in total variance σ²T between the bracketing points, flat in vol outside them. Points with a
/// non-finite or non-positive time or IV are ignored; `None` when none is left. The IV unit is
/// the caller's (percentage points in this module) and comes back unchanged.
pub fn constant_maturity_iv(points: &[(f64, f64)], target_days: f64) -> Option<f64> {
    let target = target_days / DAYS_PER_YEAR;
    if !(target.is_finite() && target > 0.0) {
        return None;
    }
    let mut usable: Vec<(f64, f64)> = points
        .iter()
        .copied()
        .filter(|(t, iv)| t.is_finite() && *t > 0.0 && iv.is_finite() && *iv > 0.0)
        .collect();
    usable.sort_by(|a, b| a.0.total_cmp(&b.0));
    let (&(t_first, iv_first), &(t_last, iv_last)) = (usable.first()?, usable.last()?);
    if target <= t_first {
        return Some(iv_first);
    }
    if target >= t_last {
        return Some(iv_last);
    }
    if let Some(&(_, iv)) = usable.iter().find(|(t, _)| *t == target) {
        return Some(iv);
    }
    // t_first < target < t_last, so both sides exist and t1 < target < t2.
    let upper = usable.iter().position(|(t, _)| *t > target)?;
    let ((t1, s1), (t2, s2)) = (usable[upper - 1], usable[upper]);
    let (w1, w2) = (s1 * s1 * t1, s2 * s2 * t2);
    let w = w1 + (w2 - w1) * (target - t1) / (t2 - t1);
    Some((w / target).sqrt()).filter(|iv| iv.is_finite())
}

/// The 30-day (or any tenor's) 25-delta skew: the put-25Δ and call-25Δ IVs are each taken to
/// `target_days` by [`constant_maturity_iv`] over the expirations that have both, then
/// subtracted (put − call), percentage points.
pub fn skew25_constant_maturity(expirations: &[ExpirationVol], target_days: f64) -> Option<f64> {
    let both: Vec<(f64, f64, f64)> = expirations
        .iter()
        .filter(|e| e.dte > 0)
        .filter_map(|e| Some((e.years_to_expiry, e.put25_iv_pct?, e.call25_iv_pct?)))
        .collect();
    let puts: Vec<(f64, f64)> = both.iter().map(|&(t, p, _)| (t, p)).collect();
    let calls: Vec<(f64, f64)> = both.iter().map(|&(t, _, c)| (t, c)).collect();
    Some(constant_maturity_iv(&puts, target_days)? - constant_maturity_iv(&calls, target_days)?)
}

/// ATM IV at the constant maturities of [`CONSTANT_MATURITY_DAYS`], annualised percentage
/// points; `None` when no expiration has an ATM IV.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct ConstantMaturityIv {
    /// 10 calendar days.
    pub iv10d_pct: Option<f64>,
    /// 20 calendar days.
    pub iv20d_pct: Option<f64>,
    /// 30 calendar days (`iv30d`, the VRP basis).
    pub iv30d_pct: Option<f64>,
    /// 60 calendar days.
    pub iv60d_pct: Option<f64>,
    /// 90 calendar days.
    pub iv90d_pct: Option<f64>,
    /// 180 calendar days.
    pub iv6m_pct: Option<f64>,
    /// 365 calendar days.
    pub iv1yr_pct: Option<f64>,
}

impl ConstantMaturityIv {
    /// Interpolates the ATM IVs of the expirations with dte > 0 to every standard tenor.
    pub fn from_expirations(expirations: &[ExpirationVol]) -> Self {
        let points: Vec<(f64, f64)> = expirations
            .iter()
            .filter(|e| e.dte > 0)
            .filter_map(|e| Some((e.years_to_expiry, e.atm_iv_pct?)))
            .collect();
        let [a, b, c, d, e, f, g] =
            CONSTANT_MATURITY_DAYS.map(|days| constant_maturity_iv(&points, f64::from(days)));
        Self {
            iv10d_pct: a,
            iv20d_pct: b,
            iv30d_pct: c,
            iv60d_pct: d,
            iv90d_pct: e,
            iv6m_pct: f,
            iv1yr_pct: g,
        }
    }

    /// `(tenor in calendar days, IV)` pairs in [`CONSTANT_MATURITY_DAYS`] order.
    pub fn by_tenor(&self) -> [(u32, Option<f64>); 7] {
        let values = [
            self.iv10d_pct,
            self.iv20d_pct,
            self.iv30d_pct,
            self.iv60d_pct,
            self.iv90d_pct,
            self.iv6m_pct,
            self.iv1yr_pct,
        ];
        let mut out = [(0, None); 7];
        for (slot, (days, value)) in out
            .iter_mut()
            .zip(CONSTANT_MATURITY_DAYS.iter().zip(values))
        {
            *slot = (*days, value);
        }
        out
    }
}

/// The nearest expiration with dte > 0 that has an ATM IV (the front of the term structure).
pub fn front_atm(expirations: &[ExpirationVol]) -> Option<&ExpirationVol> {
    expirations
        .iter()
        .find(|e| e.dte > 0 && e.atm_iv_pct.is_some())
}
