//! The connections each caller holds open with streams. A streaming request (a
//! streamed message, a subscription, on any binding) holds its connection until its
//! task ends: over HTTP/1.1 the whole connection, over HTTP/2 one of its streams.
//! Without a bound one caller, waiting on one task, could open streaming connections
//! until the server's connections were all its own and no one else could connect.
//!
//! A caller is its principal when the server knows who calls, else the address it
//! calls from. Past [`ServerConfig::max_streaming_connections_per_caller`] connections
//! holding its streams, a stream on yet another connection is refused with `-32042`
//! (HTTP 429, gRPC `RESOURCE_EXHAUSTED`), saying so; more streams on a connection it
//! already streams on are not (HTTP/2 bounds those per connection), and other callers
//! are not affected. An orchestrator multiplexing hundreds of calls over one HTTP/2
//! connection is one connection.
//!
//! [`ServerConfig::max_streaming_connections_per_caller`]: super::ServerConfig

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use super::auth::Caller;
use crate::RpcError;

/// Who a stream is counted against.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Holder {
    Principal(String),
    Address(IpAddr),
    /// A server mounted without our accept loop knows neither.
    Unknown,
}

impl Holder {
    fn of(caller: &Caller) -> Holder {
        match (caller.id(), caller.peer()) {
            (Some(id), _) => Holder::Principal(id.to_owned()),
            (None, Some(ip)) => Holder::Address(ip),
            (None, None) => Holder::Unknown,
        }
    }
}

/// Per caller, its connections with streams open, and how many on each.
#[derive(Debug, Default)]
pub(crate) struct OpenStreams {
    held: Mutex<HashMap<Holder, HashMap<u64, usize>>>,
}

impl OpenStreams {
    /// One more stream for `caller` on its connection, held until the slot is dropped;
    /// refused when it would be on one connection more than `max`.
    pub(crate) fn open(
        self: &Arc<Self>,
        caller: &Caller,
        max: usize,
    ) -> Result<StreamSlot, RpcError> {
        let holder = Holder::of(caller);
        let connection = caller.connection().unwrap_or(0);
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        let connections = held.entry(holder.clone()).or_default();
        if !connections.contains_key(&connection) && connections.len() >= max {
            return Err(RpcError::resource_exhausted(format!(
                "this caller holds {} connections open with streams, the most one caller may (max_streaming_connections_per_caller); close one, stream on a connection it already holds (HTTP/2), or wait for a task to end",
                connections.len()
            )));
        }
        *connections.entry(connection).or_default() += 1;
        Ok(StreamSlot {
            streams: self.clone(),
            holder,
            connection,
        })
    }

    #[cfg(test)]
    fn held(&self) -> usize {
        self.held.lock().unwrap().values().map(HashMap::len).sum()
    }
}

/// One open stream of a caller's; dropping it closes it.
#[derive(Debug)]
pub(crate) struct StreamSlot {
    streams: Arc<OpenStreams>,
    holder: Holder,
    connection: u64,
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut held = self.streams.held.lock().unwrap_or_else(|p| p.into_inner());
        let Some(connections) = held.get_mut(&self.holder) else {
            return;
        };
        if let Some(n) = connections.get_mut(&self.connection) {
            *n -= 1;
            if *n == 0 {
                connections.remove(&self.connection);
            }
        }
        if connections.is_empty() {
            held.remove(&self.holder);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::server::auth::Principal;

    #[test]
    fn each_caller_holds_its_own_connections_up_to_the_bound() {
        let streams = Arc::new(OpenStreams::default());
        let on = |name: &str, conn: u64| {
            Caller::known(Arc::new(Principal::new(
                None,
                format!("token:{name}"),
                name,
            )))
            .with_peer(Some(IpAddr::from([127, 0, 0, 1])), conn)
        };
        let a1 = streams.open(&on("alice", 1), 2).unwrap();
        let _a2 = streams.open(&on("alice", 2), 2).unwrap();
        let refused = streams.open(&on("alice", 3), 2).unwrap_err();
        assert_eq!(refused.code, crate::ErrorCode::RESOURCE_EXHAUSTED);
        assert!(
            refused.message.contains("2 connections"),
            "{}",
            refused.message
        );
        let _many: Vec<_> = (0..100)
            .map(|_| {
                streams
                    .open(&on("alice", 2), 2)
                    .expect("on a connection it holds")
            })
            .collect();
        let _b = streams
            .open(&on("bob", 3), 2)
            .expect("another caller is not affected");
        drop(a1);
        let _a3 = streams
            .open(&on("alice", 3), 2)
            .expect("a closed stream frees its place");
        let from =
            |ip: [u8; 4], conn: u64| Caller::anonymous().with_peer(Some(IpAddr::from(ip)), conn);
        let _x = streams.open(&from([10, 0, 0, 1], 7), 1).unwrap();
        assert!(streams.open(&from([10, 0, 0, 1], 8), 1).is_err());
        assert!(streams.open(&from([10, 0, 0, 2], 9), 1).is_ok());
        // alice on 2 and 3, bob on 3, 10.0.0.1 on 7; the slot on 9 is dropped.
        assert_eq!(streams.held(), 4);
    }
}
