//! `ir-link --cache DIR --remote-cache URL` and `--cache URL` (spec/backends.md, "A remote
//! code cache"), against real servers (nginx with WebDAV `PUT`, redis-server; skipped with a
//! note when missing, unless `IRKIT_REQUIRE_SERVERS` is set) and servers of the test's own
//! that misbehave. Machines are cache directories: a build on machine B (an empty directory)
//! after machine A's compiles nothing, and a one-function edit compiles one function; every
//! fault ends with a correct executable.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use irkit_testkit::servers::{self, Misbehaviour};

/// Functions of the generated program besides `main`.
const N: usize = 600;

fn ir_link(args: &[&str], dir: &Path) -> Output {
    Command::new(env!("CARGO_BIN_EXE_ir-link"))
        .args(args)
        .current_dir(dir)
        .stdin(std::process::Stdio::null())
        .output()
        .expect("ir-link runs")
}

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("irkit-remote-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The constant `f{i}` adds, `edit` changing the one of `f{edit.0}` to `edit.1`.
fn constant(i: usize, edit: Option<(usize, i32)>) -> i32 {
    match edit {
        Some((e, c)) if e == i => c,
        _ => (i * 7 % 101) as i32,
    }
}

/// A program of `N` functions, each calling the one before: `f{i}(x) = 3 * f{i-1}(x) + c_i`.
fn program(edit: Option<(usize, i32)>) -> String {
    let mut t = String::new();
    t.push_str(&format!(
        "@f0: fn(i32) -> i32 = func {{\n^entry(%x: i32):\n  %r: i32 = iadd %x, i32 {}\n  ret %r\n}}\n\n",
        constant(0, edit)
    ));
    for i in 1..N {
        t.push_str(&format!(
            "@f{i}: fn(i32) -> i32 = func {{\n^entry(%x: i32):\n  %a: i32 = call @f{}(%x)\n  \
             %b: i32 = imul %a, i32 3\n  %r: i32 = iadd %b, i32 {}\n  ret %r\n}}\n\n",
            i - 1,
            constant(i, edit)
        ));
    }
    t.push_str(&format!(
        "#[export(\"main\")]\n@main: fn() -> i32 = func {{\n^entry:\n  %r: i32 = call @f{}(i32 1)\n  \
         %m: i32 = and %r, i32 127\n  ret %m\n}}\n",
        N - 1
    ));
    t
}

/// The exit code of the program with `edit`.
fn expected(edit: Option<(usize, i32)>) -> i32 {
    let mut v: i32 = 1i32.wrapping_add(constant(0, edit));
    for i in 1..N {
        v = v.wrapping_mul(3).wrapping_add(constant(i, edit));
    }
    v & 127
}

/// Builds `src` (a file in `d`) into `exe` with `cache` arguments and `--stats`; checks the
/// executable's exit code is `want`; the stderr.
fn build(d: &Path, src: &str, exe: &str, cache: &[&str], want: i32) -> String {
    let mut args = vec![src, "--emit", "exe", "--stats", "-o", exe];
    args.extend_from_slice(cache);
    let o = ir_link(&args, d);
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert_eq!(o.status.code(), Some(0), "{err}");
    let run = Command::new(d.join(exe)).output().unwrap();
    assert_eq!(run.status.code(), Some(want), "{exe}: {err}");
    err
}

/// The counts of `functions compiled:  C of F (H from the code cache, ...)`: (C, F).
fn compiled(err: &str) -> (usize, usize) {
    let line = err
        .lines()
        .find_map(|l| l.strip_prefix("functions compiled:  "))
        .unwrap_or_else(|| panic!("no counts: {err}"));
    let mut words = line.split(' ');
    let c = words.next().and_then(|w| w.parse().ok()).unwrap();
    let f = words.nth(1).and_then(|w| w.parse().ok()).unwrap();
    (c, f)
}

/// The counts of `remote cache:  F functions fetched, R requests, ...`: (F, R).
fn remote(err: &str) -> (usize, usize) {
    let line = err
        .lines()
        .find_map(|l| l.strip_prefix("remote cache:"))
        .unwrap_or_else(|| panic!("no remote counts: {err}"));
    let n: Vec<usize> = line
        .split([' ', ','])
        .filter_map(|w| w.parse().ok())
        .collect();
    (n[0], n[1])
}

fn faults(err: &str) -> usize {
    err.lines()
        .filter(|l| l.contains(" faults, the first: "))
        .count()
}

/// Machine A fills the store; machine B (an empty directory) compiles nothing and fetches
/// everything in a few requests; B edits one function and compiles one; machine C, with the
/// store alone (`--cache URL`), compiles nothing.
fn two_machines(url: &str, tag: &str) {
    let d = temp_dir(tag);
    std::fs::write(d.join("p.ir"), program(None)).unwrap();
    let a = build(
        &d,
        "p.ir",
        "a",
        &["--cache", "ma", "--remote-cache", url],
        expected(None),
    );
    assert_eq!(compiled(&a), (N + 1, N + 1), "{a}");
    assert_eq!(faults(&a), 0, "{a}");
    let b = build(
        &d,
        "p.ir",
        "b",
        &["--cache", "mb", "--remote-cache", url],
        expected(None),
    );
    assert_eq!(compiled(&b).0, 0, "{b}");
    let (fetched, requests) = remote(&b);
    assert_eq!(fetched, N + 1, "{b}");
    // One record per group of about 128 functions, one blob per group.
    assert!(
        requests * 20 < N,
        "{requests} requests for {N} functions: {b}"
    );
    // B again: warm from its own directory, nothing fetched.
    let b2 = build(
        &d,
        "p.ir",
        "b",
        &["--cache", "mb", "--remote-cache", url],
        expected(None),
    );
    assert_eq!((compiled(&b2).0, remote(&b2).0), (0, 0), "{b2}");
    // B edits one function: one compiled, and the store learns it.
    let edit = Some((N / 2, 5000));
    std::fs::write(d.join("q.ir"), program(edit)).unwrap();
    let e = build(
        &d,
        "q.ir",
        "e",
        &["--cache", "mb", "--remote-cache", url],
        expected(edit),
    );
    assert_eq!(compiled(&e).0, 1, "{e}");
    let c = build(&d, "q.ir", "c", &["--cache", url], expected(edit));
    assert_eq!((compiled(&c).0, remote(&c).0), (0, N + 1), "{c}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn two_machines_share_an_http_store() {
    let Some(nginx) = servers::nginx() else {
        return;
    };
    two_machines(&format!("{}/irkit", nginx.url), "http");
}

#[test]
fn two_machines_share_a_redis_store() {
    let Some(redis) = servers::redis(None) else {
        return;
    };
    two_machines(&redis.url, "redis");
}

#[test]
fn two_builds_at_once_share_one_store() {
    let Some(nginx) = servers::nginx() else {
        return;
    };
    let d = temp_dir("concurrent");
    let edit = Some((N / 3, 77));
    std::fs::write(d.join("p.ir"), program(None)).unwrap();
    std::fs::write(d.join("q.ir"), program(edit)).unwrap();
    let url = nginx.url.as_str();
    for round in 0..2 {
        std::thread::scope(|s| {
            let d = &d;
            let one = s.spawn(move || {
                let dir = format!("one{round}");
                build(
                    d,
                    "p.ir",
                    "one",
                    &["--cache", &dir, "--remote-cache", url],
                    expected(None),
                )
            });
            let two = s.spawn(move || {
                let dir = format!("two{round}");
                build(
                    d,
                    "q.ir",
                    "two",
                    &["--cache", &dir, "--remote-cache", url],
                    expected(edit),
                )
            });
            let (one, two) = (one.join().unwrap(), two.join().unwrap());
            assert_eq!((faults(&one), faults(&two)), (0, 0), "{one}\n{two}");
        });
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// A store that misbehaves as `url`'s does: the build compiles everything, succeeds, and
/// says so in one line, within about the timeouts.
fn survives(url: &str, what: &str) {
    let d = temp_dir(&format!("fault-{what}"));
    std::fs::write(d.join("p.ir"), program(None)).unwrap();
    let start = Instant::now();
    let err = build(
        &d,
        "p.ir",
        "p",
        &[
            "--cache",
            "m",
            "--remote-cache",
            url,
            "--remote-timeout",
            "300",
        ],
        expected(None),
    );
    assert!(start.elapsed() < Duration::from_secs(20), "{what}: {err}");
    assert_eq!(compiled(&err).0, N + 1, "{what}: {err}");
    assert_eq!(faults(&err), 1, "{what}: {err}");
    assert!(!err.contains("warning"), "{what}: {err}");
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn a_faulty_store_costs_only_compile_time() {
    for how in [
        Misbehaviour::Silent,
        Misbehaviour::Error500,
        Misbehaviour::Close,
        Misbehaviour::Short,
        Misbehaviour::Huge,
        Misbehaviour::NotHttp,
        Misbehaviour::Full,
    ] {
        survives(&servers::misbehaving(how), &format!("{how:?}"));
    }
    let closed = format!("http://127.0.0.1:{}", servers::free_port());
    survives(&closed, "down");
    // Bodies that are not records: refused, not faults.
    let d = temp_dir("garbage");
    std::fs::write(d.join("p.ir"), program(None)).unwrap();
    let url = servers::misbehaving(Misbehaviour::Garbage);
    let err = build(
        &d,
        "p.ir",
        "p",
        &["--cache", "m", "--remote-cache", &url],
        expected(None),
    );
    assert_eq!(compiled(&err).0, N + 1, "{err}");
    assert!(err.contains("records or blobs refused"), "{err}");
    let _ = std::fs::remove_dir_all(&d);
    survives(
        &format!("redis://127.0.0.1:{}", servers::free_port()),
        "redis-down",
    );
}

#[test]
fn a_full_redis_costs_only_compile_time() {
    let Some(redis) = servers::redis(Some(1 << 20)) else {
        return;
    };
    let d = temp_dir("full-redis");
    // A program whose entries are larger than the store.
    std::fs::write(d.join("p.ir"), program(None)).unwrap();
    let pad = vec![b'x'; 2 << 20];
    let o = Command::new("redis-cli")
        .args(["-u", &redis.url, "-x", "set", "pad"])
        .stdin(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(&pad)?;
            c.wait()
        });
    let _ = o;
    let err = build(
        &d,
        "p.ir",
        "p",
        &["--cache", "m", "--remote-cache", &redis.url],
        expected(None),
    );
    assert_eq!(compiled(&err).0, N + 1, "{err}");
    assert_eq!(faults(&err), 1, "{err}");
    let _ = std::fs::remove_dir_all(&d);
}

/// Altered blobs and records in a real store, and records of another key: refused, and what
/// they held compiled.
#[test]
fn altered_or_foreign_entries_are_refused() {
    let Some(nginx) = servers::nginx() else {
        return;
    };
    let d = temp_dir("altered");
    std::fs::write(d.join("p.ir"), program(None)).unwrap();
    std::fs::write(d.join("k1"), b"the team's key").unwrap();
    std::fs::write(d.join("k2"), b"another key").unwrap();
    let url = nginx.url.as_str();
    let keyed = |dir: &str, key: &str| {
        build(
            &d,
            "p.ir",
            "p",
            &["--cache", dir, "--remote-cache", url, "--cache-key", key],
            expected(None),
        )
    };
    let a = keyed("a", "k1");
    assert_eq!(compiled(&a).0, N + 1, "{a}");
    // Another key: the team's records are neither found nor overwritten.
    let other = keyed("b", "k2");
    assert_eq!(
        (compiled(&other).0, remote(&other).0),
        (N + 1, 0),
        "{other}"
    );
    let a = keyed("a2", "k1");
    assert_eq!(compiled(&a).0, 0, "{a}");
    // A flipped byte in every record, then in every blob: refused, and compiled.
    for (what, dir) in [("records", "root/ac"), ("blobs", "root/cas")] {
        for f in servers::files_under(&nginx.dir.join(dir)) {
            let mut b = std::fs::read(&f).unwrap();
            let mid = b.len() / 2;
            b[mid] ^= 1;
            std::fs::write(&f, b).unwrap();
        }
        let c = keyed(&format!("c-{what}"), "k1");
        assert_eq!((compiled(&c).0, remote(&c).0), (N + 1, 0), "{what}: {c}");
        assert!(c.contains("records or blobs refused"), "{what}: {c}");
        assert_eq!(faults(&c), 0, "{what}: {c}");
        // That build wrote the records again; the next is served.
        let again = keyed(&format!("d-{what}"), "k1");
        assert_eq!(compiled(&again).0, 0, "{what}: {again}");
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn unusable_remote_options_are_errors() {
    let d = temp_dir("options");
    std::fs::write(d.join("p.ir"), program(None)).unwrap();
    std::fs::write(d.join("empty"), b"").unwrap();
    for (args, says) in [
        (vec!["--cache", "ftp://x"], None),
        (
            vec!["--cache", "http://h", "--remote-cache", "http://h"],
            Some("--remote-cache"),
        ),
        (
            vec!["--cache", "m", "--cache-key", "empty"],
            Some("--cache-key"),
        ),
        (
            vec!["--cache", "http://h", "--cache-key", "empty"],
            Some("empty"),
        ),
        (
            vec!["--cache", "http://h", "--cache-key", "missing"],
            Some("missing"),
        ),
        (
            vec!["--cache", "m", "--remote-cache", "dir"],
            Some("not a remote cache URL"),
        ),
    ] {
        let mut all = vec!["p.ir", "--emit", "obj", "-o", "p.o"];
        all.extend_from_slice(&args);
        let o = ir_link(&all, &d);
        let err = String::from_utf8_lossy(&o.stderr);
        match says {
            // `ftp://x` is a directory name like any other.
            None => assert_eq!(o.status.code(), Some(0), "{args:?}: {err}"),
            Some(s) => {
                assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
                assert!(
                    err.starts_with("error: ") && err.contains(s),
                    "{args:?}: {err}"
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}
