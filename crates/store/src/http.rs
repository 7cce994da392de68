//! The Bazel HTTP cache protocol (spec/backends.md, "A remote code cache"): `GET`, `PUT` and
//! `HEAD` of `BASE/ac/KEY` (records, overwritten) and `BASE/cas/HASH` (blobs named by the
//! SHA-256 of their bytes), as bazel-remote, BuildBuddy, nginx with WebDAV and object stores
//! behind a gateway serve them. `404` is a miss; any other answer but success is a
//! [`Fault`]; a body is read up to the caller's bound, never further.

use std::time::Duration;

use crate::{Fault, Kind, StoreError};

/// An HTTP store: the base URL (without a trailing slash) and a connection-keeping client.
#[derive(Debug)]
pub(crate) struct Http {
    base: String,
    agent: ureq::Agent,
}

impl Http {
    /// The store at `url` (`http://HOST[:PORT][/PREFIX]` or `https://...`), keeping up to
    /// `parallel` connections open.
    pub(crate) fn new(url: &str, parallel: usize) -> Result<Http, StoreError> {
        let base = url.trim_end_matches('/').to_string();
        let invalid = |detail: String| StoreError::Url {
            url: url.to_string(),
            detail,
        };
        let host = url
            .split_once("://")
            .map_or("", |(_, rest)| rest.split('/').next().unwrap_or_default());
        if host.is_empty() {
            return Err(invalid("no host".into()));
        }
        let _: ureq::http::Uri = base.parse().map_err(|e| invalid(format!("{e}")))?;
        let agent: ureq::Agent = ureq::Agent::config_builder()
            .http_status_as_error(false)
            .max_redirects(0)
            .max_idle_connections_per_host(parallel.max(1))
            .max_idle_connections(parallel.max(1))
            .build()
            .into();
        Ok(Http { base, agent })
    }

    fn url(&self, kind: Kind, key: &str) -> String {
        format!("{}/{}/{key}", self.base, kind.dir())
    }

    /// The body of `kind`/`key` (`None`: not found), at most `limit` bytes, within `timeout`.
    pub(crate) fn get(
        &self,
        kind: Kind,
        key: &str,
        limit: u64,
        timeout: Duration,
    ) -> Result<Option<Vec<u8>>, Fault> {
        let mut resp = self
            .agent
            .get(&self.url(kind, key))
            .config()
            .timeout_global(Some(timeout))
            .build()
            .call()
            .map_err(fault)?;
        match resp.status().as_u16() {
            200 => {}
            404 => return Ok(None),
            s => return Err(Fault::Status(format!("{s} to GET /{}/", kind.dir()))),
        }
        let declared = resp.body().content_length();
        if declared.is_some_and(|n| n > limit) {
            return Err(Fault::Oversized(limit));
        }
        let body = resp
            .body_mut()
            .with_config()
            .limit(limit)
            .read_to_vec()
            .map_err(|e| match e {
                ureq::Error::BodyExceedsLimit(_) => Fault::Oversized(limit),
                e => fault(e),
            })?;
        if declared.is_some_and(|n| n != body.len() as u64) {
            return Err(Fault::Protocol("a body shorter than declared".into()));
        }
        Ok(Some(body))
    }

    /// Stores `body` as `kind`/`key` within `timeout`.
    pub(crate) fn put(
        &self,
        kind: Kind,
        key: &str,
        body: &[u8],
        timeout: Duration,
    ) -> Result<(), Fault> {
        let resp = self
            .agent
            .put(&self.url(kind, key))
            .config()
            .timeout_global(Some(timeout))
            .build()
            .send(body)
            .map_err(fault)?;
        match resp.status().as_u16() {
            200..=299 => Ok(()),
            s => Err(Fault::Status(format!("{s} to PUT /{}/", kind.dir()))),
        }
    }

    /// Whether the store holds `kind`/`key`, within `timeout`.
    pub(crate) fn head(&self, kind: Kind, key: &str, timeout: Duration) -> Result<bool, Fault> {
        let resp = self
            .agent
            .head(&self.url(kind, key))
            .config()
            .timeout_global(Some(timeout))
            .build()
            .call()
            .map_err(fault)?;
        match resp.status().as_u16() {
            200..=299 => Ok(true),
            404 => Ok(false),
            s => Err(Fault::Status(format!("{s} to HEAD /{}/", kind.dir()))),
        }
    }
}

/// The fault of a client error: the connection's (refused, reset, closed, a timeout, a TLS
/// failure) make the store unreachable; the rest break the protocol.
fn fault(e: ureq::Error) -> Fault {
    match e {
        ureq::Error::Io(_)
        | ureq::Error::Timeout(_)
        | ureq::Error::ConnectionFailed
        | ureq::Error::HostNotFound
        | ureq::Error::Tls(_) => Fault::Unreachable(e.to_string()),
        ureq::Error::BodyExceedsLimit(n) => Fault::Oversized(n),
        e => Fault::Protocol(e.to_string()),
    }
}
