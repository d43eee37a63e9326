//! A board's create and edit form (a refused form keeps what was typed), deletion after
//! a confirmation, and archiving now.

use std::collections::HashMap;

use actix_session::Session;
use actix_web::{HttpResponse, web};
use askama::Template;
use serde::Deserialize;

use super::{board, days};
use crate::api::admin::boards::BoardRequest;
use crate::api::boards::{InstancesRequest, RetentionSettings, StorageSettings};
use crate::domain::board::{BoardSettings, bounds};
use crate::domain::ids::BoardSlug;
use crate::domain::period::Period;
use crate::domain::scoring::Storage;
use crate::engine::admin as engine;
use crate::engine::state::AppState;
use crate::error::PageError;
use crate::i18n::Lang;
use crate::web::admin::{Chrome, html, html_with, see_other};
use crate::web::forms::CsrfForm;
use crate::web::session::{self, AdminUser};

/// The form's fields as text, so a refused form shows what was typed.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct BoardForm {
    slug: String,
    title: String,
    description: String,
    membership: String,
    /// The calendar periods and `all` checked.
    periods: Vec<String>,
    /// Rolling windows, by length: `24h, 72h, 30d` (`rolling:` in front is taken too).
    rolling: String,
    /// Trending half-lives in hours: `6h, 24h` (`trending:` in front is taken too).
    trending: String,
    timezone: String,
    multiplier: String,
    carry_over: String,
    starts_at: String,
    ends_at: String,
    max_count: String,
    /// Seconds after the end a write stamped before it is still taken.
    #[serde(default)]
    late_grace_s: String,
    #[serde(default)]
    display_decimals: String,
    /// One origin per line.
    #[serde(default)]
    embed_origins: String,
    /// `anyone` or `signed_in`.
    voters: String,
    /// Provider names, separated by commas or spaces.
    identity_providers: String,
    public_page: Option<String>,
    /// Checked: every accepted write is recorded in the ledger (ignored when creating a
    /// family, whose ledger starts off).
    ledger: Option<String>,
    /// Checked: a vote a watch holds answers "held for review".
    tell_held: Option<String>,
    /// Create only, like the storage fields below.
    scoring: String,
    decimals: String,
    storage_kind: String,
    retain: String,
    trim_at: String,
    shards: String,
    /// `family` for one board per live room, match or region (create only); anything
    /// else one board.
    instances: String,
    /// How long an instance lives after its last write, in `instance_ttl_unit`s.
    instance_ttl: String,
    /// `minutes`, `hours` or `days`.
    instance_ttl_unit: String,
    /// A family's most live rooms (create and edit).
    instance_max_live: String,
    /// Checked: each room has a public voting page.
    instance_pages: Option<String>,
    /// Days an expired room's ledger stays in SQL.
    instance_ledger_days: String,
    /// Days a closed bucket stays in Redis once archived; empty keeps it forever.
    retention_hour: String,
    retention_day: String,
    retention_week: String,
    retention_month: String,
    archive_top: String,
}

/// A whole number typed in the form field `what`, or `None` when left empty.
fn whole(raw: &str, what: &str) -> Result<Option<i64>, PageError> {
    match raw.trim() {
        "" => Ok(None),
        raw => raw
            .parse()
            .map(Some)
            .map_err(|_| PageError::Invalid(format!("{what} must be a whole number"))),
    }
}

impl BoardForm {
    /// The periods checked, the rolling windows and the trending half-lives typed, as
    /// the API names them.
    fn periods(&self) -> Vec<String> {
        let typed = |field: &str, prefix: &'static str| {
            field
                .split(|c: char| c == ',' || c.is_whitespace())
                .filter(|w| !w.is_empty())
                .map(move |w| {
                    if w.starts_with(prefix) {
                        w.to_owned()
                    } else {
                        format!("{prefix}{w}")
                    }
                })
                .collect::<Vec<_>>()
        };
        let mut periods = self.periods.clone();
        periods.extend(typed(&self.rolling, "rolling:"));
        periods.extend(typed(&self.trending, "trending:"));
        periods
    }

    fn of(s: &BoardSettings) -> Self {
        Self {
            slug: String::new(),
            title: s.title.clone(),
            description: s.description.clone(),
            membership: s.membership.as_str().to_owned(),
            periods: s
                .periods
                .iter()
                .filter(|p| p.is_bucketed())
                .map(|p| p.as_str().to_owned())
                .collect(),
            rolling: s
                .periods
                .iter()
                .filter_map(|p| p.rolling())
                .map(|w| w.as_str().trim_start_matches("rolling:"))
                .collect::<Vec<_>>()
                .join(", "),
            trending: s
                .periods
                .iter()
                .filter_map(|p| p.trending())
                .map(|h| h.as_str().trim_start_matches("trending:"))
                .collect::<Vec<_>>()
                .join(", "),
            timezone: s.timezone.name().to_owned(),
            multiplier: s.multiplier.as_f64().to_string(),
            carry_over: s.carry_over.as_f64().to_string(),
            starts_at: s.starts_at.map(|t| t.to_rfc3339()).unwrap_or_default(),
            ends_at: s.ends_at.map(|t| t.to_rfc3339()).unwrap_or_default(),
            max_count: s.max_count.to_string(),
            late_grace_s: s.late_grace_s.to_string(),
            display_decimals: s.display_decimals.to_string(),
            retention_hour: days(s.retention.hour),
            retention_day: days(s.retention.day),
            retention_week: days(s.retention.week),
            retention_month: days(s.retention.month),
            archive_top: s.archive_top.to_string(),
            embed_origins: s.embed_origins.join("\n"),
            voters: s.voters.as_str().to_owned(),
            identity_providers: s.providers.join(", "),
            public_page: s.public_page.then(|| "on".to_owned()),
            ledger: s.ledger.then(|| "on".to_owned()),
            tell_held: s.tell_held.then(|| "on".to_owned()),
            scoring: s.scoring.as_str().to_owned(),
            decimals: s.scoring.decimals().to_string(),
            storage_kind: s.storage.kind().to_owned(),
            retain: match s.storage {
                Storage::TopN { retain, .. } => retain.to_string(),
                _ => String::new(),
            },
            trim_at: match s.storage {
                Storage::TopN { trim_at, .. } => trim_at.to_string(),
                _ => String::new(),
            },
            shards: match s.storage {
                Storage::Sharded { shards, .. } => shards.to_string(),
                _ => String::new(),
            },
            instances: if s.instances.is_some() {
                "family"
            } else {
                "one"
            }
            .to_owned(),
            instance_ttl: s
                .instances
                .map_or_else(|| "7".to_owned(), |i| i.ttl_s.to_string()),
            instance_ttl_unit: if s.instances.is_some() {
                "seconds"
            } else {
                "days"
            }
            .to_owned(),
            instance_max_live: s
                .instances
                .map_or(bounds::MAX_LIVE_DEFAULT, |i| i.max_live)
                .to_string(),
            instance_pages: s.instances.filter(|i| i.pages).map(|_| "on".to_owned()),
            instance_ledger_days: s
                .instances
                .map_or(bounds::INSTANCE_LEDGER_DAYS_DEFAULT, |i| i.ledger_days)
                .to_string(),
        }
    }

    fn request(&self) -> Result<BoardRequest, PageError> {
        let number = |raw: &str, what: &str| -> Result<f64, PageError> {
            raw.trim()
                .parse::<f64>()
                .map_err(|_| PageError::Invalid(format!("{what} must be a number")))
        };
        let time = |raw: &str| (!raw.trim().is_empty()).then(|| raw.trim().to_owned());
        let creating = !self.scoring.trim().is_empty();
        Ok(BoardRequest {
            slug: None,
            title: Some(self.title.clone()),
            description: Some(self.description.clone()),
            membership: Some(self.membership.clone()),
            periods: Some(self.periods()),
            timezone: Some(self.timezone.clone()),
            multiplier: Some(number(&self.multiplier, "the multiplier")?),
            carry_over: Some(number(&self.carry_over, "the carry-over ratio")?),
            starts_at: Some(time(&self.starts_at)),
            ends_at: Some(time(&self.ends_at)),
            public_page: Some(self.public_page.is_some()),
            max_count: Some(self.max_count.trim().parse().map_err(|_| {
                PageError::Invalid("the largest count must be a whole number".into())
            })?),
            embed_origins: Some(
                self.embed_origins
                    .lines()
                    .map(str::trim)
                    .filter(|o| !o.is_empty())
                    .map(str::to_owned)
                    .collect(),
            ),
            voters: match self.voters.trim() {
                "" => None,
                voters => Some(voters.to_owned()),
            },
            identity_providers: Some(
                self.identity_providers
                    .split(|c: char| c == ',' || c.is_whitespace())
                    .filter(|p| !p.is_empty())
                    .map(str::to_owned)
                    .collect(),
            ),
            display_decimals: match self.display_decimals.trim() {
                "" => None,
                raw => Some(raw.parse().map_err(|_| {
                    PageError::Invalid("decimals shown must be a whole number from 0 to 6".into())
                })?),
            },
            retention: Some(RetentionSettings {
                hour: whole(&self.retention_hour, "days in Redis of hours")?,
                day: whole(&self.retention_day, "days in Redis of days")?,
                week: whole(&self.retention_week, "days in Redis of weeks")?,
                month: whole(&self.retention_month, "days in Redis of months")?,
            }),
            archive_top: whole(&self.archive_top, "entries archived")?,
            late_grace_s: whole(&self.late_grace_s, "the late grace")?,
            scoring: creating.then(|| self.scoring.trim().to_owned()),
            decimals: whole(&self.decimals, "decimals")?,
            storage: match self.storage_kind.trim() {
                "" => None,
                kind => Some(StorageSettings {
                    kind: kind.to_owned(),
                    retain: whole(&self.retain, "retain")?,
                    trim_at: whole(&self.trim_at, "trim at")?,
                    shards: whole(&self.shards, "shards")?,
                }),
            },
            instances: match (creating, self.instances.as_str()) {
                (true, "family") => Some(Some(InstancesRequest {
                    ttl_s: Some(self.instance_ttl_s()?),
                    ..self.budget()?
                })),
                (true, _) => Some(None),
                (false, "family") => Some(Some(self.budget()?)),
                (false, _) => None,
            },
            // A family's ledger starts off, as the API's does; editing turns it on.
            ledger: match (creating, self.instances.as_str()) {
                (true, "family") => None,
                _ => Some(self.ledger.is_some()),
            },
            tell_held: Some(self.tell_held.is_some()),
        })
    }

    /// A family's room budget as typed (its TTL left as it is).
    fn budget(&self) -> Result<InstancesRequest, PageError> {
        Ok(InstancesRequest {
            ttl_s: None,
            max_live: whole(&self.instance_max_live, "the most live rooms")?,
            pages: Some(self.instance_pages.is_some()),
            ledger_days: whole(
                &self.instance_ledger_days,
                "the days a room's ledger is kept",
            )?,
        })
    }

    /// The instance lifetime typed, in seconds.
    fn instance_ttl_s(&self) -> Result<i64, PageError> {
        let unit = match self.instance_ttl_unit.as_str() {
            "seconds" => 1,
            "minutes" => 60,
            "hours" => 3_600,
            _ => 86_400,
        };
        self.instance_ttl
            .trim()
            .parse::<i64>()
            .ok()
            .and_then(|n| n.checked_mul(unit))
            .ok_or_else(|| {
                PageError::Invalid("how long a quiet instance lives must be a whole number".into())
            })
    }
}

#[derive(Template)]
#[template(path = "admin/boards/form.html")]
struct BoardFormPage {
    l: Lang,
    user: String,
    csrf: String,
    flash: Option<String>,
    slug: Option<String>,
    form: BoardForm,
    error: Option<String>,
    /// (period, checked)
    all_periods: Vec<(&'static str, bool)>,
    /// (timezone, selected)
    timezones: Vec<(&'static str, bool)>,
    /// A family's instance lifetime, in plain words, where it can no longer change.
    family_note: Option<String>,
}

impl BoardFormPage {
    fn new(chrome: Chrome, slug: Option<String>, form: BoardForm, error: Option<String>) -> Self {
        let all_periods = Period::CALENDAR
            .iter()
            .map(|p| (p.as_str(), form.periods.iter().any(|f| f == p.as_str())))
            .collect();
        let timezones = chrono_tz::TZ_VARIANTS
            .iter()
            .map(|tz| (tz.name(), tz.name() == form.timezone))
            .collect();
        let family_note = match (&slug, form.instances.as_str()) {
            (Some(_), "family") => form.instance_ttl_s().ok().map(|ttl| {
                chrome.l.tr(
                    "board-family-fixed",
                    &[("lifetime", chrome.l.lifetime(ttl).into())],
                )
            }),
            _ => None,
        };
        Self {
            l: chrome.l,
            user: chrome.user,
            csrf: chrome.csrf,
            flash: chrome.flash,
            slug,
            form,
            error,
            all_periods,
            timezones,
            family_note,
        }
    }

    /// The form again with the reason it was refused (422).
    fn refused(self) -> Result<HttpResponse, PageError> {
        html_with(&self, actix_web::http::StatusCode::UNPROCESSABLE_ENTITY)
    }
}

pub(super) async fn new_board(
    session: Session,
    user: AdminUser,
) -> Result<HttpResponse, PageError> {
    let form = BoardForm::of(&BoardSettings::new(String::new()));
    html(&BoardFormPage::new(
        Chrome::of(&session, &user),
        None,
        form,
        None,
    ))
}

pub(super) async fn create_board(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    form: CsrfForm<BoardForm>,
) -> Result<HttpResponse, PageError> {
    let form = form.0;
    let outcome = async {
        let slug = BoardSlug::parse(form.slug.trim()).map_err(|e| PageError::Invalid(e.message))?;
        let mut settings = BoardSettings::new(form.title.clone());
        form.request()?
            .apply(&mut settings)
            .map_err(PageError::from)?;
        engine::create_board(&state, &user.actor(), slug.clone(), settings)
            .await
            .map_err(PageError::from)?;
        Ok::<_, PageError>(slug)
    }
    .await;
    match outcome {
        Ok(slug) => {
            session::flash(
                &session,
                &user
                    .lang
                    .tr("flash-board-created", &[("slug", slug.to_string().into())]),
            );
            Ok(see_other(&format!("/admin/boards/{slug}")))
        }
        Err(PageError::Invalid(message)) => {
            BoardFormPage::new(Chrome::of(&session, &user), None, form, Some(message)).refused()
        }
        Err(other) => Err(other),
    }
}

pub(super) async fn edit_board(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let config = board(&state, &path)?;
    let form = BoardForm::of(&config.board.settings);
    html(&BoardFormPage::new(
        Chrome::of(&session, &user),
        Some(config.board.slug.to_string()),
        form,
        None,
    ))
}

pub(super) async fn update_board(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
    form: CsrfForm<BoardForm>,
) -> Result<HttpResponse, PageError> {
    let config = board(&state, &path)?;
    let slug = config.board.slug.clone();
    let form = form.0;
    let outcome = async {
        let mut settings = config.board.settings.clone();
        form.request()?
            .apply(&mut settings)
            .map_err(PageError::from)?;
        engine::update_board(&state, &user.actor(), &slug, settings)
            .await
            .map_err(PageError::from)
    }
    .await;
    match outcome {
        Ok(_) => {
            session::flash(&session, &user.lang.t("flash-board-saved"));
            Ok(see_other(&format!("/admin/boards/{slug}")))
        }
        Err(PageError::Invalid(message)) => BoardFormPage::new(
            Chrome::of(&session, &user),
            Some(slug.to_string()),
            form,
            Some(message),
        )
        .refused(),
        Err(other) => Err(other),
    }
}

#[derive(Deserialize)]
pub(super) struct DeleteForm {
    confirm: String,
}

pub(super) async fn delete_board(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
    form: CsrfForm<DeleteForm>,
) -> Result<HttpResponse, PageError> {
    let config = board(&state, &path)?;
    let slug = config.board.slug.clone();
    if form.0.confirm.trim() != slug.as_str() {
        session::flash(&session, &user.lang.t("flash-board-not-deleted"));
        return Ok(see_other(&format!("/admin/boards/{slug}/edit")));
    }
    engine::delete_board(&state, &user.actor(), &slug).await?;
    session::flash(
        &session,
        &user
            .lang
            .tr("flash-board-deleted", &[("slug", slug.to_string().into())]),
    );
    Ok(see_other("/admin/boards"))
}

/// Archives every closed bucket now and releases the keys of those past their retention.
pub(super) async fn archive_board(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
    _form: CsrfForm<HashMap<String, String>>,
) -> Result<HttpResponse, PageError> {
    let config = board(&state, &path)?;
    let slug = config.board.slug.clone();
    let report = engine::archive_board(&state, &user.actor(), &slug).await?;
    session::flash(
        &session,
        &user.lang.tr(
            "flash-board-archived",
            &[
                ("archived", (report.archived.len() as i64).into()),
                ("released", (report.released.len() as i64).into()),
            ],
        ),
    );
    Ok(see_other(&format!("/admin/boards/{slug}")))
}
