//! `GET /api/v1/boards/{board}/events`: a board's top as server-sent events (see
//! `engine::events`): `top` on connect and whenever the top changes, `rank` events,
//! `bucket` when the period rolls over, and a comment line every 15 seconds.

use std::time::Duration;

use actix_web::{HttpResponse, get, web};
use futures_util::StreamExt;
use serde::Deserialize;
use tokio::sync::broadcast::error::RecvError;
use utoipa::{IntoParams, ToSchema};

use super::auth::Auth;
use crate::domain::live::Event;
use crate::engine::events::{self, Subscription};
use crate::engine::leaderboard::readable_board;
use crate::engine::state::AppState;
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
}

impl StreamEvent {
    fn of(event: &Event) -> Result<Self, std::io::Error> {
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
        })
    }

    /// The event as the stream sends it.
    fn frame(&self) -> web::Bytes {
        web::Bytes::from(format!("event: {}\ndata: {}\n\n", self.event, self.data))
    }
}

/// One event as the stream sends it.
fn frame(event: &Event) -> Result<web::Bytes, std::io::Error> {
    Ok(StreamEvent::of(event)?.frame())
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

/// The stream of a subscription to `board` (its metrics label): its first top, then each
/// change as it comes, a comment line when nothing came for [`HEARTBEAT`]. Ends when the
/// subscriber fell too far behind (it is dropped) or the board is gone.
fn stream(
    board: String,
    subscription: Subscription,
) -> impl futures_util::Stream<Item = Result<web::Bytes, std::io::Error>> {
    let Subscription { first, events } = subscription;
    crate::metrics::events_sent(&board, 1);
    let first = frame(&Event::Top(first));
    let open = Open::new(board);
    futures_util::stream::once(async move { first }).chain(futures_util::stream::unfold(
        (events, open),
        |(mut events, open)| async move {
            let bytes = match tokio::time::timeout(HEARTBEAT, events.recv()).await {
                Err(_) => Ok(web::Bytes::from_static(b": keep-alive\n\n")),
                Ok(Ok(batch)) => {
                    crate::metrics::events_sent(&open.0, batch.len());
                    batch
                        .iter()
                        .map(frame)
                        .collect::<Result<Vec<_>, _>>()
                        .map(|frames| frames.concat().into())
                }
                Ok(Err(RecvError::Lagged(_))) => {
                    crate::metrics::event_subscriber_dropped(&open.0);
                    return None;
                }
                Ok(Err(RecvError::Closed)) => return None,
            };
            Some((bytes, (events, open)))
        },
    ))
}

/// A board's top, live: server-sent events (`text/event-stream`). On connect `event: top`
/// with `{"bucket", "entries": [{"rank", "member", "name", "score"}]}`; then a `top` event
/// whenever that top changes, at most one per `OVATION_EVENTS_INTERVAL_MS`; `event: rank`
/// with `{"type": "entered_top" | "left_top" | "overtook", "member", "rank", "other"}`
/// (`other`: the member overtaken, else null) for each change within a bucket; `event:
/// bucket` with `{"bucket"}` when the period rolls over; a comment line every 15 s. Reads
/// like `/top` (the `read` scope, or none on a public board); family instances too. A
/// client that falls 64 changes behind is dropped: its stream ends.
#[utoipa::path(get, path = "/api/v1/boards/{board}/events", tag = "reads",
    params(("board" = String, Path), EventsQuery),
    responses(
        (status = 200, description = "the stream (`text/event-stream`): one `StreamEvent` per event", content_type = "text/event-stream", body = StreamEvent),
        (status = 401, description = "no key (a board that is not public)", body = super::ErrorBody),
        (status = 403, description = "forbidden, key_not_allowed", body = super::ErrorBody),
        (status = 404, description = "board_not_found", body = super::ErrorBody),
        (status = 422, description = "invalid_period, period_not_enabled, invalid_field (top), invalid_instance, …", body = super::ErrorBody),
        (status = 503, description = "store_unavailable", body = super::ErrorBody),
    ))]
#[get("/boards/{board}/events")]
pub async fn board_events(
    state: web::Data<AppState>,
    auth: Auth,
    board: web::Path<String>,
    query: web::Query<EventsQuery>,
) -> Result<HttpResponse, ApiError> {
    let board = readable_board(&state, auth.0.as_ref(), &board)?;
    let label = board.config.board.slug.to_string();
    let subscription = events::subscribe(
        &state,
        board,
        query.period.as_deref(),
        query.view.as_deref(),
        query.top.unwrap_or(10),
    )
    .await?;
    Ok(HttpResponse::Ok()
        .content_type("text/event-stream")
        .insert_header(("Cache-Control", "no-cache"))
        .insert_header(("X-Accel-Buffering", "no"))
        .streaming(stream(label, subscription)))
}
