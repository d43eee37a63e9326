//! What a recount (`engine::recount`) reads and writes in Redis: a bucket's every score
//! in one view, scanned a step at a time, and `recount_set.lua`, which sets a score the
//! ledger recounted only if it did not move since it was read.

use std::collections::HashMap;
use std::sync::LazyLock;

use redis::Script;

use super::keys::BoardKeys;
use super::reply::{as_array, as_int, as_text, as_units, parse_units, reply_error};
use super::{RedisFailure, RedisStore};
use crate::domain::period::Bucket;
use crate::domain::score::View;

static SET: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("recount_set.lua")));
static READ: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("recount_read.lua")));

/// Members per ZSCAN step: no step holds Redis long, whatever the bucket's size.
const STEP: usize = 1000;

impl RedisStore {
    /// Every member's score in `bucket`'s `view` (units); `None` when Redis holds no
    /// such ranking. Scanned in steps while votes go on: a member present throughout is
    /// read at least once.
    pub async fn bucket_scores(
        &self,
        board: &BoardKeys,
        bucket: &Bucket,
        view: View,
    ) -> Result<Option<HashMap<String, i64>>, RedisFailure> {
        let key = board.scores(view, bucket);
        let mut scores = HashMap::new();
        let mut cursor = "0".to_owned();
        loop {
            let mut pipe = redis::pipe();
            pipe.cmd("ZSCAN")
                .arg(&key)
                .arg(&cursor)
                .arg("COUNT")
                .arg(STEP)
                .exists(&key);
            let ((next, items), exists): ((String, Vec<String>), bool) =
                self.query("bucket_scores", pipe).await?;
            if !exists && scores.is_empty() {
                return Ok(None);
            }
            for pair in items.chunks(2) {
                if let [member, score] = pair {
                    let units = parse_units(score).ok_or_else(|| {
                        RedisFailure::Reply(format!("bucket_scores: a score {score} of {key}"))
                    })?;
                    scores.insert(member.clone(), units);
                }
            }
            if next == "0" {
                return Ok(Some(scores));
            }
            cursor = next;
        }
    }

    /// Every calendar bucket ranking Redis holds of `board`: (view, period, label), found
    /// by SCAN on the node of its hash tag, a step at a time.
    pub async fn rankings(
        &self,
        board: &BoardKeys,
    ) -> Result<Vec<(View, String, String)>, RedisFailure> {
        let mut conn = self.conn.clone();
        let (slot, pattern) = (board.slot(), board.rankings_pattern());
        let mut found = Vec::new();
        let mut cursor = 0;
        loop {
            let (next, keys) = conn.scan_step(slot, cursor, &pattern).await?;
            found.extend(keys.iter().filter_map(|k| {
                board
                    .ranking_of(k)
                    .map(|(view, period, label)| (view, period.to_owned(), label.to_owned()))
            }));
            if next == 0 {
                return Ok(found);
            }
            cursor = next;
        }
    }

    /// One member's score in `bucket`'s `view` (if it has one), the ledger entries still
    /// waiting in Redis and the id of the last entry trimmed, read at one instant
    /// (`recount_read.lua`).
    pub async fn score_with_pending(
        &self,
        board: &BoardKeys,
        bucket: &Bucket,
        view: View,
        member: &str,
    ) -> Result<(Option<i64>, Vec<String>, Option<i64>), RedisFailure> {
        let mut call = READ.key(board.scores(view, bucket));
        call.key(board.ledger())
            .key(board.ledger_trimmed())
            .arg(member);
        let reply = self.run_script_all("recount_read", &READ, &[call]).await?;
        let bad = || reply_error("recount_read", &redis::Value::Array(reply.clone()));
        let items = reply.first().and_then(as_array).ok_or_else(bad)?;
        let score = match items.first() {
            Some(redis::Value::Nil) | None => None,
            Some(v) => Some(as_units(v).ok_or_else(bad)?),
        };
        let entries = items
            .get(1)
            .and_then(as_array)
            .ok_or_else(bad)?
            .iter()
            .map(|v| as_text(v).ok_or_else(bad))
            .collect::<Result<_, _>>()?;
        let trimmed = items.get(2).and_then(as_text).and_then(|t| t.parse().ok());
        Ok((score, entries, trimmed))
    }

    /// Sets `member`'s score in `bucket`'s `view` to `units` (0 removes it) when it is
    /// still `read`; answers whether it did.
    pub async fn set_recounted(
        &self,
        board: &BoardKeys,
        bucket: &Bucket,
        view: View,
        member: &str,
        read: Option<i64>,
        units: i64,
    ) -> Result<bool, RedisFailure> {
        let mut call = SET.key(board.scores(view, bucket));
        call.arg(member)
            .arg(read.map(|r| r.to_string()).unwrap_or_default())
            .arg(units);
        let reply = self.run_script_all("recount_set", &SET, &[call]).await?;
        reply
            .first()
            .and_then(as_int)
            .map(|set| set == 1)
            .ok_or_else(|| reply_error("recount_set", &redis::Value::Array(reply)))
    }
}
