//! The wall clock as RFC 3339 text. Every status change of every task and every step's
//! start and end is stamped, and `time`'s formatter took some 2,400 instructions a stamp;
//! this writes the same text digit by digit, the date worked out from the day number by
//! integer arithmetic (`time` goes through the Julian day and the day of the year),
//! in a small part of that. A leaf: the protocol and the engine both stamp, and neither
//! may know the other.

use std::time::{SystemTime, UNIX_EPOCH};

/// The current UTC time as an RFC 3339 / ISO 8601 string.
pub fn now() -> String {
    at(SystemTime::now())
}

/// `at` in UTC as RFC 3339, exactly as `time`'s `Rfc3339` writes it (nanoseconds with
/// their trailing zeros left off, none when there are none). Years outside 0–9999, which
/// RFC 3339 cannot write, give `time`'s own answer (an empty string).
pub fn at(at: SystemTime) -> String {
    match at.duration_since(UNIX_EPOCH) {
        Ok(after) => unix(after.as_secs() as i64, after.subsec_nanos()),
        Err(before) => {
            // `before` the epoch: whole seconds down, nanoseconds up from them.
            let before = before.duration();
            let (secs, nanos) = (before.as_secs() as i64, before.subsec_nanos());
            match nanos {
                0 => unix(-secs, 0),
                n => unix(-secs - 1, 1_000_000_000 - n),
            }
        }
    }
}

/// The instant `secs` seconds and `nanos` nanoseconds after 1970-01-01T00:00:00Z.
fn unix(secs: i64, nanos: u32) -> String {
    /// Fills `out` with `value`'s last digits, zeros first.
    fn digits(out: &mut [u8], mut value: u32) {
        for digit in out.iter_mut().rev() {
            *digit = b'0' + (value % 10) as u8;
            value /= 10;
        }
    }
    let (days, second_of_day) = (secs.div_euclid(86_400), secs.rem_euclid(86_400) as u32);
    let (year, month, day) = civil(days);
    let year = match u32::try_from(year) {
        Ok(year) if year <= 9999 => year,
        _ => return String::new(),
    };
    let mut text = *b"0000-00-00T00:00:00.000000000";
    digits(&mut text[0..4], year);
    digits(&mut text[5..7], month);
    digits(&mut text[8..10], day);
    digits(&mut text[11..13], second_of_day / 3600);
    digits(&mut text[14..16], second_of_day / 60 % 60);
    digits(&mut text[17..19], second_of_day % 60);
    let mut end = 19;
    if nanos != 0 {
        digits(&mut text[20..29], nanos);
        end = 29;
        while text[end - 1] == b'0' {
            end -= 1;
        }
    }
    // ASCII digits and separators: always UTF-8, checked in one pass rather than
    // pushed a `char` at a time.
    let mut out = String::with_capacity(end + 1);
    out.push_str(std::str::from_utf8(&text[..end]).unwrap_or_default());
    out.push('Z');
    out
}

/// The proleptic Gregorian year, month and day of the day `days` after 1970-01-01
/// (Howard Hinnant's `civil_from_days`: years counted from March, so that the leap
/// day falls last, in eras of 400 years).
fn civil(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1_460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * month_from_march + 2) / 5 + 1) as u32;
    let month = if month_from_march < 10 {
        month_from_march + 3
    } else {
        month_from_march - 9
    } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::{at, unix};
    use proptest::prelude::*;
    use std::time::UNIX_EPOCH;

    /// `at` written by this crate, for comparing with `time`'s own text.
    fn rfc3339(at: time::OffsetDateTime) -> String {
        unix(at.unix_timestamp(), at.nanosecond())
    }

    fn by_time(at: time::OffsetDateTime) -> String {
        at.format(&time::format_description::well_known::Rfc3339)
            .unwrap_or_default()
    }

    #[test]
    fn timestamps_are_written_as_time_writes_them() {
        let now = time::OffsetDateTime::now_utc();
        assert_eq!(rfc3339(now), by_time(now));
        for (secs, nanos) in [
            (0, 0),
            (1, 5),
            (59, 120_000_000),
            (253_402_300_799, 999_999_999),
        ] {
            let at = time::OffsetDateTime::from_unix_timestamp(secs).unwrap()
                + time::Duration::nanoseconds(nanos);
            assert_eq!(rfc3339(at), by_time(at));
        }
        assert_eq!(
            rfc3339(time::OffsetDateTime::UNIX_EPOCH),
            "1970-01-01T00:00:00Z"
        );
        // Before year 0: RFC 3339 has no way to write it.
        let bc = time::OffsetDateTime::from_unix_timestamp(-62_167_219_201).unwrap();
        assert_eq!((rfc3339(bc), by_time(bc)), (String::new(), String::new()));
    }

    proptest! {
        /// The clock's own instants, before the epoch too, as `time` writes them.
        #[test]
        fn any_system_time_is_written_as_time_writes_it(
            secs in -62_167_219_200i64..253_402_300_800,
            nanos in 0u32..1_000_000_000,
        ) {
            let offset = std::time::Duration::new(secs.unsigned_abs(), 0);
            let whole = if secs < 0 { UNIX_EPOCH - offset } else { UNIX_EPOCH + offset };
            let system = whole + std::time::Duration::from_nanos(nanos.into());
            prop_assert_eq!(at(system), by_time(time::OffsetDateTime::from(system)));
        }

        #[test]
        fn any_instant_is_written_as_time_writes_it(
            secs in -62_167_219_200i64..253_402_300_800,
            nanos in 0i64..1_000_000_000,
        ) {
            let at = time::OffsetDateTime::from_unix_timestamp(secs).unwrap()
                + time::Duration::nanoseconds(nanos);
            prop_assert_eq!(rfc3339(at), by_time(at));
        }
    }
}
