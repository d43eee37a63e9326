//! The HTML pages over HTTP, one module per kind of page as the routes are, and what
//! they share: a browser without JavaScript.

mod boards;
mod families;
mod leagues;
mod login;
mod members;
mod public;
mod security;

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, LOCATION};

use crate::harness::{ADMIN_PASSWORD, TestApp, client_builder};

/// A browser without JavaScript: a cookie jar, no automatic redirects.
pub(crate) struct Browser {
    base: String,
    client: reqwest::Client,
}

pub(crate) struct Page {
    status: StatusCode,
    headers: HeaderMap,
    body: String,
}

impl Page {
    /// The CSRF token of the page's first form.
    fn csrf(&self) -> String {
        let marker = r#"name="_csrf" value=""#;
        let start = self.body.find(marker).expect("the page has a form") + marker.len();
        self.body[start..].split('"').next().unwrap().to_owned()
    }

    fn location(&self) -> &str {
        self.headers
            .get(LOCATION)
            .map_or("", |v| v.to_str().unwrap())
    }
}

impl Browser {
    fn new(app: &TestApp) -> Self {
        Self {
            base: app.base.clone(),
            client: client_builder()
                .cookie_store(true)
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
        }
    }

    async fn read(resp: reqwest::Response) -> Page {
        Page {
            status: resp.status(),
            headers: resp.headers().clone(),
            body: resp.text().await.unwrap(),
        }
    }

    async fn get(&self, path: &str) -> Page {
        Self::read(
            self.client
                .get(format!("{}{path}", self.base))
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    async fn post(&self, path: &str, form: &[(&str, &str)]) -> Page {
        Self::read(
            self.client
                .post(format!("{}{path}", self.base))
                .form(form)
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    async fn post_htmx(&self, path: &str, form: &[(&str, &str)]) -> Page {
        Self::read(
            self.client
                .post(format!("{}{path}", self.base))
                .header("HX-Request", "true")
                .form(form)
                .send()
                .await
                .unwrap(),
        )
        .await
    }

    /// Signs in as `admin` and answers a CSRF token of the session.
    async fn sign_in(&self) -> String {
        let login = self.get("/admin/login").await;
        let page = self
            .post(
                "/admin/login",
                &[
                    ("_csrf", &login.csrf()),
                    ("username", "admin"),
                    ("password", ADMIN_PASSWORD),
                ],
            )
            .await;
        assert_eq!(page.status, StatusCode::SEE_OTHER, "{}", page.body);
        assert_eq!(page.location(), "/admin/boards");
        self.get("/admin/boards").await.csrf()
    }
}

/// A concrete path for a route pattern.
pub(crate) fn concrete(pattern: &str) -> String {
    pattern
        .replace("{board}", "stars")
        .replace("{member}", "m1")
        .replace("{id}", "1")
}

/// The `<li>` of a member's card on the voting page.
pub(crate) fn card<'a>(body: &'a str, member: &str) -> &'a str {
    let start = body
        .find(&format!(r#"<li id="m-{member}">"#))
        .unwrap_or_else(|| panic!("no card for {member}: {body}"));
    let end = body[start..].find("</li>").unwrap() + start;
    &body[start..end]
}

/// A login form post from `ip` (the app trusts 127.0.0.1 as a proxy): answers the status.
pub(crate) async fn login_from(
    browser: &Browser,
    csrf: &str,
    ip: &str,
    user: &str,
    password: &str,
) -> StatusCode {
    browser
        .client
        .post(format!("{}/admin/login", browser.base))
        .header("X-Forwarded-For", ip)
        .form(&[("_csrf", csrf), ("username", user), ("password", password)])
        .send()
        .await
        .unwrap()
        .status()
}
