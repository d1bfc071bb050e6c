//! SplitMix64: the simulator's seeded pseudo-random generator.
//!
//! Steele, Lea and Flood, "Fast splittable pseudorandom number generators" (OOPSLA 2014), with
//! the finaliser constants of Java's `SplittableRandom`. It is tiny, fast, passes BigCrush, and
//! its output is fully specified here, so a seed gives the same stream on every platform and
//! every release: the simulator's determinism does not depend on a third-party crate's version.
//! Not for cryptography.

/// The golden-ratio increment of SplitMix64.
const GAMMA: u64 = 0x9E37_79B9_7F4A_7C15;

/// The SplitMix64 finaliser: a bijective 64-bit mix with full avalanche.
pub const fn mix64(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// A seed for an independent sub-stream, derived from a parent seed and a stream number (for
/// example the index of a synthetic underlying), so that item `i` draws the same numbers however
/// many items are generated.
pub const fn derive_seed(seed: u64, stream: u64) -> u64 {
    mix64(seed ^ mix64(stream.wrapping_add(GAMMA)))
}

/// A SplitMix64 generator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose stream is fixed by `seed` (every seed, 0 included, is fine).
    pub const fn new(seed: u64) -> Self {
        Self { state: seed }
    }

    /// The next 64 uniformly distributed bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(GAMMA);
        mix64(self.state)
    }

    /// A uniform `f64` in `[0, 1)`, with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform `f64` in `[low, high)`.
    pub fn uniform(&mut self, low: f64, high: f64) -> f64 {
        low + (high - low) * self.next_f64()
    }

    /// A log-uniform `f64` in `[low, high)` (both positive): every decade equally likely.
    pub fn log_uniform(&mut self, low: f64, high: f64) -> f64 {
        (low.ln() + (high.ln() - low.ln()) * self.next_f64()).exp()
    }

    /// A uniform integer in `[0, n)`; 0 when `n` is 0. Lemire's multiply-shift, whose bias
    /// (at most `n / 2^64`) is irrelevant for the simulator's small `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        self.next_f64() < p
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_reference_stream() {
        // First outputs of SplitMix64 seeded with 0 (as in the reference C implementation).
        let mut rng = SplitMix64::new(0);
        assert_eq!(rng.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(rng.next_u64(), 0x6E78_9E6A_A1B9_65F4);
        assert_eq!(rng.next_u64(), 0x06C4_5D18_8009_454F);
    }

    #[test]
    fn floats_and_integers_stay_in_range() {
        let mut rng = SplitMix64::new(42);
        for _ in 0..10_000 {
            let x = rng.next_f64();
            assert!((0.0..1.0).contains(&x));
            let y = rng.log_uniform(2.0, 300.0);
            assert!((2.0..300.0).contains(&y));
            assert!(rng.below(11) < 11);
        }
        assert_eq!(rng.below(0), 0);
    }

    #[test]
    fn derived_streams_differ() {
        assert_ne!(derive_seed(7, 1), derive_seed(7, 2));
        assert_ne!(derive_seed(7, 1), derive_seed(8, 1));
        assert_eq!(derive_seed(7, 1), derive_seed(7, 1));
    }
}
