//! `instances_seen.lua`, `instances_page.lua` and `instances_search.lua`: a family's
//! listing of its live instances, in the family's own slot, and what keeps a sharded
//! instance's shards alive together.
//!
//! The listing is a sorted set of instance -> last write (ms), trimmed by score on every
//! write and read, so an instance leaves it `ttl` after its last write with no sweep job.
//! It lives in the family's slot while the instances' keys live in their own, so a write
//! notes its instance after its write script succeeded, in a second call: a failure
//! there leaves the instance out of the listing until its next write, and never changes
//! a score.

use std::sync::LazyLock;

use redis::{Script, Value};

use super::keys::BoardKeys;
use super::reply::{as_array, as_int, as_text, parse_units, reply_error};
use super::{RedisFailure, RedisStore};
use crate::domain::period::Bucket;
use crate::domain::score::View;
use crate::domain::scoring::Storage;

static SEEN: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("instances_seen.lua")));
static PAGE: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("instances_page.lua")));
static SEARCH: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("instances_search.lua")));

/// A sharded instance's shards are refreshed at most once per this fraction of its TTL,
/// so its keys expire between 15/16 and 16/16 of the TTL after its last write.
const REFRESH_SHARE: i64 = 16;

/// How many listing entries one step of a search looks at (one script call).
const SEARCH_STEP: i64 = 1000;

/// One page of a family's live instances.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstancePage {
    /// Every live instance.
    pub total: i64,
    /// (instance, last write in ms), most recent first.
    pub instances: Vec<(String, i64)>,
}

/// What a search through a family's live instances asks for.
#[derive(Debug, Clone, Copy)]
pub struct SearchQuery<'a> {
    /// What a name must contain (a valid instance name: no glob or pattern character).
    pub text: &'a str,
    /// Matches wanted at most.
    pub limit: i64,
    /// Names looked at, at most.
    pub budget: i64,
    /// The place to start after (last write ms, instance); `None` for the most recent.
    pub after: Option<(i64, &'a str)>,
}

/// One page of a search through a family's live instances.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InstanceSearch {
    /// Every live instance (the search counts no matches: it looks at a bounded part).
    pub total: i64,
    /// (instance, last write in ms) of the matches, most recent first.
    pub instances: Vec<(String, i64)>,
    /// The last instance looked at (last write ms, instance), where the next page
    /// starts; `None` when the listing ended.
    pub next: Option<(i64, String)>,
}

impl RedisStore {
    /// Notes that `instances` of `family` were written at `now_ms` (with whether their
    /// writes appended ledger entries, which the drain then finds), and for a sharded
    /// family gives the current buckets of every shard of those whose refresh is due
    /// their expiry anew (`buckets`: the buckets a write now lands in, and those whose
    /// distinct voters it counts).
    pub async fn instances_written(
        &self,
        family: &BoardKeys,
        ttl_ms: i64,
        now_ms: i64,
        instances: &[(&str, bool)],
        buckets: &[Bucket],
    ) -> Result<(), RedisFailure> {
        let every = match family.storage() {
            Storage::Sharded { .. } => (ttl_ms / REFRESH_SHARE).max(1),
            _ => 0,
        };
        let ledgered = instances.iter().filter(|(_, l)| *l).count();
        let mut call = SEEN.key(family.instances());
        call.key(family.instances_refreshed())
            .key(family.ledger_dirty())
            .arg(now_ms)
            .arg(ttl_ms)
            .arg(every)
            .arg(ledgered);
        for (instance, _) in instances.iter().filter(|(_, l)| *l) {
            call.arg(*instance);
        }
        for (instance, _) in instances.iter().filter(|(_, l)| !*l) {
            call.arg(*instance);
        }
        let reply = self
            .run_script_all("instances_seen", &SEEN, &[call])
            .await?;
        let due: Vec<String> = match reply.first() {
            Some(Value::Array(items)) => items.iter().filter_map(as_text).collect(),
            other => return Err(reply_error("instances_seen", other.unwrap_or(&Value::Nil))),
        };
        if due.is_empty() {
            return Ok(());
        }
        let mut pipe = redis::pipe();
        for instance in &due {
            for shard in family.instance(instance, ttl_ms).shards() {
                for bucket in buckets {
                    pipe.pexpire(shard.scores(View::Real, bucket), ttl_ms)
                        .ignore();
                    pipe.pexpire(shard.participants(bucket), ttl_ms).ignore();
                }
                pipe.pexpire(shard.vote_counts(), ttl_ms).ignore();
            }
        }
        self.query::<()>("instances_refresh", pipe).await
    }

    /// Whether `instance` of `family` was written within `ttl_ms` of `now_ms` (its
    /// listing entry says so).
    pub async fn instance_live(
        &self,
        family: &BoardKeys,
        instance: &str,
        ttl_ms: i64,
        now_ms: i64,
    ) -> Result<bool, RedisFailure> {
        let mut pipe = redis::pipe();
        pipe.zscore(family.instances(), instance);
        let (written,): (Option<f64>,) = self.query("instance_live", pipe).await?;
        Ok(written.is_some_and(|ms| ms as i64 > now_ms - ttl_ms))
    }

    /// A page of `family`'s live instances after the cursor (last write ms, instance).
    pub async fn instances_page(
        &self,
        family: &BoardKeys,
        ttl_ms: i64,
        now_ms: i64,
        limit: i64,
        after: Option<(i64, &str)>,
    ) -> Result<InstancePage, RedisFailure> {
        let mut call = PAGE.key(family.instances());
        call.arg(now_ms).arg(ttl_ms).arg(limit);
        match after {
            Some((ms, instance)) => call.arg(ms).arg(instance),
            None => call.arg("").arg(""),
        };
        let reply = self
            .run_script_all("instances_page", &PAGE, &[call])
            .await?;
        let value = reply.first().unwrap_or(&Value::Nil);
        let bad = || reply_error("instances_page", value);
        let items = as_array(value).ok_or_else(bad)?;
        let total = items.first().and_then(as_int).ok_or_else(bad)?;
        let instances = items[1..]
            .chunks(2)
            .map(|pair| {
                let name = pair.first().and_then(as_text)?;
                let ms = pair
                    .get(1)
                    .and_then(as_text)
                    .and_then(|t| parse_units(&t))?;
                Some((name, ms))
            })
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad)?;
        Ok(InstancePage { total, instances })
    }

    /// Up to `limit` of `family`'s live instances whose name contains `text`, most
    /// recently written first, after the place `after` (last write ms, instance): the
    /// listing walked from there by `instances_search.lua` in steps of [`SEARCH_STEP`]
    /// names, `budget` at most, so a search costs Redis the same however many instances
    /// live. Answers the matches and, unless the listing ended, the place the
    /// next page starts after.
    pub async fn instances_matching(
        &self,
        family: &BoardKeys,
        ttl_ms: i64,
        now_ms: i64,
        query: SearchQuery<'_>,
    ) -> Result<InstanceSearch, RedisFailure> {
        let SearchQuery {
            text: search,
            limit,
            budget,
            after,
        } = query;
        let mut place: Option<(i64, String)> = after.map(|(ms, i)| (ms, i.to_owned()));
        let mut found = InstanceSearch {
            total: 0,
            instances: Vec::new(),
            next: None,
        };
        let mut looked = 0;
        while looked < budget {
            let want = limit - found.instances.len() as i64;
            let step = SEARCH_STEP.min(budget - looked);
            let mut call = SEARCH.key(family.instances());
            call.arg(now_ms).arg(ttl_ms).arg(search).arg(want).arg(step);
            match &place {
                Some((ms, instance)) => call.arg(*ms).arg(instance.as_str()),
                None => call.arg("").arg(""),
            };
            let reply = self
                .run_script_all("instances_search", &SEARCH, &[call])
                .await?;
            let value = reply.first().unwrap_or(&Value::Nil);
            let bad = || reply_error("instances_search", value);
            let items = as_array(value).ok_or_else(bad)?;
            let [total, step_looked, last_ms, last_name, matches @ ..] = items else {
                return Err(bad());
            };
            found.total = as_int(total).ok_or_else(bad)?;
            let step_looked = as_int(step_looked).ok_or_else(bad)?;
            looked += step_looked;
            for pair in matches.chunks(2) {
                let name = pair.first().and_then(as_text).ok_or_else(bad)?;
                let ms = pair
                    .get(1)
                    .and_then(as_text)
                    .and_then(|t| parse_units(&t))
                    .ok_or_else(bad)?;
                found.instances.push((name, ms));
            }
            if step_looked > 0 {
                let ms = as_text(last_ms)
                    .and_then(|t| parse_units(&t))
                    .ok_or_else(bad)?;
                place = Some((ms, as_text(last_name).ok_or_else(bad)?));
            }
            let ended = step_looked < step && (found.instances.len() as i64) < limit;
            if ended {
                return Ok(found);
            }
            if found.instances.len() as i64 >= limit {
                break;
            }
        }
        found.next = place;
        Ok(found)
    }

    /// Members with a score in `bucket` of each board (a sharded one's over all its
    /// shards), in one round trip; a board whose scores are sums over shards reads its
    /// shards' members (see `summed`).
    pub async fn members_in(
        &self,
        boards: &[BoardKeys],
        bucket: &Bucket,
    ) -> Result<Vec<i64>, RedisFailure> {
        let mut pipe = redis::pipe();
        let mut counted = Vec::with_capacity(boards.len());
        for board in boards.iter().filter(|b| !b.sums_shards()) {
            let shards = board.shards();
            counted.push(shards.len());
            for shard in &shards {
                match board.storage() {
                    Storage::TopN { .. } => pipe.hlen(shard.exact_scores(bucket)),
                    _ => pipe.zcard(shard.scores(View::Real, bucket)),
                };
            }
        }
        let counts: Vec<i64> = if counted.is_empty() {
            Vec::new()
        } else {
            self.query("members_in", pipe).await?
        };
        let mut counts = counts.into_iter();
        let mut counted = counted.into_iter();
        let mut members = Vec::with_capacity(boards.len());
        for board in boards {
            members.push(if board.sums_shards() {
                self.summed_members(board, bucket).await?
            } else {
                let n = counted.next().unwrap_or(0);
                counts.by_ref().take(n).sum()
            });
        }
        Ok(members)
    }
}
