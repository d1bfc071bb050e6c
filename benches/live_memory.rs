//! Memory of a live `optics run`, measured on the real binary: the seeding peak of a first
//! start, resident memory per market hour through a whole session replayed at 60×, and bytes
//! per live contract at the default universe and at a full-market-sized one.
//!
//! ```sh
//! cargo bench -p optics --bench live_memory
//! # the binary `make run` builds, instead of the bench profile's:
//! OPTICS_BENCH_BINARY=target/service/optics cargo bench -p optics --bench live_memory
//! ```
//!
//! Settings (environment): `OPTICS_BENCH_BINARY` (the `optics` to run), `OPTICS_BENCH_SPEED`
//! (market seconds per real second, default 60), `OPTICS_BENCH_SCALE_UNIVERSE` (underlyings of
//! the scale run, default 960, about 1.5 M contracts; 0 skips it), `OPTICS_BENCH_SCALE_SECS`
//! (real seconds of the scale run, default 180). Linux only: it reads `/proc/<pid>/status`.
//!
//! What it prints, and the goals (issue "A whole live session in bounded memory"): the first
//! start's peak (seeding 20 sessions and 3 years of history, then loading them; goal
//! ≤ 1.5 GB), resident memory at every market hour (goal ≤ 1.5 GB and flat), and the holders
//! `/metrics` reports with their bytes per live contract.

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

/// A full session day (Wednesday 2026-11-25), from its open.
const SESSION_OPEN: &str = "2026-11-25T14:30:00Z";
/// Market minutes of the session: 09:30 to 16:00.
const SESSION_MINUTES: u64 = 390;

// Each benchmark of the binary uses part of the support.
#[allow(dead_code)]
#[path = "support/service.rs"]
mod service;
use service::{Service, env_or};

fn mb(bytes: u64) -> f64 {
    bytes as f64 / 1e6
}

/// Contracts held live (the worker's books) and the holders' bytes in all.
fn contracts_and_held(holders: &BTreeMap<String, (u64, u64)>) -> (u64, u64) {
    let contracts = holders.get("worker_books").map_or(0, |h| h.0);
    (contracts, holders.values().map(|h| h.1).sum())
}

fn print_holders(holders: &BTreeMap<String, (u64, u64)>) {
    let (contracts, _) = contracts_and_held(holders);
    let mut by_size: Vec<_> = holders.iter().collect();
    by_size.sort_by_key(|(_, (_, bytes))| std::cmp::Reverse(*bytes));
    for (name, (items, bytes)) in by_size {
        println!(
            "    {name:<34} {items:>10} items {:>9.1} MB {:>7.0} B/contract",
            mb(*bytes),
            *bytes as f64 / contracts.max(1) as f64
        );
    }
}

fn median(values: &mut [u64]) -> u64 {
    values.sort_unstable();
    values.get(values.len() / 2).copied().unwrap_or(0)
}

/// A first start with the default seeding, then one whole session at `speed`.
fn first_start_and_session(speed: u64) {
    println!(
        "first start: seeding 20 sessions and 3 years of history, then the 2026-11-25 session at {speed}x"
    );
    let started = Instant::now();
    let service = Service::start(
        "live-memory-session",
        &[
            "--start",
            SESSION_OPEN,
            "--speed",
            &speed.to_string(),
            "--interval-ms",
            &(speed * 1000).to_string(),
        ],
        Duration::from_secs(600),
    );
    let (resident, peak) = service.resident();
    println!(
        "  seeded and loaded in {:.1} s: peak resident {:.0} MB (goal <= 1500), resident {:.0} MB",
        started.elapsed().as_secs_f64(),
        mb(peak),
        mb(resident)
    );
    let live = Instant::now();
    let real_minute = Duration::from_secs_f64(60.0 / speed as f64);
    // Every market hour, the close, and ten market minutes after it (the session close's
    // publications).
    let mut marks: Vec<u64> = (1..=SESSION_MINUTES / 60).map(|h| h * 60).collect();
    marks.extend([SESSION_MINUTES, SESSION_MINUTES + 10]);
    let mut hourly = Vec::new();
    let mut all = Vec::new();
    for mark in marks {
        while live.elapsed() < real_minute.mul_f64(mark as f64) {
            std::thread::sleep(Duration::from_millis(500));
            all.push(service.resident().0);
        }
        let (resident, _) = service.resident();
        let holders = service.holders();
        let (contracts, held) = contracts_and_held(&holders);
        println!(
            "  market {:02}:{:02}: resident {:>6.0} MB, holders {:>6.0} MB, {contracts} live contracts, {:.0} B/contract resident",
            9 + (30 + mark) / 60,
            (30 + mark) % 60,
            mb(resident),
            mb(held),
            resident as f64 / contracts.max(1) as f64
        );
        hourly.push((resident, holders));
    }
    let (_, peak) = service.resident();
    let steady: Vec<u64> = hourly.iter().map(|(r, _)| *r).collect();
    let (low, high) = (
        steady.iter().copied().min().unwrap_or(0),
        steady.iter().copied().max().unwrap_or(0),
    );
    println!(
        "  session: resident median {:.0} MB, hourly {:.0}-{:.0} MB (goal <= 1500, flat), peak {:.0} MB",
        mb(median(&mut all)),
        mb(low),
        mb(high),
        mb(peak)
    );
    // At the close (the last mark is after it).
    if let Some((_, holders)) = hourly.iter().rev().nth(1) {
        println!("  holders at the close:");
        print_holders(holders);
    }
}

/// A short live run of a full-market-sized universe.
fn scale(universe: usize, seconds: u64) {
    println!("scale: --universe {universe}, one seeded session, {seconds} s live from 10:00 at 1x");
    let started = Instant::now();
    let service = Service::start(
        "live-memory-scale",
        &[
            "--universe",
            &universe.to_string(),
            "--start",
            "2026-11-25T15:00:00Z",
            "--seed-sessions",
            "1",
            "--history-years",
            "1",
        ],
        Duration::from_secs(1800),
    );
    let (_, seeding_peak) = service.resident();
    println!(
        "  seeded and loaded in {:.0} s, peak {:.0} MB",
        started.elapsed().as_secs_f64(),
        mb(seeding_peak)
    );
    let live = Instant::now();
    let mut samples = Vec::new();
    while live.elapsed() < Duration::from_secs(seconds) {
        std::thread::sleep(Duration::from_secs(1));
        samples.push(service.resident().0);
    }
    let (_, peak) = service.resident();
    let holders = service.holders();
    let (contracts, held) = contracts_and_held(&holders);
    let late = &mut samples[samples.len() / 2..].to_vec();
    let resident = median(late);
    println!(
        "  live: resident median {:.0} MB (second half), peak {:.0} MB; {contracts} live contracts: {:.0} B/contract resident, {:.0} B/contract held",
        mb(resident),
        mb(peak),
        resident as f64 / contracts.max(1) as f64,
        held as f64 / contracts.max(1) as f64
    );
    print_holders(&holders);
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument selects nothing here.
    let speed: u64 = env_or("OPTICS_BENCH_SPEED", 60).max(1);
    first_start_and_session(speed);
    let universe: usize = env_or("OPTICS_BENCH_SCALE_UNIVERSE", 960);
    if universe > 0 {
        scale(universe, env_or("OPTICS_BENCH_SCALE_SECS", 180));
    }
}
