//! Every route's path pattern and the methods it takes, matched segment by segment: the
//! label of a request in metrics, and the `Allow` header of a 405.
//!
//! The patterns come from where the routes are declared (the OpenAPI document for the
//! API, the page routers for the dashboard and the voting page): start-up installs them.
//! Matching here is much cheaper than actix's `match_pattern`, which matches a regex per
//! route again.

use std::collections::HashMap;
use std::sync::OnceLock;

use actix_web::http::Method;

/// A pattern's segments: `Some(literal)`, or `None` for a `{parameter}`.
struct Pattern {
    path: String,
    segments: Vec<Option<String>>,
    methods: Vec<Method>,
}

/// Patterns by their number of segments.
struct Table(HashMap<usize, Vec<Pattern>>);

static TABLE: OnceLock<Table> = OnceLock::new();

/// Installs the service's routes (method, pattern). The first call wins: every app in a
/// process declares the same routes.
pub fn install(routes: Vec<(Method, String)>) {
    let _ = TABLE.set(Table::new(routes));
}

impl Table {
    fn new(routes: Vec<(Method, String)>) -> Self {
        let mut merged: Vec<(String, Vec<Method>)> = Vec::new();
        for (method, path) in routes {
            match merged.iter_mut().find(|(p, _)| *p == path) {
                Some((_, methods)) if !methods.contains(&method) => methods.push(method),
                Some(_) => {}
                None => merged.push((path, vec![method])),
            }
        }
        let mut by_length: HashMap<usize, Vec<Pattern>> = HashMap::new();
        for (path, methods) in merged {
            let segments: Vec<Option<String>> = path
                .split('/')
                .map(|s| (!s.starts_with('{')).then(|| s.to_owned()))
                .collect();
            by_length.entry(segments.len()).or_default().push(Pattern {
                path,
                segments,
                methods,
            });
        }
        Table(by_length)
    }

    /// The pattern `path` matches, preferring the one with the most literal segments.
    fn find(&self, path: &str) -> Option<&Pattern> {
        let candidates = self
            .0
            .get(&(path.bytes().filter(|&b| b == b'/').count() + 1))?;
        let mut best: Option<(&Pattern, usize)> = None;
        for pattern in candidates {
            let mut literal = 0;
            let fits = pattern
                .segments
                .iter()
                .zip(path.split('/'))
                .all(|(seg, part)| match seg {
                    Some(lit) if lit == part => {
                        literal += 1;
                        true
                    }
                    Some(_) => false,
                    None => !part.is_empty(),
                });
            if fits && best.is_none_or(|(_, l)| literal > l) {
                best = Some((pattern, literal));
            }
        }
        best.map(|(p, _)| p)
    }
}

/// The route pattern `path` matches (`/api/v1/boards/{board}/top`), or `unmatched`.
pub fn label(path: &str) -> &'static str {
    TABLE
        .get()
        .and_then(|t| t.find(path))
        .map_or("unmatched", |p| p.path.as_str())
}

/// The methods the route `path` matches takes; empty when it matches none.
pub fn allowed_methods(path: &str) -> &'static [Method] {
    TABLE
        .get()
        .and_then(|t| t.find(path))
        .map_or(&[], |p| p.methods.as_slice())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Table {
        let get = |p: &str| (Method::GET, p.to_owned());
        Table::new(vec![
            get("/api/v1/boards/{board}/top"),
            (Method::POST, "/api/v1/boards/{board}/votes".into()),
            (Method::POST, "/api/v1/votes".into()),
            get("/api/v1/admin/boards"),
            get("/api/v1/admin/boards/{board}"),
            (Method::PATCH, "/api/v1/admin/boards/{board}".into()),
            (Method::DELETE, "/api/v1/admin/boards/{board}".into()),
            get("/api/v1/boards/{board}/members/{member}/around"),
            get("/admin/boards/{board}"),
            get("/admin/boards/new"),
            get("/admin/boards/{board}/live"),
            get("/b/{board}"),
            get("/metrics"),
        ])
    }

    #[test]
    fn paths_are_labelled_by_the_route_they_match() {
        let table = table();
        for (path, expected) in [
            ("/api/v1/boards/stars/top", "/api/v1/boards/{board}/top"),
            ("/api/v1/boards/stars/votes", "/api/v1/boards/{board}/votes"),
            ("/api/v1/votes", "/api/v1/votes"),
            ("/api/v1/admin/boards", "/api/v1/admin/boards"),
            ("/api/v1/admin/boards/stars", "/api/v1/admin/boards/{board}"),
            (
                "/api/v1/boards/s/members/m1/around",
                "/api/v1/boards/{board}/members/{member}/around",
            ),
            ("/admin/boards/new", "/admin/boards/new"),
            ("/admin/boards/stars", "/admin/boards/{board}"),
            ("/admin/boards/stars/live", "/admin/boards/{board}/live"),
            ("/b/stars", "/b/{board}"),
            ("/metrics", "/metrics"),
            ("/api/v1/boards//top", "unmatched"),
            ("/wp-login.php", "unmatched"),
            ("/api/v1/boards/stars/top/extra", "unmatched"),
        ] {
            let got = table.find(path).map_or("unmatched", |p| p.path.as_str());
            assert_eq!(got, expected, "{path}");
        }
    }

    #[test]
    fn a_route_knows_its_methods() {
        let table = table();
        let methods = |path| table.find(path).map(|p| p.methods.clone());
        assert_eq!(
            methods("/api/v1/admin/boards/stars"),
            Some(vec![Method::GET, Method::PATCH, Method::DELETE])
        );
        assert_eq!(methods("/api/v1/votes"), Some(vec![Method::POST]));
        assert_eq!(methods("/nowhere"), None);
    }
}
