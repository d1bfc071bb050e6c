//! The VIX tape: the index computed from every SPX chain snapshot the reader installs, kept as
//! one O(1) record per session (first print, high, low, last, count).
//!
//! Intraday chain snapshots are not kept (the store prunes each partition to its newest two
//! versions), so the day's open, high and low exist only as this server saw them: a server
//! started mid-session records its first print at the first chain it installed, and says so
//! through [`VixSession::first`] and [`VixSession::prints`].

use std::sync::Mutex;

use chrono::{DateTime, NaiveDate, Utc};

/// One computed VIX value and the instant of the chain it was computed from.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VixPrint {
    /// The chain's `as_of`.
    pub at: DateTime<Utc>,
    /// The index, points.
    pub vix: f64,
}

/// The prints of one session.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct VixSession {
    /// The session (the chains' trade date).
    pub trade_date: NaiveDate,
    /// The earliest print recorded.
    pub first: VixPrint,
    /// The highest print (the earliest of equal ones).
    pub high: VixPrint,
    /// The lowest print (the earliest of equal ones).
    pub low: VixPrint,
    /// The latest print.
    pub last: VixPrint,
    /// How many prints were recorded.
    pub prints: u64,
}

impl VixSession {
    /// A session whose only print is `print`.
    pub fn new(trade_date: NaiveDate, print: VixPrint) -> Self {
        Self {
            trade_date,
            first: print,
            high: print,
            low: print,
            last: print,
            prints: 1,
        }
    }

    /// Adds `print` when it is later than the last one (a republished or older chain adds
    /// nothing); `true` when added.
    pub fn record(&mut self, print: VixPrint) -> bool {
        if !print.vix.is_finite() || print.at <= self.last.at {
            return false;
        }
        if print.vix > self.high.vix {
            self.high = print;
        }
        if print.vix < self.low.vix {
            self.low = print;
        }
        self.last = print;
        self.prints += 1;
        true
    }

    /// This session with `print` included (the record unchanged when it already holds it).
    #[must_use]
    pub fn including(mut self, print: VixPrint) -> Self {
        self.record(print);
        self
    }
}

/// The tape of the current session (the newest seen); see the [module documentation](self).
#[derive(Debug, Default)]
pub struct VixTape {
    session: Mutex<Option<VixSession>>,
}

impl VixTape {
    /// Records `print` of the session `trade_date`: a newer session starts a new record, an
    /// older session's print is ignored. `true` when recorded.
    pub fn record(&self, trade_date: NaiveDate, print: VixPrint) -> bool {
        if !print.vix.is_finite() {
            return false;
        }
        let mut held = self.session.lock().unwrap_or_else(|p| p.into_inner());
        match held.as_mut() {
            Some(session) if session.trade_date == trade_date => session.record(print),
            Some(session) if session.trade_date > trade_date => false,
            _ => {
                *held = Some(VixSession::new(trade_date, print));
                true
            }
        }
    }

    /// The current session's record.
    pub fn session(&self) -> Option<VixSession> {
        *self.session.lock().unwrap_or_else(|p| p.into_inner())
    }
}
