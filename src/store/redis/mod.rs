//! Live rankings in Redis: the connection, the Lua scripts and the calls that run them.
//!
//! Each atomic operation is one script in a `*.lua` file beside this module, whose header
//! says its KEYS, ARGV, reply and invariant; the functions here lay out those keys and
//! arguments and read the replies. Every call is bounded by a timeout, so a Redis that is
//! down answers `Unavailable` quickly instead of hanging requests.

pub mod keys;
pub mod window;

use std::sync::LazyLock;
use std::time::{Duration, Instant};

use redis::aio::{ConnectionManager, ConnectionManagerConfig};
use redis::{AsyncCommands, Script, ServerErrorKind, Value};

pub use keys::{BoardKeys, Keys};

use crate::domain::period::Bucket;
use crate::domain::score::{Increment, MAX_UNITS, View};
use crate::metrics::{self, RedisOutcome};

static VOTE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("window.lua"),
        include_str!("vote.lua")
    ))
});
static PAGE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("paging.lua"),
        include_str!("page.lua")
    ))
});
static WINDOW_PAGE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("window.lua"),
        include_str!("paging.lua"),
        include_str!("window_page.lua")
    ))
});
static MEMBER: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("member.lua")));
static INITIAL: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("initial.lua")));
static USAGE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("usage.lua")));
static ANNOUNCE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("announce.lua")));

/// How many times calls refused with NOSCRIPT are sent again after loading their script.
const NOSCRIPT_RETRIES: usize = 3;

/// What can go wrong talking to Redis.
#[derive(Debug, thiserror::Error)]
pub enum RedisFailure {
    /// Redis cannot be reached, is loading, or did not answer in time.
    #[error("redis is unavailable: {0}")]
    Unavailable(String),
    /// Redis answered with an error.
    #[error("redis command failed: {0}")]
    Command(redis::RedisError),
    /// Redis answered something the code does not expect.
    #[error("unexpected redis reply: {0}")]
    Reply(String),
}

/// Error codes of a Redis that cannot take the command now (loading, out of memory, a
/// replica after failover, a busy script, a cluster in transition): retrying later helps.
const UNAVAILABLE_CODES: [&str; 7] = [
    "LOADING",
    "OOM",
    "READONLY",
    "BUSY",
    "MASTERDOWN",
    "CLUSTERDOWN",
    "TRYAGAIN",
];

impl From<redis::RedisError> for RedisFailure {
    fn from(err: redis::RedisError) -> Self {
        let not_now = err.code().is_some_and(|c| UNAVAILABLE_CODES.contains(&c));
        if err.is_io_error()
            || err.is_timeout()
            || err.is_connection_dropped()
            || err.is_connection_refusal()
            || not_now
        {
            Self::Unavailable(err.to_string())
        } else {
            Self::Command(err)
        }
    }
}

fn reply_error(what: &str, value: &Value) -> RedisFailure {
    RedisFailure::Reply(format!("{what}: {value:?}"))
}

/// Connection to Redis shared by every request: one multiplexed connection that pipelines
/// concurrent commands and reconnects by itself.
#[derive(Clone)]
pub struct RedisStore {
    conn: ConnectionManager,
    keys: Keys,
    timeout: Duration,
}

impl RedisStore {
    /// Prepares the connection; it is made on first use, so start-up does not wait for
    /// Redis and a later outage heals without a restart.
    pub fn new(url: &str, prefix: &str, timeout: Duration) -> Result<Self, RedisFailure> {
        let client = redis::Client::open(url).map_err(RedisFailure::Command)?;
        let config = ConnectionManagerConfig::new()
            .set_connection_timeout(Some(timeout / 2))
            .set_response_timeout(Some(timeout))
            .set_number_of_retries(1)
            .set_min_delay(Duration::from_millis(50))
            .set_max_delay(Duration::from_millis(250));
        let conn = ConnectionManager::new_lazy_with_config(client, config)
            .map_err(RedisFailure::Command)?;
        Ok(Self {
            conn,
            keys: Keys::new(prefix),
            timeout,
        })
    }

    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    /// Runs `f` on a connection handle, bounded by the store's timeout.
    async fn bounded<T, F>(
        &self,
        op: &'static str,
        f: impl FnOnce(ConnectionManager) -> F,
    ) -> Result<T, RedisFailure>
    where
        F: Future<Output = Result<T, RedisFailure>>,
    {
        let started = Instant::now();
        let result = match tokio::time::timeout(self.timeout, f(self.conn.clone())).await {
            Ok(result) => result,
            Err(_) => Err(RedisFailure::Unavailable(format!(
                "no answer within {} ms",
                self.timeout.as_millis()
            ))),
        };
        let outcome = match &result {
            Ok(_) => RedisOutcome::Ok,
            Err(RedisFailure::Unavailable(_)) => RedisOutcome::Unavailable,
            Err(_) => RedisOutcome::Error,
        };
        metrics::redis_call(op, outcome, started.elapsed());
        result
    }

    /// Runs calls of one script in one pipeline and answers each call's own outcome, in
    /// order. A call Redis refused with NOSCRIPT (its script cache was lost: a restart, a
    /// SCRIPT FLUSH) did not run: the script is loaded again and only such calls are sent
    /// again, so a call that ran is never sent twice. A timeout or a dropped connection
    /// fails the whole pipeline: its calls may or may not have run.
    async fn run_script(
        &self,
        name: &'static str,
        script: &Script,
        calls: &[Invocation],
    ) -> Result<Vec<Result<Value, RedisFailure>>, RedisFailure> {
        if calls.is_empty() {
            return Ok(Vec::new());
        }
        self.bounded(name, |mut conn| async move {
            let mut outcomes: Vec<Option<Result<Value, RedisFailure>>> =
                calls.iter().map(|_| None).collect();
            let mut pending: Vec<usize> = (0..calls.len()).collect();
            for attempt in 0..=NOSCRIPT_RETRIES {
                if attempt > 0 {
                    script.prepare_invoke().load_async(&mut conn).await?;
                }
                let mut pipe = redis::pipe();
                pipe.ignore_errors();
                for &i in &pending {
                    pipe.invoke_script(&calls[i]);
                }
                let replies: Vec<Value> = pipe.query_async(&mut conn).await?;
                let mut refused = Vec::new();
                for (&i, reply) in pending.iter().zip(replies) {
                    match reply {
                        Value::ServerError(e) if e.kind() == Some(ServerErrorKind::NoScript) => {
                            refused.push(i);
                        }
                        Value::ServerError(e) => {
                            outcomes[i] = Some(Err(redis::RedisError::from(e).into()));
                        }
                        value => outcomes[i] = Some(Ok(value)),
                    }
                }
                pending = refused;
                if pending.is_empty() {
                    break;
                }
            }
            Ok(outcomes
                .into_iter()
                .map(|o| {
                    o.unwrap_or_else(|| {
                        Err(RedisFailure::Unavailable(
                            "the script cache was flushed again and again; the call did not run"
                                .to_owned(),
                        ))
                    })
                })
                .collect())
        })
        .await
    }

    /// [`run_script`](Self::run_script) for reads and idempotent writes, where one failed
    /// call fails them all.
    async fn run_script_all(
        &self,
        name: &'static str,
        script: &Script,
        calls: &[Invocation],
    ) -> Result<Vec<Value>, RedisFailure> {
        self.run_script(name, script, calls)
            .await?
            .into_iter()
            .collect()
    }

    /// Answers whether Redis responds.
    pub async fn ping(&self) -> Result<(), RedisFailure> {
        self.bounded("ping", |mut conn| async move {
            let _: String = redis::cmd("PING").query_async(&mut conn).await?;
            Ok(())
        })
        .await
    }

    /// Casts votes, each atomically and independently, in one round trip. Each vote
    /// answers on its own, also when Redis refuses some of them; the whole call fails
    /// only when Redis did not answer, and then the votes may or may not have counted.
    pub async fn cast_votes(
        &self,
        calls: &[VoteCall<'_>],
    ) -> Result<Vec<Result<VoteReply, RedisFailure>>, RedisFailure> {
        let invocations: Vec<Invocation> = calls.iter().map(VoteCall::invocation).collect();
        let replies = self.run_script("vote", &VOTE, &invocations).await?;
        Ok(replies
            .into_iter()
            .zip(calls)
            .map(|(reply, c)| VoteReply::parse(&reply?, c.targets.len() + c.windows.len()))
            .collect())
    }

    /// Reads pages of rolling windows in one round trip, each first brought to its clock.
    pub async fn window_pages(
        &self,
        queries: &[window::WindowPageQuery],
    ) -> Result<Vec<PageReply>, RedisFailure> {
        let mut pages: Vec<Option<PageReply>> = vec![None; queries.len()];
        // A window still draining a slot that left it answers `pending`: each call drains
        // a bounded share, so ask again until every page is read.
        for _ in 0..MAX_DRAIN_CALLS {
            let waiting: Vec<usize> = (0..queries.len()).filter(|&i| pages[i].is_none()).collect();
            if waiting.is_empty() {
                break;
            }
            let calls: Vec<Invocation> = waiting.iter().map(|&i| queries[i].invocation()).collect();
            let replies = self
                .run_script_all("window_page", &WINDOW_PAGE, &calls)
                .await?;
            for (i, reply) in waiting.into_iter().zip(&replies) {
                let pending = as_array(reply)
                    .and_then(|items| items.first())
                    .and_then(as_text)
                    .is_some_and(|tag| tag == "pending");
                if !pending {
                    pages[i] = Some(PageReply::parse(reply)?);
                }
            }
        }
        pages
            .into_iter()
            .map(|p| {
                p.ok_or_else(|| {
                    RedisFailure::Unavailable(format!(
                        "a rolling window was still draining after {MAX_DRAIN_CALLS} calls"
                    ))
                })
            })
            .collect()
    }

    /// Reads pages of boards in one round trip.
    pub async fn pages(&self, queries: &[PageQuery]) -> Result<Vec<PageReply>, RedisFailure> {
        let calls: Vec<Invocation> = queries
            .iter()
            .map(|q| {
                let mut inv = PAGE.key(&q.scores);
                inv.key(&q.participants)
                    .arg(q.offset)
                    .arg(q.limit)
                    .arg(q.anchor.as_deref().unwrap_or(""));
                inv
            })
            .collect();
        let replies = self.run_script_all("page", &PAGE, &calls).await?;
        replies.iter().map(PageReply::parse).collect()
    }

    /// Reads members' standings in one round trip.
    pub async fn standings(
        &self,
        queries: &[StandingQuery],
    ) -> Result<Vec<StandingReply>, RedisFailure> {
        let calls: Vec<Invocation> = queries
            .iter()
            .map(|q| {
                let mut inv = MEMBER.key(&q.scores);
                inv.key(q.previous.as_deref().unwrap_or(&q.scores))
                    .key(&q.participants)
                    .arg(&q.member)
                    .arg(if q.previous.is_some() { "1" } else { "0" });
                inv
            })
            .collect();
        let replies = self.run_script_all("member", &MEMBER, &calls).await?;
        replies.iter().map(StandingReply::parse).collect()
    }

    /// Brings members' initial votes on the all-time display board to `targets`
    /// (member, votes); safe to repeat. Answers the first member (if any) whose score
    /// would pass 2^53 units: its chunk of 1,000 members changed nothing, and the other
    /// chunks are applied.
    pub async fn apply_initial_votes(
        &self,
        board: &BoardKeys,
        targets: &[(&str, i64)],
    ) -> Result<Option<String>, RedisFailure> {
        self.initial_votes(board, targets, "apply").await
    }

    /// Answers the first member (if any) whose score [`apply_initial_votes`] would take
    /// past 2^53 units, writing nothing.
    ///
    /// [`apply_initial_votes`]: Self::apply_initial_votes
    pub async fn check_initial_votes(
        &self,
        board: &BoardKeys,
        targets: &[(&str, i64)],
    ) -> Result<Option<String>, RedisFailure> {
        self.initial_votes(board, targets, "check").await
    }

    async fn initial_votes(
        &self,
        board: &BoardKeys,
        targets: &[(&str, i64)],
        mode: &str,
    ) -> Result<Option<String>, RedisFailure> {
        // Chunks keep each script run short, so votes are not held up behind a big import.
        let calls: Vec<Invocation> = targets
            .chunks(1000)
            .map(|chunk| {
                let mut inv = INITIAL.key(board.scores(View::Display, &Bucket::all()));
                inv.key(board.initial_applied()).arg(MAX_UNITS).arg(mode);
                for (member, votes) in chunk {
                    inv.arg(*member).arg(votes * View::Display.units_per_vote());
                }
                inv
            })
            .collect();
        let replies = self.run_script_all("initial", &INITIAL, &calls).await?;
        for reply in &replies {
            let items = as_array(reply).ok_or_else(|| reply_error("initial", reply))?;
            match items.first().and_then(as_text).as_deref() {
                Some("ok") => {}
                Some("overflow") => {
                    let member = items.get(1).and_then(as_text);
                    return member
                        .map(Some)
                        .ok_or_else(|| reply_error("initial", reply));
                }
                _ => return Err(reply_error("initial", reply)),
            }
        }
        Ok(None)
    }

    /// Removes a member from the given score keys and its initial-votes record, atomically.
    pub async fn remove_member(
        &self,
        board: &BoardKeys,
        score_keys: &[String],
        member: &str,
    ) -> Result<(), RedisFailure> {
        let mut pipe = redis::pipe();
        pipe.atomic();
        for key in score_keys {
            pipe.zrem(key, member).ignore();
        }
        pipe.hdel(board.initial_applied(), member).ignore();
        self.bounded("remove_member", |mut conn| async move {
            pipe.query_async::<()>(&mut conn).await?;
            Ok(())
        })
        .await
    }

    /// Votes in each of the given hours (hours since the epoch), in order.
    pub async fn votes_per_hour(
        &self,
        board: &BoardKeys,
        hours: &[i64],
    ) -> Result<Vec<i64>, RedisFailure> {
        let key = board.votes_per_hour();
        self.bounded("votes_per_hour", |mut conn| async move {
            let counts: Vec<Option<i64>> = redis::cmd("HMGET")
                .arg(&key)
                .arg(hours)
                .query_async(&mut conn)
                .await?;
            Ok(counts.into_iter().map(|c| c.unwrap_or(0)).collect())
        })
        .await
    }

    /// How much of each rule's limit is used, in one round trip. Rolling logs are read
    /// from their running totals (`usage.lua`), never whole.
    pub async fn rule_usage(&self, counters: &[Counter]) -> Result<Vec<Usage>, RedisFailure> {
        let mut call = USAGE.prepare_invoke();
        for counter in counters {
            match counter {
                Counter::Fixed { key, .. } => call.key(key).key(key).arg("c").arg(0),
                Counter::Rolling {
                    log,
                    total,
                    horizon_ms,
                    ..
                } => call.key(log).key(total).arg("l").arg(horizon_ms),
            };
        }
        let reply = self.run_script_all("usage", &USAGE, &[call]).await?;
        let value = reply
            .first()
            .ok_or_else(|| reply_error("usage", &Value::Nil))?;
        let numbers = as_array(value)
            .and_then(|items| items.iter().map(as_int).collect::<Option<Vec<i64>>>())
            .filter(|n| n.len() == 2 * counters.len())
            .ok_or_else(|| reply_error("usage", value))?;
        Ok(numbers
            .chunks(2)
            .map(|pair| Usage {
                used: pair[0],
                oldest_ms: (pair[1] >= 0).then_some(pair[1]),
            })
            .collect())
    }

    /// Rate-limit refusals per rule (rule id, votes) in each of the given hours.
    pub async fn refusals(
        &self,
        board: &BoardKeys,
        hours: &[i64],
    ) -> Result<Vec<Vec<(i64, i64)>>, RedisFailure> {
        let mut pipe = redis::pipe();
        for hour in hours {
            pipe.hgetall(board.refusals(*hour));
        }
        self.bounded("refusals", |mut conn| async move {
            let maps: Vec<std::collections::HashMap<i64, i64>> =
                pipe.query_async(&mut conn).await?;
            Ok(maps
                .into_iter()
                .map(|m| {
                    let mut pairs: Vec<(i64, i64)> = m.into_iter().collect();
                    pairs.sort_unstable();
                    pairs
                })
                .collect())
        })
        .await
    }

    /// Counts one more attempt on each counter and answers the new counts, atomically;
    /// a counter's window starts with its first attempt and lasts `window_s`.
    pub async fn count_attempts(
        &self,
        keys: &[String],
        window_s: i64,
    ) -> Result<Vec<i64>, RedisFailure> {
        let mut pipe = redis::pipe();
        pipe.atomic();
        for key in keys {
            pipe.incr(key, 1)
                .cmd("EXPIRE")
                .arg(key)
                .arg(window_s)
                .arg("NX")
                .ignore();
        }
        self.bounded("login_attempts", |mut conn| async move {
            Ok(pipe.query_async(&mut conn).await?)
        })
        .await
    }

    /// Opens a dashboard session that lives `ttl_s` unless touched, and records it
    /// among the user's sessions (kept `absolute_s`, the longest a session lives).
    pub async fn open_session(
        &self,
        user: &str,
        id: &str,
        ttl_s: i64,
        absolute_s: i64,
    ) -> Result<(), RedisFailure> {
        let (key, all) = (self.keys.session(user, id), self.keys.user_sessions(user));
        let mut pipe = redis::pipe();
        pipe.atomic()
            .cmd("SET")
            .arg(&key)
            .arg(user)
            .arg("EX")
            .arg(ttl_s)
            .ignore()
            .sadd(&all, id)
            .ignore()
            .expire(&all, absolute_s)
            .ignore();
        self.bounded("session_open", |mut conn| async move {
            Ok(pipe.query_async::<()>(&mut conn).await?)
        })
        .await
    }

    /// Whether the session is still open; if it is, it lives `ttl_s` more (one GETEX).
    pub async fn touch_session(
        &self,
        user: &str,
        id: &str,
        ttl_s: i64,
    ) -> Result<bool, RedisFailure> {
        let key = self.keys.session(user, id);
        self.bounded("session_touch", |mut conn| async move {
            let owner: Option<String> = redis::cmd("GETEX")
                .arg(key)
                .arg("EX")
                .arg(ttl_s)
                .query_async(&mut conn)
                .await?;
            Ok(owner.as_deref() == Some(user))
        })
        .await
    }

    /// Ends one session.
    pub async fn close_session(&self, user: &str, id: &str) -> Result<(), RedisFailure> {
        let (key, all) = (self.keys.session(user, id), self.keys.user_sessions(user));
        let mut pipe = redis::pipe();
        pipe.atomic().del(&key).ignore().srem(&all, id).ignore();
        self.bounded("session_close", |mut conn| async move {
            Ok(pipe.query_async::<()>(&mut conn).await?)
        })
        .await
    }

    /// Ends every session of a user; answers how many were open.
    pub async fn close_user_sessions(&self, user: &str) -> Result<usize, RedisFailure> {
        let all = self.keys.user_sessions(user);
        let keys = self.keys.clone();
        let user = user.to_owned();
        self.bounded("session_close_all", |mut conn| async move {
            let ids: Vec<String> = conn.smembers(&all).await?;
            let mut doomed: Vec<String> = ids.iter().map(|id| keys.session(&user, id)).collect();
            doomed.push(all);
            let open: usize = redis::cmd("DEL")
                .arg(&doomed)
                .query_async(&mut conn)
                .await?;
            Ok(open.saturating_sub(1))
        })
        .await
    }

    /// Distinct voters (PFCOUNT) of each HyperLogLog, in one round trip.
    pub async fn pfcounts(&self, keys: &[String]) -> Result<Vec<i64>, RedisFailure> {
        let mut pipe = redis::pipe();
        for key in keys {
            pipe.pfcount(key);
        }
        self.bounded("pfcount", |mut conn| async move {
            Ok(pipe.query_async(&mut conn).await?)
        })
        .await
    }

    /// Deletes keys.
    pub async fn delete(&self, keys: &[String]) -> Result<(), RedisFailure> {
        self.bounded("delete", |mut conn| async move {
            let _: i64 = redis::cmd("DEL").arg(keys).query_async(&mut conn).await?;
            Ok(())
        })
        .await
    }

    /// Members on a board (ZCARD) and distinct voters (PFCOUNT), in one round trip.
    pub async fn bucket_counts(
        &self,
        scores: &str,
        participants: &str,
    ) -> Result<(i64, i64), RedisFailure> {
        let mut pipe = redis::pipe();
        pipe.zcard(scores).pfcount(participants);
        self.bounded("bucket_counts", |mut conn| async move {
            Ok(pipe.query_async(&mut conn).await?)
        })
        .await
    }

    /// Counts a configuration change and tells every instance (`payload` names what
    /// changed); answers the new configuration version.
    pub async fn announce_config_change(&self, payload: &str) -> Result<i64, RedisFailure> {
        let mut call = ANNOUNCE.key(self.keys.config_version());
        call.arg(self.keys.config_channel()).arg(payload);
        let reply = self.run_script_all("announce", &ANNOUNCE, &[call]).await?;
        reply
            .first()
            .and_then(as_int)
            .ok_or_else(|| reply_error("announce", &Value::Array(reply.clone())))
    }

    /// `maxmemory-policy`, `appendonly` and `save`, by name; `None` when Redis does not
    /// allow `CONFIG GET` (as some managed services do not).
    pub async fn durability_settings(
        &self,
    ) -> Result<Option<std::collections::HashMap<String, String>>, RedisFailure> {
        self.bounded("config_get", |mut conn| async move {
            let reply: redis::RedisResult<std::collections::HashMap<String, String>> =
                redis::cmd("CONFIG")
                    .arg("GET")
                    .arg("maxmemory-policy")
                    .arg("appendonly")
                    .arg("save")
                    .query_async(&mut conn)
                    .await;
            match reply {
                Ok(settings) => Ok(Some(settings)),
                Err(err)
                    if err.kind() == redis::ErrorKind::Server(ServerErrorKind::ResponseError)
                        || err.code() == Some("NOPERM") =>
                {
                    Ok(None)
                }
                Err(err) => Err(err.into()),
            }
        })
        .await
    }

    /// Sets the marker key unless it is there.
    pub async fn set_marker(&self) -> Result<(), RedisFailure> {
        let key = self.keys.marker();
        self.bounded("marker", |mut conn| async move {
            let _: Option<String> = redis::cmd("SET")
                .arg(key)
                .arg(chrono::Utc::now().to_rfc3339())
                .arg("NX")
                .query_async(&mut conn)
                .await?;
            Ok(())
        })
        .await
    }

    /// Whether the marker key is there.
    pub async fn marker_present(&self) -> Result<bool, RedisFailure> {
        let key = self.keys.marker();
        self.bounded(
            "marker",
            |mut conn| async move { Ok(conn.exists(key).await?) },
        )
        .await
    }

    /// The configuration version: how many changes were announced (0 when none was).
    pub async fn config_version(&self) -> Result<i64, RedisFailure> {
        let key = self.keys.config_version();
        self.bounded("config_version", |mut conn| async move {
            let version: Option<i64> = conn.get(key).await?;
            Ok(version.unwrap_or(0))
        })
        .await
    }

    /// Deletes every key of a deleted board, a batch at a time. Runs in the background
    /// after the board is gone from SQL; its keys are no longer reachable by then.
    pub async fn unlink_board(&self, board: &BoardKeys) -> Result<u64, RedisFailure> {
        let pattern = board.pattern();
        let mut conn = self.conn.clone();
        let mut cursor: u64 = 0;
        let mut removed = 0;
        loop {
            let (next, batch): (u64, Vec<String>) = redis::cmd("SCAN")
                .arg(cursor)
                .arg("MATCH")
                .arg(&pattern)
                .arg("COUNT")
                .arg(1000)
                .query_async(&mut conn)
                .await?;
            if !batch.is_empty() {
                removed += batch.len() as u64;
                let _: i64 = redis::cmd("UNLINK")
                    .arg(&batch)
                    .query_async(&mut conn)
                    .await?;
            }
            if next == 0 {
                return Ok(removed);
            }
            cursor = next;
        }
    }

    /// Subscribes to configuration-change notices on a connection of its own (pub/sub
    /// needs one).
    pub async fn config_notices(&self, url: &str) -> Result<Notices, RedisFailure> {
        let client = redis::Client::open(url).map_err(RedisFailure::Command)?;
        let timeout = self.timeout;
        let channel = self.keys.config_channel();
        let subscribed = tokio::time::timeout(timeout, async move {
            let mut pubsub = client.get_async_pubsub().await?;
            pubsub.subscribe(channel).await?;
            Ok::<_, RedisFailure>(pubsub)
        })
        .await
        .map_err(|_| RedisFailure::Unavailable("no answer to SUBSCRIBE".to_owned()))??;
        let (sink, stream) = subscribed.split();
        Ok(Notices {
            sink,
            stream,
            timeout,
        })
    }
}

/// Configuration-change notices, on a pub/sub connection of their own.
pub struct Notices {
    sink: redis::aio::PubSubSink,
    stream: redis::aio::PubSubStream,
    timeout: Duration,
}

impl Notices {
    /// The next notice's payload; `None` when the connection dropped.
    pub async fn next(&mut self) -> Option<String> {
        loop {
            let msg = futures_util::StreamExt::next(&mut self.stream).await?;
            if let Ok(payload) = msg.get_payload::<String>() {
                return Some(payload);
            }
        }
    }

    /// Checks that Redis still answers on this connection: a connection that goes
    /// silent without closing (a NAT or proxy dropping an idle flow) delivers nothing.
    pub async fn ping(&mut self) -> Result<(), RedisFailure> {
        match tokio::time::timeout(self.timeout, self.sink.ping::<Value>()).await {
            Ok(reply) => reply.map(drop).map_err(RedisFailure::from),
            Err(_) => Err(RedisFailure::Unavailable(format!(
                "no answer to PING within {} ms",
                self.timeout.as_millis()
            ))),
        }
    }
}

/// How many calls a read makes at most while a rolling window drains a slot that left it
/// (10,000 × [`window::DRAIN_BUDGET`] members).
const MAX_DRAIN_CALLS: usize = 10_000;

/// How long a refusals hash outlives its hour: the dashboard shows the last 48 hours, and
/// a week more leaves room to look back.
pub const REFUSALS_TTL_S: i64 = 8 * 86_400;

/// How one rule's counter is kept in Redis.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Counter {
    /// A calendar window's or the campaign's count of votes (string).
    Fixed {
        key: String,
        ttl_s: i64,
        /// Set the TTL on every write (its deadline moves), not only on the first.
        refresh: bool,
        /// From the vote until the window restarts; `None` when it never does.
        retry_ms: Option<i64>,
    },
    /// A rolling window: a log of admitted votes and its running total.
    Rolling {
        log: String,
        total: String,
        ttl_s: i64,
        /// Entries at or before this time (ms) have left the window.
        horizon_ms: i64,
    },
}

/// One rule a vote must pass.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleCheck {
    /// The rule's id, for the refusals counter.
    pub rule: i64,
    /// The limit for this vote (overrides applied).
    pub limit: i64,
    pub counter: Counter,
}

/// How much of a rule's limit is used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    pub used: i64,
    /// Rolling windows: the time (ms) of the oldest vote still in the window.
    pub oldest_ms: Option<i64>,
}

/// A prepared script call (EVALSHA with its keys and arguments).
pub type Invocation = redis::ScriptInvocation<'static>;

/// One period's part of a vote: the bucket it counts in and the bucket that inherits the
/// carry-over (none for `all`).
#[derive(Debug, Clone)]
pub struct VoteTarget {
    pub current: Bucket,
    pub next: Option<Bucket>,
}

/// Everything one run of `vote.lua` needs.
#[derive(Debug)]
pub struct VoteCall<'a> {
    pub board: &'a BoardKeys,
    pub targets: &'a [VoteTarget],
    pub member: &'a str,
    pub increment: Increment,
    pub voter: Option<&'a str>,
    /// The idempotency record's key and how long it lives.
    pub idempotency: Option<(String, Duration)>,
    /// Stored with the scores so a replay answers the same.
    pub receipt: &'a str,
    /// Hours since the epoch, for the votes-per-hour counter.
    pub hour: i64,
    /// The vote's time, ms since the epoch.
    pub at_ms: i64,
    /// The rules the vote must pass; empty when it skips them.
    pub rules: &'a [RuleCheck],
    /// The rolling windows the vote counts in.
    pub windows: &'a [window::WindowTarget],
}

impl VoteCall<'_> {
    /// The EVALSHA of this call.
    pub fn invocation(&self) -> Invocation {
        let (idem_key, idem_ttl) = match &self.idempotency {
            Some((key, ttl)) => (key.clone(), ttl.as_secs().max(1)),
            // vote.lua ignores KEYS[1] when the TTL is 0; any key of the board will do.
            None => (self.board.votes_per_hour(), 0),
        };
        let mut inv = VOTE.key(idem_key);
        inv.key(self.board.votes_per_hour())
            .key(self.board.refusals(self.hour));
        for t in self.targets {
            let next = t.next.as_ref().unwrap_or(&t.current);
            inv.key(self.board.scores(View::Real, &t.current))
                .key(self.board.scores(View::Display, &t.current))
                .key(self.board.scores(View::Display, next))
                .key(self.board.participants(&t.current))
                .key(self.board.member_participants(&t.current, self.member));
        }
        for rule in self.rules {
            match &rule.counter {
                // vote.lua ignores a fixed counter's second key.
                Counter::Fixed { key, .. } => inv.key(key).key(key),
                Counter::Rolling { log, total, .. } => inv.key(log).key(total),
            };
        }
        for w in self.windows {
            for key in &w.window.keys {
                inv.key(key);
            }
        }
        let all_index = self
            .targets
            .iter()
            .position(|t| !t.current.period.is_periodic())
            .map_or(-1, |i| i as i64);
        inv.arg(self.member)
            .arg(self.increment.real)
            .arg(self.increment.display)
            .arg(self.increment.carry)
            .arg(self.voter.unwrap_or(""))
            .arg(idem_ttl)
            .arg(self.receipt)
            .arg(self.hour)
            .arg(self.targets.len())
            .arg(MAX_UNITS)
            .arg(all_index)
            .arg(self.at_ms)
            .arg(format!("{:016x}", rand::random::<u64>()))
            .arg(REFUSALS_TTL_S)
            .arg(self.rules.len());
        for t in self.targets {
            inv.arg(if t.next.is_some() { "1" } else { "0" });
        }
        for rule in self.rules {
            inv.arg(rule.rule).arg(match rule.counter {
                Counter::Fixed { .. } => "c",
                Counter::Rolling { .. } => "l",
            });
            inv.arg(rule.limit);
            match &rule.counter {
                Counter::Fixed {
                    ttl_s,
                    refresh,
                    retry_ms,
                    ..
                } => inv
                    .arg(ttl_s)
                    .arg(if *refresh { "1" } else { "0" })
                    .arg(retry_ms.unwrap_or(-1)),
                Counter::Rolling {
                    ttl_s, horizon_ms, ..
                } => inv.arg(ttl_s).arg(horizon_ms).arg(0),
            };
        }
        inv.arg(self.windows.len());
        for w in self.windows {
            w.args(&mut inv);
        }
        inv
    }
}

/// New scores in one period: (real units, display units).
pub type PeriodScores = (i64, i64);

/// How a vote went.
#[derive(Debug, Clone, PartialEq)]
pub enum VoteReply {
    /// Counted; the member's new scores, one pair per target in order.
    Counted(Vec<PeriodScores>),
    /// The idempotency key was used before: the receipt and scores of the first answer.
    Replayed {
        receipt: String,
        scores: Vec<PeriodScores>,
    },
    /// The rule at this index of the call's rules refused the vote; nothing was counted.
    /// `retry_ms`: until that rule admits it, `None` for never.
    Limited {
        rule_index: usize,
        retry_ms: Option<i64>,
    },
    /// A score would pass 2^53 units; nothing was written.
    Overflow,
}

impl VoteReply {
    fn parse(value: &Value, targets: usize) -> Result<Self, RedisFailure> {
        let items = as_array(value).ok_or_else(|| reply_error("vote", value))?;
        let tag = items
            .first()
            .and_then(as_text)
            .ok_or_else(|| reply_error("vote", value))?;
        match tag.as_str() {
            "ok" => {
                let units = items[1..].iter().map(as_units).collect::<Option<Vec<_>>>();
                pairs(units, targets)
                    .map(Self::Counted)
                    .ok_or_else(|| reply_error("vote", value))
            }
            "dup" => {
                let stored = items
                    .get(1)
                    .and_then(as_text)
                    .ok_or_else(|| reply_error("vote", value))?;
                let (receipt, scores) = stored
                    .rsplit_once('|')
                    .ok_or_else(|| reply_error("vote", value))?;
                let units = scores
                    .split(',')
                    .map(parse_units)
                    .collect::<Option<Vec<_>>>();
                let scores = pairs(units, usize::MAX).ok_or_else(|| reply_error("vote", value))?;
                Ok(Self::Replayed {
                    receipt: receipt.to_owned(),
                    scores,
                })
            }
            "overflow" => Ok(Self::Overflow),
            "limited" => {
                let (Some(index), Some(retry)) =
                    (items.get(1).and_then(as_int), items.get(2).and_then(as_int))
                else {
                    return Err(reply_error("vote", value));
                };
                Ok(Self::Limited {
                    rule_index: usize::try_from(index).map_err(|_| reply_error("vote", value))?,
                    retry_ms: (retry >= 0).then_some(retry),
                })
            }
            _ => Err(reply_error("vote", value)),
        }
    }
}

fn pairs(units: Option<Vec<i64>>, expected: usize) -> Option<Vec<PeriodScores>> {
    let units = units?;
    if units.len() % 2 != 0 || (expected != usize::MAX && units.len() != expected * 2) {
        return None;
    }
    Some(units.chunks(2).map(|c| (c[0], c[1])).collect())
}

/// Asks for a page of a board: by offset, or around an anchor member.
#[derive(Debug, Clone)]
pub struct PageQuery {
    pub scores: String,
    pub participants: String,
    /// Offset, or the radius when `anchor` is set.
    pub offset: i64,
    pub limit: i64,
    pub anchor: Option<String>,
}

/// A page of a board.
#[derive(Debug, Clone, PartialEq)]
pub struct PageReply {
    pub total_members: i64,
    pub participants: i64,
    /// Position of the first entry; `None` when the anchor has no score.
    pub offset: Option<i64>,
    /// Competition rank of the first entry.
    pub first_rank: i64,
    /// (member, units), best first.
    pub entries: Vec<(String, i64)>,
}

impl PageReply {
    fn parse(value: &Value) -> Result<Self, RedisFailure> {
        let bad = || reply_error("page", value);
        let items = as_array(value).ok_or_else(bad)?;
        let [card, participants, offset, first_rank, page] = items else {
            return Err(bad());
        };
        let page = as_array(page).ok_or_else(bad)?;
        let entries = page
            .chunks(2)
            .map(|pair| Some((as_text(&pair[0])?, as_units(pair.get(1)?)?)))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad)?;
        let offset = as_int(offset).ok_or_else(bad)?;
        Ok(Self {
            total_members: as_int(card).ok_or_else(bad)?,
            participants: as_int(participants).ok_or_else(bad)?,
            offset: (offset >= 0).then_some(offset),
            first_rank: as_int(first_rank).ok_or_else(bad)?,
            entries,
        })
    }
}

/// Asks for one member's standing in a bucket.
#[derive(Debug, Clone)]
pub struct StandingQuery {
    pub scores: String,
    pub previous: Option<String>,
    pub participants: String,
    pub member: String,
}

/// One member's standing.
#[derive(Debug, Clone, PartialEq)]
pub struct StandingReply {
    /// (units, rank) when the member has a score in the bucket.
    pub current: Option<(i64, i64)>,
    /// (member, units, rank) of the nearest member with a strictly higher score.
    pub above: Option<(String, i64, i64)>,
    /// (units, rank) in the previous bucket.
    pub previous: Option<(i64, i64)>,
    pub participants: i64,
}

impl StandingReply {
    fn parse(value: &Value) -> Result<Self, RedisFailure> {
        let bad = || reply_error("member", value);
        let items = as_array(value).ok_or_else(bad)?;
        let [
            score,
            rank,
            above_member,
            above_score,
            above_rank,
            prev_score,
            prev_rank,
            participants,
        ] = items
        else {
            return Err(bad());
        };
        let both = |s: &Value, r: &Value| Some((as_units(s)?, as_int(r)?));
        Ok(Self {
            current: both(score, rank),
            above: (|| {
                Some((
                    as_text(above_member)?,
                    as_units(above_score)?,
                    as_int(above_rank)?,
                ))
            })(),
            previous: both(prev_score, prev_rank),
            participants: as_int(participants).ok_or_else(bad)?,
        })
    }
}

fn as_array(value: &Value) -> Option<&[Value]> {
    match value {
        Value::Array(items) => Some(items),
        _ => None,
    }
}

fn as_text(value: &Value) -> Option<String> {
    match value {
        Value::BulkString(bytes) => String::from_utf8(bytes.clone()).ok(),
        Value::SimpleString(s) => Some(s.clone()),
        _ => None,
    }
}

fn as_int(value: &Value) -> Option<i64> {
    match value {
        Value::Int(i) => Some(*i),
        _ => None,
    }
}

/// A score as Redis prints it (`"5000"`, `"1.5e+16"`), back to integer units.
fn parse_units(text: &str) -> Option<i64> {
    let value: f64 = text.parse().ok()?;
    (value.is_finite() && value.fract() == 0.0).then_some(value as i64)
}

fn as_units(value: &Value) -> Option<i64> {
    match value {
        Value::BulkString(bytes) => parse_units(std::str::from_utf8(bytes).ok()?),
        Value::Double(d) => parse_units(&d.to_string()),
        Value::Int(i) => Some(*i),
        _ => None,
    }
}
