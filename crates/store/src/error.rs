//! What can go wrong with a remote store: a cache URL that names no store this crate speaks
//! ([`StoreError`], refused when the store is opened), and a request that did not get what it
//! asked for ([`Fault`], which never fails a build: the caller compiles what it could not
//! fetch).

/// A remote store that cannot be opened.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum StoreError {
    /// The URL's scheme is none of `http://`, `https://` and `redis://`.
    #[error(
        "{0}: not a remote cache URL (http://HOST/PREFIX, https://HOST/PREFIX or redis://HOST)"
    )]
    Scheme(String),
    /// The client refused the URL.
    #[error("{url}: {detail}")]
    Url {
        /// The URL as given.
        url: String,
        /// What the client said.
        detail: String,
    },
}

/// Why one request to a remote store did not get what it asked for.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Fault {
    /// The store could not be reached or did not answer in time (refused, reset or closed
    /// connection, timeout): the store is taken to be down for the rest of the build.
    #[error("unreachable: {0}")]
    Unreachable(String),
    /// An answer that is neither success nor "not found" (a 500, a 507 of a full store...).
    #[error("answered {0}")]
    Status(String),
    /// A body longer than the caller's bound (it is not read further).
    #[error("a body over {0} bytes")]
    Oversized(u64),
    /// An answer that does not follow the protocol (a short body, a malformed reply).
    #[error("{0}")]
    Protocol(String),
}

impl Fault {
    /// Whether the fault means the store is unusable (no further request is made).
    pub fn is_down(&self) -> bool {
        matches!(self, Fault::Unreachable(_))
    }
}
