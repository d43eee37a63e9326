//! Boards in the dashboard: the list, the create/edit form, deletion, the live view with
//! its charts, and CSV export of a ranking.

use std::collections::HashMap;

use actix_session::Session;
use actix_web::http::Method;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use chrono::{DateTime, Datelike, Timelike, Utc};
use chrono_tz::Tz;
use serde::Deserialize;

use super::{Chrome, html, html_with, is_htmx, see_other};
use crate::api::admin::boards::BoardRequest;
use crate::api::boards::{RetentionSettings, StorageSettings};
use crate::domain::board::BoardSettings;
use crate::domain::code::Code;
use crate::domain::ids::BoardSlug;
use crate::domain::period::{Bucket, Period};
use crate::domain::score::View;
use crate::domain::scoring::Storage;
use crate::engine::activity;
use crate::engine::admin as engine;
use crate::engine::config::BoardConfig;
use crate::engine::leaderboard::{self, Selection};
use crate::engine::state::AppState;
use crate::error::PageError;
use crate::i18n::Lang;
use crate::web::Router;
use crate::web::charts;
use crate::web::forms::CsrfForm;
use crate::web::session::{self, AdminUser};

pub fn routes(r: &mut impl Router) {
    r.add(Method::GET, "/boards", list_boards);
    r.add(Method::GET, "/boards/new", new_board);
    r.add(Method::POST, "/boards", create_board);
    r.add(Method::GET, "/boards/{board}", get_board);
    r.add(Method::GET, "/boards/{board}/live", get_live);
    r.add(Method::GET, "/boards/{board}/export.csv", export_ranking);
    r.add(Method::GET, "/boards/{board}/edit", edit_board);
    r.add(Method::POST, "/boards/{board}", update_board);
    r.add(Method::POST, "/boards/{board}/delete", delete_board);
    r.add(Method::POST, "/boards/{board}/archive", archive_board);
}

/// The board named in a dashboard path.
pub fn board(state: &AppState, raw: &str) -> Result<std::sync::Arc<BoardConfig>, PageError> {
    let slug = BoardSlug::parse(raw).map_err(|e| PageError::NotFound(e.message))?;
    Ok(engine::board_of(state, &slug)?)
}

struct BoardRow {
    slug: String,
    title: String,
    status: &'static str,
    public: bool,
    votes_today: i64,
    periods: String,
}

#[derive(Template)]
#[template(path = "admin/boards/index.html")]
struct BoardsPage {
    l: Lang,
    user: String,
    csrf: String,
    flash: Option<String>,
    boards: Vec<BoardRow>,
}

async fn list_boards(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
) -> Result<HttpResponse, PageError> {
    let Chrome {
        l,
        user,
        csrf,
        flash,
    } = Chrome::of(&session, &user);
    let now = Utc::now();
    let mut boards = Vec::new();
    for config in state.config.boards() {
        let s = &config.board.settings;
        let votes_today = activity::votes_today(&state, &config, now).await?;
        boards.push(BoardRow {
            slug: config.board.slug.to_string(),
            title: s.title.clone(),
            status: match s.window_admits(now) {
                Ok(()) => "boards-status-live",
                Err(e) if e.code == Code::CampaignNotStarted => "boards-status-not-started",
                Err(_) => "boards-status-closed",
            },
            public: s.public_page,
            votes_today,
            periods: s
                .periods
                .iter()
                .map(|p| l.period("live-period", p.as_str()))
                .collect::<Vec<_>>()
                .join(l.t("list-separator").as_str()),
        });
    }
    html(&BoardsPage {
        l,
        user,
        csrf,
        flash,
        boards,
    })
}

fn days(days: Option<i64>) -> String {
    days.map(|d| d.to_string()).unwrap_or_default()
}

/// The form's fields as text, so a refused form shows what was typed.
#[derive(Debug, Default, Deserialize)]
#[serde(default)]
pub struct BoardForm {
    slug: String,
    title: String,
    description: String,
    membership: String,
    periods: Vec<String>,
    timezone: String,
    multiplier: String,
    carry_over: String,
    starts_at: String,
    ends_at: String,
    max_count: String,
    #[serde(default)]
    display_decimals: String,
    /// One origin per line.
    #[serde(default)]
    embed_origins: String,
    public_page: Option<String>,
    /// Create only, like the storage fields below.
    scoring: String,
    decimals: String,
    storage_kind: String,
    retain: String,
    trim_at: String,
    shards: String,
    /// Days a closed bucket stays in Redis once archived; empty keeps it forever.
    retention_hour: String,
    retention_day: String,
    retention_week: String,
    retention_month: String,
    archive_top: String,
}

impl BoardForm {
    fn of(s: &BoardSettings) -> Self {
        Self {
            slug: String::new(),
            title: s.title.clone(),
            description: s.description.clone(),
            membership: s.membership.as_str().to_owned(),
            periods: s.periods.iter().map(|p| p.as_str().to_owned()).collect(),
            timezone: s.timezone.name().to_owned(),
            multiplier: s.multiplier.as_f64().to_string(),
            carry_over: s.carry_over.as_f64().to_string(),
            starts_at: s.starts_at.map(|t| t.to_rfc3339()).unwrap_or_default(),
            ends_at: s.ends_at.map(|t| t.to_rfc3339()).unwrap_or_default(),
            max_count: s.max_count.to_string(),
            display_decimals: s.display_decimals.to_string(),
            retention_hour: days(s.retention.hour),
            retention_day: days(s.retention.day),
            retention_week: days(s.retention.week),
            retention_month: days(s.retention.month),
            archive_top: s.archive_top.to_string(),
            embed_origins: s.embed_origins.join("\n"),
            public_page: s.public_page.then(|| "on".to_owned()),
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
                Storage::Sharded { shards } => shards.to_string(),
                _ => String::new(),
            },
        }
    }

    fn request(&self) -> Result<BoardRequest, PageError> {
        let number = |raw: &str, what: &str| -> Result<f64, PageError> {
            raw.trim()
                .parse::<f64>()
                .map_err(|_| PageError::Invalid(format!("{what} must be a number")))
        };
        let time = |raw: &str| (!raw.trim().is_empty()).then(|| raw.trim().to_owned());
        let whole = |raw: &str, what: &str| -> Result<Option<i64>, PageError> {
            match raw.trim() {
                "" => Ok(None),
                raw => raw
                    .parse()
                    .map(Some)
                    .map_err(|_| PageError::Invalid(format!("{what} must be a whole number"))),
            }
        };
        let creating = !self.scoring.trim().is_empty();
        Ok(BoardRequest {
            slug: None,
            title: Some(self.title.clone()),
            description: Some(self.description.clone()),
            membership: Some(self.membership.clone()),
            periods: Some(self.periods.clone()),
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
}

impl BoardFormPage {
    fn new(chrome: Chrome, slug: Option<String>, form: BoardForm, error: Option<String>) -> Self {
        let all_periods = Period::EVERY
            .iter()
            .map(|p| (p.as_str(), form.periods.iter().any(|f| f == p.as_str())))
            .collect();
        let timezones = chrono_tz::TZ_VARIANTS
            .iter()
            .map(|tz| (tz.name(), tz.name() == form.timezone))
            .collect();
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
        }
    }

    /// The form again with the reason it was refused (422).
    fn refused(self) -> Result<HttpResponse, PageError> {
        html_with(&self, actix_web::http::StatusCode::UNPROCESSABLE_ENTITY)
    }
}

async fn new_board(session: Session, user: AdminUser) -> Result<HttpResponse, PageError> {
    let form = BoardForm::of(&BoardSettings::new(String::new()));
    html(&BoardFormPage::new(
        Chrome::of(&session, &user),
        None,
        form,
        None,
    ))
}

async fn create_board(
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

async fn edit_board(
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

async fn update_board(
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
struct DeleteForm {
    confirm: String,
}

async fn delete_board(
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
async fn archive_board(
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

#[derive(Debug, Deserialize)]
pub struct LiveQuery {
    period: Option<String>,
    view: Option<String>,
    at: Option<String>,
    /// Set: the page does not refresh itself until resumed.
    paused: Option<String>,
}

impl LiveQuery {
    fn select(&self, config: std::sync::Arc<BoardConfig>) -> Result<Selection, PageError> {
        let at = self.at.as_deref().filter(|a| !a.trim().is_empty());
        Ok(leaderboard::select(
            config,
            self.period.as_deref().filter(|p| !p.is_empty()),
            at,
            self.view.as_deref().filter(|v| !v.is_empty()),
        )?)
    }

    fn paused(&self) -> bool {
        self.paused.as_deref().is_some_and(|p| !p.is_empty())
    }
}

struct LiveRow {
    rank: i64,
    member: String,
    name: String,
    score: String,
    change: String,
    change_class: &'static str,
}

#[derive(Template)]
#[template(path = "admin/boards/show.html", blocks = ["live"])]
struct BoardPage {
    l: Lang,
    user: String,
    csrf: String,
    flash: Option<String>,
    slug: String,
    title: String,
    public: bool,
    /// (period, label, selected)
    periods: Vec<(&'static str, String, bool)>,
    period: String,
    view: String,
    /// The selected bucket's label, empty for the current one.
    at: String,
    paused: bool,
    /// The bucket picker: (label, selected), newest first.
    buckets: Vec<(String, bool)>,
    previous: Option<String>,
    next: Option<String>,
    bucket: String,
    resets_at: Option<String>,
    participants: String,
    total_members: String,
    /// The bucket was read from the archive: it left Redis.
    archived: bool,
    updated: String,
    rows: Vec<LiveRow>,
    votes_title: String,
    votes_chart: String,
    participants_title: String,
    participants_chart: String,
    top_chart: String,
    refusals_title: String,
    refusals_chart: String,
}

/// How many buckets the picker offers, newest first.
fn picker_len(period: Period) -> usize {
    match period {
        Period::Hour => 48,
        Period::Day => 62,
        Period::Week => 26,
        Period::Month => 24,
        Period::All | Period::Rolling(_) => 0,
    }
}

/// A bucket as a chart's time axis shows it, short: `14:00`, `11/23`, `W48`, `2026-11`.
pub(super) fn short_label(l: Lang, bucket: &Bucket, tz: Tz, with_day: bool) -> String {
    let Some(start) = bucket.start.map(|s| s.with_timezone(&tz)) else {
        return bucket.label.clone();
    };
    let day = || {
        l.tr(
            "chart-day",
            &[
                ("month", i64::from(start.month()).into()),
                ("day", i64::from(start.day()).into()),
            ],
        )
    };
    match bucket.period {
        Period::Hour if with_day => format!("{} {:02}:{:02}", day(), start.hour(), start.minute()),
        Period::Hour => format!("{:02}:{:02}", start.hour(), start.minute()),
        Period::Day => day(),
        Period::Week => bucket
            .label
            .rsplit('-')
            .next()
            .unwrap_or_default()
            .to_owned(),
        Period::Month | Period::All | Period::Rolling(_) => bucket.label.clone(),
    }
}

/// A bucket whole, for a tooltip: "today 14:00 Beijing time", "Tue 3 Nov Beijing time",
/// "2026-W48".
pub(super) fn long_label(l: Lang, bucket: &Bucket, tz: Tz, now: DateTime<Utc>) -> String {
    match (bucket.period, bucket.start) {
        (Period::Hour, Some(start)) => format!("{} {}", l.when(start, tz, now), l.zone(tz)),
        (Period::Day, Some(start)) => format!("{} {}", l.date(start, tz), l.zone(tz)),
        _ => bucket.label.clone(),
    }
}

/// Everything the live block shows.
async fn live_page(
    state: &AppState,
    chrome: Chrome,
    config: std::sync::Arc<BoardConfig>,
    query: &LiveQuery,
) -> Result<BoardPage, PageError> {
    let l = chrome.l;
    let now = Utc::now();
    let sel = query.select(config.clone())?;
    let settings = &config.board.settings;
    let tz = settings.timezone;
    let mut selections = vec![sel.clone()];
    if let Some(previous) = sel.bucket.previous(tz) {
        selections.push(Selection {
            bucket: previous,
            ..sel.clone()
        });
    }
    let pages = leaderboard::tops(state, &selections, 0, 100).await?;
    let previous_ranks: HashMap<&str, i64> = pages
        .get(1)
        .map(|p| {
            p.entries
                .iter()
                .map(|e| (e.member.as_str(), e.rank))
                .collect()
        })
        .unwrap_or_default();
    let current = &pages[0];
    let rows: Vec<LiveRow> = current
        .entries
        .iter()
        .map(|e| {
            let (change, change_class) = match previous_ranks.get(e.member.as_str()) {
                _ if pages.len() < 2 => (String::new(), ""),
                Some(&before) if before > e.rank => (format!("▲{}", before - e.rank), "up"),
                Some(&before) if before < e.rank => (format!("▼{}", e.rank - before), "down"),
                Some(_) => ("=".to_owned(), ""),
                None => (l.t("live-new"), "up"),
            };
            LiveRow {
                rank: e.rank,
                member: e.member.clone(),
                name: e.name.clone().unwrap_or_default(),
                score: e.score.to_string(),
                change,
                change_class,
            }
        })
        .collect();

    let activity = activity::activity(state, &sel, now).await?;
    let zone = l.zone(tz);
    let steps = &activity.steps;
    let step = steps.first().map_or(Period::Hour, |s| s.bucket.period);
    let crosses_days = step == Period::Hour
        && steps
            .first()
            .and_then(|s| s.bucket.start)
            .map(|s| s.with_timezone(&tz).date_naive())
            != steps
                .last()
                .and_then(|s| s.bucket.start)
                .map(|s| s.with_timezone(&tz).date_naive());
    let ticks: Vec<String> = steps
        .iter()
        .map(|s| short_label(l, &s.bucket, tz, crosses_days))
        .collect();
    let points: Vec<String> = steps
        .iter()
        .map(|s| long_label(l, &s.bucket, tz, now))
        .collect();
    let step_arg = [("step", step.as_str().into())];
    let axis = l.tr(
        "chart-axis",
        &[
            ("step", step.as_str().into()),
            ("zone", zone.clone().into()),
        ],
    );
    let votes_title = l.tr("chart-votes", &step_arg);
    let votes_chart = charts::Lines {
        title: &votes_title,
        unit: &l.t("chart-unit-votes"),
        axis: &axis,
        ticks: &ticks,
        points: &points,
        series: &[charts::Series {
            name: l.t("chart-unit-votes"),
            values: steps.iter().map(|s| s.votes.map(|v| v as f64)).collect(),
        }],
        lang: l,
    }
    .render();
    let refusals_title = l.tr("chart-refusals", &step_arg);
    let refusals_chart = if config.rules.is_empty() {
        format!("<p class=\"muted\">{}</p>", l.t("chart-no-rules"))
    } else {
        let series: Vec<charts::Series> = config
            .rules
            .iter()
            .enumerate()
            .map(|(i, rule)| charts::Series {
                name: rule.spec.name.clone(),
                values: steps
                    .iter()
                    .map(|s| s.refused[i].map(|v| v as f64))
                    .collect(),
            })
            .collect();
        let chart = charts::Lines {
            title: &refusals_title,
            unit: &l.t("chart-unit-refused"),
            axis: &axis,
            ticks: &ticks,
            points: &points,
            series: &series,
            lang: l,
        }
        .render();
        format!(
            "{chart}<p class=\"muted small\">{}</p>",
            l.tr(
                "chart-refusals-kept",
                &[("days", activity::REFUSALS_KEPT_DAYS.into())]
            )
        )
    };
    let top_chart = charts::bars(
        &l.t("chart-top"),
        &l.t(match sel.view {
            View::Real => "chart-unit-real",
            View::Display => "chart-unit-display",
        }),
        &current
            .entries
            .iter()
            .take(10)
            .map(|e| {
                (
                    e.name.clone().unwrap_or_else(|| e.member.clone()),
                    e.score.as_f64().unwrap_or_default(),
                )
            })
            .collect::<Vec<_>>(),
        l,
    );
    let (participants_title, participants_chart) = match activity.participants.first() {
        Some((first, _)) => {
            let period = first.period;
            let title = l.tr("chart-participants", &[("period", period.as_str().into())]);
            let buckets: Vec<&Bucket> = activity.participants.iter().map(|(b, _)| b).collect();
            let crosses = period == Period::Hour;
            let chart = charts::Lines {
                title: &title,
                unit: &l.t("chart-unit-voters"),
                axis: &l.tr(
                    "chart-axis",
                    &[
                        ("step", period.as_str().into()),
                        ("zone", zone.clone().into()),
                    ],
                ),
                ticks: &buckets
                    .iter()
                    .map(|b| short_label(l, b, tz, crosses))
                    .collect::<Vec<_>>(),
                points: &buckets
                    .iter()
                    .map(|b| long_label(l, b, tz, now))
                    .collect::<Vec<_>>(),
                series: &[charts::Series {
                    name: l.t("chart-unit-voters"),
                    values: activity
                        .participants
                        .iter()
                        .map(|(_, n)| Some(*n as f64))
                        .collect(),
                }],
                lang: l,
            }
            .render();
            (title, chart)
        }
        None => (
            l.tr("chart-participants", &[("period", "day".into())]),
            format!("<p class=\"muted\">{}</p>", l.t("chart-no-periods")),
        ),
    };

    let mut buckets = Vec::new();
    let newest = Bucket::containing(sel.bucket.period, tz, now).ok();
    let mut cursor = newest.filter(|_| sel.bucket.period.is_periodic());
    while let Some(b) = cursor.filter(|_| buckets.len() < picker_len(sel.bucket.period)) {
        cursor = b.previous(tz);
        buckets.push((b.label.clone(), b.label == sel.bucket.label));
    }
    if sel.bucket.period.is_periodic() && !buckets.iter().any(|(_, on)| *on) {
        buckets.push((sel.bucket.label.clone(), true));
    }
    let next = sel
        .bucket
        .next(tz)
        .filter(|n| n.start.is_some_and(|s| s <= now))
        .map(|n| n.label);

    Ok(BoardPage {
        l,
        user: chrome.user,
        csrf: chrome.csrf,
        flash: chrome.flash,
        slug: config.board.slug.to_string(),
        title: settings.title.clone(),
        public: settings.public_page,
        periods: settings
            .periods
            .iter()
            .map(|p| {
                (
                    p.as_str(),
                    l.period("live-period", p.as_str()),
                    *p == sel.bucket.period,
                )
            })
            .collect(),
        period: sel.bucket.period.as_str().to_owned(),
        view: sel.view.as_str().to_owned(),
        at: query.at.clone().unwrap_or_default(),
        paused: query.paused(),
        buckets,
        previous: sel.bucket.previous(tz).map(|b| b.label),
        next,
        bucket: sel.bucket.label.clone(),
        resets_at: current.resets_at.map(|t| {
            let when = format!("{} {zone}", l.when(t, tz, now));
            l.tr("live-resets", &[("when", when.into())])
        }),
        participants: l.tr(
            "live-participants",
            &[
                ("count", current.participants.into()),
                ("shown", l.number(current.participants as f64, 0).into()),
            ],
        ),
        total_members: l.tr(
            "live-members",
            &[
                ("count", current.total_members.into()),
                ("shown", l.number(current.total_members as f64, 0).into()),
            ],
        ),
        archived: current.archived,
        updated: l.tr(
            "live-updated",
            &[(
                "when",
                format!("{} {zone}", now.with_timezone(&tz).format("%H:%M:%S")).into(),
            )],
        ),
        rows,
        votes_title,
        votes_chart,
        participants_title,
        participants_chart,
        top_chart,
        refusals_title,
        refusals_chart,
    })
}

async fn get_board(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
    query: web::Query<LiveQuery>,
) -> Result<HttpResponse, PageError> {
    let config = board(&state, &path)?;
    let page = live_page(&state, Chrome::of(&session, &user), config, &query).await?;
    html(&page)
}

/// The live block alone, polled by htmx every two seconds.
async fn get_live(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    req: HttpRequest,
    path: web::Path<String>,
    query: web::Query<LiveQuery>,
) -> Result<HttpResponse, PageError> {
    let config = board(&state, &path)?;
    let page = live_page(&state, Chrome::of(&session, &user), config, &query).await?;
    if is_htmx(&req) {
        html(&page.as_live())
    } else {
        html(&page)
    }
}

/// A text cell a spreadsheet will not run: one that starts like a formula (`=`, `+`,
/// `-`, `@`, a tab or a carriage return) gets a leading `'`, as OWASP advises against
/// CSV injection.
fn spreadsheet_safe(cell: &str) -> String {
    if cell.starts_with(['=', '+', '-', '@', '\t', '\r']) {
        format!("'{cell}")
    } else {
        cell.to_owned()
    }
}

/// A ranking as CSV: rank, member, name, score.
async fn export_ranking(
    state: web::Data<AppState>,
    _user: AdminUser,
    path: web::Path<String>,
    query: web::Query<LiveQuery>,
) -> Result<HttpResponse, PageError> {
    let config = board(&state, &path)?;
    let sel = query.select(config.clone())?;
    let mut out = csv::Writer::from_writer(Vec::new());
    let write_err =
        |e: csv::Error| PageError::Internal(anyhow::anyhow!("failed to write CSV: {e}"));
    out.write_record(["rank", "member", "name", "score"])
        .map_err(write_err)?;
    let mut offset = 0;
    loop {
        let pages = leaderboard::tops(&state, std::slice::from_ref(&sel), offset, 1000).await?;
        let entries = &pages[0].entries;
        for e in entries {
            out.write_record([
                e.rank.to_string(),
                spreadsheet_safe(&e.member),
                spreadsheet_safe(e.name.as_deref().unwrap_or_default()),
                e.score.to_string(),
            ])
            .map_err(write_err)?;
        }
        if entries.len() < 1000 {
            break;
        }
        offset += 1000;
    }
    let body = out
        .into_inner()
        .map_err(|e| PageError::Internal(anyhow::anyhow!("failed to write CSV: {e}")))?;
    let file = format!(
        "{}-{}-{}-{}.csv",
        config.board.slug,
        sel.bucket.period,
        sel.bucket.label,
        sel.view.as_str()
    );
    Ok(HttpResponse::Ok()
        .content_type("text/csv; charset=utf-8")
        .insert_header((
            "Content-Disposition",
            format!("attachment; filename=\"{file}\""),
        ))
        .body(body))
}
