//! A league's keys in Redis: `league_join.lua`, `league_score.lua` (with `rules.lua`:
//! the league's score limits),
//! `league_advance.lua` and `league_open.lua`, and the plain reads and writes of its
//! seasons (the season record, standings, the close's settled tiers and expiries).

use std::collections::HashMap;
use std::sync::LazyLock;
use std::time::Duration;

use redis::{Script, Value};

use super::keys::LeagueKeys;
use super::lease::Lease;
use super::reply::{as_array, as_int, as_text, as_units, parse_units, reply_error};
use super::rules::{self, RuleCheck};
use super::vote::REFUSALS_TTL_S;
use super::{RedisFailure, RedisStore};
use crate::domain::ids::IdempotencyKey;
use crate::domain::league::{
    BracketRef, SCORE_MAX, ScoreOp, SeasonRules, rewards_from_json, rewards_to_json,
    tiers_from_json, tiers_to_json,
};
use crate::domain::period::epoch_hour_of_ms;

static JOIN: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("league_join.lua")));
static SCORE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("ring.lua"),
        include_str!("rules.lua"),
        include_str!("league_score.lua")
    ))
});
static ADVANCE: LazyLock<Script> =
    LazyLock::new(|| Script::new(include_str!("league_advance.lua")));
static OPEN: LazyLock<Script> = LazyLock::new(|| Script::new(include_str!("league_open.lua")));

/// Players per HSET when a close settles tiers.
const SETTLE_CHUNK: usize = 1000;
/// Brackets read per pipeline by a close.
const READ_CHUNK: usize = 100;

/// A league's season record (`league_advance.lua` lists its fields).
#[derive(Debug, Clone, PartialEq)]
pub struct SeasonRecord {
    pub n: i64,
    /// Takes scores; `false` while the previous season's close is not done.
    pub open: bool,
    pub ends_ms: i64,
    pub rules: SeasonRules,
    /// Season n - 1, when there is one.
    pub previous: Option<PreviousSeason>,
    /// The last season whose close is done (0: none).
    pub settled: i64,
}

/// The season before the current one, as its record keeps it.
#[derive(Debug, Clone, PartialEq)]
pub struct PreviousSeason {
    pub n: i64,
    pub rules: SeasonRules,
    /// When it stopped taking scores, ms since the epoch.
    pub ended_ms: i64,
}

/// A season start (see `league_advance.lua`).
#[derive(Debug)]
pub struct Advance<'a> {
    /// The season the caller saw current; 0 when Redis holds none.
    pub current: i64,
    /// The number the season takes when Redis holds none.
    pub first: i64,
    /// When the current season stopped taking scores (ms since the epoch).
    pub ended_ms: i64,
    /// When the started season ends (ms since the epoch).
    pub ends_ms: i64,
    pub rules: &'a SeasonRules,
}

/// One join (see `league_join.lua`).
#[derive(Debug)]
pub struct JoinCall<'a> {
    pub season: i64,
    pub player: &'a str,
    /// Profile JSON, or `None` to keep the cached one.
    pub profile: Option<&'a str>,
    pub now_ms: i64,
    /// The caller's id: rewards held for it are handed over.
    pub caller: &'a str,
    /// Further callers (revoked keys) whose held rewards this join may take.
    pub claim: &'a [String],
    /// The bracket the caller expects the player in this season, and last season.
    pub place: Option<BracketRef>,
    pub previous: Option<BracketRef>,
}

/// A reward handed over by a join, with the season that gave it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct HandedReward {
    pub reward: String,
    /// `None` for rewards that waited from before seasons were kept with them.
    pub season: Option<i64>,
}

/// What a join answers.
#[derive(Debug, Clone, PartialEq)]
pub enum JoinReply {
    Joined {
        place: BracketRef,
        /// 1-based.
        rank: i64,
        score: i64,
        handed: Vec<HandedReward>,
        /// The callers other rewards of the player are held for.
        held: Vec<String>,
    },
    /// The join needs these brackets (this season's, last season's) named: call again.
    Place {
        place: Option<BracketRef>,
        previous: Option<BracketRef>,
    },
    /// The current season is this one: call again with it.
    Stale(i64),
    /// The league has no season in Redis.
    NoSeason,
    /// The expected season is over; the next one has not started.
    Ended,
}

/// One score write.
#[derive(Debug)]
pub struct LeagueScoreCall<'a> {
    pub season: i64,
    pub player: &'a str,
    pub op: ScoreOp,
    pub now_ms: i64,
    /// The caller (as for votes), its key, the record's lifetime and the request's
    /// fingerprint.
    pub idempotency: Option<(&'a str, &'a IdempotencyKey, Duration, &'a str)>,
    /// The league's score limits the write must pass (each counts 1).
    pub rules: &'a [RuleCheck],
    /// Unique to this write: names its entries in rolling limits' logs.
    pub tag: &'a str,
    /// The bracket the caller expects the player in.
    pub place: Option<BracketRef>,
}

/// Where a score write left the player.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Standing {
    pub place: BracketRef,
    /// 1-based.
    pub rank: i64,
    pub score: i64,
}

/// What a score write answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LeagueScoreReply {
    /// The player is in this bracket: call again naming it.
    Place(BracketRef),
    Scored(Standing),
    /// The key was used before: the first request's fingerprint and answer.
    Replayed {
        fingerprint: String,
        standing: Standing,
    },
    /// Limit `index` (in the call's `rules`) refused; it admits again in `retry_ms`
    /// (`None`: never).
    Limited {
        index: usize,
        retry_ms: Option<i64>,
    },
    Stale(i64),
    NoSeason,
    /// The season is over, or the previous one's close is not done.
    Closing,
    NotJoined,
    Overflow,
}

/// A player's place in a season, read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlayerPlace {
    pub standing: Standing,
    /// Players in the bracket.
    pub players: i64,
}

fn rules_of(fields: &HashMap<String, String>, prefix: &str) -> Option<SeasonRules> {
    let get = |name: &str| fields.get(&format!("{prefix}{name}"));
    Some(SeasonRules {
        tiers: tiers_from_json(get("tiers")?).ok()?,
        bracket_size: get("size")?.parse().ok()?,
        rewards: rewards_from_json(get("rewards")?).ok()?,
    })
}

fn int_at(items: &[Value], i: usize) -> Option<i64> {
    items.get(i).and_then(as_int)
}

/// A bracket as the league scripts name it: `<tier>:<number>`.
fn place_arg(place: BracketRef) -> String {
    format!("{}:{}", place.tier, place.number)
}

/// A bracket from a script's reply; `None` where the script answers -1 (not needed).
fn place_at(items: &[Value], i: usize) -> Option<BracketRef> {
    Some(BracketRef {
        tier: usize::try_from(int_at(items, i)?).ok()?,
        number: int_at(items, i + 1)?,
    })
}

fn standing_at(items: &[Value], i: usize) -> Option<Standing> {
    Some(Standing {
        place: place_at(items, i)?,
        rank: int_at(items, i + 2)? + 1,
        score: items.get(i + 3).and_then(as_units)?,
    })
}

/// `<fingerprint>|<tier>|<bracket>|<rank0>|<score>`.
fn replayed(record: &str) -> Option<LeagueScoreReply> {
    let mut parts = record.split('|');
    let fingerprint = parts.next()?.to_owned();
    let mut next = || parts.next()?.parse::<i64>().ok();
    let (tier, number, rank0) = (next()?, next()?, next()?);
    let score = parts.next().and_then(parse_units)?;
    Some(LeagueScoreReply::Replayed {
        fingerprint,
        standing: Standing {
            place: BracketRef {
                tier: usize::try_from(tier).ok()?,
                number,
            },
            rank: rank0 + 1,
            score,
        },
    })
}

impl RedisStore {
    /// The league's season record; `None` when Redis holds none.
    pub async fn league_season(
        &self,
        keys: &LeagueKeys,
    ) -> Result<Option<SeasonRecord>, RedisFailure> {
        let mut pipe = redis::pipe();
        pipe.hgetall(keys.season());
        let (fields,): (HashMap<String, String>,) = self.query("league_season", pipe).await?;
        if fields.is_empty() {
            return Ok(None);
        }
        let bad = || RedisFailure::Reply(format!("league season record: {fields:?}"));
        let int = |name: &str| fields.get(name).and_then(|v| v.parse::<i64>().ok());
        let n = int("n").ok_or_else(bad)?;
        Ok(Some(SeasonRecord {
            n,
            open: fields.get("state").is_some_and(|s| s == "open"),
            ends_ms: int("ends").ok_or_else(bad)?,
            rules: rules_of(&fields, "").ok_or_else(bad)?,
            previous: rules_of(&fields, "prev_").and_then(|rules| {
                Some(PreviousSeason {
                    n: n - 1,
                    rules,
                    ended_ms: int("prev_ends")?,
                })
            }),
            settled: int("settled").unwrap_or(0),
        }))
    }

    /// Starts the season after `advance.current` (0: none in Redis), unless another
    /// caller already did; answers the current season's number after.
    pub async fn advance_season(
        &self,
        keys: &LeagueKeys,
        advance: &Advance<'_>,
    ) -> Result<i64, RedisFailure> {
        let mut call = ADVANCE.key(keys.season());
        call.arg(advance.current)
            .arg(advance.ends_ms)
            .arg(advance.rules.bracket_size)
            .arg(tiers_to_json(&advance.rules.tiers))
            .arg(rewards_to_json(&advance.rules.rewards))
            .arg(advance.first)
            .arg(advance.ended_ms);
        let reply = self
            .run_script_all("league_advance", &ADVANCE, &[call])
            .await?;
        reply
            .first()
            .and_then(as_int)
            .ok_or_else(|| reply_error("league_advance", &Value::Array(reply)))
    }

    /// One join (see `league_join.lua`).
    pub async fn join_league(
        &self,
        keys: &LeagueKeys,
        join: &JoinCall<'_>,
    ) -> Result<JoinReply, RedisFailure> {
        let n = join.season;
        let bracket = |season: i64, place: Option<BracketRef>| {
            place.map_or_else(|| keys.season(), |p| keys.bracket(season, p.tier, p.number))
        };
        let mut call = JOIN.key(keys.season());
        call.key(keys.settled_tiers())
            .key(keys.rewards())
            .key(keys.players(n))
            .key(keys.counts(n))
            .key(keys.profiles(n))
            .key(keys.players(n - 1))
            .key(keys.joiners(n))
            .key(bracket(n, join.place))
            .key(bracket(n - 1, join.previous))
            .arg(n)
            .arg(join.player)
            .arg(join.profile.unwrap_or(""))
            .arg(join.now_ms)
            .arg(join.caller)
            .arg(if join.claim.is_empty() {
                String::new()
            } else {
                serde_json::to_string(join.claim).unwrap_or_default()
            })
            .arg(join.place.map(place_arg).unwrap_or_default())
            .arg(join.previous.map(place_arg).unwrap_or_default());
        let reply = self.run_script_all("league_join", &JOIN, &[call]).await?;
        let value = reply.into_iter().next().unwrap_or(Value::Nil);
        let bad = || reply_error("league_join", &value);
        let items = as_array(&value).ok_or_else(bad)?;
        let tag = items.first().and_then(as_text).ok_or_else(bad)?;
        let json_at = |i: usize| -> Result<Option<String>, RedisFailure> {
            let text = items.get(i).and_then(as_text).ok_or_else(bad)?;
            Ok((!text.is_empty()).then_some(text))
        };
        Ok(match tag.as_str() {
            "ok" => {
                let standing = standing_at(items, 1).ok_or_else(bad)?;
                let handed = match json_at(5)? {
                    Some(list) => serde_json::from_str(&list).map_err(|_| bad())?,
                    None => Vec::new(),
                };
                let held = match json_at(6)? {
                    Some(list) => serde_json::from_str(&list).map_err(|_| bad())?,
                    None => Vec::new(),
                };
                JoinReply::Joined {
                    place: standing.place,
                    rank: standing.rank,
                    score: standing.score,
                    handed,
                    held,
                }
            }
            "place" => JoinReply::Place {
                place: place_at(items, 1),
                previous: place_at(items, 3),
            },
            "stale" => JoinReply::Stale(int_at(items, 1).ok_or_else(bad)?),
            "none" => JoinReply::NoSeason,
            "ended" => JoinReply::Ended,
            _ => return Err(bad()),
        })
    }

    /// One score write (see `league_score.lua`).
    pub async fn league_score(
        &self,
        keys: &LeagueKeys,
        call: &LeagueScoreCall<'_>,
    ) -> Result<LeagueScoreReply, RedisFailure> {
        let (record, ttl, fingerprint) = match call.idempotency {
            Some((caller, key, ttl, fingerprint)) => (
                keys.idempotency(caller, key),
                ttl.as_secs().max(1),
                fingerprint,
            ),
            None => (keys.season(), 0, ""),
        };
        let hour = epoch_hour_of_ms(call.now_ms);
        let mut invocation = SCORE.key(record);
        invocation
            .key(keys.season())
            .key(keys.players(call.season))
            .key(keys.refusals(hour))
            .key(call.place.map_or_else(
                || keys.season(),
                |p| keys.bracket(call.season, p.tier, p.number),
            ));
        rules::push_keys(call.rules, keys, &mut invocation);
        invocation
            .arg(call.season)
            .arg(call.player)
            .arg({
                let (op, value) = call.op.parts();
                format!("{op}:{value}")
            })
            .arg(call.now_ms)
            .arg(ttl)
            .arg(fingerprint)
            .arg(call.place.map(place_arg).unwrap_or_default())
            .arg(SCORE_MAX)
            .arg(call.rules.len())
            .arg(REFUSALS_TTL_S)
            .arg(call.tag);
        rules::push_args(call.rules, call.now_ms, &mut invocation);
        rules::push_fields(call.rules, &mut invocation);
        let reply = self
            .run_script_all("league_score", &SCORE, &[invocation])
            .await?;
        let value = reply.into_iter().next().unwrap_or(Value::Nil);
        let bad = || reply_error("league_score", &value);
        let items = as_array(&value).ok_or_else(bad)?;
        let tag = items.first().and_then(as_text).ok_or_else(bad)?;
        Ok(match tag.as_str() {
            "ok" => LeagueScoreReply::Scored(standing_at(items, 1).ok_or_else(bad)?),
            "dup" => items
                .get(1)
                .and_then(as_text)
                .and_then(|r| replayed(&r))
                .ok_or_else(bad)?,
            "limited" => {
                let retry = int_at(items, 2).ok_or_else(bad)?;
                LeagueScoreReply::Limited {
                    index: int_at(items, 1)
                        .and_then(|i| usize::try_from(i).ok())
                        .ok_or_else(bad)?,
                    retry_ms: (retry >= 0).then_some(retry),
                }
            }
            "stale" => LeagueScoreReply::Stale(int_at(items, 1).ok_or_else(bad)?),
            "none" => LeagueScoreReply::NoSeason,
            "closing" => LeagueScoreReply::Closing,
            "not_joined" => LeagueScoreReply::NotJoined,
            "place" => LeagueScoreReply::Place(place_at(items, 1).ok_or_else(bad)?),
            "overflow" => LeagueScoreReply::Overflow,
            _ => return Err(bad()),
        })
    }

    /// Where `player` stands in season `n`; `None` when they have not joined it.
    pub async fn league_player(
        &self,
        keys: &LeagueKeys,
        n: i64,
        player: &str,
    ) -> Result<Option<PlayerPlace>, RedisFailure> {
        let mut pipe = redis::pipe();
        pipe.hget(keys.players(n), player);
        let (entry,): (Option<String>,) = self.query("league_player", pipe).await?;
        let Some(entry) = entry else {
            return Ok(None);
        };
        let bad = || RedisFailure::Reply(format!("league player entry: {entry:?}"));
        let mut parts = entry.splitn(3, ':');
        let mut next = || parts.next().ok_or_else(bad);
        let place = BracketRef {
            tier: next()?.parse().map_err(|_| bad())?,
            number: next()?.parse().map_err(|_| bad())?,
        };
        let member = next()?.to_owned();
        let key = keys.bracket(n, place.tier, place.number);
        let mut pipe = redis::pipe();
        pipe.zrevrank(&key, &member)
            .zscore(&key, &member)
            .zcard(&key);
        let (rank, score, players): (Option<i64>, Option<String>, i64) =
            self.query("league_player", pipe).await?;
        let (Some(rank), Some(score)) = (rank, score.as_deref().and_then(parse_units)) else {
            return Err(bad());
        };
        Ok(Some(PlayerPlace {
            standing: Standing {
                place,
                rank: rank + 1,
                score,
            },
            players,
        }))
    }

    /// Season `n`'s players per tier index.
    pub async fn league_counts(
        &self,
        keys: &LeagueKeys,
        n: i64,
    ) -> Result<HashMap<usize, i64>, RedisFailure> {
        let mut pipe = redis::pipe();
        pipe.hgetall(keys.counts(n));
        let (fields,): (HashMap<String, i64>,) = self.query("league_counts", pipe).await?;
        Ok(fields
            .into_iter()
            .filter_map(|(tier, count)| Some((tier.parse().ok()?, count)))
            .collect())
    }

    /// The members and scores of each of season `n`'s `brackets`, best first.
    pub async fn league_brackets(
        &self,
        keys: &LeagueKeys,
        n: i64,
        brackets: &[BracketRef],
    ) -> Result<Vec<Vec<(String, i64)>>, RedisFailure> {
        let mut out = Vec::with_capacity(brackets.len());
        for chunk in brackets.chunks(READ_CHUNK) {
            let mut pipe = redis::pipe();
            for b in chunk {
                pipe.zrevrange_withscores(keys.bracket(n, b.tier, b.number), 0, -1);
            }
            let replies: Vec<Vec<(String, String)>> = self.query("league_brackets", pipe).await?;
            for entries in replies {
                out.push(
                    entries
                        .into_iter()
                        .map(|(member, score)| {
                            parse_units(&score)
                                .map(|s| (member, s))
                                .ok_or_else(|| RedisFailure::Reply(format!("score {score:?}")))
                        })
                        .collect::<Result<_, _>>()?,
                );
            }
        }
        Ok(out)
    }

    /// The cached profiles (JSON) of `players` in season `n`, in order.
    pub async fn league_profiles(
        &self,
        keys: &LeagueKeys,
        n: i64,
        players: &[&str],
    ) -> Result<Vec<Option<String>>, RedisFailure> {
        if players.is_empty() {
            return Ok(Vec::new());
        }
        let mut pipe = redis::pipe();
        pipe.cmd("HMGET").arg(keys.profiles(n)).arg(players);
        let (profiles,): (Vec<Option<String>>,) = self.query("league_profiles", pipe).await?;
        Ok(profiles)
    }

    /// Records each player's tier for their next season (a close's settlement; writing
    /// it again changes nothing).
    pub async fn settle_tiers(
        &self,
        keys: &LeagueKeys,
        tiers: &[(String, usize)],
    ) -> Result<(), RedisFailure> {
        for chunk in tiers.chunks(SETTLE_CHUNK) {
            let mut pipe = redis::pipe();
            pipe.hset_multiple(keys.settled_tiers(), chunk).ignore();
            let () = self.query("league_settle", pipe).await?;
        }
        Ok(())
    }

    /// The close of season `m` is done: its rewards wait for their players, and the
    /// current season takes scores (see `league_open.lua`). Answers whether this call
    /// did it.
    pub async fn open_season(
        &self,
        keys: &LeagueKeys,
        m: i64,
        rewards: &[(String, Vec<String>)],
    ) -> Result<bool, RedisFailure> {
        let mut call = OPEN.key(keys.season());
        call.key(keys.rewards()).key(keys.joiners(m)).arg(m);
        for (player, list) in rewards {
            call.arg(player)
                .arg(serde_json::to_string(list).unwrap_or_default());
        }
        let reply = self.run_script_all("league_open", &OPEN, &[call]).await?;
        reply
            .first()
            .and_then(as_int)
            .map(|done| done == 1)
            .ok_or_else(|| reply_error("league_open", &Value::Array(reply)))
    }

    /// Gives season `m`'s keys (its `brackets` among them) an expiry at `at_ms`.
    pub async fn expire_season(
        &self,
        keys: &LeagueKeys,
        m: i64,
        brackets: &[BracketRef],
        at_ms: i64,
    ) -> Result<(), RedisFailure> {
        let mut names = vec![
            keys.players(m),
            keys.counts(m),
            keys.profiles(m),
            keys.joiners(m),
        ];
        names.extend(brackets.iter().map(|b| keys.bracket(m, b.tier, b.number)));
        for chunk in names.chunks(SETTLE_CHUNK) {
            let mut pipe = redis::pipe();
            for key in chunk {
                pipe.cmd("PEXPIREAT").arg(key).arg(at_ms).ignore();
            }
            let () = self.query("league_expire", pipe).await?;
        }
        Ok(())
    }

    /// The close's lease of one league for the holder `token`.
    pub fn league_close_lease(&self, keys: &LeagueKeys, token: &str, length: Duration) -> Lease {
        Lease {
            key: keys.close_lease(),
            token: token.to_owned(),
            length,
        }
    }

    /// Deletes every key of a deleted league.
    pub async fn unlink_league(&self, keys: &LeagueKeys) -> Result<u64, RedisFailure> {
        self.unlink_matching(&[keys.pattern()]).await
    }
}
