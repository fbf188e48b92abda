//! `google.protobuf.Struct`, `Value` and `Empty` as the JSON they stand for: a
//! `serde_json` object or value in memory, written as ProtoJSON writes them (the JSON
//! itself) and encoded as the proto's messages for gRPC. Metadata and `data` parts are
//! JSON on every other binding and in the whole of this crate: kept as JSON here, they
//! cross a binding without being rebuilt as a tree of another library's values.

use bytes::{Buf, BufMut};
use prost::DecodeError;
use prost::encoding::{
    DecodeContext, WireType, check_wire_type, decode_varint, double, encode_key, encode_varint,
    encoded_len_varint, key_len, message, skip_field, string,
};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Number, Value};

use crate::types::Metadata;

/// `google.protobuf.Value`: any JSON value (`null` by default).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct JsonValue(pub Value);

/// `google.protobuf.Empty`: `{}`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Empty;

/// `google.protobuf.ListValue`, inside a [`JsonValue`].
#[derive(Debug, Default)]
struct ListValue(Vec<Value>);

/// One entry of a Struct's `map<string, Value> fields = 1`.
#[derive(Debug, Default)]
struct Entry {
    key: String,
    value: JsonValue,
}

// ---- lengths ----------------------------------------------------------------------

/// A length-delimited field's length: its key, its length, its bytes.
fn delimited(tag: u32, len: usize) -> usize {
    key_len(tag) + encoded_len_varint(len as u64) + len
}

fn value_len(v: &Value) -> usize {
    match v {
        Value::Null => key_len(1) + 1,
        Value::Number(_) => key_len(2) + 8,
        Value::String(s) => delimited(3, s.len()),
        Value::Bool(_) => key_len(4) + 1,
        Value::Object(m) => delimited(5, struct_len(m)),
        Value::Array(a) => delimited(6, list_len(a)),
    }
}

fn entry_len(k: &str, v: &Value) -> usize {
    delimited(1, k.len()) + delimited(2, value_len(v))
}

fn struct_len(m: &Map<String, Value>) -> usize {
    m.iter().map(|(k, v)| delimited(1, entry_len(k, v))).sum()
}

fn list_len(a: &[Value]) -> usize {
    a.iter().map(|v| delimited(1, value_len(v))).sum()
}

// ---- encoding ---------------------------------------------------------------------
//
// Every object and list is written after its length, and the length of one holds the
// lengths of everything in it: worked out again at each level, a value `d` levels deep
// would be measured `2d` times. So the lengths are measured once, before writing: the
// body length of each object and list, in the order the writer meets them.

/// The body lengths of the objects and lists in `v` (itself first), in the order
/// [`encode_value`] meets them, pushed to `bodies`; `v`'s own length as a `Value`.
fn measure(v: &Value, bodies: &mut Vec<usize>) -> usize {
    let (tag, body) = match v {
        Value::Object(m) => (5, measure_struct(m, bodies)),
        Value::Array(a) => {
            let slot = bodies.len();
            bodies.push(0);
            let body = a.iter().map(|v| delimited(1, measure(v, bodies))).sum();
            bodies[slot] = body;
            (6, body)
        }
        scalar => return value_len(scalar),
    };
    delimited(tag, body)
}

/// [`measure`] of an object: its body length, pushed before those of its values.
fn measure_struct(m: &Map<String, Value>, bodies: &mut Vec<usize>) -> usize {
    let slot = bodies.len();
    bodies.push(0);
    let body = m
        .iter()
        .map(|(k, v)| delimited(1, delimited(1, k.len()) + delimited(2, measure(v, bodies))))
        .sum();
    bodies[slot] = body;
    body
}

/// The lengths [`measure`] pushed, taken in the same order.
struct Bodies<'a>(std::slice::Iter<'a, usize>);

impl Bodies<'_> {
    fn next(&mut self) -> usize {
        self.0
            .next()
            .copied()
            .expect("measured before it is written")
    }

    /// `v`'s length as a `Value`, without taking its body's.
    fn value_len(&self, v: &Value) -> usize {
        match v {
            Value::Object(_) => delimited(5, self.0.as_slice()[0]),
            Value::Array(_) => delimited(6, self.0.as_slice()[0]),
            scalar => value_len(scalar),
        }
    }
}

fn encode_value(v: &Value, bodies: &mut Bodies<'_>, buf: &mut impl BufMut) {
    match v {
        Value::Null => {
            encode_key(1, WireType::Varint, buf);
            encode_varint(0, buf);
        }
        Value::Number(n) => {
            encode_key(2, WireType::SixtyFourBit, buf);
            buf.put_f64_le(n.as_f64().unwrap_or(f64::NAN));
        }
        Value::String(s) => string::encode(3, s, buf),
        Value::Bool(b) => {
            encode_key(4, WireType::Varint, buf);
            encode_varint(u64::from(*b), buf);
        }
        Value::Object(m) => {
            encode_key(5, WireType::LengthDelimited, buf);
            encode_varint(bodies.next() as u64, buf);
            encode_struct(m, bodies, buf);
        }
        Value::Array(a) => {
            encode_key(6, WireType::LengthDelimited, buf);
            encode_varint(bodies.next() as u64, buf);
            encode_list(a, bodies, buf);
        }
    }
}

/// An object's entries (its body length already taken).
fn encode_struct(m: &Map<String, Value>, bodies: &mut Bodies<'_>, buf: &mut impl BufMut) {
    for (k, v) in m {
        let value = bodies.value_len(v);
        encode_key(1, WireType::LengthDelimited, buf);
        encode_varint((delimited(1, k.len()) + delimited(2, value)) as u64, buf);
        string::encode(1, k, buf);
        encode_key(2, WireType::LengthDelimited, buf);
        encode_varint(value as u64, buf);
        encode_value(v, bodies, buf);
    }
}

/// A list's values (its body length already taken).
fn encode_list(a: &[Value], bodies: &mut Bodies<'_>, buf: &mut impl BufMut) {
    for v in a {
        encode_key(1, WireType::LengthDelimited, buf);
        encode_varint(bodies.value_len(v) as u64, buf);
        encode_value(v, bodies, buf);
    }
}

/// A double as JSON: a whole number within 2^53 as an integer (`42`, not `42.0`), any
/// other finite one as it is, and NaN and the infinities — which JSON cannot hold — as
/// `null`.
fn number(x: f64) -> Value {
    const EXACT: f64 = 9_007_199_254_740_992.0;
    if x.fract() == 0.0 && x.abs() <= EXACT {
        Value::Number(Number::from(x as i64))
    } else {
        Number::from_f64(x).map_or(Value::Null, Value::Number)
    }
}

// ---- prost::Message ---------------------------------------------------------------

/// `google.protobuf.Struct` is the crate's [`Metadata`]: a JSON object, shared (a
/// task's metadata goes into a message without being copied).
impl prost::Message for Metadata {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        let mut bodies = Vec::new();
        measure_struct(self, &mut bodies);
        let mut bodies = Bodies(bodies.iter());
        bodies.next();
        encode_struct(self, &mut bodies, buf);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if tag == 1 {
            let mut entry = Entry::default();
            message::merge(wire_type, &mut entry, buf, ctx)?;
            self.insert(entry.key, entry.value.0);
            Ok(())
        } else {
            skip_field(wire_type, tag, buf, ctx)
        }
    }

    fn encoded_len(&self) -> usize {
        struct_len(self)
    }

    fn clear(&mut self) {
        *self = Metadata::default();
    }
}

impl prost::Message for Entry {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        string::encode(1, &self.key, buf);
        message::encode(2, &self.value, buf);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match tag {
            1 => string::merge(wire_type, &mut self.key, buf, ctx),
            2 => message::merge(wire_type, &mut self.value, buf, ctx),
            _ => skip_field(wire_type, tag, buf, ctx),
        }
    }

    fn encoded_len(&self) -> usize {
        entry_len(&self.key, &self.value.0)
    }

    fn clear(&mut self) {
        *self = Entry::default();
    }
}

impl prost::Message for JsonValue {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        let mut bodies = Vec::new();
        measure(&self.0, &mut bodies);
        encode_value(&self.0, &mut Bodies(bodies.iter()), buf);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        match tag {
            1 => {
                check_wire_type(WireType::Varint, wire_type)?;
                decode_varint(buf)?;
                self.0 = Value::Null;
            }
            2 => {
                let mut x = 0.0;
                double::merge(wire_type, &mut x, buf, ctx)?;
                self.0 = number(x);
            }
            3 => {
                let mut s = String::new();
                string::merge(wire_type, &mut s, buf, ctx)?;
                self.0 = Value::String(s);
            }
            4 => {
                check_wire_type(WireType::Varint, wire_type)?;
                self.0 = Value::Bool(decode_varint(buf)? != 0);
            }
            5 => {
                let mut s = Metadata::default();
                message::merge(wire_type, &mut s, buf, ctx)?;
                self.0 = Value::Object(s.into_map());
            }
            6 => {
                let mut l = ListValue::default();
                message::merge(wire_type, &mut l, buf, ctx)?;
                self.0 = Value::Array(l.0);
            }
            _ => skip_field(wire_type, tag, buf, ctx)?,
        }
        Ok(())
    }

    fn encoded_len(&self) -> usize {
        value_len(&self.0)
    }

    fn clear(&mut self) {
        self.0 = Value::Null;
    }
}

impl prost::Message for ListValue {
    fn encode_raw(&self, buf: &mut impl BufMut) {
        let mut bodies = Vec::new();
        for v in &self.0 {
            measure(v, &mut bodies);
        }
        encode_list(&self.0, &mut Bodies(bodies.iter()), buf);
    }

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        if tag == 1 {
            let mut v = JsonValue::default();
            message::merge(wire_type, &mut v, buf, ctx)?;
            self.0.push(v.0);
            Ok(())
        } else {
            skip_field(wire_type, tag, buf, ctx)
        }
    }

    fn encoded_len(&self) -> usize {
        list_len(&self.0)
    }

    fn clear(&mut self) {
        self.0.clear();
    }
}

impl prost::Message for Empty {
    fn encode_raw(&self, _: &mut impl BufMut) {}

    fn merge_field(
        &mut self,
        tag: u32,
        wire_type: WireType,
        buf: &mut impl Buf,
        ctx: DecodeContext,
    ) -> Result<(), DecodeError> {
        skip_field(wire_type, tag, buf, ctx)
    }

    fn encoded_len(&self) -> usize {
        0
    }

    fn clear(&mut self) {}
}

// ---- ProtoJSON --------------------------------------------------------------------

impl Serialize for JsonValue {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for JsonValue {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Value::deserialize(deserializer).map(JsonValue)
    }
}

impl Serialize for Empty {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        Map::new().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Empty {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(deserializer).map(|_| Empty)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use prost::Message as _;
    use serde_json::json;

    fn sample() -> Map<String, Value> {
        let Value::Object(m) = json!({
            "name": "Ada",
            "age": 36,
            "ratio": 0.5,
            "ok": true,
            "none": null,
            "tags": ["a", 1, [false], { "deep": { "er": [] } }],
            "empty": {},
            "": "",
            "ünïcödé": "✓",
            // Bodies past 127 bytes: their lengths take two bytes, at every level.
            "long": [{ "text": "x".repeat(300), "lists": [[["y".repeat(200)], {}], []] }]
        }) else {
            unreachable!()
        };
        m
    }

    #[test]
    fn a_struct_survives_the_binary_form_and_its_length_is_exact() {
        let s = Metadata::from(sample());
        let bytes = s.encode_to_vec();
        assert_eq!(bytes.len(), s.encoded_len());
        assert_eq!(Metadata::decode(bytes.as_slice()).unwrap(), s);
        let v = JsonValue(Value::Object(sample()));
        let bytes = v.encode_to_vec();
        assert_eq!(bytes.len(), v.encoded_len());
        assert_eq!(JsonValue::decode(bytes.as_slice()).unwrap(), v);
    }

    /// The bytes are the proto's: a hand-written `Struct { fields { "a": number 1.5 } }`
    /// reads, and the same value encodes to it.
    #[test]
    fn the_encoding_is_googles() {
        // Struct{ fields: entry{ key "a" (0a 01 61), value Value{ number 1.5 } } }
        let value = [0x11, 0, 0, 0, 0, 0, 0, 0xf8, 0x3f]; // tag 2, fixed64, 1.5
        let mut entry = vec![0x0a, 0x01, b'a', 0x12, value.len() as u8];
        entry.extend_from_slice(&value);
        let mut bytes = vec![0x0a, entry.len() as u8];
        bytes.extend_from_slice(&entry);
        let decoded = Metadata::decode(bytes.as_slice()).unwrap();
        assert_eq!(
            Value::Object(decoded.clone().into_map()),
            json!({ "a": 1.5 })
        );
        assert_eq!(decoded.encode_to_vec(), bytes);
    }

    #[test]
    fn numbers_read_back_as_json_would_write_them() {
        assert_eq!(number(42.0), json!(42));
        assert_eq!(number(-3.0), json!(-3));
        assert_eq!(number(0.25), json!(0.25));
        assert_eq!(number(1e300), json!(1e300));
        assert_eq!(number(f64::NAN), Value::Null);
    }

    #[test]
    fn nesting_past_the_decoders_limit_is_refused_not_a_stack_overflow() {
        let mut v = json!(1);
        for _ in 0..200 {
            v = json!([v]);
        }
        let bytes = JsonValue(v).encode_to_vec();
        assert!(JsonValue::decode(bytes.as_slice()).is_err());
    }

    #[test]
    fn their_protojson_is_the_json_itself() {
        let s = Metadata::from(sample());
        assert_eq!(serde_json::to_value(&s).unwrap(), Value::Object(sample()));
        let back: Metadata = serde_json::from_value(Value::Object(sample())).unwrap();
        assert_eq!(back, s);
        assert!(serde_json::from_value::<Metadata>(json!([1])).is_err());
        assert_eq!(serde_json::to_string(&Empty).unwrap(), "{}");
    }
}
