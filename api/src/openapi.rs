//! The OpenAPI 3.1 document, served at `GET /api/mcp/data/openapi.json`.
//!
//! Built by utoipa (which writes OpenAPI 3.1) from the handlers' `#[utoipa::path]` annotations
//! and the payload types' `ToSchema` derives, then reconciled with the registry once, when the
//! router is built:
//!
//! - operations of routes that are not mounted are dropped, so the document describes exactly
//!   what the server answers;
//! - a mounted endpoint without an annotation gets an operation generated from the registry
//!   (summary, tag, envelope response), so none is missing;
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

use utoipa::OpenApi;
use utoipa::openapi::path::{
    Operation, OperationBuilder, Parameter, ParameterBuilder, ParameterIn,
};
use utoipa::openapi::request_body::RequestBodyBuilder;
use utoipa::openapi::schema::{KnownFormat, ObjectBuilder, SchemaFormat, Type};
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{ContentBuilder, PathItem, Ref, RefOr, Required, ResponseBuilder, Schema};

use crate::error::{ErrorBody, RateLimit, Suggestion};
use crate::freshness::{DataFreshness, Freshness};
use crate::handlers::platform;
use crate::params::ClampNotice;
use crate::registry::{
    DATA_PREFIX, EndpointSpec, Method, ParamKind, ParamLocation, ParamSpec, Registry,
};
use crate::window::{Detail, Window};

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
    paths(platform::index, platform::openapi, platform::docs, platform::changelog),
    components(schemas(
        ErrorBody,
        Suggestion,
        RateLimit,
        Freshness,
        DataFreshness,
        Window,
        Detail,
        ClampNotice
    )),
    tags((name = "platform", description = "Index and documentation"))
)]
struct ApiDoc;

/// The document for the mounted endpoints of `registry`.
pub fn document(registry: &Registry) -> utoipa::openapi::OpenApi {
    let mut doc = ApiDoc::openapi();
    let mounted = registry.mounted();
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

/// [`document`] serialized (what `/openapi.json` serves).
pub fn document_json(registry: &Registry) -> String {
    document(registry).to_json().unwrap_or_else(|e| {
        tracing::error!(error = %e, "OpenAPI document could not be serialized");
        String::from("{}")
    })
}

fn generated_operation(spec: &EndpointSpec) -> Operation {
    let envelope = ObjectBuilder::new()
        .schema_type(Type::Object)
        .property(
            "success",
            ObjectBuilder::new().schema_type(Type::Boolean).build(),
        )
        .property(
            "data",
            ObjectBuilder::new().schema_type(Type::Object).build(),
        )
        .required("success")
        .required("data")
        .build();
    OperationBuilder::new()
        .operation_id(Some(spec.slug))
        .summary(Some(spec.summary))
        .tag(spec.family)
        .response(
            "200",
            ResponseBuilder::new()
                .description("The envelope with the payload under data")
                .content(
                    "application/json",
                    ContentBuilder::new().schema(Some(envelope)).build(),
                )
                .build(),
        )
        .build()
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
        .build()
}

fn param_schema(p: &ParamSpec) -> Schema {
    let string = || ObjectBuilder::new().schema_type(Type::String);
    let object = match p.kind {
        ParamKind::Int { min, max } => ObjectBuilder::new()
            .schema_type(Type::Integer)
            .minimum(Some(min))
            .maximum(Some(max))
            .default(p.default_int().map(Into::into)),
        ParamKind::Float { min, max } => ObjectBuilder::new()
            .schema_type(Type::Number)
            .minimum(min)
            .maximum(max)
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
        ParamKind::Symbol => string().pattern(Some(r"^\^?[A-Za-z0-9.\-]{1,12}$")),
        ParamKind::SymbolList { .. } | ParamKind::IntList { .. } | ParamKind::NameList => {
            string().description(Some("Comma-separated"))
        }
        ParamKind::Text => string(),
        ParamKind::Number => ObjectBuilder::new().schema_type(Type::Number),
        ParamKind::Array => ObjectBuilder::new().schema_type(Type::Array),
    };
    Schema::Object(object.build())
}

/// The full URL path of the document.
pub fn document_path() -> String {
    format!("{DATA_PREFIX}/openapi.json")
}
