//! `initial.lua`: members' initial votes on the all-time display board.

use redis::Script;
use std::sync::LazyLock;

use super::keys::BoardKeys;
use super::reply::{as_array, as_text, reply_error};
use super::{Invocation, RedisFailure, RedisStore};
use crate::domain::period::Bucket;
use crate::domain::score::View;

static INITIAL: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("initial.lua")));

impl RedisStore {
    /// Brings members' initial votes on the all-time display board (a summing board's
    /// first shard) to `targets`
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
        let keys = board.initial_shard();
        let calls: Vec<Invocation> = targets
            .chunks(1000)
            .map(|chunk| {
                let mut inv = INITIAL.key(keys.scores(View::Display, &Bucket::all()));
                inv.key(keys.initial_applied())
                    .key(keys.headroom())
                    .arg(board.max_units())
                    .arg(mode);
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
}
