//! The public voting page `/b/{board}`: members with their rank and score, a vote button
//! each, period tabs, the visitor's remaining votes, in English or Chinese.
//!
//! The visitor is a random id in the signed session cookie; the IP is the connection's
//! (or a trusted proxy's); the channel is `web`; the terminal is `mobile` or `pc` from the
//! User-Agent, so rules per channel or device apply to the page too.
//!
//! The answer to a vote shows at the member voted for: with htmx the member's card is
//! swapped (and the quota lines with it); without JavaScript the form's 303 goes back to
//! the card's anchor, where the answer waits in the session. The ranking refreshes every
//! few seconds with htmx (`/b/{board}/ranking`, through the read cache, the same block
//! for every visitor), and on reload without it.
//!
//! The same routes serve under `/embed/b`: a compact page that only the sites in the
//! board's `embed_origins` may frame (`frame-ancestors`), with a session cookie of its
//! own that is sent in their frames.

use actix_session::Session;
use actix_web::http::Method;
use actix_web::http::header::USER_AGENT;
use actix_web::{HttpRequest, HttpResponse, web};
use askama::Template;
use chrono::Utc;
use serde::Deserialize;

use super::Router;
use super::admin::{html, is_htmx, see_other};
use super::forms::CsrfForm;
use super::session::{self, VoteNotice, csrf_token};
use crate::api::client_ip::ClientIp;
use crate::api::events::{Update, event_stream, keep_alive, stream, text_frame};
use crate::domain::auth::{Reach, Scope};
use crate::domain::board::Membership;
use crate::domain::code::Code;
use crate::domain::identity::Voters;
use crate::domain::ids::{BoardName, Channel, MemberId, Terminal, VoterId};
use crate::domain::limit::{Dimension, VoteValues, ip_subject};
use crate::domain::period::Period;
use crate::engine::auth::Caller;
use crate::engine::boards::BoardRef;
use crate::engine::config::BoardConfig;
use crate::engine::error::EngineError;
use crate::engine::events;
use crate::engine::identity;
use crate::engine::leaderboard::{self, MAX_LIMIT, Selection};
use crate::engine::limits::{self, QuotaRule};
use crate::engine::state::AppState;
use crate::engine::watchers::Viewer;
use crate::engine::writes;
use crate::error::PageError;
use crate::i18n::Lang;
use crate::metrics::WriteKind;

/// The channel votes from this page count for.
pub const WEB_CHANNEL: &str = "web";
/// Seconds between two refreshes of the ranking where it is polled, and that a vote's
/// answer stays on screen.
pub const REFRESH_S: u32 = 5;
/// Members an open board's page lists at most.
const OPEN_BOARD_LIST: usize = 100;

/// The voting page's routes, relative to `/b`.
pub fn routes(r: &mut impl Router) {
    r.add(Method::GET, "/{board}", get_page);
    r.add(Method::GET, "/{board}/ranking", get_ranking);
    r.add(Method::GET, "/{board}/stream", stream_ranking);
    r.add(Method::POST, "/{board}/vote", cast_vote);
}

/// One member's card.
struct Card {
    id: String,
    name: String,
    image_url: Option<String>,
    rank: Option<i64>,
    /// "1,234 votes", rounded to the board's `display_decimals` (at least a scores
    /// board's decimals).
    score: String,
    /// "Vote for Aria", for screen readers.
    vote_label: String,
    /// The answer to the visitor's vote for this member.
    notice: Option<VoteNotice>,
}

/// Where the voting page is served: on its own (`/b`) or for another site's frame
/// (`/embed/b`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Surface {
    Page,
    Embed,
}

impl Surface {
    fn of(req: &HttpRequest) -> Self {
        if req.path().starts_with("/embed/") {
            Self::Embed
        } else {
            Self::Page
        }
    }

    fn base(self) -> &'static str {
        match self {
            Self::Page => "/b",
            Self::Embed => "/embed/b",
        }
    }
}

/// What every card's form needs.
struct Cards {
    l: Lang,
    /// `/b` or `/embed/b`: where the forms and the refresh go.
    base: &'static str,
    slug: String,
    period: String,
    /// The CSRF field of each form; the block the ranking refreshes with has none (htmx
    /// sends the page's token as a header), so it is the same for every visitor.
    csrf: Option<String>,
    open: bool,
    /// A votes board: cards carry a vote button (a scores board's come from its API).
    votable: bool,
    members: Vec<Card>,
}

#[derive(Template)]
#[template(path = "public/board.html")]
struct BoardPage {
    l: Lang,
    csrf: String,
    flash: Option<String>,
    title: String,
    description: String,
    /// (period, label, selected)
    periods: Vec<(&'static str, String, bool)>,
    /// (tag, name, selected)
    langs: Vec<(&'static str, &'static str, bool)>,
    here: String,
    quota: Vec<String>,
    refresh_s: u32,
    cards: Cards,
    /// Set on a board whose page takes signed-in voters only.
    signin: Option<SignIn>,
}

/// What the page's sign-in (`static/js/signin.js`) needs.
struct SignIn {
    /// The board's name: the token is kept per board.
    board: String,
    /// The provider's sign-in, with `return_to` this page; `None` without a `login_url`.
    login: Option<String>,
    /// The claim that names the voter, to show which account votes.
    claim: String,
    /// Origins that may hand the token to an embedded page (`postMessage`).
    origins: String,
}

/// The sign-in of `board`'s page when it takes signed-in voters only: with its first
/// provider that has a `login_url` (else its first), returning to `here` on this host.
fn sign_in(state: &AppState, req: &HttpRequest, board: &BoardRef, here: &str) -> Option<SignIn> {
    let settings = board.settings();
    if settings.voters != Voters::SignedIn {
        return None;
    }
    let providers: Vec<_> = settings
        .providers
        .iter()
        .filter_map(|name| state.config.provider(name))
        .collect();
    let provider = providers
        .iter()
        .find(|p| p.spec.login_url.is_some())
        .or(providers.first())?;
    let back = format!("{}{here}", super::origin_of(req));
    let login = provider.spec.login_url.as_ref().map(|url| {
        let separator = if url.contains('?') { '&' } else { '?' };
        let back: String = url::form_urlencoded::byte_serialize(back.as_bytes()).collect();
        format!("{url}{separator}return_to={back}")
    });
    Some(SignIn {
        board: board.name().to_string(),
        login,
        claim: provider.spec.voter_claim.clone(),
        origins: settings.embed_origins.join(" "),
    })
}

/// The answer to an htmx vote: the member's card, and out of band the quota lines
/// (`static/js/live.js` keeps the card a whole refresh interval on screen).
#[derive(Template)]
#[template(path = "public/answer.html")]
struct Answer<'a> {
    cards: &'a Cards,
    m: &'a Card,
    quota: Vec<String>,
}

/// The board of a voting page: it must have `public_page` on (a family's room, also the
/// family's `instances.pages`), and to be embedded, sites listed in `embed_origins`.
pub(super) fn public_board(
    state: &AppState,
    raw: &str,
    surface: Surface,
) -> Result<BoardRef, PageError> {
    let missing = || PageError::NotFound("there is no such voting page".into());
    let name = BoardName::parse(raw).map_err(|_| missing())?;
    match state.config.board(&name.slug) {
        Some(board)
            if board.board.settings.public_page
                && board.board.settings.instances.is_none_or(|i| i.pages)
                && (surface == Surface::Page || !board.board.settings.embed_origins.is_empty()) =>
        {
            BoardRef::of(board, &name).map_err(|_| missing())
        }
        _ => Err(missing()),
    }
}

fn terminal(req: &HttpRequest) -> &'static str {
    let ua = req
        .headers()
        .get(USER_AGENT)
        .and_then(|v| v.to_str().ok())
        .unwrap_or("");
    if ua.contains("Mobi") || ua.contains("Android") {
        "mobile"
    } else {
        "pc"
    }
}

#[derive(Deserialize)]
struct PageQuery {
    period: Option<String>,
}

fn select(board: &BoardRef, period: Option<&str>) -> Result<Selection, PageError> {
    Ok(leaderboard::select(
        board.clone(),
        period.filter(|p| !p.is_empty()),
        None,
        None,
    )?)
}

/// The ranking of `sel` as cards (see [`cards_of`]).
async fn cards(
    state: &AppState,
    l: Lang,
    surface: Surface,
    sel: &Selection,
    csrf: Option<String>,
) -> Result<Cards, EngineError> {
    let top = leaderboard::tops(state, std::slice::from_ref(sel), 0, MAX_LIMIT)
        .await?
        .remove(0);
    let ranked = top
        .entries
        .iter()
        .map(|e| (e.member.as_str(), e.score.as_f64().unwrap_or_default()));
    Ok(cards_of(l, surface, sel, ranked, csrf))
}

/// `ranked` (members and scores, best first) as cards: disabled members left out and
/// ranks counted again without them (ties share a rank), so the list has no gaps; on a
/// closed board every other member follows, unranked.
fn cards_of<'a>(
    l: Lang,
    surface: Surface,
    sel: &Selection,
    ranked: impl Iterator<Item = (&'a str, f64)>,
    csrf: Option<String>,
) -> Cards {
    let config = &sel.board.config;
    let settings = &config.board.settings;
    // A scores board's own decimals are always shown: 12.5 points is not 12 or 13.
    let decimals = u32::from(settings.display_decimals.max(settings.scoring.decimals()));
    let card = |id: &str, name: String, image_url: Option<String>, rank, score: f64| Card {
        vote_label: l.tr("vote-for", &[("name", name.clone().into())]),
        score: l.tr(
            if settings.scoring.is_scores() {
                "points"
            } else {
                "score"
            },
            &[
                ("shown", l.number(score, decimals).into()),
                ("count", crate::i18n::Arg::Number(score)),
            ],
        ),
        id: id.to_owned(),
        name,
        image_url,
        rank,
        notice: None,
    };
    let mut members = Vec::new();
    let mut previous: Option<(f64, i64)> = None;
    let mut listed = std::collections::HashSet::new();
    for (member, score) in ranked {
        let info = MemberId::parse(member)
            .ok()
            .and_then(|id| config.members.get(&id));
        let shown = match (settings.membership, info) {
            (_, Some(m)) => m.enabled,
            (Membership::Open, None) => true,
            (Membership::Closed, None) => false,
        };
        if !shown || (settings.membership == Membership::Open && members.len() >= OPEN_BOARD_LIST) {
            continue;
        }
        let rank = match previous {
            Some((s, r)) if s == score => r,
            _ => members.len() as i64 + 1,
        };
        previous = Some((score, rank));
        listed.insert(member.to_owned());
        members.push(card(
            member,
            info.map_or_else(|| member.to_owned(), |m| m.name.clone()),
            info.and_then(|m| m.image_url.clone()),
            Some(rank),
            score,
        ));
    }
    if settings.membership == Membership::Closed {
        let mut rest: Vec<_> = config
            .members
            .values()
            .filter(|m| m.enabled && !listed.contains(m.id.as_str()))
            .collect();
        rest.sort_by(|a, b| a.name.cmp(&b.name));
        members.extend(rest.into_iter().map(|m| {
            card(
                m.id.as_str(),
                m.name.clone(),
                m.image_url.clone(),
                None,
                0.0,
            )
        }));
    }
    Cards {
        l,
        base: surface.base(),
        slug: sel.board.name(),
        period: sel.bucket.period.as_str().to_owned(),
        csrf,
        open: settings.window_admits(Utc::now()).is_ok(),
        votable: !settings.scoring.is_scores(),
        members,
    }
}

/// The values a vote from this visitor would carry, for its quota.
fn visitor_values(req: &HttpRequest, session: &Session) -> VoteValues {
    VoteValues {
        voter: Some(session::visitor_id(session)),
        member: None,
        channel: Some(WEB_CHANNEL.to_owned()),
        terminal: Some(terminal(req).to_owned()),
        ip: ClientIp::of(req).map(ip_subject),
        creator: None,
    }
}

/// The visitor's quota in plain words: "3 of 5 votes left today", and for rules that
/// count per member, "At most 2 votes for each member today"; nothing on a scores board.
fn quota_lines(l: Lang, config: &BoardConfig, quota: &[QuotaRule]) -> Vec<String> {
    if config.board.settings.scoring.is_scores() {
        // Visitors read a scores board; its writes come from the board's API clients.
        return Vec::new();
    }
    quota
        .iter()
        .filter_map(|q| {
            let rule = config.rules.iter().find(|r| r.id == q.id)?;
            let window = limits::window_words(l, rule.spec.window);
            if q.needs.iter().any(|d| d == Dimension::Member.as_str()) {
                Some(l.tr(
                    "quota-per-member",
                    &[("limit", q.limit.into()), ("window", window.into())],
                ))
            } else {
                Some(l.tr(
                    "quota-left",
                    &[
                        ("remaining", q.remaining?.into()),
                        ("limit", q.limit.into()),
                        ("window", window.into()),
                    ],
                ))
            }
        })
        .collect()
}

async fn page(
    state: &AppState,
    req: &HttpRequest,
    session: &Session,
    l: Lang,
    board: BoardRef,
    period: Option<&str>,
) -> Result<BoardPage, PageError> {
    let settings = board.settings();
    let sel = select(&board, period)?;
    let csrf = csrf_token(session);
    let surface = Surface::of(req);
    let mut cards = cards(state, l, surface, &sel, Some(csrf.clone())).await?;
    if let Some(notice) = session::take_notice(session)
        && let Some(card) = cards.members.iter_mut().find(|c| c.id == notice.member)
    {
        card.notice = Some(notice);
    }
    let quota = limits::quota(state, &board, &visitor_values(req, session), Utc::now()).await?;
    let here = format!(
        "{}/{}?period={}",
        surface.base(),
        board.name(),
        sel.bucket.period
    );
    Ok(BoardPage {
        l,
        flash: session::take_flash(session),
        csrf,
        title: settings.title.clone(),
        description: settings.description.clone(),
        periods: settings
            .periods
            .iter()
            .map(|p| (p.as_str(), period_label(l, *p), *p == sel.bucket.period))
            .collect(),
        langs: Lang::EVERY
            .iter()
            .map(|o| (o.tag(), o.name(), *o == l))
            .collect(),
        signin: sign_in(state, req, &board, &here),
        here,
        quota: quota_lines(l, &board.config, &quota),
        refresh_s: REFRESH_S,
        cards,
    })
}

async fn get_page(
    state: web::Data<AppState>,
    req: HttpRequest,
    session: Session,
    l: Lang,
    path: web::Path<String>,
    query: web::Query<PageQuery>,
) -> Result<HttpResponse, PageError> {
    let surface = Surface::of(&req);
    let board = public_board(&state, &path, surface)?;
    let origins = board.settings().embed_origins.join(" ");
    let mut page = page(&state, &req, &session, l, board, query.period.as_deref()).await?;
    match surface {
        Surface::Page => html(&page),
        Surface::Embed => {
            let embed = EmbedPage {
                csrf: page.csrf.clone(),
                flash: page.flash.take(),
                page,
            };
            let mut response = html(&embed)?;
            response.headers_mut().insert(
                actix_web::http::header::CONTENT_SECURITY_POLICY,
                actix_web::http::header::HeaderValue::from_str(&super::content_security_policy(
                    &origins,
                ))
                .map_err(|e| anyhow::anyhow!("bad frame-ancestors {origins:?}: {e}"))?,
            );
            Ok(response)
        }
    }
}

/// The compact page another site frames: the ranking, the quota and the answers.
#[derive(Template)]
#[template(path = "public/embed.html")]
struct EmbedPage {
    csrf: String,
    flash: Option<String>,
    page: BoardPage,
}

/// Where a ranking request is served and what it ranks: a public board's bucket.
fn ranking_of(
    state: &AppState,
    req: &HttpRequest,
    raw: &str,
    query: &PageQuery,
) -> Result<(Surface, Selection), PageError> {
    let surface = Surface::of(req);
    let board = public_board(state, raw, surface)?;
    Ok((surface, select(&board, query.period.as_deref())?))
}

/// The read cache's key of a ranking block: the same for every visitor of a board,
/// period, language and surface.
fn ranking_key(sel: &Selection, l: Lang, surface: Surface) -> String {
    format!(
        "ranking:{}:{}:{}:{}",
        sel.board.cache_id(),
        sel.bucket.period,
        l.tag(),
        surface.base()
    )
}

/// The ranking block alone, for the page's refresh: the same for every visitor of a
/// board, period and language, so it comes from the read cache.
async fn get_ranking(
    state: web::Data<AppState>,
    req: HttpRequest,
    l: Lang,
    path: web::Path<String>,
    query: web::Query<PageQuery>,
) -> Result<HttpResponse, PageError> {
    let (surface, sel) = ranking_of(&state, &req, &path, &query)?;
    let body = state
        .reads
        .get_or_make(ranking_key(&sel, l, surface), || async {
            render_block(cards(&state, l, surface, &sel, None).await?)
        })
        .await?;
    Ok(HttpResponse::Ok()
        .content_type("text/html; charset=utf-8")
        .body(body))
}

/// The ranking block as server-sent events (`event: ranking`, the block `/ranking`
/// answers): when the stream opens and whenever the board's top changes, made once per
/// change for every subscriber of a board, period, language and surface. The page's htmx
/// SSE extension swaps it in; `static/js/live.js` holds it back while a vote's answer is
/// on screen, and polls `/ranking` instead when the stream is refused (503
/// `too_many_streams`).
async fn stream_ranking(
    state: web::Data<AppState>,
    req: HttpRequest,
    l: Lang,
    path: web::Path<String>,
    query: web::Query<PageQuery>,
) -> Result<HttpResponse, PageError> {
    let (surface, sel) = ranking_of(&state, &req, &path, &query)?;
    let viewer = Viewer::Client(ClientIp::of(&req));
    let subscription = events::subscribe(&state, &viewer, &sel, MAX_LIMIT, None).await?;
    let label = sel.board.config.board.slug.to_string();
    let state = state.get_ref().clone();
    let render = move |update: Update| {
        let (state, sel) = (state.clone(), sel.clone());
        async move {
            let top = match update.top() {
                Some(top) => top.clone(),
                None => return Ok((keep_alive(), 0)),
            };
            let key = format!(
                "{}:push:{:x}",
                ranking_key(&sel, l, surface),
                top.fingerprint()
            );
            let block = state
                .reads
                .get_or_make(key, || async {
                    let ranked = top
                        .entries
                        .iter()
                        .map(|e| (e.member.as_str(), e.score.as_f64().unwrap_or_default()));
                    render_block(cards_of(l, surface, &sel, ranked, None))
                })
                .await
                .map_err(std::io::Error::other)?;
            Ok((text_frame("ranking", &String::from_utf8_lossy(&block)), 1))
        }
    };
    Ok(event_stream(stream(label, subscription, render)))
}

/// The ranking block of `cards`, rendered.
fn render_block(cards: Cards) -> Result<web::Bytes, EngineError> {
    Ok(RankingBlock { cards }
        .render()
        .map_err(|e| anyhow::anyhow!("failed to render the ranking: {e}"))?
        .into())
}

/// The ranking block on its own (the same block as the page's).
#[derive(Template)]
#[template(path = "public/ranking.html")]
struct RankingBlock {
    cards: Cards,
}

#[derive(Deserialize)]
struct VoteForm {
    member: String,
    #[serde(default)]
    period: String,
    /// A signed-in visitor's token (`static/js/signin.js` adds it).
    #[serde(default)]
    voter_token: String,
}

/// Whether an unregistered member of an open board is already ranked (in the board's
/// default ranking, which the page shows first). The page lists such members, so a
/// visitor may vote for them; anything else would let an anonymous visitor add members.
async fn on_the_ranking(
    state: &AppState,
    board: &BoardRef,
    member: &MemberId,
) -> Result<bool, PageError> {
    if board.settings().membership == Membership::Closed {
        return Ok(false);
    }
    let sel = leaderboard::select(board.clone(), None, None, None)?;
    let standing = leaderboard::standings(state, &sel, std::slice::from_ref(member)).await?;
    Ok(standing.first().is_some_and(|s| s.rank.is_some()))
}

/// What the visitor reads after a vote: thanks, or why not and when voting opens again.
fn answer_text(
    l: Lang,
    config: &BoardConfig,
    member: &MemberId,
    quota: &[QuotaRule],
    result: &Result<(), EngineError>,
) -> String {
    let name = config
        .members
        .get(member)
        .map_or_else(|| member.to_string(), |m| m.name.clone());
    let err = match result {
        Ok(()) => return l.tr("thanks", &[("name", name.into())]),
        Err(err) => err,
    };
    match err {
        EngineError::RateLimited {
            rule,
            retry_after_s,
            ..
        } => {
            let refusing = rule["id"]
                .as_i64()
                .and_then(|id| config.rules.iter().find(|r| r.id == id));
            let Some(refusing) = refusing else {
                return err.to_string();
            };
            let limit = rule["limit"].as_i64().unwrap_or(refusing.spec.limit);
            let mut text = limits::explain(
                l,
                config,
                refusing,
                limit,
                member,
                *retry_after_s,
                Utc::now(),
            );
            // A per-member limit leaves the visitor's other votes: say how many.
            if refusing.spec.dimensions.contains(&Dimension::Member) {
                let others = quota.iter().find_map(|q| {
                    let rule = config.rules.iter().find(|r| r.id == q.id)?;
                    let remaining = q.remaining.filter(|&r| r > 0)?;
                    (!rule.spec.dimensions.contains(&Dimension::Member)).then(|| {
                        l.tr(
                            "refused-others",
                            &[
                                ("remaining", remaining.into()),
                                ("limit", q.limit.into()),
                                ("window", limits::window_words(l, rule.spec.window).into()),
                            ],
                        )
                    })
                });
                if let Some(others) = others {
                    text = l.sentences(&[text, others]);
                }
            }
            text
        }
        EngineError::Conflict { code, .. } => match *code {
            Code::MemberDisabled => l.tr("refused-member-disabled", &[("name", name.into())]),
            Code::CampaignEnded => l.t("campaign-ended"),
            Code::CampaignNotStarted => l.t("campaign-not-started"),
            _ => err.to_string(),
        },
        other => other.to_string(),
    }
}

/// The answer to a page vote whose token is missing or refused: 401 with the reason and
/// `X-Ovation-Sign-In: again`, which sends the page's visitor to sign in.
fn sign_in_again(
    l: Lang,
    req: &HttpRequest,
    refused: EngineError,
) -> Result<HttpResponse, PageError> {
    let text = match refused.code() {
        Code::TokenRequired => l.t("sign-in-to-vote"),
        Code::TokenExpired | Code::TokenTooOld => l.t("sign-in-again"),
        _ => refused.to_string(),
    };
    if !is_htmx(req) {
        return Err(PageError::Forbidden(text));
    }
    let mut answer = html(&SignInAgain { text: &text })?;
    *answer.status_mut() = actix_web::http::StatusCode::UNAUTHORIZED;
    answer.headers_mut().insert(
        actix_web::http::header::HeaderName::from_static("x-ovation-sign-in"),
        actix_web::http::header::HeaderValue::from_static("again"),
    );
    Ok(answer)
}

#[derive(Template)]
#[template(
    source = r#"<p class="flash notice error" role="status">{{ text }}</p>"#,
    ext = "html"
)]
struct SignInAgain<'a> {
    text: &'a str,
}

async fn cast_vote(
    state: web::Data<AppState>,
    req: HttpRequest,
    session: Session,
    l: Lang,
    path: web::Path<String>,
    form: CsrfForm<VoteForm>,
) -> Result<HttpResponse, PageError> {
    let surface = Surface::of(&req);
    let board = public_board(&state, &path, surface)?;
    let config = board.config.clone();
    let form = form.0;
    let member = MemberId::parse(&form.member).map_err(|e| PageError::Invalid(e.message))?;
    // The tab to come back to is checked before the vote counts.
    let sel = select(&board, Some(form.period.as_str()))?;
    if !config.members.contains_key(&member) && !on_the_ranking(&state, &board, &member).await? {
        return Err(PageError::NotFound(format!(
            "{member} is not on this board; vote for a member listed on the page"
        )));
    }
    let visitor = session::visitor_id(&session);
    // A signed-in visitor votes as the token's voter; a board that takes signed-in voters
    // only refuses anyone else.
    let signed_in = match form.voter_token.as_str() {
        "" => None,
        token => Some(identity::verify(&state, token).await),
    };
    let (caller, voter) = match signed_in {
        Some(Ok(signed_in)) => {
            let mut caller = Caller::signed_in(signed_in);
            caller.channel = caller.channel.or(Channel::parse(WEB_CHANNEL).ok());
            let voter = caller.signed_in.as_ref().map(|s| s.voter.clone());
            (caller, voter)
        }
        Some(Err(refused)) => return sign_in_again(l, &req, refused),
        None if config.board.settings.voters == Voters::SignedIn => {
            return sign_in_again(
                l,
                &req,
                EngineError::Token {
                    code: Code::TokenRequired,
                    message: "sign in to vote".to_owned(),
                },
            );
        }
        None => (
            Caller {
                scopes: vec![Scope::Vote],
                channel: Channel::parse(WEB_CHANNEL).ok(),
                reach: Reach {
                    boards: Some(vec![config.board.slug.clone()]),
                    leagues: Some(Vec::new()),
                },
                actor: "public page".to_owned(),
                id: format!("visitor:{visitor}"),
                signed_in: None,
            },
            VoterId::parse(&visitor).ok(),
        ),
    };
    let vote = writes::Write {
        board: BoardName {
            slug: config.board.slug.clone(),
            instance: board.instance.clone(),
        },
        member: member.clone(),
        what: writes::What::Vote { count: 1 },
        voter: if caller.signed_in.is_some() {
            None
        } else {
            voter.clone()
        },
        channel: None,
        terminal: Terminal::parse(terminal(&req)).ok(),
        idempotency: None,
        at: None,
        ip: ClientIp::of(&req),
        skip_limits: false,
        releases: None,
    };
    let result = writes::apply(&state, &caller, WriteKind::Vote, vec![Ok(vote)])
        .await?
        .pop()
        .ok_or_else(|| anyhow::anyhow!("no vote result"))?
        .map(drop);
    if let Err(
        err @ (EngineError::Unavailable(_)
        | EngineError::OutcomeUnknown(_)
        | EngineError::Internal(_)),
    ) = result
    {
        // Our failures keep their own page (503, 500); the visitor's are shown inline.
        return Err(err.into());
    }
    let mut values = visitor_values(&req, &session);
    values.voter = voter.map(|v| v.to_string());
    let quota = limits::quota(&state, &board, &values, Utc::now()).await?;
    let notice = VoteNotice {
        member: member.to_string(),
        text: answer_text(l, &config, &member, &quota, &result),
        refused: result.is_err(),
    };
    if is_htmx(&req) {
        let mut cards = cards(&state, l, surface, &sel, None).await?;
        let position = cards.members.iter().position(|c| c.id == notice.member);
        let Some(position) = position else {
            return Err(PageError::NotFound(format!("{member} is not on this page")));
        };
        cards.members[position].notice = Some(notice);
        let answer = Answer {
            cards: &cards,
            m: &cards.members[position],
            quota: quota_lines(l, &config, &quota),
        };
        return html(&answer);
    }
    session::leave_notice(&session, &notice);
    Ok(see_other(&format!(
        "{}/{}?period={}#m-{}",
        surface.base(),
        board.name(),
        sel.bucket.period,
        notice.member
    )))
}

/// A period tab's label in `l`: "Today", "今天".
pub fn period_label(l: Lang, period: Period) -> String {
    l.period("period", period.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_period_has_a_label_in_every_language() {
        for l in Lang::EVERY {
            for p in Period::EVERY {
                let label = period_label(l, p);
                assert!(!label.starts_with("period-"), "{l:?} {p}: {label}");
            }
        }
    }
}
