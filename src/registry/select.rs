//! Choosing an agent for a call: by name, or by skill or tag among the healthy agents
//! offering it, least in-flight first; capability checks; and the [`Lease`] that holds
//! the agent's concurrency permit and reports the call's outcome.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::time::Instant;

use tokio::sync::OwnedSemaphorePermit;

use super::{Agent, Health, Registry};
use a2a::client::A2aClient;

use super::oauth::{Subject, TokenSource};
use a2a::card::AgentCard;
use a2a::v0_3::media_type_matches;

/// Which agents may serve a call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Target<'a> {
    /// The agent of this name in `agents.toml`.
    Name(&'a str),
    /// Any agent whose card offers a skill with this id.
    Skill(&'a str),
    /// Any agent with this tag (in `agents.toml` or on one of its card's skills).
    Tag(&'a str),
}

impl std::fmt::Display for Target<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Target::Name(n) => write!(f, "agent `{n}`"),
            Target::Skill(s) => write!(f, "skill `{s}`"),
            Target::Tag(t) => write!(f, "tag `{t}`"),
        }
    }
}

/// What the call needs of the agent.
#[derive(Debug, Clone, Default)]
pub struct Requirements {
    /// The call will use `message/stream`.
    pub streaming: bool,
    /// Media types the call sends (e.g. `application/json` for a DataPart).
    pub input_modes: Vec<String>,
    /// Media types the caller accepts back (any of them will do).
    pub output_modes: Vec<String>,
    /// On whose behalf the call is made (an agent whose calls carry an exchanged token
    /// needs it); `None` when not known.
    pub on_behalf_of: Option<Subject>,
}

/// Why no agent could be chosen.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SelectError {
    #[error("no agent named `{0}` in agents.toml")]
    UnknownAgent(String),
    #[error("no agent in agents.toml offers {target}")]
    NoneOffers { target: String },
    #[error("no usable agent for {target}: {}", reasons.iter().map(|(n, r)| format!("{n} ({r})")).collect::<Vec<_>>().join("; "))]
    NoneUsable {
        target: String,
        /// Each candidate and why it was passed over.
        reasons: Vec<(String, String)>,
    },
    /// The agent wants a token, and none could be had.
    #[error("agent `{agent}` cannot be called without a token: {why}")]
    Credentials { agent: String, why: String },
}

/// A call to an agent in progress: holds one of its concurrency permits. Report the
/// outcome with [`Lease::success`] or [`Lease::failure`]; dropping it reports nothing.
pub struct Lease {
    guard: InFlight,
    client: A2aClient,
    /// The client before a token was added to it.
    base: A2aClient,
    card: Arc<AgentCard>,
    /// Where its calls' tokens come from, when they carry one; and on whose behalf.
    oauth: Option<Arc<TokenSource>>,
    subject: Option<Subject>,
    _permit: OwnedSemaphorePermit,
}

/// Counts a call (waiting or running) against its agent, and gives back an unreported
/// probe — also when the caller gives up while waiting for a permit.
struct InFlight {
    agent: Arc<Agent>,
    probe: bool,
    reported: bool,
}

impl Drop for InFlight {
    fn drop(&mut self) {
        self.agent.in_flight.fetch_sub(1, Ordering::Relaxed);
        if self.probe && !self.reported {
            self.agent.state().breaker.probe_abandoned();
        }
    }
}

impl std::fmt::Debug for Lease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Lease")
            .field("agent", &self.guard.agent.name)
            .finish_non_exhaustive()
    }
}

impl Lease {
    pub fn agent(&self) -> &str {
        self.guard.agent.name.as_str()
    }

    /// What the agent's work costs, when `agents.toml` says.
    pub fn price(&self) -> Option<super::config::Price> {
        self.guard.agent.entry.price
    }

    pub fn client(&self) -> &A2aClient {
        &self.client
    }

    /// A client carrying a token fetched anew, for a call the agent refused (HTTP 401)
    /// to be made once more; `None` when its calls carry no token (or no new one could
    /// be had: the call's own refusal stands).
    pub async fn renewed_client(&self) -> Option<A2aClient> {
        let oauth = self.oauth.as_ref()?;
        oauth.refused();
        let token = oauth
            .token(self.subject.as_ref(), Some(&self.card))
            .await
            .ok()?;
        Some(
            self.base
                .with_headers(&[("authorization".to_owned(), format!("Bearer {token}"))]),
        )
    }

    /// The agent refused the token its calls carried (true when they carry one): the
    /// next call fetches another.
    pub fn credentials_refused(&self) -> bool {
        if let Some(oauth) = &self.oauth {
            oauth.refused();
        }
        self.oauth.is_some()
    }

    pub fn card(&self) -> &AgentCard {
        &self.card
    }

    /// The call succeeded: the agent's circuit closes.
    pub fn success(mut self) {
        self.guard.reported = true;
        self.guard.agent.state().breaker.success();
    }

    /// The call failed in a way that counts against the agent (transport error, timeout,
    /// 5xx): enough of them in a row open its circuit.
    pub fn failure(mut self) {
        self.guard.reported = true;
        self.guard.agent.state().breaker.failure(Instant::now());
    }
}

/// Why `card` cannot serve `req` (for `skill`, that skill's modes count too).
fn incapable(card: &AgentCard, skill: Option<&str>, req: &Requirements) -> Option<String> {
    if req.streaming && !card.supports_streaming() {
        return Some("does not declare streaming".into());
    }
    let skill = skill.and_then(|s| card.skills.iter().find(|k| k.id == s));
    let inputs = skill
        .map(|s| &s.input_modes)
        .filter(|modes| !modes.is_empty())
        .unwrap_or(&card.default_input_modes);
    if let Some(m) = req
        .input_modes
        .iter()
        .find(|m| !inputs.iter().any(|i| media_type_matches(m, i)))
    {
        return Some(format!(
            "does not accept {m} (it accepts {})",
            inputs.join(", ")
        ));
    }
    let outputs = skill
        .map(|s| &s.output_modes)
        .filter(|modes| !modes.is_empty())
        .unwrap_or(&card.default_output_modes);
    if !req.output_modes.is_empty()
        && !req
            .output_modes
            .iter()
            .any(|w| outputs.iter().any(|o| media_type_matches(w, o)))
    {
        return Some(format!(
            "produces none of {} (it produces {})",
            req.output_modes.join(", "),
            outputs.join(", ")
        ));
    }
    None
}

impl Registry {
    /// Chooses an agent for `target` and takes one of its concurrency permits (waiting
    /// for one if the agent is at its limit). When none can be chosen and some agent
    /// has no card (down at its last probe), those cards are fetched again, once,
    /// before the choice fails: a step does not fail on an agent that has come back
    /// since.
    pub async fn acquire(
        &self,
        target: Target<'_>,
        req: &Requirements,
    ) -> Result<Lease, SelectError> {
        match self.choose(target, req).await {
            Err(SelectError::NoneOffers { .. } | SelectError::NoneUsable { .. })
                if self.refetch_cardless().await =>
            {
                self.choose(target, req).await
            }
            chosen => chosen,
        }
    }

    /// Fetches the card of every agent that has none again (concurrently, each bounded
    /// by the card timeout); whether any now has one.
    async fn refetch_cardless(&self) -> bool {
        let agents = self.inner.agents();
        let cardless: Vec<&Arc<Agent>> = agents
            .iter()
            .filter(|a| a.resolved.is_ok() && a.state().card.is_none())
            .collect();
        if cardless.is_empty() {
            return false;
        }
        futures::future::join_all(cardless.iter().map(|a| self.refresh(a))).await;
        cardless.iter().any(|a| a.state().card.is_some())
    }

    async fn choose(&self, target: Target<'_>, req: &Requirements) -> Result<Lease, SelectError> {
        let now = Instant::now();
        let agents = self.inner.agents();
        let candidates: Vec<&Arc<Agent>> = match target {
            Target::Name(n) => {
                let a = agents
                    .iter()
                    .find(|a| a.name.as_str() == n)
                    .ok_or_else(|| SelectError::UnknownAgent(n.to_owned()))?;
                vec![a]
            }
            Target::Skill(s) => agents
                .iter()
                .filter(|a| {
                    a.state()
                        .card
                        .as_ref()
                        .is_some_and(|c| c.skills.iter().any(|k| k.id == s))
                })
                .collect(),
            Target::Tag(t) => agents
                .iter()
                .filter(|a| {
                    a.tags.iter().any(|x| x == t)
                        || a.state()
                            .card
                            .as_ref()
                            .is_some_and(|c| c.skills.iter().any(|k| k.tags.iter().any(|x| x == t)))
                })
                .collect(),
        };
        if candidates.is_empty() {
            return Err(SelectError::NoneOffers {
                target: target.to_string(),
            });
        }
        let skill = match target {
            Target::Skill(s) => Some(s),
            _ => None,
        };
        let mut usable = Vec::new();
        let mut reasons = Vec::new();
        for a in candidates {
            let reason = match a.health(now) {
                Health::Unavailable(r) => Some(format!("unavailable: {r}")),
                _ => {
                    let st = a.state();
                    if !st.breaker.available(now) {
                        Some("its one probe call is under way".to_owned())
                    } else {
                        st.card.as_deref().and_then(|c| incapable(c, skill, req))
                    }
                }
            };
            match reason {
                Some(r) => reasons.push((a.name.to_string(), r)),
                None => usable.push(a),
            }
        }
        if usable.is_empty() {
            return Err(SelectError::NoneUsable {
                target: target.to_string(),
                reasons,
            });
        }
        // Least in flight; among equals, take turns so idle replicas share the load.
        let turn = self.inner.turn.fetch_add(1, Ordering::Relaxed);
        let n = usable.len();
        let chosen = (0..n)
            .map(|i| usable[(turn + i) % n])
            .min_by_key(|a| a.in_flight.load(Ordering::Relaxed))
            .expect("usable is not empty");
        let (client, card, probe) = {
            let mut st = chosen.state();
            let probe = st
                .breaker
                .admit(now)
                .ok_or_else(|| SelectError::NoneUsable {
                    target: target.to_string(),
                    reasons: vec![(
                        chosen.name.to_string(),
                        "its circuit just opened".to_owned(),
                    )],
                })?;
            match (&st.client, &st.card) {
                (Some(c), Some(card)) => (c.clone(), card.clone(), probe),
                _ => {
                    return Err(SelectError::NoneUsable {
                        target: target.to_string(),
                        reasons: vec![(chosen.name.to_string(), "lost its card".to_owned())],
                    });
                }
            }
        };
        chosen.in_flight.fetch_add(1, Ordering::Relaxed);
        let guard = InFlight {
            agent: Arc::clone(chosen),
            probe,
            reported: false,
        };
        // The semaphore is never closed, so this waits for a permit and does not fail.
        let permit = guard
            .agent
            .permits
            .clone()
            .acquire_owned()
            .await
            .map_err(|_| SelectError::NoneUsable {
                target: target.to_string(),
                reasons: vec![(guard.agent.name.to_string(), "shutting down".to_owned())],
            })?;
        // An agent whose calls carry a token: one that is good now.
        let oauth = guard
            .agent
            .resolved
            .as_ref()
            .ok()
            .and_then(|r| r.oauth.clone());
        let base = client.clone();
        let client = match &oauth {
            None => client,
            Some(oauth) => match oauth.token(req.on_behalf_of.as_ref(), Some(&card)).await {
                Ok(token) => {
                    client.with_headers(&[("authorization".to_owned(), format!("Bearer {token}"))])
                }
                Err(why) => {
                    return Err(SelectError::Credentials {
                        agent: guard.agent.name.to_string(),
                        why,
                    });
                }
            },
        };
        Ok(Lease {
            guard,
            client,
            base,
            card,
            oauth,
            subject: req.on_behalf_of.clone(),
            _permit: permit,
        })
    }
}
