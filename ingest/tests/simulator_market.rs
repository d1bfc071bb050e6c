//! The simulator's implied-vol surface (SSVI, no static arbitrage) and its chain snapshots
//! (quotes that validate, bracket the model, reproduce the surface and respect parity).

mod support;

use std::collections::HashMap;

use chrono::{DateTime, NaiveDate, NaiveTime, Utc};
use optics_compute::pricing::{OptionInputs, OptionType, PricingModel, implied_vol, price};
use optics_compute::time::{NyseCalendar, new_york_datetime};
use optics_ingest::simulator::quotes::{ChainSpec, SimulatedQuote, chain_snapshot, simulate_chain};
use optics_ingest::simulator::surface::{EarningsVariance, Surface, SurfaceInputs};
use optics_ingest::simulator::universe::{Underlying, Universe};
use optics_schemas::{OptionQuote, Record};
use support::correlation;

const RATE: f64 = 0.04;
const SEED: u64 = 7;

fn date(year: i32, month: u32, day: u32) -> NaiveDate {
    NaiveDate::from_ymd_opt(year, month, day).unwrap()
}

fn at(day: NaiveDate, hour: u32, minute: u32) -> DateTime<Utc> {
    new_york_datetime(day, NaiveTime::from_hms_opt(hour, minute, 0).unwrap()).to_utc()
}

fn underlying(symbol: &str) -> Underlying {
    Universe::real().get(symbol).unwrap().clone()
}

/// A selection of every kind of underlying, each in a few regimes, some with an earnings event.
fn surfaces() -> Vec<(String, Surface)> {
    let mut universe: Vec<Underlying> = ["SPX", "NDX", "RUT", "VIX", "SPY", "QQQ", "XLE", "AAPL"]
        .iter()
        .map(|s| underlying(s))
        .collect();
    universe.extend(
        Universe::scaled(Universe::real().len() + 3, 11)
            .iter()
            .rev()
            .take(3)
            .cloned(),
    );
    universe.extend(
        Universe::real()
            .iter()
            .filter(|u| u.earnings.is_some())
            .take(10)
            .cloned(),
    );
    let mut out = Vec::new();
    for u in &universe {
        for level in [0.6, 1.0, 2.5] {
            let mut inputs = SurfaceInputs::at_level(level);
            out.push((
                format!("{} x{level}", u.symbol),
                Surface::for_underlying(u, &inputs),
            ));
            inputs
                .events
                .push(EarningsVariance::typical(u, 12.0 / 365.0));
            inputs
                .events
                .push(EarningsVariance::typical(u, 100.0 / 365.0));
            out.push((
                format!("{} x{level} +earnings", u.symbol),
                Surface::for_underlying(u, &inputs),
            ));
        }
    }
    out
}

const TIMES: [f64; 12] = [
    0.5 / 365.0 / 24.0,
    1.0 / 365.0,
    3.0 / 365.0,
    11.0 / 365.0,
    12.0 / 365.0,
    13.0 / 365.0,
    30.0 / 365.0,
    0.25,
    0.5,
    1.0,
    2.0,
    3.0,
];

#[test]
fn ssvi_parameters_satisfy_the_butterfly_condition_everywhere() {
    for u in Universe::real()
        .iter()
        .chain(Universe::scaled(200, 3).iter())
    {
        let s = Surface::for_underlying(u, &SurfaceInputs::normal());
        assert!(s.rho.abs() < 1.0, "{}", u.symbol);
        assert!(
            s.eta > 0.0 && s.eta * (1.0 + s.rho.abs()) <= 2.0,
            "{}",
            u.symbol
        );
    }
}

#[test]
fn call_prices_are_convex_in_strike() {
    // Undiscounted calls on a unit forward: C(K) must be convex (non-negative butterflies).
    let h = 0.0025;
    for (name, surface) in surfaces() {
        for &t in &TIMES {
            let call = |strike: f64| {
                let inputs = OptionInputs {
                    option_type: OptionType::Call,
                    model: PricingModel::Black76,
                    underlying: 1.0,
                    strike,
                    years: t,
                    rate: 0.0,
                    dividend_yield: 0.0,
                };
                price(&inputs, surface.iv(strike.ln(), t)).unwrap()
            };
            let strikes: Vec<f64> = (0..=1000).map(|i| 0.25 + i as f64 * h).collect();
            let prices: Vec<f64> = strikes.iter().map(|&k| call(k)).collect();
            for i in 1..prices.len() - 1 {
                let butterfly = prices[i - 1] - 2.0 * prices[i] + prices[i + 1];
                assert!(
                    butterfly >= -1e-13,
                    "{name}: t={t} K={} butterfly {butterfly:e}",
                    strikes[i]
                );
                assert!(
                    prices[i + 1] <= prices[i] + 1e-15,
                    "{name}: calls decrease in K"
                );
            }
        }
    }
}

#[test]
fn total_variance_is_non_decreasing_in_time() {
    for (name, surface) in surfaces() {
        let times: Vec<f64> = (1..=1500).map(|i| i as f64 / 500.0).collect();
        for i in 0..=60 {
            let k = -1.5 + i as f64 * 0.04;
            let mut previous = 0.0;
            for &t in TIMES.iter().chain(&times) {
                if t < previous {
                    continue;
                }
                let w = surface.total_variance(k, t);
                let w_before = surface.total_variance(k, previous.max(1e-9));
                assert!(
                    w >= w_before - 1e-15,
                    "{name}: k={k} t={t} w={w} < {w_before}"
                );
                previous = t;
            }
        }
    }
}

#[test]
fn index_put_skew_is_steeper_than_a_stocks() {
    let t = 30.0 / 365.0;
    let skew = |symbol: &str| {
        let s = Surface::for_underlying(&underlying(symbol), &SurfaceInputs::normal());
        // Vol points per 10 % of log-moneyness, put side minus call side, relative to ATM.
        (s.iv(-0.05, t) - s.iv(0.05, t)) / s.atm_iv(t)
    };
    for index in ["SPX", "NDX", "SPY", "QQQ"] {
        for stock in ["AAPL", "MSFT"] {
            assert!(
                skew(index) > skew(stock) && skew(stock) > 0.0,
                "{index} vs {stock}"
            );
        }
    }
    assert!(skew("VIX") < 0.0, "VIX has a call skew");
}

#[test]
fn earnings_variance_lifts_only_the_expirations_that_span_it() {
    let aapl = underlying("AAPL");
    let plain = Surface::for_underlying(&aapl, &SurfaceInputs::normal());
    let event = EarningsVariance::typical(&aapl, 10.0 / 365.0);
    let with = Surface::for_underlying(
        &aapl,
        &SurfaceInputs {
            vol_level: 1.0,
            events: vec![event],
        },
    );
    let before = 9.0 / 365.0;
    let after = 20.0 / 365.0;
    assert_eq!(
        with.atm_total_variance(before),
        plain.atm_total_variance(before)
    );
    let extra = with.atm_total_variance(after) - plain.atm_total_variance(after);
    assert!((extra - event.move_sigma * event.move_sigma).abs() < 1e-15);
    assert!(with.atm_iv(after) > plain.atm_iv(after) + 0.02);
}

// ---------------------------------------------------------------------------------------------
// Chain snapshots.

const TRADE_DATE: (i32, u32, u32) = (2026, 11, 18); // a Wednesday

fn trade_date() -> NaiveDate {
    date(TRADE_DATE.0, TRADE_DATE.1, TRADE_DATE.2)
}

fn simulate(u: &Underlying, instant: DateTime<Utc>, seed: u64) -> Vec<SimulatedQuote> {
    simulate_at(u, instant, seed, u.start_price)
}

fn simulate_at(
    u: &Underlying,
    instant: DateTime<Utc>,
    seed: u64,
    spot: f64,
) -> Vec<SimulatedQuote> {
    let surface = Surface::for_underlying(u, &SurfaceInputs::normal());
    let spec = ChainSpec {
        underlying: u,
        trade_date: trade_date(),
        instant,
        spot,
        previous_close: u.start_price,
        surface: &surface,
        rate: RATE,
        seed,
    };
    simulate_chain(&spec, &NyseCalendar)
}

fn afternoon() -> DateTime<Utc> {
    at(trade_date(), 14, 30)
}

#[test]
fn every_quote_of_every_real_underlying_validates_and_brackets_the_model() {
    let mut bursts = 0;
    let mut total = 0;
    for u in Universe::real().iter() {
        let quotes = simulate(u, afternoon(), SEED);
        assert!(!quotes.is_empty(), "{}", u.symbol);
        let rows: Vec<OptionQuote> = quotes.iter().map(|q| q.quote.clone()).collect();
        OptionQuote::to_batch(&rows).unwrap_or_else(|e| panic!("{}: {e}", u.symbol));
        for q in &quotes {
            let r = &q.quote;
            assert!(r.bid >= 0.0 && r.ask > 0.0, "{}", r.option_symbol);
            assert!(
                r.bid <= q.model_price && q.model_price <= r.ask,
                "{}: {} ≤ {} ≤ {}",
                r.option_symbol,
                r.bid,
                q.model_price,
                r.ask
            );
            assert_eq!(r.bid == 0.0, r.bid_size == 0, "{}", r.option_symbol);
            assert!(r.ask_size > 0);
            assert_eq!(r.oi_date, date(2026, 11, 17));
            assert_eq!(r.quote_time, afternoon());
            assert_eq!(r.underlying_price, u.start_price);
            if let Some(last) = r.last {
                assert!(last >= r.bid && last <= r.ask && r.volume > 0);
            }
            if r.volume > 3 * r.open_interest.max(100) {
                bursts += 1;
            }
            total += 1;
        }
    }
    assert!(bursts > 0, "some unusual volume bursts");
    assert!(
        bursts * 100 < total,
        "bursts stay rare: {bursts} of {total}"
    );
}

#[test]
fn far_wings_have_no_bid() {
    let quotes = simulate(&underlying("AAPL"), afternoon(), SEED);
    let no_bid = quotes.iter().filter(|q| q.quote.bid == 0.0).count();
    assert!(no_bid > 0);
    for q in quotes.iter().filter(|q| q.model_price < 0.01) {
        assert_eq!(q.quote.bid, 0.0);
    }
}

/// IV of `premium` for the quote's contract, if it has one.
fn iv_of(q: &SimulatedQuote, premium: f64) -> Option<f64> {
    implied_vol(&q.inputs, premium).ok()
}

#[test]
fn mids_reproduce_the_surface_within_the_spread() {
    for symbol in ["SPX", "SPY", "AAPL", "XLE", "VIX"] {
        let quotes = simulate(&underlying(symbol), afternoon(), SEED);
        let mut checked = 0;
        let mut near = Vec::new();
        for q in quotes.iter().filter(|q| q.quote.bid > 0.0) {
            let Some(iv_mid) = iv_of(q, q.quote.mid()) else {
                continue; // the mid is at or below intrinsic: a deep in-the-money wide quote
            };
            let low = iv_of(q, q.quote.bid).unwrap_or(0.0);
            let high = iv_of(q, q.quote.ask).unwrap_or(f64::INFINITY);
            let tol = 1e-9;
            assert!(
                low - tol <= iv_mid && iv_mid <= high + tol,
                "{}: {low} ≤ {iv_mid} ≤ {high}",
                q.quote.option_symbol
            );
            assert!(
                low - tol <= q.model_iv && q.model_iv <= high + tol,
                "{}",
                q.quote.option_symbol
            );
            assert!((iv_mid - q.model_iv).abs() <= high - low + tol);
            checked += 1;
            let k = (q.inputs.strike / q.forward).ln();
            if k.abs() < 0.05 && q.inputs.years > 14.0 / 365.0 {
                near.push((iv_mid - q.model_iv).abs());
            }
        }
        assert!(checked > 50, "{symbol}: {checked}");
        let worst = near.iter().copied().fold(0.0, f64::max);
        assert!(
            !near.is_empty() && worst < 0.01,
            "{symbol}: near-money mids off by {worst}"
        );
    }
}

#[test]
fn put_call_parity_holds_on_mids_within_the_spreads() {
    for symbol in ["SPX", "SPY", "AAPL", "KO"] {
        let Some(u) = Universe::real().get(symbol).cloned() else {
            continue;
        };
        let quotes = simulate(&u, afternoon(), SEED);
        let mut pairs: HashMap<(NaiveDate, u64), Vec<&SimulatedQuote>> = HashMap::new();
        for q in &quotes {
            let key = (q.quote.expiration, (q.quote.strike * 1000.0).round() as u64);
            pairs.entry(key).or_default().push(q);
        }
        let mut checked = 0;
        for legs in pairs.values() {
            assert_eq!(legs.len(), 2);
            let (call, put) = if legs[0].inputs.option_type == OptionType::Call {
                (legs[0], legs[1])
            } else {
                (legs[1], legs[0])
            };
            let forward_value = call.inputs.discount() * (call.forward - call.inputs.strike);
            let gap = call.quote.mid() - put.quote.mid() - forward_value;
            let allowed = 0.5 * (call.quote.ask - call.quote.bid + put.quote.ask - put.quote.bid);
            assert!(
                gap.abs() <= allowed + 1e-9,
                "{}: gap {gap}",
                call.quote.option_symbol
            );
            checked += 1;
        }
        assert!(checked > 20, "{symbol}");
    }
}

#[test]
fn snapshots_are_deterministic() {
    let u = underlying("SPX");
    let surface = Surface::for_underlying(&u, &SurfaceInputs::normal());
    let spec = ChainSpec {
        underlying: &u,
        trade_date: trade_date(),
        instant: afternoon(),
        spot: 6_712.5,
        previous_close: 6_690.0,
        surface: &surface,
        rate: RATE,
        seed: SEED,
    };
    let a = chain_snapshot(&spec, &NyseCalendar);
    let b = chain_snapshot(&spec, &NyseCalendar);
    assert_eq!(a, b);
    let other = chain_snapshot(
        &ChainSpec {
            seed: SEED + 1,
            ..spec
        },
        &NyseCalendar,
    );
    assert_eq!(a.len(), other.len());
    assert_ne!(a, other, "another seed gives other sizes and interest");
}

#[test]
fn volume_accumulates_through_the_session_and_open_interest_is_stable_within_it() {
    let u = underlying("SPY");
    let open = simulate(&u, at(trade_date(), 9, 30), SEED);
    // The underlying moves during the session; the listed strikes and open interest do not.
    let noon = simulate_at(&u, at(trade_date(), 12, 0), SEED, u.start_price * 0.99);
    let close = simulate_at(&u, at(trade_date(), 16, 0), SEED, u.start_price * 1.015);
    assert!(open.iter().all(|q| q.quote.volume == 0));
    assert!(open.iter().all(|q| q.quote.last.is_none()));
    // The 0DTE expiration is gone at the close; compare the contracts present in all three.
    let by_symbol = |qs: &[SimulatedQuote]| -> HashMap<String, OptionQuote> {
        qs.iter()
            .map(|q| (q.quote.option_symbol.clone(), q.quote.clone()))
            .collect()
    };
    let (noon, close) = (by_symbol(&noon), by_symbol(&close));
    let mut traded = 0;
    for (symbol, q) in &noon {
        if let Some(c) = close.get(symbol) {
            assert!(c.volume >= q.volume, "{symbol}");
            assert_eq!(c.open_interest, q.open_interest, "{symbol}");
            traded += usize::from(c.volume > 0);
        }
    }
    assert!(traded > 100);
}

#[test]
fn open_interest_concentrates_near_the_money() {
    let u = underlying("SPX");
    let quotes = simulate(&u, afternoon(), SEED);
    let (mut near, mut near_n, mut far, mut far_n) = (0u64, 0u64, 0u64, 0u64);
    for q in &quotes {
        let k = (q.inputs.strike / q.forward).ln() / (q.model_iv * q.inputs.years.sqrt());
        if k.abs() < 0.5 {
            near += q.quote.open_interest;
            near_n += 1;
        } else if k.abs() > 3.0 {
            far += q.quote.open_interest;
            far_n += 1;
        }
    }
    assert!(near_n > 0 && far_n > 0);
    assert!(near / near_n > 3 * (far / far_n));
}

#[test]
fn chain_sizes_are_realistic() {
    let count = |symbol: &str| simulate(&underlying(symbol), afternoon(), SEED).len();
    let spx = count("SPX");
    assert!((2_000..60_000).contains(&spx), "SPX {spx}");
    for stock in ["AAPL", "KO", "XOM"] {
        if Universe::real().contains(stock) {
            let n = count(stock);
            assert!((20..3_000).contains(&n), "{stock} {n}");
        }
    }
    for u in Universe::real().iter() {
        eprintln!("{} {}", u.symbol, simulate(u, afternoon(), SEED).len());
    }
}

// ---------------------------------------------------------------------------------------------
// Underlying paths.

use optics_ingest::simulator::market::{MarketFactor, PricePath, simulate_path};

fn log_returns(path: &PricePath) -> Vec<f64> {
    path.closes.windows(2).map(|w| (w[1] / w[0]).ln()).collect()
}

fn annualised_vol(returns: &[f64]) -> f64 {
    let n = returns.len() as f64;
    let mean = returns.iter().sum::<f64>() / n;
    let var = returns.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (var * 252.0).sqrt()
}

fn long_sample(seed: u64) -> (MarketFactor, Vec<PricePath>) {
    let factor = MarketFactor::simulate(seed, date(2000, 1, 3), date(2019, 12, 31), &NyseCalendar);
    let paths = ["SPY", "SPX", "AAPL", "XLE", "KO", "TSLA", "VIX"]
        .iter()
        .filter_map(|s| Universe::real().get(s).cloned())
        .map(|u| simulate_path(&u, &factor, seed, None, &NyseCalendar))
        .collect();
    (factor, paths)
}

#[test]
fn paths_are_deterministic_and_seed_dependent() {
    let (fa, a) = long_sample(5);
    let (fb, b) = long_sample(5);
    assert_eq!(fa, fb);
    assert_eq!(a, b);
    let (_, c) = long_sample(6);
    assert_ne!(a[2].closes, c[2].closes);
    for path in &a {
        assert_eq!(path.closes.len(), fa.len());
        assert!(
            path.closes.iter().all(|c| c.is_finite() && *c > 0.0),
            "{}",
            path.symbol
        );
    }
}

#[test]
fn long_run_statistics_are_sane() {
    // 20 years of daily closes: realised vol within [0.7, 1.15] × base IV (the target is 0.9 ×,
    // the variance risk premium), correlation to SPY within 0.15 of the universe's.
    let (_, paths) = long_sample(2026);
    let universe = Universe::real();
    let spy = log_returns(&paths[0]);
    for path in &paths {
        let u = universe.get(&path.symbol).unwrap();
        let r = log_returns(path);
        let realised = annualised_vol(&r);
        if path.symbol != "VIX" {
            assert!(
                (0.7 * u.base_iv..1.15 * u.base_iv).contains(&realised),
                "{}: realised {realised} vs base IV {}",
                path.symbol,
                u.base_iv
            );
            let rho = correlation(&r, &spy);
            assert!(
                (rho - u.correlation).abs() < 0.15,
                "{}: ρ {rho}",
                path.symbol
            );
        } else {
            assert!(correlation(&r, &spy) < -0.25, "VIX rises when SPY falls");
            let min = path.closes.iter().copied().fold(f64::INFINITY, f64::min);
            let max = path.closes.iter().copied().fold(0.0, f64::max);
            assert!(min > 5.0 && max < 150.0, "VIX in [{min}, {max}]");
        }
    }
    let spx = correlation(&log_returns(&paths[1]), &spy);
    assert!(spx > 0.97, "SPX tracks SPY: {spx}");
}

#[test]
fn earnings_days_gap() {
    let (_, paths) = long_sample(99);
    let aapl = paths.iter().find(|p| p.symbol == "AAPL").unwrap();
    assert!(
        (75..=85).contains(&aapl.earnings.len()),
        "{} reports",
        aapl.earnings.len()
    );
    let r = log_returns(aapl);
    let (mut on, mut on_n, mut off, mut off_n) = (0.0, 0, 0.0, 0);
    for (i, ret) in r.iter().enumerate() {
        let day = aapl.dates[i + 1];
        if aapl.earnings.iter().any(|e| e.reaction_date == day) {
            on += ret.abs();
            on_n += 1;
        } else {
            off += ret.abs();
            off_n += 1;
        }
    }
    assert!(on / f64::from(on_n) > 2.0 * off / f64::from(off_n));
    assert!(
        paths
            .iter()
            .find(|p| p.symbol == "SPY")
            .unwrap()
            .earnings
            .is_empty()
    );
}
