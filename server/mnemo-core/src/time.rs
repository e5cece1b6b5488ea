//! Timestamps as UTC seconds since the Unix epoch, and their text forms:
//! calendar dates (`2026-08-01`), RFC 3339 (`2026-08-01T12:00:00Z`) and
//! relative ages (`3d`). Pure arithmetic: independent of `TZ` and locale.

use std::fmt;

/// UTC seconds since 1970-01-01T00:00:00Z.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(transparent)]
pub struct Timestamp(pub i64);

const SECONDS_PER_DAY: i64 = 86_400;

impl Timestamp {
    /// The UTC calendar date, `YYYY-MM-DD`.
    pub fn date(self) -> String {
        let (y, m, d) = civil_from_days(self.0.div_euclid(SECONDS_PER_DAY));
        format!("{y:04}-{m:02}-{d:02}")
    }

    /// RFC 3339 in UTC with a `Z` suffix, whole seconds.
    pub fn rfc3339(self) -> String {
        let secs = self.0.rem_euclid(SECONDS_PER_DAY);
        format!("{}T{:02}:{:02}:{:02}Z", self.date(), secs / 3600, secs / 60 % 60, secs % 60)
    }

    /// Midnight UTC of a `YYYY-MM-DD` date, or `None` when it is not one.
    pub fn from_date(text: &str) -> Option<Timestamp> {
        let mut parts = text.split('-');
        let (y, m, d) = (parts.next()?, parts.next()?, parts.next()?);
        if parts.next().is_some() || y.len() != 4 || m.len() != 2 || d.len() != 2 {
            return None;
        }
        if !text.bytes().all(|b| b.is_ascii_digit() || b == b'-') {
            return None;
        }
        let (y, m, d): (i64, u32, u32) = (y.parse().ok()?, m.parse().ok()?, d.parse().ok()?);
        if !(1..=12).contains(&m) || d == 0 || d > days_in_month(y, m) {
            return None;
        }
        Some(Timestamp(days_from_civil(y, m, d) * SECONDS_PER_DAY))
    }

    /// Parse RFC 3339 UTC (`2026-08-01T12:00:00Z`) or a bare date.
    pub fn parse(text: &str) -> Option<Timestamp> {
        if let Some(day) = Timestamp::from_date(text) {
            return Some(day);
        }
        let (date, rest) = text.split_once('T')?;
        let time = rest.strip_suffix('Z')?;
        let day = Timestamp::from_date(date)?;
        let mut hms = time.split(':');
        let (h, m, s) = (hms.next()?, hms.next()?, hms.next()?);
        if hms.next().is_some() {
            return None;
        }
        let two_digits = |t: &str| -> Option<i64> {
            (t.len() == 2 && t.bytes().all(|b| b.is_ascii_digit())).then(|| t.parse().ok())?
        };
        let (h, m, s) = (two_digits(h)?, two_digits(m)?, two_digits(s)?);
        if h > 23 || m > 59 || s > 59 {
            return None;
        }
        Some(Timestamp(day.0 + h * 3600 + m * 60 + s))
    }

    /// The age of `self` seen from `now`, compact: `now`, `5min`, `3h`, `12d`, `4mo`, `2y`
    /// (minutes are `min`, so they never read like months).
    pub fn age(self, now: Timestamp) -> String {
        let secs = (now.0 - self.0).max(0);
        let days = secs / SECONDS_PER_DAY;
        match secs {
            s if s < 60 => "now".to_string(),
            s if s < 3600 => format!("{}min", s / 60),
            s if s < SECONDS_PER_DAY => format!("{}h", s / 3600),
            _ if days < 60 => format!("{days}d"),
            _ if days < 365 => format!("{}mo", days / 30),
            _ => format!("{}y", days / 365),
        }
    }
}

impl fmt::Display for Timestamp {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.rfc3339())
    }
}

fn is_leap(y: i64) -> bool {
    (y % 4 == 0 && y % 100 != 0) || y % 400 == 0
}

fn days_in_month(y: i64, m: u32) -> u32 {
    match m {
        4 | 6 | 9 | 11 => 30,
        2 if is_leap(y) => 29,
        2 => 28,
        _ => 31,
    }
}

/// Days since 1970-01-01 to (year, month, day); H. Hinnant's algorithm.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// (year, month, day) to days since 1970-01-01; inverse of `civil_from_days`.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn known_dates() {
        assert_eq!(Timestamp(0).rfc3339(), "1970-01-01T00:00:00Z");
        assert_eq!(Timestamp(-1).rfc3339(), "1969-12-31T23:59:59Z");
        assert_eq!(Timestamp(951_782_400).date(), "2000-02-29");
        assert_eq!(Timestamp(1_785_542_400).date(), "2026-08-01");
        assert_eq!(Timestamp(1_785_585_845).rfc3339(), "2026-08-01T12:04:05Z");
        assert_eq!(Timestamp::from_date("2026-08-01"), Some(Timestamp(1_785_542_400)));
        assert_eq!(Timestamp::parse("2026-08-01T12:04:05Z"), Some(Timestamp(1_785_585_845)));
    }

    #[test]
    fn every_day_from_1600_to_2500_formats_and_parses_back() {
        let first = Timestamp::from_date("1600-01-01").unwrap().0 / SECONDS_PER_DAY;
        let last = Timestamp::from_date("2500-12-31").unwrap().0 / SECONDS_PER_DAY;
        let mut previous = String::new();
        for day in first..=last {
            let date = Timestamp(day * SECONDS_PER_DAY).date();
            assert_eq!(Timestamp::from_date(&date), Some(Timestamp(day * SECONDS_PER_DAY)), "{date}");
            assert!(date > previous, "{date} after {previous}");
            previous = date;
        }
        assert_eq!(last - first + 1, 329_084, "901 years, 219 of them leap");
    }

    #[test]
    fn display_is_rfc3339() {
        assert_eq!(Timestamp(1_785_585_845).to_string(), "2026-08-01T12:04:05Z");
    }

    #[test]
    fn invalid_dates_are_refused() {
        for bad in [
            "2026-02-29",
            "2026-13-01",
            "2026-00-10",
            "2026-1-01",
            "26-01-01",
            "x",
            "2026-01-01T25:00:00Z",
            "2026-01-01T24:00:00Z",
            "2026-01-01T10:60:00Z",
            "2026-01-01T10:00:60Z",
            "2026-01-01T-1:00:00Z",
            "2026-01-01T10:+1:00Z",
            "2026-01-01T1:00:00Z",
            "2026-01-01T10:00:00:00Z",
            "2026-01-01T10:00:00",
            "2026-+1-01",
            "2026-04-31",
            "2100-02-29",
            "2026-06-00",
            "2026-01-32",
        ] {
            assert_eq!(Timestamp::parse(bad), None, "{bad}");
        }
    }

    #[test]
    fn month_ends_and_leap_days_are_dates() {
        for (good, days) in [
            ("2024-02-29", 19_782),
            ("2000-02-29", 11_016),
            ("2026-12-31", 20_818),
            ("2026-01-31", 20_484),
            ("2026-04-30", 20_573),
            ("2026-02-28", 20_512),
            ("1970-01-01", 0),
        ] {
            assert_eq!(Timestamp::from_date(good), Some(Timestamp(days * 86_400)), "{good}");
            assert_eq!(Timestamp(days * 86_400).date(), good);
        }
        assert_eq!(Timestamp::parse("2026-08-01T23:59:59Z"), Some(Timestamp(1_785_628_799)));
    }

    #[test]
    fn ages() {
        let now = Timestamp(10_000_000);
        let cases = [
            (0, "now"),
            (59, "now"),
            (60, "1min"),
            (3599, "59min"),
            (3600, "1h"),
            (86_399, "23h"),
            (86_400, "1d"),
            (3 * 86_400, "3d"),
            (59 * 86_400, "59d"),
            (60 * 86_400, "2mo"),
            (364 * 86_400, "12mo"),
            (365 * 86_400, "1y"),
        ];
        for (ago, expected) in cases {
            assert_eq!(Timestamp(now.0 - ago).age(now), expected, "{ago}s ago");
        }
        assert_eq!(Timestamp(now.0 + 50).age(now), "now", "future clamps to now");
    }

    proptest! {
        #[test]
        fn rfc3339_round_trips(secs in -5_000_000_000i64..50_000_000_000i64) {
            let t = Timestamp(secs);
            prop_assert_eq!(Timestamp::parse(&t.rfc3339()), Some(t));
        }
    }
}
