//! Exposure benchmark: dealer exposures with flip levels (per expiration and aggregate) for a
//! SPY-sized chain (~8,100 contracts), the same chain without IVs (exposures and levels alone,
//! to show what the re-priced flip search costs), flow rows + summary, and the expected move;
//! then the whole
//! default-universe shape (87 underlyings, ~224k contracts, the size of the simulator's
//! snapshot) on 1 and 2 threads. Synthetic chains from a fixed seed. Prints medians; asserts
//! nothing about time. Run with `cargo bench -p optics-compute --bench exposure`.

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::Duration;

use chrono::{DateTime, Days, NaiveDate};
use optics_compute::expected_move::{ExpectedMoveRequest, expected_move};
use optics_compute::exposure::{
    ContractAnalytics, ExposureConfig, UnderlyingContext, compute_exposures,
};
use optics_compute::flow::{FlowConfig, flow_rows, summarize_flow};
use optics_compute::pricing::{OptionInputs, OptionType, PricingModel, greeks};
use optics_tests::bench::{XorShift, time_median};
use rayon::prelude::*;

const REPEATS: usize = 9;
const RATE: f64 = 0.04;
const DIVIDEND_YIELD: f64 = 0.012;

/// A chain of `expirations` × `strikes_per_expiration` strikes × call and put around `spot`:
/// expirations from 0 to ~2 years, strikes spaced so the chain spans ±(4σ√T + 5 %), a skewed
/// IV, random open interest and volume; Greeks computed as the chain builder would.
fn synthetic_chain(
    spot: f64,
    expirations: usize,
    strikes_per_expiration: usize,
    seed: u64,
) -> (Vec<ContractAnalytics>, UnderlyingContext) {
    let mut rng = XorShift(seed | 1);
    let first = NaiveDate::from_ymd_opt(2026, 11, 20).expect("valid date");
    let mut contracts = Vec::with_capacity(2 * expirations * strikes_per_expiration);
    let mut forwards = BTreeMap::new();
    for e in 0..expirations {
        // Dailies first, then weeklies, monthlies and LEAPS-like spacing.
        let days = match e {
            0..=4 => e as u64,
            5..=12 => 7 * (e as u64 - 3),
            _ => 63 + 45 * (e as u64 - 12),
        };
        let expiration = first + Days::new(days);
        let years = (days as f64 + 0.25) / 365.0;
        let forward = spot * ((RATE - DIVIDEND_YIELD) * years).exp();
        forwards.insert(expiration, forward);
        let half_width = (4.0 * 0.2 * years.sqrt() + 0.05).min(0.9);
        for k in 0..strikes_per_expiration {
            let x = -half_width + 2.0 * half_width * k as f64 / (strikes_per_expiration - 1) as f64;
            let strike = (spot * (1.0 + x) * 2.0).round() / 2.0;
            let iv = 0.18 - 0.25 * x + 0.6 * x * x;
            for option_type in [OptionType::Call, OptionType::Put] {
                let inputs = OptionInputs {
                    option_type,
                    model: PricingModel::BlackScholesMerton,
                    underlying: spot,
                    strike,
                    years,
                    rate: RATE,
                    dividend_yield: DIVIDEND_YIELD,
                };
                let g = greeks(&inputs, iv).ok();
                let mid = g.map(|g| g.price.max(0.01));
                contracts.push(ContractAnalytics {
                    expiration,
                    strike,
                    option_type,
                    open_interest: (rng.next_f64() * 40_000.0 * (-8.0 * x * x).exp()) as u64,
                    volume: (rng.next_f64() * 5_000.0 * (-12.0 * x * x).exp()) as u64,
                    bid: mid.map(|m| m * 0.97),
                    ask: mid.map(|m| m * 1.03),
                    mid,
                    iv: Some(iv),
                    greeks: g,
                    years_to_expiry: years,
                    dte: days as i64,
                });
            }
        }
    }
    let context = UnderlyingContext {
        underlying: format!("SYN{seed}"),
        spot,
        rate: RATE,
        dividend_yield: DIVIDEND_YIELD,
        model: PricingModel::BlackScholesMerton,
        forwards,
        as_of: DateTime::from_timestamp(1_795_100_000, 0).expect("valid time"),
    };
    (contracts, context)
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    println!(
        "exposure benchmark (medians of {REPEATS}; the machine is shared, figures measured under load)"
    );

    // --- One SPY-sized chain.
    let (chain, context) = synthetic_chain(600.0, 30, 135, 7);
    let n = chain.len();
    let config = ExposureConfig::default();
    let single = rayon::ThreadPoolBuilder::new()
        .num_threads(1)
        .build()
        .expect("thread pool");
    let full = single.install(|| {
        time_median(REPEATS, || {
            black_box(compute_exposures(black_box(&chain), &context, &config).expect("valid"));
        })
    });
    let report = compute_exposures(&chain, &context, &config).expect("valid");
    // The same chain without IVs: exposures from the Greeks alone, no re-priced curve.
    let without_iv: Vec<ContractAnalytics> = chain
        .iter()
        .map(|c| ContractAnalytics { iv: None, ..*c })
        .collect();
    let no_curve = single.install(|| {
        time_median(REPEATS, || {
            black_box(compute_exposures(black_box(&without_iv), &context, &config).expect("valid"));
        })
    });
    println!(
        "SPY-sized chain: {n} contracts, {} expirations, {} strikes in the aggregate profile",
        report.expirations.len(),
        report.aggregate.strikes.len()
    );
    println!(
        "  exposures + flip levels (161-point grid, per expiration and aggregate, 1 thread): {:.2} ms ({:.2} M contracts/s)",
        ms(full),
        n as f64 / full.as_secs_f64() / 1e6
    );
    println!(
        "  exposures and levels without the re-priced curve (no IVs, 1 thread): {:.2} ms",
        ms(no_curve)
    );
    println!(
        "  aggregate crossings refined: {}; per-expiration crossings: {}",
        report.aggregate.flip.crossings.len(),
        report
            .expirations
            .iter()
            .map(|e| e.flip.crossings.len())
            .sum::<usize>()
    );
    let two = rayon::ThreadPoolBuilder::new()
        .num_threads(2)
        .build()
        .expect("thread pool");
    let full_two = two.install(|| {
        time_median(REPEATS, || {
            black_box(compute_exposures(black_box(&chain), &context, &config).expect("valid"));
        })
    });
    println!(
        "  exposures + flip levels, 2 threads (grid points and refinements in parallel): {:.2} ms",
        ms(full_two)
    );
    let flow_config = FlowConfig::default();
    let flow = time_median(REPEATS, || {
        let rows = flow_rows(black_box(&chain), 600.0, &flow_config).expect("valid");
        black_box(summarize_flow(&rows, &flow_config));
    });
    println!("  flow rows + summary: {:.3} ms", ms(flow));
    let em = time_median(REPEATS, || {
        black_box(
            expected_move(black_box(&chain), &context, &ExpectedMoveRequest::default())
                .expect("a straddle"),
        );
    });
    println!("  expected move (nearest expiration): {:.3} ms", ms(em));

    // --- The default universe's shape: 4 index-sized chains, 19 ETF-sized, 64 stock-sized.
    let mut universe = Vec::new();
    let mut seed = 100;
    for (count, expirations, strikes, spot) in [
        (4usize, 40usize, 150usize, 5_000.0),
        (19, 25, 80, 300.0),
        (64, 12, 65, 150.0),
    ] {
        for _ in 0..count {
            seed += 1;
            universe.push(synthetic_chain(spot, expirations, strikes, seed));
        }
    }
    let total: usize = universe.iter().map(|(c, _)| c.len()).sum();
    println!(
        "universe shape: {} underlyings, {total} contracts",
        universe.len()
    );
    for (threads, pool) in [(1, &single), (2, &two)] {
        let t = pool.install(|| {
            time_median(3, || {
                let reports: Vec<_> = universe
                    .par_iter()
                    .map(|(c, ctx)| compute_exposures(c, ctx, &config).expect("valid"))
                    .collect();
                black_box(reports);
            })
        });
        println!(
            "  exposures + flip levels for every underlying, {threads} thread(s): {:.1} ms ({:.2} M contracts/s)",
            ms(t),
            total as f64 / t.as_secs_f64() / 1e6
        );
    }
}
