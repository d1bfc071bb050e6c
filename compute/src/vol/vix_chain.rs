//! The VIX of one SPX chain snapshot: which two expirations the white paper uses, the minutes
//! to each settlement, and the index from [`super::vix`].
//!
//! # Which series
//!
//! The white paper uses SPX options with **Friday expirations**: the AM-settled standard
//! monthlies and the PM-settled SPXW weeklies (a weekly whose Friday is an exchange holiday
//! expires the Thursday before). Dailies (Monday–Thursday SPXW) and PM series on other days
//! are not used; on a date listing both an AM and a PM series the AM standard is used, as the
//! paper takes the weeklies "except the third Friday". A series with no time left at the
//! chain's instant is not a candidate.
//!
//! # Near and next term
//!
//! Among the candidates with **more than 23 and less than 37 days** to settlement, the near
//! term is the last settling at or before 30 days and the next term the first settling after
//! ([`VixTermSelection::Window`]). When that window lacks either (a missing weekly, a holiday
//! week), the two candidates that bracket 30 days are used ([`VixTermSelection::Bracketing`]);
//! without those, there is no index ([`VolError::NotComputable`]). The method interpolates
//! and never extrapolates.
//!
//! # Minutes to settlement
//!
//! AM series settle at **09:30 New York** on the expiration day (the special opening
//! quotation), PM series at **that day's close** (16:00, 13:00 on an early-close day,
//! [`crate::time::NyseCalendar::early_close`]). The minutes are counted on the New York wall
//! clock, as the paper adds the minutes to midnight of today, 1,440 per day in between and the
//! minutes from midnight to settlement on the expiration day (a daylight-saving change in
//! between moves neither), to the second. `T = minutes / 525,600`; `R` is the chain rows'
//! continuously compounded rate of that expiration.
//!
//! # Quotes
//!
//! Each strike's call and put bid/ask as the chain carries them: a missing bid is a zero bid, a
//! side without an ask (not listed, or no quote) or with an ask below its bid has no quote. The
//! per-term σ² and the interpolation are [`vix_term_variance`] and [`vix_index`].

use std::collections::BTreeMap;

use chrono::{DateTime, Datelike, Days, NaiveDate, NaiveTime, Utc, Weekday};
use optics_schemas::{ChainRow, ChainSide, SettlementStyle};

use super::VolError;
use super::vix::{
    BidAsk, MINUTES_30_DAYS, MINUTES_PER_YEAR, TermVariance, VixIndex, VixStrike, vix_index,
    vix_term_variance,
};
use crate::time::{NEW_YORK, NyseCalendar, REGULAR_CLOSE, REGULAR_OPEN, new_york_datetime};

/// The underlying whose options the VIX measures.
pub const VIX_UNDERLYING: &str = "SPX";
/// Days to settlement a term must exceed to be in the white paper's window.
pub const VIX_WINDOW_MIN_DAYS: f64 = 23.0;
/// Days to settlement a term must stay below to be in the white paper's window.
pub const VIX_WINDOW_MAX_DAYS: f64 = 37.0;
/// Minutes in a day.
const MINUTES_PER_DAY: f64 = 1_440.0;

/// How the two terms were chosen.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VixTermSelection {
    /// Both from the candidates with more than 23 and less than 37 days to settlement.
    Window,
    /// The window lacked one of them: the candidates bracketing 30 days.
    Bracketing,
}

impl VixTermSelection {
    /// The rule as a short code: `WINDOW_23_37` or `BRACKETING_30`.
    pub fn code(self) -> &'static str {
        match self {
            Self::Window => "WINDOW_23_37",
            Self::Bracketing => "BRACKETING_30",
        }
    }
}

/// One term of the index.
#[derive(Debug, Clone, PartialEq)]
pub struct VixTerm {
    /// The expiration date.
    pub expiration: NaiveDate,
    /// AM (standard monthly) or PM (weekly).
    pub settlement: SettlementStyle,
    /// The settlement instant: 09:30 New York (AM) or the day's close (PM).
    pub settles_at: DateTime<Utc>,
    /// Minutes from the chain's instant to `settles_at`, New York wall clock.
    pub minutes: f64,
    /// The term's variance and the white paper's intermediates (T = minutes / 525,600, R, F,
    /// K₀, the strip, σ²).
    pub variance: TermVariance,
}

/// The VIX of one chain snapshot and how it was reached.
#[derive(Debug, Clone, PartialEq)]
pub struct ChainVix {
    /// The instant the chain was priced (the print's time).
    pub as_of: DateTime<Utc>,
    /// The near term (settling at or before 30 days).
    pub near: VixTerm,
    /// The next term (settling after 30 days).
    pub next: VixTerm,
    /// The index, the 30-day variance and the two weights.
    pub index: VixIndex,
    /// Which rule chose the terms.
    pub selection: VixTermSelection,
}

impl ChainVix {
    /// The index, points.
    pub fn vix(&self) -> f64 {
        self.index.vix
    }
}

/// A candidate series: its expiration, settlement, settlement instant and minutes.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Candidate {
    expiration: NaiveDate,
    settlement: SettlementStyle,
    settles_at: DateTime<Utc>,
    minutes: f64,
}

/// Whether `date` is on the Friday cycle: a Friday, or a Thursday whose Friday is not a
/// trading day (the weekly then expires the Thursday before).
pub fn is_friday_cycle(date: NaiveDate) -> bool {
    match date.weekday() {
        Weekday::Fri => true,
        Weekday::Thu => date
            .checked_add_days(Days::new(1))
            .is_some_and(|friday| !NyseCalendar.is_trading_day(friday)),
        _ => false,
    }
}

/// The New York wall-clock time a series settles on its expiration day: 09:30 for AM, the
/// session's close for PM (13:00 on an early-close day).
pub fn settlement_time(expiration: NaiveDate, settlement: SettlementStyle) -> NaiveTime {
    match settlement {
        SettlementStyle::Am => REGULAR_OPEN,
        SettlementStyle::Pm => NyseCalendar
            .early_close(expiration)
            .unwrap_or(REGULAR_CLOSE),
    }
}

/// The settlement instant of a series (see [`settlement_time`]).
pub fn settlement_instant(expiration: NaiveDate, settlement: SettlementStyle) -> DateTime<Utc> {
    new_york_datetime(expiration, settlement_time(expiration, settlement)).with_timezone(&Utc)
}

/// Minutes from `as_of` to the settlement of a series, on the New York wall clock (the white
/// paper's minutes to midnight + 1,440 per day between + minutes after midnight on the
/// settlement day), to the second. Negative once settled.
pub fn minutes_to_settlement(
    as_of: DateTime<Utc>,
    expiration: NaiveDate,
    settlement: SettlementStyle,
) -> f64 {
    let now = as_of.with_timezone(&NEW_YORK).naive_local();
    let settles = expiration.and_time(settlement_time(expiration, settlement));
    let elapsed = settles.signed_duration_since(now);
    elapsed.num_milliseconds() as f64 / 60_000.0
}

/// The expirations among `listed` the index can use from a chain of `trade_date`, for a
/// reader that fetches a stored chain one expiration at a time: every Friday-cycle date after
/// `trade_date` at most 37 calendar days out, and the first one beyond (what the bracketing
/// rule may need). Ascending.
pub fn vix_candidate_expirations(trade_date: NaiveDate, listed: &[NaiveDate]) -> Vec<NaiveDate> {
    let mut dates: Vec<NaiveDate> = listed
        .iter()
        .copied()
        .filter(|d| *d > trade_date && is_friday_cycle(*d))
        .collect();
    dates.sort_unstable();
    dates.dedup();
    let within = dates.partition_point(|d| (*d - trade_date).num_days() <= 37);
    dates.truncate((within + 1).min(dates.len()));
    dates
}

/// The candidate series of `rows` at `as_of`, by settlement instant.
fn candidates(rows: &[ChainRow], as_of: DateTime<Utc>) -> Vec<Candidate> {
    let mut series: BTreeMap<NaiveDate, SettlementStyle> = BTreeMap::new();
    for row in rows {
        let eligible = match row.settlement {
            SettlementStyle::Am => true,
            SettlementStyle::Pm => is_friday_cycle(row.expiration),
        };
        if !eligible {
            continue;
        }
        // The AM standard wins over a PM series of the same date.
        series
            .entry(row.expiration)
            .and_modify(|s| {
                if row.settlement == SettlementStyle::Am {
                    *s = SettlementStyle::Am;
                }
            })
            .or_insert(row.settlement);
    }
    let mut out: Vec<Candidate> = series
        .into_iter()
        .map(|(expiration, settlement)| Candidate {
            expiration,
            settlement,
            settles_at: settlement_instant(expiration, settlement),
            minutes: minutes_to_settlement(as_of, expiration, settlement),
        })
        .filter(|c| c.minutes > 0.0)
        .collect();
    out.sort_by(|a, b| a.minutes.total_cmp(&b.minutes));
    out
}

/// The near and next term among `candidates` (sorted by minutes), and the rule used.
fn select(candidates: &[Candidate]) -> Option<(Candidate, Candidate, VixTermSelection)> {
    let pick = |pool: &[Candidate]| {
        let near = pool.iter().rev().find(|c| c.minutes <= MINUTES_30_DAYS)?;
        let next = pool.iter().find(|c| c.minutes > MINUTES_30_DAYS)?;
        Some((*near, *next))
    };
    let window: Vec<Candidate> = candidates
        .iter()
        .copied()
        .filter(|c| {
            c.minutes > VIX_WINDOW_MIN_DAYS * MINUTES_PER_DAY
                && c.minutes < VIX_WINDOW_MAX_DAYS * MINUTES_PER_DAY
        })
        .collect();
    if let Some((near, next)) = pick(&window) {
        return Some((near, next, VixTermSelection::Window));
    }
    pick(candidates).map(|(near, next)| (near, next, VixTermSelection::Bracketing))
}

/// A chain side's quote for the method: a missing bid is a zero bid; no ask, a non-finite
/// figure or an ask below the bid is no quote.
fn quote(side: &ChainSide) -> Option<BidAsk> {
    let ask = side.ask.filter(|a| a.is_finite() && *a >= 0.0)?;
    let bid = side
        .bid
        .filter(|b| b.is_finite() && *b >= 0.0)
        .unwrap_or(0.0);
    (ask >= bid).then_some(BidAsk { bid, ask })
}

/// One term's variance from its rows.
fn term(rows: &[ChainRow], candidate: Candidate) -> Result<VixTerm, VolError> {
    let mut strikes: Vec<&ChainRow> = rows
        .iter()
        .filter(|r| r.expiration == candidate.expiration && r.settlement == candidate.settlement)
        .collect();
    strikes.sort_by(|a, b| a.strike.total_cmp(&b.strike));
    strikes.dedup_by(|a, b| a.strike == b.strike);
    let rate = strikes.first().map_or(f64::NAN, |r| r.rate);
    let chain: Vec<VixStrike> = strikes
        .iter()
        .map(|r| VixStrike {
            strike: r.strike,
            call: quote(&r.call),
            put: quote(&r.put),
        })
        .collect();
    let years = candidate.minutes / MINUTES_PER_YEAR;
    let variance = vix_term_variance(&chain, years, rate).map_err(|e| match e {
        VolError::NotComputable { what, reason } => VolError::NotComputable {
            what,
            reason: format!(
                "{} {} term: {reason}",
                candidate.expiration,
                candidate.settlement.as_str()
            ),
        },
        other => other,
    })?;
    Ok(VixTerm {
        expiration: candidate.expiration,
        settlement: candidate.settlement,
        settles_at: candidate.settles_at,
        minutes: candidate.minutes,
        variance,
    })
}

/// The VIX of one SPX chain snapshot priced at `as_of` (see the module documentation).
///
/// Errors ([`VolError::NotComputable`]) when no two candidate series bracket 30 days, and with
/// the reason of [`vix_term_variance`] when a chosen term has no variance.
pub fn chain_vix(rows: &[ChainRow], as_of: DateTime<Utc>) -> Result<ChainVix, VolError> {
    let candidates = candidates(rows, as_of);
    let Some((near, next, selection)) = select(&candidates) else {
        let listed: Vec<String> = candidates
            .iter()
            .map(|c| {
                format!(
                    "{} {} ({:.2} days)",
                    c.expiration,
                    c.settlement.as_str(),
                    c.minutes / MINUTES_PER_DAY
                )
            })
            .collect();
        return Err(VolError::NotComputable {
            what: "VIX terms",
            reason: format!(
                "no two Friday-cycle expirations bracket 30 days at {as_of} (candidates: {})",
                if listed.is_empty() {
                    "none".to_owned()
                } else {
                    listed.join(", ")
                }
            ),
        });
    };
    let near = term(rows, near)?;
    let next = term(rows, next)?;
    let index = vix_index(&near.variance, &next.variance)?;
    Ok(ChainVix {
        as_of,
        near,
        next,
        index,
        selection,
    })
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;
    use optics_schemas::{ForwardSource, PricingModelCode};

    use super::*;

    fn date(y: i32, m: u32, d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(y, m, d).unwrap()
    }

    fn quoted(bid: f64, ask: f64) -> ChainSide {
        ChainSide {
            option_symbol: Some("SPX".to_owned()),
            bid: Some(bid),
            ask: Some(ask),
            mid: Some(0.5 * (bid + ask)),
            ..ChainSide::default()
        }
    }

    /// A strike row of `expiration`/`settlement` with the given call and put quotes.
    fn row(
        expiration: NaiveDate,
        settlement: SettlementStyle,
        strike: f64,
        call: (f64, f64),
        put: (f64, f64),
    ) -> ChainRow {
        ChainRow {
            underlying: "SPX".to_owned(),
            trade_date: date(2026, 11, 2),
            as_of: Utc.with_ymd_and_hms(2026, 11, 2, 15, 0, 0).unwrap(),
            expiration,
            settlement,
            dte: 0,
            years_to_expiry: 0.0,
            strike,
            spot: 100.0,
            forward: 100.0,
            forward_source: ForwardSource::Parity,
            forward_strike_count: 1,
            rate: 0.04,
            carry_yield: 0.0,
            model: PricingModelCode::Black76,
            call: quoted(call.0, call.1),
            put: quoted(put.0, put.1),
        }
    }

    /// Five strikes around 100 whose prices scale with `level` (a vol-like knob).
    fn term_rows(expiration: NaiveDate, settlement: SettlementStyle, level: f64) -> Vec<ChainRow> {
        let k = |x: f64| x * level;
        vec![
            row(
                expiration,
                settlement,
                90.0,
                (10.0 + k(1.0), 10.2 + k(1.0)),
                (k(0.8), k(0.8) + 0.2),
            ),
            row(
                expiration,
                settlement,
                95.0,
                (5.5 + k(1.5), 5.7 + k(1.5)),
                (k(1.4), k(1.4) + 0.2),
            ),
            row(
                expiration,
                settlement,
                100.0,
                (k(2.5), k(2.5) + 0.2),
                (k(2.5), k(2.5) + 0.2),
            ),
            row(
                expiration,
                settlement,
                105.0,
                (k(1.3), k(1.3) + 0.2),
                (5.0 + k(1.6), 5.2 + k(1.6)),
            ),
            row(
                expiration,
                settlement,
                110.0,
                (k(0.7), k(0.7) + 0.2),
                (10.0 + k(1.0), 10.2 + k(1.0)),
            ),
        ]
    }

    /// 10:00 New York on Monday 2026-11-02 (EST: 15:00 UTC).
    fn as_of() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 11, 2, 15, 0, 0).unwrap()
    }

    #[test]
    fn friday_cycle_and_settlement_instants() {
        assert!(is_friday_cycle(date(2026, 11, 27)));
        assert!(!is_friday_cycle(date(2026, 11, 25)));
        // Good Friday 2026 is April 3: the weekly expires Thursday April 2.
        assert!(is_friday_cycle(date(2026, 4, 2)));
        assert!(!is_friday_cycle(date(2026, 4, 9)));
        // AM: 09:30 New York (14:30 UTC in December); PM: 16:00, 13:00 the day after
        // Thanksgiving.
        assert_eq!(
            settlement_instant(date(2026, 12, 18), SettlementStyle::Am),
            Utc.with_ymd_and_hms(2026, 12, 18, 14, 30, 0).unwrap()
        );
        assert_eq!(
            settlement_instant(date(2026, 12, 11), SettlementStyle::Pm),
            Utc.with_ymd_and_hms(2026, 12, 11, 21, 0, 0).unwrap()
        );
        assert_eq!(
            settlement_instant(date(2026, 11, 27), SettlementStyle::Pm),
            Utc.with_ymd_and_hms(2026, 11, 27, 18, 0, 0).unwrap()
        );
    }

    #[test]
    fn minutes_are_counted_on_the_new_york_wall_clock() {
        // From 10:00 on Monday 2026-11-02: 14 h to midnight (840), 24 whole days to
        // 2026-11-27 (36,000), 13:00 early close on the 27th (780).
        assert_eq!(
            minutes_to_settlement(as_of(), date(2026, 11, 27), SettlementStyle::Pm),
            840.0 + 24.0 * 1440.0 + 780.0
        );
        // AM on 2026-12-18: 840 + 45 days + 570.
        assert_eq!(
            minutes_to_settlement(as_of(), date(2026, 12, 18), SettlementStyle::Am),
            840.0 + 45.0 * 1440.0 + 570.0
        );
        // Across the end of daylight saving (2026-11-01): from 10:00 EDT on Friday
        // 2026-10-30 to 16:00 EST on 2026-11-06 is 7 days and 6 hours on the wall clock
        // (the elapsed time is an hour longer).
        let edt = Utc.with_ymd_and_hms(2026, 10, 30, 14, 0, 0).unwrap();
        assert_eq!(
            minutes_to_settlement(edt, date(2026, 11, 6), SettlementStyle::Pm),
            7.0 * 1440.0 + 360.0
        );
    }

    #[test]
    fn the_window_picks_friday_series_and_prefers_the_am_standard() {
        // From Monday 2026-11-02 10:00: Fri 11-27 PM (25.1 d), Thu 12-03 daily (31.25 d,
        // not a Friday), Fri 12-04 AM and PM (31.98 d AM: the AM wins), Fri 12-11 PM (39.25 d,
        // outside the window), Fri 11-20 PM (18.25 d, below it).
        let mut rows = Vec::new();
        rows.extend(term_rows(date(2026, 11, 20), SettlementStyle::Pm, 1.0));
        rows.extend(term_rows(date(2026, 11, 27), SettlementStyle::Pm, 1.0));
        rows.extend(term_rows(date(2026, 12, 3), SettlementStyle::Pm, 1.0));
        rows.extend(term_rows(date(2026, 12, 4), SettlementStyle::Pm, 5.0));
        rows.extend(term_rows(date(2026, 12, 4), SettlementStyle::Am, 1.2));
        rows.extend(term_rows(date(2026, 12, 11), SettlementStyle::Pm, 1.0));
        let vix = chain_vix(&rows, as_of()).unwrap();
        assert_eq!(vix.selection, VixTermSelection::Window);
        assert_eq!(
            (vix.near.expiration, vix.near.settlement),
            (date(2026, 11, 27), SettlementStyle::Pm)
        );
        assert_eq!(
            (vix.next.expiration, vix.next.settlement),
            (date(2026, 12, 4), SettlementStyle::Am)
        );
        let near_minutes = 840.0 + 24.0 * 1440.0 + 780.0;
        let next_minutes = 840.0 + 31.0 * 1440.0 + 570.0;
        assert_eq!(vix.near.minutes, near_minutes);
        assert_eq!(vix.next.minutes, next_minutes);

        // The same figure from the method's functions called by hand on the chosen strikes.
        let strikes = |rows: &[ChainRow]| -> Vec<VixStrike> {
            rows.iter()
                .map(|r| VixStrike {
                    strike: r.strike,
                    call: Some(BidAsk {
                        bid: r.call.bid.unwrap(),
                        ask: r.call.ask.unwrap(),
                    }),
                    put: Some(BidAsk {
                        bid: r.put.bid.unwrap(),
                        ask: r.put.ask.unwrap(),
                    }),
                })
                .collect()
        };
        let near = vix_term_variance(
            &strikes(&term_rows(date(2026, 11, 27), SettlementStyle::Pm, 1.0)),
            near_minutes / 525_600.0,
            0.04,
        )
        .unwrap();
        let next = vix_term_variance(
            &strikes(&term_rows(date(2026, 12, 4), SettlementStyle::Am, 1.2)),
            next_minutes / 525_600.0,
            0.04,
        )
        .unwrap();
        let index = vix_index(&near, &next).unwrap();
        assert_eq!(vix.index, index);
        assert_eq!(vix.near.variance, near);
        assert!(vix.vix() > 0.0);
        let w1 = (next_minutes - 43_200.0) / (next_minutes - near_minutes);
        assert!((vix.index.near_weight - w1).abs() < 1e-15);
    }

    #[test]
    fn bracketing_when_the_window_lacks_a_term_and_an_error_without_one() {
        // Only 11-20 (18.25 d) and 12-18 AM (45.98 d): nothing in the window, they bracket.
        let mut rows = term_rows(date(2026, 11, 20), SettlementStyle::Pm, 1.0);
        rows.extend(term_rows(date(2026, 12, 18), SettlementStyle::Am, 1.0));
        let vix = chain_vix(&rows, as_of()).unwrap();
        assert_eq!(vix.selection, VixTermSelection::Bracketing);
        assert_eq!(vix.near.expiration, date(2026, 11, 20));
        assert_eq!(vix.next.expiration, date(2026, 12, 18));

        // Nothing beyond 30 days: no index, and the reason lists the candidates.
        let short = term_rows(date(2026, 11, 20), SettlementStyle::Pm, 1.0);
        let err = chain_vix(&short, as_of()).unwrap_err().to_string();
        assert!(err.contains("bracket 30 days"), "{err}");
        assert!(err.contains("2026-11-20 PM"), "{err}");
        // A daily beyond 30 days does not count.
        let mut dailies = short.clone();
        dailies.extend(term_rows(date(2026, 12, 9), SettlementStyle::Pm, 1.0));
        assert!(chain_vix(&dailies, as_of()).is_err());
    }

    #[test]
    fn a_term_without_quotes_is_refused_with_its_name() {
        let mut rows = term_rows(date(2026, 11, 27), SettlementStyle::Pm, 1.0);
        let mut next = term_rows(date(2026, 12, 4), SettlementStyle::Am, 1.0);
        for r in &mut next {
            r.put.ask = None;
        }
        rows.extend(next);
        let err = chain_vix(&rows, as_of()).unwrap_err().to_string();
        assert!(err.contains("2026-12-04 AM term"), "{err}");
    }

    #[test]
    fn candidate_expirations_for_a_stored_chain() {
        let listed = [
            date(2026, 11, 19), // the session itself
            date(2026, 11, 20),
            date(2026, 11, 23), // a Monday daily
            date(2026, 11, 27),
            date(2026, 12, 18),
            date(2026, 12, 24), // Thursday before Christmas Friday: Friday cycle
            date(2026, 12, 31), // Thursday before New Year's Day: the first beyond 37 days
            date(2027, 1, 15),
            date(2027, 3, 19),
        ];
        assert_eq!(
            vix_candidate_expirations(date(2026, 11, 19), &listed),
            vec![
                date(2026, 11, 20),
                date(2026, 11, 27),
                date(2026, 12, 18),
                date(2026, 12, 24),
                date(2026, 12, 31)
            ]
        );
    }
}
