//! Where "now" comes from. Nothing in optics reads the wall clock directly: services take an
//! `Arc<dyn Clock>`, so tests pin time with [`ManualClock`] and the simulator can replay a past
//! session or run faster than real time with [`AcceleratedClock`].

use std::fmt;
use std::sync::Mutex;
use std::time::Instant;

use chrono::{DateTime, TimeDelta, Utc};

/// A source of the current instant.
pub trait Clock: Send + Sync + fmt::Debug {
    /// The current instant.
    fn now(&self) -> DateTime<Utc>;
}

/// The operating system's wall clock: what `optics run` uses by default.
#[derive(Debug, Clone, Copy, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

/// A clock that only moves when told to: for tests.
#[derive(Debug)]
pub struct ManualClock {
    now: Mutex<DateTime<Utc>>,
}

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: DateTime<Utc>) -> Self {
        Self {
            now: Mutex::new(start),
        }
    }

    /// Moves the clock to `at` (backwards too: tests may need it).
    pub fn set(&self, at: DateTime<Utc>) {
        *self.lock() = at;
    }

    /// Moves the clock forward by `step`.
    pub fn advance(&self, step: TimeDelta) {
        let mut now = self.lock();
        *now += step;
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, DateTime<Utc>> {
        // A poisoned lock only means another thread panicked while holding a plain value;
        // the value itself is still a valid instant.
        self.now.lock().unwrap_or_else(|p| p.into_inner())
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *self.lock()
    }
}

/// Virtual time that starts at `start` and runs `speed` times faster than the monotonic clock:
/// `--speed 60` plays an hour of a session per minute; a past `start` replays that day live.
#[derive(Debug)]
pub struct AcceleratedClock {
    start: DateTime<Utc>,
    started: Instant,
    speed: f64,
}

/// Why an [`AcceleratedClock`] could not be built.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("clock speed must be a finite number between 0.001 and 1000000, got {0}")]
pub struct InvalidSpeed(pub f64);

impl AcceleratedClock {
    /// Fastest and slowest accepted speeds.
    pub const SPEED_RANGE: (f64, f64) = (1.0e-3, 1.0e6);

    /// A clock at `start` now, advancing `speed` virtual seconds per real second.
    pub fn new(start: DateTime<Utc>, speed: f64) -> Result<Self, InvalidSpeed> {
        let (low, high) = Self::SPEED_RANGE;
        if !(speed.is_finite() && (low..=high).contains(&speed)) {
            return Err(InvalidSpeed(speed));
        }
        Ok(Self {
            start,
            started: Instant::now(),
            speed,
        })
    }

    /// Virtual seconds per real second.
    pub fn speed(&self) -> f64 {
        self.speed
    }

    /// The virtual instant after `real_elapsed` of real time.
    pub fn at_elapsed(&self, real_elapsed: std::time::Duration) -> DateTime<Utc> {
        let virtual_micros = (real_elapsed.as_secs_f64() * self.speed * 1.0e6).round();
        // Saturate instead of overflowing: a clock left running for centuries at top speed
        // stops at the far end rather than panicking.
        let micros = if virtual_micros.is_finite() && virtual_micros < 9.0e15 {
            virtual_micros as i64
        } else {
            9_000_000_000_000_000
        };
        self.start
            .checked_add_signed(TimeDelta::microseconds(micros))
            .unwrap_or(DateTime::<Utc>::MAX_UTC)
    }
}

impl Clock for AcceleratedClock {
    fn now(&self) -> DateTime<Utc> {
        self.at_elapsed(self.started.elapsed())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use std::time::Duration;

    fn instant() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 20, 15, 0, 0).unwrap()
    }

    #[test]
    fn manual_clock_moves_only_when_told() {
        let clock = ManualClock::new(instant());
        assert_eq!(clock.now(), instant());
        clock.advance(TimeDelta::seconds(90));
        assert_eq!(clock.now(), instant() + TimeDelta::seconds(90));
        clock.set(instant());
        assert_eq!(clock.now(), instant());
    }

    #[test]
    fn accelerated_clock_scales_elapsed_time() {
        let clock = AcceleratedClock::new(instant(), 60.0).unwrap();
        assert_eq!(clock.at_elapsed(Duration::ZERO), instant());
        assert_eq!(
            clock.at_elapsed(Duration::from_secs(60)),
            instant() + TimeDelta::hours(1)
        );
        assert_eq!(
            clock.at_elapsed(Duration::from_millis(500)),
            instant() + TimeDelta::seconds(30)
        );
    }

    #[test]
    fn accelerated_clock_rejects_bad_speeds() {
        for speed in [0.0, -1.0, f64::NAN, f64::INFINITY, 1.0e7] {
            let err = AcceleratedClock::new(instant(), speed).unwrap_err();
            assert!(err.0.to_bits() == speed.to_bits(), "{err}");
        }
    }

    #[test]
    fn accelerated_clock_saturates_instead_of_overflowing() {
        let clock = AcceleratedClock::new(instant(), 1.0e6).unwrap();
        let far = clock.at_elapsed(Duration::from_secs(u64::MAX / 4));
        assert!(far > instant());
    }
}
