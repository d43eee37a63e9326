//! Prometheus metrics: every metric's name and labels, in one place, recorded through the
//! `metrics` facade and exposed by `metrics-exporter-prometheus` at `GET /metrics`.
//!
//! Labels have bounded cardinality: boards by slug (only boards that exist), error codes,
//! rule names (at most 20 per board), route patterns (never raw paths), Redis operation
//! names. No member, voter or IP ever becomes a label.
//!
//! The hot paths (every request, every Redis call, every accepted vote) keep the handles
//! of their metrics in per-thread maps keyed by their static labels: `counter!` with
//! labels builds, hashes and looks up its key in the registry on every call, which made
//! the first version cost 3 µs per request.

use std::cell::RefCell;
use std::collections::HashMap;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

use actix_web::body::MessageBody;
use actix_web::dev::{ServiceRequest, ServiceResponse};
use actix_web::http::Method;
use actix_web::middleware::Next;
use metrics::{
    Counter, Histogram, counter, describe_counter, describe_gauge, describe_histogram, gauge,
    histogram,
};
use metrics_exporter_prometheus::{Matcher, PrometheusBuilder, PrometheusHandle};

/// Latency buckets (seconds) of the HTTP and Redis histograms.
const BUCKETS: [f64; 14] = [
    0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5,
];

/// How often the exporter's histograms are folded (its upkeep).
const UPKEEP: Duration = Duration::from_secs(5);

/// Installs the process-wide recorder on first use and answers its handle; every
/// application in the process (tests start several) shares it.
pub fn handle() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let handle = PrometheusBuilder::new()
                .set_buckets_for_metric(Matcher::Suffix("_seconds".to_owned()), &BUCKETS)
                .and_then(PrometheusBuilder::install_recorder)
                .unwrap_or_else(|err| {
                    // Another recorder was installed first: keep a private one so that
                    // /metrics still answers (with what this one records: nothing).
                    tracing::warn!(error = %err, "metrics recorder not installed");
                    PrometheusBuilder::new().build_recorder().handle()
                });
            describe();
            let upkeep = handle.clone();
            std::thread::spawn(move || {
                loop {
                    std::thread::sleep(UPKEEP);
                    upkeep.run_upkeep();
                }
            });
            handle
        })
        .clone()
}

fn describe() {
    describe_counter!(
        "ovation_writes_total",
        "Writes by kind (vote, score, league_score, league_join), target (board or league) and outcome (accepted, replayed, refused); refusals by error code and, for rate limits, rule"
    );
    describe_counter!(
        "ovation_http_requests_total",
        "HTTP requests by method, route pattern and status"
    );
    describe_histogram!(
        "ovation_http_request_duration_seconds",
        "HTTP request latency by method and route pattern"
    );
    describe_counter!(
        "ovation_redis_calls_total",
        "Redis round trips by operation and outcome (ok, error, unavailable)"
    );
    describe_histogram!(
        "ovation_redis_call_duration_seconds",
        "Redis round-trip latency by operation"
    );
    describe_counter!(
        "ovation_config_reloads_total",
        "Configuration loads from SQL by what was loaded (all, board, api_keys, providers)"
    );
    describe_counter!(
        "ovation_read_cache_total",
        "Read-cache lookups by result (hit, miss)"
    );
    describe_counter!(
        "ovation_redis_resets_total",
        "Times this instance found Redis empty (restarted without its data)"
    );
    describe_gauge!(
        "ovation_ledger_lag_seconds",
        "By board: age of the oldest accepted write not yet in the SQL ledger (0 when none)"
    );
    describe_gauge!(
        "ovation_ledger_pending",
        "By board: ledgers with accepted writes waiting in Redis for SQL (1 for a plain board whose entries wait, each such room of a family)"
    );
    describe_counter!(
        "ovation_ledger_drained_total",
        "By board: ledger entries this instance moved from Redis to SQL"
    );
    describe_gauge!(
        "ovation_event_subscribers",
        "By board (a family's for its instances): live event streams open on this instance"
    );
    describe_counter!(
        "ovation_events_sent_total",
        "By board (a family's for its instances): events sent to live subscribers"
    );
    describe_counter!(
        "ovation_event_subscribers_dropped_total",
        "By board (a family's for its instances): streams ended because their client fell too far behind"
    );
    describe_counter!(
        "ovation_season_closes_total",
        "By league: seasons this instance closed"
    );
    describe_counter!(
        "ovation_webhook_deliveries_total",
        "Webhook delivery attempts by outcome (delivered, failed, gave_up)"
    );
    describe_gauge!(
        "ovation_build_info",
        "1, with the version and the commit this binary is built from"
    );
    describe_gauge!(
        "ovation_ready",
        "1 while the instance may take traffic (what /readyz answers 200 for), else 0"
    );
    describe_gauge!(
        "ovation_store_up",
        "By store (redis, sql): 1 while it answers, else 0"
    );
    describe_gauge!(
        "ovation_ledger_lost_entries",
        "By board: ledger entries SQL lost after Redis had trimmed them (SQL restored from an older backup); their seq are never given again"
    );
    describe_counter!(
        "ovation_archived_buckets_total",
        "Closed buckets this instance wrote to the archive"
    );
    describe_counter!(
        "ovation_token_checks_total",
        "Voter tokens checked, by identity provider (unknown when none matched) and outcome (accepted, or the refusal's code)"
    );
    describe_counter!(
        "ovation_held_votes_total",
        "Votes (counts summed) watches held, and held votes released and dropped, by board, watch and state (held, released, dropped)"
    );
    describe_counter!(
        "ovation_flagged_subjects_total",
        "Subjects a watch flagged: a vote took the subject past the threshold in a window, by board and watch"
    );
    describe_counter!(
        "ovation_jwks_fetches_total",
        "JWKS fetches by identity provider and outcome (ok, error, too_large, timeout, invalid)"
    );
}

/// Registers the series whose labels are known when the instance starts, so they read 0
/// before their first event (an alert on `increase()` sees the first one, a dashboard
/// shows 0 rather than no data): the build, the outcomes of webhook deliveries, Redis
/// resets, read-cache lookups, configuration loads, and each league's closes.
pub fn register_known(leagues: &[&str]) {
    gauge!(
        "ovation_build_info",
        "version" => env!("CARGO_PKG_VERSION"),
        "commit" => env!("OVATION_COMMIT")
    )
    .set(1.0);
    for outcome in ["delivered", "failed", "gave_up"] {
        counter!("ovation_webhook_deliveries_total", "outcome" => outcome).increment(0);
    }
    counter!("ovation_redis_resets_total").increment(0);
    counter!("ovation_archived_buckets_total").increment(0);
    for result in ["hit", "miss"] {
        counter!("ovation_read_cache_total", "result" => result).increment(0);
    }
    for what in ["all", "board", "api_keys", "providers"] {
        counter!("ovation_config_reloads_total", "what" => what).increment(0);
    }
    for league in leagues {
        counter!("ovation_season_closes_total", "league" => (*league).to_owned()).increment(0);
    }
}

/// What a write was, for `ovation_writes_total`'s `kind`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum WriteKind {
    Vote,
    Score,
    LeagueScore,
    LeagueJoin,
}

impl WriteKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Vote => "vote",
            Self::Score => "score",
            Self::LeagueScore => "league_score",
            Self::LeagueJoin => "league_join",
        }
    }
}

/// How a write ended, for `ovation_writes_total`.
pub enum WriteOutcome<'a> {
    Accepted,
    Replayed,
    Refused {
        code: &'static str,
        /// The refusing rule's name, for rate-limit refusals.
        rule: Option<&'a str>,
    },
}

/// A counter and a latency histogram, cached together.
type Timed = (Counter, Histogram);

thread_local! {
    /// Accepted and replayed write counters by kind and target.
    static WRITES: RefCell<HashMap<(WriteKind, String), [Counter; 2]>> =
        RefCell::new(HashMap::new());
    /// Request counter and latency histogram by (method, route, status).
    static HTTP: RefCell<HashMap<(&'static str, &'static str, u16), Timed>> =
        RefCell::new(HashMap::new());
    /// Read-cache misses and hits.
    static READ_CACHE: [Counter; 2] = [
        counter!("ovation_read_cache_total", "result" => "miss"),
        counter!("ovation_read_cache_total", "result" => "hit"),
    ];
    /// Call counter and latency histogram by (operation, outcome).
    static REDIS: RefCell<HashMap<(&'static str, &'static str), Timed>> =
        RefCell::new(HashMap::new());
}

/// Counts a write of `kind` on `target`: a board or league slug that exists, or
/// `unknown`.
pub fn write(kind: WriteKind, target: &str, outcome: WriteOutcome<'_>) {
    let replayed = match outcome {
        WriteOutcome::Accepted => false,
        WriteOutcome::Replayed => true,
        WriteOutcome::Refused { code, rule } => {
            // Refusals are rarer and have more labels: the macro is fine for them.
            counter!(
                "ovation_writes_total",
                "kind" => kind.as_str(),
                "target" => target.to_owned(),
                "outcome" => "refused",
                "code" => code,
                "rule" => rule.unwrap_or("").to_owned()
            )
            .increment(1);
            return;
        }
    };
    WRITES.with_borrow_mut(|writes| {
        let counters = writes
            .entry((kind, target.to_owned()))
            .or_insert_with(|| {
                let (kind, target) = (kind.as_str(), target.to_owned());
                [
                    counter!("ovation_writes_total", "kind" => kind, "target" => target.clone(), "outcome" => "accepted"),
                    counter!("ovation_writes_total", "kind" => kind, "target" => target, "outcome" => "replayed"),
                ]
            });
        counters[usize::from(replayed)].increment(1);
    });
}

/// How a Redis round trip ended.
pub enum RedisOutcome {
    Ok,
    /// Redis answered with an error.
    Error,
    /// No answer: a timeout, a refused or dropped connection, a Redis that is loading.
    Unavailable,
}

/// Counts a Redis round trip of `op` that took `elapsed`.
pub fn redis_call(op: &'static str, outcome: RedisOutcome, elapsed: Duration) {
    let outcome = match outcome {
        RedisOutcome::Ok => "ok",
        RedisOutcome::Error => "error",
        RedisOutcome::Unavailable => "unavailable",
    };
    REDIS.with_borrow_mut(|calls| {
        let (count, latency) = calls.entry((op, outcome)).or_insert_with(|| {
            (
                counter!("ovation_redis_calls_total", "op" => op, "outcome" => outcome),
                histogram!("ovation_redis_call_duration_seconds", "op" => op),
            )
        });
        count.increment(1);
        latency.record(elapsed.as_secs_f64());
    });
}

/// Counts a configuration load from SQL: `all`, `board`, `api_keys` or `providers`.
pub fn config_reload(what: &'static str) {
    counter!("ovation_config_reloads_total", "what" => what).increment(1);
}

/// Counts a voter token checked with `provider`: `accepted`, or the refusal's code.
pub fn token_checked(provider: &str, outcome: &str) {
    counter!("ovation_token_checks_total", "provider" => provider.to_owned(), "outcome" => outcome.to_owned())
        .increment(1);
}

/// Counts a JWKS fetch of `provider`'s keys.
pub fn jwks_fetched(provider: &str, outcome: &'static str) {
    counter!("ovation_jwks_fetches_total", "provider" => provider.to_owned(), "outcome" => outcome)
        .increment(1);
}

/// Counts `votes` a watch held on `board`, and a subject it flagged (`flags`).
pub fn held(board: &str, watch: i64, votes: i64, flags: bool) {
    held_votes(board, watch, "held", votes);
    if flags {
        counter!("ovation_flagged_subjects_total", "board" => board.to_owned(), "watch" => watch.to_string())
            .increment(1);
    }
}

/// Counts held `votes` on `board` that ended `state` (`released`, `dropped`), or that a
/// watch held (`held`).
pub fn held_votes(board: &str, watch: i64, state: &'static str, votes: i64) {
    counter!("ovation_held_votes_total", "board" => board.to_owned(), "watch" => watch.to_string(), "state" => state)
        .increment(votes.max(0).unsigned_abs());
}

/// Counts a season's close.
pub fn season_closed(league: &str) {
    counter!("ovation_season_closes_total", "league" => league.to_owned()).increment(1);
}

/// Counts a webhook delivery attempt by its outcome (`delivered` or `failed`).
pub fn webhook_delivery(outcome: &'static str) {
    counter!("ovation_webhook_deliveries_total", "outcome" => outcome).increment(1);
}

/// Counts a read-cache lookup.
pub fn read_cache(hit: bool) {
    READ_CACHE.with(|lookups| lookups[usize::from(hit)].increment(1));
}

/// A board's ledger backlog as this instance last saw it.
pub fn ledger_backlog(board: &str, pending: u64, lag_s: f64) {
    gauge!("ovation_ledger_pending", "board" => board.to_owned()).set(pending as f64);
    gauge!("ovation_ledger_lag_seconds", "board" => board.to_owned()).set(lag_s);
    // Known from the board's first drain pass: reads 0 until SQL is found to lack some.
    gauge!("ovation_ledger_lost_entries", "board" => board.to_owned()).increment(0.0);
}

/// Counts ledger entries moved to SQL.
pub fn ledger_drained(board: &str, entries: usize) {
    counter!("ovation_ledger_drained_total", "board" => board.to_owned()).increment(entries as u64);
}

/// A live event stream of `board` (a family's slug for its instances) opened (`1`) or
/// ended (`-1`).
pub fn event_subscribers(board: &str, delta: f64) {
    gauge!("ovation_event_subscribers", "board" => board.to_owned()).increment(delta);
    if delta > 0.0 {
        // Known from the board's first stream: reads 0 until a subscriber is dropped.
        counter!("ovation_event_subscribers_dropped_total", "board" => board.to_owned())
            .increment(0);
    }
}

/// Counts events sent to one live subscriber.
pub fn events_sent(board: &str, events: usize) {
    counter!("ovation_events_sent_total", "board" => board.to_owned()).increment(events as u64);
}

/// Counts a live subscriber dropped for falling too far behind.
pub fn event_subscriber_dropped(board: &str) {
    counter!("ovation_event_subscribers_dropped_total", "board" => board.to_owned()).increment(1);
}

/// Records whether the instance is ready and which stores answer.
pub fn readiness(ready: bool, redis: bool, sql: bool) {
    gauge!("ovation_ready").set(f64::from(u8::from(ready)));
    gauge!("ovation_store_up", "store" => "redis").set(f64::from(u8::from(redis)));
    gauge!("ovation_store_up", "store" => "sql").set(f64::from(u8::from(sql)));
}

/// Counts `entries` more ledger entries of `board` that SQL lost (a gap found).
pub fn ledger_lost(board: &str, entries: i64) {
    gauge!("ovation_ledger_lost_entries", "board" => board.to_owned()).increment(entries as f64);
}

/// Sets the ledger entries of `board` SQL lost, as its recorded gaps say.
pub fn ledger_lost_set(board: &str, entries: i64) {
    gauge!("ovation_ledger_lost_entries", "board" => board.to_owned()).set(entries as f64);
}

/// Counts closed buckets written to the archive.
pub fn archived(buckets: usize) {
    counter!("ovation_archived_buckets_total").increment(buckets as u64);
}

/// Counts a Redis found empty.
pub fn redis_reset() {
    counter!("ovation_redis_resets_total").increment(1);
}

fn method_label(method: &Method) -> &'static str {
    match *method {
        Method::GET => "GET",
        Method::POST => "POST",
        Method::PUT => "PUT",
        Method::PATCH => "PATCH",
        Method::DELETE => "DELETE",
        Method::HEAD => "HEAD",
        Method::OPTIONS => "OPTIONS",
        _ => "other",
    }
}

/// Middleware: counts every request and records its latency, by route pattern.
pub async fn record_http(
    req: ServiceRequest,
    next: Next<impl MessageBody>,
) -> Result<ServiceResponse<impl MessageBody>, actix_web::Error> {
    let started = Instant::now();
    let method = method_label(req.method());
    let route = crate::routes::label(req.path());
    let response = next.call(req).await?;
    let status = response.status().as_u16();
    HTTP.with_borrow_mut(|requests| {
        let (count, latency) = requests
            .entry((method, route, status))
            .or_insert_with(|| {
                (
                    counter!("ovation_http_requests_total", "method" => method, "route" => route, "status" => status.to_string()),
                    histogram!("ovation_http_request_duration_seconds", "method" => method, "route" => route),
                )
            });
        count.increment(1);
        latency.record(started.elapsed().as_secs_f64());
    });
    Ok(response)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_series_read_zero_before_their_first_event() {
        let recorder = PrometheusBuilder::new().build_recorder();
        let handle = recorder.handle();
        metrics::with_local_recorder(&recorder, || register_known(&["arena"]));
        let text = handle.render();
        for line in [
            format!(
                "ovation_build_info{{version=\"{}\",commit=\"{}\"}} 1",
                env!("CARGO_PKG_VERSION"),
                env!("OVATION_COMMIT")
            ),
            "ovation_webhook_deliveries_total{outcome=\"gave_up\"} 0".to_owned(),
            "ovation_webhook_deliveries_total{outcome=\"delivered\"} 0".to_owned(),
            "ovation_redis_resets_total 0".to_owned(),
            "ovation_season_closes_total{league=\"arena\"} 0".to_owned(),
            "ovation_config_reloads_total{what=\"board\"} 0".to_owned(),
        ] {
            assert!(text.lines().any(|l| l == line), "{line} not in:\n{text}");
        }
    }
}
