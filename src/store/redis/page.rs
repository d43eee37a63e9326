//! `page.lua`: one page of a bucket.

use redis::{Script, Value};
use std::sync::LazyLock;

use super::keys::BoardKeys;
use super::reply::{as_array, as_int, as_text, as_units, reply_error};
use super::{Invocation, RedisFailure, RedisStore};
use crate::domain::period::Bucket;
use crate::domain::score::View;

static PAGE: LazyLock<Script> = LazyLock::new(|| {
    Script::new(concat!(
        include_str!("paging.lua"),
        include_str!("page.lua")
    ))
});

/// Asks for a page of one bucket in one view: by offset, or around an anchor member.
#[derive(Debug, Clone)]
pub struct PageQuery<'a> {
    pub board: &'a BoardKeys,
    pub bucket: &'a Bucket,
    pub view: View,
    /// Offset, or the radius when `anchor` is set.
    pub offset: i64,
    pub limit: i64,
    pub anchor: Option<String>,
}

/// A page of a board, its scores as `S`: units, or a trending period's decayed scores.
#[derive(Debug, Clone, PartialEq)]
pub struct PageReply<S = i64> {
    pub total_members: i64,
    pub participants: i64,
    /// Position of the first entry; `None` when the anchor has no score.
    pub offset: Option<i64>,
    /// Competition rank of the first entry.
    pub first_rank: i64,
    /// (member, score), best first.
    pub entries: Vec<(String, S)>,
}

impl<S> PageReply<S> {
    /// Reads `page_of`'s five items (see paging.lua) of the reply `value`, each score by
    /// `score`.
    pub(super) fn from_items(
        value: &Value,
        items: &[Value],
        score: impl Fn(&Value) -> Option<S>,
    ) -> Result<Self, RedisFailure> {
        let bad = || reply_error("page", value);
        let [card, participants, offset, first_rank, page] = items else {
            return Err(bad());
        };
        let page = as_array(page).ok_or_else(bad)?;
        let entries = page
            .chunks(2)
            .map(|pair| Some((as_text(&pair[0])?, score(pair.get(1)?)?)))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(bad)?;
        let offset = as_int(offset).ok_or_else(bad)?;
        Ok(Self {
            total_members: as_int(card).ok_or_else(bad)?,
            participants: as_int(participants).ok_or_else(bad)?,
            offset: (offset >= 0).then_some(offset),
            first_rank: as_int(first_rank).ok_or_else(bad)?,
            entries,
        })
    }
}

impl PageReply {
    pub(super) fn parse(value: &Value) -> Result<Self, RedisFailure> {
        let items = as_array(value).ok_or_else(|| reply_error("page", value))?;
        Self::from_items(value, items, as_units)
    }
}

impl RedisStore {
    /// Reads pages of boards: one round trip for `full` and `top_n` boards; a sharded
    /// board's pages are merged from its shards (see `sharded`, and `summed` for a board
    /// whose scores are sums over shards).
    pub async fn pages(&self, queries: &[PageQuery<'_>]) -> Result<Vec<PageReply>, RedisFailure> {
        let (sharded, single): (Vec<usize>, Vec<usize>) =
            (0..queries.len()).partition(|&i| queries[i].board.storage().is_sharded());
        let calls: Vec<Invocation> = single
            .iter()
            .map(|&i| {
                let q = &queries[i];
                let top_n = q.board.storage().is_top_n();
                let mut inv = PAGE.key(q.board.scores(q.view, q.bucket));
                inv.key(q.board.exact_scores(q.bucket));
                for key in q.board.voters(q.bucket) {
                    inv.key(key);
                }
                inv.arg(q.offset)
                    .arg(q.limit)
                    .arg(q.anchor.as_deref().unwrap_or(""))
                    .arg(if top_n { "1" } else { "0" });
                inv
            })
            .collect();
        let replies = self.run_script_all("page", &PAGE, &calls).await?;
        let mut answers: Vec<Option<PageReply>> = vec![None; queries.len()];
        for (&i, reply) in single.iter().zip(&replies) {
            answers[i] = Some(PageReply::parse(reply)?);
        }
        for i in sharded {
            let q = &queries[i];
            answers[i] = Some(if q.board.sums_shards() {
                self.summed_page(q).await?
            } else {
                self.sharded_page(q).await?
            });
        }
        answers
            .into_iter()
            .map(|a| a.ok_or_else(|| RedisFailure::Reply("a page went unread".into())))
            .collect()
    }
}
