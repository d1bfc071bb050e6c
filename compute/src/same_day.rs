//! The session reads of `/zero-dte` over one expiration's chain rows: the ATM pick, the hourly
//! theta burn of the ATM straddle, the 25-delta risk reversal and the regime labels. Pure
//! functions; the labels' thresholds are the `pub const`s the payload's rule texts quote.

use optics_schemas::ChainRow;

use crate::pricing::{OptionInputs, OptionType, PricingModel, price};

/// Hours per year on the calendar-day (/365) clock the chain's `years_to_expiry` uses.
pub const HOURS_PER_YEAR: f64 = 365.0 * 24.0;
/// The |delta| of the two wings of the risk reversal.
pub const RISK_REVERSAL_DELTA: f64 = 0.25;
/// Risk-reversal band within which skew reads `FLAT`, percentage points.
pub const SKEW_FLAT_BAND_POINTS: f64 = 1.0;

/// The at-the-money strike and its IV.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct AtmPick {
    /// The listed strike nearest the forward among those with a call and a put IV.
    pub strike: f64,
    /// Mean of that strike's call and put IV, decimal.
    pub iv: f64,
}

/// The listed strike of `rows` nearest `forward` with both IVs (the first of equally near
/// ones), with the mean of its call and put IV; `None` when no strike has both.
pub fn atm_pick(rows: &[ChainRow], forward: f64) -> Option<AtmPick> {
    rows.iter()
        .filter_map(|r| Some((r.strike, r.call.iv?, r.put.iv?)))
        .min_by(|a, b| (a.0 - forward).abs().total_cmp(&(b.0 - forward).abs()))
        .map(|(strike, call_iv, put_iv)| AtmPick {
            strike,
            iv: 0.5 * (call_iv + put_iv),
        })
}

/// The ATM straddle (call + put, Black-76 on `forward` at the ATM IV) with `years_left` to
/// expiry; its intrinsic value at expiry; NaN without an ATM pick or when it cannot be priced.
pub fn straddle_value(atm: Option<AtmPick>, forward: f64, rate: f64, years_left: f64) -> f64 {
    let Some(AtmPick { strike, iv }) = atm else {
        return f64::NAN;
    };
    if years_left <= 0.0 {
        return (forward - strike).abs();
    }
    [OptionType::Call, OptionType::Put]
        .into_iter()
        .map(|option_type| {
            price(
                &OptionInputs {
                    option_type,
                    model: PricingModel::Black76,
                    underlying: forward,
                    strike,
                    years: years_left,
                    rate,
                    dividend_yield: 0.0,
                },
                iv,
            )
            .unwrap_or(f64::NAN)
        })
        .sum()
}

/// One hour of the theta burn.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HourlyDecay {
    /// Minutes from now to the end of this hour (the last hour ends at expiry).
    pub elapsed_minutes: i64,
    /// Hours to expiry at the end of this hour.
    pub hours_to_expiry: f64,
    /// The straddle's value then.
    pub straddle_value: f64,
    /// Value lost during this hour.
    pub decay: f64,
    /// Value lost since now, percent of the value now (0 when that is not positive).
    pub cumulative_decay_pct: f64,
}

/// The ATM straddle now and at the end of each coming hour to expiry, forward and IV held.
#[derive(Debug, Clone, PartialEq)]
pub struct ThetaBurn {
    /// The straddle's value now.
    pub value_now: f64,
    /// One entry per hour (or part of one) left; empty when the value now is not finite.
    pub hourly: Vec<HourlyDecay>,
}

/// The theta burn of the ATM straddle over the `years` (calendar clock) left to expiry.
pub fn theta_burn(atm: Option<AtmPick>, forward: f64, rate: f64, years: f64) -> ThetaBurn {
    let hours_left = years * HOURS_PER_YEAR;
    let value_now = straddle_value(atm, forward, rate, years);
    let mut hourly = Vec::new();
    let mut previous = value_now;
    let mut hour = 1.0_f64;
    while hour - 1.0 < hours_left && value_now.is_finite() {
        let left = (hours_left - hour).max(0.0);
        let value = straddle_value(atm, forward, rate, left / HOURS_PER_YEAR);
        hourly.push(HourlyDecay {
            elapsed_minutes: ((hours_left - left) * 60.0).round() as i64,
            hours_to_expiry: left,
            straddle_value: value,
            decay: previous - value,
            cumulative_decay_pct: if value_now > 0.0 {
                100.0 * (value_now - value) / value_now
            } else {
                0.0
            },
        });
        previous = value;
        hour += 1.0;
    }
    ThetaBurn { value_now, hourly }
}

/// IV (percentage points) of the put nearest −[`RISK_REVERSAL_DELTA`] minus IV of the call
/// nearest +[`RISK_REVERSAL_DELTA`]; `None` when a side has no contract with delta and IV.
pub fn risk_reversal_points(rows: &[ChainRow]) -> Option<f64> {
    let nearest_iv = |target: f64, call: bool| -> Option<f64> {
        rows.iter()
            .filter_map(|r| {
                let side = if call { &r.call } else { &r.put };
                Some((side.greeks.delta?, side.iv?))
            })
            .min_by(|a, b| (a.0 - target).abs().total_cmp(&(b.0 - target).abs()))
            .map(|(_, iv)| 100.0 * iv)
    };
    Some(nearest_iv(-RISK_REVERSAL_DELTA, false)? - nearest_iv(RISK_REVERSAL_DELTA, true)?)
}

/// `PUTS_RICH` above +[`SKEW_FLAT_BAND_POINTS`], `CALLS_RICH` below −it, `FLAT` in between.
pub fn skew_label(risk_reversal_points: f64) -> &'static str {
    if risk_reversal_points > SKEW_FLAT_BAND_POINTS {
        "PUTS_RICH"
    } else if risk_reversal_points < -SKEW_FLAT_BAND_POINTS {
        "CALLS_RICH"
    } else {
        "FLAT"
    }
}

/// `POSITIVE_GAMMA` when dealers are net long gamma, `NEGATIVE_GAMMA` when short, else
/// `NEUTRAL`.
pub fn gamma_regime_label(total_net_gex: f64) -> &'static str {
    if total_net_gex > 0.0 {
        "POSITIVE_GAMMA"
    } else if total_net_gex < 0.0 {
        "NEGATIVE_GAMMA"
    } else {
        "NEUTRAL"
    }
}

#[cfg(test)]
mod tests {
    use chrono::{NaiveDate, TimeZone, Utc};
    use optics_schemas::{
        ChainGreeks, ChainSide, ForwardSource, PricingModelCode, SettlementStyle,
    };

    use super::*;

    fn side(iv: Option<f64>, delta: Option<f64>) -> ChainSide {
        ChainSide {
            iv,
            greeks: ChainGreeks {
                delta,
                ..ChainGreeks::default()
            },
            ..ChainSide::default()
        }
    }

    fn row(strike: f64, call: ChainSide, put: ChainSide) -> ChainRow {
        let day = NaiveDate::from_ymd_opt(2026, 11, 27).unwrap();
        ChainRow {
            underlying: "SPY".to_owned(),
            trade_date: day,
            as_of: Utc.with_ymd_and_hms(2026, 11, 27, 15, 0, 0).unwrap(),
            expiration: day,
            settlement: SettlementStyle::Pm,
            dte: 0,
            years_to_expiry: 0.0,
            strike,
            spot: 100.0,
            forward: 100.0,
            forward_source: ForwardSource::Parity,
            forward_strike_count: 3,
            rate: 0.04,
            carry_yield: 0.0,
            model: PricingModelCode::Black76,
            call,
            put,
        }
    }

    #[test]
    fn atm_is_the_strike_nearest_the_forward_with_both_ivs() {
        let rows = [
            row(99.0, side(Some(0.30), None), side(Some(0.34), None)),
            // Nearest the forward but without a put IV: skipped.
            row(100.0, side(Some(0.20), None), side(None, None)),
            row(101.0, side(Some(0.22), None), side(Some(0.26), None)),
        ];
        let atm = atm_pick(&rows, 100.4).unwrap();
        assert_eq!(atm.strike, 101.0);
        assert!((atm.iv - 0.24).abs() < 1e-12);
        assert_eq!(atm_pick(&rows[1..2], 100.0), None);
    }

    #[test]
    fn the_straddle_is_worth_its_intrinsic_value_at_expiry_and_the_burn_ends_there() {
        let atm = Some(AtmPick {
            strike: 100.0,
            iv: 0.2,
        });
        assert_eq!(straddle_value(atm, 103.0, 0.05, 0.0), 3.0);
        assert!(straddle_value(None, 103.0, 0.05, 0.01).is_nan());
        // ATM, zero rate: straddle = 2·F·(2N(σ√T/2) − 1) ≈ 0.7979·F·σ√T for small σ√T.
        // σ√T = 0.2·√(2.5/8760) = 0.0033786; 0.797885 · 100 · 0.0033786 = 0.26957.
        let burn = theta_burn(atm, 100.0, 0.0, 2.5 / HOURS_PER_YEAR);
        assert!(
            (burn.value_now - 0.26957).abs() < 1e-4,
            "{}",
            burn.value_now
        );
        // 2.5 hours: ends of hour 1 and 2, then the half hour to expiry.
        let hours: Vec<f64> = burn.hourly.iter().map(|h| h.hours_to_expiry).collect();
        assert_eq!(hours.len(), 3);
        assert!((hours[0] - 1.5).abs() < 1e-9 && (hours[1] - 0.5).abs() < 1e-9);
        assert_eq!(hours[2], 0.0);
        assert_eq!(burn.hourly[0].elapsed_minutes, 60);
        assert_eq!(burn.hourly[2].elapsed_minutes, 150);
        let last = burn.hourly[2];
        assert_eq!(last.straddle_value, 0.0);
        assert!((last.cumulative_decay_pct - 100.0).abs() < 1e-9);
        let total: f64 = burn.hourly.iter().map(|h| h.decay).sum();
        assert!((total - burn.value_now).abs() < 1e-12);
        assert!(theta_burn(None, 100.0, 0.0, 0.001).hourly.is_empty());
    }

    #[test]
    fn risk_reversal_takes_the_wings_nearest_a_quarter_delta() {
        let rows = [
            row(
                95.0,
                side(Some(0.18), Some(0.80)),
                side(Some(0.30), Some(-0.22)),
            ),
            row(
                100.0,
                side(Some(0.20), Some(0.50)),
                side(Some(0.26), Some(-0.50)),
            ),
            row(
                105.0,
                side(Some(0.21), Some(0.27)),
                side(Some(0.24), Some(-0.75)),
            ),
        ];
        // Put wing: −0.22 at 30 %; call wing: 0.27 at 21 % → 9 points.
        let rr = risk_reversal_points(&rows).unwrap();
        assert!((rr - 9.0).abs() < 1e-9);
        assert_eq!(skew_label(rr), "PUTS_RICH");
        assert_eq!(risk_reversal_points(&rows[..0]), None);
    }

    #[test]
    fn labels_switch_at_their_thresholds() {
        assert_eq!(skew_label(1.0), "FLAT");
        assert_eq!(skew_label(1.01), "PUTS_RICH");
        assert_eq!(skew_label(-1.0), "FLAT");
        assert_eq!(skew_label(-1.01), "CALLS_RICH");
        assert_eq!(gamma_regime_label(5.0), "POSITIVE_GAMMA");
        assert_eq!(gamma_regime_label(-5.0), "NEGATIVE_GAMMA");
        assert_eq!(gamma_regime_label(0.0), "NEUTRAL");
    }
}
