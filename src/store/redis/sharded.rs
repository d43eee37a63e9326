//! Reads of a `sharded` board: each shard is a sorted set of some members; a page is a
//! k-way merge of every shard's best, in the order of one sorted set (score descending,
//! then member id descending, as ZREVRANGE orders ties), so a sharded board answers
//! exactly what a `full` board fed the same writes answers. A rank is 1 + the members
//! with a strictly higher score, summed over shards. Each step is one pipelined round
//! trip over the shards.

use std::cmp::Ordering;
use std::sync::LazyLock;

use redis::{Script, Value};

use super::keys::BoardKeys;
use super::member::{StandingQuery, StandingReply};
use super::page::{PageQuery, PageReply};
use super::reply::{as_array, as_int, as_text, as_units, reply_error};
use super::{Invocation, RedisFailure, RedisStore};
use crate::domain::period::Bucket;
use crate::domain::score::View;

static AROUND: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("shard_around.lua")));

/// The deepest a sharded board pages (offset + limit): a page reads that many entries of
/// every shard.
pub const MAX_DEPTH: i64 = 100_000;

/// (member, units) in ranking order: higher score first, then the greater member id.
fn order(a: &(String, i64), b: &(String, i64)) -> Ordering {
    b.1.cmp(&a.1)
        .then_with(|| b.0.as_bytes().cmp(a.0.as_bytes()))
}

fn entries(value: &Value) -> Option<Vec<(String, i64)>> {
    as_array(value)?
        .chunks(2)
        .map(|pair| Some((as_text(&pair[0])?, as_units(pair.get(1)?)?)))
        .collect()
}

fn rankings(board: &BoardKeys, view: View, bucket: &Bucket) -> Vec<String> {
    board
        .shards()
        .iter()
        .map(|s| s.scores(view, bucket))
        .collect()
}

/// Adds to `pipe` what counts a bucket's members: one ZCARD per shard.
fn counts(pipe: &mut redis::Pipeline, board: &BoardKeys, bucket: &Bucket) {
    for key in rankings(board, View::Real, bucket) {
        pipe.zcard(key);
    }
}

/// Takes the replies of [`counts`] off the end of a pipeline's replies: the members.
fn read_counts(replies: &mut Vec<Value>, shards: usize) -> Result<i64, RedisFailure> {
    let bad = || RedisFailure::Reply("sharded counts".into());
    let at = replies.len().checked_sub(shards).ok_or_else(bad)?;
    replies
        .split_off(at)
        .iter()
        .map(as_int)
        .sum::<Option<i64>>()
        .ok_or_else(bad)
}

impl RedisStore {
    /// Members with a score in the bucket (summed over shards) and distinct voters (the
    /// union of the shards' HyperLogLogs).
    pub(super) async fn sharded_counts(
        &self,
        board: &BoardKeys,
        bucket: &Bucket,
    ) -> Result<(i64, i64), RedisFailure> {
        let mut pipe = redis::pipe();
        counts(&mut pipe, board, bucket);
        let (mut replies, participants) = self
            .with_participants("sharded_counts", pipe, board, bucket)
            .await?;
        Ok((
            read_counts(&mut replies, board.shards().len())?,
            participants,
        ))
    }

    /// Runs `pipe` and counts the bucket's distinct voters at the same time.
    async fn with_participants(
        &self,
        op: &'static str,
        pipe: redis::Pipeline,
        board: &BoardKeys,
        bucket: &Bucket,
    ) -> Result<(Vec<Value>, i64), RedisFailure> {
        let (replies, participants) = tokio::try_join!(
            self.query::<Vec<Value>>(op, pipe),
            self.sharded_participants(board, std::slice::from_ref(bucket))
        )?;
        let participants = participants
            .first()
            .copied()
            .ok_or_else(|| RedisFailure::Reply("sharded participants".into()))?;
        Ok((replies, participants))
    }

    /// Members with a strictly higher score than `units`, over every shard.
    async fn higher(&self, keys: &[String], units: i64) -> Result<i64, RedisFailure> {
        let mut pipe = redis::pipe();
        for key in keys {
            pipe.zcount(key, format!("({units}"), "+inf");
        }
        let counts: Vec<i64> = self.query("sharded_rank", pipe).await?;
        Ok(counts.iter().sum())
    }

    pub(super) async fn sharded_page(&self, q: &PageQuery<'_>) -> Result<PageReply, RedisFailure> {
        match &q.anchor {
            None => self.sharded_top(q).await,
            Some(anchor) => self.sharded_around(q, anchor).await,
        }
    }

    /// A page by offset: every shard's best few with the counts in one round trip,
    /// merged here; a second round trip fetches more from the shards that may hold more
    /// of the page (rare: members spread evenly over shards). The merged list then holds
    /// the board's best `offset + limit`, so every member with a higher score than the
    /// page's first entry is in it: the first entry's rank needs no other call.
    async fn sharded_top(&self, q: &PageQuery<'_>) -> Result<PageReply, RedisFailure> {
        let keys = rankings(q.board, q.view, q.bucket);
        let need = (q.offset + q.limit) as usize;
        // Twice a shard's even share and some: the page rarely needs more of one shard.
        let first = need.min(need / keys.len() * 2 + 8);
        let mut pipe = redis::pipe();
        for key in &keys {
            pipe.cmd("ZREVRANGE")
                .arg(key)
                .arg(0)
                .arg(first - 1)
                .arg("WITHSCORES");
        }
        counts(&mut pipe, q.board, q.bucket);
        let (mut replies, participants) = self
            .with_participants("sharded_page", pipe, q.board, q.bucket)
            .await?;
        let total_members = read_counts(&mut replies, keys.len())?;
        let bad = || RedisFailure::Reply("sharded page".into());
        let mut shards = replies
            .iter()
            .map(entries)
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad)?;
        let mut merged: Vec<(String, i64)> = shards.concat();
        merged.sort_by(order);
        // A shard that gave all it was asked for may hold more of the page: unless its
        // last entry already ranks below the page's last, fetch the rest of its share.
        let cut = merged.get(need - 1).cloned();
        let more: Vec<usize> = (0..keys.len())
            .filter(|&i| {
                shards[i].len() == first
                    && first < need
                    && cut.as_ref().is_none_or(|cut| {
                        shards[i]
                            .last()
                            .is_some_and(|last| order(last, cut) != Ordering::Greater)
                    })
            })
            .collect();
        if !more.is_empty() {
            let mut pipe = redis::pipe();
            for &i in &more {
                pipe.cmd("ZREVRANGE")
                    .arg(&keys[i])
                    .arg(first)
                    .arg(need - 1)
                    .arg("WITHSCORES");
            }
            let rest: Vec<Value> = self.query("sharded_page", pipe).await?;
            for (&i, reply) in more.iter().zip(&rest) {
                shards[i].extend(entries(reply).ok_or_else(bad)?);
            }
            merged = shards.concat();
            merged.sort_by(order);
        }
        let from = (q.offset as usize).min(merged.len());
        let to = need.min(merged.len());
        let first_rank = match merged.get(from) {
            Some((_, first)) => 1 + merged[..from].iter().filter(|(_, u)| u > first).count() as i64,
            None => 0,
        };
        Ok(PageReply {
            total_members,
            participants,
            offset: Some(q.offset),
            first_rank,
            entries: merged[from..to].to_vec(),
        })
    }

    /// The member and its neighbours: each shard answers where the member's (score, id)
    /// stands in it and its entries around there; the member's place on the board is the
    /// sum of those places.
    async fn sharded_around(
        &self,
        q: &PageQuery<'_>,
        anchor: &str,
    ) -> Result<PageReply, RedisFailure> {
        let keys = rankings(q.board, q.view, q.bucket);
        let own = q.board.member_shard(anchor).scores(q.view, q.bucket);
        let mut pipe = redis::pipe();
        pipe.zscore(&own, anchor);
        counts(&mut pipe, q.board, q.bucket);
        let (mut replies, participants) = self
            .with_participants("sharded_page", pipe, q.board, q.bucket)
            .await?;
        let total_members = read_counts(&mut replies, keys.len())?;
        let empty = PageReply {
            total_members,
            participants,
            offset: None,
            first_rank: 0,
            entries: Vec::new(),
        };
        let Some(score) = replies.first().and_then(as_text) else {
            return Ok(empty);
        };
        let calls: Vec<Invocation> = keys
            .iter()
            .map(|key| {
                let mut inv = AROUND.key(key);
                inv.arg(&score).arg(anchor).arg(q.offset).arg(q.limit);
                inv
            })
            .collect();
        let replies = self.run_script_all("shard_around", &AROUND, &calls).await?;
        let mut position = 0;
        let mut merged = Vec::new();
        for reply in &replies {
            let bad = || reply_error("shard_around", reply);
            let items = as_array(reply).ok_or_else(bad)?;
            let [pos, page] = items else {
                return Err(bad());
            };
            position += as_int(pos).ok_or_else(bad)?;
            merged.extend(entries(page).ok_or_else(bad)?);
        }
        merged.sort_by(order);
        let Some(j) = merged.iter().position(|(m, _)| m == anchor) else {
            return Ok(empty);
        };
        // As on one sorted set: up to `radius` entries above the member, then as many
        // below as fill the limit.
        let above = (q.offset as usize).min(j);
        let to = (j - above + q.limit as usize).min(merged.len());
        let page = merged[j - above..to].to_vec();
        let first_rank = match page.first() {
            Some((_, units)) => self.higher(&keys, *units).await? + 1,
            None => 0,
        };
        Ok(PageReply {
            total_members,
            participants,
            offset: Some(position - above as i64),
            first_rank,
            entries: page,
        })
    }

    pub(super) async fn sharded_standing(
        &self,
        q: &StandingQuery<'_>,
    ) -> Result<StandingReply, RedisFailure> {
        let shard = q.board.member_shard(q.member);
        let mut pipe = redis::pipe();
        pipe.zscore(shard.scores(q.view, q.bucket), q.member)
            .zscore(
                q.previous.map_or_else(
                    || shard.scores(q.view, q.bucket),
                    |p| shard.scores(q.view, p),
                ),
                q.member,
            )
            .pfcount(shard.member_voters(q.bucket, q.member));
        let (score, previous, participants): (Option<String>, Option<String>, i64) =
            self.query("sharded_standing", pipe).await?;
        let units = |s: Option<String>| s.and_then(|s| super::reply::parse_units(&s));
        let (score, previous_score) = (
            units(score),
            units(previous).filter(|_| q.previous.is_some()),
        );
        let keys = rankings(q.board, q.view, q.bucket);

        // One round trip for the rest but the rank of the member above: per shard the
        // nearest member above (the lowest score above this one, 0 without a score; the
        // smallest id among equal scores, as ZRANGEBYSCORE orders them), the members
        // above this one, and above its previous score in the bucket before.
        let previous_keys = q
            .previous
            .filter(|_| previous_score.is_some())
            .map(|bucket| rankings(q.board, q.view, bucket));
        let mut pipe = redis::pipe();
        for key in &keys {
            pipe.cmd("ZRANGEBYSCORE")
                .arg(key)
                .arg(format!("({}", score.unwrap_or(0)))
                .arg("+inf")
                .arg("WITHSCORES")
                .arg("LIMIT")
                .arg(0)
                .arg(1);
        }
        if let Some(units) = score {
            for key in &keys {
                pipe.zcount(key, format!("({units}"), "+inf");
            }
        }
        if let (Some(previous_keys), Some(units)) = (&previous_keys, previous_score) {
            for key in previous_keys {
                pipe.zcount(key, format!("({units}"), "+inf");
            }
        }
        // Members in every shard, and those below this one.
        for key in &keys {
            pipe.zcard(key);
            if let Some(units) = score {
                pipe.zcount(key, "-inf", format!("({units}"));
            }
        }
        let replies: Vec<Value> = self.query("sharded_standing", pipe).await?;
        let bad = || RedisFailure::Reply("sharded standing".into());
        let (nearest, counts) = replies.split_at(keys.len());
        let counts = counts
            .iter()
            .map(as_int)
            .collect::<Option<Vec<i64>>>()
            .ok_or_else(bad)?;
        let per_shard = if score.is_some() { 2 } else { 1 };
        let (counts, sizes) = counts.split_at(counts.len() - per_shard * keys.len());
        let total = sizes.iter().step_by(per_shard).sum::<i64>();
        let lower = score.map(|_| sizes.iter().skip(1).step_by(2).sum::<i64>());
        let (current, before) = counts.split_at(if score.is_some() { keys.len() } else { 0 });
        let rank = score.map(|_| current.iter().sum::<i64>() + 1);
        let previous_rank = previous_score
            .and(previous_keys)
            .map(|_| before.iter().sum::<i64>() + 1);
        let above = nearest.iter().filter_map(entries).flatten().min_by(|a, b| {
            a.1.cmp(&b.1)
                .then_with(|| a.0.as_bytes().cmp(b.0.as_bytes()))
        });
        let above = match above {
            Some((member, units)) => Some((member, units, self.higher(&keys, units).await? + 1)),
            None => None,
        };
        Ok(StandingReply {
            score,
            rank,
            above,
            previous_score,
            previous_rank,
            participants,
            lower,
            total,
            // A sharded board holding separate scores (a scores board) has no votes.
            votes: None,
        })
    }
}
