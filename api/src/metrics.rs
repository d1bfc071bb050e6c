//! Prometheus metrics, served at `GET /metrics` (outside the data prefix) in the OpenMetrics
//! text format, which Prometheus scrapes natively.
//!
//! | metric | type | labels | meaning |
//! | --- | --- | --- | --- |
//! | `optics_http_requests_total` | counter | method, route, status | requests answered |
//! | `optics_http_request_duration_seconds` | histogram | method, route, status | time from routing to the response head |
//! | `optics_snapshot_age_seconds` | gauge | dataset | age of the newest published snapshot of a dataset at scrape time |
//!
//! `route` is the route template (`/api/mcp/data/chain/{ticker}`), never the raw path, so a
//! client cannot create series at will; requests that match no route count as `unmatched`.
//! The snapshot age is computed at scrape time from the injected clock and the publication
//! instant the integrator reports with [`Metrics::set_snapshot_published_at`].

use std::collections::BTreeMap;
use std::fmt;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::Histogram;
use prometheus_client::registry::Registry;

/// The label value of requests that matched no route.
pub const UNMATCHED_ROUTE: &str = "unmatched";

/// Latency bucket upper bounds, in seconds: 50 µs to 5 s.
const LATENCY_BUCKETS_SECONDS: [f64; 16] = [
    0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5,
    1.0, 2.5, 5.0,
];

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct RouteLabels {
    method: String,
    route: String,
    status: u16,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct DatasetLabels {
    dataset: String,
}

type HistogramFamily = Family<RouteLabels, Histogram, fn() -> Histogram>;

fn latency_histogram() -> Histogram {
    Histogram::new(LATENCY_BUCKETS_SECONDS)
}

struct Inner {
    registry: Registry,
    requests: Family<RouteLabels, Counter>,
    latency: HistogramFamily,
    snapshot_age: Family<DatasetLabels, Gauge<f64, AtomicU64>>,
    published: Mutex<BTreeMap<String, DateTime<Utc>>>,
}

/// The service's metrics; cheap to clone (shared).
#[derive(Clone)]
pub struct Metrics {
    inner: Arc<Inner>,
}

impl fmt::Debug for Metrics {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

impl Default for Metrics {
    fn default() -> Self {
        Self::new()
    }
}

impl Metrics {
    /// A fresh set of metrics.
    pub fn new() -> Self {
        let mut registry = Registry::with_prefix("optics");
        let requests = Family::<RouteLabels, Counter>::default();
        let latency: HistogramFamily = Family::new_with_constructor(latency_histogram);
        let snapshot_age = Family::<DatasetLabels, Gauge<f64, AtomicU64>>::default();
        registry.register(
            "http_requests",
            "HTTP requests answered, by method, route template and status",
            requests.clone(),
        );
        registry.register_with_unit(
            "http_request_duration",
            "Time to answer an HTTP request, by method, route template and status",
            prometheus_client::registry::Unit::Seconds,
            latency.clone(),
        );
        registry.register_with_unit(
            "snapshot_age",
            "Age of the newest published snapshot of each dataset at scrape time",
            prometheus_client::registry::Unit::Seconds,
            snapshot_age.clone(),
        );
        Self {
            inner: Arc::new(Inner {
                registry,
                requests,
                latency,
                snapshot_age,
                published: Mutex::new(BTreeMap::new()),
            }),
        }
    }

    /// Records one answered request.
    pub fn observe_request(&self, method: &str, route: &str, status: u16, elapsed: Duration) {
        let labels = RouteLabels {
            method: method.to_owned(),
            route: route.to_owned(),
            status,
        };
        self.inner.requests.get_or_create(&labels).inc();
        self.inner
            .latency
            .get_or_create(&labels)
            .observe(elapsed.as_secs_f64());
    }

    /// Reports that a snapshot of `dataset` was published at `at` (the hook the snapshot
    /// cache calls on each publication; the newest instant per dataset is kept).
    pub fn set_snapshot_published_at(&self, dataset: &str, at: DateTime<Utc>) {
        let mut published = self
            .inner
            .published
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let entry = published.entry(dataset.to_owned()).or_insert(at);
        if at > *entry {
            *entry = at;
        }
    }

    /// The OpenMetrics text of every metric, snapshot ages computed at `now`.
    pub fn render(&self, now: DateTime<Utc>) -> Result<String, fmt::Error> {
        {
            let published = self
                .inner
                .published
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            for (dataset, at) in published.iter() {
                // Microseconds overflow only for ages beyond ~292,000 years.
                let age_seconds = (now - *at)
                    .num_microseconds()
                    .map_or(f64::MAX, |us| us as f64 / 1.0e6);
                self.inner
                    .snapshot_age
                    .get_or_create(&DatasetLabels {
                        dataset: dataset.clone(),
                    })
                    .set(age_seconds);
            }
        }
        let mut text = String::new();
        prometheus_client::encoding::text::encode(&mut text, &self.inner.registry)?;
        Ok(text)
    }
}

/// The `Content-Type` of [`Metrics::render`]'s output.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    #[test]
    fn counts_requests_and_reports_snapshot_age_at_scrape_time() {
        let metrics = Metrics::new();
        metrics.observe_request("GET", "/api/mcp/data/", 200, Duration::from_micros(300));
        metrics.observe_request("GET", "/api/mcp/data/", 200, Duration::from_micros(700));
        metrics.observe_request("GET", UNMATCHED_ROUTE, 404, Duration::from_micros(100));
        let published = Utc.with_ymd_and_hms(2026, 11, 20, 15, 0, 0).unwrap();
        metrics.set_snapshot_published_at("chain", published);
        // An older report does not move the newest instant back.
        metrics.set_snapshot_published_at("chain", published - chrono::TimeDelta::hours(1));
        let text = metrics
            .render(published + chrono::TimeDelta::milliseconds(2500))
            .unwrap();
        assert!(text.contains(
            r#"optics_http_requests_total{method="GET",route="/api/mcp/data/",status="200"} 2"#
        ));
        assert!(text.contains(
            r#"optics_http_requests_total{method="GET",route="unmatched",status="404"} 1"#
        ));
        // 300 µs and 700 µs: both ≤ 1 ms, one ≤ 0.5 ms.
        assert!(text.contains(
            r#"_bucket{le="0.0005",method="GET",route="/api/mcp/data/",status="200"} 1"#
        ));
        assert!(
            text.contains(
                r#"_bucket{le="0.001",method="GET",route="/api/mcp/data/",status="200"} 2"#
            )
        );
        assert!(text.contains(r#"optics_snapshot_age_seconds{dataset="chain"} 2.5"#));
        assert!(text.ends_with("# EOF\n"));
    }
}
