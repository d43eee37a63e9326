//! `GET /api/v1/boards/{board}/events`: a board's top as server-sent events (see
//! `engine::events`): `top` on connect and whenever the top changes, `rank` events,
//! `bucket` when the period rolls over, and a comment line every 15 seconds; each top and
//! each batch's last event carries an `id`, from which `Last-Event-ID` resumes.

use std::sync::Arc;
use std::time::Duration;

use actix_web::{HttpRequest, HttpResponse, get, web};
use serde::Deserialize;
use tokio::sync::broadcast::error::RecvError;
use utoipa::{IntoParams, ToSchema};

use super::auth::Auth;
use super::client_ip::ClientIp;
use crate::domain::live::{Batch, Event, EventId, Snapshot, Start};
use crate::engine::events::{self, Subscription};
use crate::engine::leaderboard::{readable_board, select};
use crate::engine::state::AppState;
use crate::engine::watchers::Viewer;
use crate::error::ApiError;

/// How often a stream sends a comment line when nothing happens, so proxies keep it open.
const HEARTBEAT: Duration = Duration::from_secs(15);

#[derive(Debug, Deserialize, IntoParams)]
pub struct EventsQuery {
    /// hour, day, week, month, all or a rolling window (default: all when kept, else the
    /// shortest period); always its current bucket.
    pub period: Option<String>,
    /// display (default) or real.
    pub view: Option<String>,
    /// How many members the top holds, 1 to 100 (default 10).
    pub top: Option<i64>,
}

/// One server-sent event of a live stream, as the OpenAPI document describes each event
/// of `text/event-stream` (heartbeats are comment lines, not events).
#[derive(ToSchema)]
pub struct StreamEvent {
    /// `top`, `rank` or `bucket`.
    event: String,
    /// The event's JSON: `top` `{"bucket", "entries": [{"rank", "member", "name",
    /// "score"}]}`; `rank` `{"type", "member", "rank", "other"}`; `bucket` `{"bucket"}`.
    data: String,
    /// On a top sent on connect and on the last event of each change: the point to
    /// resume from (`Last-Event-ID`).
    id: Option<String>,
}

impl StreamEvent {
    fn of(event: &Event, id: Option<EventId>) -> Result<Self, std::io::Error> {
        let (name, data) = match event {
            Event::Top(top) => ("top", serde_json::to_string(top)),
            Event::Rank(change) => ("rank", serde_json::to_string(change)),
            Event::Bucket(bucket) => (
                "bucket",
                serde_json::to_string(&serde_json::json!({ "bucket": bucket })),
            ),
        };
        Ok(Self {
            event: name.to_owned(),
            data: data.map_err(std::io::Error::other)?,
            id: id.map(|id| id.to_string()),
        })
    }

    /// The event as the stream sends it.
    fn frame(&self) -> String {
        match &self.id {
            Some(id) => format!("event: {}\ndata: {}\nid: {id}\n\n", self.event, self.data),
            None => format!("event: {}\ndata: {}\n\n", self.event, self.data),
        }
    }
}

/// An event whose data is `text` (HTML, say), each of its lines a `data:` line.
pub fn text_frame(event: &str, text: &str) -> web::Bytes {
    let mut frame = format!("event: {event}\n");
    for line in text.split(['\r', '\n']) {
        frame.push_str("data: ");
        frame.push_str(line);
        frame.push('\n');
    }
    frame.push('\n');
    frame.into()
}

/// One batch as the stream sends it: its events, the last with the batch's id.
fn batch_frames(batch: &Batch) -> Result<String, std::io::Error> {
    let last = batch.events.len().saturating_sub(1);
    let mut frames = String::new();
    for (i, event) in batch.events.iter().enumerate() {
        let id = (i == last).then_some(batch.id);
        frames.push_str(&StreamEvent::of(event, id)?.frame());
    }
    Ok(frames)
}

/// Keeps `ovation_event_subscribers` of a board counting one stream while it is open.
struct Open(String);

impl Open {
    fn new(board: String) -> Self {
        crate::metrics::event_subscribers(&board, 1.0);
        Self(board)
    }
}

impl Drop for Open {
    fn drop(&mut self) {
        crate::metrics::event_subscribers(&self.0, -1.0);
    }
}

/// What a stream is asked to send: its first top (as of an id), batches of changes (one
/// as it comes; on resuming, those missed, maybe none), or nothing for [`HEARTBEAT`].
pub enum Update {
    First(EventId, Snapshot),
    Changes(Vec<Arc<Batch>>),
    Quiet,
}

impl Update {
    /// The top this update brings: the first, or the last of the changes (every change
    /// carries one); none when quiet or resumed with nothing missed.
    pub fn top(&self) -> Option<&Snapshot> {
        match self {
            Self::First(_, top) => Some(top),
            Self::Changes(batches) => batches
                .iter()
                .flat_map(|batch| batch.events.iter())
                .rev()
                .find_map(|e| match e {
                    Event::Top(top) => Some(top),
                    _ => None,
                }),
            Self::Quiet => None,
        }
    }
}

/// A comment line: what a stream sends to stay open when nothing happens.
pub fn keep_alive() -> web::Bytes {
    web::Bytes::from_static(b": keep-alive\n\n")
}

/// What a stream sends for one [`Update`]: the bytes and how many events they hold.
pub type Sent = Result<(web::Bytes, usize), std::io::Error>;

/// The server-sent events of a subscription to `board` (its metrics label): `render`
/// makes the bytes of its first top, of each batch of changes as it comes, and of each
/// quiet [`HEARTBEAT`]. Ends when the subscriber fell too far behind (it is dropped), the
/// board is gone or the server stops; the slot and the subscriber count go with it.
pub fn stream<R, F>(
    board: String,
    subscription: Subscription,
    render: R,
) -> impl futures_util::Stream<Item = Result<web::Bytes, std::io::Error>>
where
    R: Fn(Update) -> F + 'static,
    F: Future<Output = Sent>,
{
    let Subscription {
        start,
        events,
        slot,
    } = subscription;
    let first = match start {
        Start::Top(id, top) => Update::First(id, top),
        Start::Resumed(missed) => Update::Changes(missed),
    };
    let open = Open::new(board);
    futures_util::stream::unfold(
        (Some(first), events, open, slot, render),
        |(first, mut events, open, slot, render)| async move {
            let sent = match first {
                Some(first) => render(first).await,
                None => match tokio::time::timeout(HEARTBEAT, events.recv()).await {
                    Err(_) => render(Update::Quiet).await,
                    Ok(Ok(batch)) => render(Update::Changes(vec![batch])).await,
                    Ok(Err(RecvError::Lagged(_))) => {
                        crate::metrics::event_subscriber_dropped(&open.0);
                        return None;
                    }
                    Ok(Err(RecvError::Closed)) => return None,
                },
            };
            let bytes = sent.map(|(bytes, count)| {
                crate::metrics::events_sent(&open.0, count);
                bytes
            });
            Some((bytes, (None, events, open, slot, render)))
        },
    )
}

/// The API's frames: each event as its JSON with the ids to resume from, a comment line
/// when quiet (or resumed with nothing missed).
async fn api_frames(update: Update) -> Sent {
    match update {
        Update::First(id, top) => Ok((
            StreamEvent::of(&Event::Top(top), Some(id))?.frame().into(),
            1,
        )),
        Update::Changes(batches) if batches.is_empty() => Ok((keep_alive(), 0)),
        Update::Changes(batches) => {
            let frames = batches
                .iter()
                .map(|batch| batch_frames(batch))
                .collect::<Result<String, _>>()?;
            let count = batches.iter().map(|batch| batch.events.len()).sum();
            Ok((frames.into(), count))
        }
        Update::Quiet => Ok((keep_alive(), 0)),
    }
}

/// The answer that streams `events`.
pub fn event_stream(
    events: impl futures_util::Stream<Item = Result<web::Bytes, std::io::Error>> + 'static,
) -> HttpResponse {
    HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("Cache-Control", "no-cache"))
        .insert_header(("X-Accel-Buffering", "no"))
        .streaming(events)
}

/// A board's top, live: server-sent events (`text/event-stream`). On connect `event: top`
/// with `{"bucket", "entries": [{"rank", "member", "name", "score"}]}`; then a `top` event
/// whenever that top changes, at most one per `OVATION_EVENTS_INTERVAL_MS`; `event: rank`
/// with `{"type": "entered_top" | "left_top" | "overtook", "member", "rank", "other"}`
/// (`other`: the member overtaken, else null) for each change within a bucket; `event:
/// bucket` with `{"bucket"}` when the period rolls over; a comment line every 15 s. The top
/// sent on connect and the last event of each change carry an `id`; a client that
/// reconnects with `Last-Event-ID` (as `EventSource` does) gets exactly the changes it
/// missed, when this instance still holds them (the last 64, while the top is watched or
/// was within 30 s), else the top afresh with a new id. Reads like `/top` (the `read`
/// scope, or none on a public board); family instances too. A client that falls 64
/// changes behind is dropped: its stream ends.
#[utoipa::path(get, path = "/api/v1/boards/{board}/events", tag = "reads",
    params(("board" = String, Path), EventsQuery,
        ("Last-Event-ID" = Option<String>, Header, description = "the last `id` a broken stream received: resume after it (an id this instance does not hold starts afresh)")),
    responses(
        (status = 200, description = "the stream (`text/event-stream`): one `StreamEvent` per event", content_type = "text/event-stream", body = StreamEvent),
        (status = 401, description = "no key (a board that is not public)", body = super::ErrorBody),
        (status = 403, description = "forbidden, key_not_allowed", body = super::ErrorBody),
        (status = 404, description = "board_not_found; instance_not_live (a family's room never written, or expired: it is streamed once written)", body = super::ErrorBody),
        (status = 422, description = "invalid_period, period_not_enabled, invalid_field (top), invalid_instance, …", body = super::ErrorBody),
        (status = 429, description = "too_many_streams_from_ip: the client's address (an IPv6 /64) holds `OVATION_EVENTS_MAX_STREAMS_PER_IP` streams", body = super::ErrorBody),
        (status = 503, description = "store_unavailable; too_many_streams (the instance holds `OVATION_EVENTS_MAX_STREAMS` streams, less `OVATION_EVENTS_DASHBOARD_RESERVE` kept for dashboard sessions; `Retry-After: 5`)", body = super::ErrorBody),
    ))]
#[get("/boards/{board}/events")]
pub async fn board_events(
    state: web::Data<AppState>,
    req: HttpRequest,
    auth: Auth,
    client: ClientIp,
    board: web::Path<String>,
    query: web::Query<EventsQuery>,
) -> Result<HttpResponse, ApiError> {
    let board = readable_board(&state, auth.0.as_ref(), &board)?;
    let label = board.config.board.slug.to_string();
    let top = events::checked_top(query.top.unwrap_or(10))?;
    let sel = select(board, query.period.as_deref(), None, query.view.as_deref())?;
    let resume = req
        .headers()
        .get("last-event-id")
        .and_then(|id| id.to_str().ok())
        .and_then(EventId::parse);
    let subscription =
        events::subscribe(&state, &Viewer::Client(client.0), &sel, top, resume).await?;
    Ok(event_stream(stream(label, subscription, api_frames)))
}
