//! What can go wrong when calling an agent, kept apart by what the caller does about it.

use std::time::Duration;

use super::send::BoxError;
use crate::error::RpcError;

/// A failed client call.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ClientError {
    /// The agent could not be reached, or the connection broke.
    #[error("cannot reach {url}: {detail}")]
    Transport {
        /// The URL called.
        url: String,
        /// What failed.
        detail: String,
    },
    /// The agent did not answer in time.
    #[error("{url} did not answer within {timeout:?}")]
    Timeout {
        /// The URL called.
        url: String,
        /// How long the client waited.
        timeout: Duration,
    },
    /// The agent answered with an HTTP error status.
    #[error("{url} answered HTTP {status}: {body}")]
    HttpStatus {
        /// The URL called (or where same-origin redirects led).
        url: String,
        /// The status.
        status: u16,
        /// The start of the body.
        body: String,
    },
    /// The agent answered with a redirect, which this client does not follow (or one
    /// to another origin, when it follows only same-origin ones): credentials and
    /// headers meant for one server never reach another.
    #[error(
        "{url} answered HTTP {status} redirecting to {location}, which is not followed (a client follows at most redirects to the same origin, and only when built to)"
    )]
    Redirect {
        /// The URL that was requested (the last one, when same-origin ones are followed).
        url: String,
        /// The redirect's status (301, 302, 303, 307, 308).
        status: u16,
        /// Where the answer pointed (`Location`), as sent.
        location: String,
    },
    /// The agent answered with an A2A error (a JSON-RPC error object, a gRPC status or
    /// an HTTP+JSON error body).
    #[error("the agent answered with {0}")]
    Rpc(RpcError),
    /// The agent's answer breaks the protocol.
    #[error("protocol violation by {url}: {detail}")]
    Protocol {
        /// The URL called.
        url: String,
        /// What is wrong with the answer.
        detail: String,
    },
    /// The card offers no interface this client speaks (or none the caller asked for).
    #[error(
        "the agent offers no interface with {wanted}; it offers: {}",
        offered.join(", ")
    )]
    UnsupportedTransport {
        /// What was looked for.
        wanted: String,
        /// Each interface on the card.
        offered: Vec<String>,
    },
    /// A URL given to the client is not valid.
    #[error("invalid URL {url:?}: {detail}")]
    InvalidUrl {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        detail: String,
    },
    /// The client's configuration is not usable (a header that cannot be sent, ...).
    #[error("invalid client configuration: {0}")]
    Config(String),
}

impl ClientError {
    /// A request that could not be sent, or whose answer did not come.
    pub(crate) fn transport(url: &str, e: BoxError) -> Self {
        let kind = if let Some(e) = e.downcast_ref::<reqwest::Error>() {
            if e.is_timeout() {
                "timed out"
            } else if e.is_connect() {
                "connection failed"
            } else if e.is_body() || e.is_decode() {
                "the response broke off"
            } else {
                "request failed"
            }
        } else if e.is::<super::multiplex::OpenFailed>() {
            "connection failed"
        } else {
            "request failed"
        };
        Self::failed(url, kind, &*e)
    }

    /// An answer whose body broke off.
    pub(crate) fn broke_off(url: &str, e: BoxError) -> Self {
        Self::failed(url, "the response broke off", &*e)
    }

    /// `kind` of failure and its root cause: the HTTP clients wrap the cause in layers
    /// ("error sending request for url (...): client error (Connect): ...").
    fn failed(url: &str, kind: &str, e: &(dyn std::error::Error + 'static)) -> Self {
        let mut root = e;
        while let Some(s) = root.source() {
            root = s;
        }
        ClientError::Transport {
            url: url.to_owned(),
            detail: format!("{kind}: {root}"),
        }
    }

    pub(crate) fn protocol(url: &str, detail: impl Into<String>) -> Self {
        ClientError::Protocol {
            url: url.to_owned(),
            detail: detail.into(),
        }
    }

    /// The JSON-RPC error, if the agent answered with one.
    pub fn rpc(&self) -> Option<&RpcError> {
        match self {
            ClientError::Rpc(e) => Some(e),
            _ => None,
        }
    }
}
