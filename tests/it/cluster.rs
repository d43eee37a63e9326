//! On a 3-master Redis Cluster: boards, a sharded board's shards (evenly: two of six on
//! each master) and a family's instances spread over the nodes, each hash tag's keys on one node; deletion finds keys on every node; a
//! configuration change reaches instances listening on any node. (The vote, read,
//! rules, idempotency and layout modules run on the cluster too: `make test`.)

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ovation::store::redis::RedisTarget;
use reqwest::StatusCode;
use serde_json::json;

use crate::harness::{Options, RedisCluster, TestApp, shared_cluster};

fn on_the_cluster(seeds: Vec<String>) -> Options {
    Options {
        redis: RedisTarget::Cluster(seeds),
        ..Options::default()
    }
}

/// Every key of the app's boards, by hash tag, with the nodes (ports) that hold them.
async fn tags_by_node(prefix: &str) -> BTreeMap<String, BTreeSet<u16>> {
    let mut tags: BTreeMap<String, BTreeSet<u16>> = BTreeMap::new();
    for node in &shared_cluster().nodes {
        let mut conn = redis::Client::open(node.url())
            .unwrap()
            .get_multiplexed_async_connection()
            .await
            .unwrap();
        let keys: Vec<String> = redis::cmd("KEYS")
            .arg(format!("{prefix}:{{b:*"))
            .query_async(&mut conn)
            .await
            .unwrap();
        for key in keys {
            let tag = key[key.find('{').unwrap()..=key.find('}').unwrap()].to_owned();
            tags.entry(tag).or_default().insert(node.port);
        }
    }
    tags
}

#[tokio::test(flavor = "multi_thread")]
async fn boards_and_shards_spread_over_the_nodes_each_tag_on_one_node() {
    let app = TestApp::spawn_with(on_the_cluster(shared_cluster().seeds())).await;
    let (status, ready) = app.get("/readyz").await;
    assert_eq!(status, StatusCode::OK, "{ready}");
    assert_eq!(ready["redis_durability"]["persistence"], "none", "{ready}");
    for i in 0..6 {
        let slug = format!("b{i}");
        app.board(json!({"slug": slug, "title": slug, "membership": "open"}))
            .await;
        let (status, body) = app.vote(&slug, json!({"member": "m", "voter": "v"})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    app.board(
        json!({"slug": "split", "title": "Split", "membership": "open",
        "scoring": "scores", "storage": {"kind": "sharded", "shards": 8}}),
    )
    .await;
    for i in 0..40 {
        let (status, body) = app
            .post(
                "/api/v1/boards/split/scores",
                json!({"member": format!("m{i}"), "op": "incr", "value": i + 1, "voter": format!("v{}", i % 10)}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let tags = tags_by_node(&app.prefix).await;
    assert!(
        tags.values().all(|nodes| nodes.len() == 1),
        "a hash tag's keys live on one node: {tags:?}"
    );
    let nodes = |shards: bool| -> BTreeSet<u16> {
        tags.iter()
            .filter(|(tag, _)| tag.contains(":s") == shards)
            .flat_map(|(_, nodes)| nodes.iter().copied())
            .collect()
    };
    assert_eq!(
        tags.keys().filter(|t| t.contains(":s")).count(),
        8,
        "{tags:?}"
    );
    assert!(nodes(false).len() >= 2, "boards on one node: {tags:?}");
    assert!(nodes(true).len() >= 2, "shards on one node: {tags:?}");

    // The sharded board reads as one: the top, a rank, and its distinct voters counted
    // over shards on several nodes.
    let (status, page) = app.get("/api/v1/boards/split/top?limit=3").await;
    assert_eq!(status, StatusCode::OK, "{page}");
    let top: Vec<(&str, i64)> = page["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| (e["member"].as_str().unwrap(), e["score"].as_i64().unwrap()))
        .collect();
    assert_eq!(top, [("m39", 40), ("m38", 39), ("m37", 38)]);
    assert_eq!(page["total_members"], 40, "{page}");
    assert_eq!(page["participants"], 10, "{page}");
    let (_, member) = app.get("/api/v1/boards/split/members/m20").await;
    assert_eq!(
        (member["rank"].clone(), member["score"].clone()),
        (json!(20), json!(21))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_sharded_boards_shards_land_evenly_on_the_masters() {
    let app = TestApp::spawn_with(on_the_cluster(shared_cluster().seeds())).await;
    app.board(
        json!({"slug": "even", "title": "Even", "membership": "open",
        "storage": {"kind": "sharded", "shards": 6}}),
    )
    .await;
    // Votes from enough voters that every shard holds some.
    for i in 0..120 {
        let (status, body) = app
            .vote("even", json!({"member": "m", "voter": format!("v{i}")}))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let tags = tags_by_node(&app.prefix).await;
    let shards: Vec<_> = tags.iter().filter(|(t, _)| t.contains(":s")).collect();
    assert_eq!(shards.len(), 6, "{tags:?}");
    let mut per_node: BTreeMap<u16, usize> = BTreeMap::new();
    for (_, nodes) in &shards {
        assert_eq!(nodes.len(), 1, "a shard's keys live on one node: {tags:?}");
        *per_node.entry(*nodes.first().unwrap()).or_default() += 1;
    }
    assert_eq!(
        per_node.values().copied().collect::<Vec<_>>(),
        [2, 2, 2],
        "{tags:?}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_familys_instances_spread_over_the_nodes_each_on_one() {
    let app = TestApp::spawn_with(on_the_cluster(shared_cluster().seeds())).await;
    app.board(
        json!({"slug": "room", "title": "Rooms", "membership": "open",
        "instances": {"ttl_s": 3600}}),
    )
    .await;
    for i in 0..12 {
        let (status, body) = app
            .vote(&format!("room:r{i}"), json!({"member": "m", "voter": "v"}))
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let tags = tags_by_node(&app.prefix).await;
    let instances: Vec<_> = tags.iter().filter(|(t, _)| t.contains(":i:")).collect();
    assert_eq!(instances.len(), 12, "{tags:?}");
    assert!(
        instances.iter().all(|(_, nodes)| nodes.len() == 1),
        "an instance's keys live on one node: {tags:?}"
    );
    let nodes: BTreeSet<u16> = instances
        .iter()
        .flat_map(|(_, nodes)| nodes.iter().copied())
        .collect();
    assert!(nodes.len() >= 2, "instances on one node: {tags:?}");
    // The listing lives in the family's own slot.
    assert_eq!(
        tags.keys()
            .filter(|t| !t.contains(":i:"))
            .collect::<Vec<_>>(),
        ["{b:1}"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn deleting_a_board_on_a_cluster_unlinks_its_keys_on_every_node() {
    let app = TestApp::spawn_with(on_the_cluster(shared_cluster().seeds())).await;
    app.board(
        json!({"slug": "gone", "title": "Gone", "membership": "open",
        "scoring": "scores", "storage": {"kind": "sharded", "shards": 6}}),
    )
    .await;
    app.board(json!({"slug": "kept", "title": "Kept", "membership": "open"}))
        .await;
    for i in 0..30 {
        let (status, body) = app
            .post(
                "/api/v1/boards/gone/scores",
                json!({"member": format!("m{i}"), "op": "incr", "value": 1}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    app.vote("kept", json!({"member": "m"})).await;
    let before = tags_by_node(&app.prefix).await;
    // Six shards (a write without board-wide rules touches its shard only) and "kept".
    assert_eq!(before.len(), 6 + 1, "{before:?}");
    let (status, body) = app.delete("/api/v1/admin/boards/gone").await;
    assert!(status.is_success(), "{body}");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let left = tags_by_node(&app.prefix).await;
        if left.len() == 1 {
            assert_eq!(left.get("{b:2}").map(BTreeSet::len), Some(1), "{left:?}");
            break;
        }
        assert!(Instant::now() < deadline, "keys left behind: {left:?}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_change_reaches_instances_listening_on_every_node() {
    let seeds = shared_cluster().seeds();
    let first = TestApp::spawn_with(on_the_cluster(seeds.clone())).await;
    first.board(json!({"slug": "sync", "title": "Sync"})).await;
    // Each instance subscribes to the first seed it is given: one per node.
    let mut others = Vec::new();
    for i in 0..seeds.len() {
        let mut rotated = seeds.clone();
        rotated.rotate_left(i);
        others.push(
            TestApp::spawn_with(Options {
                prefix: first.prefix.clone(),
                database: Some(Arc::clone(&first.database)),
                // No periodic check: only the notice can tell.
                config_check: Duration::from_secs(120),
                ..on_the_cluster(rotated)
            })
            .await,
        );
    }
    // Give each instance a moment to subscribe before the change.
    tokio::time::sleep(Duration::from_millis(500)).await;
    first
        .patch("/api/v1/admin/boards/sync", json!({"title": "Renamed"}))
        .await;
    for (i, other) in others.iter().enumerate() {
        let started = Instant::now();
        loop {
            let (_, board) = other.get("/api/v1/admin/boards/sync").await;
            if board["title"] == "Renamed" {
                break;
            }
            assert!(
                started.elapsed() < Duration::from_secs(2),
                "instance {i} still shows {}",
                board["title"]
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn votes_go_on_after_a_master_fails_over_to_its_replica_and_none_counts_twice() {
    let mut cluster = RedisCluster::start_with(3, 1);
    let app = TestApp::spawn_with(on_the_cluster(cluster.seeds())).await;
    app.board(json!({"slug": "f", "title": "F", "membership": "open", "periods": ["all"]}))
        .await;
    let vote = |key: String| {
        let app = &app;
        async move {
            app.vote("f", json!({"member": "m", "idempotency_key": key}))
                .await
        }
    };
    let (status, body) = vote("before".into()).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // The master holding the board's tag dies.
    let key = format!("{}:{{b:1}}:z:r:all:all", app.prefix);
    let master = cluster
        .nodes
        .iter()
        .position(|n| {
            let out = |args: &[&str]| {
                let out = std::process::Command::new("redis-cli")
                    .args(["-p", &n.port.to_string()])
                    .args(args)
                    .output()
                    .unwrap();
                String::from_utf8_lossy(&out.stdout).into_owned()
            };
            out(&["ROLE"]).starts_with("master") && out(&["EXISTS", &key]).trim() == "1"
        })
        .expect("a master holds the board");
    cluster.nodes[master].crash();

    // Each vote is retried with its own key until it is counted: 503s while the replica
    // takes over, then answers; a retry never counts twice.
    let started = Instant::now();
    let mut refused = 0;
    for i in 0..20 {
        loop {
            let (status, body) = vote(format!("k{i}")).await;
            if status == StatusCode::OK {
                break;
            }
            assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
            refused += 1;
            assert!(
                started.elapsed() < Duration::from_secs(30),
                "no failover within 30 s"
            );
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    }
    assert!(refused > 0, "the first votes after the crash were refused");
    for i in 0..20 {
        let (_, again) = vote(format!("k{i}")).await;
        assert_eq!(again["replayed"], true, "{again}");
    }
    let (_, member) = app.get("/api/v1/boards/f/members/m?view=real").await;
    // The 20 counted after the failover, and the first one if the replica had it.
    let score = member["score"].as_i64().unwrap();
    assert!((20..=21).contains(&score), "{member}");
}

#[tokio::test(flavor = "multi_thread")]
async fn votes_and_reads_follow_a_board_whose_slot_moved_to_another_node() {
    let cluster = RedisCluster::start_with(3, 0);
    let app = TestApp::spawn_with(on_the_cluster(cluster.seeds())).await;
    app.board(json!({"slug": "mv", "title": "Mv", "membership": "open", "periods": ["all"]}))
        .await;
    let (status, body) = app.vote("mv", json!({"member": "m"})).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // Every slot of the node holding the board moves to another node.
    let port = cluster.nodes[0].port.to_string();
    let cli = |args: &[&str]| {
        let out = std::process::Command::new("redis-cli")
            .args(args)
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    };
    let key = format!("{}:{{b:1}}:z:r:all:all", app.prefix);
    let slot = cli(&["-p", &port, "CLUSTER", "KEYSLOT", &key]);
    let nodes = cli(&["-p", &port, "CLUSTER", "NODES"]);
    let slot: u16 = slot.trim().parse().unwrap();
    let owns = |line: &str| {
        line.split_whitespace().skip(8).any(|range| {
            let (a, b) = range.split_once('-').unwrap_or((range, range));
            a.parse::<u16>().is_ok_and(|a| a <= slot) && b.parse::<u16>().is_ok_and(|b| slot <= b)
        })
    };
    let from = nodes.lines().find(|l| owns(l)).unwrap();
    let to = nodes
        .lines()
        .find(|l| l.contains("master") && !owns(l))
        .unwrap();
    let id = |line: &str| line.split_whitespace().next().unwrap().to_owned();
    let slots: usize = from
        .split_whitespace()
        .skip(8)
        .map(|range| {
            let (a, b) = range.split_once('-').unwrap_or((range, range));
            b.parse::<usize>().unwrap() - a.parse::<usize>().unwrap() + 1
        })
        .sum();
    let moved = std::process::Command::new("redis-cli")
        .args(["--cluster", "reshard", &format!("127.0.0.1:{port}")])
        .args(["--cluster-from", &id(from), "--cluster-to", &id(to)])
        .args(["--cluster-slots", &slots.to_string(), "--cluster-yes"])
        .stdout(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(moved.success());

    // The client learns where the slot went from the redirect: no 503 lasts.
    let started = Instant::now();
    loop {
        let (status, body) = app.vote("mv", json!({"member": "m"})).await;
        if status == StatusCode::OK {
            break;
        }
        assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE, "{body}");
        assert!(started.elapsed() < Duration::from_secs(10), "{body}");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    let (status, top) = app.get("/api/v1/boards/mv/top?view=real").await;
    assert_eq!(status, StatusCode::OK, "{top}");
    assert_eq!(top["entries"][0]["score"], 2, "{top}");
}
