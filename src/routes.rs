//! Every route's path pattern and the methods it takes, matched segment by segment: the
//! label of a request in metrics, and the `Allow` header of a 405.
//!
//! The patterns come from where the routes are declared (the OpenAPI document for the
//! API, the page routers for the dashboard and the voting page): start-up installs them.
//! Matching here is much cheaper than actix's `match_pattern`, which matches a regex per
//! route again: the patterns form a tree of segments, so a path is one lookup a segment
//! (and a second branch only where a `{parameter}` sits beside a literal), whatever the
//! number of routes.

use std::collections::HashMap;
use std::str::Split;
use std::sync::OnceLock;

use actix_web::http::Method;

/// A route: its pattern, the methods it takes, and its place among the routes declared
/// (of two patterns with as many literal segments matching one path, the first wins).
struct Pattern {
    path: String,
    methods: Vec<Method>,
    order: usize,
}

/// A node of the tree, one segment deep per level: the literal segments that follow, the
/// `{parameter}` that follows, and the pattern that ends here.
#[derive(Default)]
struct Node {
    literals: HashMap<String, Node>,
    parameter: Option<Box<Node>>,
    pattern: Option<Pattern>,
}

/// A match: the pattern and how many of its segments are literal.
type Found<'a> = (&'a Pattern, usize);

struct Table(Node);

static TABLE: OnceLock<Table> = OnceLock::new();

/// Installs the service's routes (method, pattern). The first call wins: every app in a
/// process declares the same routes.
pub fn install(routes: Vec<(Method, String)>) {
    let _ = TABLE.set(Table::new(routes));
}

impl Table {
    fn new(routes: Vec<(Method, String)>) -> Self {
        let mut root = Node::default();
        let mut declared = 0;
        for (method, path) in routes {
            let mut node = &mut root;
            for segment in path.split('/') {
                node = if segment.starts_with('{') {
                    node.parameter.get_or_insert_default()
                } else {
                    node.literals.entry(segment.to_owned()).or_default()
                };
            }
            let pattern = node.pattern.get_or_insert_with(|| {
                declared += 1;
                Pattern {
                    path,
                    methods: Vec::new(),
                    order: declared,
                }
            });
            if !pattern.methods.contains(&method) {
                pattern.methods.push(method);
            }
        }
        Table(root)
    }

    /// The pattern `path` matches, preferring the one with the most literal segments.
    fn find(&self, path: &str) -> Option<&Pattern> {
        self.0.find(path.split('/'), 0).map(|(p, _)| p)
    }
}

impl Node {
    /// The best pattern under this node for the segments `rest`, `literal` of the
    /// segments before them having matched literally.
    fn find(&self, mut rest: Split<'_, char>, literal: usize) -> Option<Found<'_>> {
        let Some(segment) = rest.next() else {
            return self.pattern.as_ref().map(|p| (p, literal));
        };
        let by_literal = self
            .literals
            .get(segment)
            .and_then(|next| next.find(rest.clone(), literal + 1));
        let by_parameter = match &self.parameter {
            Some(next) if !segment.is_empty() => next.find(rest, literal),
            _ => None,
        };
        // More literal segments first, then the first declared.
        [by_literal, by_parameter]
            .into_iter()
            .flatten()
            .max_by_key(|(p, literal)| (*literal, std::cmp::Reverse(p.order)))
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
    use proptest::prelude::*;

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

    /// The brute-force answer: every pattern with as many segments as `path` tried in
    /// turn, the one with the most literal segments kept, the first declared on a tie;
    /// patterns that differ only in their parameters' names are one route.
    fn model<'a>(routes: &'a [(Method, String)], path: &str) -> Option<(&'a str, Vec<Method>)> {
        let shape = |p: &str| -> Vec<Option<String>> {
            p.split('/')
                .map(|s| (!s.starts_with('{')).then(|| s.to_owned()))
                .collect()
        };
        let parts: Vec<&str> = path.split('/').collect();
        let mut best: Option<(&str, Vec<Option<String>>, usize)> = None;
        for (_, pattern) in routes {
            let segments = shape(pattern);
            let fits = segments.len() == parts.len()
                && segments.iter().zip(&parts).all(|(seg, part)| match seg {
                    Some(lit) => lit == part,
                    None => !part.is_empty(),
                });
            let literal = segments.iter().filter(|s| s.is_some()).count();
            if fits && best.as_ref().is_none_or(|(_, _, l)| literal > *l) {
                best = Some((pattern, segments, literal));
            }
        }
        best.map(|(_, segments, _)| {
            let mut same = routes.iter().filter(|(_, p)| shape(p) == segments);
            let first = same
                .clone()
                .next()
                .map(|(_, p)| p.as_str())
                .unwrap_or_default();
            let mut methods: Vec<Method> = Vec::new();
            for (m, _) in same.by_ref() {
                if !methods.contains(m) {
                    methods.push(m.clone());
                }
            }
            (first, methods)
        })
    }

    fn segment() -> impl Strategy<Value = &'static str> {
        prop::sample::select(vec!["", "a", "b", "boards", "{x}", "{y}"])
    }

    fn pattern() -> impl Strategy<Value = String> {
        prop::collection::vec(segment(), 0..5).prop_map(|s| format!("/{}", s.join("/")))
    }

    fn method() -> impl Strategy<Value = Method> {
        prop::sample::select(vec![Method::GET, Method::POST, Method::DELETE])
    }

    proptest! {
        /// Random routes over a few segments (literals, parameters side by side with
        /// them, empty segments) and random paths over the same and others: the tree
        /// finds what trying every pattern finds.
        #[test]
        fn the_tree_finds_what_trying_every_pattern_finds(
            routes in prop::collection::vec((method(), pattern()), 0..24),
            paths in prop::collection::vec(
                prop::collection::vec(
                    prop::sample::select(vec!["", "a", "b", "boards", "c", "42"]),
                    0..6,
                ).prop_map(|s| format!("/{}", s.join("/"))),
                1..24,
            ),
        ) {
            let table = Table::new(routes.clone());
            for path in &paths {
                let got = table.find(path).map(|p| (p.path.as_str(), p.methods.clone()));
                prop_assert_eq!(got, model(&routes, path), "{}", path);
            }
        }
    }

    #[test]
    fn the_services_own_routes_are_found_as_trying_every_pattern_finds() {
        let mut routes = crate::api::route_table();
        routes.extend(crate::web::route_patterns());
        let table = Table::new(routes.clone());
        for (_, pattern) in &routes {
            for value in ["stars", "m1", "new", "live"] {
                let path: Vec<&str> = pattern
                    .split('/')
                    .map(|s| if s.starts_with('{') { value } else { s })
                    .collect();
                let path = path.join("/");
                let got = table
                    .find(&path)
                    .map(|p| (p.path.as_str(), p.methods.clone()));
                assert_eq!(got, model(&routes, &path), "{path}");
            }
        }
    }
}
