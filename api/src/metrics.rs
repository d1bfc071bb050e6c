//! Prometheus metrics, served at `GET /metrics` (outside the data prefix) in the OpenMetrics
//! text format, which Prometheus scrapes natively.
//!
//! | metric | type | labels | meaning |
//! | --- | --- | --- | --- |
//! | `optics_http_requests_total` | counter | method, route, status | requests answered |
//! | `optics_http_request_duration_seconds` | histogram | method, route, status | time from routing to the response head |
//! | `optics_snapshot_age_seconds` | gauge | dataset | age of the newest published snapshot of a dataset at scrape time |
//! | `optics_quote_freshness_seconds` | histogram | — | how old each quote batch is (from its newest quote's time) when the API first answers with it; reported where the compute worker runs in the API's process |
//! | `optics_bus_freshness_seconds` | histogram | — | the same, from the batch's entry into the bus (the pipeline's share: without the feed's own delay before publishing) |
//! | `optics_memory_held_bytes` | gauge | holder | bytes a long-lived structure holds (estimated from lengths and capacities) |
//! | `optics_memory_held_items` | gauge | holder | what it holds, in its own unit (messages, contracts, rows, answers…) |
//! | `optics_process_resident_bytes` | gauge | — | the process's resident memory (Linux), allocator overhead included |
//! | `optics_component_consecutive_failures` | gauge | component | attempts failed in a row by a part `/health` reports (0: working) |
//!
//! The holders are the structures a running service keeps: the bus, the worker's books, the
//! API's snapshot cache, the response cache, the simulator's session… (each documents its
//! items; see `docs/operations.md`). Their names are fixed in the code, so the series are a
//! fixed set. Every holder is bounded by design (by the universe, a capacity, or a window of
//! sessions), none by time: a holder that keeps growing through a session is a defect.
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
use optics_schemas::health::{ComponentHealth, HealthTracker};
use optics_schemas::memory::{HeldMemory, MemoryHolder};
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

/// Bounds of the quote freshness histogram, seconds: 50 ms steps up to 2 s (what a 1 s cycle
/// should keep to), then coarser to a minute.
fn freshness_buckets() -> impl Iterator<Item = f64> {
    (1..=40)
        .map(|i| f64::from(i) / 20.0)
        .chain([2.5, 3.0, 4.0, 5.0, 7.5, 10.0, 15.0, 30.0, 60.0])
}

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

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct HolderLabels {
    holder: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash, EncodeLabelSet)]
struct ComponentLabels {
    component: &'static str,
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
    quote_freshness: Histogram,
    bus_freshness: Histogram,
    held_bytes: Family<HolderLabels, Gauge>,
    held_items: Family<HolderLabels, Gauge>,
    resident_bytes: Gauge,
    holders: Mutex<Vec<Watched>>,
    consecutive_failures: Family<ComponentLabels, Gauge>,
    health: Mutex<Vec<Arc<HealthTracker>>>,
}

/// A memory holder reported on every scrape.
enum Watched {
    /// Kept alive by the metrics.
    Owned(Arc<dyn MemoryHolder>),
    /// Reported while something else keeps it alive (a holder that owns these metrics).
    Borrowed(std::sync::Weak<dyn MemoryHolder>),
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
        // A quote batch's age when the API first answers with it, counted from two starts.
        let mut freshness_from = |name: &str, from: &str| {
            let histogram = Histogram::new(freshness_buckets());
            registry.register_with_unit(
                name,
                format!(
                    "How old each quote batch is, from {from}, when the API first answers with it"
                ),
                prometheus_client::registry::Unit::Seconds,
                histogram.clone(),
            );
            histogram
        };
        let quote_freshness = freshness_from("quote_freshness", "its newest quote's time");
        let bus_freshness = freshness_from("bus_freshness", "its entry into the bus");
        let held_bytes = Family::<HolderLabels, Gauge>::default();
        let held_items = Family::<HolderLabels, Gauge>::default();
        let resident_bytes = Gauge::default();
        registry.register_with_unit(
            "memory_held",
            "Bytes a long-lived structure of the process holds, by holder (estimated)",
            prometheus_client::registry::Unit::Bytes,
            held_bytes.clone(),
        );
        registry.register(
            "memory_held_items",
            "What a long-lived structure holds, by holder, in the holder's own unit",
            held_items.clone(),
        );
        registry.register_with_unit(
            "process_resident",
            "Resident memory of the process",
            prometheus_client::registry::Unit::Bytes,
            resident_bytes.clone(),
        );
        let consecutive_failures = Family::<ComponentLabels, Gauge>::default();
        registry.register(
            "component_consecutive_failures",
            "Attempts failed in a row by a part that /health reports (0: working)",
            consecutive_failures.clone(),
        );
        Self {
            inner: Arc::new(Inner {
                registry,
                requests,
                latency,
                snapshot_age,
                published: Mutex::new(BTreeMap::new()),
                quote_freshness,
                bus_freshness,
                held_bytes,
                held_items,
                resident_bytes,
                holders: Mutex::new(Vec::new()),
                consecutive_failures,
                health: Mutex::new(Vec::new()),
            }),
        }
    }

    /// Records one answered request. A method outside HTTP's registered ones is labelled
    /// `OTHER`: a client choosing `FOO1`, `FOO2`… must not add series without end.
    pub fn observe_request(&self, method: &str, route: &str, status: u16, elapsed: Duration) {
        const KNOWN: [&str; 9] = [
            "GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "CONNECT", "TRACE",
        ];
        let method = if KNOWN.contains(&method) {
            method
        } else {
            "OTHER"
        };
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

    /// Records that a quote batch quoted at `quoted_at` is answered with from `served_at` on,
    /// `since_bus_entry` after the bus accepted it when the bus said when (the hook the compute
    /// worker of the same process calls when it hands its snapshots over); a clock step
    /// backwards counts as zero.
    pub fn observe_quote_served(
        &self,
        quoted_at: DateTime<Utc>,
        served_at: DateTime<Utc>,
        since_bus_entry: Option<Duration>,
    ) {
        let age = (served_at - quoted_at)
            .num_microseconds()
            .map_or(f64::MAX, |us| us as f64 / 1.0e6);
        self.inner.quote_freshness.observe(age.max(0.0));
        if let Some(age) = since_bus_entry {
            self.inner.bus_freshness.observe(age.as_secs_f64());
        }
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

    /// The newest publication instant reported with
    /// [`set_snapshot_published_at`](Self::set_snapshot_published_at), of any dataset.
    pub fn newest_publication(&self) -> Option<DateTime<Utc>> {
        self.inner
            .published
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .values()
            .max()
            .copied()
    }

    /// Reports what `holder` holds on every scrape (the binary registers the bus, the worker,
    /// the snapshot cache…).
    pub fn watch_memory(&self, holder: Arc<dyn MemoryHolder>) {
        self.watch(Watched::Owned(holder));
    }

    /// [`watch_memory`](Self::watch_memory) without keeping `holder` alive: for a holder that
    /// owns these metrics (the snapshot cache), which a strong reference would never free.
    pub fn watch_memory_of<T: MemoryHolder + 'static>(&self, holder: &Arc<T>) {
        let holder: Arc<dyn MemoryHolder> = Arc::clone(holder) as Arc<dyn MemoryHolder>;
        self.watch(Watched::Borrowed(Arc::downgrade(&holder)));
    }

    /// Reports `part` on `/health` and as `optics_component_consecutive_failures` (the
    /// binary registers the worker's publication, a replica's refresh…).
    pub fn watch_health(&self, part: Arc<HealthTracker>) {
        self.inner
            .health
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(part);
    }

    /// The state of every part registered with [`watch_health`](Self::watch_health), in the
    /// order registered.
    pub fn health(&self) -> Vec<ComponentHealth> {
        self.inner
            .health
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .iter()
            .map(|part| part.report())
            .collect()
    }

    /// The `/health` document at `now`: `status` (`ok`, or `degraded` when a registered part's
    /// last attempt failed), the newest publication seen and every part's state.
    pub fn health_document(&self, now: DateTime<Utc>) -> serde_json::Value {
        let components = self.health();
        let degraded = components.iter().any(ComponentHealth::is_failing);
        serde_json::json!({
            "status": if degraded { "degraded" } else { "ok" },
            "as_of": now,
            "newest_snapshot_published_at": self.newest_publication(),
            "components": components,
        })
    }

    fn watch(&self, holder: Watched) {
        self.inner
            .holders
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .push(holder);
    }

    /// What every registered holder and `also` hold now, summed by holder name (two structures
    /// of one kind, such as the API's and a worker's store handles, report as one).
    pub fn held_memory(&self, also: &[&dyn MemoryHolder]) -> Vec<HeldMemory> {
        let mut reported = Vec::new();
        {
            let holders = self
                .inner
                .holders
                .lock()
                .unwrap_or_else(|poisoned| poisoned.into_inner());
            for holder in holders.iter() {
                match holder {
                    Watched::Owned(holder) => holder.held_memory(&mut reported),
                    Watched::Borrowed(holder) => {
                        if let Some(holder) = holder.upgrade() {
                            holder.held_memory(&mut reported);
                        }
                    }
                }
            }
        }
        for holder in also {
            holder.held_memory(&mut reported);
        }
        let mut by_name: BTreeMap<&'static str, HeldMemory> = BTreeMap::new();
        for held in reported {
            let entry = by_name.entry(held.holder).or_insert(HeldMemory {
                holder: held.holder,
                items: 0,
                bytes: 0,
            });
            entry.items += held.items;
            entry.bytes += held.bytes;
        }
        by_name.into_values().collect()
    }

    /// The OpenMetrics text of every metric, snapshot ages computed at `now`.
    pub fn render(&self, now: DateTime<Utc>) -> Result<String, fmt::Error> {
        self.render_with(now, &[])
    }

    /// [`render`](Self::render), with `also` reported beside the registered memory holders
    /// (the router's response cache).
    pub fn render_with(
        &self,
        now: DateTime<Utc>,
        also: &[&dyn MemoryHolder],
    ) -> Result<String, fmt::Error> {
        for held in self.held_memory(also) {
            let labels = HolderLabels {
                holder: held.holder,
            };
            let gauge = |n: u64| i64::try_from(n).unwrap_or(i64::MAX);
            self.inner
                .held_bytes
                .get_or_create(&labels)
                .set(gauge(held.bytes));
            self.inner
                .held_items
                .get_or_create(&labels)
                .set(gauge(held.items));
        }
        for part in self.health() {
            self.inner
                .consecutive_failures
                .get_or_create(&ComponentLabels {
                    component: part.component,
                })
                .set(i64::try_from(part.consecutive_failures).unwrap_or(i64::MAX));
        }
        if let Some(resident) = resident_bytes() {
            self.inner
                .resident_bytes
                .set(i64::try_from(resident).unwrap_or(i64::MAX));
        }
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

/// The process's resident memory, bytes: `/proc/self/statm`'s second field (pages) times the
/// page size, which is 4 KiB on the x86-64 and aarch64 Linux the service runs on. `None`
/// where there is no such file.
pub fn resident_bytes() -> Option<u64> {
    const PAGE_BYTES: u64 = 4096;
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    Some(pages * PAGE_BYTES)
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

    #[test]
    fn methods_a_client_invents_share_one_series() {
        let metrics = Metrics::new();
        for method in ["FOO1", "FOO2", "BREW", "get"] {
            metrics.observe_request(method, UNMATCHED_ROUTE, 405, Duration::from_micros(50));
        }
        metrics.observe_request("POST", UNMATCHED_ROUTE, 405, Duration::from_micros(50));
        let text = metrics
            .render(Utc.with_ymd_and_hms(2026, 11, 20, 15, 0, 0).unwrap())
            .unwrap();
        assert!(text.contains(
            r#"optics_http_requests_total{method="OTHER",route="unmatched",status="405"} 4"#
        ));
        assert!(text.contains(
            r#"optics_http_requests_total{method="POST",route="unmatched",status="405"} 1"#
        ));
        assert!(!text.contains("FOO1"));
    }

    /// A holder that reports fixed figures under one name.
    struct Fixed(&'static str, u64, u64);

    impl MemoryHolder for Fixed {
        fn held_memory(&self, out: &mut Vec<HeldMemory>) {
            out.push(HeldMemory {
                holder: self.0,
                items: self.1,
                bytes: self.2,
            });
        }
    }

    #[test]
    fn reports_what_the_memory_holders_hold_summed_by_name() {
        let metrics = Metrics::new();
        metrics.watch_memory(Arc::new(Fixed("bus_messages", 3, 3_000)));
        // Reported while alive, not kept alive.
        let gone = Arc::new(Fixed("bus_messages", 100, 100));
        metrics.watch_memory_of(&gone);
        drop(gone);
        metrics.watch_memory(Arc::new(Fixed("store_version_memo", 10, 640)));
        let response_cache = Fixed("response_cache", 2, 500);
        let another_store = Fixed("store_version_memo", 5, 320);
        let now = Utc.with_ymd_and_hms(2026, 11, 20, 15, 0, 0).unwrap();
        let text = metrics
            .render_with(now, &[&response_cache, &another_store])
            .unwrap();
        for line in [
            r#"optics_memory_held_bytes{holder="bus_messages"} 3000"#,
            r#"optics_memory_held_items{holder="bus_messages"} 3"#,
            r#"optics_memory_held_bytes{holder="response_cache"} 500"#,
            r#"optics_memory_held_bytes{holder="store_version_memo"} 960"#,
            r#"optics_memory_held_items{holder="store_version_memo"} 15"#,
        ] {
            assert!(text.contains(line), "{line} in\n{text}");
        }
        // Linux reports the resident size; this test process holds more than a megabyte.
        if let Some(resident) = resident_bytes() {
            assert!(resident > 1 << 20, "{resident}");
            assert!(text.contains("optics_process_resident_bytes "), "{text}");
        }
    }
}
