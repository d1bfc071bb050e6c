//! Synthetic rows for benchmarks and tests that need volume, not market realism (the
//! simulator provides that).

use chrono::{DateTime, Days, NaiveDate};
use optics_schemas::{ExerciseStyle, OptionQuote, OptionType, SettlementStyle, occ_symbol};

use crate::bench::XorShift;

/// A valid chain slice of `underlying` around `spot`: `expirations` weekly expirations from
/// 2026-11-20, `strikes` one-dollar strikes from `first_strike`, calls and puts, widths and
/// sizes drawn from `seed`; at most `limit` rows.
pub fn synthetic_chain(
    underlying: &str,
    spot: f64,
    expirations: u64,
    strikes: u32,
    first_strike: f64,
    seed: u64,
    limit: usize,
) -> Vec<OptionQuote> {
    let mut rng = XorShift(0x5eed_0fc0_ffee ^ seed);
    let first = NaiveDate::from_ymd_opt(2026, 11, 20).expect("valid date");
    let quote_time = DateTime::from_timestamp_micros(1_795_188_600_000_000).expect("valid time");
    let mut rows = Vec::with_capacity(limit.min(2 * strikes as usize * expirations as usize));
    'outer: for e in 0..expirations {
        let expiration = first + Days::new(7 * e);
        for k in 0..strikes {
            let strike = first_strike + f64::from(k);
            for option_type in [OptionType::Call, OptionType::Put] {
                if rows.len() == limit {
                    break 'outer;
                }
                let moneyness = match option_type {
                    OptionType::Call => spot - strike,
                    OptionType::Put => strike - spot,
                };
                let value = moneyness.max(0.0) + 8.0 * (-(moneyness / 40.0).powi(2)).exp();
                let half_width = 0.01 + 0.02 * value.sqrt() * rng.next_f64();
                let bid = ((value - half_width).max(0.0) * 100.0).round() / 100.0;
                let ask = ((value + half_width) * 100.0).round() / 100.0;
                rows.push(OptionQuote {
                    underlying: underlying.to_owned(),
                    option_symbol: occ_symbol(underlying, expiration, option_type, strike)
                        .expect("valid OCC symbol"),
                    expiration,
                    strike,
                    option_type,
                    settlement: SettlementStyle::Pm,
                    exercise_style: ExerciseStyle::American,
                    bid,
                    ask,
                    bid_size: (rng.next_f64() * 500.0) as u32,
                    ask_size: (rng.next_f64() * 500.0) as u32,
                    last: (rng.next_f64() < 0.9).then_some(0.5 * (bid + ask)),
                    volume: (rng.next_f64() * 20_000.0) as u64,
                    open_interest: (rng.next_f64() * 100_000.0) as u64,
                    oi_date: first.pred_opt().expect("valid date"),
                    quote_time,
                    underlying_price: spot,
                });
            }
        }
    }
    rows
}
