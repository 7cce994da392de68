//! How much a build waits for a remote store ([`Policy`]: a timeout per request, a deadline
//! for all of a build's requests, how many requests are in flight) and what it learnt of the store's
//! health ([`Health`]: the counts of requests and bytes, the first fault, whether the store
//! is taken to be down). A store that is down, slow or faulty costs compile time, never the
//! build: once it is down (unreachable, a timeout, or [`MAX_FAULTS`] faults of any kind) no
//! further request is made, and no request starts past the deadline.

use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crate::Fault;

/// Faults after which a store is taken to be down whatever their kind.
pub const MAX_FAULTS: u64 = 16;

/// How long and how wide a build talks to a remote store.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Policy {
    /// The longest one request may take (connecting, sending, the whole answer).
    pub timeout: Duration,
    /// The longest a build's use of the store may take, from its first request: no request
    /// starts after it (so a build waits for the store at most this and one timeout).
    pub deadline: Duration,
    /// Requests in flight at once.
    pub parallel: usize,
}

impl Default for Policy {
    fn default() -> Self {
        Policy {
            timeout: Duration::from_secs(5),
            deadline: Duration::from_secs(30),
            parallel: 16,
        }
    }
}

/// The counts of a store's use in one build.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Counts {
    /// Requests made (a Redis pipeline counts once, with its commands in `commands`).
    pub requests: u64,
    /// Commands sent (one per request over HTTP; one per key in a Redis pipeline).
    pub commands: u64,
    /// Bytes of bodies received.
    pub bytes_down: u64,
    /// Bytes of bodies sent.
    pub bytes_up: u64,
    /// Requests that failed (not counting "not found").
    pub faults: u64,
    /// The first fault, as a one-line message.
    pub first_fault: Option<String>,
    /// Whether the store was taken to be down.
    pub down: bool,
}

/// What one build learnt of a store, shared by the threads making requests.
#[derive(Debug, Default)]
pub(crate) struct Health {
    requests: AtomicU64,
    commands: AtomicU64,
    bytes_down: AtomicU64,
    bytes_up: AtomicU64,
    faults: AtomicU64,
    down: AtomicBool,
    first: Mutex<Option<String>>,
}

impl Health {
    /// Whether no further request should be made.
    pub(crate) fn is_down(&self) -> bool {
        self.down.load(Ordering::Relaxed)
    }

    /// Counts a request of `commands` commands.
    pub(crate) fn request(&self, commands: u64) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        self.commands.fetch_add(commands, Ordering::Relaxed);
    }

    /// Counts bytes received and sent.
    pub(crate) fn moved(&self, down: u64, up: u64) {
        self.bytes_down.fetch_add(down, Ordering::Relaxed);
        self.bytes_up.fetch_add(up, Ordering::Relaxed);
    }

    /// Notes a fault (the first is kept), taking the store down when it says so or when
    /// there have been [`MAX_FAULTS`].
    pub(crate) fn fault(&self, fault: &Fault) {
        let n = self.faults.fetch_add(1, Ordering::Relaxed) + 1;
        if fault.is_down() || n >= MAX_FAULTS {
            self.down.store(true, Ordering::Relaxed);
        }
        if let Ok(mut first) = self.first.lock()
            && first.is_none()
        {
            *first = Some(fault.to_string());
        }
    }

    /// The counts so far.
    pub(crate) fn counts(&self) -> Counts {
        Counts {
            requests: self.requests.load(Ordering::Relaxed),
            commands: self.commands.load(Ordering::Relaxed),
            bytes_down: self.bytes_down.load(Ordering::Relaxed),
            bytes_up: self.bytes_up.load(Ordering::Relaxed),
            faults: self.faults.load(Ordering::Relaxed),
            first_fault: self.first.lock().ok().and_then(|f| f.clone()),
            down: self.is_down(),
        }
    }
}
