//! Delivers push notifications: POSTs a task's snapshot to each of its webhooks when its
//! state changes (spec §9.5).
//!
//! Each live task gets one delivery worker fed through a bounded queue, so notifications
//! of one task arrive in order and a slow webhook never blocks the task: when the queue
//! is full, the task drops the notification and logs it rather than wait.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_util::task::TaskTracker;
use tracing::{Instrument, debug, info_span, warn};

use crate::store::{PushBody, StoredPushConfig, TaskStore};
use crate::types::{StreamEvent, StreamResponse, Task, TaskId};
use backoff::{Backoff, Jitter};

/// Why a webhook URL is refused, if it is: not http(s), no host, or a host that is or
/// resolves to a loopback, private, link-local (cloud metadata included), shared or
/// unspecified address — unless `allow_private`. A host that does not resolve now is
/// taken: its addresses are checked again when each notification connects (the
/// delivery client's resolver refuses private ones), which is what protects, and a
/// webhook's DNS may well come up after it is configured.
pub async fn check_webhook(url: &str, allow_private: bool) -> Result<(), String> {
    let u = reqwest::Url::parse(url).map_err(|e| format!("not a URL: {e}"))?;
    if !matches!(u.scheme(), "http" | "https") {
        return Err(format!(
            "webhook URL must be http or https, got scheme {:?}",
            u.scheme()
        ));
    }
    let host = u
        .host_str()
        .ok_or("webhook URL has no host")?
        .trim_matches(['[', ']'])
        .to_owned();
    if allow_private {
        return Ok(());
    }
    // As a resolver reads it: case and a trailing dot (the root) make no other host.
    let name = host.trim_end_matches('.').to_ascii_lowercase();
    if INTERNAL_NAMES.contains(&name.as_str())
        || name.ends_with(".localhost")
        || name.ends_with(".internal")
    {
        return Err(format!(
            "webhook host {host} is internal; refused (the server does not allow private webhooks)"
        ));
    }
    let port = u.port_or_known_default().unwrap_or(80);
    let addrs: Vec<std::net::IpAddr> = match name.parse::<std::net::IpAddr>() {
        Ok(ip) => vec![ip],
        Err(_) => match tokio::net::lookup_host((name.as_str(), port)).await {
            Ok(found) => found.map(|a| a.ip()).collect(),
            Err(_) => return Ok(()),
        },
    };
    match addrs.iter().find(|ip| is_private(ip)) {
        Some(ip) => Err(format!(
            "webhook host {host} is a private address ({ip}); refused (the server does not allow private webhooks)"
        )),
        None => Ok(()),
    }
}

/// Names that reach the machine itself or its cloud's metadata service.
const INTERNAL_NAMES: &[&str] = &[
    "localhost",
    "metadata",
    "metadata.google.internal",
    "metadata.goog",
    "instance-data",
];

/// Whether an address is anything but a public unicast one: loopback, private, shared
/// (CGNAT), link-local (cloud metadata), unspecified, broadcast, multicast, reserved,
/// benchmarking, and the IPv6 forms that carry an IPv4 address (mapped,
/// compatible, NAT64, 6to4) judged by that address; site-local, unique-local, Teredo
/// and discard-only IPv6 ranges too.
fn is_private(ip: &std::net::IpAddr) -> bool {
    use std::net::{IpAddr, Ipv4Addr};
    match ip {
        IpAddr::V4(v4) => {
            let o = v4.octets();
            v4.is_loopback()
                || v4.is_private()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_multicast()
                || o[0] == 0
                // Shared address space (RFC 6598).
                || (o[0] == 100 && (64..128).contains(&o[1]))
                // IETF protocol assignments (RFC 6890).
                || (o[0] == 192 && o[1] == 0 && o[2] == 0)
                // Benchmarking (RFC 2544).
                || (o[0] == 198 && (18..20).contains(&o[1]))
                // Reserved (RFC 1112), 240.0.0.0/4.
                || o[0] >= 240
        }
        IpAddr::V6(v6) => {
            let seg = v6.segments();
            let embedded = |hi: u16, lo: u16| {
                is_private(&IpAddr::V4(Ipv4Addr::new(
                    (hi >> 8) as u8,
                    hi as u8,
                    (lo >> 8) as u8,
                    lo as u8,
                )))
            };
            v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                // Unique local fc00::/7, link-local fe80::/10, site-local fec0::/10.
                || (seg[0] & 0xfe00) == 0xfc00
                || (seg[0] & 0xffc0) == 0xfe80
                || (seg[0] & 0xffc0) == 0xfec0
                // Mapped ::ffff:a.b.c.d and compatible ::a.b.c.d.
                || v6.to_ipv4().is_some_and(|v4| is_private(&IpAddr::V4(v4)))
                // NAT64 64:ff9b::/96 (and the local-use 64:ff9b:1::/48, any).
                || (seg[..6] == [0x64, 0xff9b, 0, 0, 0, 0] && embedded(seg[6], seg[7]))
                || (seg[0] == 0x64 && seg[1] == 0xff9b && seg[2] == 1)
                // 6to4 2002::/16: the IPv4 address in its next 32 bits.
                || (seg[0] == 0x2002 && embedded(seg[1], seg[2]))
                // Teredo 2001::/32 (its IPv4 addresses hidden), discard-only 100::/64.
                || (seg[0] == 0x2001 && seg[1] == 0)
                || seg[..4] == [0x100, 0, 0, 0]
        }
    }
}

/// Resolves webhook hosts for the delivery client, refusing private addresses (unless
/// allowed) when the connection is made, not only when the URL was checked.
struct GuardedResolver {
    allow_private: bool,
}

impl reqwest::dns::Resolve for GuardedResolver {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        let allow_private = self.allow_private;
        Box::pin(async move {
            let host = name.as_str().to_owned();
            let found: Vec<std::net::SocketAddr> = tokio::net::lookup_host((host.as_str(), 0))
                .await?
                .filter(|a| allow_private || !is_private(&a.ip()))
                .collect();
            if found.is_empty() {
                let why =
                    format!("webhook host {host} resolves only to private addresses; refused");
                return Err(why.into());
            }
            Ok(Box::new(found.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// The header carrying a config's token back to the client.
pub const NOTIFICATION_TOKEN_HEADER: &str = "X-A2A-Notification-Token";

const QUEUE: usize = 32;
const ATTEMPTS: u32 = 3;
const FIRST_BACKOFF: Duration = Duration::from_millis(200);
const MAX_BACKOFF: Duration = Duration::from_secs(5);
/// How long an unused connection to a webhook stays open: less than its server keeps
/// it (Node's and uvicorn's close one after 5 s), as the A2A client's pool (the
/// `client` feature's `POOL_IDLE_TIMEOUT`, which a server-only build does not have).
const POOL_IDLE_TIMEOUT: Duration = Duration::from_secs(4);

/// Sends webhooks for a server.
#[derive(Clone)]
pub struct PushNotifier {
    http: reqwest::Client,
    store: Arc<dyn TaskStore>,
    allow_private: bool,
    /// The tasks given a push config through this server (or found with one at
    /// recovery): only their state changes start a delivery worker and read the
    /// store's configs. A std mutex, never held across an await.
    armed: Arc<Mutex<HashSet<TaskId>>>,
}

impl PushNotifier {
    /// Delivers the push notifications of the tasks in `store`, each call bounded by `timeout`; webhooks on private addresses refused unless `allow_private`.
    pub fn new(store: Arc<dyn TaskStore>, timeout: Duration, allow_private: bool) -> Self {
        let http = crate::https::reqwest_client_builder()
            .timeout(timeout)
            .user_agent(crate::https::USER_AGENT)
            // An idle connection is given up before the receiver closes it.
            .pool_idle_timeout(POOL_IDLE_TIMEOUT)
            // A redirect is not followed: the guard checked the configured URL only, and
            // the token must never reach another host.
            .redirect(reqwest::redirect::Policy::none())
            // The address is checked again when the connection is made: a name that
            // resolved to a public address at the check may resolve elsewhere now.
            .dns_resolver(Arc::new(GuardedResolver { allow_private }))
            .build()
            .expect("the webhook client's TLS backend could not be initialized");
        Self {
            http,
            store,
            allow_private,
            armed: Default::default(),
        }
    }

    /// Notes that `task` has a push config.
    pub(crate) fn arm(&self, task: &TaskId) {
        self.armed
            .lock()
            .expect("not poisoned")
            .insert(task.clone());
    }

    /// Whether `task` may have a push config.
    pub(crate) fn is_armed(&self, task: &TaskId) -> bool {
        self.armed.lock().expect("not poisoned").contains(task)
    }

    /// Forgets `task` (it is finished).
    pub(crate) fn disarm(&self, task: &TaskId) {
        self.armed.lock().expect("not poisoned").remove(task);
    }

    /// Starts a delivery worker for one task; it ends when the sender is dropped.
    pub(crate) fn worker(&self, tracker: &TaskTracker) -> mpsc::Sender<Task> {
        let (tx, mut rx) = mpsc::channel::<Task>(QUEUE);
        let this = self.clone();
        tracker.spawn(
            async move {
                while let Some(task) = rx.recv().await {
                    let configs = match this.store.push_configs(&TaskId::new(&task.id)).await {
                        Ok(c) => c,
                        Err(e) => {
                            warn!(error = %e, "cannot read push configs");
                            continue;
                        }
                    };
                    for config in &configs {
                        this.deliver(config, &task).await;
                    }
                }
            }
            .instrument(info_span!("push")),
        );
        tx
    }

    async fn deliver(&self, stored: &StoredPushConfig, task: &Task) {
        let config = &stored.config;
        // Checked again at delivery: a name may resolve elsewhere than when it was set.
        if let Err(why) = check_webhook(&config.url, self.allow_private).await {
            warn!(url = %crate::log::url(&config.url), why = %crate::log::untrusted(&why), "push notification not sent");
            return;
        }
        let mut waits = Backoff::exponential(FIRST_BACKOFF, MAX_BACKOFF)
            .with_jitter(Jitter::Up(0.2))
            .waits();
        // v1.0's body is a StreamResponse holding the task (§4.3.3), v0.3's the task.
        let (body, content_type) = match stored.body {
            PushBody::StreamResponse => (
                serde_json::to_vec(&StreamResponse::from(StreamEvent::Task(task.clone()))),
                "application/a2a+json",
            ),
            #[cfg(feature = "v0_3")]
            PushBody::Task => (
                serde_json::to_vec(&crate::v0_3::convert::task(task)),
                "application/json",
            ),
            // A config a 0.3 caller set on a server of a build with 0.3 (a store
            // shared with one): this build writes no 0.3, so it gets 1.0's body.
            #[cfg(not(feature = "v0_3"))]
            PushBody::Task => (
                serde_json::to_vec(&StreamResponse::from(StreamEvent::Task(task.clone()))),
                "application/a2a+json",
            ),
        };
        // Plain data always serializes.
        let body = bytes::Bytes::from(body.expect("a task always serializes to JSON"));
        for attempt in 1..=ATTEMPTS {
            let mut req = self
                .http
                .post(&config.url)
                .header(reqwest::header::CONTENT_TYPE, content_type)
                .body(body.clone());
            if !config.token.is_empty() {
                req = req.header(NOTIFICATION_TOKEN_HEADER, &config.token);
            }
            if let Some(auth) = &config.authentication
                && !auth.credentials.is_empty()
                && !auth.scheme.is_empty()
            {
                let (scheme, credentials) = (&auth.scheme, &auth.credentials);
                req = req.header(
                    reqwest::header::AUTHORIZATION,
                    format!("{scheme} {credentials}"),
                );
            }
            match req.send().await {
                Ok(resp) if resp.status().is_success() => {
                    debug!(url = %crate::log::url(&config.url), state = %task.state(), "push notification delivered");
                    return;
                }
                Ok(resp) => {
                    warn!(url = %crate::log::url(&config.url), status = %resp.status(), attempt, "webhook refused the notification")
                }
                Err(e) => {
                    // The error's own URL would carry the credentials: left out.
                    let e = e.without_url();
                    warn!(url = %crate::log::url(&config.url), error = %e, attempt, "webhook unreachable")
                }
            }
            if attempt < ATTEMPTS
                && let Some(wait) = waits.next()
            {
                tokio::time::sleep(wait).await;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 81: every spelling of an internal or non-public address is refused, the
    /// name read as a resolver reads it and each IPv4 address however IPv6 carries it.
    #[tokio::test]
    async fn webhooks_to_internal_or_reserved_addresses_are_refused_however_spelled() {
        for url in [
            "http://LOCALHOST./hook",
            "http://api.localhost/hook",
            "http://metadata.google.internal./computeMetadata/v1/",
            "http://Metadata/hook",
            "http://127.0.0.1/hook",
            "http://2130706433/hook",
            "http://0x7f.1/hook",
            "http://[::1]/hook",
            "http://[::127.0.0.1]/hook",
            "http://[::ffff:10.0.0.1]/hook",
            "http://[64:ff9b::7f00:1]/hook",
            "http://[64:ff9b:1::1]/hook",
            "http://[2002:7f00:1::]/hook",
            "http://[2002:a9fe:a9fe::1]/hook",
            "http://[fec0::1]/hook",
            "http://[fd00::1]/hook",
            "http://[fe80::1]/hook",
            "http://[ff02::1]/hook",
            "http://[2001::1]/hook",
            "http://169.254.169.254/latest/meta-data/",
            "http://100.64.0.1/hook",
            "http://198.18.0.1/hook",
            "http://198.19.255.255/hook",
            "http://240.0.0.1/hook",
            "http://255.255.255.255/hook",
            "http://224.0.0.1/hook",
            "http://192.0.0.8/hook",
            "http://0.0.0.0/hook",
        ] {
            let refused = check_webhook(url, false).await;
            assert!(refused.is_err(), "{url} was taken");
            assert!(
                check_webhook(url, true).await.is_ok(),
                "{url}, private allowed"
            );
        }
        for url in [
            "https://93.184.215.14/hook",
            "https://[2606:2800:21f:cb07:6820:80da:af6b:8b2c]/hook",
            "https://[2002:5db8:d70e::1]/hook",
            "https://[64:ff9b::5db8:d70e]/hook",
        ] {
            assert_eq!(check_webhook(url, false).await, Ok(()), "{url}");
        }
    }
}
