//! Chain building: forwards, IVs and Greeks checked against values the tests compute
//! themselves from the parameters the quotes were generated with; selection, nulls, open
//! interest and the Arrow round trip.

use std::sync::Arc;

use arrow_array::{ArrayRef, Float64Array, RecordBatch};
use arrow_schema::{Field, Schema};
use chrono::{DateTime, NaiveDate, TimeZone, Utc};
use optics_schemas::columns::chain::{self as col, CALL, PUT};
use optics_schemas::{
    ChainRow, ExerciseStyle, ForwardSource, NoIvReason, OptionQuote, PricingModelCode, Record,
    SchemaError, SettlementStyle, occ_symbol,
};

use super::build::extrinsic_value;
use super::*;
use crate::pricing::{OptionInputs, OptionType, greeks, implied_vol, price};
use crate::time::years_to_expiry;

type QuoteType = optics_schemas::OptionType;

fn date(y: i32, m: u32, d: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(y, m, d).unwrap()
}

/// 10:00 New York on Friday 2026-11-20 (EST).
fn as_of() -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 11, 20, 15, 0, 0).unwrap()
}

fn trade_date() -> NaiveDate {
    date(2026, 11, 20)
}

/// A generator of quotes priced exactly by a known model.
#[derive(Debug, Clone, Copy)]
struct Truth {
    spot: f64,
    rate: f64,
    /// The carry yield the quotes are generated with.
    carry: f64,
    model: PricingModel,
}

impl Truth {
    fn years(expiration: NaiveDate) -> f64 {
        years_to_expiry(as_of(), expiration)
    }

    fn forward(&self, expiration: NaiveDate) -> f64 {
        self.spot * ((self.rate - self.carry) * Self::years(expiration)).exp()
    }

    /// A smile in log-moneyness: put skew and curvature.
    fn vol(&self, strike: f64, expiration: NaiveDate) -> f64 {
        let k = (strike / self.forward(expiration)).ln();
        0.22 - 0.15 * k + 0.6 * k * k
    }

    /// The contract as the test prices it: BSM on the spot with the true carry, or Black-76 on
    /// the true forward.
    fn inputs(&self, option_type: OptionType, strike: f64, expiration: NaiveDate) -> OptionInputs {
        let (underlying, dividend_yield) = match self.model {
            PricingModel::BlackScholesMerton => (self.spot, self.carry),
            PricingModel::Black76 => (self.forward(expiration), 0.0),
        };
        OptionInputs {
            option_type,
            model: self.model,
            underlying,
            strike,
            years: Self::years(expiration),
            rate: self.rate,
            dividend_yield,
        }
    }

    fn value(&self, option_type: OptionType, strike: f64, expiration: NaiveDate) -> f64 {
        let inputs = self.inputs(option_type, strike, expiration);
        price(&inputs, self.vol(strike, expiration)).unwrap()
    }

    /// Calls and puts at `strikes`, bid = value − half_spread (at least 0) and ask = value +
    /// half_spread.
    fn quotes(
        &self,
        underlying: &str,
        expiration: NaiveDate,
        strikes: &[f64],
        half_spread: f64,
    ) -> Vec<OptionQuote> {
        let mut quotes = Vec::new();
        for &strike in strikes {
            for (quote_type, option_type) in [
                (QuoteType::Call, OptionType::Call),
                (QuoteType::Put, OptionType::Put),
            ] {
                let value = self.value(option_type, strike, expiration);
                quotes.push(quote(
                    underlying,
                    expiration,
                    quote_type,
                    strike,
                    (value - half_spread).max(0.0),
                    value + half_spread,
                    self.spot,
                ));
            }
        }
        quotes
    }
}

fn quote(
    underlying: &str,
    expiration: NaiveDate,
    option_type: QuoteType,
    strike: f64,
    bid: f64,
    ask: f64,
    spot: f64,
) -> OptionQuote {
    OptionQuote {
        underlying: underlying.to_owned(),
        option_symbol: occ_symbol(underlying, expiration, option_type, strike).unwrap(),
        expiration,
        strike,
        option_type,
        settlement: SettlementStyle::Pm,
        exercise_style: ExerciseStyle::American,
        bid,
        ask,
        bid_size: 10,
        ask_size: 20,
        last: Some(0.5 * (bid + ask)),
        volume: 100,
        open_interest: 1_000,
        oi_date: date(2026, 11, 19),
        quote_time: as_of(),
        underlying_price: spot,
    }
}

fn market(underlying: &str, truth: &Truth, dividend_yield: f64) -> ChainMarket {
    ChainMarket {
        underlying: underlying.to_owned(),
        trade_date: trade_date(),
        as_of: as_of(),
        spot: None,
        rate: truth.rate,
        dividend_yield,
        model: truth.model,
    }
}

fn strikes(from: f64, to: f64, step: f64) -> Vec<f64> {
    let n = ((to - from) / step).round() as usize;
    (0..=n).map(|i| from + step * i as f64).collect()
}

const STOCK: Truth = Truth {
    spot: 100.0,
    rate: 0.045,
    carry: 0.012,
    model: PricingModel::BlackScholesMerton,
};

const INDEX: Truth = Truth {
    spot: 5000.0,
    rate: 0.045,
    carry: 0.015,
    model: PricingModel::Black76,
};

fn expirations() -> [NaiveDate; 3] {
    [date(2026, 11, 27), date(2026, 12, 18), date(2027, 3, 19)]
}

fn rel_close(actual: f64, expected: f64, tolerance: f64) -> bool {
    (actual - expected).abs() <= tolerance * expected.abs().max(1e-300)
}

/// |a − e| ≤ tolerance × max(|e|, scale): relative, with an absolute floor for values that
/// cross zero.
fn close(actual: f64, expected: f64, tolerance: f64, scale: f64) -> bool {
    (actual - expected).abs() <= tolerance * expected.abs().max(scale)
}

// ---------------------------------------------------------------------------------------------
// Forwards.

#[test]
fn parity_forward_recovers_the_generating_forward() {
    for (underlying, truth, grid) in [
        ("XYZ", STOCK, strikes(70.0, 130.0, 2.5)),
        ("SPX", INDEX, strikes(4500.0, 5500.0, 25.0)),
    ] {
        let mut quotes = Vec::new();
        for expiration in expirations() {
            quotes.extend(truth.quotes(underlying, expiration, &grid, 0.0));
        }
        // A wrong dividend yield: parity must not need it.
        let snapshot = build_chain(&quotes, &market(underlying, &truth, 0.05)).unwrap();
        assert_eq!(snapshot.expirations.len(), 3);
        for e in &snapshot.expirations {
            let expected = truth.forward(e.expiration);
            let f = &e.forward;
            assert_eq!(f.source, ForwardSource::Parity);
            assert!(
                rel_close(f.forward, expected, 1e-10),
                "{underlying} {}: forward {} vs {expected}",
                e.expiration,
                f.forward
            );
            // q = r − ln(F/S)/T: the forward's relative error divided by T.
            assert!(
                (f.carry_yield - truth.carry).abs() <= 1e-10 / e.years_to_expiry,
                "{underlying} {}: carry {} vs {}",
                e.expiration,
                f.carry_yield,
                truth.carry
            );
            assert!((1..=forward::MAX_PARITY_STRIKES).contains(&f.strikes_used.len()));
            // The strikes used are the ones nearest the forward.
            let nearest = grid
                .iter()
                .map(|k| (k - expected).abs())
                .fold(f64::INFINITY, f64::min);
            assert!(
                f.strikes_used
                    .iter()
                    .any(|k| (k - expected).abs() == nearest)
            );
        }
        for row in &snapshot.rows {
            assert_eq!(row.forward_source, ForwardSource::Parity);
            assert!(rel_close(row.forward, truth.forward(row.expiration), 1e-10));
        }
    }
}

#[test]
fn parity_forward_drops_an_outlier_and_weighs_by_spread() {
    let market = ForwardMarket {
        spot: 100.0,
        rate: 0.05,
        years: 0.25,
        dividend_yield: 0.0,
    };
    let growth = (0.05f64 * 0.25).exp();
    let forward = 101.0;
    // Pairs consistent with F = 101 (C − P = (F − K)/growth), with the given spreads.
    let pair = |strike: f64, spread: f64| {
        let difference = (forward - strike) / growth;
        let put_mid = 3.0;
        let call_mid = put_mid + difference;
        ParityPair {
            strike,
            call_bid: call_mid - spread / 2.0,
            call_ask: call_mid + spread / 2.0,
            put_bid: put_mid - spread / 2.0,
            put_ask: put_mid + spread / 2.0,
        }
    };
    let mut pairs: Vec<ParityPair> = [97.0, 99.0, 100.0, 102.0, 103.0]
        .iter()
        .map(|&k| pair(k, 0.1))
        .collect();
    // A stale call at 101: its F_K is two dollars off.
    let mut stale = pair(101.0, 0.1);
    stale.call_bid += 2.0;
    stale.call_ask += 2.0;
    pairs.push(stale);
    let estimate = estimate_forward(&pairs, &market);
    assert_eq!(estimate.source, ForwardSource::Parity);
    assert!(rel_close(estimate.forward, forward, 1e-12), "{estimate:?}");
    assert_eq!(estimate.strikes_used, vec![97.0, 99.0, 100.0, 102.0, 103.0]);

    // Two pairs whose F_K differ by 4 cents: both within 3 × 1.4826 × MAD (MAD = 0.02), so
    // both are kept and weighted by 1/spread: the tight one counts nine times the wide one.
    let tight = pair(100.0, 0.02);
    let mut wide = pair(102.0, 0.18);
    wide.call_bid += 0.04 / growth;
    wide.call_ask += 0.04 / growth;
    let estimate = estimate_forward(&[tight, wide], &market);
    let tight_forward = forward;
    let wide_forward = forward + 0.04;
    let (w_tight, w_wide) = (1.0 / (growth * 0.04), 1.0 / (growth * 0.36));
    let expected = (w_tight * tight_forward + w_wide * wide_forward) / (w_tight + w_wide);
    assert!(rel_close(estimate.forward, expected, 1e-12), "{estimate:?}");
}

#[test]
fn carry_fallback_when_one_side_is_missing() {
    let truth = STOCK;
    let expiration = date(2026, 12, 18);
    let grid = strikes(90.0, 110.0, 5.0);
    // Calls only, and puts without a bid: no strike has a two-sided pair.
    let mut quotes: Vec<OptionQuote> = truth
        .quotes("XYZ", expiration, &grid, 0.01)
        .into_iter()
        .map(|mut q| {
            if q.option_type == QuoteType::Put {
                q.bid = 0.0;
            }
            q
        })
        .collect();
    quotes.retain(|q| q.option_type == QuoteType::Call || q.strike < 100.0);
    let dividend_yield = 0.02;
    let snapshot = build_chain(&quotes, &market("XYZ", &truth, dividend_yield)).unwrap();
    let years = Truth::years(expiration);
    let expected = truth.spot * ((truth.rate - dividend_yield) * years).exp();
    let e = &snapshot.expirations[0];
    assert_eq!(e.forward.source, ForwardSource::Carry);
    assert!(e.forward.strikes_used.is_empty());
    assert!(rel_close(e.forward.forward, expected, 1e-14));
    assert_eq!(e.forward.carry_yield, dividend_yield);
    for row in &snapshot.rows {
        assert_eq!(row.forward_source, ForwardSource::Carry);
        assert_eq!(row.forward_strike_count, 0);
        assert_eq!(row.carry_yield, dividend_yield);
        // The calls are still priced, with the caller's yield.
        let inputs = OptionInputs {
            dividend_yield,
            ..truth.inputs(OptionType::Call, row.strike, expiration)
        };
        let mid = row.call.mid.unwrap();
        let expected_iv = implied_vol(&inputs, mid).unwrap();
        assert!(rel_close(row.call.iv.unwrap(), expected_iv, 1e-12));
    }
}

#[test]
fn an_expiration_after_its_close_has_no_iv_and_the_spot_as_forward() {
    let truth = STOCK;
    // Trade date = expiration date, priced at 17:00 New York: T < 0.
    let expiration = date(2026, 11, 20);
    let mut quotes = truth.quotes("XYZ", date(2026, 11, 27), &[100.0], 0.01);
    for option_type in [QuoteType::Call, QuoteType::Put] {
        quotes.push(quote(
            "XYZ",
            expiration,
            option_type,
            100.0,
            0.05,
            0.10,
            100.0,
        ));
    }
    let market = ChainMarket {
        as_of: Utc.with_ymd_and_hms(2026, 11, 20, 22, 0, 0).unwrap(),
        ..market("XYZ", &truth, 0.01)
    };
    let snapshot = build_chain(&quotes, &market).unwrap();
    let e = &snapshot.expirations[0];
    assert_eq!(e.expiration, expiration);
    assert!(e.years_to_expiry < 0.0);
    assert_eq!(e.dte, 0);
    assert_eq!(e.forward.source, ForwardSource::Carry);
    assert_eq!(e.forward.forward, 100.0);
    let row = &snapshot.rows[0];
    assert_eq!(row.call.iv_status, Some(NoIvReason::Expired));
    assert_eq!(row.put.iv_status, Some(NoIvReason::Expired));
    assert_eq!(row.call.greeks, optics_schemas::ChainGreeks::default());
    // At-the-money at expiry: the whole mid, 0.075 (cent quotes: the half cent), is time value.
    assert_eq!(row.call.extrinsic, Some(0.075));
    // The next expiration is priced normally.
    assert_eq!(snapshot.rows[1].call.iv_status, None);
    assert!(snapshot.rows[1].call.iv.is_some());
}

// ---------------------------------------------------------------------------------------------
// IV, Greeks and the nulls.

#[test]
fn iv_and_greeks_equal_the_pricing_functions() {
    for (underlying, truth, grid) in [
        ("XYZ", STOCK, strikes(85.0, 115.0, 2.5)),
        ("SPX", INDEX, strikes(4700.0, 5300.0, 25.0)),
    ] {
        let mut quotes = Vec::new();
        for expiration in expirations() {
            quotes.extend(truth.quotes(underlying, expiration, &grid, 0.0));
        }
        let snapshot = build_chain(&quotes, &market(underlying, &truth, 0.0)).unwrap();
        let expected_model = match truth.model {
            PricingModel::BlackScholesMerton => PricingModelCode::Bsm,
            PricingModel::Black76 => PricingModelCode::Black76,
        };
        assert_eq!(snapshot.stats.priced, 2 * grid.len() * 3);
        assert_eq!(snapshot.stats.solved, snapshot.stats.priced);
        for row in &snapshot.rows {
            assert_eq!(row.model, expected_model);
            assert_eq!(row.spot, truth.spot);
            for (side, option_type) in [(&row.call, OptionType::Call), (&row.put, OptionType::Put)]
            {
                // The contract as the test prices it, at the true forward.
                let inputs = truth.inputs(option_type, row.strike, row.expiration);
                let mid = side.mid.unwrap();
                let expected_iv = implied_vol(&inputs, mid).unwrap();
                let iv = side.iv.unwrap();
                assert_eq!(side.iv_status, None);
                // The forward is recovered to ~1e-12, the IV of a far wing amplifies that.
                assert!(
                    rel_close(iv, expected_iv, 1e-7),
                    "{underlying} {} {option_type} {}: iv {iv} vs {expected_iv}",
                    row.expiration,
                    row.strike
                );
                assert!(rel_close(iv, truth.vol(row.strike, row.expiration), 1e-7));
                let g = greeks(&inputs, expected_iv).unwrap();
                let s = &side.greeks;
                let pairs = [
                    ("delta", s.delta, g.delta, 1.0),
                    ("gamma", s.gamma, g.gamma, g.gamma.abs()),
                    ("theta", s.theta, g.theta, g.theta.abs()),
                    ("vega", s.vega, g.vega, g.vega.abs()),
                    ("rho", s.rho, g.rho, g.vega.abs()),
                    ("epsilon", s.epsilon, g.epsilon, g.vega.abs()),
                    ("vanna", s.vanna, g.vanna, 1e-4),
                    ("charm", s.charm, g.charm, 1e-6),
                    ("vomma", s.vomma, g.vomma, g.vega.abs() * 1e-2),
                    ("veta", s.veta, g.veta, g.vega.abs() * 1e-3),
                    ("speed", s.speed, g.speed, g.gamma.abs() / truth.spot),
                    ("zomma", s.zomma, g.zomma, g.gamma.abs() * 1e-2),
                    ("color", s.color, g.color, g.gamma.abs() * 1e-2),
                    ("ultima", s.ultima, g.ultima, g.vega.abs() * 1e-4),
                ];
                for (name, actual, expected, scale) in pairs {
                    let actual = actual.unwrap();
                    assert!(
                        close(actual, expected, 1e-6, scale),
                        "{underlying} {} {option_type} {} {name}: {actual} vs {expected}",
                        row.expiration,
                        row.strike
                    );
                }
                // Extrinsic: the mid over the discounted intrinsic on the true forward.
                let forward = truth.forward(row.expiration);
                let payoff = option_type.sign() * (forward - row.strike);
                let intrinsic = (-truth.rate * inputs.years).exp() * payoff.max(0.0);
                assert!(close(side.extrinsic.unwrap(), mid - intrinsic, 1e-9, mid));
            }
        }
    }
}

#[test]
fn index_greeks_are_with_respect_to_the_forward() {
    let truth = INDEX;
    let expiration = date(2026, 12, 18);
    let quotes = truth.quotes("SPX", expiration, &[5000.0], 0.0);
    let snapshot = build_chain(&quotes, &market("SPX", &truth, 0.0)).unwrap();
    let row = &snapshot.rows[0];
    // Black-76 delta of a call: e^{−rT}·N(d1) with d1 on F — computed here from the definition.
    let years = Truth::years(expiration);
    let forward = truth.forward(expiration);
    let vol = truth.vol(5000.0, expiration);
    let d1 = ((forward / 5000.0).ln() + 0.5 * vol * vol * years) / (vol * years.sqrt());
    let expected = (-truth.rate * years).exp() * crate::pricing::special::norm_cdf(d1);
    assert!(rel_close(row.call.greeks.delta.unwrap(), expected, 1e-8));
    assert_eq!(row.call.greeks.epsilon, Some(0.0));
    assert_eq!(row.model, PricingModelCode::Black76);
}

#[test]
fn no_two_sided_quote_gives_no_iv_and_no_greeks() {
    let truth = STOCK;
    let expiration = date(2026, 12, 18);
    let mut quotes = truth.quotes("XYZ", expiration, &[95.0, 100.0, 105.0], 0.02);
    // No bid on the 105 call; a crossed 95 put.
    for q in &mut quotes {
        if q.strike == 105.0 && q.option_type == QuoteType::Call {
            q.bid = 0.0;
        }
        if q.strike == 95.0 && q.option_type == QuoteType::Put {
            q.bid = q.ask + 0.05;
        }
    }
    let snapshot = build_chain(&quotes, &market("XYZ", &truth, 0.0)).unwrap();
    for (side, strike) in [
        (&snapshot.rows[2].call, 105.0),
        (&snapshot.rows[0].put, 95.0),
    ] {
        assert_eq!(
            snapshot.rows.iter().filter(|r| r.strike == strike).count(),
            1
        );
        assert!(side.is_listed());
        assert_eq!(side.mid, None);
        assert_eq!(side.iv, None);
        assert_eq!(side.iv_status, Some(NoIvReason::NoTwoSidedQuote));
        assert_eq!(side.greeks, optics_schemas::ChainGreeks::default());
        assert_eq!(side.extrinsic, None);
        // The quote itself is kept.
        assert!(side.ask.is_some() && side.open_interest == Some(1_000));
    }
    // The other sides are priced.
    assert!(snapshot.rows[1].call.iv.is_some() && snapshot.rows[1].put.iv.is_some());
    assert_eq!(snapshot.stats.priced, 4);
}

#[test]
fn extrinsic_clamps_rounding_and_refuses_a_real_shortfall() {
    // mid above intrinsic: the difference.
    assert_eq!(extrinsic_value(5.5, 0.05, 5.0), Some(0.5));
    // Below by less than half the spread: rounding of the quote, 0.
    assert_eq!(extrinsic_value(4.98, 0.05, 5.0), Some(0.0));
    // Below by more: no negative time value.
    assert_eq!(extrinsic_value(4.90, 0.05, 5.0), None);

    // In a chain: a deep in-the-money call quoted under its intrinsic value.
    let truth = STOCK;
    let expiration = date(2026, 12, 18);
    let mut quotes = truth.quotes("XYZ", expiration, &[60.0, 95.0, 100.0, 105.0], 0.0);
    let years = Truth::years(expiration);
    let intrinsic = (-truth.rate * years).exp() * (truth.forward(expiration) - 60.0);
    let deep = quotes
        .iter_mut()
        .find(|q| q.strike == 60.0 && q.option_type == QuoteType::Call)
        .unwrap();
    deep.bid = intrinsic - 0.30;
    deep.ask = intrinsic - 0.20;
    let snapshot = build_chain(&quotes, &market("XYZ", &truth, 0.0)).unwrap();
    let side = &snapshot.rows[0].call;
    assert_eq!(side.iv_status, Some(NoIvReason::BelowIntrinsic));
    assert_eq!(side.extrinsic, None);
    assert!(side.mid.is_some());
}

// ---------------------------------------------------------------------------------------------
// Selection: latest quote, open interest, expired, malformed, grain and order.

#[test]
fn open_interest_from_a_later_session_is_not_attached() {
    let truth = STOCK;
    let mut quotes = truth.quotes("XYZ", date(2026, 12, 18), &[100.0], 0.02);
    quotes[0].oi_date = date(2026, 11, 23); // after the trade date
    quotes[0].open_interest = 9_999;
    let snapshot = build_chain(&quotes, &market("XYZ", &truth, 0.0)).unwrap();
    let row = &snapshot.rows[0];
    assert_eq!(row.call.open_interest, None);
    assert_eq!(row.call.oi_date, None);
    assert_eq!(row.put.open_interest, Some(1_000));
    assert_eq!(row.put.oi_date, Some(date(2026, 11, 19)));
    assert_eq!(snapshot.stats.open_interest_after_trade_date, 1);
    // The rest of the call is kept and priced.
    assert!(row.call.iv.is_some());
    // Dated on the trade date itself is fine (an end-of-day snapshot after OCC's update).
    quotes[0].oi_date = trade_date();
    let snapshot = build_chain(&quotes, &market("XYZ", &truth, 0.0)).unwrap();
    assert_eq!(snapshot.rows[0].call.open_interest, Some(9_999));
    assert_eq!(snapshot.stats.open_interest_after_trade_date, 0);
}

#[test]
fn the_latest_quote_of_a_contract_wins() {
    let truth = STOCK;
    let mut quotes = truth.quotes("XYZ", date(2026, 12, 18), &[100.0], 0.02);
    let mut newer = quotes[0].clone();
    newer.quote_time = as_of() + chrono::TimeDelta::seconds(5);
    newer.bid += 0.10;
    newer.ask += 0.10;
    let mut older = quotes[0].clone();
    older.quote_time = as_of() - chrono::TimeDelta::seconds(5);
    older.bid -= 0.10;
    // Newest first in the input: order must not matter.
    quotes.insert(0, newer.clone());
    quotes.push(older);
    let snapshot = build_chain(&quotes, &market("XYZ", &truth, 0.0)).unwrap();
    assert_eq!(snapshot.rows.len(), 1);
    assert_eq!(snapshot.rows[0].call.bid, Some(newer.bid));
    assert_eq!(snapshot.rows[0].call.quote_time, Some(newer.quote_time));
    assert_eq!(snapshot.stats.superseded, 2);
    assert_eq!(snapshot.stats.contracts, 2);
    assert_eq!(snapshot.stats.quotes, 4);
}

#[test]
fn expired_and_malformed_quotes_are_left_out_and_counted() {
    let truth = STOCK;
    let mut quotes = truth.quotes("XYZ", date(2026, 12, 18), &[95.0, 100.0], 0.02);
    quotes.push(quote(
        "XYZ",
        date(2026, 11, 13),
        QuoteType::Call,
        100.0,
        1.0,
        1.1,
        100.0,
    ));
    let mut nan_bid = quote(
        "XYZ",
        date(2026, 12, 18),
        QuoteType::Call,
        110.0,
        1.0,
        1.1,
        100.0,
    );
    nan_bid.bid = f64::NAN;
    let mut wrong_symbol = quote(
        "XYZ",
        date(2026, 12, 18),
        QuoteType::Put,
        110.0,
        1.0,
        1.1,
        100.0,
    );
    wrong_symbol.option_symbol =
        occ_symbol("XYZ", date(2026, 12, 18), QuoteType::Call, 110.0).unwrap();
    let mut bad_strike = wrong_symbol.clone();
    bad_strike.strike = -1.0;
    quotes.extend([nan_bid, wrong_symbol, bad_strike]);
    let snapshot = build_chain(&quotes, &market("XYZ", &truth, 0.0)).unwrap();
    assert_eq!(snapshot.stats.expired, 1);
    assert_eq!(snapshot.stats.invalid, 3);
    assert_eq!(snapshot.stats.contracts, 4);
    let strikes: Vec<f64> = snapshot.rows.iter().map(|r| r.strike).collect();
    assert_eq!(strikes, vec![95.0, 100.0]);
    ChainRow::to_batch(&snapshot.rows).unwrap();
}

#[test]
fn rows_are_sorted_and_am_and_pm_series_stay_apart() {
    let truth = INDEX;
    let monthly = date(2026, 12, 18);
    let mut quotes = truth.quotes("SPX", date(2027, 3, 19), &[5000.0], 0.5);
    quotes.extend(truth.quotes("SPX", monthly, &[5100.0, 4900.0], 0.5));
    // The AM-settled standard series on the same date, under root SPX; the PM weekly under SPXW.
    let mut am = truth.quotes("SPX", monthly, &[5000.0], 0.5);
    for q in &mut am {
        q.settlement = SettlementStyle::Am;
    }
    let mut pm = truth.quotes("SPX", monthly, &[5000.0], 0.5);
    for q in &mut pm {
        q.option_symbol = occ_symbol("SPXW", monthly, q.option_type, q.strike).unwrap();
    }
    quotes.extend(am);
    quotes.extend(pm);
    quotes.reverse();
    let snapshot = build_chain(&quotes, &market("SPX", &truth, 0.0)).unwrap();
    let keys: Vec<(NaiveDate, SettlementStyle, f64)> = snapshot
        .rows
        .iter()
        .map(|r| (r.expiration, r.settlement, r.strike))
        .collect();
    use SettlementStyle::{Am, Pm};
    assert_eq!(
        keys,
        vec![
            (monthly, Am, 5000.0),
            (monthly, Pm, 4900.0),
            (monthly, Pm, 5000.0),
            (monthly, Pm, 5100.0),
            (date(2027, 3, 19), Pm, 5000.0),
        ]
    );
    assert_eq!(snapshot.expirations.len(), 3);
    assert_eq!(
        snapshot.rows[0].call.option_symbol.as_deref(),
        Some("SPX261218C05000000")
    );
    assert_eq!(
        snapshot.rows[2].call.option_symbol.as_deref(),
        Some("SPXW261218C05000000")
    );
}

#[test]
fn input_order_does_not_change_the_snapshot() {
    let truth = STOCK;
    let mut quotes = Vec::new();
    for expiration in expirations() {
        quotes.extend(truth.quotes("XYZ", expiration, &strikes(80.0, 120.0, 5.0), 0.03));
    }
    let forward = build_chain(&quotes, &market("XYZ", &truth, 0.0)).unwrap();
    quotes.reverse();
    quotes.swap(3, 17);
    let shuffled = build_chain(&quotes, &market("XYZ", &truth, 0.0)).unwrap();
    assert_eq!(forward, shuffled);
}

#[test]
fn bad_markets_and_mixed_underlyings_are_errors() {
    let truth = STOCK;
    let quotes = truth.quotes("XYZ", date(2026, 12, 18), &[100.0], 0.02);
    let err = build_chain(&quotes, &market("ABC", &truth, 0.0)).unwrap_err();
    assert!(
        matches!(&err, ChainError::UnderlyingMismatch { found, row: 0, .. } if found == "XYZ"),
        "{err}"
    );
    let bad_rate = ChainMarket {
        rate: f64::NAN,
        ..market("XYZ", &truth, 0.0)
    };
    assert!(matches!(
        build_chain(&quotes, &bad_rate),
        Err(ChainError::InvalidMarket { field: "rate", .. })
    ));
    let bad_spot = ChainMarket {
        spot: Some(0.0),
        ..market("XYZ", &truth, 0.0)
    };
    assert!(matches!(
        build_chain(&quotes, &bad_spot),
        Err(ChainError::InvalidMarket { field: "spot", .. })
    ));
    // Nothing to build and no spot given.
    assert!(matches!(
        build_chain(&[], &market("XYZ", &truth, 0.0)),
        Err(ChainError::NoSpot { .. })
    ));
    // With a spot, an empty chain is fine.
    let with_spot = ChainMarket {
        spot: Some(100.0),
        ..market("XYZ", &truth, 0.0)
    };
    let empty = build_chain(&[], &with_spot).unwrap();
    assert!(empty.rows.is_empty() && empty.expirations.is_empty());
}

#[test]
fn the_given_spot_is_used() {
    let truth = STOCK;
    let quotes = truth.quotes("XYZ", date(2026, 12, 18), &[95.0, 100.0, 105.0], 0.0);
    let market = ChainMarket {
        spot: Some(101.0),
        ..market("XYZ", &truth, 0.0)
    };
    let snapshot = build_chain(&quotes, &market).unwrap();
    assert!(snapshot.rows.iter().all(|r| r.spot == 101.0));
    // The forward comes from the quotes, not the spot; the carry absorbs the difference.
    let e = &snapshot.expirations[0];
    let expected = truth.forward(e.expiration);
    assert!(rel_close(e.forward.forward, expected, 1e-10));
    let expected_carry = truth.rate - (expected / 101.0).ln() / e.years_to_expiry;
    assert!((e.forward.carry_yield - expected_carry).abs() < 1e-8);
}

// ---------------------------------------------------------------------------------------------
// Arrow.

/// A chain with every kind of null: a side not listed, no two-sided quote, OI not attached.
fn varied_snapshot() -> ChainSnapshot {
    let truth = STOCK;
    let mut quotes = Vec::new();
    for expiration in expirations() {
        quotes.extend(truth.quotes("XYZ", expiration, &strikes(90.0, 110.0, 5.0), 0.02));
    }
    quotes.retain(|q| !(q.strike == 110.0 && q.option_type == QuoteType::Put));
    quotes[0].bid = 0.0;
    quotes[1].oi_date = date(2026, 11, 24);
    quotes[2].last = None;
    build_chain(&quotes, &market("XYZ", &truth, 0.0)).unwrap()
}

#[test]
fn arrow_round_trip() {
    let snapshot = varied_snapshot();
    let rows = &snapshot.rows;
    assert!(rows.iter().any(|r| !r.put.is_listed()));
    // A side that is not listed is null in every column, quote fields and Greeks alike.
    for row in rows.iter().filter(|r| !r.put.is_listed()) {
        assert_eq!(row.put, optics_schemas::ChainSide::default());
    }
    let batch = ChainRow::to_batch(rows).unwrap();
    assert_eq!(batch.num_rows(), rows.len());
    assert_eq!(batch.schema(), optics_schemas::chain_schema());
    assert_eq!(&ChainRow::from_batch(&batch).unwrap(), rows);

    // The Arrow entry point gives the same rows from a quote batch.
    let truth = STOCK;
    let mut quotes = Vec::new();
    for expiration in expirations() {
        quotes.extend(truth.quotes("XYZ", expiration, &strikes(90.0, 110.0, 5.0), 0.02));
    }
    let quote_batch = OptionQuote::to_batch(&quotes).unwrap();
    let market = market("XYZ", &truth, 0.0);
    let built = build_chain_batch(&quote_batch, &market).unwrap();
    let direct = build_chain(&quotes, &market).unwrap();
    assert_eq!(ChainRow::from_batch(&built.batch).unwrap(), direct.rows);
    assert_eq!(built.stats, direct.stats);
    assert_eq!(built.expirations, direct.expirations);
}

#[test]
fn a_batch_without_a_later_nullable_column_reads_and_extra_columns_are_ignored() {
    let rows = varied_snapshot().rows;
    let batch = ChainRow::to_batch(&rows).unwrap();
    // An older writer: no `call_ultima` and no `put_extrinsic`; a newer one's extra column.
    let dropped = [CALL.ultima, PUT.extrinsic];
    let mut fields: Vec<Field> = Vec::new();
    let mut columns: Vec<ArrayRef> = Vec::new();
    for (field, column) in batch.schema().fields().iter().zip(batch.columns()) {
        if !dropped.contains(&field.name().as_str()) {
            fields.push(field.as_ref().clone());
            columns.push(Arc::clone(column));
        }
    }
    fields.push(Field::new(
        "call_future_metric",
        arrow_schema::DataType::Float64,
        true,
    ));
    columns.push(Arc::new(Float64Array::from(vec![1.5; rows.len()])));
    let old = RecordBatch::try_new(Arc::new(Schema::new(fields)), columns).unwrap();
    let read = ChainRow::from_batch(&old).unwrap();
    let mut expected = rows.clone();
    for row in &mut expected {
        row.call.greeks.ultima = None;
        row.put.extrinsic = None;
    }
    assert_eq!(read, expected);
    assert!(rows.iter().any(|r| r.call.greeks.ultima.is_some()));

    // A required column is another matter.
    let schema = batch.schema();
    let (index, _) = schema.column_with_name(col::FORWARD).unwrap();
    let mut without_forward = batch.clone();
    without_forward.remove_column(index);
    let err = ChainRow::from_batch(&without_forward).unwrap_err();
    assert!(
        matches!(err, SchemaError::MissingColumn { column, .. } if column == col::FORWARD),
        "{err}"
    );
}

#[test]
fn rows_that_break_a_rule_do_not_make_a_batch() {
    let rows = varied_snapshot().rows;
    let check = |edit: &dyn Fn(&mut ChainRow), column: &str| {
        let mut bad = rows.clone();
        edit(&mut bad[3]);
        let err = ChainRow::to_batch(&bad).unwrap_err();
        assert!(
            matches!(&err, SchemaError::InvalidValue { column: c, row: 3, .. } if *c == column),
            "{column}: {err}"
        );
    };
    check(&|r| r.call.greeks.gamma = Some(f64::NAN), CALL.gamma);
    check(
        &|r| {
            r.put.oi_date = Some(date(2026, 11, 23));
        },
        PUT.oi_date,
    );
    check(&|r| r.put.open_interest = None, PUT.oi_date);
    check(
        &|r| r.call.iv_status = Some(NoIvReason::BelowIntrinsic),
        CALL.iv_status,
    );
    check(&|r| r.call.bid = Some(0.0), CALL.mid);
    check(&|r| r.forward = 0.0, col::FORWARD);
    check(&|r| r.dte += 1, col::DTE);
    check(&|r| r.strike += 1.0, CALL.option_symbol);
    check(&|r| r.put.extrinsic = Some(-0.01), PUT.extrinsic);
    check(
        &|r| std::mem::swap(&mut r.call.option_symbol, &mut r.put.option_symbol),
        CALL.option_symbol,
    );
}

#[test]
fn a_synthetic_chain_builds_a_valid_batch() {
    // The shared fixture: quotes that are not model prices (wide wings, no-bid far strikes).
    let quotes = optics_tests::fixtures::synthetic_chain("SPY", 600.0, 4, 120, 540.0, 7, 10_000);
    let quote_time = quotes[0].quote_time;
    let market = ChainMarket {
        underlying: "SPY".to_owned(),
        trade_date: date(2026, 11, 20),
        as_of: quote_time,
        spot: None,
        rate: 0.045,
        dividend_yield: 0.013,
        model: PricingModel::BlackScholesMerton,
    };
    let built = build_chain_batch(&OptionQuote::to_batch(&quotes).unwrap(), &market).unwrap();
    assert_eq!(built.stats.contracts, quotes.len());
    assert_eq!(built.batch.num_rows(), quotes.len() / 2);
    assert_eq!(built.expirations.len(), 4);
    let rows = ChainRow::from_batch(&built.batch).unwrap();
    let mut two_sided = 0;
    for side in rows.iter().flat_map(|r| [&r.call, &r.put]) {
        if side.mid.is_some() {
            two_sided += 1;
            // Solved, or a reason from the solver: never both, never neither.
            assert!(side.iv.is_some() != side.iv_status.is_some());
            assert_eq!(side.iv.is_some(), side.greeks.delta.is_some());
        } else {
            assert_eq!(side.iv_status, Some(NoIvReason::NoTwoSidedQuote));
        }
    }
    assert_eq!(two_sided, built.stats.priced);
    assert!(built.stats.solved > built.stats.priced / 2);
}

// ---------------------------------------------------------------------------------------------
// What exposures take from a built chain.

/// Quotes whose sides take every path of the exposures' reuse of the kernel's Greeks: a parity
/// forward (reused), a carry forward and an expiration with an AM and a PM series (recomputed:
/// the exposures price those on other inputs), an index on the forward.
fn quotes_for_exposures() -> Vec<(Vec<OptionQuote>, ChainMarket)> {
    let mut stock = Vec::new();
    for expiration in expirations() {
        stock.extend(STOCK.quotes("XYZ", expiration, &strikes(80.0, 120.0, 2.5), 0.02));
    }
    let mut carry = STOCK.quotes("XYZ", date(2026, 12, 18), &strikes(90.0, 110.0, 5.0), 0.01);
    for q in &mut carry {
        if q.option_type == QuoteType::Put {
            q.bid = 0.0;
        }
    }
    let monthly = date(2026, 12, 18);
    let mut index = INDEX.quotes("SPX", monthly, &strikes(4800.0, 5200.0, 50.0), 0.5);
    for q in &mut index {
        q.settlement = SettlementStyle::Am;
    }
    let mut weekly = INDEX.quotes("SPX", monthly, &strikes(4800.0, 5200.0, 25.0), 0.4);
    for q in &mut weekly {
        q.option_symbol = occ_symbol("SPXW", monthly, q.option_type, q.strike).unwrap();
    }
    index.extend(weekly);
    index.extend(INDEX.quotes(
        "SPX",
        date(2027, 3, 19),
        &strikes(4500.0, 5500.0, 100.0),
        1.0,
    ));
    vec![
        (stock, market("XYZ", &STOCK, 0.0)),
        (carry, market("XYZ", &STOCK, 0.02)),
        (index, market("SPX", &INDEX, 0.0)),
    ]
}

#[test]
fn the_workers_batch_and_exposure_inputs_are_those_of_the_rows() {
    use crate::exposure::contracts_from_chain;
    let mut with_greeks = 0;
    for (quotes, market) in quotes_for_exposures() {
        let symbols: Vec<Option<ContractSymbol>> = quotes
            .iter()
            .map(|q| ContractSymbol::parse(&q.option_symbol))
            .collect();
        let built = build_chain_with_symbols(&quotes, &symbols, &market, true).unwrap();
        let (contracts, built_context) = built.exposure_inputs.clone().unwrap();
        let chain = build_chain(&quotes, &market).unwrap();
        // The columns written directly are the row writer's columns of the same rows.
        assert_eq!(built.batch, ChainRow::to_batch(&chain.rows).unwrap());
        assert_eq!(built.batch.schema(), optics_schemas::chain_schema());
        assert_eq!(
            (built.spot, &built.expirations, built.stats),
            (chain.spot, &chain.expirations, chain.stats)
        );
        // Every side carries its quote's own fields.
        let by_symbol: std::collections::HashMap<&str, &OptionQuote> = quotes
            .iter()
            .map(|q| (q.option_symbol.as_str(), q))
            .collect();
        for side in chain.rows.iter().flat_map(|r| [&r.call, &r.put]) {
            let Some(symbol) = side.option_symbol.as_deref() else {
                continue;
            };
            let q = by_symbol[symbol];
            assert_eq!(
                (side.quote_time, side.bid, side.ask, side.last),
                (Some(q.quote_time), Some(q.bid), Some(q.ask), q.last)
            );
            assert_eq!(
                (side.bid_size, side.ask_size, side.volume),
                (Some(q.bid_size), Some(q.ask_size), Some(q.volume))
            );
            assert_eq!(
                (side.open_interest, side.oi_date),
                (Some(q.open_interest), Some(q.oi_date))
            );
        }
        // The exposure inputs are those the rows give, bit for bit (Debug prints every float
        // exactly, with the sign of zero), whether the kernel's Greeks were reused or not.
        let (recomputed, context) = contracts_from_chain(&chain.rows).unwrap();
        assert_eq!(built_context, context);
        assert_eq!(contracts.len(), recomputed.len());
        for (a, b) in contracts.iter().zip(&recomputed) {
            assert_eq!(format!("{a:?}"), format!("{b:?}"));
        }
        // And a side's Greeks are the pricing function's at the chain's IV.
        for contract in &contracts {
            if let (Some(iv), Some(greeks)) = (contract.iv, contract.greeks) {
                let forward = context.forward(contract.expiration, contract.years_to_expiry);
                let inputs = contract
                    .pricing_inputs(&context, forward, context.spot)
                    .unwrap();
                let expected = crate::pricing::greeks(&inputs, iv).unwrap();
                assert_eq!(format!("{greeks:?}"), format!("{expected:?}"));
                with_greeks += 1;
            }
        }
    }
    assert!(with_greeks > 100);
}

#[test]
fn symbols_parsed_beforehand_and_quotes_in_row_order_give_the_same_chain() {
    let monthly = date(2026, 12, 18);
    let mut quotes = INDEX.quotes("SPX", monthly, &strikes(4800.0, 5200.0, 50.0), 0.5);
    for q in &mut quotes {
        q.settlement = SettlementStyle::Am;
    }
    let mut weekly = INDEX.quotes("SPX", monthly, &strikes(4800.0, 5200.0, 25.0), 0.4);
    for q in &mut weekly {
        q.option_symbol = occ_symbol("SPXW", monthly, q.option_type, q.strike).unwrap();
    }
    quotes.extend(weekly);
    quotes.extend(INDEX.quotes("SPX", date(2027, 3, 19), &[5000.0], 1.0));
    // A superseded quote, a malformed symbol, an expired contract.
    let mut older = quotes[3].clone();
    older.quote_time -= chrono::TimeDelta::minutes(5);
    older.bid += 1.0;
    quotes.push(older);
    let mut malformed = quotes[5].clone();
    malformed.option_symbol = "SPX 26121".into();
    quotes.push(malformed);
    quotes.extend(INDEX.quotes("SPX", date(2026, 11, 20), &[5000.0], 1.0));
    let market = ChainMarket {
        as_of: Utc.with_ymd_and_hms(2026, 11, 21, 15, 0, 0).unwrap(),
        trade_date: date(2026, 11, 21),
        ..market("SPX", &INDEX, 0.0)
    };
    let expected = build_chain(&quotes, &market).unwrap();
    assert_eq!(expected.stats.superseded, 1);
    assert_eq!(expected.stats.invalid, 1);
    assert_eq!(expected.stats.expired, 2);

    let mut in_row_order = quotes.clone();
    in_row_order.sort_by(|a, b| {
        (
            a.expiration,
            a.settlement,
            a.strike.total_cmp(&b.strike),
            a.option_type,
        )
            .cmp(&(
                b.expiration,
                b.settlement,
                std::cmp::Ordering::Equal,
                b.option_type,
            ))
            .then(a.quote_time.cmp(&b.quote_time))
    });
    for quotes in [&quotes, &in_row_order] {
        let symbols: Vec<Option<ContractSymbol>> = quotes
            .iter()
            .map(|q| ContractSymbol::parse(&q.option_symbol))
            .collect();
        let built = build_chain_with_symbols(quotes, &symbols, &market, false).unwrap();
        assert!(built.exposure_inputs.is_none());
        assert_eq!(ChainRow::from_batch(&built.batch).unwrap(), expected.rows);
        assert_eq!(
            (built.spot, &built.expirations, built.stats),
            (expected.spot, &expected.expirations, expected.stats)
        );
        assert_eq!(build_chain(quotes, &market).unwrap(), expected);
    }
}
