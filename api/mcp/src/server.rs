//! The MCP server: the catalog as rmcp tools, over stdio (`optics mcp`) and streamable HTTP
//! (`/mcp-server` on the API server).

use std::sync::Arc;

use axum::http::HeaderValue;
use axum::http::header::AUTHORIZATION;
use axum::http::request::Parts;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ErrorData, RoleServer, ServerHandler, ServiceExt};
use serde_json::{Value, json};

use crate::catalog::{self, TOOLS};
use crate::invoke::Invoker;

/// What the server tells an assistant when it connects.
const INSTRUCTIONS: &str = "Options analytics on US equities and index ETFs: chains, Greeks, \
dealer exposures (GEX, charm), flow, implied and realized volatility, earnings moves, screens, \
strategies and portfolio risk. Implied and realized volatility are annualised percentage points \
on summary tools (34.4 = 34.4%); chain rows carry IV as decimals (0.344). Each call is metered \
against the API token: on a rate-limit error wait the seconds it names. Large per-strike and \
per-trade lists come back in a compact window that says how to ask for more. Call help for the \
conventions or for any tool.";

/// The tool server.
#[derive(Debug, Clone)]
pub struct OpticsTools {
    invoker: Invoker,
    /// The token of a local (stdio) server; the HTTP server reads each request's own.
    fixed_authorization: Option<HeaderValue>,
    tools: Arc<Vec<Tool>>,
}

impl OpticsTools {
    /// A server whose calls carry each HTTP request's own `Authorization` header.
    pub fn per_request(router: axum::Router) -> Self {
        Self {
            invoker: Invoker::new(router),
            fixed_authorization: None,
            tools: Arc::new(tool_list()),
        }
    }

    /// A server whose calls all carry `token` (the stdio server of one user).
    pub fn with_token(router: axum::Router, token: &str) -> Result<Self, InvalidToken> {
        let header =
            HeaderValue::from_str(&format!("Bearer {}", token.trim())).map_err(|_| InvalidToken)?;
        Ok(Self {
            fixed_authorization: Some(header),
            ..Self::per_request(router)
        })
    }

    /// The tools as listed to clients.
    pub fn tools(&self) -> &[Tool] {
        &self.tools
    }

    /// Runs one tool call; `authorization` is used when the server has no fixed token.
    pub async fn call(
        &self,
        name: &str,
        arguments: Option<serde_json::Map<String, Value>>,
        authorization: Option<&HeaderValue>,
    ) -> Result<CallToolResult, ErrorData> {
        let tool = catalog::tool(name).ok_or_else(|| {
            ErrorData::invalid_params(
                format!(
                    "unknown tool {name:?}; tools/list names the {} tools",
                    TOOLS.len()
                ),
                None,
            )
        })?;
        let authorization = self.fixed_authorization.as_ref().or(authorization);
        let outcome = self.invoker.run(tool, arguments, authorization).await;
        // Structured content must be an object; a list payload is wrapped.
        let structured = match outcome.structured {
            object @ Value::Object(_) => object,
            other => json!({ "result": other }),
        };
        let mut result = if outcome.is_error {
            CallToolResult::structured_error(structured)
        } else {
            CallToolResult::structured(structured)
        };
        result.content = vec![ContentBlock::text(outcome.text)];
        Ok(result)
    }
}

/// The token given to the stdio server is not a valid header value.
#[derive(Debug, Clone, Copy, thiserror::Error)]
#[error("the API token contains characters a token never has")]
pub struct InvalidToken;

fn tool_list() -> Vec<Tool> {
    TOOLS
        .iter()
        .map(|spec| {
            Tool::new(spec.name, spec.description(), spec.input_schema())
                .with_title(spec.title)
                .with_annotations(
                    ToolAnnotations::with_title(spec.title)
                        .read_only(true)
                        .destructive(false)
                        .idempotent(true)
                        .open_world(false),
                )
        })
        .collect()
}

impl ServerHandler for OpticsTools {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("optics", env!("CARGO_PKG_VERSION")))
            .with_instructions(INSTRUCTIONS)
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tools.to_vec()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools.iter().find(|t| t.name == name).cloned()
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let authorization = context
            .extensions
            .get::<Parts>()
            .and_then(|parts| parts.headers.get(AUTHORIZATION))
            .cloned();
        self.call(&request.name, request.arguments, authorization.as_ref())
            .await
            .map(Into::into)
    }
}

/// Serves `tools` over stdin/stdout until the client disconnects.
pub async fn serve_stdio(tools: OpticsTools) -> Result<(), std::io::Error> {
    let running = tools
        .serve(rmcp::transport::stdio())
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}

/// The streamable-HTTP service for `/mcp-server`: stateless (no session is held between
/// requests, so any replica answers any call) and JSON responses. `allowed_hosts` are the
/// `Host` values accepted (DNS-rebinding defence): loopback plus the public host.
pub fn http_service(
    router: axum::Router,
    allowed_hosts: Vec<String>,
) -> StreamableHttpService<OpticsTools, NeverSessionManager> {
    let tools = OpticsTools::per_request(router);
    let mut config = StreamableHttpServerConfig::default().with_allowed_hosts(allowed_hosts);
    config.legacy_session_mode = false;
    config.json_response = true;
    StreamableHttpService::new(move || Ok(tools.clone()), Arc::default(), config)
}
