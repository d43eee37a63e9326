//! The three storage layouts of score boards against a brute-force model, on a real
//! redis-server: random operator sequences (and concurrent `incr` from 32 clients), then
//! every page, rank, around-me window and member count equals the model's. `full` and
//! `sharded` answer exactly what one sorted set answers; `top_n` answers every score
//! exactly and every rank inside its ranking.

use std::collections::BTreeMap;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::Duration;

use proptest::prelude::*;

use ovation::domain::period::{Bucket, Period, parse_instant};
use ovation::domain::score::View;
use ovation::domain::scoring::{Op, Storage};
use ovation::store::redis::keys::{BoardKeys, Spread, shard_of};
use ovation::store::redis::{
    PageQuery, RedisStore, ScoreCall, ScoreReply, StandingQuery, StandingReply, WriteFacts,
};

use crate::harness::shared_target;

fn runtime() -> &'static tokio::runtime::Runtime {
    static RT: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RT.get_or_init(|| tokio::runtime::Runtime::new().unwrap())
}

fn store() -> RedisStore {
    RedisStore::new(&shared_target(), "lay:", Duration::from_secs(5)).unwrap()
}

fn board(store: &RedisStore, storage: Storage) -> BoardKeys {
    static BOARD: AtomicI64 = AtomicI64::new(1);
    store.keys().board(
        BOARD.fetch_add(1, Ordering::Relaxed),
        storage,
        Spread::Members,
        chrono_tz::Tz::UTC,
    )
}

fn buckets() -> Vec<Bucket> {
    let at = parse_instant("2026-11-23T10:00:00Z").unwrap();
    [Period::Day, Period::All]
        .iter()
        .map(|&p| Bucket::containing(p, chrono_tz::Tz::UTC, at).unwrap())
        .collect()
}

/// Every member's score, and what one sorted set would answer.
#[derive(Debug, Default, Clone)]
struct Model(BTreeMap<String, i64>);

impl Model {
    fn apply(&mut self, member: &str, op: Op, value: i64) -> i64 {
        let score = self.0.entry(member.to_owned()).or_insert(0);
        *score = op.apply(*score, value);
        *score
    }

    /// (member, units), higher score first, then the greater member id.
    fn ranking(&self) -> Vec<(String, i64)> {
        let mut ranking: Vec<(String, i64)> = self.0.iter().map(|(m, s)| (m.clone(), *s)).collect();
        ranking.sort_by(|a, b| b.1.cmp(&a.1).then(b.0.cmp(&a.0)));
        ranking
    }

    fn rank(&self, score: i64) -> i64 {
        1 + self.0.values().filter(|s| **s > score).count() as i64
    }

    /// The nearest member with a strictly higher score than `score` (0 when absent):
    /// the lowest such score, the smallest member id among equals.
    fn above(&self, score: i64) -> Option<(String, i64, i64)> {
        self.0
            .iter()
            .filter(|(_, s)| **s > score)
            .min_by(|a, b| a.1.cmp(b.1).then(a.0.cmp(b.0)))
            .map(|(m, s)| (m.clone(), *s, self.rank(*s)))
    }
}

async fn write(
    store: &RedisStore,
    board: &BoardKeys,
    member: &str,
    op: Op,
    value: i64,
) -> ScoreReply {
    let buckets = buckets();
    let call = ScoreCall {
        board,
        buckets: &buckets,
        op,
        value,
        write: WriteFacts {
            voters: &buckets,
            ..WriteFacts::at(member, Some(member), 0)
        },
        windows: &[],
        trends: &[],
    };
    store
        .write_scores(&[call])
        .await
        .unwrap()
        .remove(0)
        .unwrap()
}

fn page_query<'a>(
    board: &'a BoardKeys,
    bucket: &'a Bucket,
    offset: i64,
    limit: i64,
    anchor: Option<&str>,
) -> PageQuery<'a> {
    PageQuery {
        board,
        bucket,
        view: View::Real,
        offset,
        limit,
        anchor: anchor.map(str::to_owned),
    }
}

/// Checks every read of `board` against the model.
async fn check(store: &RedisStore, board: &BoardKeys, model: &Model) {
    let buckets = buckets();
    let all = &buckets[1];
    let ranking = model.ranking();
    let n = ranking.len() as i64;
    let retain = match board.storage() {
        Storage::TopN { retain, trim_at } => {
            // The ranking never passes trim_at and holds at least the best `retain`.
            let kept = store
                .pages(&[page_query(board, all, 0, 1000, None)])
                .await
                .unwrap()
                .remove(0);
            assert!(kept.entries.len() as i64 <= trim_at, "trimmed at {trim_at}");
            assert!(kept.entries.len() as i64 >= retain.min(n));
            Some(retain)
        }
        _ => None,
    };

    // Pages.
    for (offset, limit) in [(0, 1), (0, 5), (2, 3), (0, 1000), (n.max(1) - 1, 4)] {
        let page = store
            .pages(&[page_query(board, all, offset, limit, None)])
            .await
            .unwrap()
            .remove(0);
        assert_eq!(page.total_members, n, "total members");
        let expected: Vec<(String, i64)> = ranking
            .iter()
            .skip(offset as usize)
            .take(limit as usize)
            .cloned()
            .collect();
        match retain {
            None => {
                assert_eq!(page.entries, expected, "page {offset}+{limit}");
                let first = expected.first().map_or(0, |e| model.rank(e.1));
                assert_eq!(page.first_rank, first, "first rank of {offset}+{limit}");
            }
            Some(retain) if offset + limit <= retain => {
                // Among equal scores at the cut the kept members may differ: scores and
                // ranks must not, and every member named has that score.
                let scores = |e: &[(String, i64)]| e.iter().map(|x| x.1).collect::<Vec<_>>();
                assert_eq!(
                    scores(&page.entries),
                    scores(&expected),
                    "page {offset}+{limit}"
                );
                for (member, units) in &page.entries {
                    assert_eq!(model.0[member], *units);
                }
                if let Some(first) = expected.first() {
                    assert_eq!(page.first_rank, model.rank(first.1));
                }
            }
            Some(_) => {}
        }
    }

    // Standings and around-me, for every member and one that has no score.
    let mut members: Vec<String> = model.0.keys().cloned().collect();
    members.push("nobody".to_owned());
    let queries: Vec<StandingQuery<'_>> = members
        .iter()
        .map(|m| StandingQuery {
            board,
            bucket: all,
            // The day bucket took the same writes: as a "previous" bucket it must answer
            // the same score and rank.
            previous: Some(&buckets[0]),
            view: View::Real,
            member: m,
        })
        .collect();
    let standings = store.standings(&queries).await.unwrap();
    for (member, got) in members.iter().zip(standings) {
        let score = model.0.get(member).copied();
        let rank = score.map(|s| model.rank(s));
        match retain {
            None => {
                let expected = StandingReply {
                    score,
                    rank,
                    above: model.above(score.unwrap_or(0)),
                    previous_score: score,
                    previous_rank: rank,
                    participants: i64::from(score.is_some()),
                    lower: score.map(|s| model.0.values().filter(|v| **v < s).count() as i64),
                    total: model.0.len() as i64,
                    // The real view read: a full board's votes are its scores; a sharded
                    // one reads none.
                    votes: (!board.storage().is_sharded()).then(|| score.unwrap_or(0)),
                };
                assert_eq!(got, expected, "standing of {member}");
            }
            Some(retain) => {
                assert_eq!(got.score, score, "exact score of {member}");
                assert_eq!(got.previous_score, score, "previous score of {member}");
                assert_eq!(got.previous_rank, got.rank, "previous rank of {member}");
                if got.rank.is_some() {
                    assert_eq!(got.rank, rank, "rank of kept {member}");
                    assert_eq!(got.above, model.above(score.unwrap_or(0)), "above {member}");
                }
                let must_keep = score.is_some_and(|s| {
                    ranking
                        .get(retain as usize - 1)
                        .is_some_and(|cut| s > cut.1)
                        || (ranking.len() as i64) <= retain
                });
                assert!(
                    !must_keep || got.rank.is_some(),
                    "{member} belongs to the top {retain}"
                );
            }
        }
        if retain.is_none() && score.is_some() {
            for radius in [0, 2] {
                let page = store
                    .pages(&[page_query(board, all, radius, 2 * radius + 1, Some(member))])
                    .await
                    .unwrap()
                    .remove(0);
                let at = ranking.iter().position(|e| e.0 == *member).unwrap() as i64;
                // Up to `radius` above, then as many below as fill 2 × radius + 1.
                let from = (at - radius).max(0);
                let expected: Vec<(String, i64)> = ranking
                    .iter()
                    .skip(from as usize)
                    .take((2 * radius + 1) as usize)
                    .cloned()
                    .collect();
                assert_eq!(page.offset, Some(from), "around {member} ±{radius}");
                assert_eq!(page.entries, expected, "around {member} ±{radius}");
                assert_eq!(page.first_rank, model.rank(expected[0].1));
            }
        }
    }
}

#[derive(Debug, Clone)]
struct Step {
    member: u8,
    op: Op,
    value: i64,
}

fn steps(ops: &'static [Op]) -> impl Strategy<Value = Vec<Step>> {
    // Few members and small values, so scores tie often; sometimes large values.
    let value = prop_oneof![8 => 0i64..6, 1 => 0i64..1_000_000];
    prop::collection::vec(
        (0u8..24, prop::sample::select(ops), value).prop_map(|(member, op, value)| Step {
            member,
            op,
            value,
        }),
        1..80,
    )
}

const EVERY: &[Op] = &[Op::Incr, Op::Decr, Op::Set, Op::Best];
const RAISING: &[Op] = &[Op::Incr, Op::Best, Op::Set];

async fn play(storage: Storage, steps: &[Step]) {
    let store = store();
    let board = board(&store, storage);
    let mut model = Model::default();
    for step in steps {
        let member = format!("m{:02}", step.member);
        let lowers = matches!(storage, Storage::TopN { .. })
            && model
                .0
                .get(&member)
                .is_some_and(|s| step.op.apply(*s, step.value) < *s);
        let reply = write(&store, &board, &member, step.op, step.value).await;
        if lowers {
            assert_eq!(reply, ScoreReply::Lowers, "{step:?}");
            continue;
        }
        let after = model.apply(&member, step.op, step.value);
        assert_eq!(reply, ScoreReply::Written(vec![after, after]), "{step:?}");
    }
    check(&store, &board, &model).await;
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 24, ..ProptestConfig::default() })]

    #[test]
    fn full_answers_like_the_model(steps in steps(EVERY)) {
        runtime().block_on(play(Storage::Full, &steps));
    }

    #[test]
    fn sharded_answers_like_the_model(steps in steps(EVERY), shards in 2i64..9) {
        runtime().block_on(play(Storage::sharded(shards), &steps));
    }

    #[test]
    fn top_n_answers_like_the_model(steps in steps(RAISING), retain in 1i64..6, extra in 1i64..4) {
        runtime().block_on(play(Storage::TopN { retain, trim_at: retain + extra }, &steps));
    }
}

/// 32 clients add to 200 members at once; no increment is lost, and on `top_n` the
/// members that rose from outside into the top hold their exact scores.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn concurrent_increments_from_32_clients_are_exact_on_every_layout() {
    for storage in [
        Storage::Full,
        Storage::TopN {
            retain: 10,
            trim_at: 15,
        },
        Storage::sharded(16),
    ] {
        let store = store();
        let board = board(&store, storage);
        let clients: Vec<_> = (0..32u64)
            .map(|client| {
                let (store, board) = (store.clone(), board.clone());
                tokio::spawn(async move {
                    let mut added = BTreeMap::<String, i64>::new();
                    for i in 0..60u64 {
                        // Late members get the larger increments: they rise from outside.
                        let m = (client * 7 + i * 13) % 200;
                        let member = format!("m{m:03}");
                        let value = (m as i64) / 10 + 1;
                        let reply = write(&store, &board, &member, Op::Incr, value).await;
                        assert!(matches!(reply, ScoreReply::Written(_)), "{reply:?}");
                        *added.entry(member).or_default() += value;
                    }
                    added
                })
            })
            .collect();
        let mut model = Model::default();
        for client in clients {
            for (member, value) in client.await.unwrap() {
                model.apply(&member, Op::Incr, value);
            }
        }
        check(&store, &board, &model).await;
    }
}

/// A sharded page that one shard dominates needs more of that shard than its even share:
/// the page fetches the rest and still equals one sorted set's.
#[tokio::test(flavor = "multi_thread")]
async fn a_sharded_page_dominated_by_one_shard_is_exact() {
    let store = store();
    let shards = 4;
    let board = board(&store, Storage::sharded(shards));
    let mut model = Model::default();
    let (mut crowded, mut others) = (0, 0);
    for i in 0.. {
        let member = format!("p{i:04}");
        let value = if shard_of(&member, shards) == 0 {
            crowded += 1;
            1000 + i
        } else if others < 6 {
            others += 1;
            i
        } else {
            continue;
        };
        let reply = write(&store, &board, &member, Op::Set, value).await;
        assert_eq!(reply, ScoreReply::Written(vec![value, value]));
        model.apply(&member, Op::Set, value);
        if crowded == 60 {
            break;
        }
    }
    check(&store, &board, &model).await;
    let buckets = buckets();
    let page = store
        .pages(&[page_query(&board, &buckets[1], 10, 50, None)])
        .await
        .unwrap()
        .remove(0);
    let expected: Vec<(String, i64)> = model.ranking().into_iter().skip(10).take(50).collect();
    assert_eq!(
        page.entries, expected,
        "50 of shard 0's members, past its share of 28"
    );
    assert_eq!(page.first_rank, 11);
}
