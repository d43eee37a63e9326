//! Reading rankings: tops, one member's standing, neighbours, several at once, stats.
//!
//! Ranks are competition ranks: ties share the better rank (1, 2, 2, 4).

use std::sync::Arc;

use chrono::{DateTime, Duration, DurationRound, Utc};

use super::error::EngineError;
use crate::domain::auth::Scope;
use crate::domain::board::Membership;
use crate::domain::code::Code;
use crate::domain::ids::{BoardName, MemberId};
use crate::domain::percentile::{Percent, percentile};
use crate::domain::period::{self, Bucket, Period};
use crate::domain::score::View;
use crate::domain::scoring::{Scoring, Storage, to_points};
use crate::engine::auth::Caller;
use crate::engine::boards::{self, BoardRef};
use crate::engine::config::BoardConfig;
use crate::engine::state::AppState;
use crate::store::redis::window::{WindowAt, WindowPageQuery};
use crate::store::redis::{
    PageQuery, PageReply, SHARDED_MAX_DEPTH, StandingQuery, StandingReply, TrendPageQuery,
};
use crate::store::sql::archive::{self, ArchivedBucket};

/// Entries per page at most.
pub const MAX_LIMIT: i64 = 1000;
/// Members or boards per batch read at most.
pub const MAX_BATCH: usize = 100;
/// Neighbours on each side at most.
pub const MAX_RADIUS: i64 = 100;
/// The furthest a page may start: far beyond any board's size, and small enough that
/// `offset + limit` stays exact in Lua's numbers.
pub const MAX_OFFSET: i64 = 1_000_000_000;

/// Which bucket of which view a read looks at.
#[derive(Debug, Clone)]
pub struct Selection {
    pub board: BoardRef,
    pub bucket: Bucket,
    pub view: View,
}

impl Selection {
    /// A stored score as the number the API shows: votes in the view's units, or a
    /// scores board's points with its decimals.
    pub fn points(&self, units: i64) -> serde_json::Number {
        match self.board.settings().scoring {
            Scoring::Votes => self.view.to_votes(units),
            Scoring::Scores { decimals } => to_points(units, decimals),
        }
    }

    /// A trending period's decayed score (units, not whole) as the number the API shows.
    pub fn decayed_points(&self, units: f64) -> serde_json::Number {
        let per_point = match self.board.settings().scoring {
            Scoring::Votes => self.view.units_per_vote() as f64,
            Scoring::Scores { decimals } => 10f64.powi(i32::from(decimals)),
        };
        serde_json::Number::from_f64(units / per_point).unwrap_or_else(|| 0.into())
    }
}

/// A score a read answers: units, or a trending period's decayed units.
pub(crate) trait ReadScore: Copy + PartialEq + Default {
    /// As the number the API shows for `sel`.
    fn number(self, sel: &Selection) -> serde_json::Number;
    /// This score less `other`.
    fn less(self, other: Self) -> Self;
}

impl ReadScore for i64 {
    fn number(self, sel: &Selection) -> serde_json::Number {
        sel.points(self)
    }

    fn less(self, other: Self) -> Self {
        self - other
    }
}

impl ReadScore for f64 {
    fn number(self, sel: &Selection) -> serde_json::Number {
        sel.decayed_points(self)
    }

    fn less(self, other: Self) -> Self {
        self - other
    }
}

/// Finds the board `raw` names, as a whole (a family's own settings too), and checks the
/// caller may read it: a key with the read scope, or none at all when the board has a
/// public page.
pub fn readable_config(
    state: &AppState,
    caller: Option<&Caller>,
    raw: &str,
) -> Result<(Arc<BoardConfig>, BoardName), EngineError> {
    let name = boards::parse_name(raw)?;
    let board = boards::board_of(state, &name.slug);
    match caller {
        Some(c) => {
            c.require(Scope::Read)?;
            c.reach_board(&name.slug)?;
        }
        None if board.as_ref().is_ok_and(|b| b.board.settings.public_page) => {}
        None => {
            return Err(EngineError::Unauthorized(
                "this board is not public: use an API key".into(),
            ));
        }
    }
    Ok((board?, name))
}

/// Finds the board whose rankings `raw` names (a plain board, or an instance of a
/// family) and checks the caller may read it, as [`readable_config`].
pub fn readable_board(
    state: &AppState,
    caller: Option<&Caller>,
    raw: &str,
) -> Result<BoardRef, EngineError> {
    let (config, name) = readable_config(state, caller, raw)?;
    BoardRef::of(config, &name)
}

/// Resolves `period`, `at` and `view` query values against a board.
pub fn select(
    board: BoardRef,
    period: Option<&str>,
    at: Option<&str>,
    view: Option<&str>,
) -> Result<Selection, EngineError> {
    let settings = board.settings();
    let period = match period {
        Some(p) => Period::parse(p)?,
        None => Period::default_of(&settings.periods),
    };
    if !settings.periods.contains(&period) {
        return Err(EngineError::invalid(
            Code::PeriodNotEnabled,
            format!("board {} does not keep {period} rankings", board.name()),
        ));
    }
    let bucket = match at {
        Some(at) => Bucket::parse(period, settings.timezone, at)?,
        None => Bucket::containing(period, settings.timezone, Utc::now())?,
    };
    let view = view.map(View::parse).transpose()?.unwrap_or(View::Display);
    // A scores board has one view: both names read it.
    let view = if settings.scoring.is_scores() {
        View::Real
    } else {
        view
    };
    Ok(Selection {
        board,
        bucket,
        view,
    })
}

/// One ranked entry.
#[derive(Debug, Clone)]
pub struct TopEntry {
    pub rank: i64,
    pub member: String,
    pub name: Option<String>,
    pub image_url: Option<String>,
    pub score: serde_json::Number,
}

/// A page of a board.
#[derive(Debug, Clone)]
pub struct Top {
    pub board: String,
    pub period: String,
    pub bucket: String,
    pub view: String,
    /// When the bucket ends (RFC 3339); null for `all` and rolling windows.
    pub resets_at: Option<DateTime<Utc>>,
    /// Rolling windows only: what the read covered.
    pub window: Option<ReadSpan>,
    /// Members with a score in the bucket.
    pub total_members: i64,
    /// Distinct voters in the bucket (HyperLogLog estimate).
    pub participants: i64,
    pub offset: i64,
    pub entries: Vec<TopEntry>,
    /// Present (`true`) when the bucket was read from the archive: it left Redis. The
    /// archive keeps each bucket's best `archive_top` entries.
    pub archived: bool,
}

/// The span a rolling window's read covered: from the start of the oldest slot counted
/// to the time of the read.
#[derive(Debug, Clone)]
pub struct ReadSpan {
    pub from: DateTime<Utc>,
    pub to: DateTime<Utc>,
}

/// What one page read asks: the selection, the offset (or radius around `anchor`) and
/// the limit.
#[derive(Clone, Copy)]
struct PageAsk<'a> {
    sel: &'a Selection,
    offset: i64,
    limit: i64,
    anchor: Option<&'a str>,
}

/// Reads pages in order: buckets through `page.lua`, rolling windows through
/// `window_page.lua`, which first brings the window to now; one round trip per kind.
async fn read_pages(
    state: &AppState,
    asks: &[PageAsk<'_>],
) -> Result<Vec<(PageReply, bool)>, EngineError> {
    let redis = &state.redis;
    let now = Utc::now();
    let (mut buckets, mut windows) = (Vec::new(), Vec::new());
    for ask in asks {
        let anchor = ask.anchor.map(str::to_owned);
        match ask.sel.bucket.period.rolling() {
            Some(window) => windows.push(WindowPageQuery {
                window: WindowAt::new(
                    &ask.sel.board.keys,
                    window,
                    window.slot(ask.sel.board.settings().timezone, now),
                ),
                view: ask.sel.view,
                offset: ask.offset,
                limit: ask.limit,
                anchor,
            }),
            None => buckets.push(PageQuery {
                board: &ask.sel.board.keys,
                bucket: &ask.sel.bucket,
                view: ask.sel.view,
                offset: ask.offset,
                limit: ask.limit,
                anchor,
            }),
        }
    }
    let mut buckets = if buckets.is_empty() {
        Vec::new()
    } else {
        redis.pages(&buckets).await?
    }
    .into_iter();
    let mut windows = if windows.is_empty() {
        Vec::new()
    } else {
        redis.window_pages(&windows).await?
    }
    .into_iter();
    let mut pages = Vec::with_capacity(asks.len());
    for ask in asks {
        let page = match ask.sel.bucket.period.rolling() {
            Some(_) => windows.next(),
            None => buckets.next(),
        };
        let page = page.ok_or_else(|| anyhow::anyhow!("redis answered fewer pages than asked"))?;
        // A closed bucket Redis holds nothing of may be in the archive.
        if page.total_members == 0
            && ask.sel.board.archived()
            && closed(&ask.sel.bucket, now)
            && let Some(archived) = archive::read_bucket(
                &state.db,
                ask.sel.board.config.board.id,
                &ask.sel.bucket,
                ask.sel.view,
            )
            .await?
        {
            pages.push((archived_page(&archived, ask), true));
        } else {
            pages.push((page, false));
        }
    }
    Ok(pages)
}

/// Whether a bucket has ended: only those can be archived.
fn closed(bucket: &Bucket, now: DateTime<Utc>) -> bool {
    bucket.end.is_some_and(|end| end <= now)
}

/// A page of an archived bucket, as `page.lua` answers one of a live bucket.
fn archived_page(archived: &ArchivedBucket, ask: &PageAsk<'_>) -> PageReply {
    let entries = &archived.entries;
    let from = match ask.anchor {
        None => Some((ask.offset as usize).min(entries.len())),
        // As around a member in Redis: up to `radius` entries above it.
        Some(anchor) => entries
            .iter()
            .position(|e| e.member == anchor)
            .map(|j| j - (ask.offset as usize).min(j)),
    };
    let (offset, page) = match from {
        Some(from) => {
            let to = (from + ask.limit as usize).min(entries.len());
            (Some(from as i64), &entries[from..to])
        }
        None => (None, &entries[..0]),
    };
    PageReply {
        total_members: archived.total_members,
        participants: archived.participants,
        offset,
        first_rank: page.first().map_or(0, |e| e.rank),
        entries: page.iter().map(|e| (e.member.clone(), e.units)).collect(),
    }
}

/// The competition rank of each entry of a page: equal scores share a rank, the next
/// score's rank counts every entry before it.
pub(crate) fn ranks<S: PartialEq>(page: &PageReply<S>) -> Vec<i64> {
    let offset = page.offset.unwrap_or(0);
    let mut previous: Option<(&S, i64)> = None; // (score, rank)
    page.entries
        .iter()
        .enumerate()
        .map(|(i, (_, units))| {
            let rank = match previous {
                None => page.first_rank,
                Some((prev_units, prev_rank)) if prev_units == units => prev_rank,
                Some(_) => offset + i as i64 + 1,
            };
            previous = Some((units, rank));
            rank
        })
        .collect()
}

fn top_response<S: ReadScore>(sel: &Selection, page: PageReply<S>, archived: bool) -> Top {
    let offset = page.offset.unwrap_or(0);
    let ranks = ranks(&page);
    let mut entries: Vec<TopEntry> = Vec::with_capacity(page.entries.len());
    for ((member, units), rank) in page.entries.into_iter().zip(ranks) {
        let info = MemberId::parse(&member)
            .ok()
            .and_then(|id| sel.board.config.members.get(&id));
        entries.push(TopEntry {
            rank,
            name: info.map(|m| m.name.clone()),
            image_url: info.and_then(|m| m.image_url.clone()),
            member,
            score: units.number(sel),
        });
    }
    Top {
        board: sel.board.name(),
        period: sel.bucket.period.to_string(),
        bucket: sel.bucket.label.clone(),
        view: sel.view.as_str().to_owned(),
        resets_at: sel.bucket.end,
        window: sel
            .bucket
            .period
            .rolling()
            .and(sel.bucket.start)
            .map(|from| ReadSpan {
                from,
                to: Utc::now(),
            }),
        total_members: page.total_members,
        participants: page.participants,
        offset,
        entries,
        archived,
    }
}

/// Checks `offset` and `limit` of a page.
pub fn check_page(offset: i64, limit: i64) -> Result<(), EngineError> {
    if !(1..=MAX_LIMIT).contains(&limit) {
        return Err(EngineError::invalid_field(
            "limit",
            format!("limit must be between 1 and {MAX_LIMIT}"),
        ));
    }
    if !(0..=MAX_OFFSET).contains(&offset) {
        return Err(EngineError::invalid_field(
            "offset",
            format!("offset must be between 0 and {MAX_OFFSET}"),
        ));
    }
    Ok(())
}

/// Pages of several selections, in one round trip.
pub async fn tops(
    state: &AppState,
    selections: &[Selection],
    offset: i64,
    limit: i64,
) -> Result<Vec<Top>, EngineError> {
    check_page(offset, limit)?;
    if offset + limit > SHARDED_MAX_DEPTH
        && selections
            .iter()
            .any(|s| s.board.settings().storage.is_sharded())
    {
        return Err(EngineError::invalid_field(
            "offset",
            format!(
                "a sharded board pages at most {SHARDED_MAX_DEPTH} members deep (offset + limit)"
            ),
        ));
    }
    let asks: Vec<PageAsk<'_>> = selections
        .iter()
        .map(|sel| PageAsk {
            sel,
            offset,
            limit,
            anchor: None,
        })
        .collect();
    read_tops(state, &asks).await
}

/// The pages `asks` ask for as answers, in order: trending periods' decayed to now, the
/// others through [`read_pages`].
async fn read_tops(state: &AppState, asks: &[PageAsk<'_>]) -> Result<Vec<Top>, EngineError> {
    let (trending, bucketed): (Vec<PageAsk<'_>>, Vec<PageAsk<'_>>) = asks
        .iter()
        .partition(|ask| ask.sel.bucket.period.trending().is_some());
    let mut pages = if bucketed.is_empty() {
        Vec::new()
    } else {
        read_pages(state, &bucketed).await?
    }
    .into_iter();
    let now_ms = Utc::now().timestamp_millis();
    let queries: Vec<TrendPageQuery<'_>> = trending
        .iter()
        .filter_map(|ask| {
            Some(TrendPageQuery {
                board: &ask.sel.board.keys,
                half_life: ask.sel.bucket.period.trending()?,
                view: ask.sel.view,
                offset: ask.offset,
                limit: ask.limit,
                anchor: ask.anchor.map(str::to_owned),
                now_ms,
            })
        })
        .collect();
    let mut decayed = if queries.is_empty() {
        Vec::new()
    } else {
        state.redis.trend_pages(&queries).await?
    }
    .into_iter();
    asks.iter()
        .map(|ask| {
            let missing = || anyhow::anyhow!("redis answered fewer pages than asked");
            Ok(if ask.sel.bucket.period.trending().is_some() {
                top_response(ask.sel, decayed.next().ok_or_else(missing)?, false)
            } else {
                let (page, archived) = pages.next().ok_or_else(missing)?;
                top_response(ask.sel, page, archived)
            })
        })
        .collect()
}

/// The member and `radius` neighbours on each side.
pub async fn around(
    state: &AppState,
    sel: &Selection,
    member: &MemberId,
    radius: i64,
) -> Result<Top, EngineError> {
    if !(0..=MAX_RADIUS).contains(&radius) {
        return Err(EngineError::invalid_field(
            "radius",
            format!("radius must be between 0 and {MAX_RADIUS}"),
        ));
    }
    check_member(sel, member)?;
    let ask = PageAsk {
        sel,
        offset: radius,
        limit: 2 * radius + 1,
        anchor: Some(member.as_str()),
    };
    let top = read_tops(state, &[ask]).await?.into_iter().next();
    Ok(top.ok_or_else(|| anyhow::anyhow!("redis answered no page"))?)
}

/// The nearest member with a strictly higher score.
#[derive(Debug, Clone)]
pub struct AboveMember {
    pub member: String,
    pub rank: i64,
    pub score: serde_json::Number,
    /// Their score minus this member's.
    pub gap: serde_json::Number,
}

/// The same member in the bucket before.
#[derive(Debug, Clone)]
pub struct PreviousStanding {
    pub bucket: String,
    pub rank: Option<i64>,
    pub score: serde_json::Number,
    /// `up`, `down`, `same`, or `new` when the member had no score then.
    pub trend: &'static str,
}

/// One member's standing.
#[derive(Debug, Clone)]
pub struct MemberStanding {
    pub board: String,
    pub period: String,
    pub bucket: String,
    pub view: String,
    pub member: String,
    pub name: Option<String>,
    /// Null when the member has no score in the bucket, or (top_n boards) when it is
    /// outside the ranked members.
    pub rank: Option<i64>,
    /// top_n boards, for a member with a score outside the ranked members: how many are
    /// ranked (its rank is beyond that).
    pub rank_beyond: Option<i64>,
    pub score: serde_json::Number,
    /// Distinct voters for this member in the bucket; null for rolling windows, which
    /// count distinct voters for the whole board only.
    pub participants: Option<i64>,
    /// 100 × members with a strictly lower score / members with a score, two decimals;
    /// null without a rank.
    pub percentile: Option<f64>,
    /// Votes cast for the member in the bucket (its real-view score, whatever the view
    /// read); null on a scores board.
    pub votes: Option<i64>,
    /// Absent at rank 1.
    pub above: Option<AboveMember>,
    /// Absent for `all`.
    pub previous: Option<PreviousStanding>,
    /// Present (`true`) when the standing was read from the archive.
    pub archived: bool,
}

/// How many members a top share of `sel`'s ranking holds (at least 1, at most
/// [`MAX_LIMIT`]): read from the bucket's member count.
pub async fn share_limit(
    state: &AppState,
    sel: &Selection,
    share: Percent,
) -> Result<i64, EngineError> {
    let total = tops(state, std::slice::from_ref(sel), 0, 1)
        .await?
        .first()
        .map_or(0, |page| page.total_members);
    Ok(share.of(total).clamp(1, MAX_LIMIT))
}

/// Refuses a member that is not on a closed board.
pub fn check_member(sel: &Selection, member: &MemberId) -> Result<(), EngineError> {
    if sel.board.settings().membership == Membership::Closed
        && !sel.board.config.members.contains_key(member)
    {
        return Err(EngineError::not_found(
            Code::MemberNotFound,
            format!("{member} is not a member of board {}", sel.board.name()),
        ));
    }
    Ok(())
}

/// Standings of several members of one selection, in one round trip.
pub async fn standings(
    state: &AppState,
    sel: &Selection,
    members: &[MemberId],
) -> Result<Vec<MemberStanding>, EngineError> {
    if members.len() > MAX_BATCH {
        return Err(EngineError::too_large(
            Code::TooManyMembers,
            format!("at most {MAX_BATCH} members at once"),
        ));
    }
    for m in members {
        check_member(sel, m)?;
    }
    if sel.bucket.period.rolling().is_some() {
        // Bring the window to now, so the totals read below count no expired slot.
        let ask = PageAsk {
            sel,
            offset: 0,
            limit: 1,
            anchor: None,
        };
        read_pages(state, &[ask]).await?;
    }
    let previous = sel.bucket.previous(sel.board.settings().timezone);
    let queries: Vec<StandingQuery> = members
        .iter()
        .map(|m| StandingQuery {
            board: &sel.board.keys,
            bucket: &sel.bucket,
            previous: previous.as_ref(),
            view: sel.view,
            member: m.as_str(),
        })
        .collect();
    if sel.bucket.period.trending().is_some() {
        // No bucket before, no archive: the decayed scores as they are now.
        let now_ms = Utc::now().timestamp_millis();
        let replies = state.redis.trend_standings(&queries, now_ms).await?;
        return Ok(members
            .iter()
            .zip(replies)
            .map(|(m, r)| member_response(sel, None, m, r))
            .collect());
    }
    let mut replies = state.redis.standings(&queries).await?;
    // Members a closed bucket in Redis has no score for may be in its archive.
    let mut archived = false;
    if sel.board.archived()
        && closed(&sel.bucket, Utc::now())
        && replies.iter().any(|r| r.score.is_none())
        && let Some(bucket) =
            archive::read_bucket(&state.db, sel.board.config.board.id, &sel.bucket, sel.view)
                .await?
    {
        archived = bucket.left_redis(Utc::now());
        let mut from_archive = Vec::new();
        for (i, (m, r)) in members.iter().zip(replies.iter_mut()).enumerate() {
            if r.score.is_none()
                && let Some(standing) = archived_standing(&bucket, m.as_str())
            {
                archived = true;
                from_archive.push(i);
                *r = StandingReply {
                    previous_score: r.previous_score,
                    previous_rank: r.previous_rank,
                    ..standing
                };
            }
        }
        // A member's votes are its real-view score: the archive keeps each view apart.
        if !from_archive.is_empty() {
            let other = match sel.view {
                View::Real => None,
                View::Display => {
                    let id = sel.board.config.board.id;
                    archive::read_bucket(&state.db, id, &sel.bucket, View::Real).await?
                }
            };
            let real = other.as_ref().unwrap_or(&bucket);
            for i in from_archive {
                let member = members[i].as_str();
                replies[i].votes = real
                    .entries
                    .iter()
                    .find(|e| e.member == member)
                    .map(|e| e.units);
            }
        }
    }
    Ok(members
        .iter()
        .zip(replies)
        .map(|(m, r)| MemberStanding {
            archived,
            ..member_response(sel, previous.as_ref(), m, r)
        })
        .collect())
}

/// A member's standing in an archived bucket: its entry, and the nearest entry with a
/// higher score; `None` when the archive has no entry for it.
fn archived_standing(bucket: &ArchivedBucket, member: &str) -> Option<StandingReply> {
    let entries = &bucket.entries;
    let j = entries.iter().position(|e| e.member == member)?;
    let mine = &entries[j];
    let above = entries[..j]
        .iter()
        .rev()
        .find(|e| e.units > mine.units)
        .map(|e| (e.member.clone(), e.units, e.rank));
    // The archive keeps a bucket's best entries: every member at or above this one.
    let at_or_above = entries.iter().filter(|e| e.units >= mine.units).count() as i64;
    Some(StandingReply {
        score: Some(mine.units),
        rank: Some(mine.rank),
        above,
        previous_score: None,
        previous_rank: None,
        participants: mine.voters,
        lower: Some(bucket.total_members - at_or_above),
        total: bucket.total_members,
        votes: None,
    })
}

fn member_response<S: ReadScore>(
    sel: &Selection,
    previous: Option<&Bucket>,
    member: &MemberId,
    r: StandingReply<S>,
) -> MemberStanding {
    let units = r.score.unwrap_or_default();
    let rank = r.rank;
    let rank_beyond = match sel.board.settings().storage {
        Storage::TopN { retain, .. } if r.score.is_some() && rank.is_none() => Some(retain),
        _ => None,
    };
    MemberStanding {
        board: sel.board.name(),
        period: sel.bucket.period.to_string(),
        bucket: sel.bucket.label.clone(),
        view: sel.view.as_str().to_owned(),
        member: member.to_string(),
        name: sel.board.config.members.get(member).map(|m| m.name.clone()),
        rank,
        rank_beyond,
        score: units.number(sel),
        participants: sel
            .bucket
            .period
            .rolling()
            .is_none()
            .then_some(r.participants),
        percentile: r.lower.and_then(|lower| percentile(lower, r.total)),
        votes: r
            .votes
            .filter(|_| !sel.board.settings().scoring.is_scores()),
        above: r.above.map(|(member, above_units, rank)| AboveMember {
            member,
            rank,
            score: above_units.number(sel),
            gap: above_units.less(units).number(sel),
        }),
        previous: previous.map(|bucket| {
            let prev_rank = r.previous_rank;
            let trend = match (rank, prev_rank) {
                (_, None) => "new",
                (None, Some(_)) => "down",
                (Some(now), Some(then)) if now < then => "up",
                (Some(now), Some(then)) if now > then => "down",
                _ => "same",
            };
            PreviousStanding {
                bucket: bucket.label.clone(),
                rank: prev_rank,
                score: r.previous_score.unwrap_or_default().number(sel),
                trend,
            }
        }),
        archived: false,
    }
}

/// Most buckets one history answers.
pub const MAX_HISTORY: i64 = 100;

/// A member in one bucket of its history.
#[derive(Debug, Clone)]
pub struct HistoryItem {
    pub bucket: String,
    pub starts_at: Option<DateTime<Utc>>,
    /// Null without a score in the bucket (or outside what was ranked or archived).
    pub rank: Option<i64>,
    pub score: serde_json::Number,
    /// Whether this bucket was read from the archive.
    pub archived: bool,
}

/// A member's rank and score per bucket, newest first.
#[derive(Debug, Clone)]
pub struct History {
    pub board: String,
    pub member: String,
    pub period: String,
    pub view: String,
    pub buckets: Vec<HistoryItem>,
}

/// A member's rank and score in the `limit` buckets of `sel`'s period up to `sel`'s
/// bucket, newest first: live buckets from Redis, archived ones from SQL.
pub async fn history(
    state: &AppState,
    sel: &Selection,
    member: &MemberId,
    limit: i64,
) -> Result<History, EngineError> {
    if !sel.bucket.period.is_periodic() {
        return Err(EngineError::invalid(
            Code::InvalidPeriod,
            "a history needs a calendar period: hour, day, week or month",
        ));
    }
    if !(1..=MAX_HISTORY).contains(&limit) {
        return Err(EngineError::invalid_field(
            "limit",
            format!("limit must be between 1 and {MAX_HISTORY}"),
        ));
    }
    check_member(sel, member)?;
    let tz = sel.board.settings().timezone;
    let mut buckets = vec![sel.bucket.clone()];
    while (buckets.len() as i64) < limit {
        match buckets.last().and_then(|b| b.previous(tz)) {
            Some(before) => buckets.push(before),
            None => break,
        }
    }
    let queries: Vec<StandingQuery> = buckets
        .iter()
        .map(|bucket| StandingQuery {
            board: &sel.board.keys,
            bucket,
            previous: None,
            view: sel.view,
            member: member.as_str(),
        })
        .collect();
    let replies = state.redis.standings(&queries).await?;
    let now = Utc::now();
    let missing: Vec<String> = buckets
        .iter()
        .zip(&replies)
        .filter(|(b, r)| sel.board.archived() && r.score.is_none() && closed(b, now))
        .map(|(b, _)| b.label.clone())
        .collect();
    let archived: std::collections::HashMap<String, archive::ArchivedEntry> = if missing.is_empty()
    {
        Default::default()
    } else {
        archive::member_entries(
            &state.db,
            sel.board.config.board.id,
            sel.bucket.period,
            &missing,
            sel.view,
            member.as_str(),
        )
        .await?
        .into_iter()
        .collect()
    };
    Ok(History {
        board: sel.board.name(),
        member: member.to_string(),
        period: sel.bucket.period.to_string(),
        view: sel.view.as_str().to_owned(),
        buckets: buckets
            .iter()
            .zip(replies)
            .map(|(bucket, r)| match archived.get(&bucket.label) {
                Some(entry) if r.score.is_none() => HistoryItem {
                    bucket: bucket.label.clone(),
                    starts_at: bucket.start,
                    rank: Some(entry.rank),
                    score: sel.points(entry.units),
                    archived: true,
                },
                _ => HistoryItem {
                    bucket: bucket.label.clone(),
                    starts_at: bucket.start,
                    rank: r.rank,
                    score: sel.points(r.score.unwrap_or(0)),
                    archived: false,
                },
            })
            .collect(),
    })
}

/// Votes in one hour.
#[derive(Debug, Clone)]
pub struct HourCount {
    /// Start of the hour (RFC 3339, UTC).
    pub hour: DateTime<Utc>,
    pub votes: i64,
    /// Votes refused by rate-limit rules in this hour, per rule (the refusing rule only).
    pub refused: Vec<RuleCount>,
}

/// Votes one rule refused.
#[derive(Debug, Clone)]
pub struct RuleCount {
    pub rule: i64,
    pub votes: i64,
}

/// Activity of a board.
#[derive(Debug, Clone)]
pub struct Stats {
    pub board: String,
    pub period: String,
    pub bucket: String,
    /// Distinct voters in the bucket.
    pub participants: i64,
    /// Members with a score in the bucket (real view).
    pub total_members: i64,
    /// Votes counted in the bucket (its real view's sum; a trending period's: the
    /// all-time bucket's); `None` on a scores board, for a rolling window, for a trending
    /// period without `all`, and for a bucket that began before the board counted them.
    pub votes: Option<i64>,
    /// The last 48 hours, oldest first, ending with the current hour.
    pub votes_per_hour: Vec<HourCount>,
}

/// Votes counted in the selected bucket (its real view's sum, adjustments included); a
/// trending period's are the all-time bucket's. `None` on a scores board, for a rolling
/// window, for a trending period on a board without `all`, and for a bucket that began
/// before the board counted them.
pub async fn bucket_votes(state: &AppState, sel: &Selection) -> Result<Option<i64>, EngineError> {
    let board = &sel.board.config.board;
    let bucket = match sel.bucket.period {
        Period::Trending(_) if board.settings.periods.contains(&Period::All) => Bucket::all(),
        Period::Rolling(_) | Period::Trending(_) => return Ok(None),
        _ => sel.bucket.clone(),
    };
    if board.settings.scoring.is_scores() || !board.counts_votes_of(&bucket) {
        return Ok(None);
    }
    Ok(Some(
        state.redis.bucket_votes(&sel.board.keys, &bucket).await?,
    ))
}

/// Hours of history in stats.
pub const STATS_HOURS: i64 = 48;

/// Participants, members and votes of a bucket, and votes and refusals per hour over the
/// last 48 hours. (People and votes are different counts: a bucket's `votes` is what its
/// real view adds up to, adjustments included.)
pub async fn stats(state: &AppState, sel: &Selection) -> Result<Stats, EngineError> {
    let redis = &state.redis;
    let now = Utc::now()
        .duration_trunc(Duration::hours(1))
        .unwrap_or_else(|_| Utc::now());
    let hours: Vec<DateTime<Utc>> = (0..STATS_HOURS)
        .rev()
        .map(|h| now - Duration::hours(h))
        .collect();
    let fields: Vec<i64> = hours.iter().map(|h| period::epoch_hour(*h)).collect();
    let counts = redis.votes_per_hour(&sel.board.keys, &fields).await?;
    let refusals = redis.refusals(&sel.board.keys, &fields).await?;
    let (total_members, participants) = if sel.bucket.period.rolling().is_some() {
        let ask = PageAsk {
            sel,
            offset: 0,
            limit: 1,
            anchor: None,
        };
        let page = read_pages(state, &[ask]).await?.into_iter().next();
        let (page, _) = page.ok_or_else(|| anyhow::anyhow!("redis answered no page"))?;
        (page.total_members, page.participants)
    } else {
        redis.bucket_counts(&sel.board.keys, &sel.bucket).await?
    };
    let votes = bucket_votes(state, sel).await?;
    Ok(Stats {
        board: sel.board.name(),
        period: sel.bucket.period.to_string(),
        bucket: sel.bucket.label.clone(),
        participants,
        total_members,
        votes,
        votes_per_hour: hours
            .into_iter()
            .zip(counts)
            .zip(refusals)
            .map(|((hour, votes), refused)| HourCount {
                hour,
                votes,
                refused: refused
                    .into_iter()
                    .map(|(rule, votes)| RuleCount { rule, votes })
                    .collect(),
            })
            .collect(),
    })
}
