//! The simulator in live mode: sessions driven by a [`Clock`].
//!
//! A [`LiveSimulator`] looks at the clock, emits the snapshot of the current interval of the
//! session in progress, and otherwise waits — through a [`Sleeper`] — for the next interval or,
//! outside market hours, for the next session's open, which [`LiveSimulator::poll`] reports.
//! It rolls from one session to the next, carrying each session's closing open interest into
//! the next one.
//!
//! - `optics run` uses the [`SystemClock`](optics_compute::time::SystemClock) and a
//!   [`ClockSleeper`] (tokio timers).
//! - `--speed N` and past dates use an [`AcceleratedClock`](optics_compute::time::AcceleratedClock)
//!   started at the wanted instant, with a [`ClockSleeper`] of the same speed.
//! - Tests (and "as fast as possible" replays of the live loop) use a
//!   [`ManualClock`] with a [`VirtualSleeper`], which jumps the clock to the instant waited
//!   for instead of waiting: no wall clock, no sleeping.
//!
//! When the source falls behind the clock (a large `--universe` at one-second intervals), it
//! emits the latest due instant and skips the ones in between, as a live feed would; the
//! paths still pass through every grid point, so what is emitted does not depend on load.

use std::fmt;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use chrono::{DateTime, NaiveDate, TimeDelta, Utc};
use optics_compute::time::{Clock, ManualClock, NyseCalendar, new_york_date};
use optics_schemas::memory::{HeldMemory, MemoryHolder};

use super::error::SimulatorError;
use super::market::MarketTape;
use super::quotes::OpenInterestBook;
use super::session::{DEFAULT_INTERVAL, DEFAULT_RATE, SessionConfig, SessionSimulator};
use super::universe::Universe;
use crate::source::{ArchivePolicy, QuoteSource, SourceError, SourceEvent, SourceFuture};

/// Waits until an instant of a clock's time.
pub trait Sleeper: Send + Sync + fmt::Debug {
    /// Resolves once the clock has reached `at` (at once if it already has).
    fn sleep_until(&self, at: DateTime<Utc>) -> SourceFuture<'_, ()>;
}

/// Sleeps on tokio timers until `clock` reaches the instant, for a clock running `speed`
/// times faster than real time (1 for the system clock). It re-reads the clock at least once
/// a second of real time, so a clock that jumps is followed.
#[derive(Debug, Clone)]
pub struct ClockSleeper {
    clock: Arc<dyn Clock>,
    speed: f64,
}

impl ClockSleeper {
    /// A sleeper for `clock`, which advances `speed` virtual seconds per real second
    /// (non-positive or non-finite speeds count as 1).
    pub fn new(clock: Arc<dyn Clock>, speed: f64) -> Self {
        let speed = if speed.is_finite() && speed > 0.0 {
            speed
        } else {
            1.0
        };
        Self { clock, speed }
    }
}

impl Sleeper for ClockSleeper {
    fn sleep_until(&self, at: DateTime<Utc>) -> SourceFuture<'_, ()> {
        Box::pin(async move {
            loop {
                let remaining = at.signed_duration_since(self.clock.now());
                let Ok(virtual_wait) = remaining.to_std() else {
                    return; // already there
                };
                if virtual_wait.is_zero() {
                    return;
                }
                let real = virtual_wait
                    .div_f64(self.speed)
                    .min(std::time::Duration::from_secs(1));
                tokio::time::sleep(real.max(std::time::Duration::from_micros(50))).await;
            }
        })
    }
}

/// Moves a [`ManualClock`] to the instant waited for, at once: virtual time without waiting.
#[derive(Debug, Clone)]
pub struct VirtualSleeper {
    clock: Arc<ManualClock>,
}

impl VirtualSleeper {
    /// A sleeper that drives `clock`.
    pub fn new(clock: Arc<ManualClock>) -> Self {
        Self { clock }
    }
}

impl Sleeper for VirtualSleeper {
    fn sleep_until(&self, at: DateTime<Utc>) -> SourceFuture<'_, ()> {
        if self.clock.now() < at {
            self.clock.set(at);
        }
        Box::pin(std::future::ready(()))
    }
}

/// How the live simulator runs.
#[derive(Debug, Clone, PartialEq)]
pub struct LiveConfig {
    /// The simulator seed.
    pub seed: u64,
    /// Market time between snapshots.
    pub interval: TimeDelta,
    /// Continuously compounded risk-free rate, decimal.
    pub rate: f64,
    /// The update mix ([`SessionConfig::tail_every`]; 1: every underlying at every instant).
    pub tail_every: u32,
    /// When started outside a session, first emit the closing snapshot of the last session
    /// (labelled with that session's close), so a service started after hours has end-of-day
    /// data. Off by default: outside a session nothing is emitted.
    pub catch_up_last_close: bool,
    /// Stop (the source ends) once the clock passes this instant: a replay of a past date.
    pub stop_at: Option<DateTime<Utc>>,
}

impl LiveConfig {
    /// The defaults: one-second interval, 4 % rate, no catch-up, no end.
    pub fn new(seed: u64) -> Self {
        Self {
            seed,
            interval: DEFAULT_INTERVAL,
            rate: DEFAULT_RATE,
            tail_every: 1,
            catch_up_last_close: false,
            stop_at: None,
        }
    }
}

/// What [`LiveSimulator::poll`] found.
#[derive(Debug, Clone, PartialEq)]
pub enum LivePoll {
    /// The event of the current instant.
    Event(SourceEvent),
    /// In a session, the next instant is still to come.
    NextInstant(DateTime<Utc>),
    /// Outside a session: nothing until the next session opens.
    Closed {
        /// The next session's open.
        next_open: DateTime<Utc>,
    },
    /// Past [`LiveConfig::stop_at`]: the source has ended.
    Stopped,
}

/// What a live simulator holds, as of its last session start (it runs inside the pump, so it
/// keeps these counters and `/metrics` reads them): `simulator_session` (items: contracts
/// listed in the session in progress; bytes: their books and static quote columns),
/// `simulator_tape` (items: underlyings; bytes: their daily paths since the simulator's epoch,
/// one tape however many sessions use it) and `simulator_carried_open_interest` (items:
/// contracts of the last close's open interest, kept only until the next session starts).
/// None grows within a session; the tape grows by one day per session.
#[derive(Debug, Default)]
pub struct SimulatorMemory {
    session: [AtomicUsize; 2],
    tape: [AtomicUsize; 2],
    carried: [AtomicUsize; 2],
}

impl SimulatorMemory {
    fn set(slot: &[AtomicUsize; 2], (items, bytes): (usize, usize)) {
        slot[0].store(items, Ordering::Relaxed);
        slot[1].store(bytes, Ordering::Relaxed);
    }

    fn get(holder: &'static str, slot: &[AtomicUsize; 2]) -> HeldMemory {
        HeldMemory::new(
            holder,
            slot[0].load(Ordering::Relaxed),
            slot[1].load(Ordering::Relaxed),
        )
    }
}

impl MemoryHolder for SimulatorMemory {
    fn held_memory(&self, out: &mut Vec<HeldMemory>) {
        out.push(Self::get("simulator_session", &self.session));
        out.push(Self::get("simulator_tape", &self.tape));
        out.push(Self::get("simulator_carried_open_interest", &self.carried));
    }
}

/// The simulator on a clock: see the module documentation.
#[derive(Debug)]
pub struct LiveSimulator {
    universe: Arc<Universe>,
    config: LiveConfig,
    clock: Arc<dyn Clock>,
    sleeper: Arc<dyn Sleeper>,
    calendar: NyseCalendar,
    session: Option<SessionSimulator>,
    /// The closing open interest of the last session built.
    carried: Option<OpenInterestBook>,
    /// A tape to reuse for sessions it covers (the one the history was generated from).
    tape: Option<Arc<MarketTape>>,
    started: bool,
    memory: Arc<SimulatorMemory>,
}

impl LiveSimulator {
    /// A live simulator of `universe` on `clock`, waiting with `sleeper`.
    pub fn new(
        universe: Arc<Universe>,
        config: LiveConfig,
        clock: Arc<dyn Clock>,
        sleeper: Arc<dyn Sleeper>,
    ) -> Self {
        Self {
            universe,
            config,
            clock,
            sleeper,
            calendar: NyseCalendar,
            session: None,
            carried: None,
            tape: None,
            started: false,
            memory: Arc::default(),
        }
    }

    /// Reuses `tape` (simulated with the same seed and universe) for the sessions it covers,
    /// instead of simulating one per session.
    pub fn with_tape(mut self, tape: Arc<MarketTape>) -> Self {
        self.tape = Some(tape);
        self.record_memory();
        self
    }

    /// What the simulator holds, updated at every session start: take it before the
    /// simulator is moved into its pump.
    pub fn memory(&self) -> Arc<SimulatorMemory> {
        Arc::clone(&self.memory)
    }

    fn record_memory(&self) {
        use optics_schemas::memory::HeapBytes;
        let session = self.session.as_ref();
        SimulatorMemory::set(
            &self.memory.session,
            session.map_or((0, 0), SessionSimulator::held),
        );
        // The tapes held: the one given for reuse and the session's, once if they are one.
        let mut tapes: Vec<&Arc<MarketTape>> = self.tape.iter().collect();
        if let Some(tape) = session.map(SessionSimulator::tape)
            && !tapes.iter().any(|t| Arc::ptr_eq(t, tape))
        {
            tapes.push(tape);
        }
        let tape_held = tapes.iter().fold((0, 0), |(items, bytes), tape| {
            (items + tape.paths.len(), bytes + tape.heap_bytes())
        });
        SimulatorMemory::set(&self.memory.tape, tape_held);
        SimulatorMemory::set(
            &self.memory.carried,
            self.carried.as_ref().map_or((0, 0), OpenInterestBook::held),
        );
    }

    /// The session in progress (or last run), if any.
    pub fn current_session(&self) -> Option<&SessionSimulator> {
        self.session.as_ref()
    }

    /// Looks at the clock once, without waiting: the event of the current instant if one is
    /// due, or when the next one is.
    ///
    /// # Errors
    /// A [`SimulatorError`] if a session cannot be built or a snapshot fails.
    pub fn poll(&mut self) -> Result<LivePoll, SimulatorError> {
        let now = self.clock.now();
        if self.config.stop_at.is_some_and(|stop| now > stop) {
            return Ok(LivePoll::Stopped);
        }
        let first_poll = !self.started;
        self.started = true;
        let today = new_york_date(now);
        if let Some(session) = self.calendar.session(today)
            && session.open.to_utc() <= now
            && (now < session.close.to_utc()
                || self.config.catch_up_last_close
                || self.running_on(today))
        {
            if let Some(poll) = self.poll_session(today, now)? {
                return Ok(poll);
            }
        } else if first_poll && self.config.catch_up_last_close {
            let last = self.calendar.market_state(now).trade_date;
            if let Some(poll) = self.poll_session(last, now)? {
                return Ok(poll);
            }
        }
        let state = self.calendar.market_state(now);
        Ok(LivePoll::Closed {
            next_open: state.next_open.to_utc(),
        })
    }

    fn running_on(&self, date: NaiveDate) -> bool {
        self.session
            .as_ref()
            .is_some_and(|s| s.trade_date() == date && !s.is_finished())
    }

    /// The poll result within the session of `date`; `None` once that session is finished.
    fn poll_session(
        &mut self,
        date: NaiveDate,
        now: DateTime<Utc>,
    ) -> Result<Option<LivePoll>, SimulatorError> {
        if self.session.as_ref().map(SessionSimulator::trade_date) != Some(date) {
            self.start_session(date)?;
        }
        let Some(session) = self.session.as_mut() else {
            return Ok(None);
        };
        if session.is_finished() {
            return Ok(None);
        }
        match session.advance_to(now) {
            Some(event) => Ok(Some(LivePoll::Event(event?))),
            None => Ok(session.next_instant().map(LivePoll::NextInstant)),
        }
    }

    fn start_session(&mut self, date: NaiveDate) -> Result<(), SimulatorError> {
        // Carry the previous session's close only into the very next session.
        let previous = self.calendar.previous_trading_day(date);
        let carried = match self.session.take() {
            Some(done) if done.trade_date() == previous => Some(done.closing_open_interest()),
            Some(_) => None,
            None => self
                .carried
                .take()
                .filter(|book| book.as_of == Some(previous)),
        };
        let config = SessionConfig {
            seed: self.config.seed,
            trade_date: date,
            interval: self.config.interval,
            rate: self.config.rate,
            tail_every: self.config.tail_every,
        };
        let tape = self
            .tape
            .as_ref()
            // The tape must also hold the next session, whose open reacts to today's
            // after-close reports.
            .filter(|t| {
                t.seed == self.config.seed
                    && t.day_index(date).is_some()
                    && t.last_date()
                        .is_some_and(|last| last >= self.calendar.next_trading_day(date))
            })
            .cloned();
        let session = match tape {
            Some(tape) => SessionSimulator::with_tape(
                Arc::clone(&self.universe),
                tape,
                config,
                carried.as_ref(),
            )?,
            None => SessionSimulator::new(Arc::clone(&self.universe), config, carried.as_ref())?,
        };
        self.carried = None;
        self.session = Some(session);
        self.record_memory();
        Ok(())
    }
}

impl QuoteSource for LiveSimulator {
    fn name(&self) -> &str {
        "simulator-live"
    }

    /// Every event re-quotes the whole universe and the seed regenerates any instant: the
    /// archive keeps a sample.
    fn archive_policy(&self) -> ArchivePolicy {
        ArchivePolicy::Sampled
    }

    fn next_event(&mut self) -> SourceFuture<'_, Result<Option<SourceEvent>, SourceError>> {
        Box::pin(async move {
            loop {
                match self.poll()? {
                    LivePoll::Event(event) => return Ok(Some(event)),
                    LivePoll::Stopped => return Ok(None),
                    LivePoll::NextInstant(at) | LivePoll::Closed { next_open: at } => {
                        let at = match self.config.stop_at {
                            // Wake just past the end to report it.
                            Some(stop) if stop < at => stop + TimeDelta::microseconds(1),
                            _ => at,
                        };
                        self.sleeper.sleep_until(at).await;
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sleepers_return_at_once_when_the_instant_has_come() {
        let start = DateTime::<Utc>::from_timestamp(1_795_000_000, 0).unwrap();
        let clock = Arc::new(ManualClock::new(start));
        let runtime = tokio::runtime::Builder::new_current_thread()
            .build()
            .unwrap();
        // A clock sleeper whose clock is already past the instant never touches a timer (this
        // runtime has none).
        let sleeper = ClockSleeper::new(Arc::clone(&clock) as Arc<dyn Clock>, 60.0);
        runtime.block_on(sleeper.sleep_until(start - TimeDelta::seconds(1)));
        runtime.block_on(sleeper.sleep_until(start));
        // A virtual sleeper moves its clock forward, never back.
        let virtual_sleeper = VirtualSleeper::new(Arc::clone(&clock));
        runtime.block_on(virtual_sleeper.sleep_until(start + TimeDelta::minutes(5)));
        assert_eq!(clock.now(), start + TimeDelta::minutes(5));
        runtime.block_on(virtual_sleeper.sleep_until(start));
        assert_eq!(clock.now(), start + TimeDelta::minutes(5));
    }
}
