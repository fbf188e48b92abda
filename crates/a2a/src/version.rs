//! The protocol's generations, one type for the client and the server alike: the
//! [`Version`] a request, an interface or a card speaks, and the [`Versions`] a server
//! serves.

use crate::error::RpcError;

/// A generation of the protocol this crate speaks, `Major.Minor` on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Version {
    /// A2A 0.3.
    V0_3,
    /// A2A 1.0.
    V1_0,
}

impl Version {
    /// Every version spoken, newest first.
    pub const ALL: [Version; 2] = [Version::V1_0, Version::V0_3];

    /// `Major.Minor`, as `A2A-Version` and a card's `protocolVersion` write it.
    pub const fn as_str(self) -> &'static str {
        match self {
            Version::V0_3 => "0.3",
            Version::V1_0 => "1.0",
        }
    }

    /// The version `Major.Minor` names (any patch number ignored: `1.0.1` is 1.0).
    pub fn parse(s: &str) -> Option<Version> {
        let mut parts = s.trim().splitn(3, '.');
        let major_minor = match (parts.next(), parts.next()) {
            (Some(major), Some(minor)) => (major, minor),
            _ => return None,
        };
        Version::ALL
            .into_iter()
            .find(|v| v.as_str().split_once('.') == Some(major_minor))
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The versions spoken, for error messages.
pub const SUPPORTED: [&str; 2] = [Version::V1_0.as_str(), Version::V0_3.as_str()];

/// Which versions a server serves: both by default; one of them to stand in for an
/// agent of that generation (the example agents' `--protocol`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Versions {
    /// A2A 1.0 and 0.3.
    #[default]
    Both,
    /// A2A 1.0 only (JSON-RPC and HTTP+JSON): a v1.0 card, v0.3 requests refused.
    V1_0,
    /// A2A 0.3 only (JSON-RPC): a v0.3 card, v1.0 requests refused.
    V0_3,
}

impl Versions {
    /// `both`, `1.0` or `0.3`.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "both" => Some(Self::Both),
            "1.0" => Some(Self::V1_0),
            "0.3" => Some(Self::V0_3),
            _ => None,
        }
    }

    /// `both`, `1.0` or `0.3`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Both => "both",
            Self::V1_0 => Version::V1_0.as_str(),
            Self::V0_3 => Version::V0_3.as_str(),
        }
    }

    /// What a server of this build serves when asked for these: without the `v0_3`
    /// feature, A2A 1.0 alone whatever was asked (it has no 0.3 to serve).
    pub fn built(self) -> Versions {
        match cfg!(feature = "v0_3") {
            true => self,
            false => Self::V1_0,
        }
    }

    /// Whether `v` is served.
    pub fn serves(self, v: Version) -> bool {
        match self {
            Self::Both => true,
            Self::V1_0 => v == Version::V1_0,
            Self::V0_3 => v == Version::V0_3,
        }
    }

    /// The versions served, for error messages.
    pub fn supported(self) -> &'static [&'static str] {
        const V1_0: [&str; 1] = [Version::V1_0.as_str()];
        const V0_3: [&str; 1] = [Version::V0_3.as_str()];
        match self {
            Self::Both => &SUPPORTED,
            Self::V1_0 => &V1_0,
            Self::V0_3 => &V0_3,
        }
    }

    /// VersionNotSupported (-32009) when `v` is not served.
    pub fn check(self, v: Version) -> Result<(), RpcError> {
        if self.serves(v) {
            return Ok(());
        }
        Err(RpcError::version_not_supported(
            v.as_str(),
            self.supported(),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::Version;

    #[test]
    fn versions_parse_major_minor() {
        assert_eq!(Version::parse("1.0"), Some(Version::V1_0));
        assert_eq!(Version::parse("1.0.2"), Some(Version::V1_0));
        assert_eq!(Version::parse("0.3"), Some(Version::V0_3));
        assert_eq!(Version::parse("0.3.0"), Some(Version::V0_3));
        assert_eq!(Version::parse("2.0"), None);
        assert_eq!(Version::parse("1"), None);
    }
}
