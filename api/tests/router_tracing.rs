//! One `request` span per request, carrying method, route template, path and status — and
//! nothing from the query string or the headers (where tokens travel). A small recording
//! subscriber captures every span and event field on this (current-thread) test runtime.

mod common;

use std::fmt;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};

use common::{friday_morning, get, state_at};
use optics_api::router;
use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

#[derive(Debug, Default, Clone)]
struct Recorded {
    /// (span name, field, value) for span fields, ("event", field, value) for events.
    fields: Arc<Mutex<Vec<(String, String, String)>>>,
}

struct Recorder {
    recorded: Recorded,
    next_id: AtomicU64,
    names: Mutex<Vec<(u64, String)>>,
}

struct FieldVisitor<'a> {
    owner: String,
    out: &'a mut Vec<(String, String, String)>,
}

impl Visit for FieldVisitor<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn fmt::Debug) {
        self.out.push((
            self.owner.clone(),
            field.name().to_owned(),
            format!("{value:?}"),
        ));
    }
}

impl Recorder {
    fn name_of(&self, id: &Id) -> String {
        self.names
            .lock()
            .unwrap()
            .iter()
            .find(|(i, _)| *i == id.into_u64())
            .map(|(_, n)| n.clone())
            .unwrap_or_default()
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }

    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed) + 1;
        let name = span.metadata().name().to_owned();
        self.names.lock().unwrap().push((id, name.clone()));
        let mut out = self.recorded.fields.lock().unwrap();
        span.record(&mut FieldVisitor {
            owner: name,
            out: &mut out,
        });
        Id::from_u64(id)
    }

    fn record(&self, span: &Id, values: &Record<'_>) {
        let name = self.name_of(span);
        let mut out = self.recorded.fields.lock().unwrap();
        values.record(&mut FieldVisitor {
            owner: name,
            out: &mut out,
        });
    }

    fn record_follows_from(&self, _: &Id, _: &Id) {}

    fn event(&self, event: &Event<'_>) {
        let mut out = self.recorded.fields.lock().unwrap();
        event.record(&mut FieldVisitor {
            owner: "event".to_owned(),
            out: &mut out,
        });
    }

    fn enter(&self, _: &Id) {}

    fn exit(&self, _: &Id) {}
}

#[tokio::test]
async fn each_request_gets_a_span_without_secrets() {
    let recorded = Recorded::default();
    let _guard = tracing::subscriber::set_default(Recorder {
        recorded: recorded.clone(),
        next_id: AtomicU64::new(0),
        names: Mutex::new(Vec::new()),
    });
    let app = router(state_at(friday_morning()));
    get(
        &app,
        "/api/mcp/data/?secret_query=hunter2",
        &[("authorization", "Bearer optx_SECRETTOKEN")],
    )
    .await;
    get(&app, "/api/mcp/data/nope", &[]).await;

    let fields = recorded.fields.lock().unwrap().clone();
    let span_field = |name: &str| -> Vec<String> {
        fields
            .iter()
            .filter(|(owner, field, _)| owner == "request" && field == name)
            .map(|(_, _, value)| value.clone())
            .collect()
    };
    assert_eq!(span_field("method"), ["GET", "GET"]);
    assert_eq!(span_field("route"), ["/api/mcp/data/", "unmatched"]);
    assert_eq!(span_field("path"), ["/api/mcp/data/", "/api/mcp/data/nope"]);
    assert_eq!(span_field("status"), ["200", "404"]);
    let everything = format!("{fields:?}");
    assert!(!everything.contains("SECRETTOKEN"), "{everything}");
    assert!(!everything.contains("hunter2"), "{everything}");
}
