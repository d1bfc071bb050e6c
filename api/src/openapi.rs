//! The OpenAPI 3.1 document, served at `GET /api/mcp/data/openapi.json`.
//!
//! Built by utoipa (which writes OpenAPI 3.1) from the handlers' `#[utoipa::path]` annotations
//! and the payload types' `ToSchema` derives, then reconciled with the registry once, when the
//! router is built:
//!
//! - operations of routes that are not mounted are dropped, so the document describes exactly
//!   what the server answers;
//! - a mounted endpoint without an annotation gets an operation generated from the registry
//!   (summary, tag), so none is missing;
//! - the 200 response of a data endpoint is the envelope `{success, data}` whose `data` is the
//!   payload type its family declares ([`DataSchema`], listed by
//!   [`crate::handlers::data_schemas`]), with every type that payload references under
//!   `components.schemas`; an endpoint whose family declares none gets `data: object`;
//! - every operation's parameters come from the registry (one source for defaults and bounds:
//!   `minimum`/`maximum`, `enum`, `format: date`, `default`), and POST bodies without an
//!   annotated schema get one listing the registry's body fields;
//! - every operation gets a `default` response: the error envelope ([`ErrorBody`]).
//!
//! - every operation outside the platform family requires the `bearerAuth` scheme (an `optx_`
//!   API token in `Authorization: Bearer …`), the same rule the token gate applies
//!   ([`crate::auth::requires_token`]); the platform routes are open.
//!
//! Paths are relative to the server URL `/api/mcp/data`.
//!
//! # Documenting a payload
//!
//! Derive `utoipa::ToSchema` on the payload and on every struct it nests (doc comments become
//! the field descriptions; serde renames such as `"Call Bid"` are respected), then list it in
//! the family's `data_schemas()` as `DataSchema::of::<Payload>(Endpoint::<Variant>)`. Fields of types
//! utoipa does not know take a stand-in: `#[schema(value_type = IsoDate)]` for `NaiveDate`,
//! [`Timestamp`] for `DateTime<Utc>`, [`LocalTimestamp`] for the zone-less `NaiveDateTime`,
//! the `*Code` types below for the stored enums (`SettlementCode` for `SettlementStyle`, …;
//! `*Schema` for the enums already named `*Code`, e.g. `VolatilityRegimeSchema` for
//! `VolatilityRegimeCode`); [`Ticker`] and the freshness types derive it already. The same schema then lists the response fields in the served reference
//! ([`data_fields`]).

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::fmt;

use optics_schemas::{
    AssetClass, DirectionalBiasCode, FlipDegeneracyCode, ForwardSource, OptionType,
    PositioningCode, SettlementStyle, VolatilityRegimeCode, WireEnum,
};
use utoipa::OpenApi;
use utoipa::openapi::extensions::Extensions;
use utoipa::openapi::path::{
    Operation, OperationBuilder, Parameter, ParameterBuilder, ParameterIn,
};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{
    Components, ContentBuilder, PathItem, Ref, RefOr, Required, Response, ResponseBuilder, Schema,
};
use utoipa::{PartialSchema, ToSchema};

use crate::error::{ErrorBody, RateLimit, Suggestion};
use crate::freshness::{DataFreshness, Freshness};
use crate::handlers::{self, platform};
use crate::params::ClampNotice;
use crate::registry::{
    DATA_PREFIX, Endpoint, EndpointSpec, Method, ParamKind, ParamLocation, ParamSpec, Registry,
};
use crate::ticker::Ticker;
use crate::window::{Detail, Window};

/// What a ticker parameter accepts (case-insensitive; answered upper case).
const TICKER_PATTERN: &str = r"^\s*\^?[A-Za-z0-9.\-]{1,12}\s*$";

/// A comma-separated list of up to `max` tickers (white space around items allowed, as read).
fn ticker_list_pattern(max: usize) -> String {
    let item = r"\s*\^?[A-Za-z0-9.\-]{1,12}\s*";
    format!("^{item}(,{item}){{0,{}}}$", max.saturating_sub(1))
}

/// The range a clamped number is brought into, as a schema extension: out-of-range values are
/// not errors (the spec clamps them and the payload's `clamped` says so), so the range is not
/// written as `minimum` / `maximum`, which would make them invalid.
fn clamp_extension(min: Option<serde_json::Value>, max: Option<serde_json::Value>) -> Extensions {
    Extensions::builder()
        .add(
            "x-clamped-to",
            serde_json::json!({ "minimum": min, "maximum": max }),
        )
        .build()
}

/// Name of the bearer-token security scheme in `components.securitySchemes`.
pub const BEARER_SCHEME: &str = "bearerAuth";

#[derive(OpenApi)]
#[openapi(
    info(
        title = "optics",
        version = "1.10",
        description = "Options analytics over HTTP/JSON: chains, Greeks, dealer exposures, flow \
                       and volatility analytics. Every JSON response is the envelope \
                       {success, data}; errors are {success: false, error, ...}. See /docs for \
                       the full reference and /changelog for versions."
    ),
    servers((url = "/api/mcp/data", description = "Data endpoints")),
    paths(
        platform::index::index,
        platform::openapi::openapi,
        platform::docs::docs,
        platform::changelog::changelog
    ),
    components(schemas(
        ErrorBody,
        Suggestion,
        RateLimit,
        Freshness,
        DataFreshness,
        Window,
        Detail,
        ClampNotice,
        // referenced by name from `GreekExposure`'s flattened gamma fields
        handlers::exposure::greeks_exposure::GammaExtras
    )),
    tags((name = "platform", description = "Index and documentation"))
)]
struct ApiDoc;

/// The document for the mounted endpoints of `registry`, with the payload schemas the
/// handler families declare ([`handlers::data_schemas`]).
pub fn document(registry: &Registry) -> utoipa::openapi::OpenApi {
    document_with(registry, &handlers::data_schemas())
}

/// [`document`] with the given payload schemas.
pub fn document_with(registry: &Registry, data_schemas: &[DataSchema]) -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi();
    let mounted = registry.mounted();
    let bodies = body_schemas();
    // Drop operations that are not mounted.
    doc.paths.paths.retain(|path, item| {
        let served = |method: Method| {
            mounted
                .iter()
                .any(|e| e.path == path.as_str() && e.method == method)
        };
        if !served(Method::Get) {
            item.get = None;
        }
        if !served(Method::Post) {
            item.post = None;
        }
        item.get.is_some() || item.post.is_some()
    });
    let components = doc.components.get_or_insert_with(Default::default);
    components.add_security_scheme(
        BEARER_SCHEME,
        SecurityScheme::Http(
            HttpBuilder::new()
                .scheme(HttpAuthScheme::Bearer)
                .bearer_format("optx_ API token")
                .description(Some(
                    "An API token (optx_…) from `optics tokens create` or the account area, \
                     sent as `Authorization: Bearer <token>`",
                ))
                .build(),
        ),
    );
    for spec in mounted {
        let data_schema = data_schemas.iter().find(|d| d.slug == spec.slug);
        if let Some(data_schema) = data_schema {
            add_components(components, data_schema.components());
        }
        let item = doc
            .paths
            .paths
            .entry(spec.path.to_owned())
            .or_insert_with(PathItem::default);
        let slot = match spec.method {
            Method::Get => &mut item.get,
            Method::Post => &mut item.post,
        };
        let operation = slot.get_or_insert_with(|| generated_operation(spec));
        let responses = &mut operation.responses.responses;
        match data_schema {
            // The declared payload wins over anything an annotation said.
            Some(data_schema) => {
                responses.insert(
                    "200".to_owned(),
                    RefOr::T(envelope_response(Some(&data_schema.name()))),
                );
            }
            None => {
                responses
                    .entry("200".to_owned())
                    .or_insert_with(|| RefOr::T(envelope_response(None)));
            }
        }
        if spec.method == Method::Post
            && let Some(body) = bodies.iter().find(|b| b.slug == spec.slug)
        {
            // The request type's schema inline (the type last), what it references as
            // components.
            let mut parts = body.components();
            if let Some((_, schema)) = parts.pop() {
                add_components(components, parts);
                operation.request_body = Some(
                    RequestBodyBuilder::new()
                        .required(Some(Required::True))
                        .content(
                            "application/json",
                            ContentBuilder::new().schema(Some(schema)).build(),
                        )
                        .build(),
                );
            }
        }
        reconcile(operation, spec);
        if crate::auth::requires_token(spec) {
            operation.security = Some(vec![SecurityRequirement::new(
                BEARER_SCHEME,
                Vec::<String>::new(),
            )]);
        }
    }
    doc
}

/// The request-body types of the POST endpoints, by registry slug: the JSON body each handler
/// reads ([`crate::body`]), documented inline as the operation's `requestBody` with the types
/// it references under `components.schemas`. An endpoint without one keeps the body the
/// registry's body parameters describe.
pub fn body_schemas() -> Vec<DataSchema> {
    let mut schemas = handlers::strategy::body_schemas();
    schemas.extend(handlers::risk::body_schemas());
    schemas
}

/// [`document`] serialized (what `/openapi.json` serves).
pub fn document_json(registry: &Registry) -> String {
    document(registry).to_json().unwrap_or_else(|e| {
        tracing::error!(error = %e, "OpenAPI document could not be serialized");
        String::from("{}")
    })
}

/// Adds payload schemas to the components. Two different types under one name would make the
/// document describe one of them wrongly: the first is kept, the clash is logged, and
/// [`schema_name_conflicts`] lets a test refuse it.
fn add_components(components: &mut Components, schemas: Vec<(String, RefOr<Schema>)>) {
    for (name, schema) in schemas {
        match components.schemas.get(&name) {
            Some(held) if *held != schema => tracing::error!(
                name,
                "two payload types share an OpenAPI schema name; rename one with \
                 #[schema(as = …)]"
            ),
            Some(_) => {}
            None => {
                components.schemas.insert(name, schema);
            }
        }
    }
}

fn generated_operation(spec: &EndpointSpec) -> Operation {
    OperationBuilder::new()
        .operation_id(Some(spec.slug))
        .summary(Some(spec.summary))
        .tag(spec.family)
        .build()
}

/// The 200 response: the envelope, `data` being the named component (`None`: any object).
fn envelope_response(data: Option<&str>) -> Response {
    let data: RefOr<Schema> = match data {
        Some(name) => Ref::from_schema_name(name).into(),
        None => ObjectBuilder::new()
            .schema_type(Type::Object)
            .description(Some("The payload (its fields are listed in /docs)"))
            .into(),
    };
    let envelope = ObjectBuilder::new()
        .schema_type(Type::Object)
        .property(
            "success",
            ObjectBuilder::new()
                .schema_type(Type::Boolean)
                .description(Some("Always true on a 200")),
        )
        .property("data", data)
        .required("success")
        .required("data")
        .build();
    ResponseBuilder::new()
        .description("The envelope with the payload under data")
        .content(
            "application/json",
            ContentBuilder::new().schema(Some(envelope)).build(),
        )
        .build()
}

// ---------------------------------------------------------------------------------------------
// Payload schemas

/// The payload type of one endpoint: the schema of `data` in its 200 envelope. Built from the
/// type's `ToSchema` derive, so the document changes with the handler's type.
#[derive(Clone, Copy)]
pub struct DataSchema {
    /// Registry slug of the endpoint.
    pub slug: &'static str,
    name: fn() -> Cow<'static, str>,
    /// The component name when the type's own is not unique (instances of a generic type).
    alias: Option<&'static str>,
    schema: fn() -> RefOr<Schema>,
    references: fn(&mut Vec<(String, RefOr<Schema>)>),
}

impl DataSchema {
    /// Endpoint `slug` answers `T` under `data`.
    pub fn of<T: ToSchema>(endpoint: Endpoint) -> Self {
        Self {
            slug: endpoint.slug(),
            name: T::name,
            alias: None,
            schema: T::schema,
            references: T::schemas,
        }
    }

    /// Endpoint `slug` answers `T` under `data`, documented as component `name`: for the
    /// instances of a generic payload (`BatchPayload<GexPayload>`), which utoipa names alike.
    pub fn named<T: ToSchema>(endpoint: Endpoint, name: &'static str) -> Self {
        Self {
            alias: Some(name),
            ..Self::of::<T>(endpoint)
        }
    }

    /// The payload's component name.
    pub fn name(&self) -> String {
        match self.alias {
            Some(alias) => alias.to_owned(),
            None => (self.name)().into_owned(),
        }
    }

    /// The payload's schema and every schema it references, by component name (the payload
    /// last).
    pub fn components(&self) -> Vec<(String, RefOr<Schema>)> {
        let mut schemas = Vec::new();
        (self.references)(&mut schemas);
        schemas.push((self.name(), (self.schema)()));
        schemas
    }
}

impl fmt::Debug for DataSchema {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("DataSchema")
            .field("slug", &self.slug)
            .field("name", &self.name())
            .finish()
    }
}

/// Component names that two of `schemas` use for different types (empty when none clash).
pub fn schema_name_conflicts(schemas: &[DataSchema]) -> Vec<String> {
    let mut seen: BTreeMap<String, RefOr<Schema>> = BTreeMap::new();
    let mut clashes = Vec::new();
    for data_schema in schemas {
        for (name, schema) in data_schema.components() {
            match seen.get(&name) {
                Some(held) if *held != schema => clashes.push(name),
                Some(_) => {}
                None => {
                    seen.insert(name, schema);
                }
            }
        }
    }
    clashes.sort();
    clashes.dedup();
    clashes
}

/// One response field for the reference: `path` from `data` (`strike_window.truncated`,
/// `chains.<key>[].Call Bid`), its type in words and its description.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldDoc {
    /// Dotted path below `data`; `[]` marks the items of a list, `<key>` any key of a map.
    pub path: String,
    /// `number`, `integer`, `string`, `date`, `one of AM, PM`, `list of object`, …, with
    /// `or null` when the field may be null.
    pub kind: String,
    /// The field's doc comment, on one line (empty when it has none).
    pub description: String,
}

/// How deep [`data_fields`] follows nested objects (the chain's rows sit at depth 3).
const FIELD_DEPTH_MAX: usize = 4;

/// The fields of `schema`'s payload, depth first in declaration order.
pub fn data_fields(schema: &DataSchema) -> Vec<FieldDoc> {
    let components: BTreeMap<String, serde_json::Value> = schema
        .components()
        .into_iter()
        .filter_map(|(name, s)| serde_json::to_value(s).ok().map(|v| (name, v)))
        .collect();
    let mut out = Vec::new();
    if let Some(root) = components.get(&schema.name()) {
        let mut walker = FieldWalker {
            components: &components,
            visiting: vec![schema.name()],
            out: &mut out,
        };
        walker.fields_of(root, "", 0);
    }
    out
}

struct FieldWalker<'a> {
    components: &'a BTreeMap<String, serde_json::Value>,
    /// Component names on the way down (a recursive type stops at its second visit).
    visiting: Vec<String>,
    out: &'a mut Vec<FieldDoc>,
}

impl<'a> FieldWalker<'a> {
    /// `node` with its `$ref` followed, and the referenced component's name.
    fn resolve(&self, node: &'a serde_json::Value) -> (&'a serde_json::Value, Option<String>) {
        match node.get("$ref").and_then(serde_json::Value::as_str) {
            Some(reference) => {
                let name = reference.rsplit('/').next().unwrap_or(reference).to_owned();
                match self.components.get(&name) {
                    Some(target) => (target, Some(name)),
                    None => (node, None),
                }
            }
            None => (node, None),
        }
    }

    /// The non-null alternative of a nullable node (`oneOf [null, X]`), resolved, and whether
    /// null is allowed.
    fn core(&self, node: &'a serde_json::Value) -> (&'a serde_json::Value, Option<String>, bool) {
        let (node, name) = self.resolve(node);
        if let Some(variants) = node.get("oneOf").and_then(serde_json::Value::as_array) {
            let (nulls, others): (Vec<&serde_json::Value>, Vec<&serde_json::Value>) = variants
                .iter()
                .partition(|v| v.get("type") == Some(&"null".into()));
            if !nulls.is_empty() && others.len() == 1 {
                let (inner, inner_name) = self.resolve(others[0]);
                return (inner, inner_name.or(name), true);
            }
        }
        let nullable = node
            .get("type")
            .and_then(serde_json::Value::as_array)
            .is_some_and(|types| types.iter().any(|t| t == "null"));
        (node, name, nullable)
    }

    fn kind(&self, node: &'a serde_json::Value, depth: usize) -> String {
        let (node, _, nullable) = self.core(node);
        let mut word = if let Some(values) = node.get("enum").and_then(serde_json::Value::as_array)
        {
            let values: Vec<String> = values
                .iter()
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_owned))
                .collect();
            format!("one of {}", values.join(", "))
        } else {
            let base = match node.get("type") {
                Some(serde_json::Value::String(t)) => t.clone(),
                Some(serde_json::Value::Array(types)) => types
                    .iter()
                    .filter_map(serde_json::Value::as_str)
                    .find(|t| *t != "null")
                    .unwrap_or("any")
                    .to_owned(),
                _ if node.get("allOf").is_some() || node.get("properties").is_some() => {
                    "object".to_owned()
                }
                _ => "any".to_owned(),
            };
            match (base.as_str(), node.get("format").and_then(|f| f.as_str())) {
                ("string", Some("date")) => "date".to_owned(),
                ("string", Some("date-time")) => "timestamp".to_owned(),
                ("array", _) if depth < FIELD_DEPTH_MAX => match node.get("items") {
                    Some(items) => format!("list of {}", self.kind(items, depth + 1)),
                    None => "list".to_owned(),
                },
                ("object", _) if node.get("properties").is_none() => {
                    match node.get("additionalProperties") {
                        Some(values) if values.is_object() && depth < FIELD_DEPTH_MAX => {
                            format!("map of {}", self.kind(values, depth + 1))
                        }
                        _ => "object".to_owned(),
                    }
                }
                _ => base,
            }
        };
        if nullable {
            word.push_str(" or null");
        }
        word
    }

    fn description(&self, node: &'a serde_json::Value) -> String {
        let own = node.get("description").and_then(serde_json::Value::as_str);
        let text = own.map(str::to_owned).unwrap_or_else(|| {
            let (core, _, _) = self.core(node);
            core.get("description")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_owned()
        });
        text.split_whitespace().collect::<Vec<_>>().join(" ")
    }

    /// Lists the properties of the object `node` under `prefix`, then their nested fields.
    fn fields_of(&mut self, node: &'a serde_json::Value, prefix: &str, depth: usize) {
        let (node, name, _) = self.core(node);
        if let Some(name) = &name
            && self.visiting.iter().filter(|n| *n == name).count() > 1
        {
            return;
        }
        if let Some(parts) = node.get("allOf").and_then(serde_json::Value::as_array) {
            for part in parts {
                self.descend(part, prefix, depth);
            }
        }
        let Some(properties) = node
            .get("properties")
            .and_then(serde_json::Value::as_object)
        else {
            return;
        };
        for (field, schema) in properties {
            let path = if prefix.is_empty() {
                field.clone()
            } else {
                format!("{prefix}.{field}")
            };
            self.out.push(FieldDoc {
                kind: self.kind(schema, depth),
                description: self.description(schema),
                path: path.clone(),
            });
            if depth < FIELD_DEPTH_MAX {
                self.nested(schema, &path, depth + 1);
            }
        }
    }

    /// [`Self::fields_of`] through a `$ref`, tracking the component to stop recursion.
    fn descend(&mut self, node: &'a serde_json::Value, prefix: &str, depth: usize) {
        let (_, name, _) = self.core(node);
        if let Some(name) = &name {
            self.visiting.push(name.clone());
        }
        self.fields_of(node, prefix, depth);
        if name.is_some() {
            self.visiting.pop();
        }
    }

    /// The fields inside one field: an object's properties, a list's items (`path[]`), a
    /// map's values (`path.<key>`).
    fn nested(&mut self, node: &'a serde_json::Value, path: &str, depth: usize) {
        let (core, _, _) = self.core(node);
        if core.get("properties").is_some() || core.get("allOf").is_some() {
            self.descend(node, path, depth);
        } else if let Some(items) = core.get("items").filter(|i| i.is_object()) {
            self.nested(items, &format!("{path}[]"), depth);
        } else if let Some(values) = core.get("additionalProperties").filter(|v| v.is_object()) {
            self.nested(values, &format!("{path}.<key>"), depth);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Stand-ins for field types utoipa does not know

/// `#[schema(value_type = IsoDate)]` for `chrono::NaiveDate` fields: `YYYY-MM-DD`.
#[derive(Debug)]
pub struct IsoDate;

impl PartialSchema for IsoDate {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::Date)))
            .description(Some("A date, YYYY-MM-DD"))
            .into()
    }
}

impl ToSchema for IsoDate {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Date")
    }
}

/// `#[schema(value_type = Timestamp)]` for `DateTime<Utc>` fields: RFC 3339 in UTC.
#[derive(Debug)]
pub struct Timestamp;

impl PartialSchema for Timestamp {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .format(Some(SchemaFormat::KnownFormat(KnownFormat::DateTime)))
            .description(Some("An instant, RFC 3339 in UTC"))
            .into()
    }
}

impl ToSchema for Timestamp {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Timestamp")
    }
}

/// What a zone-less timestamp looks like as chrono serialises it (fractional seconds only when
/// the instant has them).
const LOCAL_TIMESTAMP_PATTERN: &str = r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?$";

/// `#[schema(value_type = LocalTimestamp)]` for `chrono::NaiveDateTime` fields: ISO 8601
/// without a zone (`2026-11-20T15:30:00`). Not `format: date-time`, which requires an offset.
#[derive(Debug)]
pub struct LocalTimestamp;

impl PartialSchema for LocalTimestamp {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(LOCAL_TIMESTAMP_PATTERN))
            .description(Some(
                "An instant, ISO 8601 without a zone (YYYY-MM-DDTHH:MM:SS[.fff]), UTC",
            ))
            .into()
    }
}

impl ToSchema for LocalTimestamp {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("LocalTimestamp")
    }
}

impl PartialSchema for Ticker {
    fn schema() -> RefOr<Schema> {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(TICKER_PATTERN))
            .description(Some("An underlying symbol, upper case"))
            .into()
    }
}

impl ToSchema for Ticker {
    fn name() -> Cow<'static, str> {
        Cow::Borrowed("Ticker")
    }
}

/// A string that is one of `words` (read in any case): for `#[schema(schema_with = …)]` on a
/// body field whose words live in the math crate.
pub fn words_schema(words: &[&str]) -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(words.iter().copied()))
        .into()
}

/// A string enum listing every code of a stored enum (its serde form).
fn code_schema<E: WireEnum>() -> RefOr<Schema> {
    ObjectBuilder::new()
        .schema_type(Type::String)
        .enum_values(Some(E::ALL.iter().map(|code| code.as_str())))
        .description(Some(format!("A {} code", E::WHAT)))
        .into()
}

/// Stand-ins for the stored enums of `optics_schemas` (which carry no utoipa derive): each
/// lists the enum's codes, read from [`WireEnum::ALL`], so it cannot drift from serde.
macro_rules! code_schemas {
    ($($(#[$meta:meta])* $marker:ident => $code:ty, $name:literal;)+) => {$(
        $(#[$meta])*
        #[derive(Debug)]
        pub struct $marker;

        impl PartialSchema for $marker {
            fn schema() -> RefOr<Schema> {
                code_schema::<$code>()
            }
        }

        impl ToSchema for $marker {
            fn name() -> Cow<'static, str> {
                Cow::Borrowed($name)
            }
        }
    )+};
}

code_schemas! {
    /// `#[schema(value_type = SettlementCode)]` for [`SettlementStyle`]: `AM` or `PM`.
    SettlementCode => SettlementStyle, "SettlementStyle";
    /// `#[schema(value_type = ForwardSourceCode)]` for [`ForwardSource`]: `parity` or `carry`.
    ForwardSourceCode => ForwardSource, "ForwardSource";
    /// `#[schema(value_type = AssetClassCode)]` for [`AssetClass`]: `INDEX`, `ETF`, `STOCK`.
    AssetClassCode => AssetClass, "AssetClass";
    /// `#[schema(value_type = OptionTypeCode)]` for [`OptionType`]: `C` or `P`.
    OptionTypeCode => OptionType, "OptionType";
    /// `#[schema(value_type = VolatilityRegimeSchema)]` for [`VolatilityRegimeCode`]:
    /// `SUPPRESSED`, `AMPLIFIED`, `NEUTRAL`.
    VolatilityRegimeSchema => VolatilityRegimeCode, "VolatilityRegime";
    /// `#[schema(value_type = PositioningSchema)]` for [`PositioningCode`]: `CALL_DOMINATED`,
    /// `PUT_DOMINATED`, `BALANCED`.
    PositioningSchema => PositioningCode, "Positioning";
    /// `#[schema(value_type = DirectionalBiasSchema)]` for [`DirectionalBiasCode`]: `BULLISH`,
    /// `BEARISH`, `NEUTRAL`.
    DirectionalBiasSchema => DirectionalBiasCode, "DirectionalBias";
    /// `#[schema(value_type = FlipDegeneracySchema)]` for [`FlipDegeneracyCode`]:
    /// `no_exposure`, `always_positive`, `always_negative`.
    FlipDegeneracySchema => FlipDegeneracyCode, "FlipDegeneracy";
}

fn reconcile(operation: &mut Operation, spec: &EndpointSpec) {
    let parameters: Vec<Parameter> = spec
        .params
        .iter()
        .filter(|p| p.location != ParamLocation::Body)
        .map(parameter)
        .collect();
    if !parameters.is_empty() {
        operation.parameters = Some(parameters);
    }
    let body_params: Vec<&ParamSpec> = spec
        .params
        .iter()
        .filter(|p| p.location == ParamLocation::Body)
        .collect();
    if operation.request_body.is_none() && !body_params.is_empty() {
        let mut object = ObjectBuilder::new().schema_type(Type::Object);
        for p in &body_params {
            object = object.property(p.name, param_schema(p));
            if p.required {
                object = object.required(p.name);
            }
        }
        operation.request_body = Some(
            RequestBodyBuilder::new()
                .required(Some(Required::True))
                .content(
                    "application/json",
                    ContentBuilder::new().schema(Some(object.build())).build(),
                )
                .build(),
        );
    }
    operation
        .responses
        .responses
        .entry("default".to_owned())
        .or_insert_with(|| {
            RefOr::T(
                ResponseBuilder::new()
                    .description(
                        "Error envelope: success false, error, and the fields of its status",
                    )
                    .content(
                        "application/json",
                        ContentBuilder::new()
                            .schema(Some(Ref::from_schema_name("ErrorBody")))
                            .build(),
                    )
                    .build(),
            )
        });
}

fn parameter(p: &ParamSpec) -> Parameter {
    let location = match p.location {
        ParamLocation::Path => ParameterIn::Path,
        _ => ParameterIn::Query,
    };
    let description = match p.default {
        Some(default) => format!("Accepts: {}. Default: {default}.", p.bounds),
        None => format!("Accepts: {}.", p.bounds),
    };
    ParameterBuilder::new()
        .name(p.name)
        .parameter_in(location)
        .required(if p.required || p.location == ParamLocation::Path {
            Required::True
        } else {
            Required::False
        })
        .description(Some(description))
        .schema(Some(param_schema(p)))
        .extensions(empty_means_absent(p))
        .build()
}

/// `allowEmptyValue: true` on an optional query parameter: `name=` is read as the parameter
/// left out (its default), which the schema alone (a string has a character) would call
/// invalid. utoipa has no field for it (OpenAPI 3.1 keeps it, discouraged), so it is written
/// as a key of the parameter object here.
fn empty_means_absent(p: &ParamSpec) -> Option<Extensions> {
    (p.location == ParamLocation::Query && !p.required).then(|| {
        let mut fields = Extensions::default();
        fields.insert("allowEmptyValue".to_owned(), serde_json::Value::Bool(true));
        fields
    })
}

fn param_schema(p: &ParamSpec) -> Schema {
    // A value has a character (an empty optional one is the parameter left out, which
    // `allowEmptyValue` says).
    let string = || {
        ObjectBuilder::new()
            .schema_type(Type::String)
            .min_length(Some(1))
    };
    let object = match p.kind {
        ParamKind::Int { min, max } => ObjectBuilder::new()
            .schema_type(Type::Integer)
            .extensions(Some(clamp_extension(Some(min.into()), Some(max.into()))))
            .default(p.default_int().map(Into::into)),
        ParamKind::Float { min, max } => ObjectBuilder::new()
            .schema_type(Type::Number)
            .extensions(Some(clamp_extension(
                min.map(Into::into),
                max.map(Into::into),
            )))
            .default(p.default_float().map(Into::into)),
        ParamKind::Choice(words) => {
            let default = p
                .default
                .filter(|d| words.contains(d))
                .map(serde_json::Value::from);
            string()
                .enum_values(Some(words.iter().copied()))
                .default(default)
        }
        ParamKind::Bool => ObjectBuilder::new().schema_type(Type::Boolean).default(
            p.default
                .and_then(|d| d.parse::<bool>().ok())
                .map(Into::into),
        ),
        ParamKind::Date => string().format(Some(SchemaFormat::KnownFormat(KnownFormat::Date))),
        ParamKind::Symbol => string().pattern(Some(TICKER_PATTERN)),
        ParamKind::SymbolList { max_len } => string()
            .pattern(Some(ticker_list_pattern(max_len)))
            .description(Some(format!("Comma-separated, 1 to {max_len} symbols"))),
        ParamKind::IntList { .. } | ParamKind::NameList => {
            string().description(Some("Comma-separated"))
        }
        ParamKind::Text => string(),
        ParamKind::Number => ObjectBuilder::new().schema_type(Type::Number),
        ParamKind::Array => ObjectBuilder::new().schema_type(Type::Array),
        ParamKind::Object => ObjectBuilder::new().schema_type(Type::Object),
    };
    Schema::Object(object.build())
}

/// The full URL path of the document.
pub fn document_path() -> String {
    format!("{DATA_PREFIX}/openapi.json")
}
