//! Identity providers in the dashboard: list, create (an `hmac` provider's secret is
//! shown once, after a redirect), delete (after a confirmation; refused while a board
//! accepts the provider).

use std::collections::HashMap;

use actix_session::Session;
use actix_web::http::Method;
use actix_web::{HttpResponse, web};
use askama::Template;
use serde::Deserialize;

use super::{Chrome, html, html_with, see_other};
use crate::domain::code::Code;
use crate::domain::identity::{
    Algorithm, LEEWAY_DEFAULT_S, MAX_AGE_DEFAULT_S, ProviderKind, ProviderSpec,
};
use crate::engine::error::EngineError;
use crate::engine::identity as engine;
use crate::engine::state::AppState;
use crate::error::PageError;
use crate::i18n::Lang;
use crate::web::Router;
use crate::web::forms::CsrfForm;
use crate::web::session::{self, AdminUser};

pub fn routes(r: &mut impl Router) {
    r.add(Method::GET, "/identity-providers", list_providers);
    r.add(Method::POST, "/identity-providers", create_provider);
    r.add(
        Method::POST,
        "/identity-providers/{name}/delete",
        delete_provider,
    );
}

struct ProviderRow {
    name: String,
    kind: &'static str,
    issuer: String,
    audience: String,
    /// The JWKS URL and its algorithms, or the secret's algorithm.
    keys: String,
    voter_claim: String,
    max_age_s: i64,
    leeway_s: i64,
    login_url: String,
}

#[derive(Template)]
#[template(path = "admin/providers/index.html")]
struct ProvidersPage {
    l: Lang,
    user: String,
    csrf: String,
    flash: Option<String>,
    providers: Vec<ProviderRow>,
    /// (algorithm, ticked)
    algorithms: Vec<(&'static str, bool)>,
    secret: Option<String>,
    error: Option<String>,
    /// What was typed, shown again when the form is refused.
    form: ProviderForm,
}

/// The form's fields as text.
#[derive(Deserialize)]
#[serde(default)]
struct ProviderForm {
    name: String,
    kind: String,
    issuer: String,
    audience: String,
    jwks_url: String,
    algorithms: Vec<String>,
    voter_claim: String,
    channel_claim: String,
    terminal_claim: String,
    max_age_s: String,
    leeway_s: String,
    login_url: String,
}

impl Default for ProviderForm {
    fn default() -> Self {
        Self {
            name: String::new(),
            kind: "jwks".to_owned(),
            issuer: String::new(),
            audience: String::new(),
            jwks_url: String::new(),
            algorithms: vec!["RS256".to_owned()],
            voter_claim: "sub".to_owned(),
            channel_claim: String::new(),
            terminal_claim: String::new(),
            max_age_s: MAX_AGE_DEFAULT_S.to_string(),
            leeway_s: LEEWAY_DEFAULT_S.to_string(),
            login_url: String::new(),
        }
    }
}

impl ProviderForm {
    fn spec(&self) -> Result<ProviderSpec, EngineError> {
        let invalid = |m: String| EngineError::invalid(Code::InvalidProvider, m);
        let whole = |raw: &str, name: &str| {
            raw.trim()
                .parse::<i64>()
                .map_err(|_| invalid(format!("{name} must be a whole number of seconds")))
        };
        let optional = |raw: &str| Some(raw.trim().to_owned()).filter(|s| !s.is_empty());
        let kind = match self.kind.as_str() {
            "hmac" => ProviderKind::Hmac,
            _ => ProviderKind::Jwks {
                url: self.jwks_url.trim().to_owned(),
                algorithms: self
                    .algorithms
                    .iter()
                    .filter_map(|a| Algorithm::from_header(a))
                    .collect(),
            },
        };
        Ok(ProviderSpec {
            name: self.name.trim().to_owned(),
            kind,
            issuer: self.issuer.trim().to_owned(),
            audience: self.audience.trim().to_owned(),
            voter_claim: self.voter_claim.trim().to_owned(),
            channel_claim: optional(&self.channel_claim),
            terminal_claim: optional(&self.terminal_claim),
            max_age_s: whole(&self.max_age_s, "max_age_s")?,
            leeway_s: whole(&self.leeway_s, "leeway_s")?,
            login_url: optional(&self.login_url),
        })
    }
}

fn page(
    state: &AppState,
    chrome: Chrome,
    secret: Option<String>,
    error: Option<String>,
    form: ProviderForm,
) -> ProvidersPage {
    let providers = engine::list(state)
        .iter()
        .map(|p| {
            let s = &p.spec;
            let algorithms = s
                .kind
                .algorithms()
                .iter()
                .map(|a| a.as_str())
                .collect::<Vec<_>>()
                .join(", ");
            ProviderRow {
                name: s.name.clone(),
                kind: s.kind.as_str(),
                issuer: s.issuer.clone(),
                audience: s.audience.clone(),
                keys: match &s.kind {
                    ProviderKind::Jwks { url, .. } => format!("{url} ({algorithms})"),
                    ProviderKind::Hmac => algorithms,
                },
                voter_claim: s.voter_claim.clone(),
                max_age_s: s.max_age_s,
                leeway_s: s.leeway_s,
                login_url: s.login_url.clone().unwrap_or_default(),
            }
        })
        .collect();
    ProvidersPage {
        l: chrome.l,
        user: chrome.user,
        csrf: chrome.csrf,
        flash: chrome.flash,
        providers,
        algorithms: Algorithm::JWKS
            .iter()
            .map(|a| (a.as_str(), form.algorithms.iter().any(|f| f == a.as_str())))
            .collect(),
        secret,
        error,
        form,
    }
}

async fn list_providers(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
) -> Result<HttpResponse, PageError> {
    let secret = session::take_secret(&session);
    html(&page(
        &state,
        Chrome::of(&session, &user),
        secret,
        None,
        ProviderForm::default(),
    ))
}

async fn create_provider(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    form: CsrfForm<ProviderForm>,
) -> Result<HttpResponse, PageError> {
    let form = form.0;
    let result = async { engine::create(&state, &user.actor(), form.spec()?).await }.await;
    match result {
        Ok((provider, secret)) => {
            match secret {
                Some(secret) => session::leave_secret(&session, &secret),
                None => session::flash(
                    &session,
                    &user.lang.tr(
                        "flash-provider-created",
                        &[("name", provider.spec.name.as_str().into())],
                    ),
                ),
            }
            Ok(see_other("/admin/identity-providers"))
        }
        Err(err @ (EngineError::Invalid { .. } | EngineError::Conflict { .. })) => {
            let chrome = Chrome::of(&session, &user);
            let page = page(&state, chrome, None, Some(err.to_string()), form);
            html_with(&page, actix_web::http::StatusCode::UNPROCESSABLE_ENTITY)
        }
        Err(other) => Err(other.into()),
    }
}

async fn delete_provider(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
    _form: CsrfForm<HashMap<String, String>>,
) -> Result<HttpResponse, PageError> {
    match engine::delete(&state, &user.actor(), &path).await {
        Ok(()) => session::flash(
            &session,
            &user
                .lang
                .tr("flash-provider-deleted", &[("name", path.as_str().into())]),
        ),
        Err(err @ EngineError::Conflict { .. }) => session::flash(&session, &err.to_string()),
        Err(other) => return Err(other.into()),
    }
    Ok(see_other("/admin/identity-providers"))
}
