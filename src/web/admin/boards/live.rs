//! A board's live view: the ranking of the selected bucket with rank changes against
//! the one before, the bucket picker, and four charts that follow the bucket; the live
//! block alone, streamed as the board's top changes (the current bucket) or polled (an
//! earlier one, or where the stream is refused).

use std::collections::HashMap;

use actix_session::Session;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use chrono::{DateTime, Utc};
use serde::Deserialize;

use super::family::{FamilyQuery, family_page};
use super::ranked_board;
use crate::api::events::{Update, event_stream, stream, text_frame};
use crate::domain::period::{Bucket, Period};
use crate::domain::score::View;
use crate::engine::activity;
use crate::engine::admin as engine;
use crate::engine::boards::{self, BoardRef};
use crate::engine::events;
use crate::engine::leaderboard::{self, Selection, Top};
use crate::engine::state::AppState;
use crate::engine::watchers::Viewer;
use crate::error::PageError;
use crate::i18n::Lang;
use crate::web::admin::{Chrome, html, is_htmx};
use crate::web::charts::{self, long_label, short_label};
use crate::web::session::AdminUser;

#[derive(Debug, Clone, Deserialize)]
pub struct LiveQuery {
    period: Option<String>,
    view: Option<String>,
    at: Option<String>,
    /// Set: the page does not refresh itself until resumed.
    paused: Option<String>,
}

impl LiveQuery {
    pub(super) fn select(&self, board: BoardRef) -> Result<Selection, PageError> {
        let at = self.at.as_deref().filter(|a| !a.trim().is_empty());
        Ok(leaderboard::select(
            board,
            self.period.as_deref().filter(|p| !p.is_empty()),
            at,
            self.view.as_deref().filter(|v| !v.is_empty()),
        )?)
    }

    fn paused(&self) -> bool {
        self.paused.as_deref().is_some_and(|p| !p.is_empty())
    }
}

/// The members the live view ranks.
const LIVE_TOP: i64 = 100;

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
    /// `<slug>` or `<slug>:<instance>`: whose rankings these are.
    slug: String,
    /// The board whose members, rules and settings these are: a family's for an
    /// instance.
    config_slug: String,
    /// An instance of a family: never archived.
    instance: bool,
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
    /// The bucket's votes beside its people (none where the board did not count them).
    votes: Option<String>,
    total_members: String,
    /// The bucket was read from the archive: it left Redis.
    archived: bool,
    updated: String,
    rows: Vec<LiveRow>,
    charts: Charts,
    /// On a public board's page: the addresses to put elsewhere, ready to copy.
    share: Option<Share>,
}

/// A public board's stream overlay address, and the `<iframe>` of its embedded page when
/// sites may frame it.
struct Share {
    overlay: String,
    embed: Option<String>,
}

impl Share {
    /// Where `board` is shown outside this server, as `req` reached it.
    fn of(req: &HttpRequest, board: &BoardRef) -> Option<Self> {
        let settings = board.settings();
        if !settings.public_page || settings.instances.is_some_and(|i| !i.pages) {
            return None;
        }
        let origin = crate::web::origin_of(req);
        let name = board.name();
        Some(Self {
            overlay: format!("{origin}/overlay/b/{name}?period={}&top=5&theme=transparent",
                settings.periods[0].as_str()),
            embed: (!settings.embed_origins.is_empty()).then(|| {
                format!(
                    r#"<iframe src="{origin}/embed/b/{name}" title="{}" style="width: 100%; height: 640px; border: 0"></iframe>"#,
                    settings.title.replace('"', "&quot;")
                )
            }),
        })
    }
}

/// How many buckets the picker offers, newest first.
fn picker_len(period: Period) -> usize {
    match period {
        Period::Hour => 48,
        Period::Day => 62,
        Period::Week => 26,
        Period::Month => 24,
        Period::All | Period::Rolling(_) | Period::Trending(_) => 0,
    }
}

/// The ranking's rows, each with its rank change against the bucket before (`pages`:
/// the bucket's top, then the previous bucket's when there is one).
fn ranking_rows(l: Lang, pages: &[Top]) -> Vec<LiveRow> {
    let previous_ranks: HashMap<&str, i64> = pages
        .get(1)
        .map(|p| {
            p.entries
                .iter()
                .map(|e| (e.member.as_str(), e.rank))
                .collect()
        })
        .unwrap_or_default();
    // A trending period's decayed scores move every moment: three decimals say enough.
    let decays = Period::parse(&pages[0].period).is_ok_and(|p| p.trending().is_some());
    pages[0]
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
                score: match e.score.as_f64() {
                    Some(score) if decays => format!("{score:.3}"),
                    _ => e.score.to_string(),
                },
                change,
                change_class,
            }
        })
        .collect()
}

/// The live view's four charts, with their titles.
struct Charts {
    votes_title: String,
    votes_chart: String,
    participants_title: String,
    participants_chart: String,
    top_chart: String,
    refusals_title: String,
    refusals_chart: String,
}

/// Draws the charts of `sel`'s bucket: votes and refusals per step across it, the top
/// 10 of `current`, participants per bucket up to it.
fn charts(
    l: Lang,
    sel: &Selection,
    current: &Top,
    activity: &activity::Activity,
    now: DateTime<Utc>,
) -> Charts {
    let config = &sel.board.config;
    let tz = config.board.settings.timezone;
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
    let (participants_title, participants_chart) =
        participants_chart(l, &activity.participants, tz, now);
    Charts {
        votes_title,
        votes_chart,
        participants_title,
        participants_chart,
        top_chart,
        refusals_title,
        refusals_chart,
    }
}

/// Participants per bucket, with the chart's title.
fn participants_chart(
    l: Lang,
    participants: &[(Bucket, i64)],
    tz: chrono_tz::Tz,
    now: DateTime<Utc>,
) -> (String, String) {
    let Some((first, _)) = participants.first() else {
        return (
            l.tr("chart-participants", &[("period", "day".into())]),
            format!("<p class=\"muted\">{}</p>", l.t("chart-no-periods")),
        );
    };
    let period = first.period;
    let title = l.tr("chart-participants", &[("period", period.as_str().into())]);
    let buckets: Vec<&Bucket> = participants.iter().map(|(b, _)| b).collect();
    let crosses = period == Period::Hour;
    let chart = charts::Lines {
        title: &title,
        unit: &l.t("chart-unit-voters"),
        axis: &l.tr(
            "chart-axis",
            &[
                ("step", period.as_str().into()),
                ("zone", l.zone(tz).into()),
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
            values: participants.iter().map(|(_, n)| Some(*n as f64)).collect(),
        }],
        lang: l,
    }
    .render();
    (title, chart)
}

/// The bucket picker, newest first (the selected bucket marked), and the bucket after
/// the selected one when it has begun.
fn picker(
    sel: &Selection,
    tz: chrono_tz::Tz,
    now: DateTime<Utc>,
) -> (Vec<(String, bool)>, Option<String>) {
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
    (buckets, next)
}

/// Everything the live block shows.
async fn live_page(
    state: &AppState,
    chrome: Chrome,
    board: BoardRef,
    query: &LiveQuery,
) -> Result<BoardPage, PageError> {
    let l = chrome.l;
    let now = Utc::now();
    let sel = query.select(board.clone())?;
    let settings = board.settings();
    let tz = settings.timezone;
    let zone = l.zone(tz);
    let mut selections = vec![sel.clone()];
    if let Some(previous) = sel.bucket.previous(tz) {
        selections.push(Selection {
            bucket: previous,
            ..sel.clone()
        });
    }
    let pages = leaderboard::tops(state, &selections, 0, LIVE_TOP).await?;
    let rows = ranking_rows(l, &pages);
    let current = &pages[0];
    let activity = activity::activity(state, &sel, now).await?;
    let votes = leaderboard::bucket_votes(state, &sel).await?;
    let charts = charts(l, &sel, current, &activity, now);
    let (buckets, next) = picker(&sel, tz, now);

    Ok(BoardPage {
        l,
        user: chrome.user,
        csrf: chrome.csrf,
        flash: chrome.flash,
        slug: board.name(),
        config_slug: board.config.board.slug.to_string(),
        instance: board.instance.is_some(),
        title: settings.title.clone(),
        public: settings.public_page && settings.instances.is_none_or(|i| i.pages),
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
        votes: votes.map(|n| {
            l.tr(
                "live-votes",
                &[("count", n.into()), ("shown", l.number(n as f64, 0).into())],
            )
        }),
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
        charts,
        share: None,
    })
}

/// A board's live view; a family's page lists its live instances instead.
pub(super) async fn get_board(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    req: HttpRequest,
    path: web::Path<String>,
) -> Result<HttpResponse, PageError> {
    let chrome = Chrome::of(&session, &user);
    let name = boards::parse_name(&path)?;
    let config = engine::board_of(&state, &name.slug)?;
    if config.board.settings.instances.is_some() && name.instance.is_none() {
        let query = web::Query::<FamilyQuery>::from_query(req.query_string())
            .map_err(|e| PageError::BadRequest(e.to_string()))?;
        return family_page(&state, chrome, config, query.into_inner()).await;
    }
    let query = web::Query::<LiveQuery>::from_query(req.query_string())
        .map_err(|e| PageError::BadRequest(e.to_string()))?;
    let board = BoardRef::of(config, &name)?;
    let share = Share::of(&req, &board);
    let mut page = live_page(&state, chrome, board, &query).await?;
    page.share = share;
    html(&page)
}

/// The live block alone, polled by htmx every two seconds.
pub(super) async fn get_live(
    state: web::Data<AppState>,
    session: Session,
    user: AdminUser,
    req: HttpRequest,
    path: web::Path<String>,
    query: web::Query<LiveQuery>,
) -> Result<HttpResponse, PageError> {
    let board = ranked_board(&state, &path)?;
    let page = live_page(&state, Chrome::of(&session, &user), board, &query).await?;
    if is_htmx(&req) {
        html(&page.as_live())
    } else {
        html(&page)
    }
}

/// The live block of the current bucket as server-sent events (`event: live`): when the
/// stream opens, whenever the board's top 100 changes, and every 15 seconds when it does
/// not (the charts of refusals and votes move without it). Made once per change and
/// language for every viewer. The session is checked when the stream opens.
pub(super) async fn stream_live(
    state: web::Data<AppState>,
    user: AdminUser,
    path: web::Path<String>,
    query: web::Query<LiveQuery>,
) -> Result<HttpResponse, PageError> {
    let board = ranked_board(&state, &path)?;
    let query = LiveQuery {
        at: None,
        paused: None,
        ..query.into_inner()
    };
    let sel = query.select(board.clone())?;
    let subscription = events::subscribe(&state, &Viewer::Dashboard, &sel, LIVE_TOP, None).await?;
    let state = state.get_ref().clone();
    let l = user.lang;
    let label = board.config.board.slug.to_string();
    let render = move |update: Update| {
        let (state, board, query, sel) = (state.clone(), board.clone(), query.clone(), sel.clone());
        async move {
            let version = match update.top() {
                Some(top) => format!("{:x}", top.fingerprint()),
                None => format!("quiet-{}", Utc::now().timestamp() / 15),
            };
            let key = format!(
                "live-push:{}:{}:{}:{}:{version}",
                board.cache_id(),
                sel.bucket.period,
                sel.view.as_str(),
                l.tag(),
            );
            let block = state
                .reads
                .get_or_make(key, || async {
                    let chrome = Chrome {
                        l,
                        user: String::new(),
                        csrf: String::new(),
                        flash: None,
                    };
                    let page = live_page(&state, chrome, board, &query)
                        .await
                        .map_err(|e| anyhow::anyhow!("failed to make the live view: {e}"))?;
                    Ok(page
                        .as_live()
                        .render()
                        .map_err(|e| anyhow::anyhow!("failed to render the live view: {e}"))?
                        .into())
                })
                .await
                .map_err(std::io::Error::other)?;
            Ok((text_frame("live", &String::from_utf8_lossy(&block)), 1))
        }
    };
    Ok(event_stream(stream(label, subscription, render)))
}
