//! The text of captured events, made on the writer's thread: one line per event, in the shape
//! of `tracing-subscriber`'s default format, so a driver's log reads as it did:
//!
//! ```text
//! 2026-11-25T03:48:41.123456Z  INFO csi{rpc="NodePublishVolume" id="vol-1"}: csikit_runtime::server: ok elapsed_us=12
//! ```
//!
//! The time in UTC to the microsecond, the level, the spans from the outermost with their
//! fields, the target, the message, the event's fields. A string value is quoted and escaped
//! (`Debug` of a `str`); in a message and a `Debug` value every control character is escaped, so
//! one event is always one line and a value cannot forge another line or drive a terminal.

use std::io::Write as _;
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::{Level, Metadata};

use super::capture::{Batch, Line, Value, Values};

/// Appends every line of `batch` to `out`.
pub(crate) fn write_batch(batch: &Batch, out: &mut Vec<u8>) {
    let mut second = Second::default();
    for line in &batch.lines {
        write_line(batch, line, &mut second, out);
    }
}

/// The text of the last whole second written, `2026-11-25T03:48:41.`: the lines of a batch
/// mostly fall in one second, and the date is the costly part of a line's time.
#[derive(Default)]
struct Second {
    secs: Option<u64>,
    text: Vec<u8>,
}

/// Appends one event's line.
fn write_line(batch: &Batch, line: &Line, second: &mut Second, out: &mut Vec<u8>) {
    let Some((event, spans)) = batch.parts[line.start..line.end].split_last() else { return };
    write_head(line.time, *event.meta.level(), second, out);
    for (i, span) in spans.iter().enumerate() {
        if i > 0 {
            out.push(b':');
        }
        out.extend_from_slice(span.meta.name().as_bytes());
        let values = &batch.bytes[span.start..span.end];
        if !values.is_empty() {
            out.push(b'{');
            write_fields(span.meta, values, false, out);
            out.push(b'}');
        }
    }
    if !spans.is_empty() {
        out.extend_from_slice(b": ");
    }
    out.extend_from_slice(event.meta.target().as_bytes());
    out.extend_from_slice(b": ");
    write_fields(event.meta, &batch.bytes[event.start..event.end], true, out);
    out.push(b'\n');
}

/// A line the writer adds itself (lines dropped, lines it could not write), at `level`.
pub(crate) fn write_notice(time: SystemTime, level: Level, message: &str, out: &mut Vec<u8>) {
    write_head(time, level, &mut Second::default(), out);
    out.extend_from_slice(b"csikit_runtime::server::log: ");
    write_escaped(message.as_bytes(), out);
    out.push(b'\n');
}

/// The time and the level, each followed by a space.
fn write_head(time: SystemTime, level: Level, second: &mut Second, out: &mut Vec<u8>) {
    write_time(time, second, out);
    let level: &[u8] = match level {
        Level::TRACE => b"TRACE ",
        Level::DEBUG => b"DEBUG ",
        Level::INFO => b" INFO ",
        Level::WARN => b" WARN ",
        Level::ERROR => b"ERROR ",
    };
    out.push(b' ');
    out.extend_from_slice(level);
}

/// The values of one part as `name=value`, separated by spaces; with `message_first`, a field
/// named `message` is written first, bare.
fn write_fields(meta: &Metadata<'_>, values: &[u8], message_first: bool, out: &mut Vec<u8>) {
    // The names by index, looked up once (a callsite has at most 32 fields).
    let mut names = [""; 32];
    for (slot, field) in names.iter_mut().zip(meta.fields().iter()) {
        *slot = field.name();
    }
    let name = |index: usize| names.get(index).copied().unwrap_or("?");
    let is_message = |index: usize| message_first && name(index) == "message";
    let mut first = true;
    if message_first {
        for (_, value) in Values::new(values).filter(|(i, _)| is_message(*i)) {
            match value {
                Value::Str(text) | Value::Text(text) => write_escaped(text, out),
                other => write_value(other, out),
            }
            first = false;
        }
    }
    for (index, value) in Values::new(values).filter(|(i, _)| !is_message(*i)) {
        if !first {
            out.push(b' ');
        }
        first = false;
        // `r#type` is written as tracing names it; the field is `type`.
        let name = name(index);
        out.extend_from_slice(name.strip_prefix("r#").unwrap_or(name).as_bytes());
        out.push(b'=');
        write_value(value, out);
    }
}

fn write_value(value: Value<'_>, out: &mut Vec<u8>) {
    match value {
        Value::U64(n) => write_u64(n, out),
        Value::I64(n) => {
            if n < 0 {
                out.push(b'-');
            }
            write_u64(n.unsigned_abs(), out);
        }
        // Writing into a Vec cannot fail.
        Value::F64(n) => drop(write!(out, "{n}")),
        Value::Bool(b) => out.extend_from_slice(if b { b"true" } else { b"false" }),
        Value::Str(s) if s.iter().all(|&b| plain(b) && b != b'"' && b != b'\\') => {
            // What `Debug` writes for a string with nothing to escape, without its machinery.
            out.push(b'"');
            out.extend_from_slice(s);
            out.push(b'"');
        }
        Value::Str(s) => drop(write!(out, "{:?}", String::from_utf8_lossy(s))),
        Value::Text(text) => write_escaped(text, out),
    }
}

/// A printable ASCII byte.
fn plain(b: u8) -> bool {
    (0x20..0x7f).contains(&b)
}

/// `n` in decimal.
fn write_u64(n: u64, out: &mut Vec<u8>) {
    write_padded(n, 1, out);
}

/// `n` in decimal, with leading zeros to `width` digits (at most 20).
fn write_padded(mut n: u64, width: usize, out: &mut Vec<u8>) {
    let mut digits = [b'0'; 20];
    let mut at = digits.len();
    while n > 0 {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out.extend_from_slice(&digits[at.min(digits.len() - width.clamp(1, 20))..]);
}

/// `text` with each control character written as its escape (`\n`, `\u{1b}`).
fn write_escaped(text: &[u8], out: &mut Vec<u8>) {
    if text.iter().all(|&b| plain(b)) {
        out.extend_from_slice(text);
        return;
    }
    let text = String::from_utf8_lossy(text);
    let mut plain = 0;
    for (at, c) in text.char_indices() {
        if c.is_control() {
            out.extend_from_slice(&text.as_bytes()[plain..at]);
            let _ = write!(out, "{}", c.escape_default());
            plain = at + c.len_utf8();
        }
    }
    out.extend_from_slice(&text.as_bytes()[plain..]);
}

/// `time` as RFC 3339 in UTC with microseconds: `2026-11-25T03:48:41.123456Z` (a time before
/// 1970 is written as 1970's first instant).
fn write_time(time: SystemTime, second: &mut Second, out: &mut Vec<u8>) {
    let since = time.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    if second.secs != Some(secs) {
        let (year, month, day) = civil_date(secs / 86_400);
        let of_day = secs % 86_400;
        // `{year:04}-{month:02}-{day:02}T{h:02}:{m:02}:{s:02}.`, a digit at a time: the writer
        // thread formats every line, and `write!` would be most of its work.
        second.text.clear();
        for (n, width, after) in [
            (year, 4, b'-'),
            (month, 2, b'-'),
            (day, 2, b'T'),
            (of_day / 3600, 2, b':'),
            (of_day / 60 % 60, 2, b':'),
            (of_day % 60, 2, b'.'),
        ] {
            write_padded(n, width, &mut second.text);
            second.text.push(after);
        }
        second.secs = Some(secs);
    }
    out.extend_from_slice(&second.text);
    write_padded(u64::from(since.subsec_micros()), 6, out);
    out.push(b'Z');
}

/// The Gregorian date `days` after 1970-01-01: counted in 400-year eras that start on 1 March
/// (so a leap day ends its year), each 146,097 days long.
fn civil_date(days: u64) -> (u64, u64, u64) {
    // Days since 0000-03-01.
    let z = days + 719_468;
    let era = z / 146_097;
    let day_of_era = z % 146_097;
    // Years into the era: 365 days each, less the leap days a 4, 100 and 400-year cycle add.
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    // Months from March, of 31 30 31 30 31 31 30 31 30 31 31 28/29 days: 153 days per five.
    let month_from_march = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * month_from_march + 2) / 5 + 1;
    let month = if month_from_march < 10 { month_from_march + 3 } else { month_from_march - 9 };
    let year = year_of_era + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, reason = "tests")]
mod tests {
    use std::time::Duration;

    use tracing::field::Visit as _;

    use super::super::capture::{Encoder, tests::metadata};
    use super::*;

    fn at(secs: u64, micros: u32) -> SystemTime {
        UNIX_EPOCH + Duration::new(secs, micros * 1000)
    }

    fn time_text(t: SystemTime) -> String {
        let mut out = Vec::new();
        write_time(t, &mut Second::default(), &mut out);
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn times_are_rfc3339_utc_to_the_microsecond() {
        // Each against `date -u -d @SECS` / Python's datetime.
        for (secs, text) in [
            (0, "1970-01-01T00:00:00"),
            (951_782_400, "2000-02-29T00:00:00"),
            (951_868_799, "2000-02-29T23:59:59"),
            (1_764_042_521, "2025-11-25T03:48:41"),
            (4_102_444_799, "2099-12-31T23:59:59"),
            (4_107_542_400, "2100-03-01T00:00:00"),
            (253_402_300_799, "9999-12-31T23:59:59"),
        ] {
            assert_eq!(time_text(at(secs, 0)), format!("{text}.000000Z"), "{secs}");
        }
        assert_eq!(time_text(at(0, 123_456)), "1970-01-01T00:00:00.123456Z");
        // One second's text serves the lines in it, and only those.
        let (mut second, mut out) = (Second::default(), Vec::new());
        for (secs, micros) in [(59, 1), (59, 999_999), (60, 0), (86_399, 5), (86_400, 5)] {
            write_time(at(secs, micros), &mut second, &mut out);
            out.push(b' ');
        }
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "1970-01-01T00:00:59.000001Z 1970-01-01T00:00:59.999999Z 1970-01-01T00:01:00.000000Z \
             1970-01-01T23:59:59.000005Z 1970-01-02T00:00:00.000005Z "
        );
        let before = UNIX_EPOCH - Duration::from_secs(5);
        assert_eq!(time_text(before), "1970-01-01T00:00:00.000000Z");
    }

    /// Every day from 1970 to 2400 follows the one before: the date only ever moves by one day,
    /// months have their lengths and February 29 comes exactly in leap years.
    #[test]
    fn consecutive_days_are_consecutive_dates() {
        let leap =
            |y: u64| y.is_multiple_of(4) && (!y.is_multiple_of(100) || y.is_multiple_of(400));
        let mut prev = civil_date(0);
        assert_eq!(prev, (1970, 1, 1));
        for days in 1..157_000 {
            let date = civil_date(days);
            let (y, m, d) = prev;
            let length = match m {
                2 if leap(y) => 29,
                2 => 28,
                4 | 6 | 9 | 11 => 30,
                _ => 31,
            };
            let next = if d < length {
                (y, m, d + 1)
            } else if m < 12 {
                (y, m + 1, 1)
            } else {
                (y + 1, 1, 1)
            };
            assert_eq!(date, next, "day {days}");
            prev = date;
        }
    }

    #[test]
    fn a_line_has_the_spans_the_target_the_message_and_the_fields() {
        let meta = metadata();
        let field = |name: &str| meta.fields().field(name).unwrap();
        let mut batch = Batch::default();
        batch.begin(at(1_764_042_521, 7));
        batch.part(meta, |out| Encoder(out).record_str(&field("s"), "vol \"1\""));
        batch.part(meta, |_| {});
        batch.part(meta, |out| {
            let mut enc = Encoder(out);
            enc.record_u64(&field("n"), 12);
            enc.record_debug(&field("message"), &format_args!("ok\nforged line"));
            enc.record_debug(&field("d"), &"\u{1b}[31mred");
            enc.record_bool(&field("b"), false);
        });
        let mut out = Vec::new();
        write_batch(&batch, &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "2025-11-25T03:48:41.000007Z  INFO test{s=\"vol \\\"1\\\"\"}:test: capture: \
             ok\\nforged line n=12 d=\"\\u{1b}[31mred\" b=false\n"
        );
    }

    #[test]
    fn numbers_are_written_as_display_writes_them() {
        for n in [0, 7, 10, 99, 1_000_000, u64::MAX] {
            let mut out = Vec::new();
            write_u64(n, &mut out);
            assert_eq!(out, n.to_string().as_bytes());
            for width in [1, 2, 6, 20] {
                let mut out = Vec::new();
                write_padded(n, width, &mut out);
                assert_eq!(out, format!("{n:0width$}").as_bytes());
            }
        }
        for n in [i64::MIN, -5, 0, 5, i64::MAX] {
            let mut out = Vec::new();
            write_value(Value::I64(n), &mut out);
            assert_eq!(out, n.to_string().as_bytes());
        }
    }

    #[test]
    fn strings_are_written_as_debug_writes_them() {
        for s in
            ["vol-1", "", "a \"quoted\" word", "back\\slash", "tab\there", "caf\u{e9}", "\u{200b}"]
        {
            let mut out = Vec::new();
            write_value(Value::Str(s.as_bytes()), &mut out);
            assert_eq!(String::from_utf8(out).unwrap(), format!("{s:?}"));
        }
    }

    #[test]
    fn a_notice_is_one_warning_line() {
        let mut out = Vec::new();
        write_notice(at(0, 0), Level::WARN, "3 lines dropped\n", &mut out);
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "1970-01-01T00:00:00.000000Z  WARN csikit_runtime::server::log: 3 lines dropped\\n\n"
        );
    }
}
