//! A hand-built book whose answer is known, through bus → worker → store: the published
//! exposure summary (flip level, walls, total GEX) and flow rows checked against closed-form
//! Black–Scholes written here, not against the quantitative core.
//!
//! The book: spot 100, rate 4 %, no dividend, one expiration 30 days out, every contract priced
//! at 25 % volatility with a one-cent spread around the model value (so the mids are the model
//! values and the quotes imply the true forward and volatility). Open interest is heavy in the
//! 110 calls and the 90 puts, so the call wall is 110, the put wall 90, and total GEX changes
//! sign once between them.

use std::f64::consts::PI;
use std::time::Duration;

use chrono::NaiveDate;
use optics_compute::time::years_to_expiry;
use optics_pipeline::store::SnapshotKey;
use optics_pipeline::worker::WorkerConfig;
use optics_schemas::bus::{snapshot_datasets, topics};
use optics_schemas::{
    DataBatch, ExerciseStyle, ExposureSummaryRow, FlowSnapshotRow, Message, MoneynessCode,
    OptionQuote, OptionType, SettlementStyle, occ_symbol,
};

use crate::support::{
    instant, memory_store, next_snapshot_events, read_rows, runtime, trade_date,
    worker_on_embedded_bus,
};

const UNDERLYING: &str = "HBT";
const SPOT: f64 = 100.0;
const RATE: f64 = 0.04;
const VOL: f64 = 0.25;

fn expiration() -> NaiveDate {
    NaiveDate::from_ymd_opt(2026, 12, 18).unwrap()
}

/// Years to expiry by the service's convention (calendar time to 16:00 New York / 365).
fn years() -> f64 {
    years_to_expiry(instant(), expiration())
}

// ---------------------------------------------------------------------------------------------
// Closed-form Black–Scholes (no dividend), written out here.

fn normal_pdf(x: f64) -> f64 {
    (-0.5 * x * x).exp() / (2.0 * PI).sqrt()
}

/// erf by its Taylor series below 3 (about 1e-14 there) and its continued fraction above.
fn erf(x: f64) -> f64 {
    let a = x.abs();
    let value = if a < 3.0 {
        let (mut term, mut sum, mut n) = (a, a, 0.0);
        while term.abs() > 1e-17 * sum.abs() {
            n += 1.0;
            term *= -a * a / n;
            sum += term / (2.0 * n + 1.0);
        }
        2.0 / PI.sqrt() * sum
    } else {
        // erfc(a) = e^{-a²}/√π · 1/(a + 1/2/(a + 1/(a + 3/2/(a + …)))).
        let mut fraction = a;
        for k in (1..60).rev() {
            fraction = a + f64::from(k) / 2.0 / fraction;
        }
        1.0 - (-a * a).exp() / PI.sqrt() / fraction
    };
    value.copysign(x)
}

fn normal_cdf(x: f64) -> f64 {
    0.5 * (1.0 + erf(x / std::f64::consts::SQRT_2))
}

fn d1(spot: f64, strike: f64) -> f64 {
    let t = years();
    ((spot / strike).ln() + (RATE + 0.5 * VOL * VOL) * t) / (VOL * t.sqrt())
}

fn value(option_type: OptionType, spot: f64, strike: f64) -> f64 {
    let t = years();
    let (d1, d2) = (d1(spot, strike), d1(spot, strike) - VOL * t.sqrt());
    let discount = (-RATE * t).exp();
    match option_type {
        OptionType::Call => spot * normal_cdf(d1) - strike * discount * normal_cdf(d2),
        OptionType::Put => strike * discount * normal_cdf(-d2) - spot * normal_cdf(-d1),
    }
}

fn delta(option_type: OptionType, strike: f64) -> f64 {
    match option_type {
        OptionType::Call => normal_cdf(d1(SPOT, strike)),
        OptionType::Put => normal_cdf(d1(SPOT, strike)) - 1.0,
    }
}

fn gamma(spot: f64, strike: f64) -> f64 {
    normal_pdf(d1(spot, strike)) / (spot * VOL * years().sqrt())
}

// ---------------------------------------------------------------------------------------------
// The book.

#[derive(Debug, Clone, Copy)]
struct Contract {
    option_type: OptionType,
    strike: f64,
    open_interest: u64,
    volume: u64,
}

fn contracts() -> Vec<Contract> {
    let mut contracts = Vec::new();
    for step in 0..=8 {
        let strike = 80.0 + 5.0 * f64::from(step);
        for option_type in [OptionType::Call, OptionType::Put] {
            let (open_interest, volume) = match (option_type, strike as u32) {
                (OptionType::Call, 110) => (20_000, 45_000),
                (OptionType::Put, 90) => (30_000, 1_200),
                (OptionType::Call, 120) | (OptionType::Put, 80) => (1_000, 0),
                (OptionType::Put, 100) => (0, 150),
                _ => (1_000, 40 + step as u64),
            };
            contracts.push(Contract {
                option_type,
                strike,
                open_interest,
                volume,
            });
        }
    }
    contracts
}

fn quotes() -> Vec<OptionQuote> {
    contracts()
        .iter()
        .map(|c| {
            let value = value(c.option_type, SPOT, c.strike);
            let half_spread = 0.005_f64.min(0.5 * value);
            OptionQuote {
                underlying: UNDERLYING.into(),
                option_symbol: occ_symbol(UNDERLYING, expiration(), c.option_type, c.strike)
                    .unwrap(),
                expiration: expiration(),
                strike: c.strike,
                option_type: c.option_type,
                settlement: SettlementStyle::Pm,
                exercise_style: ExerciseStyle::European,
                bid: value - half_spread,
                ask: value + half_spread,
                bid_size: 10,
                ask_size: 10,
                last: None,
                volume: c.volume,
                open_interest: c.open_interest,
                oi_date: NaiveDate::from_ymd_opt(2026, 11, 17).unwrap(),
                quote_time: instant(),
                underlying_price: SPOT,
            }
        })
        .collect()
}

/// Dealer GEX of one contract at a hypothetical spot, dollars per 1 % move: calls +, puts −.
fn gex(c: &Contract, spot: f64) -> f64 {
    let sign = match c.option_type {
        OptionType::Call => 1.0,
        OptionType::Put => -1.0,
    };
    sign * gamma(spot, c.strike) * c.open_interest as f64 * 100.0 * spot * spot * 0.01
}

fn total_gex(spot: f64) -> f64 {
    contracts().iter().map(|c| gex(c, spot)).sum()
}

/// The zero of total GEX nearest spot within ±20 %: a fine scan for sign changes, then
/// bisection.
fn expected_flip() -> f64 {
    let mut roots = Vec::new();
    let steps = 4_000;
    let at = |i: i32| SPOT * (0.8 + 0.4 * f64::from(i) / f64::from(steps));
    for i in 0..steps {
        let (mut lo, mut hi) = (at(i), at(i + 1));
        if (total_gex(lo) > 0.0) == (total_gex(hi) > 0.0) {
            continue;
        }
        for _ in 0..200 {
            let mid = 0.5 * (lo + hi);
            if (total_gex(mid) > 0.0) == (total_gex(lo) > 0.0) {
                lo = mid;
            } else {
                hi = mid;
            }
        }
        roots.push(0.5 * (lo + hi));
    }
    assert_eq!(
        roots.len(),
        1,
        "the book is built with one crossing: {roots:?}"
    );
    roots[0]
}

/// The strike whose `side` GEX at spot is largest in magnitude, and that GEX.
fn expected_wall(option_type: OptionType) -> (f64, f64) {
    contracts()
        .iter()
        .filter(|c| c.option_type == option_type)
        .map(|c| (c.strike, gex(c, SPOT)))
        .max_by(|a, b| a.1.abs().total_cmp(&b.1.abs()))
        .unwrap()
}

fn close(got: f64, expected: f64, relative: f64) -> bool {
    (got - expected).abs() <= relative * expected.abs().max(1.0)
}

#[test]
fn a_hand_built_book_publishes_the_known_flip_walls_and_flow() {
    let store = memory_store();
    let key = |dataset: &str| SnapshotKey::new(dataset, trade_date(), UNDERLYING);
    let (summary, flow) = runtime().block_on(async {
        let config = WorkerConfig {
            interval: Duration::from_millis(20),
            rate: RATE,
            ..WorkerConfig::default()
        };
        let (bus, mut announcements, worker) =
            worker_on_embedded_bus(&store, instant(), config).await;
        let batch = DataBatch::from_rows(UNDERLYING, &quotes()).unwrap();
        bus.publish(topics::OPTION_QUOTES, Message::Data(batch))
            .await
            .unwrap();
        // One message, so one cycle publishes every dataset; wait for the flow's event.
        let mut datasets = Vec::new();
        while !datasets.contains(&snapshot_datasets::FLOW.to_owned()) {
            for event in next_snapshot_events(&mut announcements, 8).await {
                datasets.push(event.dataset);
            }
        }
        let stats = worker.stop().await;
        assert_eq!(stats.build_failures, 0);
        let summary_key = key(snapshot_datasets::EXPOSURE_SUMMARY);
        let summary = read_rows(&store, &summary_key, ExposureSummaryRow::from_batch).await;
        let flow_key = key(snapshot_datasets::FLOW);
        let flow = read_rows(&store, &flow_key, FlowSnapshotRow::from_batch).await;
        (summary, flow)
    });

    // The aggregate row (and the one expiration's, the same book).
    assert_eq!(summary.len(), 2);
    assert!(summary[0].expiration.is_none());
    assert_eq!(summary[1].expiration, Some(expiration()));
    let (call_wall, call_wall_gex) = expected_wall(OptionType::Call);
    let (put_wall, put_wall_gex) = expected_wall(OptionType::Put);
    assert_eq!((call_wall, put_wall), (110.0, 90.0), "the book's design");
    let flip = expected_flip();
    assert!(flip > 90.0 && flip < 110.0);
    let total = total_gex(SPOT);
    for row in &summary {
        assert_eq!(row.spot, SPOT);
        assert_eq!(row.call_wall, Some(call_wall));
        assert_eq!(row.put_wall, Some(put_wall));
        let got = row.call_wall_gex.unwrap();
        assert!(
            close(got, call_wall_gex, 1e-7),
            "call wall GEX {got} vs {call_wall_gex}"
        );
        let got = row.put_wall_gex.unwrap();
        assert!(
            close(got, put_wall_gex, 1e-7),
            "put wall GEX {got} vs {put_wall_gex}"
        );
        let got = row.net.gamma;
        assert!(close(got, total, 1e-7), "total GEX {got} vs {total}");
        let got = row.flip_level.expect("a flip level");
        assert!(
            (got - flip).abs() < 1e-6 * SPOT,
            "flip level {got} vs {flip}"
        );
        assert_eq!(row.flip_degeneracy, None);
    }

    // Flow: one row per contract that traded, in expiration, strike, call-before-put order.
    let traded: Vec<Contract> = contracts().into_iter().filter(|c| c.volume > 0).collect();
    assert_eq!(flow.len(), traded.len());
    for (row, c) in flow.iter().zip(&traded) {
        let what = format!("{:?} {}", c.option_type, c.strike);
        assert_eq!(
            (row.option_type, row.strike),
            (c.option_type, c.strike),
            "{what}"
        );
        assert_eq!(row.expiration, expiration());
        assert_eq!(row.dte, 30);
        assert_eq!((row.volume, row.open_interest), (c.volume, c.open_interest));
        let mid = value(c.option_type, SPOT, c.strike);
        let premium = c.volume as f64 * mid * 100.0;
        let got = row.premium_usd.unwrap();
        assert!(
            close(got, premium, 1e-9),
            "{what}: premium {got} vs {premium}"
        );
        let ratio = (c.open_interest > 0).then(|| c.volume as f64 / c.open_interest as f64);
        assert_eq!(row.volume_oi_ratio, ratio, "{what}");
        let unusual = c.volume >= 100 && (c.open_interest == 0 || c.volume >= 2 * c.open_interest);
        assert_eq!(row.is_unusual, unusual, "{what}");
        let in_the_money = match c.option_type {
            OptionType::Call => c.strike < SPOT,
            OptionType::Put => c.strike > SPOT,
        };
        let moneyness = if in_the_money {
            MoneynessCode::Itm
        } else {
            MoneynessCode::Otm
        };
        assert_eq!(row.moneyness, moneyness, "{what}");
        let got = row.delta.unwrap();
        let expected = delta(c.option_type, c.strike);
        assert!(
            (got - expected).abs() < 1e-7,
            "{what}: delta {got} vs {expected}"
        );
    }
    assert!(flow.iter().any(|r| r.is_unusual));
    assert!(flow.iter().any(|r| !r.is_unusual));
}
