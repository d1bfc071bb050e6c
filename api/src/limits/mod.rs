//! Rate limits and the monthly budget (spec part 8): the limiters live in
//! [`optics_accounts::limits`] and are re-exported here; [`usage`] is the HTTP usage report and
//! [`unknown_paths`] the per-token record of paths that named no endpoint.

pub mod unknown_paths;
pub mod usage;

pub use optics_accounts::limits::*;

/// How the budget label of an endpoint reads (`GET /chain/{ticker}`): the key of the calls by
/// endpoint, in the limiters, the account store and the usage report.
pub fn endpoint_label(endpoint: &crate::registry::EndpointSpec) -> String {
    format!("{} {}", endpoint.method.as_str(), endpoint.path)
}
