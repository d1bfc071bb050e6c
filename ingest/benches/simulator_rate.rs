//! Simulator output rate and generation times. Prints figures (medians of several runs);
//! asserts nothing about time. Run with `cargo bench -p optics-ingest --bench simulator_rate`.
//!
//! - **Session steady state** (the live simulator's figure): one session of the real universe
//!   at one-second intervals; each step prices every listed contract of the 87 underlyings and
//!   returns validated Arrow batches ready for the bus (ticks, quote batches keyed by
//!   underlying). On 1 and 2 threads (rayon across underlyings).
//! - **Chain books only**: the same pricing into record batches, without the schema's
//!   validation of each batch (OCC symbols re-parsed, prices checked).
//! - **One-off snapshots**: `chain_snapshot` (a book built and priced for one instant, rows as
//!   structs), as the rate of the stateless API.
//! - **Generation times**: the session's set-up (market tape and chain books), and the history
//!   generator for the default universe and a scaled one.

use std::hint::black_box;
use std::sync::Arc;
use std::time::Instant;

use chrono::{NaiveDate, TimeDelta, TimeZone, Utc};
use optics_compute::time::NyseCalendar;
use optics_ingest::simulator::history::{HistoryConfig, generate_history};
use optics_ingest::simulator::quotes::{ChainSpec, chain_snapshot};
use optics_ingest::simulator::session::{SessionConfig, SessionSimulator};
use optics_ingest::simulator::surface::{Surface, SurfaceInputs};
use optics_ingest::simulator::universe::Universe;
use optics_tests::bench::median;
use rayon::prelude::*;

const REPEATS: usize = 5;
const STEPS: usize = 10;
const SEED: u64 = 7;

fn pool(threads: usize) -> rayon::ThreadPool {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build()
        .expect("thread pool")
}

fn main() {
    let universe = Arc::new(Universe::real());
    let trade_date = NaiveDate::from_ymd_opt(2026, 11, 18).expect("valid date");
    println!(
        "optics simulator benchmark: {} underlyings, median of {REPEATS} (figures measured on \
         a shared machine may be low)",
        universe.len()
    );

    // Session set-up.
    let started = Instant::now();
    let config = SessionConfig::new(SEED, trade_date).with_interval(TimeDelta::seconds(1));
    let template = SessionSimulator::new(Arc::clone(&universe), config, None).expect("session");
    println!(
        "session set-up (market tape from 2010 and chain books): {:.0} ms",
        started.elapsed().as_secs_f64() * 1e3
    );
    let contracts: usize = template.books().map(|b| b.contracts().len()).sum();
    println!("{contracts} listed contracts");

    for threads in [1, 2] {
        let pool = pool(threads);
        // Session steady state: STEPS consecutive instants from mid-morning, fresh session each
        // repeat (the set-up is not timed).
        let mut quotes = 0;
        let samples = (0..REPEATS)
            .map(|_| {
                let mut session = SessionSimulator::with_tape(
                    Arc::clone(&universe),
                    Arc::clone(template.tape()),
                    config,
                    None,
                )
                .expect("session");
                let start_at = Utc
                    .with_ymd_and_hms(2026, 11, 18, 16, 0, 0)
                    .single()
                    .expect("valid time");
                pool.install(|| black_box(session.advance_to(start_at)));
                let start = Instant::now();
                quotes = pool.install(|| {
                    (0..STEPS)
                        .map(|_| {
                            session
                                .step()
                                .expect("in session")
                                .expect("valid")
                                .quote_count()
                        })
                        .sum::<usize>()
                });
                start.elapsed()
            })
            .collect();
        let wall = median(samples);
        println!(
            "session steady state, {threads} thread(s): {quotes} quotes in {STEPS} steps, \
             {:.1} ms/step — {:.2} M quotes/s",
            wall.as_secs_f64() * 1e3 / STEPS as f64,
            quotes as f64 / wall.as_secs_f64() / 1e6
        );
    }

    // Chain books only (no batch validation).
    let instant = Utc
        .with_ymd_and_hms(2026, 11, 18, 19, 30, 0)
        .single()
        .expect("valid time");
    let surfaces: Vec<Surface> = universe
        .iter()
        .map(|u| Surface::for_underlying(u, &SurfaceInputs::normal()))
        .collect();
    let books: Vec<_> = template.books().collect();
    for threads in [1, 2] {
        let pool = pool(threads);
        let run = || -> usize {
            books
                .par_iter()
                .zip(&surfaces)
                .map(|(book, surface)| {
                    let spot = book.underlying().start_price;
                    black_box(book.quote_batch(instant, spot, surface, 0.04))
                        .map(|b| b.num_rows())
                        .unwrap_or(0)
                })
                .sum()
        };
        let quotes = pool.install(run);
        let wall = median(
            (0..REPEATS)
                .map(|_| {
                    let start = Instant::now();
                    black_box(pool.install(run));
                    start.elapsed()
                })
                .collect(),
        );
        println!(
            "chain books only, {threads} thread(s): {quotes} quotes in {:.1} ms — {:.2} M quotes/s",
            wall.as_secs_f64() * 1e3,
            quotes as f64 / wall.as_secs_f64() / 1e6
        );
    }

    // One-off snapshots through the stateless API.
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
                    seed: SEED,
                };
                black_box(chain_snapshot(&spec, &NyseCalendar)).len()
            })
            .sum()
    };
    for threads in [1, 2] {
        let pool = pool(threads);
        let quotes = pool.install(snapshot);
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
            "one-off chain_snapshot, {threads} thread(s): {quotes} quotes in {:.1} ms — {:.2} M quotes/s",
            wall.as_secs_f64() * 1e3,
            quotes as f64 / wall.as_secs_f64() / 1e6
        );
    }

    // A scaled universe: session set-up and one snapshot of every underlying.
    for n in [1_000, 3_000] {
        let scaled = Arc::new(Universe::scaled(n, SEED));
        let start = Instant::now();
        let mut session =
            SessionSimulator::new(Arc::clone(&scaled), config, None).expect("scaled session");
        let set_up = start.elapsed();
        let start = Instant::now();
        let quotes = pool(2).install(|| {
            session
                .step()
                .expect("in session")
                .expect("valid")
                .quote_count()
        });
        println!(
            "--universe {n}: session set-up {:.2} s, one snapshot of {quotes} quotes in {:.0} ms",
            set_up.as_secs_f64(),
            start.elapsed().as_secs_f64() * 1e3
        );
    }

    // History generation.
    for (label, u) in [
        ("default universe", Universe::real()),
        ("--universe 1000", Universe::scaled(1000, SEED)),
    ] {
        let config = HistoryConfig::for_session(SEED, trade_date, 3);
        let start = Instant::now();
        let history = generate_history(&u, &config).expect("history");
        println!(
            "history, 3 years, {label} ({} underlyings): {:.2} s — {} bars, {} IV rows, {} \
             earnings, {} dividends, {} borrow rows, {} calendar events",
            u.len(),
            start.elapsed().as_secs_f64(),
            history.bars.len(),
            history.iv.len(),
            history.earnings.len(),
            history.dividends.len(),
            history.borrow.len(),
            history.economic.len()
        );
    }
}
