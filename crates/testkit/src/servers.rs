//! Real cache servers for tests, each on 127.0.0.1 at a free port and stopped when dropped:
//! an nginx serving a temporary directory with WebDAV `PUT` (the Bazel HTTP cache protocol's
//! `GET`/`PUT`/`HEAD` of `/ac/KEY` and `/cas/HASH` are plain file requests to it) and a
//! `redis-server` that saves nothing. When a server's program is missing, the start returns
//! `None` and the test says it skipped, unless `IRKIT_REQUIRE_SERVERS` is set (CI installs
//! both): then it fails.

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A server process, killed (and its files removed) when dropped.
pub struct Server {
    child: Child,
    /// The server's URL (`http://127.0.0.1:PORT` or `redis://127.0.0.1:PORT`).
    pub url: String,
    /// Its temporary directory (nginx's root is `dir/root`).
    pub dir: PathBuf,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// A port nothing listens on now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// The program `name` on the `PATH` or in `/usr/sbin`, if there.
fn program(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH").unwrap_or_default();
    std::env::split_paths(&path)
        .chain([PathBuf::from("/usr/sbin"), PathBuf::from("/usr/local/sbin")])
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

/// `None` with a note when `name` is missing (a failure with `IRKIT_REQUIRE_SERVERS`).
fn missing(name: &str) -> Option<Server> {
    assert!(
        std::env::var_os("IRKIT_REQUIRE_SERVERS").is_none(),
        "{name} is missing and IRKIT_REQUIRE_SERVERS is set (apt-get install nginx redis-server)"
    );
    eprintln!("skipped: {name} is not installed (apt-get install nginx redis-server)");
    None
}

/// Waits until `port` accepts connections (at most 10 s).
fn wait_for(port: u16, child: &mut Child, name: &str) {
    let addr = SocketAddr::from(([127, 0, 0, 1], port));
    let start = Instant::now();
    while TcpStream::connect_timeout(&addr, Duration::from_millis(100)).is_err() {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{name} exited: {status}");
        }
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{name} did not start"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn temp_dir(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "irkit-{what}-{}-{}",
        std::process::id(),
        free_port()
    ));
    std::fs::create_dir_all(&dir).expect("a temporary directory");
    dir
}

/// An nginx with WebDAV `PUT` serving a fresh directory, or `None` if nginx is missing.
pub fn nginx() -> Option<Server> {
    let Some(bin) = program("nginx") else {
        return missing("nginx");
    };
    let dir = temp_dir("nginx");
    let port = free_port();
    let root = dir.join("root");
    std::fs::create_dir_all(&root).expect("nginx root");
    let conf = format!(
        "daemon off;\nmaster_process off;\npid {d}/nginx.pid;\nerror_log {d}/error.log;\n\
         events {{ worker_connections 256; }}\n\
         http {{\n  access_log off;\n  client_body_temp_path {d}/body;\n\
         proxy_temp_path {d}/proxy;\n  fastcgi_temp_path {d}/fastcgi;\n\
         uwsgi_temp_path {d}/uwsgi;\n  scgi_temp_path {d}/scgi;\n\
         client_max_body_size 0;\n  keepalive_requests 100000;\n\
         server {{\n    listen 127.0.0.1:{port};\n    root {r};\n\
         location / {{\n      dav_methods PUT;\n      create_full_put_path on;\n\
         dav_access user:rw;\n    }}\n  }}\n}}\n",
        d = dir.display(),
        r = root.display(),
    );
    let conf_path = dir.join("nginx.conf");
    std::fs::write(&conf_path, conf).expect("nginx.conf");
    let mut child = Command::new(bin)
        .arg("-e")
        .arg(dir.join("error.log"))
        .arg("-p")
        .arg(&dir)
        .arg("-c")
        .arg(&conf_path)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("nginx starts");
    wait_for(port, &mut child, "nginx");
    Some(Server {
        child,
        url: format!("http://127.0.0.1:{port}"),
        dir,
    })
}

/// A `redis-server` that saves nothing, or `None` if it is missing. `max_memory` (bytes), if
/// given, is its `maxmemory` with no eviction: a store that fills up.
pub fn redis(max_memory: Option<u64>) -> Option<Server> {
    let Some(bin) = program("redis-server") else {
        return missing("redis-server");
    };
    let dir = temp_dir("redis");
    let port = free_port();
    let mut cmd = Command::new(bin);
    cmd.args([
        "--port",
        &port.to_string(),
        "--bind",
        "127.0.0.1",
        "--save",
        "",
    ])
    .args(["--appendonly", "no", "--dir"])
    .arg(&dir);
    if let Some(m) = max_memory {
        cmd.args([
            "--maxmemory",
            &m.to_string(),
            "--maxmemory-policy",
            "noeviction",
        ]);
    }
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("redis-server starts");
    wait_for(port, &mut child, "redis-server");
    Some(Server {
        child,
        url: format!("redis://127.0.0.1:{port}"),
        dir,
    })
}

/// The files under `dir`, recursively.
pub fn files_under(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = std::fs::read_dir(dir) {
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                out.extend(files_under(&p));
            } else {
                out.push(p);
            }
        }
    }
    out
}

/// How [`misbehaving`] answers every request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Misbehaviour {
    /// Accepts, reads, never answers (a store that hangs).
    Silent,
    /// `404` to everything, each after 200 ms (a slow store).
    Slow,
    /// `500 Internal Server Error` to everything.
    Error500,
    /// `507 Insufficient Storage` to a `PUT`, `404` to the rest (a full store).
    Full,
    /// Closes the connection as soon as the request is read.
    Close,
    /// `200` declaring 1000 bytes, then 10 and a close (a short body).
    Short,
    /// `200` declaring a body of 1 TiB, then streaming bytes (an oversized body).
    Huge,
    /// `200` to every `GET` with a body of 64 bytes of `0x5a` (an altered body).
    Garbage,
    /// Not HTTP at all.
    NotHttp,
}

/// A server of the test's own on 127.0.0.1 that misbehaves as `how` on every connection, for
/// as long as the test process runs; its URL (`http://127.0.0.1:PORT`).
pub fn misbehaving(how: Misbehaviour) -> String {
    use std::io::{Read, Write};
    let listener = TcpListener::bind("127.0.0.1:0").expect("a port");
    let port = listener.local_addr().expect("its address").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            std::thread::spawn(move || {
                let mut buf = vec![0u8; 1 << 16];
                loop {
                    // One request's head (bodies of PUTs are read and dropped with it).
                    let n = match s.read(&mut buf) {
                        Ok(0) | Err(_) => return,
                        Ok(n) => n,
                    };
                    let put = buf[..n].starts_with(b"PUT");
                    let answer: &[u8] = match how {
                        Misbehaviour::Silent => {
                            std::thread::sleep(Duration::from_secs(3600));
                            return;
                        }
                        Misbehaviour::Slow => {
                            std::thread::sleep(Duration::from_millis(200));
                            b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"
                        }
                        Misbehaviour::Error500 => {
                            b"HTTP/1.1 500 Internal Server Error\r\ncontent-length: 0\r\n\r\n"
                        }
                        Misbehaviour::Full if put => {
                            b"HTTP/1.1 507 Insufficient Storage\r\ncontent-length: 0\r\n\r\n"
                        }
                        Misbehaviour::Full => {
                            b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\n\r\n"
                        }
                        Misbehaviour::Close => return,
                        Misbehaviour::Short => {
                            let _ = s.write_all(
                                b"HTTP/1.1 200 OK\r\ncontent-length: 1000\r\n\r\n0123456789",
                            );
                            return;
                        }
                        Misbehaviour::Huge => {
                            let _ = s.write_all(
                                b"HTTP/1.1 200 OK\r\ncontent-length: 1099511627776\r\n\r\n",
                            );
                            let chunk = vec![0x5au8; 1 << 16];
                            while s.write_all(&chunk).is_ok() {}
                            return;
                        }
                        Misbehaviour::Garbage if put => {
                            b"HTTP/1.1 201 Created\r\ncontent-length: 0\r\n\r\n"
                        }
                        Misbehaviour::Garbage => {
                            let mut a = b"HTTP/1.1 200 OK\r\ncontent-length: 64\r\n\r\n".to_vec();
                            a.extend_from_slice(&[0x5a; 64]);
                            let _ = s.write_all(&a);
                            continue;
                        }
                        Misbehaviour::NotHttp => b"SSH-2.0-OpenSSH_9.2\r\n\x00\x01\x02",
                    };
                    if s.write_all(answer).is_err() || how == Misbehaviour::NotHttp {
                        return;
                    }
                }
            });
        }
    });
    format!("http://127.0.0.1:{port}")
}
