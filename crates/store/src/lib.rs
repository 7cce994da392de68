//! irkit's remote stores: where a build shares what it compiled with other machines
//! (spec/backends.md, "A remote code cache"). A [`Remote`] speaks one of two standard
//! protocols, chosen by the URL's scheme:
//!
//! * `http://HOST[:PORT][/PREFIX]` and `https://...`: the Bazel HTTP cache protocol
//!   (`http`): records under `/ac/`, blobs under `/cas/` named by their SHA-256
//!   ([`cas_name`]);
//! * `redis://HOST[:PORT][/DB]`: Redis strings (`redis`), in pipelines.
//!
//! A store is never trusted and never fatal: what is fetched is only bytes for the caller to
//! check, each read bounded by the caller; every request has a timeout and all of them a
//! deadline ([`Policy`]); a store that is down, slow, answers errors or garbage costs only
//! what could not be fetched, counted with the first fault in [`Counts`]. Requests run in
//! parallel on a bounded number of threads (`pool`).

mod error;
mod http;
mod policy;
mod pool;
mod redis;

use std::time::Instant;

use sha2::Digest;

pub use error::{Fault, StoreError};
use policy::Health;
pub use policy::{Counts, MAX_FAULTS, Policy};

/// The two namespaces of a store.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Records, named by a key of the caller's, overwritten by each writer (the "action
    /// cache").
    Ac,
    /// Blobs, named by the SHA-256 of their bytes ([`cas_name`]).
    Cas,
}

impl Kind {
    /// The namespace's directory in a URL or key.
    pub(crate) fn dir(self) -> &'static str {
        match self {
            Kind::Ac => "ac",
            Kind::Cas => "cas",
        }
    }
}

/// The name of a blob in the content-addressed namespace: the SHA-256 of its bytes, in
/// lowercase hex (what bazel-remote checks a `PUT /cas/` against).
pub fn cas_name(bytes: &[u8]) -> String {
    hex(&sha2::Sha256::digest(bytes))
}

/// `bytes` in lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    bytes
        .iter()
        .flat_map(|&b| [DIGITS[usize::from(b >> 4)], DIGITS[usize::from(b & 15)]])
        .map(char::from)
        .collect()
}

#[derive(Debug)]
enum Backend {
    Http(http::Http),
    Redis(redis::Redis),
}

/// A remote store, shared by the threads of one build.
#[derive(Debug)]
pub struct Remote {
    url: String,
    backend: Backend,
    policy: Policy,
    health: Health,
    /// When the build's use of the store ends: [`Policy::deadline`] after its first request.
    deadline: std::sync::OnceLock<Instant>,
}

impl Remote {
    /// The store at `url` with `policy` (nothing is connected yet).
    pub fn open(url: &str, policy: Policy) -> Result<Remote, StoreError> {
        let backend = if url.starts_with("http://") || url.starts_with("https://") {
            Backend::Http(http::Http::new(url, policy.parallel)?)
        } else if url.starts_with("redis://") || url.starts_with("rediss://") {
            Backend::Redis(redis::Redis::new(url)?)
        } else {
            return Err(StoreError::Scheme(url.to_string()));
        };
        Ok(Remote {
            url: url.to_string(),
            backend,
            policy,
            health: Health::default(),
            deadline: std::sync::OnceLock::new(),
        })
    }

    /// The URL as given (for messages).
    pub fn url(&self) -> &str {
        &self.url
    }

    /// Whether `url` names a remote store (by its scheme) rather than a directory.
    pub fn is_url(url: &str) -> bool {
        ["http://", "https://", "redis://", "rediss://"]
            .iter()
            .any(|s| url.starts_with(s))
    }

    /// When no request may start any more: [`Policy::deadline`] after the first fetch or
    /// upload began.
    fn deadline(&self) -> Instant {
        *self
            .deadline
            .get_or_init(|| Instant::now() + self.policy.deadline)
    }

    /// The counts of this store's use so far.
    pub fn counts(&self) -> Counts {
        self.health.counts()
    }

    /// The values of `keys` in `kind`, each key with the most bytes its value may have:
    /// `None` for a miss, a fault (counted), a value over its bound, or a key not asked for
    /// before the deadline (one for all the calls on this store) or once the store was down.
    pub fn get(&self, kind: Kind, keys: &[(String, u64)]) -> Vec<Option<Vec<u8>>> {
        let deadline = self.deadline();
        let timeout = |left| self.policy.timeout.min(left);
        let got = |r: Result<Option<Vec<u8>>, Fault>| match r {
            Ok(v) => {
                let n = v.as_ref().map_or(0, |b| b.len() as u64);
                self.health.moved(n, 0);
                v
            }
            Err(f) => {
                self.health.fault(&f);
                None
            }
        };
        match &self.backend {
            Backend::Http(h) => pool::run(
                keys.len(),
                self.policy.parallel,
                deadline,
                &self.health,
                |i, left| {
                    self.health.request(1);
                    let (key, limit) = &keys[i];
                    got(h.get(kind, key, *limit, timeout(left)))
                },
            )
            .into_iter()
            .map(Option::flatten)
            .collect(),
            Backend::Redis(r) => {
                let batches: Vec<&[(String, u64)]> = keys.chunks(redis::BATCH).collect();
                let done = pool::run(
                    batches.len(),
                    self.policy.parallel,
                    deadline,
                    &self.health,
                    |i, left| {
                        let batch: Vec<(&str, u64)> =
                            batches[i].iter().map(|(k, n)| (k.as_str(), *n)).collect();
                        self.health.request(batch.len() as u64);
                        match r.get_batch(kind, &batch, timeout(left)) {
                            Ok(each) => each.into_iter().map(got).collect(),
                            Err(f) => {
                                self.health.fault(&f);
                                vec![None; batch.len()]
                            }
                        }
                    },
                );
                let mut out = Vec::with_capacity(keys.len());
                for (batch, values) in batches.iter().zip(done) {
                    let values = values.unwrap_or_default();
                    out.extend((0..batch.len()).map(|j| values.get(j).cloned().flatten()));
                }
                out
            }
        }
    }

    /// Stores each `(key, value)` in `kind`; whether each was stored (`false` after a fault,
    /// counted, or when not sent before the deadline or once the store was down).
    pub fn put(&self, kind: Kind, items: &[(String, Vec<u8>)]) -> Vec<bool> {
        let deadline = self.deadline();
        let timeout = |left| self.policy.timeout.min(left);
        let done = |r: Result<(), Fault>, up: u64| match r {
            Ok(()) => {
                self.health.moved(0, up);
                true
            }
            Err(f) => {
                self.health.fault(&f);
                false
            }
        };
        match &self.backend {
            Backend::Http(h) => pool::run(
                items.len(),
                self.policy.parallel,
                deadline,
                &self.health,
                |i, left| {
                    let (k, v) = &items[i];
                    self.health.request(1);
                    done(h.put(kind, k, v, timeout(left)), v.len() as u64)
                },
            )
            .into_iter()
            .map(|r| r.unwrap_or(false))
            .collect(),
            Backend::Redis(r) => {
                let batches: Vec<&[(String, Vec<u8>)]> = items.chunks(redis::BATCH).collect();
                let done = pool::run(
                    batches.len(),
                    self.policy.parallel,
                    deadline,
                    &self.health,
                    |i, left| {
                        let batch: Vec<(&str, &[u8])> = batches[i]
                            .iter()
                            .map(|(k, v)| (k.as_str(), v.as_slice()))
                            .collect();
                        let up = batch.iter().map(|(_, v)| v.len() as u64).sum();
                        self.health.request(batch.len() as u64);
                        done(r.put_batch(kind, &batch, timeout(left)), up)
                    },
                );
                batches
                    .iter()
                    .zip(done)
                    .flat_map(|(b, ok)| std::iter::repeat_n(ok == Some(true), b.len()))
                    .collect()
            }
        }
    }

    /// Whether the store holds `kind`/`key` (`HEAD` over HTTP, `EXISTS` in Redis); `false`
    /// after a fault (counted).
    pub fn contains(&self, kind: Kind, key: &str) -> bool {
        if self.health.is_down() || Instant::now() >= self.deadline() {
            return false;
        }
        self.health.request(1);
        let r = match &self.backend {
            Backend::Http(h) => h.head(kind, key, self.policy.timeout),
            Backend::Redis(r) => r.exists(kind, key, self.policy.timeout),
        };
        r.unwrap_or_else(|f| {
            self.health.fault(&f);
            false
        })
    }
}
