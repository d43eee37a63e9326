//! Members in the dashboard: the table with ranks per period, add/edit, enable/disable,
//! CSV import with a preview before anything is written, and a member's history with
//! the form that adjusts its score in one bucket.

use std::collections::HashMap;

use actix_session::Session;
use actix_web::http::Method;
use actix_web::{HttpResponse, web};
use askama::Template;
use serde::Deserialize;

use super::boards::board;
use super::{Chrome, html, html_with, see_other};
use crate::api::admin::members::{MemberFields, merged, read_csv};
use crate::domain::adjustment::Asked;
use crate::domain::code::Code;
use crate::domain::ids::{IdempotencyKey, MemberId};
use crate::domain::period::{Bucket, Period};
use crate::engine::adjustments;
use crate::engine::admin as engine;
use crate::engine::boards::BoardRef;
use crate::engine::config::BoardConfig;
use crate::engine::error::EngineError;
use crate::engine::leaderboard;
use crate::engine::state::AppState;
use crate::error::PageError;
use crate::i18n::Lang;
use crate::web::Router;
use crate::web::charts;
use crate::web::charts::{long_label, short_label};
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
    r.add(
        Method::GET,
        "/boards/{board}/members/{member}/history",
        member_history,
    );
    r.add(
        Method::POST,
        "/boards/{board}/members/{member}/adjustments",
        adjust_member,
    );
}

/// Buckets a member's history page shows.
const HISTORY_BUCKETS: i64 = 30;

struct HistoryRow {
    bucket: String,
    rank: String,
    score: String,
    archived: bool,
}

/// The adjustment form: what was typed, kept when it is refused.
#[derive(Debug, Default, Deserialize)]
struct AdjustForm {
    #[serde(default)]
    period: String,
    #[serde(default)]
    at: String,
    #[serde(default)]
    view: String,
    #[serde(default)]
    delta: String,
    #[serde(default)]
    reason: String,
    /// Chosen when the form is drawn, so a form sent twice adjusts once.
    #[serde(default)]
    key: String,
}

#[derive(Template)]
#[template(path = "admin/members/history.html")]
struct HistoryPage {
    l: Lang,
    user: String,
    csrf: String,
    flash: Option<String>,
    slug: String,
    member: String,
    name: String,
    /// (period, label, selected): the board's calendar periods.
    periods: Vec<(&'static str, String, bool)>,
    /// The period shown.
    period: &'static str,
    chart: String,
    /// Newest first.
    rows: Vec<HistoryRow>,
    /// A votes board's members are adjusted here; (period, label): the calendar periods
    /// and `all` the board keeps.
    adjustable: Vec<(&'static str, String)>,
    form: AdjustForm,
    error: Option<String>,
}

#[derive(Debug, Deserialize)]
struct HistoryQuery {
    period: Option<String>,
    /// Fills the adjustment form's bucket.
    at: Option<String>,
}

/// A member's score and rank over the last buckets of a period: a chart and a table,
/// archived buckets marked; on a votes board, the form that adjusts the member's score
/// in one bucket.
async fn member_history(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<(String, String)>,
    query: web::Query<HistoryQuery>,
) -> Result<HttpResponse, PageError> {
    let (board_slug, member) = path.into_inner();
    let config = board(&state, &board_slug)?;
    let member = MemberId::parse(&member).map_err(|e| PageError::NotFound(e.message))?;
    let query = query.into_inner();
    let form = AdjustForm {
        period: query.period.clone().unwrap_or_default(),
        at: query.at.unwrap_or_default(),
        ..AdjustForm::default()
    };
    let page = history_page(
        &state,
        Chrome::of(&session, &user),
        &config,
        &member,
        query.period.as_deref(),
        form,
        None,
    )
    .await?;
    html(&page)
}

async fn history_page(
    state: &AppState,
    chrome: Chrome,
    config: &std::sync::Arc<BoardConfig>,
    member: &MemberId,
    period: Option<&str>,
    mut form: AdjustForm,
    error: Option<String>,
) -> Result<HistoryPage, PageError> {
    let board_slug = &config.board.slug;
    let settings = &config.board.settings;
    if settings.instances.is_some() {
        return Err(PageError::NotFound(format!(
            "board {board_slug} is a family: a member's history is in each of its boards \
            (GET /api/v1/boards/{board_slug}:<instance>/members/{member}/history)"
        )));
    }
    let calendar: Vec<Period> = settings
        .periods
        .iter()
        .copied()
        .filter(|p| p.is_periodic())
        .collect();
    let Some(&fallback) = calendar
        .iter()
        .find(|&&p| p == Period::Day)
        .or(calendar.first())
    else {
        return Err(PageError::NotFound(format!(
            "board {board_slug} keeps no calendar period"
        )));
    };
    let period = match period {
        Some(p) => Period::parse(p)
            .ok()
            .filter(|p| calendar.contains(p))
            .unwrap_or(fallback),
        None => fallback,
    };
    let sel = leaderboard::select(
        BoardRef::plain(config.clone())?,
        Some(period.as_str()),
        None,
        None,
    )?;
    let history = leaderboard::history(state, &sel, member, HISTORY_BUCKETS).await?;
    let l = chrome.l;
    let tz = settings.timezone;
    let now = chrono::Utc::now();
    let oldest_first: Vec<_> = history.buckets.iter().rev().collect();
    let buckets: Vec<Bucket> = oldest_first
        .iter()
        .map(|h| Bucket::parse(period, tz, &h.bucket))
        .collect::<Result<_, _>>()
        .map_err(EngineError::from)?;
    let ticks: Vec<String> = buckets
        .iter()
        .map(|b| short_label(l, b, tz, true))
        .collect();
    let points: Vec<String> = buckets.iter().map(|b| long_label(l, b, tz, now)).collect();
    let score_title = l.t("history-chart");
    let chart = charts::Lines {
        title: &score_title,
        unit: &l.t("col-score"),
        axis: &l.period("live-period", period.as_str()),
        ticks: &ticks,
        points: &points,
        series: &[charts::Series {
            name: l.t("col-score"),
            values: oldest_first.iter().map(|h| h.score.as_f64()).collect(),
        }],
        lang: l,
    }
    .render();
    let adjustable = if settings.scoring.is_scores() {
        Vec::new()
    } else {
        settings
            .periods
            .iter()
            .filter(|p| p.is_bucketed())
            .map(|p| (p.as_str(), l.period("live-period", p.as_str())))
            .collect()
    };
    if form.period.is_empty() {
        form.period = period.as_str().to_owned();
    }
    if form.at.is_empty() && form.period != Period::All.as_str() {
        form.at = Bucket::containing(period, tz, now)
            .map_err(EngineError::from)?
            .label;
    }
    if form.key.is_empty() {
        form.key = format!("dash-{:016x}", rand::random::<u64>());
    }
    Ok(HistoryPage {
        l,
        user: chrome.user,
        csrf: chrome.csrf,
        flash: chrome.flash,
        slug: board_slug.to_string(),
        name: config
            .members
            .get(member)
            .map_or_else(|| member.to_string(), |m| m.name.clone()),
        member: member.to_string(),
        periods: calendar
            .iter()
            .map(|p| {
                (
                    p.as_str(),
                    l.period("live-period", p.as_str()),
                    *p == period,
                )
            })
            .collect(),
        period: period.as_str(),
        chart,
        rows: history
            .buckets
            .iter()
            .map(|h| HistoryRow {
                bucket: h.bucket.clone(),
                rank: h.rank.map(|r| r.to_string()).unwrap_or_default(),
                score: h.score.to_string(),
                archived: h.archived,
            })
            .collect(),
        adjustable,
        form,
        error,
    })
}

/// Adjusts the member's score in one bucket (`engine::adjustments`); a refusal shows the
/// page again with what was typed and why.
async fn adjust_member(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<(String, String)>,
    form: CsrfForm<AdjustForm>,
) -> Result<HttpResponse, PageError> {
    let (raw_board, raw_member) = path.into_inner();
    let config = board(&state, &raw_board)?;
    let member = MemberId::parse(&raw_member).map_err(|e| PageError::NotFound(e.message))?;
    let form = form.0;
    let outcome = async {
        let delta = form.delta.trim().parse::<i64>().map_err(|_| {
            EngineError::invalid(
                Code::InvalidDelta,
                "the change must be a whole number of votes",
            )
        })?;
        let key = IdempotencyKey::parse(&form.key)?;
        let asked = Asked {
            period: &form.period,
            at: Some(form.at.trim()).filter(|a| !a.is_empty()),
            view: &form.view,
            delta,
            reason: &form.reason,
        };
        adjustments::adjust(
            &state,
            &user.actor(),
            &config.board.slug,
            member.clone(),
            asked,
            Some(key),
        )
        .await
    }
    .await;
    let back = |period: &str| {
        Some(period)
            .filter(|p| Period::parse(p).is_ok_and(|p| p.is_periodic()))
            .map(str::to_owned)
    };
    match outcome {
        Ok(made) => {
            let a = &made.adjustment;
            session::flash(
                &session,
                &user.lang.tr(
                    "flash-member-adjusted",
                    &[
                        ("id", member.to_string().into()),
                        ("delta", a.delta.into()),
                        ("bucket", a.bucket.label.clone().into()),
                    ],
                ),
            );
            let period = back(a.bucket.period.as_str())
                .map(|p| format!("?period={p}"))
                .unwrap_or_default();
            Ok(see_other(&format!(
                "/admin/boards/{}/members/{}/history{period}",
                config.board.slug, member
            )))
        }
        Err(
            err @ (EngineError::Invalid { .. }
            | EngineError::Conflict { .. }
            | EngineError::NotFound { .. }),
        ) => {
            let period = back(&form.period);
            let page = history_page(
                &state,
                Chrome::of(&session, &user),
                &config,
                &member,
                period.as_deref(),
                form,
                Some(err.to_string()),
            )
            .await?;
            html_with(&page, actix_web::http::StatusCode::UNPROCESSABLE_ENTITY)
        }
        Err(other) => Err(other.into()),
    }
}

struct MemberRow {
    id: String,
    name: String,
    multiplier: Option<f64>,
    enabled: bool,
    cells: Vec<String>,
}

/// Members per page of the table.
const PAGE_SIZE: usize = 50;

#[derive(Template)]
#[template(path = "admin/members/index.html")]
struct MembersPage {
    l: Lang,
    user: String,
    csrf: String,
    flash: Option<String>,
    slug: String,
    /// The periods whose rank and score each row shows: none for a family, whose
    /// members score in its instances.
    periods: Vec<&'static str>,
    /// A family: its members have no history of their own (each instance has theirs).
    family: bool,
    /// A votes board other than a family: each row leads to the member's adjustment form.
    adjustable: bool,
    members: Vec<MemberRow>,
    /// The search, and where this page starts in the matching members.
    q: String,
    first: usize,
    matching: usize,
    previous: Option<usize>,
    next: Option<usize>,
    /// What the add/edit form shows: what was typed, or the member being edited.
    form: MemberForm,
    error: Option<String>,
    csv: String,
}

impl MembersPage {
    /// "51–100 of 200"
    fn range(&self) -> String {
        self.l.tr(
            "members-range",
            &[
                ("first", (self.first as i64).into()),
                (
                    "last",
                    ((self.first + self.members.len()).saturating_sub(1) as i64).into(),
                ),
                ("total", (self.matching as i64).into()),
            ],
        )
    }

    /// A period column's heading: "Day: rank · score".
    fn rank_header(&self, period: &str) -> String {
        let name = self.l.period("live-period", period);
        self.l.tr("members-rank-score", &[("period", name.into())])
    }

    fn no_match(&self) -> String {
        self.l
            .tr("members-no-match", &[("q", self.q.as_str().into())])
    }
}

/// What the members page shows besides the table.
#[derive(Default, Deserialize)]
#[serde(default)]
struct MembersQuery {
    /// Members whose id or name contains this (any case).
    q: String,
    /// 1-based page.
    page: usize,
    /// A member to edit: the form starts with its values.
    edit: String,
}

async fn members_page(
    state: &AppState,
    chrome: Chrome,
    config: std::sync::Arc<BoardConfig>,
    query: &MembersQuery,
    form: MemberForm,
    error: Option<String>,
    csv: String,
) -> Result<MembersPage, PageError> {
    let settings = &config.board.settings;
    let needle = query.q.trim().to_lowercase();
    let mut matching: Vec<&crate::domain::board::Member> = config
        .members
        .values()
        .filter(|m| {
            needle.is_empty()
                || m.id.as_str().to_lowercase().contains(&needle)
                || m.name.to_lowercase().contains(&needle)
        })
        .collect();
    matching.sort_by(|a, b| a.id.cmp(&b.id));
    let pages = matching.len().div_ceil(PAGE_SIZE).max(1);
    let page = query.page.clamp(1, pages);
    let first = (page - 1) * PAGE_SIZE;
    let shown: Vec<_> = matching.iter().skip(first).take(PAGE_SIZE).collect();
    let members: Vec<MemberId> = shown.iter().map(|m| m.id.clone()).collect();
    // One standing per shown member and period, in one round trip each.
    let mut cells: Vec<Vec<String>> = vec![Vec::new(); members.len()];
    // A family's members score in its instances, not here.
    let periods = if settings.instances.is_some() {
        &[][..]
    } else {
        &settings.periods[..]
    };
    for &period in periods {
        let sel = leaderboard::select(
            BoardRef::plain(config.clone())?,
            Some(period.as_str()),
            None,
            None,
        )?;
        for (row, standing) in leaderboard::standings(state, &sel, &members)
            .await?
            .into_iter()
            .enumerate()
        {
            cells[row].push(match standing.rank {
                Some(rank) => format!("#{rank} · {}", standing.score),
                None => "—".to_owned(),
            });
        }
    }
    let rows = shown
        .into_iter()
        .zip(cells)
        .map(|(m, cells)| MemberRow {
            id: m.id.to_string(),
            name: m.name.clone(),
            multiplier: m.multiplier.map(|x| x.as_f64()),
            enabled: m.enabled,
            cells,
        })
        .collect();
    Ok(MembersPage {
        l: chrome.l,
        user: chrome.user,
        csrf: chrome.csrf,
        flash: chrome.flash,
        slug: config.board.slug.to_string(),
        periods: periods.iter().map(|p| p.as_str()).collect(),
        family: settings.instances.is_some(),
        adjustable: settings.instances.is_none() && !settings.scoring.is_scores(),
        members: rows,
        q: query.q.clone(),
        first: first + 1,
        matching: matching.len(),
        previous: (page > 1).then(|| page - 1),
        next: (page < pages).then(|| page + 1),
        form,
        error,
        csv,
    })
}

async fn list_members(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    path: web::Path<String>,
    query: web::Query<MembersQuery>,
) -> Result<HttpResponse, PageError> {
    let config = board(&state, &path)?;
    let form = MemberId::parse(query.edit.trim())
        .ok()
        .and_then(|id| config.members.get(&id))
        .map(MemberForm::of)
        .unwrap_or_default();
    html(
        &members_page(
            &state,
            Chrome::of(&session, &user),
            config.clone(),
            &query,
            form,
            None,
            String::new(),
        )
        .await?,
    )
}

/// The add/edit form's fields as text, so a refused form shows what was typed.
#[derive(Default, Deserialize)]
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

impl MemberForm {
    /// The form filled with a member's values, to edit it.
    fn of(m: &crate::domain::board::Member) -> Self {
        Self {
            id: m.id.to_string(),
            name: m.name.clone(),
            image_url: m.image_url.clone().unwrap_or_default(),
            initial_votes: m.initial_votes.to_string(),
            multiplier: m
                .multiplier
                .map(|x| x.as_f64().to_string())
                .unwrap_or_default(),
        }
    }
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
                EngineError::invalid(
                    Code::InvalidInitialVotes,
                    "initial votes must be a whole number",
                )
            })?),
        };
        let multiplier = match form.multiplier.trim() {
            "" => None,
            n => Some(n.parse::<f64>().map_err(|_| {
                EngineError::invalid(Code::InvalidNumber, "the multiplier must be a number")
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
            session::flash(
                &session,
                &user
                    .lang
                    .tr("flash-member-saved", &[("id", form.id.trim().into())]),
            );
            Ok(see_other(&format!(
                "/admin/boards/{}/members",
                config.board.slug
            )))
        }
        Err(err @ EngineError::Invalid { .. }) => {
            let page = members_page(
                &state,
                Chrome::of(&session, &user),
                config,
                &MembersQuery::default(),
                form,
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
        "flash-member-enabled"
    } else {
        "flash-member-disabled"
    };
    engine::upsert_members(&state, &user.actor(), &config.board.slug, vec![member]).await?;
    session::flash(
        &session,
        &user.lang.tr(now, &[("id", id.to_string().into())]),
    );
    Ok(see_other(&format!(
        "/admin/boards/{}/members",
        config.board.slug
    )))
}

#[derive(Template)]
#[template(path = "admin/members/preview.html")]
struct PreviewPage {
    l: Lang,
    user: String,
    csrf: String,
    flash: Option<String>,
    slug: String,
    csv: String,
    members: Vec<PreviewRow>,
    /// (line, problem)
    errors: Vec<(u64, String)>,
}

/// A member the import would write, and whether it is new, changed or the same.
struct PreviewRow {
    id: String,
    name: String,
    initial_votes: i64,
    image_url: String,
    change: &'static str,
}

#[derive(Deserialize)]
struct ImportForm {
    csv: String,
    confirm: Option<String>,
}

impl PreviewPage {
    /// How many rows of the preview make this change.
    fn count(&self, change: &str) -> i64 {
        self.members.iter().filter(|m| m.change == change).count() as i64
    }

    /// "3 members will be written: 1 new, 1 updated, 1 unchanged. …"
    fn summary(&self) -> String {
        self.l.tr(
            "preview-summary",
            &[
                ("count", (self.members.len() as i64).into()),
                ("new", self.count("new").into()),
                ("updated", self.count("updated").into()),
                ("unchanged", self.count("unchanged").into()),
            ],
        )
    }

    fn import_label(&self) -> String {
        self.l.tr(
            "preview-import",
            &[("count", (self.members.len() as i64).into())],
        )
    }

    fn errors_line(&self) -> String {
        self.l.tr(
            "preview-errors",
            &[("count", (self.errors.len() as i64).into())],
        )
    }
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
        l: chrome.l,
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
            session::flash(
                &session,
                &user
                    .lang
                    .tr("flash-imported", &[("count", (n as i64).into())]),
            );
            return Ok(see_other(&format!(
                "/admin/boards/{}/members",
                config.board.slug
            )));
        }
        Ok(members) => {
            page.members = members
                .into_iter()
                .map(|m| PreviewRow {
                    change: match config.members.get(&m.id) {
                        None => "new",
                        Some(old) if *old == m => "unchanged",
                        Some(_) => "updated",
                    },
                    id: m.id.to_string(),
                    name: m.name,
                    initial_votes: m.initial_votes,
                    image_url: m.image_url.unwrap_or_default(),
                })
                .collect();
        }
        Err(err) => {
            page.errors = match err.item_errors() {
                [] => vec![(0, err.to_string())],
                lines => lines
                    .iter()
                    .map(|e| {
                        (
                            e["line"].as_u64().unwrap_or_default(),
                            e["message"].as_str().unwrap_or_default().to_owned(),
                        )
                    })
                    .collect(),
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
