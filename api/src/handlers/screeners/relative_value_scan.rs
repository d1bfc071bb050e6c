//! `GET /relative-value-scan`: every covered underlying's 30-day IV ratio to SPY against its
//! one-year distribution; the names stretched beyond a z-score threshold, or rich-versus-cheap
//! pairs of them.

use axum::Json;
use axum::extract::State;
use optics_compute::cores::StoredSeries;
use optics_compute::relative_value::{ratio_series, ratio_stats};
use optics_compute::time::new_york_date;
use serde::Serialize;
use utoipa::ToSchema;

use crate::envelope::{Envelope, ok};
use crate::error::ApiError;
use crate::freshness::Freshness;
use crate::handlers::stock::correlation::MARKET;
use crate::handlers::stock::relative_value::{IvSeries, RATIO_BASIS, iv30d_series};
use crate::params::QueryParams;
use crate::state::AppState;
use crate::ticker::Ticker;

/// `direction` of a name whose z-score is at or above the threshold: its IV is high against
/// SPY's compared with its own year, expected to fall back relative to SPY.
pub const RICH: &str = "rich";
/// `direction` of a name whose z-score is at or below minus the threshold.
pub const CHEAP: &str = "cheap";
/// The pairing rule of `view=pairs`, stated in the payload.
pub const PAIRING_RULE: &str = "rich names by |z| descending each take the most stretched \
    unpaired cheap name of the same sector, else the most stretched unpaired cheap name of any \
    sector; each name is used once; pairs ordered by z_spread descending";

/// One stretched name.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ScanRow {
    /// Underlying symbol.
    pub ticker: String,
    /// GICS sector; null for indices and ETFs.
    pub sector: Option<String>,
    /// Latest iv30d over SPY's iv30d; unitless.
    pub iv_spy_ratio: f64,
    /// Mean of the last up to 252 ratios; unitless.
    pub iv_spy_ratio_avg_1y: f64,
    /// (iv_spy_ratio − avg_1y) / sample std_1y, standard deviations.
    pub z_score: f64,
    /// `rich` (z ≥ threshold) or `cheap` (z ≤ −threshold).
    pub direction: &'static str,
    /// 1y IV percentile of the name's last stored vol_daily row, 0–100.
    pub iv_percentile: Option<f64>,
    /// 30-day VRP of the last stored row, points.
    pub vrp: Option<f64>,
    /// Calendar days to the next stored earnings report; null when none.
    pub days_to_earnings: Option<i64>,
}

/// One rich-versus-cheap pair.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct ScanPair {
    /// The rich leg (sell its vol).
    pub rich: ScanRow,
    /// The cheap leg (buy its vol).
    pub cheap: ScanRow,
    /// Whether both legs share a sector.
    pub same_sector: bool,
    /// rich.z_score − cheap.z_score, standard deviations.
    pub z_spread: f64,
}

/// The `/relative-value-scan` payload.
#[derive(Debug, Clone, PartialEq, Serialize, ToSchema)]
pub struct RelativeValueScanPayload {
    /// `mean_reversion` or `pairs`.
    pub view: &'static str,
    /// |z| at or beyond which a name is listed, standard deviations.
    pub threshold: f64,
    /// Stretched names, by |z| descending, at most `limit`.
    pub results: Vec<ScanRow>,
    /// pairs view: rich-versus-cheap pairs, at most `limit`; absent for mean_reversion.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pairs: Option<Vec<ScanPair>>,
    /// pairs view: how pairs are formed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pairing_rule: Option<&'static str>,
    /// Names with |z| ≥ threshold before `limit`.
    pub total_matches: usize,
    /// Covered underlyings (SPY excluded) scanned.
    pub total_scanned: usize,
    /// Of those, names with a z-score (a 1y ratio distribution of at least 60 sessions).
    pub total_with_z: usize,
    /// How the ratio and z-score are measured.
    pub basis: &'static str,
    /// What `direction` means.
    pub direction_rule: String,
    /// Units of the figures.
    pub units: &'static str,
    /// Freshness of today's session.
    #[serde(flatten)]
    pub freshness: Freshness,
}

/// `GET /relative-value-scan?view=mean_reversion&threshold=1.5&limit=20`.
pub async fn relative_value_scan(
    State(state): State<AppState>,
    params: QueryParams,
) -> Result<Json<Envelope<RelativeValueScanPayload>>, ApiError> {
    let view = params.choice("view")?.unwrap_or("mean_reversion");
    let limit = usize::try_from(params.int("limit")?.value).unwrap_or(20);
    let threshold = params.float("threshold")?.value;
    if !(threshold.is_finite() && threshold > 0.0) {
        return Err(ApiError::bad_request(format!(
            "threshold must be a z-score > 0, got {threshold}"
        )));
    }
    let today = new_york_date(state.now());
    let reader = state.market_data()?;
    let coverage = reader.coverage();
    let spy = iv30d_series(&state, &Ticker::parse(MARKET)?, today).await;
    // Every covered name's series from the universe table's cut histories (a year and a
    // month of iv30d each, more than the 252-ratio window): no per-name read of the store.
    let table = state.universe_table().await?;
    let mut scanned = 0;
    let mut with_z = 0;
    let mut rows = Vec::new();
    for row in &table.rows {
        let Ok(ticker) = Ticker::parse(&row.ticker) else {
            continue;
        };
        if ticker.as_str() == MARKET {
            continue;
        }
        scanned += 1;
        let history = row.history();
        let own = IvSeries::with_live(
            history
                .dated_values(StoredSeries::Iv30d, today, None)
                .collect(),
            reader.chain(&ticker).as_deref(),
            today,
            history.newest().copied(),
        );
        let ratios: Vec<f64> = ratio_series(&own.points, &spy.points)
            .iter()
            .map(|p| p.ratio)
            .collect();
        let Some(stats) = ratio_stats(&ratios) else {
            continue;
        };
        let (Some(z), Some(avg)) = (stats.z, stats.avg_1y) else {
            continue;
        };
        with_z += 1;
        if z.abs() < threshold {
            continue;
        }
        rows.push(ScanRow {
            ticker: ticker.to_string(),
            sector: row.company.as_ref().and_then(|c| c.sector.clone()),
            iv_spy_ratio: stats.current,
            iv_spy_ratio_avg_1y: avg,
            z_score: z,
            direction: if z > 0.0 { RICH } else { CHEAP },
            iv_percentile: own.iv_percentile,
            vrp: own.vrp,
            days_to_earnings: coverage
                .next_earnings(ticker.as_str(), today)
                .map(|d| (d - today).num_days()),
        });
    }
    rows.sort_by(|a, b| {
        b.z_score
            .abs()
            .total_cmp(&a.z_score.abs())
            .then_with(|| a.ticker.cmp(&b.ticker))
    });
    let total_matches = rows.len();
    let pairs = (view == "pairs").then(|| {
        let mut pairs = pair_up(&rows);
        pairs.truncate(limit);
        pairs
    });
    rows.truncate(limit);
    Ok(ok(RelativeValueScanPayload {
        view,
        threshold,
        results: rows,
        pairing_rule: pairs.as_ref().map(|_| PAIRING_RULE),
        pairs,
        total_matches,
        total_scanned: scanned,
        total_with_z: with_z,
        basis: RATIO_BASIS,
        direction_rule: format!(
            "{RICH} when z_score >= threshold ({threshold}), {CHEAP} when z_score <= -threshold"
        ),
        units: "ratios unitless; z_score in standard deviations; iv_percentile 0 to 100; vrp \
                in points; days_to_earnings in calendar days",
        freshness: state.freshness_of(spy.points.last().map(|p| p.0).unwrap_or(today)),
    }))
}

/// Pairs by [`PAIRING_RULE`] over rows sorted by |z| descending.
fn pair_up(rows: &[ScanRow]) -> Vec<ScanPair> {
    let mut used = vec![false; rows.len()];
    let mut pairs = Vec::new();
    for (i, rich) in rows.iter().enumerate() {
        if rich.direction != RICH {
            continue;
        }
        let free = |j: &usize, used: &[bool]| !used[*j] && rows[*j].direction == CHEAP;
        let same = (0..rows.len()).find(|j| {
            free(j, &used) && rows[*j].sector.is_some() && rows[*j].sector == rich.sector
        });
        let Some(j) = same.or_else(|| (0..rows.len()).find(|j| free(j, &used))) else {
            break;
        };
        used[i] = true;
        used[j] = true;
        let cheap = &rows[j];
        pairs.push(ScanPair {
            same_sector: cheap.sector.is_some() && cheap.sector == rich.sector,
            z_spread: rich.z_score - cheap.z_score,
            rich: rich.clone(),
            cheap: cheap.clone(),
        });
    }
    pairs.sort_by(|a, b| b.z_spread.total_cmp(&a.z_spread));
    pairs
}
