//! Members in the dashboard: the table with ranks per period, add/edit, enable/disable,
//! and CSV import with a preview before anything is written.

use std::collections::HashMap;

use actix_session::Session;
use actix_web::http::Method;
use actix_web::{HttpResponse, web};
use askama::Template;
use serde::Deserialize;

use super::boards::board;
use super::{Chrome, html, html_with, see_other};
use crate::api::admin::members::{MemberFields, merged, read_csv};
use crate::domain::ids::MemberId;
use crate::engine::admin as engine;
use crate::engine::config::BoardConfig;
use crate::engine::leaderboard::{self, Selection};
use crate::error::{ApiError, PageError};
use crate::state::AppState;
use crate::web::Router;
use crate::web::forms::CsrfForm;
use crate::web::session::{self, AdminUser};

pub fn routes(r: &mut impl Router) {
    r.add(Method::GET, "/boards/{board}/members", list_members);
    r.add(Method::POST, "/boards/{board}/members", save_member);
    r.add(
        Method::POST,
        "/boards/{board}/members/import",
        import_members,
    );
    r.add(
        Method::POST,
        "/boards/{board}/members/{member}/toggle",
        toggle_member,
    );
}

struct MemberRow {
    id: String,
    name: String,
    multiplier: Option<f64>,
    enabled: bool,
    cells: Vec<String>,
}

#[derive(Template)]
#[template(path = "admin/members/index.html")]
struct MembersPage {
    user: String,
    csrf: String,
    flash: Option<String>,
    slug: String,
    periods: Vec<&'static str>,
    members: Vec<MemberRow>,
    error: Option<String>,
    csv: String,
}

async fn members_page(
    state: &AppState,
    chrome: Chrome,
    config: std::sync::Arc<BoardConfig>,
    error: Option<String>,
    csv: String,
) -> Result<MembersPage, PageError> {
    let settings = &config.board.settings;
    let selections: Vec<Selection> = settings
        .periods
        .iter()
        .map(|p| leaderboard::select(config.clone(), Some(p.as_str()), None, None))
        .collect::<Result<_, ApiError>>()?;
    let pages = leaderboard::tops(&state.redis, &selections, 0, leaderboard::MAX_LIMIT).await?;
    let standings: Vec<HashMap<&str, (i64, String)>> = pages
        .iter()
        .map(|p| {
            p.entries
                .iter()
                .map(|e| (e.member.as_str(), (e.rank, e.score.to_string())))
                .collect()
        })
        .collect();
    let mut members: Vec<&crate::domain::board::Member> = config.members.values().collect();
    members.sort_by(|a, b| a.id.cmp(&b.id));
    let members = members
        .into_iter()
        .map(|m| MemberRow {
            id: m.id.to_string(),
            name: m.name.clone(),
            multiplier: m.multiplier.map(|x| x.as_f64()),
            enabled: m.enabled,
            cells: standings
                .iter()
                .map(|s| match s.get(m.id.as_str()) {
                    Some((rank, score)) => format!("#{rank} · {score}"),
                    None => "—".to_owned(),
                })
                .collect(),
        })
        .collect();
    Ok(MembersPage {
        user: chrome.user,
        csrf: chrome.csrf,
        flash: chrome.flash,
        slug: config.board.slug.to_string(),
        periods: settings.periods.iter().map(|p| p.as_str()).collect(),
        members,
        error,
        csv,
    })
}

async fn list_members(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let config = board(&state, &path)?;
    html(
        &members_page(
            &state,
            Chrome::of(&session, &user),
            config,
            None,
            String::new(),
        )
        .await?,
    )
}

#[derive(Deserialize)]
struct MemberForm {
    id: String,
    #[serde(default)]
    name: String,
    #[serde(default)]
    image_url: String,
    #[serde(default)]
    initial_votes: String,
    #[serde(default)]
    multiplier: String,
}

async fn save_member(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
    form: CsrfForm<MemberForm>,
) -> Result<HttpResponse, PageError> {
    let config = board(&state, &path)?;
    let form = form.0;
    let outcome = async {
        let id = MemberId::parse(form.id.trim())?;
        let initial_votes = match form.initial_votes.trim() {
            "" => None,
            n => Some(n.parse::<i64>().map_err(|_| {
                ApiError::invalid(
                    "invalid_initial_votes",
                    "initial votes must be a whole number",
                )
            })?),
        };
        let multiplier = match form.multiplier.trim() {
            "" => None,
            n => Some(n.parse::<f64>().map_err(|_| {
                ApiError::invalid("invalid_number", "the multiplier must be a number")
            })?),
        };
        let fields = MemberFields {
            id: Some(id.to_string()),
            name: (!form.name.trim().is_empty()).then(|| form.name.trim().to_owned()),
            image_url: Some(
                (!form.image_url.trim().is_empty()).then(|| form.image_url.trim().to_owned()),
            ),
            initial_votes,
            multiplier: Some(multiplier),
            enabled: None,
            profile: None,
        };
        let member = merged(&config, id, &fields)?;
        engine::upsert_members(&state, &user.actor(), &config.board.slug, vec![member]).await
    }
    .await;
    match outcome {
        Ok(_) => {
            session::flash(&session, &format!("Member {} saved.", form.id.trim()));
            Ok(see_other(&format!(
                "/admin/boards/{}/members",
                config.board.slug
            )))
        }
        Err(err @ ApiError::Invalid { .. }) => {
            let page = members_page(
                &state,
                Chrome::of(&session, &user),
                config,
                Some(err.to_string()),
                String::new(),
            )
            .await?;
            html_with(&page, actix_web::http::StatusCode::UNPROCESSABLE_ENTITY)
        }
        Err(other) => Err(other.into()),
    }
}

async fn toggle_member(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<(String, String)>,
    _form: CsrfForm<HashMap<String, String>>,
) -> Result<HttpResponse, PageError> {
    let (raw_board, raw_member) = path.into_inner();
    let config = board(&state, &raw_board)?;
    let id = MemberId::parse(&raw_member).map_err(|e| PageError::NotFound(e.message))?;
    let mut member = config
        .members
        .get(&id)
        .cloned()
        .ok_or_else(|| PageError::NotFound(format!("no member {id}")))?;
    member.enabled = !member.enabled;
    let now = if member.enabled {
        "enabled"
    } else {
        "disabled"
    };
    engine::upsert_members(&state, &user.actor(), &config.board.slug, vec![member]).await?;
    session::flash(&session, &format!("Member {id} {now}."));
    Ok(see_other(&format!(
        "/admin/boards/{}/members",
        config.board.slug
    )))
}

#[derive(Template)]
#[template(path = "admin/members/preview.html")]
struct PreviewPage {
    user: String,
    csrf: String,
    flash: Option<String>,
    slug: String,
    csv: String,
    /// (id, name, initial votes, image URL)
    members: Vec<(String, String, i64, String)>,
    /// (line, problem)
    errors: Vec<(u64, String)>,
}

#[derive(Deserialize)]
struct ImportForm {
    csv: String,
    confirm: Option<String>,
}

async fn import_members(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
    form: CsrfForm<ImportForm>,
) -> Result<HttpResponse, PageError> {
    let config = board(&state, &path)?;
    let form = form.0;
    let chrome = Chrome::of(&session, &user);
    let mut page = PreviewPage {
        user: chrome.user,
        csrf: chrome.csrf,
        flash: chrome.flash,
        slug: config.board.slug.to_string(),
        csv: form.csv.clone(),
        members: Vec::new(),
        errors: Vec::new(),
    };
    match read_csv(&config, &form.csv) {
        Ok(members) if form.confirm.is_some() => {
            let n = members.len();
            engine::upsert_members(&state, &user.actor(), &config.board.slug, members).await?;
            session::flash(&session, &format!("Imported {n} member(s)."));
            return Ok(see_other(&format!(
                "/admin/boards/{}/members",
                config.board.slug
            )));
        }
        Ok(members) => {
            page.members = members
                .into_iter()
                .map(|m| {
                    (
                        m.id.to_string(),
                        m.name,
                        m.initial_votes,
                        m.image_url.unwrap_or_default(),
                    )
                })
                .collect();
        }
        Err(err) => {
            let body = err.body();
            page.errors = match body["error"]["errors"].as_array() {
                Some(lines) => lines
                    .iter()
                    .map(|e| {
                        (
                            e["line"].as_u64().unwrap_or_default(),
                            e["message"].as_str().unwrap_or_default().to_owned(),
                        )
                    })
                    .collect(),
                None => vec![(0, err.to_string())],
            };
        }
    }
    let status = if page.errors.is_empty() {
        actix_web::http::StatusCode::OK
    } else {
        actix_web::http::StatusCode::UNPROCESSABLE_ENTITY
    };
    html_with(&page, status)
}
