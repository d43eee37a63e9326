//! A board's plain commands, by layout: members and voters of a bucket, writes and
//! refusals per hour, removing a member, deleting a board's keys.

use super::keys::BoardKeys;
use super::{RedisFailure, RedisStore};
use crate::domain::period::{Bucket, Rolling};
use crate::domain::score::View;
use crate::domain::scoring::Storage;

impl RedisStore {
    /// Removes a member from the given buckets (both views; a top_n board's exact scores
    /// too; a sharded board's in the member's shard, or in every shard when its scores
    /// are sums over shards), from every slot and drain of the
    /// given rolling windows (a slot still holding it would subtract it from the totals
    /// again when it leaves), and its initial-votes record: atomically in each hash tag's
    /// slot (a sharded board's member shard, then the board's own).
    pub async fn remove_member(
        &self,
        board: &BoardKeys,
        buckets: &[Bucket],
        windows: &[Rolling],
        member: &str,
    ) -> Result<(), RedisFailure> {
        let atomic = || {
            let mut pipe = redis::pipe();
            pipe.atomic();
            pipe
        };
        // The shards holding the member's scores first (the board itself unless sharded;
        // every shard when its scores are sums over shards), the board's own slot last.
        let holders = if board.sums_shards() {
            board.shards()
        } else {
            vec![board.member_shard(member)]
        };
        let mut pipes: Vec<redis::Pipeline> = holders.iter().map(|_| atomic()).collect();
        if board.storage().is_sharded() {
            pipes.push(atomic());
        }
        for (pipe, shard) in pipes.iter_mut().zip(&holders) {
            let mut keys: Vec<String> = buckets
                .iter()
                .flat_map(|b| [shard.scores(View::Real, b), shard.scores(View::Display, b)])
                .collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                pipe.zrem(key, member).ignore();
            }
        }
        // A summing board keeps initial votes in its first shard.
        let initial = if board.sums_shards() {
            0
        } else {
            pipes.len() - 1
        };
        pipes[initial]
            .hdel(board.initial_shard().initial_applied(), member)
            .ignore();
        let own = pipes.last_mut().expect("one pipeline at least");
        for &window in windows {
            for key in board.window(window).scores() {
                own.zrem(key, member).ignore();
            }
        }
        if board.storage().is_top_n() {
            for bucket in buckets {
                own.hdel(board.exact_scores(bucket), member).ignore();
            }
        }
        self.bounded("remove_member", |conn| async move {
            let runs = pipes.iter().map(|pipe| {
                let mut conn = conn.clone();
                async move { pipe.query_async::<()>(&mut conn).await }
            });
            for run in futures_util::future::join_all(runs).await {
                run?;
            }
            Ok(())
        })
        .await
    }

    /// Writes (votes or score writes) in each of the given hours (hours since the
    /// epoch), in order, over the board's slots.
    pub async fn votes_per_hour(
        &self,
        board: &BoardKeys,
        hours: &[i64],
    ) -> Result<Vec<i64>, RedisFailure> {
        let mut pipe = redis::pipe();
        for slot in board.slots() {
            pipe.cmd("HMGET").arg(slot.vote_counts()).arg(hours);
        }
        let slots: Vec<Vec<Option<i64>>> = self.query("votes_per_hour", pipe).await?;
        let mut sums = vec![0; hours.len()];
        for counts in slots {
            for (sum, count) in sums.iter_mut().zip(counts) {
                *sum += count.unwrap_or(0);
            }
        }
        Ok(sums)
    }

    /// Votes counted in `bucket` of a votes board (its real view's gains, counted by the
    /// write scripts beside the hours'), over the board's slots.
    pub async fn bucket_votes(
        &self,
        board: &BoardKeys,
        bucket: &Bucket,
    ) -> Result<i64, RedisFailure> {
        let mut pipe = redis::pipe();
        for slot in board.slots() {
            pipe.hget(slot.vote_counts(), slot.scores(View::Real, bucket));
        }
        let counts: Vec<Option<i64>> = self.query("bucket_votes", pipe).await?;
        Ok(counts.into_iter().flatten().sum())
    }

    /// Rate-limit refusals per rule (rule id, votes) in each of the given hours, over
    /// the board's slots.
    pub async fn refusals(
        &self,
        board: &BoardKeys,
        hours: &[i64],
    ) -> Result<Vec<Vec<(i64, i64)>>, RedisFailure> {
        let slots = board.slots();
        let mut pipe = redis::pipe();
        for hour in hours {
            for slot in &slots {
                pipe.hgetall(slot.refusals(*hour));
            }
        }
        let maps: Vec<std::collections::HashMap<i64, i64>> = self.query("refusals", pipe).await?;
        Ok(maps
            .chunks(slots.len())
            .map(|hour| {
                let mut sums = std::collections::BTreeMap::new();
                for (rule, votes) in hour.iter().flatten() {
                    *sums.entry(*rule).or_insert(0) += votes;
                }
                sums.into_iter().collect()
            })
            .collect())
    }

    /// Distinct voters (PFCOUNT) of each bucket, in one round trip; a sharded board's
    /// shards count together (see `voter_union`).
    pub async fn participants(
        &self,
        board: &BoardKeys,
        buckets: &[Bucket],
    ) -> Result<Vec<i64>, RedisFailure> {
        if board.storage().is_sharded() {
            return self.sharded_participants(board, buckets).await;
        }
        let mut pipe = redis::pipe();
        for bucket in buckets {
            pipe.pfcount(board.voters(bucket));
        }
        self.query("pfcount", pipe).await
    }

    /// Members with a score in a bucket (of the real view: a top_n board's every scored
    /// member, a sharded board's over all shards) and distinct voters, in one round trip.
    pub async fn bucket_counts(
        &self,
        board: &BoardKeys,
        bucket: &Bucket,
    ) -> Result<(i64, i64), RedisFailure> {
        let mut pipe = redis::pipe();
        match board.storage() {
            Storage::Sharded { .. } if board.sums_shards() => {
                return self.summed_counts(board, bucket).await;
            }
            Storage::Sharded { .. } => return self.sharded_counts(board, bucket).await,
            Storage::TopN { .. } => pipe.hlen(board.exact_scores(bucket)),
            Storage::Full => pipe.zcard(board.scores(View::Real, bucket)),
        };
        pipe.pfcount(board.voters(bucket));
        self.query("bucket_counts", pipe).await
    }

    /// Deletes every key of a deleted board (and of its shards), a batch at a time: SCAN
    /// on the server that holds each hash tag's slot (on a cluster, that node only).
    /// Runs in the background after the board is gone from SQL; its keys are no longer
    /// reachable by then.
    pub async fn unlink_board(&self, board: &BoardKeys) -> Result<u64, RedisFailure> {
        self.unlink_matching(&board.patterns()).await
    }

    /// Deletes every key of a deleted family's instances (their shards too), on every
    /// node: an instance's keys live in its own slot, anywhere. Keys an instance writes
    /// meanwhile are no longer reachable, and expire with it.
    pub async fn unlink_instances(&self, family: &BoardKeys) -> Result<u64, RedisFailure> {
        self.unlink_everywhere(&family.instances_pattern()).await
    }
}
