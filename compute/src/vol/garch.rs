//! GARCH(1,1) with a constant mean, fitted by Gaussian maximum likelihood: the volatility
//! forecast of the `hv-regimes` dashboard.
//!
//! | quantity | unit |
//! | --- | --- |
//! | returns `rₜ` | daily log returns in **percent**: `100 · ln(Cₜ / Cₜ₋₁)` |
//! | `mu` | percent per session |
//! | `omega`, variances, `backcast` | percent² per session |
//! | `alpha`, `beta`, `persistence` | unitless |
//! | long-run and forecast vols | annualised percentage points: `√(252 · daily variance)` |
//!
//! # Model (the one `arch`'s `arch_model(r, mean="Constant", vol="GARCH", p=1, q=1,
//! dist="normal")` estimates)
//!
//! `rₜ = μ + εₜ`, `εₜ = σₜ zₜ`, `zₜ ~ N(0, 1)`, `σ²ₜ = ω + α ε²ₜ₋₁ + β σ²ₜ₋₁` with ω > 0,
//! α ≥ 0, β ≥ 0, α + β < 1. The mean μ is estimated jointly with the variance parameters (it is
//! not demeaned first). The recursion starts from the **backcast** `σ²₋₁ = ε²₋₁ := b`, so
//! `σ²₀ = ω + (α + β) b`, with `arch`'s backcast: the exponentially weighted mean of the first
//! τ = min(75, T) squared residuals of the sample mean,
//! `b = Σᵢ<τ 0.94ⁱ (rᵢ − r̄)² / Σᵢ<τ 0.94ⁱ` (fixed during the fit, as in `arch`).
//! Log-likelihood: `ℓ = −½ Σₜ [ln 2π + ln σ²ₜ + ε²ₜ / σ²ₜ]` over all T returns. (`arch` also
//! clamps σ²ₜ to loose bounds — 10⁻⁶ of the backcast level and above — that never bind at a
//! sensible optimum; they are not reproduced.)
//!
//! # Fit
//!
//! Nelder–Mead on an unconstrained reparametrisation that enforces the constraints exactly:
//! `μ = r̄ + s·x₀`, `ω = s²·e^{x₁}`, `α + β = logistic(x₂)`, `α / (α + β) = logistic(x₃)` (s the
//! sample standard deviation). Sixteen starting points (α ∈ {0.01, 0.05, 0.1, 0.2} × α + β ∈
//! {0.5, 0.7, 0.9, 0.98}, ω = (1 − α − β)·s², `arch`'s grid); the three with the highest
//! likelihood are searched, and the best result is searched again from a fresh simplex until
//! it no longer improves — Nelder–Mead's usual guard against a collapsed simplex. Against
//! `arch` 8.0 on 1,299 and 500 S&P 500 returns the log-likelihoods agree to ~5·10⁻¹⁵ relative
//! and the parameters to ~10⁻⁷ (`compute/tests/vol_reference.rs`).
//!
//! # Forecast
//!
//! With `V = ω / (1 − α − β)` (the long-run daily variance) and `h₁ = ω + α ε²_T + β σ²_T` (the
//! next session's variance), the variance k sessions ahead is `h_k = V + (α + β)^{k−1} (h₁ − V)`.
//! [`GarchFit::forecast_vol_pct`] over h sessions is the annualised vol of the **average**
//! variance over the next h sessions, `√(252 · (1/h) Σ_{k=1..h} h_k)` — the figure a
//! variance swap (or an h-session option) over that period prices — in points (returns are
//! already in percent, so no further ×100).
//!
//! # Unavailable
//!
//! [`GarchUnavailable`]: fewer than [`GARCH_MIN_RETURNS`] returns; a flat series; a search that
//! did not converge; or a fit whose persistence is at the stationarity boundary (α + β ≥ 1 −
//! 10⁻⁶, i.e. an integrated process with no long-run level).

use super::optimize::{NelderMeadOptions, nelder_mead};
use super::realized::{TRADING_DAYS_PER_YEAR, log_returns};
use super::{VolError, check_finite};

/// The fewest daily returns a fit is attempted on (about a year of sessions): below this the
/// persistence estimate is too noisy to forecast with.
pub const GARCH_MIN_RETURNS: usize = 250;

/// Persistence at or above `1 − STATIONARITY_MARGIN` has no usable long-run level.
const STATIONARITY_MARGIN: f64 = 1e-6;

/// Observations in `arch`'s backcast and its decay.
const BACKCAST_OBSERVATIONS: usize = 75;
const BACKCAST_DECAY: f64 = 0.94;

/// The four parameters (see the module documentation for units).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GarchParams {
    /// Constant mean μ, percent per session.
    pub mu: f64,
    /// ω, percent² per session.
    pub omega: f64,
    /// α (ARCH term).
    pub alpha: f64,
    /// β (GARCH term).
    pub beta: f64,
}

/// A fitted GARCH(1,1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GarchFit {
    /// The estimates.
    pub params: GarchParams,
    /// α + β.
    pub persistence: f64,
    /// Maximised Gaussian log-likelihood (natural log, all terms including ln 2π).
    pub log_likelihood: f64,
    /// Returns fitted.
    pub observations: usize,
    /// The backcast σ²₋₁, percent².
    pub backcast: f64,
    /// Conditional variance of the last observed session σ²_T, percent².
    pub last_variance: f64,
    /// Variance forecast for the next session h₁, percent².
    pub next_variance: f64,
    /// Long-run annualised vol `√(252 · ω / (1 − α − β))`, points.
    pub long_run_vol_pct: f64,
    /// Sessions for a variance shock to halve, `ln ½ / ln(α + β)`.
    pub half_life_sessions: f64,
}

/// Why there is no GARCH figure.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GarchUnavailable {
    /// A return is not finite (or a close not a finite number > 0).
    #[error(transparent)]
    BadInput(#[from] VolError),
    /// Fewer returns than [`GARCH_MIN_RETURNS`].
    #[error("GARCH(1,1) needs at least {needed} daily returns, {got} available")]
    TooShort {
        /// Returns needed.
        needed: usize,
        /// Returns given.
        got: usize,
    },
    /// Every return is the same: nothing to fit.
    #[error("the returns have no variance")]
    Flat,
    /// The likelihood search did not converge within its budget.
    #[error("the GARCH(1,1) likelihood search did not converge")]
    NotConverged,
    /// The fit is (numerically) integrated: α + β at the stationarity boundary.
    #[error("the GARCH(1,1) fit is not stationary (alpha + beta = {persistence})")]
    NonStationary {
        /// α + β of the fit.
        persistence: f64,
    },
}

impl GarchUnavailable {
    /// A short code for a payload's `reason` field.
    pub fn code(&self) -> &'static str {
        match self {
            Self::BadInput(_) => "bad_input",
            Self::TooShort { .. } => "insufficient_history",
            Self::Flat => "no_variance",
            Self::NotConverged => "not_converged",
            Self::NonStationary { .. } => "non_stationary",
        }
    }
}

/// Daily log returns of `closes` (oldest first) in percent, `100 · ln(Cₜ / Cₜ₋₁)`.
pub fn pct_log_returns(closes: &[f64]) -> Result<Vec<f64>, VolError> {
    Ok(log_returns(closes)?
        .into_iter()
        .map(|r| 100.0 * r)
        .collect())
}

/// `arch`'s backcast of `returns_pct` (see the module documentation), percent².
pub fn garch_backcast(returns_pct: &[f64]) -> f64 {
    let n = returns_pct.len() as f64;
    let mean = returns_pct.iter().sum::<f64>() / n;
    let tau = returns_pct.len().min(BACKCAST_OBSERVATIONS);
    let (mut weighted, mut weights, mut weight) = (0.0, 0.0, 1.0);
    for r in &returns_pct[..tau] {
        weighted += weight * (r - mean).powi(2);
        weights += weight;
        weight *= BACKCAST_DECAY;
    }
    weighted / weights
}

/// The variance recursion: calls `each(εₜ, σ²ₜ)` per return and returns (σ²_T, h₁).
fn recurse(
    returns_pct: &[f64],
    params: &GarchParams,
    backcast: f64,
    mut each: impl FnMut(f64, f64),
) -> (f64, f64) {
    let GarchParams {
        mu,
        omega,
        alpha,
        beta,
    } = *params;
    let (mut prev_sq, mut prev_var) = (backcast, backcast);
    for r in returns_pct {
        let variance = omega + alpha * prev_sq + beta * prev_var;
        let resid = r - mu;
        each(resid, variance);
        prev_sq = resid * resid;
        prev_var = variance;
    }
    (prev_var, omega + alpha * prev_sq + beta * prev_var)
}

fn log_likelihood_with(returns_pct: &[f64], params: &GarchParams, backcast: f64) -> f64 {
    let ln_2pi = (2.0 * std::f64::consts::PI).ln();
    let mut sum = 0.0;
    recurse(returns_pct, params, backcast, |resid, variance| {
        sum += ln_2pi + variance.ln() + resid * resid / variance;
    });
    -0.5 * sum
}

/// The Gaussian log-likelihood of `params` on `returns_pct` with `arch`'s backcast — the
/// objective [`fit_garch11`] maximises, exposed so it can be checked at another estimator's
/// parameters. Errors when a return is not finite or the series is empty.
pub fn garch11_log_likelihood(returns_pct: &[f64], params: &GarchParams) -> Result<f64, VolError> {
    check_returns(returns_pct)?;
    if returns_pct.is_empty() {
        return Err(VolError::TooFewObservations {
            what: "GARCH returns",
            needed: 1,
            got: 0,
        });
    }
    Ok(log_likelihood_with(
        returns_pct,
        params,
        garch_backcast(returns_pct),
    ))
}

fn check_returns(returns_pct: &[f64]) -> Result<(), VolError> {
    returns_pct
        .iter()
        .enumerate()
        .try_for_each(|(i, r)| check_finite("returns", i, *r).map(|_| ()))
}

fn logistic(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn logit(p: f64) -> f64 {
    (p / (1.0 - p)).ln()
}

/// The unconstrained coordinates ↔ parameters map (see the module documentation).
struct Transform {
    mean: f64,
    std: f64,
}

impl Transform {
    fn params(&self, x: &[f64]) -> GarchParams {
        let persistence = logistic(x[2]);
        let share = logistic(x[3]);
        GarchParams {
            mu: self.mean + self.std * x[0],
            omega: self.std * self.std * x[1].exp(),
            alpha: persistence * share,
            beta: persistence * (1.0 - share),
        }
    }

    fn coordinates(&self, alpha: f64, persistence: f64) -> [f64; 4] {
        let omega = (1.0 - persistence) * self.std * self.std;
        [
            0.0,
            (omega / (self.std * self.std)).ln(),
            logit(persistence),
            logit(alpha / persistence),
        ]
    }
}

/// Fits GARCH(1,1) to daily returns in percent (oldest first). See the module documentation
/// for the model, the fit and when there is no figure.
pub fn fit_garch11(returns_pct: &[f64]) -> Result<GarchFit, GarchUnavailable> {
    check_returns(returns_pct)?;
    if returns_pct.len() < GARCH_MIN_RETURNS {
        return Err(GarchUnavailable::TooShort {
            needed: GARCH_MIN_RETURNS,
            got: returns_pct.len(),
        });
    }
    let n = returns_pct.len() as f64;
    let mean = returns_pct.iter().sum::<f64>() / n;
    let variance = returns_pct.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / n;
    // Rounding leaves ~1e-34 on a constant series; a daily std below 1e-10 % is no variation.
    if !(variance > 1e-20) || !variance.is_finite() {
        return Err(GarchUnavailable::Flat);
    }
    let transform = Transform {
        mean,
        std: variance.sqrt(),
    };
    let backcast = garch_backcast(returns_pct);
    let objective = |x: &[f64]| -log_likelihood_with(returns_pct, &transform.params(x), backcast);

    let mut starts: Vec<([f64; 4], f64)> = [0.01, 0.05, 0.1, 0.2]
        .iter()
        .flat_map(|&alpha| [0.5, 0.7, 0.9, 0.98].map(|p| transform.coordinates(alpha, p)))
        .map(|x| (x, objective(&x)))
        .collect();
    starts.sort_by(|a, b| a.1.total_cmp(&b.1));

    let options = NelderMeadOptions {
        x_tolerance: 1e-9,
        f_tolerance: 1e-10,
        max_evaluations: 20_000,
    };
    let step = [0.05, 0.2, 0.3, 0.3];
    let mut best = starts
        .iter()
        .take(3)
        .map(|(x, _)| nelder_mead(objective, x, &step, options))
        .min_by(|a, b| a.value.total_cmp(&b.value))
        .expect("three starts");
    // Restart from the best until a fresh simplex finds nothing better.
    for _ in 0..10 {
        let again = nelder_mead(objective, &best.x, &step, options);
        let improved = again.value < best.value - 1e-9;
        let converged = again.converged;
        if again.value <= best.value {
            best = again;
        }
        if !improved && converged {
            break;
        }
    }
    if !best.converged || !best.value.is_finite() {
        return Err(GarchUnavailable::NotConverged);
    }

    let params = transform.params(&best.x);
    let persistence = params.alpha + params.beta;
    if persistence >= 1.0 - STATIONARITY_MARGIN {
        return Err(GarchUnavailable::NonStationary { persistence });
    }
    let (last_variance, next_variance) = recurse(returns_pct, &params, backcast, |_, _| {});
    let long_run_variance = params.omega / (1.0 - persistence);
    Ok(GarchFit {
        params,
        persistence,
        log_likelihood: -best.value,
        observations: returns_pct.len(),
        backcast,
        last_variance,
        next_variance,
        long_run_vol_pct: (TRADING_DAYS_PER_YEAR * long_run_variance).sqrt(),
        half_life_sessions: 0.5f64.ln() / persistence.ln(),
    })
}

/// [`fit_garch11`] on the percent log returns of `closes` (oldest first, dollars).
pub fn fit_garch11_closes(closes: &[f64]) -> Result<GarchFit, GarchUnavailable> {
    fit_garch11(&pct_log_returns(closes)?)
}

/// [`fit_garch11_closes`] over the last `max_returns` returns of `closes` (the last
/// `max_returns` + 1 closes): a forecast from the recent regime, at a bounded cost.
pub fn fit_garch11_recent(
    closes: &[f64],
    max_returns: usize,
) -> Result<GarchFit, GarchUnavailable> {
    fit_garch11_closes(&closes[closes.len().saturating_sub(max_returns.saturating_add(1))..])
}

impl GarchFit {
    /// Long-run daily variance ω / (1 − α − β), percent².
    pub fn long_run_variance(&self) -> f64 {
        self.params.omega / (1.0 - self.persistence)
    }

    /// Daily variance forecasts for the next `horizon` sessions, `[h₁, …, h_horizon]`,
    /// percent² (`arch`'s `forecast(horizon=…).variance` at the last observation).
    pub fn variance_forecast(&self, horizon: usize) -> Vec<f64> {
        let long_run = self.long_run_variance();
        let mut decay = 1.0;
        (0..horizon)
            .map(|_| {
                let h = long_run + decay * (self.next_variance - long_run);
                decay *= self.persistence;
                h
            })
            .collect()
    }

    /// Annualised vol of the average forecast variance over the next `horizon` sessions,
    /// points: `√(252 · mean(h₁ … h_horizon))`. `None` for a zero horizon.
    pub fn forecast_vol_pct(&self, horizon: usize) -> Option<f64> {
        let forecast = self.variance_forecast(horizon);
        (horizon > 0)
            .then(|| (TRADING_DAYS_PER_YEAR * forecast.iter().sum::<f64>() / horizon as f64).sqrt())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A GARCH(1,1) path with known parameters, from a seeded normal generator
    /// (Box–Muller over a 64-bit LCG).
    fn simulate(params: &GarchParams, n: usize, seed: u64) -> Vec<f64> {
        let mut state = seed;
        let mut uniform = || {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((state >> 11) as f64 + 0.5) / (1u64 << 53) as f64
        };
        let mut variance = params.omega / (1.0 - params.alpha - params.beta);
        let mut prev_sq = variance;
        (0..n)
            .map(|_| {
                variance = params.omega + params.alpha * prev_sq + params.beta * variance;
                let z =
                    (-2.0 * uniform().ln()).sqrt() * (2.0 * std::f64::consts::PI * uniform()).cos();
                let resid = variance.sqrt() * z;
                prev_sq = resid * resid;
                params.mu + resid
            })
            .collect()
    }

    #[test]
    fn recovers_simulated_parameters() {
        let truth = GarchParams {
            mu: 0.05,
            omega: 0.05,
            alpha: 0.08,
            beta: 0.9,
        };
        let returns = simulate(&truth, 5000, 7);
        let fit = fit_garch11(&returns).unwrap();
        // Sampling error at 5000 observations, not optimiser error.
        assert!((fit.params.alpha - truth.alpha).abs() < 0.03, "{fit:?}");
        assert!((fit.params.beta - truth.beta).abs() < 0.04, "{fit:?}");
        assert!((fit.persistence - 0.98).abs() < 0.015, "{fit:?}");
        // The optimum: no coordinate step improves the likelihood.
        for (i, h) in [1e-5, 1e-6, 1e-5, 1e-5].into_iter().enumerate() {
            for sign in [-1.0, 1.0] {
                let mut p = [
                    fit.params.mu,
                    fit.params.omega,
                    fit.params.alpha,
                    fit.params.beta,
                ];
                p[i] += sign * h;
                let moved = GarchParams {
                    mu: p[0],
                    omega: p[1],
                    alpha: p[2],
                    beta: p[3],
                };
                let ll = garch11_log_likelihood(&returns, &moved).unwrap();
                assert!(ll <= fit.log_likelihood + 1e-7, "coordinate {i}");
            }
        }
    }

    #[test]
    fn forecast_runs_from_next_variance_to_the_long_run_level() {
        let returns = simulate(
            &GarchParams {
                mu: 0.0,
                omega: 0.1,
                alpha: 0.1,
                beta: 0.85,
            },
            1000,
            3,
        );
        let fit = fit_garch11(&returns).unwrap();
        let forecast = fit.variance_forecast(3);
        assert_eq!(forecast[0], fit.next_variance);
        let v = fit.long_run_variance();
        assert!(
            (forecast[2] - (v + fit.persistence.powi(2) * (fit.next_variance - v))).abs() < 1e-12
        );
        let one = fit.forecast_vol_pct(1).unwrap();
        assert!((one - (252.0 * fit.next_variance).sqrt()).abs() < 1e-12);
        let far = fit.forecast_vol_pct(100_000).unwrap();
        assert!((far - fit.long_run_vol_pct).abs() < 0.01 * fit.long_run_vol_pct);
        assert_eq!(fit.forecast_vol_pct(0), None);
    }

    #[test]
    fn unavailable_reasons() {
        assert!(matches!(
            fit_garch11(&[0.1; 100]),
            Err(GarchUnavailable::TooShort {
                needed: 250,
                got: 100
            })
        ));
        assert_eq!(
            fit_garch11(&[0.1; 300]).unwrap_err(),
            GarchUnavailable::Flat
        );
        let mut returns = vec![0.5; 300];
        returns[10] = f64::NAN;
        assert_eq!(fit_garch11(&returns).unwrap_err().code(), "bad_input");
        assert!(fit_garch11_closes(&[100.0, -1.0]).is_err());
    }
}
