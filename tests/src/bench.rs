//! Shared by the benchmarks: a deterministic generator and median timing, so every bench
//! measures the same inputs and reports the same statistic.

use std::time::{Duration, Instant};

/// xorshift64: deterministic, dependency-free, good enough to draw benchmark inputs.
#[derive(Debug, Clone)]
pub struct XorShift(pub u64);

impl XorShift {
    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Uniform in [lo, hi).
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next_f64()
    }
}

/// The median of the samples (the upper one of an even count).
///
/// # Panics
/// On an empty vector.
pub fn median(mut samples: Vec<Duration>) -> Duration {
    samples.sort();
    samples[samples.len() / 2]
}

/// Runs `run` once to warm up, then `repeats` times, and returns the median duration.
pub fn time_median(repeats: usize, mut run: impl FnMut()) -> Duration {
    run();
    median(
        (0..repeats.max(1))
            .map(|_| {
                let start = Instant::now();
                run();
                start.elapsed()
            })
            .collect(),
    )
}
