//! Redis as a remote store (spec/backends.md, "A remote code cache"): records and blobs are
//! strings under `irkit/ac/KEY` and `irkit/cas/HASH`, read and written in pipelines of up to
//! [`BATCH`] commands, one round trip each. A value is read with `GETRANGE KEY 0 LIMIT`, so an
//! answer is at most one byte over the caller's bound whatever the store holds (an empty
//! string is a miss: no record or blob is empty). A full store (`maxmemory` reached) refuses
//! the `SET`s: a [`Fault`] like any other.

use std::sync::Mutex;
use std::time::Duration;

use crate::{Fault, Kind, StoreError};

/// What one key's read gave: its value, `None` for a miss, or a fault.
pub(crate) type Fetched = Result<Option<Vec<u8>>, Fault>;

/// Commands per pipeline.
pub(crate) const BATCH: usize = 64;

/// A Redis store: the client and the connections not in use.
pub(crate) struct Redis {
    client: redis::Client,
    idle: Mutex<Vec<redis::Connection>>,
}

impl std::fmt::Debug for Redis {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Redis").finish_non_exhaustive()
    }
}

impl Redis {
    /// The store at `url` (`redis://HOST[:PORT][/DB]`); nothing is connected yet.
    pub(crate) fn new(url: &str) -> Result<Redis, StoreError> {
        let client = redis::Client::open(url).map_err(|e| StoreError::Url {
            url: url.to_string(),
            detail: e.to_string(),
        })?;
        Ok(Redis {
            client,
            idle: Mutex::new(Vec::new()),
        })
    }

    /// Runs `f` on a connection whose every read and write times out after `timeout`, kept
    /// for the next call unless the call failed.
    fn with<T>(
        &self,
        timeout: Duration,
        f: impl FnOnce(&mut redis::Connection) -> redis::RedisResult<T>,
    ) -> Result<T, Fault> {
        let idle = self.idle.lock().ok().and_then(|mut v| v.pop());
        let mut conn = match idle {
            Some(c) => c,
            None => self
                .client
                .get_connection_with_timeout(timeout)
                .map_err(fault)?,
        };
        conn.set_read_timeout(Some(timeout)).map_err(fault)?;
        conn.set_write_timeout(Some(timeout)).map_err(fault)?;
        let out = f(&mut conn).map_err(fault)?;
        if let Ok(mut v) = self.idle.lock() {
            v.push(conn);
        }
        Ok(out)
    }

    /// The values of `keys` (`None`: not found), each at most as long as the bound beside
    /// it, in one round trip.
    pub(crate) fn get_batch(
        &self,
        kind: Kind,
        keys: &[(&str, u64)],
        timeout: Duration,
    ) -> Result<Vec<Fetched>, Fault> {
        let mut pipe = redis::pipe();
        for (k, limit) in keys {
            let end = i64::try_from(*limit).unwrap_or(i64::MAX);
            pipe.cmd("GETRANGE").arg(name(kind, k)).arg(0).arg(end);
        }
        let values: Vec<redis::Value> = self.with(timeout, |c| pipe.query(c))?;
        if values.len() != keys.len() {
            return Err(Fault::Protocol(format!(
                "{} replies to {} commands",
                values.len(),
                keys.len()
            )));
        }
        Ok(values
            .into_iter()
            .zip(keys)
            .map(|(v, &(_, limit))| match v {
                redis::Value::BulkString(b) if b.is_empty() => Ok(None),
                redis::Value::BulkString(b) if b.len() as u64 > limit => {
                    Err(Fault::Oversized(limit))
                }
                redis::Value::BulkString(b) => Ok(Some(b)),
                redis::Value::Nil => Ok(None),
                other => Err(Fault::Protocol(format!("GETRANGE replied {other:?}"))),
            })
            .collect())
    }

    /// Stores each `(key, value)` in one round trip.
    pub(crate) fn put_batch(
        &self,
        kind: Kind,
        items: &[(&str, &[u8])],
        timeout: Duration,
    ) -> Result<(), Fault> {
        let mut pipe = redis::pipe();
        for (k, v) in items {
            pipe.cmd("SET").arg(name(kind, k)).arg(*v).ignore();
        }
        self.with(timeout, |c| pipe.query::<()>(c))
    }

    /// Whether `kind`/`key` is stored.
    pub(crate) fn exists(&self, kind: Kind, key: &str, timeout: Duration) -> Result<bool, Fault> {
        let n: i64 = self.with(timeout, |c| {
            redis::cmd("EXISTS").arg(name(kind, key)).query(c)
        })?;
        Ok(n > 0)
    }
}

/// The Redis key of `kind`/`key`.
fn name(kind: Kind, key: &str) -> String {
    format!("irkit/{}/{key}", kind.dir())
}

/// The fault of a client error: the connection's make the store unreachable; an error the
/// server answered (`OOM`, a wrong type) is its status.
fn fault(e: redis::RedisError) -> Fault {
    if e.is_io_error() || e.is_timeout() || e.is_connection_dropped() || e.is_connection_refusal() {
        Fault::Unreachable(e.to_string())
    } else if e.code().is_some() {
        Fault::Status(e.to_string())
    } else {
        Fault::Protocol(e.to_string())
    }
}
