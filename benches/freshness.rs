//! Freshness of a live `optics run`: how old each quote batch is when the API first answers
//! with it, and how much of the machine the live pipeline takes, measured on the real binary.
//!
//! ```sh
//! cargo bench -p optics --bench freshness
//! # the binary `make run` builds, instead of the bench profile's:
//! OPTICS_BENCH_BINARY=target/service/optics cargo bench -p optics --bench freshness
//! ```
//!
//! Each run starts `optics run` on a data directory of its own (one seeded session and a year
//! of history), live from 10:00 New York on 2026-11-25 at 1× with 1 s quoting intervals and
//! 1 s compute cycles, lets it settle for `OPTICS_BENCH_WARMUP_SECS` (default 30), then reads
//! `/metrics`' freshness histograms and the process's CPU time at the start and the end of a
//! window of `OPTICS_BENCH_WINDOW_SECS` (default 120). A quote batch's age ends at the instant
//! the in-process worker hands the API the snapshots that first include it, and starts either
//! when the batch entered the bus (`optics_bus_freshness_seconds`: the issue's measure, the
//! pipeline's share) or at its newest quote's time (`optics_quote_freshness_seconds`: what a
//! client sees, including the simulator's emission of the instant's batches before they reach
//! the bus). Quantiles are interpolated within the histograms' 50 ms buckets.
//!
//! Runs: the default universe with every underlying quoted every second (`--tail-every 1`),
//! the default universe under the partial update mix (`--tail-every` `OPTICS_BENCH_TAIL_EVERY`,
//! default 5: the liquid fifth every second, the rest every fifth second), and
//! `--universe OPTICS_BENCH_SCALE_UNIVERSE` (default 960, about 1.5 M contracts; 0 skips it)
//! under the same mix (`OPTICS_BENCH_DEFAULT_UNIVERSE=0` runs this one alone). Goals (issue
//! "Freshness at full-market scale"): default universe p50 ≤ 0.6 s, p99 ≤ 1.2 s; 960
//! underlyings p99 ≤ 2 s on at most 1.5 cores. Linux only.

use std::time::{Duration, Instant};

#[allow(dead_code)] // each benchmark of the binary uses part of the support
#[path = "support/service.rs"]
mod service;
use service::{Service, env_or};

/// 10:00 New York on Wednesday 2026-11-25: the session is well under way.
const START: &str = "2026-11-25T15:00:00Z";

/// The freshness histograms the bench reads: the goal's measure first.
const HISTOGRAMS: [(&str, &str); 2] = [
    ("optics_bus_freshness_seconds", "from entering the bus"),
    ("optics_quote_freshness_seconds", "from the quote time"),
];

/// Histogram `name`'s cumulative bucket counts, `(le, count)`, ascending, the `+Inf` bucket
/// last (as `f64::INFINITY`).
fn freshness_buckets(metrics: &str, name: &str) -> Vec<(f64, f64)> {
    let prefix = format!("{name}_bucket{{le=\"");
    metrics
        .lines()
        .filter_map(|line| {
            let rest = line.strip_prefix(prefix.as_str())?;
            let (le, count) = rest.split_once("\"} ")?;
            let le = if le == "+Inf" {
                f64::INFINITY
            } else {
                le.parse().ok()?
            };
            Some((le, count.split_whitespace().next()?.parse().ok()?))
        })
        .collect()
}

/// The `q` quantile of the observations between two readings of the cumulative buckets,
/// interpolated linearly within its bucket; `None` without observations.
fn quantile(before: &[(f64, f64)], after: &[(f64, f64)], q: f64) -> Option<f64> {
    let counts: Vec<(f64, f64)> = after
        .iter()
        .map(|&(le, n)| {
            let earlier = before.iter().find(|b| b.0 == le).map_or(0.0, |b| b.1);
            (le, n - earlier)
        })
        .collect();
    let total = counts.last()?.1;
    if total <= 0.0 {
        return None;
    }
    let target = q * total;
    let mut lower = (0.0, 0.0);
    for &(le, cumulative) in &counts {
        if cumulative >= target {
            if le.is_infinite() {
                return Some(lower.0);
            }
            let share = if cumulative > lower.1 {
                (target - lower.1) / (cumulative - lower.1)
            } else {
                1.0
            };
            return Some(lower.0 + share * (le - lower.0));
        }
        lower = (le, cumulative);
    }
    None
}

/// One live run: `args` beside the common ones; prints its figures.
fn run(name: &str, args: &[&str], warmup: u64, window: u64) {
    let started = Instant::now();
    let mut all_args = vec![
        "--start",
        START,
        "--seed-sessions",
        "1",
        "--history-years",
        "1",
    ];
    all_args.extend_from_slice(args);
    let service = Service::start(name, &all_args, Duration::from_secs(1800));
    println!(
        "{name}: `optics run {}`: seeded and listening in {:.0} s",
        args.join(" "),
        started.elapsed().as_secs_f64()
    );
    std::thread::sleep(Duration::from_secs(warmup));
    let (before, cpu_before, wall_before) = (
        service.metrics_text(),
        service.cpu_seconds(),
        Instant::now(),
    );
    std::thread::sleep(Duration::from_secs(window));
    let (after, cpu_after, wall) = (
        service.metrics_text(),
        service.cpu_seconds(),
        wall_before.elapsed().as_secs_f64(),
    );
    println!(
        "  {window} s window: {:.2} cores busy (the whole process: simulator, bus, worker, store writes, API)",
        (cpu_after - cpu_before) / wall
    );
    for (name, from) in HISTOGRAMS {
        let (before, after) = (
            freshness_buckets(&before, name),
            freshness_buckets(&after, name),
        );
        let batches = after.last().map_or(0.0, |b| b.1) - before.last().map_or(0.0, |b| b.1);
        let show =
            |q: f64| quantile(&before, &after, q).map_or("-".to_owned(), |s| format!("{s:.2} s"));
        println!(
            "  {from}: {batches:.0} quote batches served ({:.0}/s); freshness p50 {}, p90 {}, p99 {}",
            batches / wall,
            show(0.5),
            show(0.9),
            show(0.99),
        );
    }
    let (resident, _) = service.resident();
    println!("  resident {:.0} MB", resident as f64 / 1e6);
}

fn main() {
    // `cargo bench` passes `--bench`; a filter argument selects nothing here.
    let warmup: u64 = env_or("OPTICS_BENCH_WARMUP_SECS", 30);
    let window: u64 = env_or("OPTICS_BENCH_WINDOW_SECS", 120);
    let tail_every: u32 = env_or("OPTICS_BENCH_TAIL_EVERY", 5);
    let tail = tail_every.to_string();
    if env_or("OPTICS_BENCH_DEFAULT_UNIVERSE", 1) != 0 {
        run("freshness-every", &["--tail-every", "1"], warmup, window);
        run("freshness-mix", &["--tail-every", &tail], warmup, window);
    }
    let universe: usize = env_or("OPTICS_BENCH_SCALE_UNIVERSE", 960);
    if universe > 0 {
        let universe = universe.to_string();
        run(
            "freshness-scale",
            &["--universe", &universe, "--tail-every", &tail],
            warmup,
            window,
        );
    }
}
