//! Rate-limit rules in the dashboard, each shown in plain words.

use std::collections::BTreeMap;

use actix_session::Session;
use actix_web::http::Method;
use actix_web::{HttpResponse, web};
use askama::Template;
use serde::Deserialize;

use super::boards::board;
use super::{Chrome, html, html_with, see_other};
use crate::domain::code::Code;
use crate::domain::limit::{
    Change, Missing, Override, RateRule, RuleSpec, Window, parse_dimensions, parse_match,
};
use crate::engine::admin as engine;
use crate::engine::error::EngineError;
use crate::engine::limits;
use crate::engine::state::AppState;
use crate::error::PageError;
use crate::i18n::Lang;
use crate::web::Router;
use crate::web::forms::CsrfForm;
use crate::web::session::{self, AdminUser};

pub fn routes(r: &mut impl Router) {
    r.add(Method::GET, "/boards/{board}/rules", list_rules);
    r.add(Method::POST, "/boards/{board}/rules", create_rule);
    r.add(Method::POST, "/boards/{board}/rules/{id}", update_rule);
    r.add(
        Method::POST,
        "/boards/{board}/rules/{id}/delete",
        delete_rule,
    );
}

struct RuleRow {
    id: i64,
    /// The edit form's values: the rule's, or what was typed when the edit was refused.
    form: RuleForm,
    /// Whether the edit form is open (it is, after a refused edit).
    open: bool,
    words: String,
}

impl RuleRow {
    fn of(l: Lang, rule: &RateRule) -> Self {
        let spec = &rule.spec;
        Self {
            id: rule.id,
            form: RuleForm {
                name: spec.name.clone(),
                dimensions: spec
                    .dimensions
                    .iter()
                    .map(|d| d.as_str())
                    .collect::<Vec<_>>()
                    .join(", "),
                window: spec.window.code(),
                limit: spec.limit.to_string(),
                overrides: spec
                    .overrides
                    .iter()
                    .map(|o| {
                        let when: Vec<String> =
                            o.when.iter().map(|(d, v)| format!("{d}={v}")).collect();
                        format!("{}: {}", when.join(", "), o.change.text())
                    })
                    .collect::<Vec<_>>()
                    .join("\n"),
                missing: spec.missing.as_str().to_owned(),
            },
            open: false,
            words: limits::describe(l, spec),
        }
    }
}

#[derive(Template)]
#[template(path = "admin/rules/index.html")]
struct RulesPage {
    l: Lang,
    user: String,
    csrf: String,
    flash: Option<String>,
    slug: String,
    rules: Vec<RuleRow>,
    /// The new-rule form's values.
    new: RuleForm,
    error: Option<String>,
}

/// A refused form: which rule it edited (`None` for a new one) and what was typed.
type Refused = (Option<i64>, RuleForm, String);

fn page(
    chrome: Chrome,
    config: &crate::engine::config::BoardConfig,
    refused: Option<Refused>,
) -> RulesPage {
    let mut rules: Vec<RuleRow> = config
        .all_rules()
        .map(|r| RuleRow::of(chrome.l, r))
        .collect();
    let mut new = RuleForm::default();
    let mut error = None;
    if let Some((id, typed, why)) = refused {
        error = Some(why);
        match rules.iter_mut().find(|r| Some(r.id) == id) {
            Some(row) => {
                row.form = typed;
                row.open = true;
            }
            None => new = typed,
        }
    }
    RulesPage {
        l: chrome.l,
        user: chrome.user,
        csrf: chrome.csrf,
        flash: chrome.flash,
        slug: config.board.slug.to_string(),
        rules,
        new,
        error,
    }
}

async fn list_rules(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let config = board(&state, &path)?;
    html(&page(Chrome::of(&session, &user), &config, None))
}

/// A rule form's fields as text, so a refused form shows what was typed.
#[derive(Deserialize)]
struct RuleForm {
    name: String,
    dimensions: String,
    window: String,
    limit: String,
    #[serde(default)]
    overrides: String,
    missing: String,
}

impl Default for RuleForm {
    /// The new-rule form's starting values: five votes a day for each voter.
    fn default() -> Self {
        Self {
            name: String::new(),
            dimensions: "voter".to_owned(),
            window: "day".to_owned(),
            limit: "5".to_owned(),
            overrides: String::new(),
            missing: "refuse".to_owned(),
        }
    }
}

impl RuleForm {
    /// The form as a rule: overrides are lines of `dim=value[, dim=value]: change`, the
    /// change a limit (`10`), an addition (`+5`) or `blocked`.
    fn spec(&self) -> Result<RuleSpec, EngineError> {
        let dims: Vec<&str> = self
            .dimensions
            .split(',')
            .map(str::trim)
            .filter(|d| !d.is_empty())
            .collect();
        let overrides = self
            .overrides
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|line| {
                let bad = || {
                    EngineError::invalid(
                        Code::InvalidOverride,
                        format!(
                            "cannot read override {line:?}; write channel=partner-a: 10, \
                             channel=partner-b: +5 or channel=spam: blocked"
                        ),
                    )
                };
                let (when, limit) = line.rsplit_once(':').ok_or_else(bad)?;
                let when: BTreeMap<String, String> = when
                    .split(',')
                    .map(|pair| {
                        let (d, v) = pair.split_once('=').ok_or_else(bad)?;
                        Ok((d.trim().to_owned(), v.trim().to_owned()))
                    })
                    .collect::<Result<_, EngineError>>()?;
                Ok(Override {
                    when: parse_match(&when)?,
                    change: Change::parse_text(limit).ok_or_else(bad)?,
                })
            })
            .collect::<Result<Vec<_>, EngineError>>()?;
        let spec = RuleSpec {
            name: self.name.trim().to_owned(),
            dimensions: parse_dimensions(&dims)?,
            window: Window::parse(self.window.trim())?,
            limit: self.limit.trim().parse().map_err(|_| {
                EngineError::invalid(Code::InvalidLimit, "the limit must be a whole number")
            })?,
            overrides,
            missing: Missing::parse(&self.missing)?,
        };
        spec.check()?;
        Ok(spec)
    }
}

/// Answers a rule change: back to the list, or the list with the reason it was refused
/// and the form as it was typed.
fn answer(
    result: Result<String, EngineError>,
    session: &Session,
    user: &AdminUser,
    config: &crate::engine::config::BoardConfig,
    typed: (Option<i64>, RuleForm),
) -> Result<HttpResponse, PageError> {
    match result {
        Ok(message) => {
            session::flash(session, &message);
            Ok(see_other(&format!(
                "/admin/boards/{}/rules",
                config.board.slug
            )))
        }
        Err(err @ (EngineError::Invalid { .. } | EngineError::Conflict { .. })) => html_with(
            &page(
                Chrome::of(session, user),
                config,
                Some((typed.0, typed.1, err.to_string())),
            ),
            actix_web::http::StatusCode::UNPROCESSABLE_ENTITY,
        ),
        Err(other) => Err(other.into()),
    }
}

async fn create_rule(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
    form: CsrfForm<RuleForm>,
) -> Result<HttpResponse, PageError> {
    let config = board(&state, &path)?;
    let form = form.0;
    let result = async {
        let rule =
            engine::create_rule(&state, &user.actor(), &config.board.slug, form.spec()?).await?;
        Ok(user.lang.tr(
            "flash-rule-added",
            &[
                ("name", rule.spec.name.as_str().into()),
                ("words", limits::describe(user.lang, &rule.spec).into()),
            ],
        ))
    }
    .await;
    answer(result, &session, &user, &config, (None, form))
}

fn rule_id(raw: &str) -> Result<i64, PageError> {
    raw.parse()
        .map_err(|_| PageError::NotFound(format!("no rule {raw:?}")))
}

async fn update_rule(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<(String, String)>,
    form: CsrfForm<RuleForm>,
) -> Result<HttpResponse, PageError> {
    let (raw_board, raw_id) = path.into_inner();
    let config = board(&state, &raw_board)?;
    let id = rule_id(&raw_id)?;
    let form = form.0;
    let result = async {
        let rule = RateRule {
            id,
            spec: form.spec()?,
        };
        let rule = engine::update_rule(&state, &user.actor(), &config.board.slug, rule).await?;
        Ok(user.lang.tr(
            "flash-rule-saved",
            &[
                ("name", rule.spec.name.as_str().into()),
                ("words", limits::describe(user.lang, &rule.spec).into()),
            ],
        ))
    }
    .await;
    answer(result, &session, &user, &config, (Some(id), form))
}

async fn delete_rule(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<(String, String)>,
    _form: CsrfForm<BTreeMap<String, String>>,
) -> Result<HttpResponse, PageError> {
    let (raw_board, raw_id) = path.into_inner();
    let config = board(&state, &raw_board)?;
    let id = rule_id(&raw_id)?;
    engine::delete_rule(&state, &user.actor(), &config.board.slug, id).await?;
    session::flash(
        &session,
        &user.lang.tr("flash-rule-deleted", &[("id", id.into())]),
    );
    Ok(see_other(&format!(
        "/admin/boards/{}/rules",
        config.board.slug
    )))
}
