//! The HTTP face of the page: the token and `Host` checks, the page itself, and the JSON API's
//! route table (`route`, which the tests call without a socket).

use std::collections::HashMap;
use std::sync::Arc;

use anyhow::{Result, anyhow};
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use serde_json::{Value as Json, json};

use super::{State, edit};

/// The page: markup and style, then its two scripts, all inline (the CSP allows nothing else).
const PAGE: &str = concat!(
    include_str!("page.html"),
    include_str!("page.js"),
    include_str!("call.js"),
    "</script>\n</body>\n</html>\n"
);

/// The route after `/TOKEN/` when `path` starts with the page's token, compared in constant time
/// so the time a guess takes says nothing about how much of it was right.
pub(super) fn token_route<'a>(path: &'a str, token: &str) -> Option<&'a str> {
    use subtle::ConstantTimeEq;
    let rest = path.strip_prefix('/')?;
    let (given, route) = rest.split_at_checked(token.len())?;
    let route = route.strip_prefix('/')?;
    bool::from(given.as_bytes().ct_eq(token.as_bytes())).then_some(route)
}

/// The query string's pairs, percent-decoded (`+` is a space), as forms encode them.
pub(super) fn query_pairs(query: Option<&str>) -> HashMap<String, String> {
    form_urlencoded::parse(query.unwrap_or("").as_bytes()).into_owned().collect()
}

fn respond(status: StatusCode, body: &Json) -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_string())));
    *r.status_mut() = status;
    r.headers_mut().insert("content-type", http::HeaderValue::from_static("application/json"));
    r.headers_mut().insert("cache-control", http::HeaderValue::from_static("no-store"));
    r
}

fn not_found() -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from_static(b"not found")));
    *r.status_mut() = StatusCode::NOT_FOUND;
    r
}

fn page() -> Response<Full<Bytes>> {
    let mut r = Response::new(Full::new(Bytes::from_static(PAGE.as_bytes())));
    let h = r.headers_mut();
    h.insert("content-type", http::HeaderValue::from_static("text/html; charset=utf-8"));
    // Inline script and style only; nothing from anywhere else, not even this server.
    h.insert(
        "content-security-policy",
        http::HeaderValue::from_static(
            "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; connect-src 'self'; img-src data:",
        ),
    );
    r
}

pub(super) async fn handle(state: Arc<State>, req: Request<Incoming>) -> Response<Full<Bytes>> {
    // The Host must be this server by address or `localhost` (no DNS rebinding).
    let host_ok = req.headers().get("host").and_then(|h| h.to_str().ok()).is_some_and(|h| {
        h == format!("127.0.0.1:{}", state.port) || h == format!("localhost:{}", state.port)
    });
    let Some(route_path) = token_route(req.uri().path(), &state.token).map(str::to_owned) else {
        return not_found();
    };
    if !host_ok {
        return not_found();
    }
    let query = query_pairs(req.uri().query());
    let method = req.method().clone();
    if method == Method::GET && route_path.is_empty() {
        return page();
    }
    let body: Json = if method == Method::POST {
        match req.into_body().collect().await {
            Ok(b) => serde_json::from_slice(&b.to_bytes()).unwrap_or(Json::Null),
            Err(_) => Json::Null,
        }
    } else {
        Json::Null
    };
    match route(&state, &method, &route_path, &query, &body).await {
        None => not_found(),
        Some(Ok(j)) => respond(StatusCode::OK, &j),
        Some(Err(e)) => respond(StatusCode::BAD_REQUEST, &json!({"error": format!("{e:#}")})),
    }
}

/// The JSON API: `None` for a route that is not one.
pub(super) async fn route(
    state: &State,
    method: &Method,
    route: &str,
    query: &HashMap<String, String>,
    body: &Json,
) -> Option<Result<Json>> {
    let num = |k: &str| query.get(k).and_then(|v| v.parse::<usize>().ok());
    let field = |k: &str| body.get(k).and_then(Json::as_u64).and_then(|n| usize::try_from(n).ok());
    let text = |k: &str| body.get(k).and_then(Json::as_str);
    Some(match (method.clone(), route) {
        (Method::GET, "api/state") => Ok(state.overview()),
        (Method::GET, "api/message") => match (num("doc"), num("msg")) {
            (Some(d), Some(m)) => state.tree(d, m),
            _ => Err(anyhow!("doc and msg are needed")),
        },
        (Method::POST, "api/set") => {
            match (field("doc"), field("msg"), text("path"), text("value")) {
                (Some(d), Some(m), Some(p), Some(v)) => {
                    state.set(d, m, p, v).and_then(|()| state.tree(d, m))
                }
                _ => Err(anyhow!("doc, msg, path and value are needed")),
            }
        }
        (Method::POST, "api/save") => match field("doc") {
            Some(d) => state.save(d),
            None => Err(anyhow!("doc is needed")),
        },
        (Method::POST, "api/paste") => match text("text") {
            Some(t) => state.paste(t).map(|()| state.overview()),
            None => Err(anyhow!("text is needed")),
        },
        (Method::POST, "api/secrets") => {
            state.set_show_secrets(body.get("show").and_then(Json::as_bool).unwrap_or(false));
            Ok(state.overview())
        }
        (Method::GET, "api/methods") => Ok(state.methods()),
        (Method::POST, "api/call/open") => match text("method") {
            Some(m) => state.open_method(m),
            None => Err(anyhow!("method is needed")),
        },
        (Method::GET, "api/call/request") => state.request(),
        (Method::POST, "api/call/edit") => match (text("op"), text("path")) {
            (Some("set"), Some(path)) => match text("value") {
                Some(text) => state.edit_request(&edit::Change::Set { path, text }),
                None => Err(anyhow!("value is needed")),
            },
            (Some("add"), Some(path)) => {
                state.edit_request(&edit::Change::Add { path, key: text("key") })
            }
            (Some("remove"), Some(path)) => state.edit_request(&edit::Change::Remove { path }),
            _ => Err(anyhow!("op (set, add or remove) and path are needed")),
        },
        (Method::POST, "api/call/reset") => state.reset_request(),
        (Method::POST, "api/call/send") => state.send().await,
        _ => return None,
    })
}
