//! **Adjustments**: operations staff change a member's score in one bucket of one period
//! of a `votes` board (`domain::adjustment`), by one `adjust.lua` call in the member's
//! shard: both views or one, nothing else (no other period, no carry-over, no rolling
//! window, no hourly vote count, no distinct voter). The board's ledger gets an entry
//! naming the bucket, so a recount or a rebuild counts it there; the audit log gets who,
//! what and why. A closed bucket is adjusted while Redis holds it (the archive then
//! writes it again); one whose keys left Redis is refused (409 `bucket_released`).

use chrono::Utc;
use serde_json::json;

use super::audit;
use super::error::EngineError;
use super::ledger::ledger_board;
use super::state::AppState;
use crate::domain::adjustment::{Adjustment, Asked};
use crate::domain::code::Code;
use crate::domain::idempotency::Idempotency;
use crate::domain::ids::{BoardSlug, IdempotencyKey, MemberId};
use crate::domain::ledger::Entry;
use crate::domain::period::epoch_hour_of_ms;
use crate::domain::score::View;
use crate::store::redis::{AdjustCall, AdjustReply, Adjusted};

/// An adjustment made (or, for a repeated idempotency key, made before).
#[derive(Debug, Clone)]
pub struct Made {
    pub member: MemberId,
    pub adjustment: Adjustment,
    /// The member's scores in the bucket after it (units).
    pub scores: Adjusted,
    pub replayed: bool,
}

/// Adjusts `member`'s score on `slug` as `asked` says, for `actor` (audited); with `key`,
/// a retry of the same request answers the first adjustment again and changes nothing.
pub async fn adjust(
    state: &AppState,
    actor: &str,
    slug: &BoardSlug,
    member: MemberId,
    asked: Asked<'_>,
    key: Option<IdempotencyKey>,
) -> Result<Made, EngineError> {
    let board = ledger_board(state, slug)?;
    let settings = &board.board.settings;
    if settings.scoring.is_scores() {
        return Err(EngineError::conflict(
            Code::WrongScoring,
            format!(
                "board {slug} keeps scores: write its members' scores with incr, decr or set instead"
            ),
        ));
    }
    if !board.members.contains_key(&member) {
        return Err(EngineError::not_found(
            Code::MemberNotFound,
            format!("board {slug} has no member {member}"),
        ));
    }
    let now = Utc::now();
    let adjustment = Adjustment::new(&settings.periods, settings.timezone, asked, now)?;
    let target = adjustment.target();
    let idempotency = key.map(|key| {
        Idempotency::new(
            key,
            &[
                ("member", Some(member.as_str())),
                ("bucket", Some(&target)),
                ("view", Some(adjustment.views.as_str())),
                ("delta", Some(&adjustment.delta.to_string())),
                ("reason", Some(&adjustment.reason)),
            ],
        )
    });
    let (real, display) = (
        adjustment.units(View::Real),
        adjustment.units(View::Display),
    );
    let entry = settings.ledger.then(|| {
        Entry {
            id: rand::random(),
            at: adjustment.at(now).timestamp_millis(),
            recorded: now.timestamp_millis(),
            member: member.to_string(),
            voter: None,
            channel: None,
            terminal: None,
            count: real,
            op: None,
            value: None,
            display,
            carry: 0,
            adjusts: Some(target.clone()),
            ip: None,
            held: None,
            releases: None,
        }
        .encode()
    });
    let bucket = &adjustment.bucket;
    let closed = bucket.end.is_some_and(|end| end <= now);
    let call = AdjustCall {
        board: &board.keys,
        member: member.as_str(),
        bucket,
        real,
        display,
        idempotency: idempotency.as_ref().map(|i| {
            (
                actor,
                &i.key,
                state.settings.idempotency_ttl,
                i.fingerprint.as_str(),
            )
        }),
        late_hour: bucket
            .start
            .filter(|_| closed)
            .map(|start| epoch_hour_of_ms(start.timestamp_millis())),
        entry,
    };
    let (scores, replayed) = match state.redis.adjust(&call).await? {
        AdjustReply::Adjusted(scores) => (scores, false),
        AdjustReply::Replayed {
            fingerprint,
            scores,
        } => {
            if idempotency.as_ref().map(|i| i.fingerprint.as_str()) != Some(fingerprint.as_str()) {
                return Err(EngineError::invalid(
                    Code::IdempotencyKeyReused,
                    "this idempotency key was used for a different adjustment: send a new key \
                     for a new adjustment, or the first request unchanged to get its answer again",
                ));
            }
            (scores, true)
        }
        AdjustReply::Gone => {
            return Err(EngineError::conflict(
                Code::BucketReleased,
                format!(
                    "{} {} has closed and Redis no longer holds its scores (they are in the \
                     archive, or it had none): only a bucket Redis still holds is adjusted",
                    bucket.period, bucket.label
                ),
            ));
        }
        AdjustReply::High(view) => {
            return Err(EngineError::invalid(
                Code::ScoreOverflow,
                format!(
                    "this adjustment would take member {member}'s {} score in {target} past \
                     the most it may hold (2^53 units in the all-time bucket, 2^53 - 2*10^15 in \
                     any other; a sharded votes board's shard: less)",
                    view.as_str()
                ),
            ));
        }
        AdjustReply::Low(view) => {
            return Err(EngineError::conflict(
                Code::NegativeScore,
                format!(
                    "this adjustment would take member {member}'s {} score in {target} below 0",
                    view.as_str()
                ),
            ));
        }
    };
    if !replayed {
        audit::record(
            state,
            actor,
            "member.adjust",
            &format!("board {slug} member {member}"),
            json!({"period": bucket.period.as_str(), "bucket": bucket.label,
                "view": adjustment.views.as_str(), "delta": adjustment.delta,
                "reason": adjustment.reason}),
        )
        .await;
    }
    Ok(Made {
        member,
        adjustment,
        scores,
        replayed,
    })
}
