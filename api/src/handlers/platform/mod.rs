//! The platform routes, one file per endpoint: the index of served endpoints ([`index`]), the
//! Markdown reference ([`docs`]), the changelog ([`changelog`]) and the OpenAPI document
//! ([`openapi`]). Their bodies are built once from the registry when the router is
//! built; the index fills in its example dates per request from the clock.

pub mod changelog;
pub mod docs;
pub mod index;
pub mod openapi;

use axum::routing::{MethodRouter, get};

use self::index::IndexPayload;
use crate::registry::{Endpoint, ParamLocation};
use crate::state::AppState;

/// The reference text written by hand; the endpoint sections are generated after it.
pub const REFERENCE_MARKDOWN: &str = include_str!("../../../docs/reference.md");
/// The changelog, newest version first.
pub const CHANGELOG_MARKDOWN: &str = include_str!("../../../docs/CHANGELOG.md");

const MARKDOWN_CONTENT_TYPE: &str = "text/markdown; charset=utf-8";
const JSON_CONTENT_TYPE: &str = "application/json";

/// Placeholder in examples for the trade date of the last closed session.
pub const LAST_SESSION_PLACEHOLDER: &str = "{last_session}";
/// Placeholder in examples for next month's standard monthly expiration.
pub const MONTHLY_EXPIRY_PLACEHOLDER: &str = "{monthly_expiry}";

/// The payload of the index (the documents are served as they are, outside the envelope).
pub fn data_schemas() -> Vec<crate::openapi::DataSchema> {
    vec![crate::openapi::DataSchema::of::<IndexPayload>(
        Endpoint::Index,
    )]
}

/// The platform routes by registry slug.
pub fn routes() -> Vec<(Endpoint, MethodRouter<AppState>)> {
    vec![
        (Endpoint::Index, get(index::index)),
        (Endpoint::Openapi, get(openapi::openapi)),
        (Endpoint::Docs, get(docs::docs)),
        (Endpoint::Changelog, get(changelog::changelog)),
    ]
}

/// `path`, `query` or `body`, as the index and the reference name a parameter's place.
fn location_word(location: ParamLocation) -> &'static str {
    match location {
        ParamLocation::Path => "path",
        ParamLocation::Query => "query",
        ParamLocation::Body => "body",
    }
}
