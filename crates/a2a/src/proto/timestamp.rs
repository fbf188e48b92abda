//! `google.protobuf.Timestamp` with its ProtoJSON form as the spec of that mapping has
//! it: an RFC 3339 string, written Z-normalized with 0, 3, 6 or 9 fractional digits,
//! read with any offset. (pbjson-types' own writes `+00:00`, which every reader takes
//! but which is not what ProtoJSON writers produce — and it would reach our JSON
//! bindings through the tasks of gRPC agents.)

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

/// Seconds and nanoseconds since the Unix epoch, as the proto declares them.
#[derive(Clone, Copy, PartialEq, Eq, Hash, prost::Message)]
pub struct Timestamp {
    /// Whole seconds since 1970-01-01T00:00:00Z.
    #[prost(int64, tag = "1")]
    pub seconds: i64,
    /// The fraction of a second, in nanoseconds: 0 to 999,999,999.
    #[prost(int32, tag = "2")]
    pub nanos: i32,
}

/// ProtoJSON's range: 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z.
const MIN_SECONDS: i64 = -62_135_596_800;
const MAX_SECONDS: i64 = 253_402_300_799;

impl Timestamp {
    fn to_datetime(self) -> Result<OffsetDateTime, String> {
        if !(MIN_SECONDS..=MAX_SECONDS).contains(&self.seconds)
            || !(0..1_000_000_000).contains(&self.nanos)
        {
            return Err(format!(
                "a timestamp out of range ({} s, {} ns)",
                self.seconds, self.nanos
            ));
        }
        let nanos = i128::from(self.seconds) * 1_000_000_000 + i128::from(self.nanos);
        OffsetDateTime::from_unix_timestamp_nanos(nanos).map_err(|e| e.to_string())
    }
}

impl Timestamp {
    /// An RFC 3339 time (any offset) as a timestamp, or why it is none.
    pub fn parse(text: &str) -> Result<Timestamp, String> {
        let t = OffsetDateTime::parse(text, &Rfc3339)
            .map_err(|e| format!("{text:?} is no RFC 3339 time: {e}"))?;
        let nanos = t.unix_timestamp_nanos();
        let stamp = Timestamp {
            seconds: nanos.div_euclid(1_000_000_000) as i64,
            nanos: nanos.rem_euclid(1_000_000_000) as i32,
        };
        stamp.to_datetime()?;
        Ok(stamp)
    }

    /// As ProtoJSON writes it: RFC 3339, Z-normalized, 0, 3, 6 or 9 fractional digits.
    pub fn to_rfc3339(self) -> Result<String, String> {
        let t = self.to_datetime()?;
        let fraction = match self.nanos {
            0 => String::new(),
            n if n % 1_000_000 == 0 => format!(".{:03}", n / 1_000_000),
            n if n % 1_000 == 0 => format!(".{:06}", n / 1_000),
            n => format!(".{n:09}"),
        };
        Ok(format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}{fraction}Z",
            t.year(),
            u8::from(t.month()),
            t.day(),
            t.hour(),
            t.minute(),
            t.second()
        ))
    }
}

impl Serialize for Timestamp {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let text = self.to_rfc3339().map_err(serde::ser::Error::custom)?;
        serializer.serialize_str(&text)
    }
}

impl<'de> Deserialize<'de> for Timestamp {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(deserializer)?;
        Timestamp::parse(&text).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn written(seconds: i64, nanos: i32) -> String {
        serde_json::to_string(&Timestamp { seconds, nanos }).unwrap()
    }

    #[test]
    fn written_z_normalized_with_0_3_6_or_9_digits() {
        assert_eq!(written(0, 0), "\"1970-01-01T00:00:00Z\"");
        assert_eq!(
            written(1_795_000_000, 250_000_000),
            "\"2026-11-18T11:06:40.250Z\""
        );
        assert_eq!(
            written(1_795_000_000, 250_500_000),
            "\"2026-11-18T11:06:40.250500Z\""
        );
        assert_eq!(
            written(1_795_000_000, 1),
            "\"2026-11-18T11:06:40.000000001Z\""
        );
        assert_eq!(written(-1, 0), "\"1969-12-31T23:59:59Z\"");
        assert!(
            serde_json::to_string(&Timestamp {
                seconds: i64::MAX,
                nanos: 0
            })
            .is_err()
        );
        assert!(
            serde_json::to_string(&Timestamp {
                seconds: 0,
                nanos: -1
            })
            .is_err()
        );
    }

    #[test]
    fn read_with_any_offset() {
        let read = |s: &str| serde_json::from_str::<Timestamp>(&format!("\"{s}\""));
        let t = read("2026-11-18T12:06:40.25+01:00").unwrap();
        assert_eq!((t.seconds, t.nanos), (1_795_000_000, 250_000_000));
        assert_eq!(read("1969-12-31T23:59:59.5Z").unwrap().nanos, 500_000_000);
        assert_eq!(read("1969-12-31T23:59:59.5Z").unwrap().seconds, -1);
        assert!(read("yesterday").is_err());
        assert!(read("10000-01-01T00:00:00Z").is_err());
    }
}
