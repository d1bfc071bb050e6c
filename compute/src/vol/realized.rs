//! Close-to-close realized volatility (`hv_basis`).
//!
//! HV over N sessions uses exactly the last N daily log returns ln(Cᵢ / Cᵢ₋₁), so the last N + 1
//! closes. It is their **sample** standard deviation (denominator N − 1, mean subtracted),
//! annualised by √252 and expressed in percentage points:
//!
//! `hv = 100 · √252 · √( Σ (rᵢ − r̄)² / (N − 1) )`.
//!
//! Closes are one per session, oldest first, in dollars; the caller aligns them to the trading
//! calendar (a missing session is the caller's to fill or drop, not ours to guess). A window
//! whose closes include a non-finite or non-positive value has no HV (`None`), as does a window
//! longer than the history or shorter than 2 returns.

use super::{VolError, check_positive};

/// Sessions per year used to annualise daily variance.
pub const TRADING_DAYS_PER_YEAR: f64 = 252.0;

/// The standard HV windows, in sessions.
pub const HV_WINDOWS: [usize; 9] = [5, 10, 20, 30, 60, 90, 120, 180, 252];

/// Daily log returns ln(Cᵢ / Cᵢ₋₁) of closes (oldest first): one fewer than the closes.
///
/// Errors when a close is not a finite number > 0.
pub fn log_returns(closes: &[f64]) -> Result<Vec<f64>, VolError> {
    check_positive("closes", closes)?;
    Ok(closes.windows(2).map(|w| (w[1] / w[0]).ln()).collect())
}

/// Sample standard deviation (n − 1) of `values`, two-pass for accuracy; `None` below 2 values.
pub(crate) fn sample_std(values: &[f64]) -> Option<f64> {
    if values.len() < 2 {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().sum::<f64>() / n;
    let squares: f64 = values.iter().map(|v| (v - mean).powi(2)).sum();
    Some((squares / (n - 1.0)).sqrt())
}

/// Annualised percentage points from the sample standard deviation of daily log returns.
fn annualised_pct(returns: &[f64]) -> Option<f64> {
    // Closes hundreds of orders of magnitude apart overflow the squares: no figure then.
    sample_std(returns)
        .map(|std| std * TRADING_DAYS_PER_YEAR.sqrt() * 100.0)
        .filter(|hv| hv.is_finite())
}

/// The last `window` log returns of `closes`, or `None` when there are not enough closes or a
/// close in the window is not a finite number > 0.
fn window_returns(closes: &[f64], window: usize) -> Option<Vec<f64>> {
    let start = closes.len().checked_sub(window.checked_add(1)?)?;
    log_returns(&closes[start..]).ok()
}

/// Realized volatility over exactly the last `window` sessions, annualised percentage points.
///
/// `None` when `window` < 2, when there are fewer than `window` + 1 closes, or when a close
/// in the window is not a finite number > 0.
pub fn hv(closes: &[f64], window: usize) -> Option<f64> {
    if window < 2 {
        return None;
    }
    annualised_pct(&window_returns(closes, window)?)
}

/// Whether any reaction session falls inside the last `window` returns of `closes_len` closes.
///
/// A reaction session is an index into the closes (≥ 1): the session whose close first reflects
/// the report (the day after an after-close report, the day of a pre-open report). Its return
/// is the one from the previous close to that close.
pub fn earnings_in_window(closes_len: usize, window: usize, reaction_sessions: &[usize]) -> bool {
    let first = closes_len.saturating_sub(window).max(1);
    reaction_sessions
        .iter()
        .any(|&i| i >= first && i < closes_len)
}

/// Realized volatility over the last `window` sessions with the earnings reaction sessions
/// dropped, annualised percentage points.
///
/// The window covers the same N sessions as [`hv`]; the returns of reaction sessions inside it
/// (indices into `closes`, see [`earnings_in_window`]) are removed and the sample standard
/// deviation is taken over the N − k returns left — the window is not extended backwards, so
/// the figure describes the same period as the plain HV. With no reaction session in the window
/// this equals [`hv`]. `None` as for [`hv`], or when fewer than 2 returns remain.
pub fn hv_ex_earnings(closes: &[f64], window: usize, reaction_sessions: &[usize]) -> Option<f64> {
    if window < 2 {
        return None;
    }
    let returns = window_returns(closes, window)?;
    // returns[j] ends at close index first + j.
    let first = closes.len() - window;
    let kept: Vec<f64> = returns
        .iter()
        .enumerate()
        .filter(|(j, _)| !reaction_sessions.contains(&(first + j)))
        .map(|(_, r)| *r)
        .collect();
    annualised_pct(&kept)
}

/// HV over `window` sessions as of each close: element i is [`hv`] of `closes[..=i]` (so the
/// first `window` elements are `None`). Same length as `closes`.
pub fn hv_series(closes: &[f64], window: usize) -> Vec<Option<f64>> {
    // Each window is recomputed in full (two-pass): O(n·N), a few million operations for
    // 1000 sessions × every standard window, and no drift from running sums across bad closes.
    (0..closes.len())
        .map(|i| hv(&closes[..=i], window))
        .collect()
}

/// HV at the standard windows ([`HV_WINDOWS`]) as of the last close, annualised percentage
/// points; `None` where the history is too short (or a close in the window is bad).
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct HvSet {
    /// 5 sessions.
    pub hv_5d_pct: Option<f64>,
    /// 10 sessions.
    pub hv_10d_pct: Option<f64>,
    /// 20 sessions.
    pub hv_20d_pct: Option<f64>,
    /// 30 sessions.
    pub hv_30d_pct: Option<f64>,
    /// 60 sessions.
    pub hv_60d_pct: Option<f64>,
    /// 90 sessions.
    pub hv_90d_pct: Option<f64>,
    /// 120 sessions.
    pub hv_120d_pct: Option<f64>,
    /// 180 sessions.
    pub hv_180d_pct: Option<f64>,
    /// 252 sessions.
    pub hv_252d_pct: Option<f64>,
}

impl HvSet {
    /// Every standard window of `closes` (oldest first) as of the last close.
    pub fn from_closes(closes: &[f64]) -> Self {
        let [a, b, c, d, e, f, g, h, i] = HV_WINDOWS.map(|w| hv(closes, w));
        Self {
            hv_5d_pct: a,
            hv_10d_pct: b,
            hv_20d_pct: c,
            hv_30d_pct: d,
            hv_60d_pct: e,
            hv_90d_pct: f,
            hv_120d_pct: g,
            hv_180d_pct: h,
            hv_252d_pct: i,
        }
    }

    /// `(window in sessions, HV)` pairs in [`HV_WINDOWS`] order.
    pub fn by_window(&self) -> [(usize, Option<f64>); 9] {
        let values = [
            self.hv_5d_pct,
            self.hv_10d_pct,
            self.hv_20d_pct,
            self.hv_30d_pct,
            self.hv_60d_pct,
            self.hv_90d_pct,
            self.hv_120d_pct,
            self.hv_180d_pct,
            self.hv_252d_pct,
        ];
        let mut out = [(0, None); 9];
        for (slot, (window, value)) in out.iter_mut().zip(HV_WINDOWS.iter().zip(values)) {
            *slot = (*window, value);
        }
        out
    }

    /// The HV of one standard window; `None` for a window not in [`HV_WINDOWS`] too.
    pub fn get(&self, window: usize) -> Option<f64> {
        self.by_window()
            .iter()
            .find(|(w, _)| *w == window)
            .and_then(|(_, v)| *v)
    }
}
