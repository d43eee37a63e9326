//! **A family's room budget**: a write that would open a room (its first write, or the
//! first after it expired) passes the family's budget before it is sent — at most
//! `instances.max_live` rooms live at once, and the family's rules of rooms opened per
//! creator (`["creator"]`) — checked and consumed in the family's own slot by
//! `instances_open.lua`, one call per family and creator. A room refused there is
//! written by none of the call's writes; a room opened for writes that were all refused
//! is taken back (`instances_unopen.lua`, `refund.lua`).
//!
//! The creator is who answers for a room: a voting page's visitor by its address (a new
//! visitor id costs nothing; an address does), an API client by its key.

use std::net::IpAddr;
use std::sync::Arc;

use chrono::{DateTime, Utc};

use super::auth::Caller;
use super::boards::BoardRef;
use super::config::BoardConfig;
use super::error::EngineError;
use super::limits;
use super::state::AppState;
use crate::domain::code::Code;
use crate::domain::ids::MemberId;
use crate::domain::limit::{VoteValues, ip_subject};
use crate::store::redis::{Opening, Openings};

/// A room one of a call's writes would write.
pub(super) struct RoomWrite<'a> {
    /// The write's index in the call.
    pub index: usize,
    pub board: &'a BoardRef,
    pub member: &'a MemberId,
    /// The end user's address, as the write names it.
    pub ip: Option<IpAddr>,
    /// Written without rate-limit rules (backfill): the family's rules of rooms opened
    /// do not apply; its most live rooms does.
    pub skip_limits: bool,
}

/// One call of `instances_open.lua`: its rooms, what it found, and which writes write
/// each room.
struct Call {
    config: Arc<BoardConfig>,
    creator: String,
    openings: Openings,
    found: Vec<Opening>,
    /// Per room, the indexes of the writes that write it.
    writes: Vec<Vec<usize>>,
}

/// The rooms a call of writes opened, to take back those whose writes were all refused.
pub(super) struct Opened {
    calls: Vec<Call>,
}

/// Who answers for the rooms `caller`'s write from `ip` opens: `ip:<address>` for a
/// voting page's visitor (an IPv6 one by its /64), else the caller's key.
fn creator(caller: &Caller, ip: Option<IpAddr>) -> String {
    match ip {
        Some(ip) if caller.is_visitor() => format!("ip:{}", ip_subject(ip)),
        _ => caller.id.clone(),
    }
}

/// Opens the rooms `writes` write that are not live, as far as each family's budget
/// allows; answers what was opened, and the writes refused with why (409 `family_full`,
/// or 429 by a rule of rooms opened).
pub(super) async fn open(
    state: &AppState,
    caller: &Caller,
    writes: &[RoomWrite<'_>],
    now: DateTime<Utc>,
) -> Result<(Opened, Vec<(usize, EngineError)>), EngineError> {
    let mut calls: Vec<Call> = Vec::new();
    for w in writes {
        let Some(family) = w.board.settings().instances else {
            continue;
        };
        let Some(instance) = &w.board.instance else {
            continue;
        };
        // A backfill counts against no rule: its creator is told apart from others'.
        let creator = match w.skip_limits {
            true => String::new(),
            false => creator(caller, w.ip),
        };
        let at = calls
            .iter()
            .position(|c| c.config.board.id == w.board.config.board.id && c.creator == creator);
        let at = match at {
            Some(at) => at,
            None => {
                let rules = if w.skip_limits {
                    Vec::new()
                } else {
                    let values = VoteValues {
                        creator: Some(creator.clone()),
                        ..VoteValues::default()
                    };
                    limits::checks(w.board.opening_scope(), &values, 1, now, now)?
                };
                calls.push(Call {
                    config: w.board.config.clone(),
                    creator,
                    openings: Openings {
                        family: w.board.config.keys.clone(),
                        ttl_ms: family.ttl_s * 1000,
                        max_live: family.max_live,
                        now_ms: now.timestamp_millis(),
                        rules,
                        instances: Vec::new(),
                        tag: format!("{:016x}", rand::random::<u64>()),
                    },
                    found: Vec::new(),
                    writes: Vec::new(),
                });
                calls.len() - 1
            }
        };
        let call = &mut calls[at];
        match call
            .openings
            .instances
            .iter()
            .position(|i| i == instance.as_str())
        {
            Some(room) => call.writes[room].push(w.index),
            None => {
                call.openings.instances.push(instance.as_str().to_owned());
                call.writes.push(vec![w.index]);
            }
        }
    }
    let found = futures_util::future::join_all(
        calls
            .iter()
            .map(|c| state.redis.open_instances(&c.openings)),
    )
    .await;
    let mut refused = Vec::new();
    for (call, found) in calls.iter_mut().zip(found) {
        call.found = found?;
        for (room, found) in call.found.iter().enumerate() {
            for &index in &call.writes[room] {
                if let Some(why) = refusal(call, room, *found, writes, now) {
                    refused.push((index, why));
                }
            }
        }
    }
    Ok((Opened { calls }, refused))
}

/// Why the writes of `room` of `call` are refused, when the room could not be opened.
fn refusal(
    call: &Call,
    room: usize,
    found: Opening,
    writes: &[RoomWrite<'_>],
    now: DateTime<Utc>,
) -> Option<EngineError> {
    let config = &call.config;
    let slug = &config.board.slug;
    let name = &call.openings.instances[room];
    match found {
        Opening::Live | Opening::Opened => None,
        Opening::Full => Some(EngineError::conflict(
            Code::FamilyFull,
            format!(
                "family {slug} holds its most live rooms ({}): {slug}:{name} opens once another \
                 room expires",
                call.openings.max_live
            ),
        )),
        Opening::Limited {
            rule_index,
            retry_ms,
        } => {
            let check = call.openings.rules.get(rule_index)?;
            let rule = config.opening_rules.iter().find(|r| r.id == check.rule)?;
            let first = call.writes[room].first()?;
            let member = writes.iter().find(|w| w.index == *first)?.member;
            Some(limits::refusal(
                config,
                rule,
                check.limit,
                member,
                retry_ms,
                now,
            ))
        }
    }
}

impl Opened {
    /// Takes back each room this call opened whose writes were all refused (`refused`:
    /// whether the write at an index was): it stays out of the listing and its rules'
    /// counts are given back.
    pub(super) async fn settle(&self, state: &AppState, refused: impl Fn(usize) -> bool) {
        for call in &self.calls {
            let back: Vec<usize> = call
                .found
                .iter()
                .enumerate()
                .filter(|(room, found)| {
                    **found == Opening::Opened && call.writes[*room].iter().all(|&i| refused(i))
                })
                .map(|(room, _)| room)
                .collect();
            state.redis.unopen_instances(&call.openings, &back).await;
        }
    }
}
