//! The scored read of `/zero-dte`: how past one-session expected moves fared against the moves
//! that followed (`em_hit_rate`, `edge_score`) and a volatility forecast blending the current
//! at-the-money IV with recent realized volatility (`iv_forecast`).
//!
//! The input is one [`SessionClose`] per stored session (the `vol_daily` dataset's close and
//! front ATM IV), oldest first. Every figure is a plain function of it.
//!
//! # Definitions
//!
//! A **scored session** is a stored session `i` whose previous stored session `i − 1` carries a
//! front ATM IV σᵢ₋₁ (the shortest-dated expiration's ATM IV at that close, annualised on the
//! calendar-day clock) and lies at most [`MAX_SESSION_GAP_DAYS`] calendar days before it (a
//! longer gap is missing history, not one session's move). With dᵢ the calendar days between
//! the two closes:
//!
//! - expected move `EMᵢ = Cᵢ₋₁ · σᵢ₋₁ · √(dᵢ/365)` dollars: the one-sigma move priced at the
//!   previous close to this close (calendar days, the clock the IV is quoted on: a Monday
//!   carries the weekend's three days);
//! - realized move `Cᵢ − Cᵢ₋₁`, previous close to close; a **hit** when `|Cᵢ − Cᵢ₋₁| ≤ EMᵢ`.
//!
//! Over the last [`SCORED_WINDOW_SESSIONS`] scored sessions (at least
//! [`MIN_SCORED_SESSIONS`], else no figure):
//!
//! - `em_hit_rate` = 100 × hits / scored sessions, percent (about 68 % when moves are normal
//!   and priced fairly);
//! - implied variance `I = mean((EMᵢ/Cᵢ₋₁)²)`, realized variance `R = mean(((Cᵢ − Cᵢ₋₁)/Cᵢ₋₁)²)`,
//!   `implied_realized_ratio = √(I/R)` (1 = moves priced fairly);
//! - `edge_score = 100 · I/(I + R)`, 0–100, increasing in the ratio, 50 when implied and
//!   realized variance are equal: above 50 options priced more movement than followed (premium
//!   sellers' side), below 50 less.
//!
//! `iv_forecast` (percentage points): `w · σ_ATM + (1 − w) · σ_HAR` with
//! w = [`IV_FORECAST_IMPLIED_WEIGHT`], σ_ATM the current ATM IV and σ_HAR the HAR-structured
//! realized volatility (after Corsi 2009, with fixed weights, not fitted):
//! `σ_HAR = 100 · √(252 · (0.2·RV₁ + 0.3·RV₅ + 0.5·RV₂₂))`, RVₙ the mean squared daily log
//! return ln(Cᵢ/Cᵢ₋₁) over the last n stored sessions (no mean subtracted, as realized variance
//! is measured). It needs [`HAR_SESSIONS`]\[2\] + 1 closes.

use chrono::NaiveDate;

/// Scored sessions in the `em_hit_rate` / `edge_score` window.
pub const SCORED_WINDOW_SESSIONS: usize = 60;
/// Fewer scored sessions than this give no `em_hit_rate` or `edge_score`.
pub const MIN_SCORED_SESSIONS: usize = 10;
/// Two stored sessions further apart than this (calendar days) are not scored as one move:
/// the longest regular gap between NYSE sessions is a holiday weekend of four days.
pub const MAX_SESSION_GAP_DAYS: i64 = 5;
/// The HAR horizons, sessions: day, week, month.
pub const HAR_SESSIONS: [usize; 3] = [1, 5, 22];
/// The HAR weights of [`HAR_SESSIONS`], fixed (they sum to 1).
pub const HAR_WEIGHTS: [f64; 3] = [0.2, 0.3, 0.5];
/// Weight of the current ATM IV in `iv_forecast`; the rest goes to the HAR realized vol.
pub const IV_FORECAST_IMPLIED_WEIGHT: f64 = 0.5;

/// Calendar days per year of the IV clock.
const DAYS_PER_YEAR: f64 = 365.0;
/// Sessions per year used to annualise daily realized variance.
const SESSIONS_PER_YEAR: f64 = 252.0;

/// Why a scored figure cannot be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ZeroDteError {
    /// Not enough usable history.
    #[error("{what} needs {needed} {unit}; {available} stored")]
    InsufficientHistory {
        /// The figure.
        what: &'static str,
        /// How many are needed.
        needed: usize,
        /// How many are usable.
        available: usize,
        /// What is counted.
        unit: &'static str,
    },
    /// A session's value out of its domain.
    #[error("session {date}: {field} {reason}")]
    InvalidSession {
        /// The session.
        date: NaiveDate,
        /// The offending field.
        field: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
    /// Sessions not strictly ascending by date.
    #[error("sessions must be strictly ascending by date; {0} is out of order")]
    Unordered(NaiveDate),
    /// A current value out of its domain.
    #[error("invalid {field}: {reason}")]
    Input {
        /// The offending field.
        field: &'static str,
        /// What is wrong with it.
        reason: &'static str,
    },
}

/// One stored session: its close and the front ATM IV at that close.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SessionClose {
    /// The session.
    pub trade_date: NaiveDate,
    /// Closing price, dollars.
    pub close: f64,
    /// The shortest-dated expiration's ATM IV at the close, percentage points.
    pub front_atm_iv_pct: Option<f64>,
}

/// One scored session.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ScoredMove {
    /// The session whose move is scored.
    pub trade_date: NaiveDate,
    /// Calendar days since the previous close.
    pub days: i64,
    /// The previous close, dollars.
    pub previous_close: f64,
    /// This close, dollars.
    pub close: f64,
    /// The expected move priced at the previous close, dollars.
    pub expected_move: f64,
    /// close − previous close, dollars.
    pub realized_move: f64,
    /// |realized move| ≤ expected move.
    pub hit: bool,
}

/// The scored window's figures.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MoveScore {
    /// Scored sessions in the window.
    pub sessions: usize,
    /// Of which hits.
    pub hits: usize,
    /// The first scored session of the window.
    pub first: NaiveDate,
    /// The last.
    pub last: NaiveDate,
    /// 100 × hits / sessions, percent.
    pub hit_rate_pct: f64,
    /// √I, percent of the previous close.
    pub implied_rms_move_pct: f64,
    /// √R, percent of the previous close.
    pub realized_rms_move_pct: f64,
    /// √(I/R); `None` when no session moved.
    pub implied_realized_ratio: Option<f64>,
    /// 100 · I/(I + R), 0–100.
    pub edge_score: f64,
}

fn check_sessions(history: &[SessionClose]) -> Result<(), ZeroDteError> {
    for (i, s) in history.iter().enumerate() {
        if !(s.close.is_finite() && s.close > 0.0) {
            return Err(ZeroDteError::InvalidSession {
                date: s.trade_date,
                field: "close",
                reason: "must be a finite number > 0",
            });
        }
        if s.front_atm_iv_pct
            .is_some_and(|iv| !(iv.is_finite() && iv > 0.0))
        {
            return Err(ZeroDteError::InvalidSession {
                date: s.trade_date,
                field: "front_atm_iv_pct",
                reason: "must be a finite number > 0 when present",
            });
        }
        if i > 0 && history[i - 1].trade_date >= s.trade_date {
            return Err(ZeroDteError::Unordered(s.trade_date));
        }
    }
    Ok(())
}

/// The last `window` scored sessions of `history` (oldest first; see the module docs).
pub fn scored_moves(
    history: &[SessionClose],
    window: usize,
) -> Result<Vec<ScoredMove>, ZeroDteError> {
    check_sessions(history)?;
    let mut moves: Vec<ScoredMove> = history
        .windows(2)
        .filter_map(|pair| {
            let (previous, current) = (pair[0], pair[1]);
            let iv = previous.front_atm_iv_pct?;
            let days = (current.trade_date - previous.trade_date).num_days();
            if days > MAX_SESSION_GAP_DAYS {
                return None;
            }
            let expected_move = previous.close * iv / 100.0 * (days as f64 / DAYS_PER_YEAR).sqrt();
            let realized_move = current.close - previous.close;
            Some(ScoredMove {
                trade_date: current.trade_date,
                days,
                previous_close: previous.close,
                close: current.close,
                expected_move,
                realized_move,
                hit: realized_move.abs() <= expected_move,
            })
        })
        .collect();
    let skip = moves.len().saturating_sub(window);
    moves.drain(..skip);
    Ok(moves)
}

/// `100 · implied/(implied + realized)` of two variances; `None` when both are 0 or either is
/// negative or not finite.
pub fn edge_score(implied_variance: f64, realized_variance: f64) -> Option<f64> {
    let total = implied_variance + realized_variance;
    (implied_variance >= 0.0 && realized_variance >= 0.0 && total > 0.0 && total.is_finite())
        .then(|| 100.0 * implied_variance / total)
}

/// The hit rate and edge of `moves` (a window from [`scored_moves`]); at least `min_sessions`.
pub fn move_score(moves: &[ScoredMove], min_sessions: usize) -> Result<MoveScore, ZeroDteError> {
    let (Some(first), Some(last)) = (moves.first(), moves.last()) else {
        return Err(insufficient_moves(min_sessions.max(1), 0));
    };
    if moves.len() < min_sessions {
        return Err(insufficient_moves(min_sessions, moves.len()));
    }
    let n = moves.len() as f64;
    let hits = moves.iter().filter(|m| m.hit).count();
    let implied = moves
        .iter()
        .map(|m| (m.expected_move / m.previous_close).powi(2))
        .sum::<f64>()
        / n;
    let realized = moves
        .iter()
        .map(|m| (m.realized_move / m.previous_close).powi(2))
        .sum::<f64>()
        / n;
    let edge = edge_score(implied, realized).ok_or(ZeroDteError::Input {
        field: "moves",
        reason: "neither an expected nor a realized move in the window",
    })?;
    Ok(MoveScore {
        sessions: moves.len(),
        hits,
        first: first.trade_date,
        last: last.trade_date,
        hit_rate_pct: 100.0 * hits as f64 / n,
        implied_rms_move_pct: 100.0 * implied.sqrt(),
        realized_rms_move_pct: 100.0 * realized.sqrt(),
        implied_realized_ratio: (realized > 0.0).then(|| (implied / realized).sqrt()),
        edge_score: edge,
    })
}

fn insufficient_moves(needed: usize, available: usize) -> ZeroDteError {
    ZeroDteError::InsufficientHistory {
        what: "the expected-move score",
        needed,
        available,
        unit: "scored sessions (a session after one with a front ATM IV)",
    }
}

/// The HAR realized volatility of the last closes of `history` and its parts.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HarVol {
    /// Annualised realized vol of the last session, percentage points (√(252·RV₁)).
    pub daily_pct: f64,
    /// Of the last 5 sessions.
    pub weekly_pct: f64,
    /// Of the last 22 sessions.
    pub monthly_pct: f64,
    /// The HAR blend, percentage points.
    pub har_pct: f64,
}

/// σ_HAR over the closes of `history` (oldest first; see the module docs).
pub fn har_realized_vol(history: &[SessionClose]) -> Result<HarVol, ZeroDteError> {
    check_sessions(history)?;
    let longest = HAR_SESSIONS[2];
    if history.len() < longest + 1 {
        return Err(ZeroDteError::InsufficientHistory {
            what: "the HAR realized volatility",
            needed: longest + 1,
            available: history.len(),
            unit: "closes",
        });
    }
    let squared: Vec<f64> = history[history.len() - (longest + 1)..]
        .windows(2)
        .map(|w| (w[1].close / w[0].close).ln().powi(2))
        .collect();
    let mean_of_last = |n: usize| squared[squared.len() - n..].iter().sum::<f64>() / n as f64;
    let parts = HAR_SESSIONS.map(mean_of_last);
    let blend: f64 = parts.iter().zip(HAR_WEIGHTS).map(|(rv, w)| w * rv).sum();
    let annualised = |rv: f64| 100.0 * (SESSIONS_PER_YEAR * rv).sqrt();
    Ok(HarVol {
        daily_pct: annualised(parts[0]),
        weekly_pct: annualised(parts[1]),
        monthly_pct: annualised(parts[2]),
        har_pct: annualised(blend),
    })
}

/// `iv_forecast`: `w · atm_iv_pct + (1 − w) · har_pct`, percentage points.
pub fn iv_forecast_pct(atm_iv_pct: f64, har_pct: f64) -> Result<f64, ZeroDteError> {
    if !(atm_iv_pct.is_finite() && atm_iv_pct > 0.0) {
        return Err(ZeroDteError::Input {
            field: "atm_iv_pct",
            reason: "must be a finite number > 0",
        });
    }
    if !(har_pct.is_finite() && har_pct >= 0.0) {
        return Err(ZeroDteError::Input {
            field: "har_pct",
            reason: "must be a finite number >= 0",
        });
    }
    Ok(IV_FORECAST_IMPLIED_WEIGHT * atm_iv_pct + (1.0 - IV_FORECAST_IMPLIED_WEIGHT) * har_pct)
}

/// How `em_hit_rate` is computed, for the payload (from the constants the computation uses).
pub fn em_hit_rate_rule() -> String {
    format!(
        "percent of the last {SCORED_WINDOW_SESSIONS} scored sessions (at least \
         {MIN_SCORED_SESSIONS}) whose previous-close-to-close move stayed within the expected \
         move close x front ATM IV x sqrt(calendar days / {DAYS_PER_YEAR}) priced at the \
         previous close; a session is scored when the stored session before it, at most \
         {MAX_SESSION_GAP_DAYS} calendar days earlier, has a front ATM IV"
    )
}

/// How `edge_score` is computed, for the payload.
pub fn edge_score_rule() -> String {
    "100 x I / (I + R) over the scored sessions, I the mean squared expected move and R the \
     mean squared realized move, each as a fraction of the previous close: 50 = priced fairly, \
     above 50 options priced more movement than followed, below 50 less"
        .to_owned()
}

/// How `iv_forecast` is computed, for the payload (from the constants the computation uses).
pub fn iv_forecast_rule() -> String {
    let [day, week, month] = HAR_SESSIONS;
    let [w_day, w_week, w_month] = HAR_WEIGHTS;
    format!(
        "{IV_FORECAST_IMPLIED_WEIGHT} x ATM IV + {} x HAR realized vol, percentage points; HAR \
         = 100 x sqrt({SESSIONS_PER_YEAR} x ({w_day} RV{day} + {w_week} RV{week} + {w_month} \
         RV{month})), RVn the mean squared daily log return of the last n stored closes (fixed \
         weights, not fitted)",
        1.0 - IV_FORECAST_IMPLIED_WEIGHT
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn day(d: u32) -> NaiveDate {
        NaiveDate::from_ymd_opt(2026, 3, d).unwrap()
    }

    fn session(d: u32, close: f64, iv: Option<f64>) -> SessionClose {
        SessionClose {
            trade_date: day(d),
            close,
            front_atm_iv_pct: iv,
        }
    }

    #[test]
    fn a_move_within_the_expected_move_is_a_hit_and_one_beyond_a_miss() {
        // Thu 5 → Fri 6, one calendar day; IV 36.5 % on a 100 close: EM = 100·0.365·√(1/365).
        let em = 100.0 * 0.365 * (1.0f64 / 365.0).sqrt();
        let history = [
            session(5, 100.0, Some(36.5)),
            session(6, 100.0 + em * (1.0 - 1e-9), Some(36.5)),
            session(9, 100.0, None),
        ];
        let moves = scored_moves(&history, 60).unwrap();
        assert_eq!(moves.len(), 2);
        assert!(moves[0].hit, "{moves:?}");
        assert!((moves[0].expected_move - em).abs() < 1e-12);
        let beyond = [
            session(5, 100.0, Some(36.5)),
            session(6, 100.0 - em * (1.0 + 1e-9), None),
        ];
        assert!(!scored_moves(&beyond, 60).unwrap()[0].hit);
        // Fri 6 → Mon 9 is three calendar days: EM = C·0.365·√(3/365) > em.
        assert_eq!(moves[1].days, 3);
        let weekend = history[1].close * 0.365 * (3.0f64 / 365.0).sqrt();
        assert!((moves[1].expected_move - weekend).abs() < 1e-12);
        assert!(moves[1].hit);
    }

    #[test]
    fn sessions_without_a_previous_iv_or_after_a_gap_are_not_scored() {
        let history = [
            session(2, 100.0, None),
            session(3, 101.0, Some(20.0)),
            session(4, 99.0, Some(20.0)),
            // 4 → 16: a gap of 12 days is missing history.
            session(16, 99.5, Some(20.0)),
            session(17, 99.0, Some(20.0)),
        ];
        let moves = scored_moves(&history, 60).unwrap();
        let dates: Vec<NaiveDate> = moves.iter().map(|m| m.trade_date).collect();
        assert_eq!(dates, [day(4), day(17)]);
        // 101 → 99 is a 1.98 % move against EM 101·0.20·√(1/365) ≈ 1.057: a miss.
        assert!(!moves[0].hit);
        // The window keeps the most recent.
        let last = scored_moves(&history, 1).unwrap();
        assert_eq!(last.len(), 1);
        assert_eq!(last[0].trade_date, day(17));
    }

    #[test]
    fn hit_rate_and_edge_follow_their_definitions() {
        // Ten sessions alternating +1 % and −3 % moves from closes with a 20 % IV.
        let mut history = vec![session(1, 100.0, Some(20.0))];
        for d in 2..=11 {
            let previous = history.last().unwrap().close;
            let factor = if d % 2 == 0 { 1.01 } else { 0.97 };
            history.push(session(d, previous * factor, Some(20.0)));
        }
        let moves = scored_moves(&history, 60).unwrap();
        let score = move_score(&moves, 10).unwrap();
        assert_eq!(score.sessions, 10);
        // EM fraction 0.20·√(1/365) = 1.0468 %: the 1 % moves hit, the 3 % ones miss.
        assert_eq!(score.hits, 5);
        assert_eq!(score.hit_rate_pct, 50.0);
        let implied = 0.04 / 365.0;
        let realized = 0.5 * (0.01f64.powi(2) + 0.03f64.powi(2));
        assert!((score.edge_score - 100.0 * implied / (implied + realized)).abs() < 1e-9);
        assert!(
            (score.implied_realized_ratio.unwrap() - (implied / realized).sqrt()).abs() < 1e-12
        );
        assert!(score.edge_score < 50.0, "realized exceeded implied");
        assert_eq!((score.first, score.last), (day(2), day(11)));
        // One session fewer than the minimum: no score.
        assert!(matches!(
            move_score(&moves[1..], 10),
            Err(ZeroDteError::InsufficientHistory {
                needed: 10,
                available: 9,
                ..
            })
        ));
    }

    #[test]
    fn edge_score_is_50_at_parity_and_monotone() {
        assert_eq!(edge_score(1.0, 1.0), Some(50.0));
        assert!(edge_score(2.0, 1.0).unwrap() > edge_score(1.5, 1.0).unwrap());
        assert_eq!(edge_score(1.0, 0.0), Some(100.0));
        assert_eq!(edge_score(0.0, 0.0), None);
        assert_eq!(edge_score(-1.0, 2.0), None);
    }

    #[test]
    fn har_blends_day_week_and_month_realized_variance() {
        // 23 closes: 21 flat returns of +1 %, then −2 %.
        let mut history = vec![session(1, 100.0, None)];
        for d in 2..=23 {
            let previous = history.last().unwrap().close;
            let factor = if d == 23 { 0.98 } else { 1.01 };
            history.push(session(d, previous * factor, None));
        }
        let har = har_realized_vol(&history).unwrap();
        let (up, down) = (1.01f64.ln().powi(2), 0.98f64.ln().powi(2));
        let daily = down;
        let weekly = (4.0 * up + down) / 5.0;
        let monthly = (21.0 * up + down) / 22.0;
        let blend = 0.2 * daily + 0.3 * weekly + 0.5 * monthly;
        let pct = |v: f64| 100.0 * (252.0 * v).sqrt();
        assert!((har.daily_pct - pct(daily)).abs() < 1e-9);
        assert!((har.weekly_pct - pct(weekly)).abs() < 1e-9);
        assert!((har.monthly_pct - pct(monthly)).abs() < 1e-9);
        assert!((har.har_pct - pct(blend)).abs() < 1e-9);
        assert_eq!(iv_forecast_pct(20.0, 10.0).unwrap(), 15.0);
        assert!(iv_forecast_pct(f64::NAN, 10.0).is_err());
        // 22 closes are one short.
        assert!(matches!(
            har_realized_vol(&history[1..]),
            Err(ZeroDteError::InsufficientHistory {
                needed: 23,
                available: 22,
                ..
            })
        ));
    }

    #[test]
    fn bad_sessions_are_named() {
        let unordered = [session(3, 100.0, None), session(2, 100.0, None)];
        assert_eq!(
            scored_moves(&unordered, 60),
            Err(ZeroDteError::Unordered(day(2)))
        );
        let negative = [session(2, -1.0, None)];
        assert!(matches!(
            har_realized_vol(&negative),
            Err(ZeroDteError::InvalidSession { field: "close", .. })
        ));
        let bad_iv = [session(2, 100.0, Some(0.0))];
        assert!(matches!(
            scored_moves(&bad_iv, 60),
            Err(ZeroDteError::InvalidSession {
                field: "front_atm_iv_pct",
                ..
            })
        ));
    }

    #[test]
    fn the_rules_quote_the_constants() {
        assert_eq!(
            em_hit_rate_rule(),
            "percent of the last 60 scored sessions (at least 10) whose previous-close-to-close \
             move stayed within the expected move close x front ATM IV x sqrt(calendar days / \
             365) priced at the previous close; a session is scored when the stored session \
             before it, at most 5 calendar days earlier, has a front ATM IV"
        );
        assert_eq!(
            iv_forecast_rule(),
            "0.5 x ATM IV + 0.5 x HAR realized vol, percentage points; HAR = 100 x sqrt(252 x \
             (0.2 RV1 + 0.3 RV5 + 0.5 RV22)), RVn the mean squared daily log return of the last \
             n stored closes (fixed weights, not fitted)"
        );
    }
}
