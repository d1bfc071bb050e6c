//! The endpoint registry: every endpoint of the interface contract with its method, path, plan
//! tier, parameters (location, default, bounds, typed kind), cost in monthly-budget units, a
//! one-line summary and a runnable example — and which of them this build actually serves.
//!
//! The contract table ([`table`]) is generated from the interface's reference records by
//! `api/scripts/gen_registry.py` (`make registry`) and committed, so nothing parses JSON at run
//! time; `api/tests/registry_drift.rs` fails when the committed table is not what the script
//! writes. The
//! documentation routes this crate adds (`/docs`, `/changelog`, `/openapi.json`) are not in the
//! records; they are listed in [`PLATFORM_ENDPOINTS`] below.
//!
//! **Only mounted endpoints are advertised.** [`Registry`] is built by [`crate::router`] from the
//! routes it really mounts; the index, `did_you_mean`, the endpoint count, the served reference
//! and the OpenAPI document all read the mounted set, never the whole contract.

mod table;

pub use table::Endpoint;

use serde::Serialize;

/// The base path of every data endpoint.
pub const DATA_PREFIX: &str = "/api/mcp/data";

pub use optics_accounts::Tier;

/// HTTP method of an endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub enum Method {
    /// `GET`: reads, parameters in the path and query.
    #[serde(rename = "GET")]
    Get,
    /// `POST`: computations over a JSON body.
    #[serde(rename = "POST")]
    Post,
}

impl Method {
    /// `"GET"` or `"POST"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Get => "GET",
            Self::Post => "POST",
        }
    }
}

/// What one call costs against the account's monthly budget, in upstream data units.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Cost {
    /// Nothing (the index, usage and the documentation routes).
    Free,
    /// A fixed number of units per call (1 for a single-symbol read; 2 for a market-wide screen).
    Units(u32),
    /// One unit per symbol requested (batch endpoints and cross-index comparisons).
    PerSymbol,
}

impl Cost {
    /// The cost as index JSON: a number of units, or `"per_symbol"`.
    pub fn to_json(self) -> serde_json::Value {
        match self {
            Self::Free => 0.into(),
            Self::Units(units) => units.into(),
            Self::PerSymbol => "per_symbol".into(),
        }
    }
}

/// Where a parameter is read from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ParamLocation {
    /// A `{name}` segment of the path.
    Path,
    /// The query string.
    Query,
    /// A field of the JSON body.
    Body,
}

/// The typed shape of a parameter, parsed from the records' bounds text by the generator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum ParamKind {
    /// A whole number clamped to `min..=max`.
    Int {
        /// Smallest accepted value.
        min: i64,
        /// Largest accepted value.
        max: i64,
    },
    /// A finite number clamped to the bounds that are given.
    Float {
        /// Smallest accepted value, if bounded below.
        min: Option<f64>,
        /// Largest accepted value, if bounded above.
        max: Option<f64>,
    },
    /// One of a fixed set of words.
    Choice(&'static [&'static str]),
    /// `true` or `false`.
    Bool,
    /// A date `YYYY-MM-DD`.
    Date,
    /// An underlying symbol.
    Symbol,
    /// Comma-separated symbols, at most `max_len`.
    SymbolList {
        /// Most symbols accepted.
        max_len: usize,
    },
    /// Comma-separated whole numbers in `min..=max`, at most `max_len` of them.
    IntList {
        /// Smallest accepted value.
        min: i64,
        /// Largest accepted value.
        max: i64,
        /// Most values accepted.
        max_len: usize,
    },
    /// Comma-separated names (or `all`).
    NameList,
    /// Free text.
    Text,
    /// A JSON number in a body (dollars, days, points…; the bounds text gives the unit).
    Number,
    /// A JSON array in a body.
    Array,
    /// A JSON object in a body (e.g. ticker → price; the bounds text says what it maps).
    Object,
}

/// One parameter of an endpoint.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ParamSpec {
    /// Name as the caller writes it.
    pub name: &'static str,
    /// Path, query or body.
    pub location: ParamLocation,
    /// Whether the call fails without it.
    pub required: bool,
    /// The default as documented (`"20"`, `"nearest"`, `"full for REST, compact for MCP
    /// clients"`), or `None` when there is none.
    pub default: Option<&'static str>,
    /// The documented bounds, as text (`"1 to 10"`, `"YYYY-MM-DD"`, …).
    pub bounds: &'static str,
    /// The typed kind the parameter parser enforces.
    pub kind: ParamKind,
}

impl ParamSpec {
    /// The default as a whole number, when it is one (`"20"` → 20).
    pub fn default_int(&self) -> Option<i64> {
        self.default.and_then(|d| d.parse().ok())
    }

    /// The default as a number, when it is one (`"0.3"` → 0.3).
    pub fn default_float(&self) -> Option<f64> {
        self.default
            .and_then(|d| d.parse::<f64>().ok())
            .filter(|v| v.is_finite())
    }
}

/// A request that works as written (relative to [`DATA_PREFIX`]), with its JSON body for POST.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Example {
    /// Path and query, e.g. `/chain/SPY?num_expirations=2`. `{last_session}` stands for the
    /// trade date of the last closed session and is filled in when the index is served.
    pub request: &'static str,
    /// The JSON body of a POST example.
    pub body: Option<&'static str>,
}

/// One endpoint of the contract.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EndpointSpec {
    /// Stable short name (`chain`, `gex-batch`); also the anchor of its section in `/docs`.
    pub slug: &'static str,
    /// Slug of its [`Family`].
    pub family: &'static str,
    /// GET or POST.
    pub method: Method,
    /// Path relative to [`DATA_PREFIX`], with `{ticker}`-style placeholders (axum's syntax).
    pub path: &'static str,
    /// Lowest plan allowed.
    pub tier: Tier,
    /// Budget units per call.
    pub cost: Cost,
    /// What it answers, in one line.
    pub summary: &'static str,
    /// Path, query and body parameters.
    pub params: &'static [ParamSpec],
    /// A runnable example.
    pub example: Example,
}

impl EndpointSpec {
    /// The full path including [`DATA_PREFIX`] (the index is `/api/mcp/data/`).
    pub fn full_path(&self) -> String {
        format!("{DATA_PREFIX}{}", self.path)
    }

    /// The parameter called `name`, if the endpoint has one.
    pub fn param(&self, name: &str) -> Option<&'static ParamSpec> {
        self.params.iter().find(|p| p.name == name)
    }

    /// Link to this endpoint's section of the served reference.
    pub fn docs_link(&self) -> String {
        format!("{DATA_PREFIX}/docs#{}", self.slug)
    }
}

/// A family of endpoints (one page of the reference).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Family {
    /// Stable short name (`options-chain-api`).
    pub slug: &'static str,
    /// Display name.
    pub name: &'static str,
}

/// The family of the documentation routes this crate adds.
pub const PLATFORM_FAMILY: Family = Family {
    slug: "platform",
    name: "Documentation and platform",
};

/// The documentation routes: not part of the records, served by every build.
pub static PLATFORM_ENDPOINTS: &[EndpointSpec] = &[
    EndpointSpec {
        slug: "openapi",
        family: "platform",
        method: Method::Get,
        path: "/openapi.json",
        tier: Tier::Any,
        cost: Cost::Free,
        summary: "The OpenAPI 3.1 description of the served endpoints.",
        params: &[],
        example: Example {
            request: "/openapi.json",
            body: None,
        },
    },
    EndpointSpec {
        slug: "docs",
        family: "platform",
        method: Method::Get,
        path: "/docs",
        tier: Tier::Any,
        cost: Cost::Free,
        summary: "The one-file API reference, in Markdown.",
        params: &[],
        example: Example {
            request: "/docs",
            body: None,
        },
    },
    EndpointSpec {
        slug: "changelog",
        family: "platform",
        method: Method::Get,
        path: "/changelog",
        tier: Tier::Any,
        cost: Cost::Free,
        summary: "What changed in each interface version, newest first, in Markdown.",
        params: &[],
        example: Example {
            request: "/changelog",
            body: None,
        },
    },
];

/// Every endpoint the contract defines (data endpoints from the records, then the platform
/// routes), mounted or not.
pub fn all_endpoints() -> impl Iterator<Item = &'static EndpointSpec> {
    table::DATA_ENDPOINTS.iter().chain(PLATFORM_ENDPOINTS)
}

/// Every family, the platform family last.
pub fn families() -> impl Iterator<Item = &'static Family> {
    table::FAMILIES
        .iter()
        .chain(std::iter::once(&PLATFORM_FAMILY))
}

/// Looks up a contract endpoint by slug.
pub fn endpoint(slug: &str) -> Option<&'static EndpointSpec> {
    all_endpoints().find(|e| e.slug == slug)
}

/// The endpoints this server actually mounts, in contract order. Built once by the router.
#[derive(Debug, Clone, Default)]
pub struct Registry {
    mounted: Vec<&'static EndpointSpec>,
}

impl Registry {
    /// A registry of the given mounted endpoints, kept in contract order whatever order they
    /// are given in; duplicates are kept once.
    pub fn new(mounted: impl IntoIterator<Item = &'static EndpointSpec>) -> Self {
        let wanted: Vec<&'static EndpointSpec> = mounted.into_iter().collect();
        let mounted = all_endpoints()
            .filter(|e| wanted.iter().any(|w| w.slug == e.slug))
            .collect();
        Self { mounted }
    }

    /// The mounted endpoints, in contract order.
    pub fn mounted(&self) -> &[&'static EndpointSpec] {
        &self.mounted
    }

    /// How many endpoints are mounted (the index's `endpoint_count`).
    pub fn endpoint_count(&self) -> usize {
        self.mounted.len()
    }

    /// Whether the endpoint `slug` is mounted.
    pub fn is_mounted(&self, slug: &str) -> bool {
        self.mounted.iter().any(|e| e.slug == slug)
    }

    /// The families that have at least one mounted endpoint, with their mounted counts.
    pub fn families(&self) -> Vec<(&'static Family, usize)> {
        families()
            .filter_map(|family| {
                let count = self
                    .mounted
                    .iter()
                    .filter(|e| e.family == family.slug)
                    .count();
                (count > 0).then_some((family, count))
            })
            .collect()
    }
}

#[cfg(test)]
mod tests;
