//! The remote stores against real servers (nginx with WebDAV `PUT`, redis-server) and against
//! servers of the test's own that misbehave: what is stored is fetched back, a miss is a
//! miss, and no fault fails, panics or stalls past the timeouts.

use std::time::{Duration, Instant};

use irkit_store::{Kind, Policy, Remote};
use irkit_testkit::servers::{self, Misbehaviour};

fn policy(timeout_ms: u64) -> Policy {
    Policy {
        timeout: Duration::from_millis(timeout_ms),
        deadline: Duration::from_secs(10),
        parallel: 4,
    }
}

/// Stores records and blobs, then reads them back (and misses), on `url`.
fn round_trip(url: &str) {
    let store = Remote::open(url, policy(5000)).unwrap();
    let blobs: Vec<(String, Vec<u8>)> = (0..200u32)
        .map(|i| {
            let body = format!("blob {i}").repeat(i as usize + 1).into_bytes();
            (irkit_store::cas_name(&body), body)
        })
        .collect();
    assert!(store.put(Kind::Cas, &blobs).iter().all(|&ok| ok));
    let record = vec![("a".repeat(64), b"record one".to_vec())];
    assert!(store.put(Kind::Ac, &record).iter().all(|&ok| ok));
    let mut names: Vec<(String, u64)> = blobs.iter().map(|(n, _)| (n.clone(), 1 << 20)).collect();
    names.push(("0".repeat(64), 1 << 20));
    let got = store.get(Kind::Cas, &names);
    for (i, (_, body)) in blobs.iter().enumerate() {
        assert_eq!(got[i].as_deref(), Some(&body[..]), "blob {i}");
    }
    assert_eq!(got[200], None);
    let got = store.get(Kind::Ac, &[("a".repeat(64), 100), ("b".repeat(64), 100)]);
    assert_eq!(got, vec![Some(b"record one".to_vec()), None]);
    // Overwritten records; bounded reads.
    let record = vec![("a".repeat(64), b"record two, longer".to_vec())];
    assert!(store.put(Kind::Ac, &record)[0]);
    assert_eq!(
        store.get(Kind::Ac, &[("a".repeat(64), 100)])[0].as_deref(),
        Some(&b"record two, longer"[..])
    );
    assert_eq!(store.get(Kind::Ac, &[("a".repeat(64), 5)])[0], None);
    // Each key with its own bound.
    let got = store.get(Kind::Cas, &[names[5].clone(), (names[6].0.clone(), 3)]);
    assert!(got[0].is_some() && got[1].is_none());
    assert!(store.contains(Kind::Cas, &blobs[3].0));
    assert!(!store.contains(Kind::Cas, &"1".repeat(64)));
    let c = store.counts();
    // The two bodies over their bounds.
    assert_eq!(c.faults, 2, "{c:?}");
    assert!(c.bytes_down > 0 && c.bytes_up > 0, "{c:?}");
}

#[test]
fn nginx_stores_and_serves_records_and_blobs() {
    let Some(nginx) = servers::nginx() else {
        return;
    };
    round_trip(&nginx.url);
    // Under a prefix, too.
    round_trip(&format!("{}/some/prefix/", nginx.url));
    assert!(nginx.dir.join("root/cas").is_dir());
}

#[test]
fn redis_stores_and_serves_records_and_blobs() {
    let Some(redis) = servers::redis(None) else {
        return;
    };
    round_trip(&redis.url);
    // Pipelines: 200 blobs took a handful of requests, one command per key.
    let store = Remote::open(&redis.url, policy(5000)).unwrap();
    let keys: Vec<(String, u64)> = (0..200).map(|i| (format!("{i:064}"), 10)).collect();
    store.get(Kind::Cas, &keys);
    let c = store.counts();
    assert_eq!((c.requests, c.commands), (4, 200), "{c:?}");
}

#[test]
fn a_full_redis_refuses_writes_without_failing() {
    let Some(redis) = servers::redis(Some(1 << 20)) else {
        return;
    };
    let store = Remote::open(&redis.url, policy(5000)).unwrap();
    let big: Vec<(String, Vec<u8>)> = (0..64u8)
        .map(|i| (format!("{i:064}"), vec![i; 256 << 10]))
        .collect();
    let stored = store.put(Kind::Cas, &big);
    assert!(stored.iter().any(|&ok| !ok), "a 1 MiB store took 16 MiB");
    let c = store.counts();
    assert!(c.faults > 0 && c.first_fault.is_some(), "{c:?}");
}

#[test]
fn faults_are_misses_within_the_timeouts() {
    let cases = [
        Misbehaviour::Silent,
        Misbehaviour::Error500,
        Misbehaviour::Close,
        Misbehaviour::Short,
        Misbehaviour::Huge,
        Misbehaviour::NotHttp,
    ];
    let closed = format!("http://127.0.0.1:{}", servers::free_port());
    let urls = cases
        .iter()
        .map(|&m| (format!("{m:?}"), servers::misbehaving(m)))
        .chain([("nothing listening".to_string(), closed)]);
    for (what, url) in urls {
        let store = Remote::open(&url, policy(300)).unwrap();
        let keys: Vec<(String, u64)> = (0..100).map(|i| (format!("{i:064}"), 1 << 20)).collect();
        let start = Instant::now();
        let got = store.get(Kind::Cas, &keys);
        let stored = store.put(Kind::Cas, &[(keys[0].0.clone(), vec![1; 10])]);
        let took = start.elapsed();
        assert!(got.iter().all(Option::is_none), "{what}");
        assert_eq!(stored, vec![false], "{what}");
        let c = store.counts();
        assert!(c.faults > 0 && c.first_fault.is_some(), "{what}: {c:?}");
        // Down after the first unreachable answer or MAX_FAULTS faults: far fewer requests
        // than keys, and about one timeout per thread, not one per key.
        assert!(c.requests <= 2 * irkit_store::MAX_FAULTS, "{what}: {c:?}");
        assert!(took < Duration::from_secs(3), "{what}: {took:?}");
    }
}

#[test]
fn a_slow_store_is_left_at_the_deadline() {
    let url = servers::misbehaving(Misbehaviour::Slow);
    let store = Remote::open(
        &url,
        Policy {
            timeout: Duration::from_millis(500),
            deadline: Duration::from_secs(1),
            parallel: 4,
        },
    )
    .unwrap();
    let keys: Vec<(String, u64)> = (0..200).map(|i| (format!("{i:064}"), 10)).collect();
    let start = Instant::now();
    // 200 answers of 200 ms on 4 threads would take 10 s; the deadline stops it at 1 s, and
    // holds for every later call.
    assert!(store.get(Kind::Cas, &keys).iter().all(Option::is_none));
    assert!(store.get(Kind::Ac, &keys).iter().all(Option::is_none));
    assert_eq!(
        store.put(Kind::Ac, &[(keys[0].0.clone(), vec![1])]),
        vec![false]
    );
    assert!(!store.contains(Kind::Ac, &keys[0].0));
    let took = start.elapsed();
    assert!(took < Duration::from_secs(3), "{took:?}");
    let c = store.counts();
    // Only the requests in flight at the deadline were cut (and counted as faults).
    assert!(c.requests < 40 && c.faults <= 4, "{c:?}");
}

#[test]
fn urls_name_stores_or_are_refused() {
    for url in ["http://h", "https://h/p", "redis://h:1/2"] {
        assert!(Remote::is_url(url) && Remote::open(url, Policy::default()).is_ok());
    }
    for url in ["ftp://h", "/tmp/dir", "dir"] {
        assert!(!Remote::is_url(url) && Remote::open(url, Policy::default()).is_err());
    }
    assert!(Remote::open("http://", Policy::default()).is_err());
}
