//! Simulator output rate: chain snapshots of the whole real universe (87 underlyings, every
//! listed expiration and strike) for one instant, on 1 and 2 threads (rayon across
//! underlyings). Prints quotes/s, the median of several runs; asserts nothing about time.
//! Run with `cargo bench -p optics-ingest --bench simulator_rate`.

use std::hint::black_box;
use std::time::Instant;

use chrono::{NaiveDate, TimeZone, Utc};
use optics_compute::time::NyseCalendar;
use optics_ingest::simulator::quotes::{ChainSpec, chain_snapshot};
use optics_ingest::simulator::surface::{Surface, SurfaceInputs};
use optics_ingest::simulator::universe::Universe;
use optics_tests::bench::median;
use rayon::prelude::*;

const REPEATS: usize = 5;

fn main() {
    let universe = Universe::real();
    let trade_date = NaiveDate::from_ymd_opt(2026, 11, 18).expect("valid date");
    let instant = Utc
        .with_ymd_and_hms(2026, 11, 18, 19, 30, 0)
        .single()
        .expect("valid time");
    let surfaces: Vec<Surface> = universe
        .iter()
        .map(|u| Surface::for_underlying(u, &SurfaceInputs::normal()))
        .collect();
    let snapshot = || -> usize {
        universe
            .as_slice()
            .par_iter()
            .zip(&surfaces)
            .map(|(underlying, surface)| {
                let spec = ChainSpec {
                    underlying,
                    trade_date,
                    instant,
                    spot: underlying.start_price,
                    previous_close: underlying.start_price,
                    surface,
                    rate: 0.04,
                    seed: 7,
                };
                black_box(chain_snapshot(&spec, &NyseCalendar)).len()
            })
            .sum()
    };
    println!(
        "optics simulator benchmark: chain snapshots of {} underlyings, median of {REPEATS}",
        universe.len()
    );
    for threads in [1, 2] {
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(threads)
            .build()
            .expect("thread pool");
        let quotes = pool.install(snapshot); // warm-up, and the count
        let wall = median(
            (0..REPEATS)
                .map(|_| {
                    let start = Instant::now();
                    black_box(pool.install(snapshot));
                    start.elapsed()
                })
                .collect(),
        );
        println!(
            "{threads} thread(s): {quotes} quotes in {:.1} ms — {:.2} M quotes/s",
            wall.as_secs_f64() * 1e3,
            quotes as f64 / wall.as_secs_f64() / 1e6
        );
    }
}
