//! Every Redis key name Ovation uses, built in one place.
//!
//! A board's keys are `<prefix>{b:<board id>}:<name>`: the hash tag puts all of one
//! board's keys in one Redis Cluster slot, so a vote script may touch them together. The
//! numeric id (not the slug) names the board, so a board deleted and created again under
//! the same slug starts from nothing. An instance of a family has a hash tag of its own,
//! `{b:<family id>:i:<instance>}`, so a family's instances spread over Redis Cluster
//! nodes while each one's keys stay in one slot.

use crate::domain::ids::IdempotencyKey;
use crate::domain::period::{Bucket, HalfLife, Period, Rolling, voter_days};
use crate::domain::score::{MAX_UNITS, View};
use crate::domain::scoring::{Placement, Storage};

use super::slots;
use chrono_tz::Tz;

/// Builds key names under one prefix.
#[derive(Debug, Clone)]
pub struct Keys {
    prefix: String,
}

impl Keys {
    pub fn new(prefix: &str) -> Self {
        Self {
            prefix: prefix.to_owned(),
        }
    }

    /// The keys of one board, kept in `storage`'s layout (a sharded board's writes spread
    /// by `spread`); `tz` cuts its days (a week's and a month's voters are counted by day).
    pub fn board(&self, board_id: i64, storage: Storage, spread: Spread, tz: Tz) -> BoardKeys {
        BoardKeys {
            base: format!("{}{{b:{board_id}}}:", self.prefix),
            storage,
            spread,
            tz,
            ttl_ms: 0,
        }
    }

    /// The keys of one league.
    pub fn league(&self, league_id: i64) -> LeagueKeys {
        LeagueKeys {
            base: format!("{}{{l:{league_id}}}:", self.prefix),
        }
    }

    /// Dashboard login attempts from one IP address (`/64` for IPv6), for any user name
    /// (string, expires). An address's counters share a hash tag: one transaction counts
    /// them.
    pub fn login_attempts_by_ip(&self, ip: &str) -> String {
        format!("{}{{login:{ip}}}:any", self.prefix)
    }

    /// Dashboard login attempts for one (checked) user name from one IP address (string,
    /// expires).
    pub fn login_attempts_by_user_ip(&self, username: &str, ip: &str) -> String {
        format!("{}{{login:{ip}}}:user:{username}", self.prefix)
    }

    /// A dashboard session (string: the user name). It expires when idle, and at the
    /// latest at the session's absolute end. A user's keys share a hash tag, so all of
    /// them can be ended together on Redis Cluster too.
    pub fn session(&self, user: &str, id: &str) -> String {
        format!("{}{{u:{user}}}:session:{id}", self.prefix)
    }

    /// The ids of a user's sessions (set), so that a password change ends them all.
    pub fn user_sessions(&self, user: &str) -> String {
        format!("{}{{u:{user}}}:sessions", self.prefix)
    }

    /// A key that is always there while Redis keeps its data (string: when it was set):
    /// when it is gone, Redis came back empty.
    pub fn marker(&self) -> String {
        format!("{}marker", self.prefix)
    }

    /// The pub/sub channel that tells every instance to reload configuration.
    pub fn config_channel(&self) -> String {
        format!("{}config", self.prefix)
    }

    /// How many configuration changes were announced (string counter): instances check
    /// it every few seconds and reload when it moved.
    pub fn config_version(&self) -> String {
        format!("{}config:version", self.prefix)
    }

    /// The archive task's lease (string: the holder's token; expires).
    pub fn archive_lease(&self) -> String {
        format!("{}archive:lease", self.prefix)
    }
}

/// What decides a sharded board's shard for a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spread {
    /// The member (a `scores` board): a member's whole score lives in one shard.
    Members,
    /// The voter (a `votes` board), or the member for a vote naming no voter: every
    /// shard holds part of each member's score, and a member's score is their sum.
    Voters,
}

/// The keys of one board, and the layout its buckets are kept in.
///
/// A `sharded` board's scores live in shards: shard `i`'s keys are
/// `<prefix>{b:<board id>:s<i>:<four letters>}:<name>`, a hash tag of their own in the
/// slot that spreads the shards evenly over the slot range (`slots`); a board made
/// before that keeps `{b:<board id>:s<i>}`, wherever its hash falls. A write's shard (see [`Spread`]) holds what it writes: scores,
/// participants, the idempotency record and the rule counters whose subject names what
/// picks the shard (the member on a scores board, the voter on a votes board); the
/// board's own tag keeps the other rules.
#[derive(Debug, Clone, PartialEq)]
pub struct BoardKeys {
    base: String,
    storage: Storage,
    spread: Spread,
    tz: Tz,
    /// A family instance's keys expire this long after its last write; 0 on a plain
    /// board, whose keys live until the board is deleted (or released by the archive).
    ttl_ms: i64,
}

impl BoardKeys {
    /// What every key of the board (or shard) starts with, its hash tag included: calls
    /// whose keys share it run in one slot.
    pub fn slot(&self) -> &str {
        &self.base
    }

    pub fn storage(&self) -> Storage {
        self.storage
    }

    /// See the field: what the write scripts pass as the instance TTL.
    pub fn ttl_ms(&self) -> i64 {
        self.ttl_ms
    }

    /// The keys of one instance of this family: its layout under the instance's own
    /// hash tag, each key expiring `ttl_ms` after the instance's last write.
    pub fn instance(&self, instance: &str, ttl_ms: i64) -> BoardKeys {
        let base = self.base.trim_end_matches("}:");
        BoardKeys {
            base: format!("{base}:i:{instance}}}:"),
            storage: self.storage,
            spread: self.spread,
            tz: self.tz,
            ttl_ms,
        }
    }

    /// A family's live instances (zset: instance -> its last write, ms since the epoch),
    /// in the family's own slot: entries older than the instances' TTL are trimmed by
    /// score on every write and read.
    pub fn instances(&self) -> String {
        format!("{}instances", self.base)
    }

    /// What every key of every instance of this family (and of their shards) matches.
    pub fn instances_pattern(&self) -> String {
        format!("{}:i:*", self.base.trim_end_matches("}:"))
    }

    /// When each instance of a sharded family last had its shards' expiry refreshed
    /// (zset: instance -> ms), trimmed with [`Self::instances`].
    pub fn instances_refreshed(&self) -> String {
        format!("{}instances:refreshed", self.base)
    }

    /// The shards of a sharded board, in order; any other board is its own one shard.
    pub fn shards(&self) -> Vec<BoardKeys> {
        match self.storage {
            Storage::Sharded { shards, .. } => (0..shards).map(|i| self.shard(i)).collect(),
            _ => vec![self.clone()],
        }
    }

    /// The board and, when it is sharded, its shards: every slot that keeps some of its
    /// hourly counts and refusals.
    pub fn slots(&self) -> Vec<BoardKeys> {
        let mut slots = vec![self.clone()];
        if self.storage.is_sharded() {
            slots.extend(self.shards());
        }
        slots
    }

    pub fn spread(&self) -> Spread {
        self.spread
    }

    /// The largest score (units) one sorted set of the board may hold: 2^53, or on a
    /// board whose scores are sums over shards 2^53 / shards, so that the sum of a
    /// member's shards stays within 2^53 too.
    pub fn max_units(&self) -> i64 {
        match self.storage {
            Storage::Sharded { shards, .. } if self.spread == Spread::Voters => MAX_UNITS / shards,
            _ => MAX_UNITS,
        }
    }

    /// Where members' initial votes live: the board, or a summing board's first shard.
    pub fn initial_shard(&self) -> BoardKeys {
        if self.sums_shards() {
            self.shard(0)
        } else {
            self.clone()
        }
    }

    /// Whether a member's score is the sum of its scores in every shard: a votes board
    /// sharded by voter.
    pub fn sums_shards(&self) -> bool {
        self.storage.is_sharded() && self.spread == Spread::Voters
    }

    /// Whether the rules that do not count per voter keep their counters in the shards
    /// their subjects pick ([`Self::rule_home`]): a sharded `votes` board placed evenly.
    /// Any other sharded board keeps them in its own slot.
    pub fn spreads_rules(&self) -> bool {
        self.sums_shards()
            && matches!(
                self.storage,
                Storage::Sharded {
                    placement: Placement::Even,
                    ..
                }
            )
    }

    /// Where the counters of a rule that does not count in the write's own shard live
    /// for `subject` (the write's values for the rule's dimensions): on a board that
    /// [spreads its rules](Self::spreads_rules) the shard `fnv1a(subject) mod shards`,
    /// so no slot sees every vote; on any other board its own slot.
    pub fn rule_home(&self, subject: &str) -> BoardKeys {
        match self.storage {
            Storage::Sharded { shards, .. } if self.spreads_rules() => {
                self.shard(shard_of(subject, shards))
            }
            _ => self.clone(),
        }
    }

    /// The shard holding `member`'s scores (the board itself unless it is sharded by
    /// member).
    pub fn member_shard(&self, member: &str) -> BoardKeys {
        match self.storage {
            Storage::Sharded { shards, .. } if self.spread == Spread::Members => {
                self.shard(shard_of(member, shards))
            }
            _ => self.clone(),
        }
    }

    /// The shard a write of `member` by `voter` goes to (the board itself unless it is
    /// sharded): see [`Spread`].
    pub fn write_shard(&self, member: &str, voter: Option<&str>) -> BoardKeys {
        match self.storage {
            Storage::Sharded { .. } => self.shard(self.write_source(member, voter) as i64),
            _ => self.clone(),
        }
    }

    /// The index among [`Self::shards`] of [`Self::write_shard`]: its ledger's source.
    pub fn write_source(&self, member: &str, voter: Option<&str>) -> usize {
        let id = match self.spread {
            Spread::Voters => voter.unwrap_or(member),
            Spread::Members => member,
        };
        match self.storage {
            Storage::Sharded { shards, .. } => shard_of(id, shards) as usize,
            _ => 0,
        }
    }

    /// Shard `i`'s keys: `{<tag>:s<i>}` for [`Placement::Hashed`], and for
    /// [`Placement::Even`] `{<tag>:s<i>:<four letters>}` in the slot `slots::shard_slot`
    /// gives it (`<tag>`: the board's or the instance's own).
    fn shard(&self, i: i64) -> BoardKeys {
        let base = self.base.trim_end_matches("}:");
        let base = match self.storage {
            Storage::Sharded {
                shards,
                placement: Placement::Even,
            } => {
                let (prefix, tag) = base.split_once('{').unwrap_or(("", base));
                let tag = slots::tag_in_slot(&format!("{tag}:s{i}:"), slots::shard_slot(i, shards));
                format!("{prefix}{{{tag}}}:")
            }
            _ => format!("{base}:s{i}}}:"),
        };
        BoardKeys {
            base,
            storage: Storage::Full,
            spread: self.spread,
            tz: self.tz,
            ttl_ms: self.ttl_ms,
        }
    }

    /// Where every member's exact score in one bucket lives: a `top_n` board's hash
    /// (member -> units), whose sorted set holds only the best; any other board's
    /// ranking (the real view: a scores board's one view).
    pub fn exact_scores(&self, bucket: &Bucket) -> String {
        if self.storage.is_top_n() {
            format!("{}x:{}:{}", self.base, bucket.period, bucket.label)
        } else {
            self.scores(View::Real, bucket)
        }
    }
    /// Scores of one bucket in one view (zset: member -> units); for a rolling window,
    /// its totals (see [`Self::window`]); for a trending period, its stored scores (see
    /// [`Self::trend`]).
    pub fn scores(&self, view: View, bucket: &Bucket) -> String {
        let v = match view {
            View::Real => "r",
            View::Display => "d",
        };
        match bucket.period {
            Period::Rolling(window) => self.window(window).total(view),
            Period::Trending(half_life) => self.trend(half_life).scores(view),
            _ => format!("{}z:{v}:{}:{}", self.base, bucket.period, bucket.label),
        }
    }

    /// What every calendar bucket's ranking of the board matches (see [`Self::scores`]).
    pub fn rankings_pattern(&self) -> String {
        format!("{}z:*", self.base)
    }

    /// The view, period and bucket label a ranking's key names (see [`Self::scores`]).
    pub fn ranking_of<'k>(&self, key: &'k str) -> Option<(View, &'k str, &'k str)> {
        let rest = key.strip_prefix(self.base.as_str())?.strip_prefix("z:")?;
        let mut parts = rest.splitn(3, ':');
        let view = match parts.next()? {
            "r" => View::Real,
            "d" => View::Display,
            _ => return None,
        };
        Some((view, parts.next()?, parts.next()?))
    }

    /// Distinct voters of one bucket (HyperLogLog); a week's and a month's are their
    /// days' (see [`Self::voters`]).
    pub fn participants(&self, bucket: &Bucket) -> String {
        format!("{}p:{}:{}", self.base, bucket.period, bucket.label)
    }

    /// The HyperLogLogs whose union counts one bucket's distinct voters: a week's or a
    /// month's days, else the bucket's own.
    pub fn voters(&self, bucket: &Bucket) -> Vec<String> {
        voter_days(bucket, self.tz)
            .iter()
            .map(|d| self.participants(d))
            .collect()
    }

    /// The same for one member's voters.
    pub fn member_voters(&self, bucket: &Bucket, member: &str) -> Vec<String> {
        voter_days(bucket, self.tz)
            .iter()
            .map(|d| self.member_participants(d, member))
            .collect()
    }

    /// Distinct voters for one member in one bucket (HyperLogLog).
    pub fn member_participants(&self, bucket: &Bucket, member: &str) -> String {
        format!(
            "{}pm:{}:{}:{member}",
            self.base, bucket.period, bucket.label
        )
    }

    /// The revocations whose Redis step is done (hash: `<revocation id>:<chunk>` -> 1),
    /// so repeating one changes nothing twice.
    pub fn revocations_done(&self) -> String {
        format!("{}revoked", self.base)
    }

    /// A key of the board's slot for one operation's scratch work, named by `tag`.
    pub fn scratch_named(&self, tag: &str) -> String {
        format!("{}tmp:{tag}", self.base)
    }

    /// Two keys a script may use for a moment and delete before it returns.
    pub fn scratch(&self) -> [String; 2] {
        [format!("{}tmp:a", self.base), format!("{}tmp:b", self.base)]
    }

    /// Late writes per hour (hash: hours since the epoch -> writes that arrived after
    /// their time had passed): the archive task archives again a closed bucket whose
    /// hours' count moved since it archived it.
    pub fn late_writes(&self) -> String {
        format!("{}late", self.base)
    }

    /// Whether the board's all-time scores are all below 10^15 units (string: '1', or '0'
    /// when some may not be), so a vote can skip the 2^53 check (see `vote.lua`).
    pub fn headroom(&self) -> String {
        format!("{}headroom", self.base)
    }

    /// The ledger's entries not yet in SQL (list of `domain::ledger::Entry` JSON, oldest
    /// first): the write scripts append, the drain trims what SQL holds. A sharded
    /// board's shards keep one each (see [`Self::shards`]).
    pub fn ledger(&self) -> String {
        format!("{}lg", self.base)
    }

    /// The id of the last entry the drain trimmed from [`Self::ledger`] (string): when
    /// it is not the id SQL recorded last, Redis lost its data or went back in time, and
    /// the drain looks for the entries SQL already holds by their ids.
    pub fn ledger_trimmed(&self) -> String {
        format!("{}lg:trimmed", self.base)
    }

    /// The board-wide `seq` SQL gave the last entry the drain trimmed (string): when SQL's
    /// last `seq` is below it, SQL lost entries Redis no longer holds (a restore from an
    /// older backup), and the drain records the gap rather than number new entries into
    /// it.
    pub fn ledger_trimmed_seq(&self) -> String {
        format!("{}lg:trimmed_seq", self.base)
    }

    /// A rebuild of the board from its ledger after Redis lost it (hash: `until` -> the
    /// last `seq` to replay, `done` -> replayed so far); lost again with the board.
    pub fn ledger_rebuild(&self) -> String {
        format!("{}lg:rebuild", self.base)
    }

    /// A family's instances whose ledgers hold entries not yet in SQL (zset: instance ->
    /// when the oldest of them was noted, ms), in the family's own slot: a write notes
    /// its instance after its script appended, the drain takes it out once it drained
    /// the instance's ledger empty.
    pub fn ledger_dirty(&self) -> String {
        format!("{}lg:dirty", self.base)
    }

    /// Who watches this board's tops for its webhooks now (string: the holder's token,
    /// with a lease).
    pub fn webhook_lease(&self) -> String {
        format!("{}wh:lease", self.base)
    }

    /// Who drains [`Self::ledger`] now (string: the holder's token, with a lease); a
    /// family's lease covers every instance's ledger.
    pub fn ledger_lease(&self) -> String {
        format!("{}lg:lease", self.base)
    }

    /// Votes counted per hour and per bucket (hash: hours since the epoch -> votes; a
    /// bucket's real rankings key, [`Self::scores`], -> votes counted in the bucket).
    pub fn vote_counts(&self) -> String {
        format!("{}vph", self.base)
    }

    /// The first answer to a write with this idempotency key from this caller (string,
    /// expires): `<fingerprint>|<receipt>|<scores>`.
    pub fn idempotency(&self, caller: &str, key: &IdempotencyKey) -> String {
        format!("{}idem:{}:{caller}:{key}", self.base, caller.len())
    }

    /// The first answer to an adjustment with this idempotency key from this admin
    /// (string, expires): `<fingerprint>|<real>|<display>` (see `adjust.lua`).
    pub fn adjustment(&self, actor: &str, key: &IdempotencyKey) -> String {
        format!("{}adj:{}:{actor}:{key}", self.base, actor.len())
    }

    /// Initial votes already added to the all-time display board (hash: member -> units).
    pub fn initial_applied(&self) -> String {
        format!("{}init", self.base)
    }

    /// Rate-limit refusals in one hour (hash: rule id -> refused votes).
    pub fn refusals(&self, hour: i64) -> String {
        format!("{}rf:{hour}", self.base)
    }

    /// A rolling window's keys (see [`WindowKeys`]).
    pub fn window(&self, window: Rolling) -> WindowKeys {
        WindowKeys {
            prefix: format!("{}w:{window}:", self.base),
            slots: window.slots(),
        }
    }

    /// A trending period's keys (see [`TrendKeys`]).
    pub fn trend(&self, half_life: HalfLife) -> TrendKeys {
        TrendKeys {
            prefix: format!("{}t:{half_life}:", self.base),
        }
    }

    /// SCAN patterns matching every key of the board and of its shards, for clean-up
    /// after deletion, each with a key of the slot its keys live in.
    pub fn patterns(&self) -> Vec<(String, String)> {
        let mut slots = vec![self];
        let shards = self.shards();
        if self.storage.is_sharded() {
            slots.extend(&shards);
        }
        slots
            .into_iter()
            .map(|s| (s.base.clone(), format!("{}*", s.base)))
            .collect()
    }
}

/// The keys of one league: `<prefix>{l:<league id>}:<name>`, all in one slot, so a join
/// or a score write is one script on them. Season `n`'s keys are `…:s:<n>:<name>`.
#[derive(Debug, Clone)]
pub struct LeagueKeys {
    base: String,
}

impl LeagueKeys {
    /// The season record (hash; its fields are listed in `league_advance.lua`).
    pub fn season(&self) -> String {
        format!("{}season", self.base)
    }

    /// Each player's tier for their next season, as the last close settled it (hash:
    /// player -> tier index).
    pub fn settled_tiers(&self) -> String {
        format!("{}tiers", self.base)
    }

    /// Rewards waiting for their player's next join (hash: player -> JSON list).
    pub fn rewards(&self) -> String {
        format!("{}rewards", self.base)
    }

    /// The close's lease (string: the holder's token; expires).
    pub fn close_lease(&self) -> String {
        format!("{}close:lease", self.base)
    }

    /// Season `n`'s players (hash: player -> `<tier>:<bracket>:<member>`).
    pub fn players(&self, n: i64) -> String {
        format!("{}s:{n}:players", self.base)
    }

    /// Season `n`'s counts (hash: tier index -> players; `seq` -> joins).
    pub fn counts(&self, n: i64) -> String {
        format!("{}s:{n}:counts", self.base)
    }

    /// Season `n`'s cached profiles (hash: player -> profile JSON).
    pub fn profiles(&self, n: i64) -> String {
        format!("{}s:{n}:profiles", self.base)
    }

    /// Season `n`'s joiners (hash: player -> the caller that first joined them that
    /// season, who holds the rewards it gives them).
    pub fn joiners(&self, n: i64) -> String {
        format!("{}s:{n}:joiners", self.base)
    }

    /// One bracket of season `n` (sorted set: member -> score; see `league_join.lua`).
    pub fn bracket(&self, n: i64, tier: usize, number: i64) -> String {
        format!("{}s:{n}:b:{tier}:{number}", self.base)
    }

    /// The first answer to a score write with this idempotency key from this caller
    /// (string, expires): `<fingerprint>|<tier>|<bracket>|<rank0>|<score>`.
    pub fn idempotency(&self, caller: &str, key: &IdempotencyKey) -> String {
        format!("{}idem:{}:{caller}:{key}", self.base, caller.len())
    }

    /// Score-limit refusals in one hour (hash: limit id -> refused writes).
    pub fn refusals(&self, hour: i64) -> String {
        format!("{}rf:{hour}", self.base)
    }

    /// A SCAN pattern matching every key of the league, for clean-up after deletion.
    pub fn pattern(&self) -> (String, String) {
        (self.season(), format!("{}*", self.base))
    }
}

/// Whose counters a key holds: a rate-limit rule's (`rl:<id>`) or a watch's (`wt:<id>`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Owner {
    Rule(i64),
    Watch(i64),
}

impl std::fmt::Display for Owner {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Rule(id) => write!(f, "rl:{id}"),
            Self::Watch(id) => write!(f, "wt:{id}"),
        }
    }
}

/// Where a writer's rate-limit counters (and a board's watches' counters) live: under a
/// board's tag (or a shard's), or a league's. The names are the same for both.
pub trait RuleKeys {
    /// The tag and prefix the counters go under.
    fn rules_base(&self) -> &str;

    /// The rate-limit counters of a calendar window starting at `start` (epoch seconds),
    /// or of the campaign when `start` is `None` (hash: subject -> votes counted). One
    /// hash per rule and window, so the writes of a call set every counter they move in
    /// one HSET and the window's counters leave together.
    fn rule_counters(&self, owner: Owner, window: &str, start: Option<i64>) -> String {
        match start {
            Some(start) => format!("{}{owner}:{window}:{start}", self.rules_base()),
            None => format!("{}{owner}:{window}:c", self.rules_base()),
        }
    }

    /// A rolling window's log (zset: `<count>:<tag>` -> vote time in ms).
    fn rule_log(&self, owner: Owner, window: &str, subject: &str) -> String {
        format!("{}{owner}:{window}:log:{subject}", self.rules_base())
    }

    /// The running total of a rolling window's log (string: votes).
    fn rule_log_total(&self, owner: Owner, window: &str, subject: &str) -> String {
        format!("{}{owner}:{window}:sum:{subject}", self.rules_base())
    }
}

impl RuleKeys for BoardKeys {
    fn rules_base(&self) -> &str {
        &self.base
    }
}

impl RuleKeys for LeagueKeys {
    fn rules_base(&self) -> &str {
        &self.base
    }
}

/// The keys of one trending period of a board: per view a sorted set of stored scores
/// (member -> units × 2^((t − t0)/half-life) summed over its writes) and the origin t0
/// (string: ms since the epoch), which a rescale moves forward; see
/// `domain::period::HalfLife` and `trend.lua`. Its voters are the all-time bucket's.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrendKeys {
    prefix: String,
}

impl TrendKeys {
    /// The stored scores in `view`.
    pub fn scores(&self, view: View) -> String {
        let v = match view {
            View::Real => "r",
            View::Display => "d",
        };
        format!("{}{v}", self.prefix)
    }

    /// The origin t0 the stored scores are weighted against.
    pub fn origin(&self) -> String {
        format!("{}origin", self.prefix)
    }

    /// Its keys in the order `trend.lua` takes them: real scores, display scores, origin.
    pub fn every(&self) -> [String; 3] {
        [
            self.scores(View::Real),
            self.scores(View::Display),
            self.origin(),
        ]
    }
}

/// A rolling window's keys, under its board's hash tag, with fixed names: its state
/// (hash), its totals per view (zsets), and rings of slots per view (zsets), of slot
/// voters (HyperLogLogs) and of drains per view (slots that left the window, being
/// subtracted from the totals), slot `s` at ring index `s mod n`. `window.lua` says what
/// each holds; a vote names only the state, the totals and one ring index's keys
/// ([`Self::at`]), a read or a full advance every key ([`Self::every`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WindowKeys {
    prefix: String,
    slots: i64,
}

impl WindowKeys {
    pub fn state(&self) -> String {
        format!("{}state", self.prefix)
    }

    /// The window's totals in `view`: what its reads rank.
    pub fn total(&self, view: View) -> String {
        let v = match view {
            View::Real => "r",
            View::Display => "d",
        };
        format!("{}total:{v}", self.prefix)
    }

    fn ring(&self, kind: &str, index: i64) -> String {
        format!("{}{kind}:{index}", self.prefix)
    }

    /// The ring keys of slot `slot`'s index, in the order `window.lua`'s vote path takes
    /// them: its real and display scores, its voters, its real and display drains.
    pub fn at(&self, slot: i64) -> [String; 5] {
        let i = slot.rem_euclid(self.slots);
        ["r", "d", "v", "xr", "xd"].map(|kind| self.ring(kind, i))
    }

    /// Every key, in the order `window.lua`'s full advance takes them: the state, the
    /// totals (real, display), then each ring whole: real slots, display slots, voters,
    /// real drains, display drains.
    pub fn every(&self) -> Vec<String> {
        let mut keys = vec![
            self.state(),
            self.total(View::Real),
            self.total(View::Display),
        ];
        for kind in ["r", "d", "v", "xr", "xd"] {
            keys.extend((0..self.slots).map(|i| self.ring(kind, i)));
        }
        keys
    }

    /// The keys that hold members' scores: the totals, slots and drains (not the state
    /// or the voters).
    pub fn scores(&self) -> Vec<String> {
        let mut keys = vec![self.total(View::Real), self.total(View::Display)];
        for kind in ["r", "d", "xr", "xd"] {
            keys.extend((0..self.slots).map(|i| self.ring(kind, i)));
        }
        keys
    }
}

/// The shard of `id` (a member's or a voter's) among `shards`: FNV-1a (64 bits) of the
/// id, so the choice is stable across instances, versions and platforms.
pub fn shard_of(id: &str, shards: i64) -> i64 {
    let hash = id.bytes().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(b)).wrapping_mul(0x0000_0100_0000_01b3)
    });
    (hash % shards.max(1) as u64) as i64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rolling_window_has_fixed_names_in_the_order_its_script_reads_them() {
        let window = Keys::new("ov:")
            .board(7, Storage::Full, Spread::Members, Tz::UTC)
            .window(Rolling::DAYS_7);
        let keys = window.every();
        assert_eq!(keys.len(), 3 + 5 * 7);
        assert_eq!(keys[0], "ov:{b:7}:w:rolling:7d:state");
        assert_eq!(keys[2], "ov:{b:7}:w:rolling:7d:total:d");
        assert_eq!(keys[3], "ov:{b:7}:w:rolling:7d:r:0");
        assert_eq!(keys[3 + 7], "ov:{b:7}:w:rolling:7d:d:0");
        assert_eq!(keys[3 + 14 + 6], "ov:{b:7}:w:rolling:7d:v:6");
        assert_eq!(keys[3 + 35 - 1], "ov:{b:7}:w:rolling:7d:xd:6");
        // Slot 20 is at index 6 of each ring.
        assert_eq!(
            window.at(20).to_vec(),
            [3 + 6, 3 + 7 + 6, 3 + 14 + 6, 3 + 21 + 6, 3 + 28 + 6].map(|i| keys[i].clone())
        );
        let scores = window.scores();
        assert_eq!(scores.len(), 2 + 4 * 7);
        assert!(
            scores
                .iter()
                .all(|k| !k.ends_with(":state") && !k.contains(":v:"))
        );
    }

    #[test]
    fn board_keys_share_one_hash_tag() {
        let keys = Keys::new("ov:").board(7, Storage::Full, Spread::Members, Tz::UTC);
        let day = Bucket::containing(
            crate::domain::period::Period::Day,
            chrono_tz::Tz::UTC,
            crate::domain::period::parse_instant("2019-03-17T12:00:00Z").unwrap(),
        )
        .unwrap();
        assert_eq!(
            keys.scores(View::Display, &day),
            "ov:{b:7}:z:d:day:2019-03-17"
        );
        assert_eq!(keys.participants(&day), "ov:{b:7}:p:day:2019-03-17");
        let repeated = Bucket::parse(
            crate::domain::period::Period::Hour,
            "America/New_York".parse().unwrap(),
            "2024-11-03T01-05:00",
        )
        .unwrap();
        for (view, bucket) in [(View::Display, &day), (View::Real, &repeated)] {
            let key = keys.scores(view, bucket);
            assert_eq!(
                keys.ranking_of(&key),
                Some((view, bucket.period.as_str(), bucket.label.as_str())),
                "{key}"
            );
        }
        assert_eq!(keys.ranking_of("ov:{b:8}:z:d:day:2019-03-17"), None);
        assert_eq!(keys.ranking_of(&keys.vote_counts()), None);
        assert_eq!(
            keys.member_participants(&day, "m1"),
            "ov:{b:7}:pm:day:2019-03-17:m1"
        );
        assert_eq!(keys.vote_counts(), "ov:{b:7}:vph");
        assert_eq!(
            keys.rule_counters(Owner::Rule(3), "day", Some(1_763_596_800)),
            "ov:{b:7}:rl:3:day:1763596800"
        );
        assert_eq!(
            keys.rule_counters(Owner::Rule(3), "campaign", None),
            "ov:{b:7}:rl:3:campaign:c"
        );
        assert_eq!(
            keys.rule_log(Owner::Rule(3), "rolling:1h", "5.alice"),
            "ov:{b:7}:rl:3:rolling:1h:log:5.alice"
        );
    }

    #[test]
    fn shards_have_tags_of_their_own_and_members_keep_their_shard() {
        let hashed = Storage::Sharded {
            shards: 16,
            placement: Placement::Hashed,
        };
        let keys = Keys::new("ov:").board(7, hashed, Spread::Members, Tz::UTC);
        let shards = keys.shards();
        assert_eq!(shards.len(), 16);
        assert_eq!(shards[3].vote_counts(), "ov:{b:7:s3}:vph");
        assert_eq!(keys.member_shard("alice").vote_counts(), {
            let i = shard_of("alice", 16);
            format!("ov:{{b:7:s{i}}}:vph")
        });
        assert_eq!(shard_of("alice", 16), shard_of("alice", 16));
        // FNV-1a of "a" is 0xaf63dc4c8601ec8c.
        assert_eq!(
            shard_of("a", 1 << 62),
            (0xaf63_dc4c_8601_ec8c_u64 % (1 << 62)) as i64
        );
        let spread: std::collections::HashSet<i64> =
            (0..1000).map(|i| shard_of(&format!("u{i}"), 16)).collect();
        assert_eq!(spread.len(), 16);
        assert_eq!(keys.patterns().len(), 17);
        assert_eq!(
            keys.patterns()[1],
            ("ov:{b:7:s0}:".to_owned(), "ov:{b:7:s0}:*".to_owned())
        );
    }

    /// The slot of the first key of `keys`' ranking of all time.
    fn slot_of_keys(keys: &BoardKeys) -> u16 {
        let name = keys.slot();
        let tag = &name[name.find('{').unwrap() + 1..name.find('}').unwrap()];
        slots::slot_of(tag)
    }

    #[test]
    fn an_even_boards_shards_sit_one_in_each_share_of_the_slot_range() {
        for shards in [2, 3, 6, 12, 16, 256] {
            for board_id in [1, 7, 123_456] {
                let storage = Storage::Sharded {
                    shards,
                    placement: Placement::Even,
                };
                let keys = Keys::new("ov:").board(board_id, storage, Spread::Voters, Tz::UTC);
                let placed: Vec<u16> = keys.shards().iter().map(slot_of_keys).collect();
                let expected: Vec<u16> =
                    (0..shards).map(|i| slots::shard_slot(i, shards)).collect();
                assert_eq!(placed, expected, "board {board_id}, {shards} shards");
                let room = keys.instance("r1", 60_000);
                let placed: Vec<u16> = room.shards().iter().map(slot_of_keys).collect();
                assert_eq!(placed, expected, "a room of board {board_id}");
            }
        }
        let storage = Storage::Sharded {
            shards: 6,
            placement: Placement::Even,
        };
        let keys = Keys::new("ov:").board(7, storage, Spread::Voters, Tz::UTC);
        let shard = &keys.shards()[3];
        assert!(
            shard.vote_counts().starts_with("ov:{b:7:s3:"),
            "{}",
            shard.vote_counts()
        );
        assert_eq!(keys.shards(), keys.shards(), "the same keys every time");
        let room = keys.instance("r1", 60_000);
        assert!(
            room.shards()[3]
                .vote_counts()
                .starts_with("ov:{b:7:i:r1:s3:")
        );
    }
}
