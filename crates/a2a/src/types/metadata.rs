//! Free-form metadata attached to most A2A objects, shared rather than copied: an event
//! and the task it moves on, a task and the answer that carries it, hold one map, and
//! a change copies it first (copy on write). A run's whole detail rides in one.

use std::ops::{Deref, DerefMut};
use std::sync::Arc;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};

/// A JSON object, cheap to clone.
#[derive(Clone, Default, PartialEq)]
pub struct Metadata(Arc<Map<String, Value>>);

impl Metadata {
    /// The map itself, copied only when it is shared.
    pub fn into_map(self) -> Map<String, Value> {
        Arc::unwrap_or_clone(self.0)
    }

    /// Whether `self` and `other` are one map (not merely equal).
    pub fn shares(&self, other: &Metadata) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Deref for Metadata {
    type Target = Map<String, Value>;
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

impl DerefMut for Metadata {
    fn deref_mut(&mut self) -> &mut Self::Target {
        Arc::make_mut(&mut self.0)
    }
}

impl std::fmt::Debug for Metadata {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.fmt(f)
    }
}

impl From<Map<String, Value>> for Metadata {
    fn from(map: Map<String, Value>) -> Self {
        Self(Arc::new(map))
    }
}

impl From<Metadata> for Value {
    fn from(m: Metadata) -> Self {
        Value::Object(m.into_map())
    }
}

impl<'a> IntoIterator for &'a Metadata {
    type Item = (&'a String, &'a Value);
    type IntoIter = serde_json::map::Iter<'a>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.iter()
    }
}

impl IntoIterator for Metadata {
    type Item = (String, Value);
    type IntoIter = serde_json::map::IntoIter;
    fn into_iter(self) -> Self::IntoIter {
        self.into_map().into_iter()
    }
}

impl Serialize for Metadata {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> Deserialize<'de> for Metadata {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Map::deserialize(d).map(Self::from)
    }
}
