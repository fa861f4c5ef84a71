//! Timestamps as captures record them (a call's `start`) and the proxy prints them: RFC 3339
//! UTC with microseconds. One home for the proxy's recordings and csi-conformance explore's.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// `t` as RFC 3339 UTC with microseconds.
pub fn rfc3339(t: SystemTime) -> String {
    let mut out = Vec::with_capacity(27);
    let _ = write_rfc3339(&mut out, t);
    String::from_utf8(out).unwrap_or_default()
}

/// Writes `t` as [`rfc3339`] does, digit by digit (the proxy's logger writes one per call).
///
/// # Errors
///
/// When `out` cannot be written.
pub fn write_rfc3339(out: &mut impl std::io::Write, t: SystemTime) -> std::io::Result<()> {
    let d = t.duration_since(UNIX_EPOCH).unwrap_or(Duration::ZERO);
    let secs = d.as_secs();
    let days = i64::try_from(secs / 86_400).unwrap_or(0);
    let rem = secs % 86_400;
    // Days since the epoch to a civil date (proleptic Gregorian).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    let Some(year) = u64::try_from(year).ok().filter(|y| *y <= 9999) else {
        // Five digits (no call has such a date, but a clock may).
        return write!(
            out,
            "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{:06}Z",
            rem / 3600,
            rem % 3600 / 60,
            rem % 60,
            d.subsec_micros()
        );
    };
    let digits = |at: &mut [u8], mut v: u64| {
        for b in at.iter_mut().rev() {
            *b = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    let mut s = *b"0000-00-00T00:00:00.000000Z";
    digits(&mut s[0..4], year);
    digits(&mut s[5..7], u64::try_from(month).unwrap_or(0));
    digits(&mut s[8..10], u64::try_from(day).unwrap_or(0));
    digits(&mut s[11..13], rem / 3600);
    digits(&mut s[14..16], rem % 3600 / 60);
    digits(&mut s[17..19], rem % 60);
    digits(&mut s[20..26], u64::from(d.subsec_micros()));
    out.write_all(&s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_matches_known_instants() {
        let at = |s: u64, us: u64| UNIX_EPOCH + Duration::from_micros(s * 1_000_000 + us);
        assert_eq!(rfc3339(at(0, 0)), "1970-01-01T00:00:00.000000Z");
        assert_eq!(rfc3339(at(951_782_400, 5)), "2000-02-29T00:00:00.000005Z");
        assert_eq!(rfc3339(at(1_795_421_521, 250_113)), "2026-11-23T08:12:01.250113Z");
        assert_eq!(rfc3339(at(4_102_444_799, 0)), "2099-12-31T23:59:59.000000Z");
        assert_eq!(rfc3339(at(253_402_300_800, 7)), "10000-01-01T00:00:00.000007Z");
    }
}
