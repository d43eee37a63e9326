//! Live rankings in Redis: the connection, the Lua scripts and the calls that run them.
//!
//! Each atomic operation is one script in a `*.lua` file beside this module, whose header
//! says its KEYS, ARGV, reply and invariant; each script has one Rust module here
//! (`vote`, `score`, `rules`, `page`, `window`, `member`, `usage`, `initial`, `announce`,
//! `voter_union`, `lease`, `league`) that lays out its keys and arguments and reads its reply;
//! `group_commit` sends the votes on one board in flight together as one `vote.lua` call;
//! `late` reads late-write marks and `release` gives an archived bucket's keys their
//! expiry; `sharded` reads sharded boards and `board`
//! holds a board's plain commands (counts, stats, member removal, deletion). This file
//! holds the connection, the bounded calls, the script runner and the commands that are
//! not a board's (sign-in attempts, the marker, configuration notices). Every call is
//! bounded by a timeout, so a Redis that is down answers `Unavailable` quickly instead
//! of hanging requests. `connection` puts one Redis and a Redis Cluster behind one
//! connection type; every script's keys share one slot (the board's hash tag).

mod adjust;
mod announce;
mod board;
mod connection;
mod group_commit;
mod initial;
mod instances;
pub mod keys;
mod late;
mod league;
mod lease;
mod ledger;
mod member;
mod opening;
mod page;
mod recount;
mod refund;
mod release;
mod replay;
mod reply;
mod revoke;
mod rules;
mod score;
mod score_reads;
mod sessions;
mod sharded;
pub mod slots;
mod summed;
mod trend;
mod usage;
mod vote;
mod voter_union;
pub mod window;
mod write;

use std::time::{Duration, Instant};

use redis::{AsyncCommands, Script, ServerErrorKind, Value};

pub use adjust::{AdjustCall, AdjustReply, Adjusted};
use connection::Connection;
pub use connection::RedisTarget;
pub use group_commit::DEFAULT_GROUP as DEFAULT_VOTE_GROUP;
use group_commit::GroupCommit;
pub use instances::{InstancePage, SearchQuery};
pub use keys::{BoardKeys, Keys, LeagueKeys, Owner, Spread};
pub use late::LateMarks;
pub use league::{
    Advance, HandedReward, JoinCall, JoinReply, LeagueScoreCall, LeagueScoreReply, PlayerPlace,
    PreviousSeason, SeasonRecord, Standing,
};
pub use lease::Lease;
pub use ledger::{HEAD_CALL, LedgerHead};
pub use member::{StandingQuery, StandingReply};
pub use opening::{Opening, Openings};
pub use page::{PageQuery, PageReply};
pub use release::Release;
pub use replay::{Replay, Watched};
pub use revoke::{Lowering, Voters};
pub use rules::{Counter, CounterOf, RuleCheck};
pub use score::{ScoreCall, ScoreReply};
use score_reads::ScoreReads;
pub use sharded::MAX_DEPTH as SHARDED_MAX_DEPTH;
pub use trend::{TrendChange, TrendPageQuery};
pub use usage::Usage;
pub use vote::{
    LEDGER_ARG, PeriodScores, REFUSALS_TTL_S, VOTE_ARGS, VOTE_SOURCE, VOTER_ARG, VoteCall,
    VoteReply, VoteTarget, repeated_call,
};
pub use write::{WriteFacts, WriteReply};

use crate::metrics::{self, RedisOutcome};

/// How many times calls refused with NOSCRIPT are sent again after loading their script.
const NOSCRIPT_RETRIES: usize = 3;

/// What can go wrong talking to Redis.
#[derive(Debug, Clone, thiserror::Error)]
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
/// replica after failover, a busy script, a cluster in transition: a slot that moved,
/// which a call in a pipeline answers instead of running): retrying later helps.
const UNAVAILABLE_CODES: [&str; 9] = [
    "LOADING",
    "OOM",
    "READONLY",
    "BUSY",
    "MASTERDOWN",
    "CLUSTERDOWN",
    "TRYAGAIN",
    "MOVED",
    "ASK",
];

impl From<redis::RedisError> for RedisFailure {
    fn from(err: redis::RedisError) -> Self {
        let not_now = err.code().is_some_and(|c| UNAVAILABLE_CODES.contains(&c))
            || err.kind() == redis::ErrorKind::ClusterConnectionNotFound;
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

/// Connection to Redis shared by every request: one multiplexed connection (to a
/// cluster: one per node) that pipelines concurrent commands and reconnects by itself.
#[derive(Clone)]
pub struct RedisStore {
    conn: Connection,
    target: RedisTarget,
    keys: Keys,
    timeout: Duration,
    group: GroupCommit,
    score_reads: ScoreReads,
}

impl RedisStore {
    /// Prepares the connection; it is made on first use, so start-up does not wait for
    /// Redis and a later outage heals without a restart.
    pub fn new(
        target: &RedisTarget,
        prefix: &str,
        timeout: Duration,
    ) -> Result<Self, RedisFailure> {
        Ok(Self {
            conn: Connection::open(target, timeout).map_err(RedisFailure::Command)?,
            target: target.clone(),
            keys: Keys::new(prefix),
            timeout,
            group: GroupCommit::new(DEFAULT_VOTE_GROUP),
            score_reads: ScoreReads::default(),
        })
    }

    /// Lets one `vote.lua` call take at most `max_votes` votes of several requests on one
    /// board (1: each request's votes go alone); see [`group_commit`].
    #[must_use]
    pub fn with_vote_group(mut self, max_votes: usize) -> Self {
        self.group = GroupCommit::new(max_votes);
        self
    }

    pub fn keys(&self) -> &Keys {
        &self.keys
    }

    /// Runs `f` on a connection handle, bounded by the store's timeout.
    async fn bounded<T, F>(
        &self,
        op: &'static str,
        f: impl FnOnce(Connection) -> F,
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

    /// Runs calls of one script in one pipeline per slot and answers each call's own
    /// outcome, in order (calls in one slot run in their order). A call Redis refused with NOSCRIPT (its script cache was lost: a restart, a
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
                for &i in &pending {
                    pipe.invoke_script(&calls[i]);
                }
                let replies = conn.query_split(pipe).await?;
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

    /// Runs a pipeline of reads (or writes that need not be atomic together) whose keys
    /// may live in several slots: see [`Connection::query_split`].
    async fn query<T: redis::FromRedisValue>(
        &self,
        op: &'static str,
        pipe: redis::Pipeline,
    ) -> Result<T, RedisFailure> {
        self.bounded(op, |conn| async move {
            let replies = conn.query_split(pipe).await?;
            if let Some(Value::ServerError(e)) =
                replies.iter().find(|r| matches!(r, Value::ServerError(_)))
            {
                return Err(redis::RedisError::from(e.clone()).into());
            }
            redis::from_redis_value(Value::Array(replies))
                .map_err(|e| RedisFailure::Reply(format!("{op}: {e}")))
        })
        .await
    }

    /// Unlinks every key matching `pattern` on every master, whatever its slot: a SCAN of
    /// each master, and the keys it finds unlinked in one pipeline per slot. Answers how
    /// many keys went.
    async fn unlink_everywhere(&self, pattern: &str) -> Result<u64, RedisFailure> {
        let mut conn = self.conn.clone();
        let mut removed = 0;
        for slot in conn.master_slots().await? {
            let mut cursor: u64 = 0;
            loop {
                let (next, batch) = conn.scan_step_at(slot, cursor, pattern).await?;
                if !batch.is_empty() {
                    removed += batch.len() as u64;
                    let mut pipe = redis::pipe();
                    for key in &batch {
                        pipe.unlink(key);
                    }
                    conn.query_split(pipe).await?;
                }
                if next == 0 {
                    break;
                }
                cursor = next;
            }
        }
        Ok(removed)
    }

    /// Unlinks every key matching each `(slot key, pattern)`: a SCAN on the node owning
    /// the slot key's slot. Answers how many keys went.
    async fn unlink_matching(&self, patterns: &[(String, String)]) -> Result<u64, RedisFailure> {
        let mut conn = self.conn.clone();
        let mut removed = 0;
        for (slot_key, pattern) in patterns {
            let mut cursor: u64 = 0;
            loop {
                let (next, batch) = conn.scan_step(slot_key, cursor, pattern).await?;
                if !batch.is_empty() {
                    removed += batch.len() as u64;
                    let _: i64 = redis::cmd("UNLINK")
                        .arg(&batch)
                        .query_async(&mut conn)
                        .await?;
                }
                if next == 0 {
                    break;
                }
                cursor = next;
            }
        }
        Ok(removed)
    }

    /// Answers whether Redis responds.
    pub async fn ping(&self) -> Result<(), RedisFailure> {
        self.bounded("ping", |mut conn| async move {
            let _: String = redis::cmd("PING").query_async(&mut conn).await?;
            Ok(())
        })
        .await
    }

    /// Counts one more sign-in attempt from `ip`, and from `ip` for `user` when given,
    /// and answers the new counts in that order, atomically; a counter's window starts
    /// with its first attempt and lasts `window_s`.
    pub async fn count_login_attempts(
        &self,
        ip: &str,
        user: Option<&str>,
        window_s: i64,
    ) -> Result<Vec<i64>, RedisFailure> {
        let mut keys = vec![self.keys.login_attempts_by_ip(ip)];
        keys.extend(user.map(|u| self.keys.login_attempts_by_user_ip(u, ip)));
        let mut pipe = redis::pipe();
        pipe.atomic();
        for key in &keys {
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

    /// Forgets `user`'s sign-in attempts from `ip` (the IP's own count goes on).
    pub async fn forget_login_attempts(&self, ip: &str, user: &str) -> Result<(), RedisFailure> {
        self.delete(&[self.keys.login_attempts_by_user_ip(user, ip)])
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

    /// Subscribes to configuration-change notices on a connection of its own (pub/sub
    /// needs one): to the server, or to the first seed node of a cluster that answers. A
    /// cluster carries a PUBLISH to every node, so any one of them hears every notice.
    pub async fn config_notices(&self) -> Result<Notices, RedisFailure> {
        let mut failure = RedisFailure::Unavailable("no Redis node to subscribe on".to_owned());
        for url in self.target.nodes() {
            match self.subscribe(url).await {
                Ok(notices) => return Ok(notices),
                Err(err) => failure = err,
            }
        }
        Err(failure)
    }

    async fn subscribe(&self, url: &str) -> Result<Notices, RedisFailure> {
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

/// A prepared script call (EVALSHA with its keys and arguments).
pub type Invocation = redis::ScriptInvocation<'static>;

/// What a script call's keys and arguments are added to: a whole call, or one vote's
/// part of a `vote.lua` call (see [`group_commit`]).
pub(super) trait ScriptArgs {
    fn key<T: redis::ToRedisArgs>(&mut self, key: T) -> &mut Self;
    fn arg<T: redis::ToRedisArgs>(&mut self, arg: T) -> &mut Self;
}

impl ScriptArgs for Invocation {
    fn key<T: redis::ToRedisArgs>(&mut self, key: T) -> &mut Self {
        redis::ScriptInvocation::key(self, key)
    }

    fn arg<T: redis::ToRedisArgs>(&mut self, arg: T) -> &mut Self {
        redis::ScriptInvocation::arg(self, arg)
    }
}
