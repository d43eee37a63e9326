//! Whether this instance may take traffic: what its stores answer, checked on every
//! `/readyz` and logged once at start-up (what Redis risks is `engine::durability`).

use std::time::Duration;

use super::durability::RedisDurability;
use super::state::AppState;
use crate::store::sql;

/// Whether an instance is ready to serve: what its stores answered.
#[derive(Debug, Clone)]
pub struct Readiness {
    /// Redis's durability settings; `None` when Redis does not answer.
    pub redis: Option<RedisDurability>,
    /// Whether SQL answers.
    pub sql: bool,
    /// Why Redis makes the instance not ready though it answers (it evicts keys).
    pub refusal: Option<String>,
    /// The ledger's backlog as the drain last saw it: the oldest waiting entry's age in
    /// seconds (the largest over boards), and the entries waiting over all boards.
    pub ledger: (f64, u64),
    /// Boards being rebuilt from their ledgers after Redis lost them: (boards, entries
    /// replayed, entries to replay). Not ready until they are.
    pub rebuild: Option<(usize, i64, i64)>,
    /// Ranges of `seq` SQL lost after Redis had trimmed them (board slug, room, first,
    /// last), newest found first, the first [`GAPS_SHOWN`]: the instance stays ready (it
    /// numbers new entries after them), and says so.
    pub gaps: Vec<(String, String, i64, i64)>,
}

/// Gaps of the ledgers `/readyz` shows at most.
pub const GAPS_SHOWN: u64 = 20;

impl Readiness {
    pub fn ready(&self) -> bool {
        self.redis.is_some() && self.sql && self.refusal.is_none() && self.rebuild.is_none()
    }
}

/// Asks Redis and SQL, at once, whether they answer, and Redis what it risks; records
/// the answer in `/metrics` (`ovation_ready`, `ovation_store_up`).
pub async fn check(state: &AppState) -> Readiness {
    let (report, sql, gaps) = tokio::join!(
        state.durability.inspect(&state.redis),
        sql::ping(&state.db),
        sql::ledger::gaps(&state.db, None, GAPS_SHOWN)
    );
    let redis = report.ok();
    let gaps = gaps
        .unwrap_or_default()
        .into_iter()
        .map(|g| {
            let slug = state
                .config
                .board_by_id(g.board_id)
                .map_or_else(|| g.board_id.to_string(), |b| b.board.slug.to_string());
            (slug, g.instance, g.from, g.to)
        })
        .collect();
    let readiness = Readiness {
        gaps,
        refusal: redis.as_ref().and_then(|r| state.durability.refusal(r)),
        redis,
        sql: sql.is_ok(),
        ledger: state.backlogs.total(chrono::Utc::now().timestamp_millis()),
        rebuild: state.backlogs.rebuild_progress(),
    };
    crate::metrics::readiness(readiness.ready(), readiness.redis.is_some(), readiness.sql);
    readiness
}

/// How often an instance checks its own readiness for `/metrics`, whether or not
/// anything asks `/readyz`.
pub const WATCH: Duration = Duration::from_secs(5);

/// Checks readiness every `every`, so `/metrics` says it even when nothing probes.
pub async fn watch(state: AppState, every: Duration) {
    let mut ticks = tokio::time::interval(every);
    ticks.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        ticks.tick().await;
        check(&state).await;
    }
}

/// Logs what Redis risks at start-up (when it answers).
pub async fn warn_at_start(state: &AppState) {
    let durability = &state.durability;
    match durability.inspect(&state.redis).await {
        Ok(report) => {
            if let Some(why) = durability.refusal(&report) {
                tracing::error!("{why}; /readyz answers 503 until it changes");
            }
            match report.persistence {
                "aof" => {}
                "unknown" => tracing::warn!(
                    "cannot read Redis's persistence settings (CONFIG GET is not allowed); make sure AOF is on"
                ),
                other => tracing::warn!(
                    persistence = other,
                    "Redis runs without AOF: a restart loses the votes since its last snapshot (or all of them)"
                ),
            }
        }
        Err(err) => tracing::warn!(error = %err, "cannot inspect Redis's durability at start-up"),
    }
}
