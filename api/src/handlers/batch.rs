//! The batch endpoints' shared shape (`/batch/gex`, `/batch/expected-move`, `/batch/iv-rank`,
//! and the cross-index comparison): every symbol must be covered (404 naming the first that is
//! not), each answers or fails on its own, and the call fails (424) only when none answers.

use std::collections::BTreeMap;
use std::future::Future;

use serde::Serialize;
use utoipa::ToSchema;

use crate::error::ApiError;
use crate::params::ClampNotice;
use crate::state::AppState;
use crate::ticker::Ticker;

/// A batch payload: one result or one error per symbol.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct BatchPayload<T> {
    /// The symbols asked for (upper case, duplicates dropped), in request order.
    pub tickers: Vec<String>,
    /// How many symbols were asked for.
    pub requested: usize,
    /// How many answered.
    pub succeeded: usize,
    /// How many did not.
    pub failed: usize,
    /// The payload of each symbol that answered, by symbol.
    pub results: BTreeMap<String, T>,
    /// Why each other symbol is missing, by symbol.
    pub errors: BTreeMap<String, String>,
    /// Parameters moved into their documented range (empty when none was).
    pub clamped: Vec<ClampNotice>,
    /// How the call is metered.
    pub note: String,
}

/// Runs `one` for every symbol of `tickers` (module docs).
pub(crate) fn batch<T>(
    state: &AppState,
    tickers: &[Ticker],
    one: impl FnMut(&Ticker) -> Result<T, ApiError>,
) -> Result<BatchPayload<T>, ApiError> {
    let covered = covered(state, tickers)?;
    let answers = covered.iter().map(one).collect();
    outcome(&covered, answers)
}

/// [`batch`] for an answer that reads history (awaited one symbol after the other: the
/// symbols share the store, and a batch is at most a few dozen).
pub(crate) async fn batch_async<T, F>(
    state: &AppState,
    tickers: &[Ticker],
    one: impl Fn(Ticker) -> F,
) -> Result<BatchPayload<T>, ApiError>
where
    F: Future<Output = Result<T, ApiError>>,
{
    let covered = covered(state, tickers)?;
    let mut answers = Vec::with_capacity(covered.len());
    for ticker in &covered {
        answers.push(one(ticker.clone()).await);
    }
    outcome(&covered, answers)
}

/// The symbols, each checked against the coverage universe.
fn covered(state: &AppState, tickers: &[Ticker]) -> Result<Vec<Ticker>, ApiError> {
    tickers
        .iter()
        .map(|t| state.covered_ticker(t.as_str()))
        .collect()
}

/// The payload of the answers (aligned with `covered`); 424 when none answered.
fn outcome<T>(
    covered: &[Ticker],
    answers: Vec<Result<T, ApiError>>,
) -> Result<BatchPayload<T>, ApiError> {
    let mut results = BTreeMap::new();
    let mut errors = BTreeMap::new();
    for (ticker, answer) in covered.iter().zip(answers) {
        match answer {
            Ok(payload) => {
                results.insert(ticker.to_string(), payload);
            }
            Err(error) => {
                errors.insert(ticker.to_string(), error.body().error);
            }
        }
    }
    if results.is_empty() {
        let reasons: Vec<String> = errors.iter().map(|(t, e)| format!("{t}: {e}")).collect();
        return Err(ApiError::upstream(format!(
            "No symbol in the batch returned data ({})",
            reasons.join("; ")
        )));
    }
    Ok(BatchPayload {
        tickers: covered.iter().map(ToString::to_string).collect(),
        requested: covered.len(),
        succeeded: results.len(),
        failed: errors.len(),
        results,
        errors,
        clamped: Vec::new(),
        note: format!(
            "One rate-limit unit for the call; the monthly budget is spent per symbol ({} here), \
             as if each were asked for alone",
            covered.len()
        ),
    })
}
