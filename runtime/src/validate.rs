//! Request and response validation: the [`Validate`] trait that `#[csi_validate]` implements,
//! the field paths it reports, and the checks it calls.
//!
//! Checking a valid message allocates nothing: paths are a chain of stack frames that only
//! become text when a violation is recorded.

use std::fmt;

/// One step of a field path.
#[derive(Debug, Clone, Copy)]
pub enum PathSegment<'a> {
    /// The message itself.
    Root,
    /// A field, by name.
    Field(&'static str),
    /// An element of a repeated field.
    Index(usize),
    /// A value of a map, by key.
    Key(&'a str),
}

/// Where a value sits in a message: a chain from the root, kept on the stack.
#[derive(Debug, Clone, Copy)]
pub struct FieldPath<'a> {
    parent: Option<&'a FieldPath<'a>>,
    segment: PathSegment<'a>,
}

impl<'a> FieldPath<'a> {
    /// The message itself.
    pub const ROOT: FieldPath<'static> = FieldPath { parent: None, segment: PathSegment::Root };

    /// The path of a field of this value.
    #[inline]
    pub fn field(&'a self, name: &'static str) -> FieldPath<'a> {
        FieldPath { parent: Some(self), segment: PathSegment::Field(name) }
    }

    /// The path of an element of this repeated value.
    #[inline]
    pub fn index(&'a self, i: usize) -> FieldPath<'a> {
        FieldPath { parent: Some(self), segment: PathSegment::Index(i) }
    }

    /// The path of a value of this map.
    #[inline]
    pub fn key(&'a self, key: &'a str) -> FieldPath<'a> {
        FieldPath { parent: Some(self), segment: PathSegment::Key(key) }
    }
}

impl fmt::Display for FieldPath<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(parent) = self.parent {
            parent.fmt(f)?;
        }
        match self.segment {
            PathSegment::Root => Ok(()),
            PathSegment::Field(name) => {
                if matches!(self.parent, Some(p) if !matches!(p.segment, PathSegment::Root)) {
                    f.write_str(".")?;
                }
                f.write_str(name)
            }
            PathSegment::Index(i) => write!(f, "[{i}]"),
            PathSegment::Key(k) => write!(f, "[{k:?}]"),
        }
    }
}

/// Which rule a violation broke.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RuleId {
    /// A REQUIRED field is missing (empty string, `None`, no element, zero enum, no oneof variant).
    Required,
    /// A string is longer than its size limit.
    MaxBytes,
    /// A map or repeated string is larger, all together, than its size limit.
    MaxTotalBytes,
    /// A number the spec says MUST NOT be negative is negative.
    NonNegative,
    /// A name holds one of the control characters the spec bans.
    ControlChars,
    /// A secret key holds a character other than `[A-Za-z0-9._-]`.
    SecretKey,
    /// A rule of the message as a whole.
    Message,
}

impl RuleId {
    /// The rule's stable id, e.g. `required`.
    pub fn as_str(self) -> &'static str {
        match self {
            RuleId::Required => "required",
            RuleId::MaxBytes => "max_bytes",
            RuleId::MaxTotalBytes => "max_total_bytes",
            RuleId::NonNegative => "non_negative",
            RuleId::ControlChars => "no_control_chars",
            RuleId::SecretKey => "secret_keys",
            RuleId::Message => "message",
        }
    }
}

impl fmt::Display for RuleId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One broken rule, with the path of the offending field. Never holds a field's value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    /// Where, e.g. `volume_capabilities[1].access_mode.mode`.
    pub path: String,
    /// Which rule.
    pub rule: RuleId,
    /// What is wrong, in words, without the value.
    pub message: String,
}

/// The path and the words, once: "name: is REQUIRED". The rule's id is for machines (`rule`,
/// and the JSON the tools write), not repeated in the sentence.
impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.path.is_empty() {
            f.write_str(&self.message)
        } else {
            write!(f, "{}: {}", self.path, self.message)
        }
    }
}

/// Every violation found in one message.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Violations(Vec<Violation>);

impl Violations {
    /// No violations; allocates nothing.
    pub const fn new() -> Self {
        Violations(Vec::new())
    }

    /// Records a violation at `path`.
    pub fn push(&mut self, path: &FieldPath<'_>, rule: RuleId, message: impl Into<String>) {
        self.0.push(Violation { path: path.to_string(), rule, message: message.into() });
    }

    /// True when nothing was recorded.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many were recorded.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The violations, in the order found.
    pub fn iter(&self) -> std::slice::Iter<'_, Violation> {
        self.0.iter()
    }

    /// `Ok(())` when empty, else `Err(self)`.
    #[inline]
    pub fn into_result(self) -> Result<(), Violations> {
        if self.0.is_empty() { Ok(()) } else { Err(self) }
    }
}

impl IntoIterator for Violations {
    type Item = Violation;
    type IntoIter = std::vec::IntoIter<Violation>;
    fn into_iter(self) -> Self::IntoIter {
        self.0.into_iter()
    }
}

impl fmt::Display for Violations {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, v) in self.0.iter().enumerate() {
            if i > 0 {
                f.write_str("; ")?;
            }
            v.fmt(f)?;
        }
        Ok(())
    }
}

impl std::error::Error for Violations {}

/// A message that knows the spec's rules for its fields.
pub trait Validate {
    /// Checks every rule; returns every violation, not just the first.
    ///
    /// # Errors
    ///
    /// [`Violations`] listing each broken rule with its field path.
    fn validate(&self) -> Result<(), Violations> {
        let mut out = Violations::new();
        self.validate_at(&FieldPath::ROOT, &mut out);
        out.into_result()
    }

    /// Checks every rule, recording violations under `path`.
    fn validate_at(&self, path: &FieldPath<'_>, out: &mut Violations);
}

impl<T: Validate + ?Sized> Validate for Box<T> {
    fn validate_at(&self, path: &FieldPath<'_>, out: &mut Violations) {
        (**self).validate_at(path, out);
    }
}

/// The checks the macro's expansion calls; public so that expansions in other crates reach them.
#[doc(hidden)]
pub mod check {
    use super::{FieldPath, RuleId, Violations};

    /// The characters the spec bans in names: U+0000-U+0008, U+000B, U+000C, U+000E-U+001F,
    /// U+007F-U+009F.
    #[inline]
    pub fn is_banned_control(c: char) -> bool {
        matches!(c, '\u{0}'..='\u{8}' | '\u{b}' | '\u{c}' | '\u{e}'..='\u{1f}' | '\u{7f}'..='\u{9f}')
    }

    /// Whether `s` holds a character the spec bans in names ([`is_banned_control`]).
    #[inline]
    pub fn has_banned_control(s: &str) -> bool {
        // Every banned character is below U+0020, U+007F, or encoded with a 0xC2 lead byte
        // (U+0080-U+009F): eight bytes at a time rule out almost every name without decoding it.
        word::any::<word::ControlSuspects>(s.as_bytes()) && s.chars().any(is_banned_control)
    }

    /// A secret key is made of `[A-Za-z0-9._-]` and is not empty.
    #[inline]
    pub fn is_secret_key(k: &str) -> bool {
        !k.is_empty() && !word::any::<word::SecretKeyMisfits>(k.as_bytes())
    }

    /// Checks a secrets map in one pass: every key in the secret charset, and keys plus values
    /// within `max` bytes. The map is walked a second time only to name the keys that break
    /// the charset.
    #[inline]
    pub fn secret_map<'a, K, V, I>(map: I, max: usize, path: &FieldPath<'_>, out: &mut Violations)
    where
        K: AsRef<str> + 'a,
        V: AsRef<str> + 'a,
        I: IntoIterator<Item = (&'a K, &'a V)> + Copy,
    {
        let mut total = 0;
        let mut keys_ok = true;
        for (k, v) in map {
            let k = k.as_ref();
            total += k.len() + v.as_ref().len();
            keys_ok &= is_secret_key(k);
        }
        if !keys_ok {
            secret_keys(map, path, out);
        }
        if total > max {
            out.push(
                path,
                RuleId::MaxTotalBytes,
                format!("holds {total} bytes of keys and values, more than the limit of {max}"),
            );
        }
    }

    /// Byte classes tested eight bytes at a time in a `u64` (SWAR): a whole secret key or a
    /// short name costs two words, and the two are tested side by side.
    mod word {
        const ONES: u64 = 0x0101_0101_0101_0101;
        const HIGHS: u64 = 0x8080_8080_8080_8080;

        /// A set of bytes.
        pub(super) trait ByteClass {
            /// Whether `b` is in the set: the definition.
            const BYTES: [bool; 256];

            /// The high bit of each byte of `w` that is in the set, and nothing else.
            fn word(w: u64) -> u64;
        }

        /// The table of a per-byte definition, `byte_table!(|b| <is b in the set>)`.
        macro_rules! byte_table {
            (|$b:ident| $in_set:expr) => {{
                let mut t = [false; 256];
                let mut i = 0;
                while i < 256 {
                    let $b = i as u8;
                    t[i] = $in_set;
                    i += 1;
                }
                t
            }};
        }

        /// Sets the high bit of each byte of `x`, whose bytes are all below 0x80, that is at
        /// least `lo`. No byte carries into the next: 0x7F + (0x80 - lo) <= 0xFF.
        #[inline(always)]
        const fn at_least(x: u64, lo: u8) -> u64 {
            x.wrapping_add(ONES * (0x80 - lo as u64))
        }

        /// The high bit of each byte of `x` (bytes below 0x80) in `lo..=hi`.
        #[inline(always)]
        const fn within(x: u64, lo: u8, hi: u8) -> u64 {
            at_least(x, lo) & !at_least(x, hi + 1) & HIGHS
        }

        /// Bytes outside `[A-Za-z0-9._-]`, the secret-key charset.
        pub(super) struct SecretKeyMisfits;

        impl ByteClass for SecretKeyMisfits {
            const BYTES: [bool; 256] = byte_table!(|b| !(b.is_ascii_alphanumeric()
                || b == b'.'
                || b == b'_'
                || b == b'-'));

            #[inline(always)]
            fn word(w: u64) -> u64 {
                let x = w & !HIGHS;
                // Setting bit 5 folds 'A'..='Z' onto 'a'..='z' and nothing else onto them.
                let fits = within(x | (ONES * 0x20), b'a', b'z')
                    | within(x, b'0', b'9')
                    | within(x, b'-', b'.')
                    | within(x, b'_', b'_');
                (w | !fits) & HIGHS
            }
        }

        /// Bytes below 0x20, 0x7F, and 0xC2 (the lead byte of U+0080-U+00BF): the only bytes a
        /// banned control character can start with. Tab, line feed and carriage return are
        /// allowed but in the set, so a name holding them is looked at character by character.
        pub(super) struct ControlSuspects;

        impl ByteClass for ControlSuspects {
            const BYTES: [bool; 256] = byte_table!(|b| b < 0x20 || b == 0x7f || b == 0xc2);

            #[inline(always)]
            fn word(w: u64) -> u64 {
                let x = w & !HIGHS;
                let ascii = !at_least(x, 0x20) | at_least(x, 0x7f);
                ((ascii & !w) | (within(x, 0x42, 0x42) & w)) & HIGHS
            }
        }

        /// The eight bytes of `s` from `at`, little-endian.
        #[inline(always)]
        fn load8(s: &[u8], at: usize) -> u64 {
            let mut w = [0; 8];
            w.copy_from_slice(&s[at..at + 8]);
            u64::from_le_bytes(w)
        }

        /// The four bytes of `s` from `at`, little-endian.
        #[inline(always)]
        fn load4(s: &[u8], at: usize) -> u64 {
            let mut w = [0; 4];
            w.copy_from_slice(&s[at..at + 4]);
            u64::from(u32::from_le_bytes(w))
        }

        /// Whether any byte of `s` is in `C` (false for an empty slice). Up to 16 bytes make two
        /// words that overlap rather than a loop: the first and last eight bytes, or the first
        /// and last four twice; fewer than four bytes are looked up one by one.
        #[inline(always)]
        pub(super) fn any<C: ByteClass>(s: &[u8]) -> bool {
            let n = s.len();
            let (a, b) = if n > 16 {
                return any_long::<C>(s);
            } else if n >= 8 {
                (load8(s, 0), load8(s, n - 8))
            } else if n >= 4 {
                let w = load4(s, 0) | load4(s, n - 4) << 32;
                (w, w)
            } else if n > 0 {
                return C::BYTES[usize::from(s[0])]
                    | C::BYTES[usize::from(s[n / 2])]
                    | C::BYTES[usize::from(s[n - 1])];
            } else {
                return false;
            };
            C::word(a) | C::word(b) != 0
        }

        /// [`any`] for slices of more than 16 bytes, kept out of line: its loop needs registers
        /// that the short cases, inlined into callers' loops over map keys, do not.
        #[inline(never)]
        fn any_long<C: ByteClass>(s: &[u8]) -> bool {
            let mut acc = 0;
            let mut words = s.chunks_exact(8);
            for w in &mut words {
                acc |= C::word(load8(w, 0));
            }
            if !words.remainder().is_empty() {
                acc |= C::word(load8(s, s.len() - 8));
            }
            acc != 0
        }
    }

    /// Records a missing REQUIRED field.
    #[inline]
    pub fn required(path: &FieldPath<'_>, out: &mut Violations) {
        out.push(path, RuleId::Required, "is REQUIRED");
    }

    /// Checks a string's size.
    #[inline]
    pub fn max_bytes(s: &str, max: usize, path: &FieldPath<'_>, out: &mut Violations) {
        if s.len() > max {
            out.push(
                path,
                RuleId::MaxBytes,
                format!("is {} bytes, more than the limit of {max}", s.len()),
            );
        }
    }

    /// Checks the total size of a map (keys plus values).
    #[inline]
    pub fn max_total_map<'a, K, V, I>(
        map: I,
        max: usize,
        path: &FieldPath<'_>,
        out: &mut Violations,
    ) where
        K: AsRef<str> + 'a,
        V: AsRef<str> + 'a,
        I: IntoIterator<Item = (&'a K, &'a V)>,
    {
        let total: usize = map.into_iter().map(|(k, v)| k.as_ref().len() + v.as_ref().len()).sum();
        if total > max {
            out.push(
                path,
                RuleId::MaxTotalBytes,
                format!("holds {total} bytes of keys and values, more than the limit of {max}"),
            );
        }
    }

    /// Checks the total size of a repeated string.
    #[inline]
    pub fn max_total_list<S: AsRef<str>>(
        list: &[S],
        max: usize,
        path: &FieldPath<'_>,
        out: &mut Violations,
    ) {
        let total: usize = list.iter().map(|s| s.as_ref().len()).sum();
        if total > max {
            out.push(
                path,
                RuleId::MaxTotalBytes,
                format!("holds {total} bytes, more than the limit of {max}"),
            );
        }
    }

    /// Checks a number is not negative.
    #[inline]
    pub fn non_negative<N: PartialOrd + Default>(n: N, path: &FieldPath<'_>, out: &mut Violations) {
        if n < N::default() {
            out.push(path, RuleId::NonNegative, "MUST NOT be negative");
        }
    }

    /// Checks a name has none of the banned control characters.
    #[inline]
    pub fn no_control_chars(s: &str, path: &FieldPath<'_>, out: &mut Violations) {
        if !word::any::<word::ControlSuspects>(s.as_bytes()) {
            return;
        }
        if let Some(pos) = s.chars().position(is_banned_control) {
            out.push(
                path,
                RuleId::ControlChars,
                format!("holds a banned control character at character {pos}"),
            );
        }
    }

    /// Checks every key of a secrets map.
    #[inline]
    pub fn secret_keys<'a, K, V, I>(map: I, path: &FieldPath<'_>, out: &mut Violations)
    where
        K: AsRef<str> + 'a,
        V: 'a,
        I: IntoIterator<Item = (&'a K, &'a V)>,
    {
        for (k, _) in map {
            let k = k.as_ref();
            if !is_secret_key(k) {
                // Keys may be shown; values never are.
                out.push(
                    &path.key(k),
                    RuleId::SecretKey,
                    "secret keys hold only letters, digits, '.', '_' and '-'",
                );
            }
        }
    }

    #[cfg(test)]
    mod tests {
        //! The word-at-a-time classes against their per-byte definitions.

        use super::word::{self, ByteClass, ControlSuspects, SecretKeyMisfits};
        use super::{has_banned_control, is_banned_control, is_secret_key};

        fn secret_key_byte(b: u8) -> bool {
            b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || b == b'-'
        }

        fn control_suspect_byte(b: u8) -> bool {
            b < 0x20 || b == 0x7f || b == 0xc2
        }

        fn check_class<C: ByteClass>(s: &[u8], in_set: fn(u8) -> bool) {
            assert_eq!(
                word::any::<C>(s),
                s.iter().any(|&b| in_set(b)),
                "{} on {s:02x?}",
                std::any::type_name::<C>()
            );
        }

        fn check_slice(s: &[u8]) {
            check_class::<SecretKeyMisfits>(s, |b| !secret_key_byte(b));
            check_class::<ControlSuspects>(s, control_suspect_byte);
        }

        #[test]
        fn tables_hold_the_definitions() {
            for b in 0..=255u8 {
                assert_eq!(
                    SecretKeyMisfits::BYTES[usize::from(b)],
                    !secret_key_byte(b),
                    "{b:#04x}"
                );
                assert_eq!(
                    ControlSuspects::BYTES[usize::from(b)],
                    control_suspect_byte(b),
                    "{b:#04x}"
                );
            }
        }

        /// splitmix64: a fixed sequence, so a failure reproduces.
        struct Rng(u64);

        impl Rng {
            fn next(&mut self) -> u64 {
                self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
                let mut z = self.0;
                z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
                z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
                z ^ (z >> 31)
            }

            fn below(&mut self, n: usize) -> usize {
                (self.next() % n as u64) as usize
            }
        }

        #[test]
        fn every_single_byte_at_every_position() {
            for filler in [b'a', b'-', b'Z', b'7'] {
                for len in 1..=40 {
                    for pos in 0..len {
                        for b in 0..=255u8 {
                            let mut s = vec![filler; len];
                            s[pos] = b;
                            check_slice(&s);
                        }
                    }
                }
            }
        }

        #[test]
        fn every_pair_of_neighbouring_bytes() {
            for (i, j) in [(0, 1), (3, 4), (6, 7), (7, 8)] {
                for a in 0..=255u8 {
                    for b in 0..=255u8 {
                        let mut s = [b'a'; 12];
                        s[i] = a;
                        s[j] = b;
                        check_slice(&s);
                    }
                }
            }
        }

        #[test]
        fn random_byte_strings_of_every_length() {
            // Mostly key characters, so the rare misfit lands in every word and tail position.
            let mut rng = Rng(0x5eed);
            let specials: Vec<u8> = (0..0x20)
                .chain([
                    0x7f, 0x80, 0x9f, 0xa0, 0xc2, 0xc3, 0xff, b' ', b'/', b'@', b'[', b'`', b'{',
                    b'~', b':', b'^',
                ])
                .collect();
            let keys: Vec<u8> = (b'a'..=b'z')
                .chain(b'A'..=b'Z')
                .chain(b'0'..=b'9')
                .chain([b'.', b'_', b'-'])
                .collect();
            for len in 0..=70 {
                for _ in 0..2_000 {
                    let odds = rng.below(4);
                    let s: Vec<u8> = (0..len)
                        .map(|_| match rng.below(64) {
                            r if r < odds => specials[rng.below(specials.len())],
                            63 => rng.next() as u8,
                            _ => keys[rng.below(keys.len())],
                        })
                        .collect();
                    check_slice(&s);
                }
            }
        }

        #[test]
        fn random_text_matches_the_character_definitions() {
            let mut rng = Rng(0xc51);
            let chars: Vec<char> = ('\0'..='\u{20}')
                .chain([
                    'a', 'Z', '0', '.', '_', '-', '/', '~', '\u{7e}', '\u{7f}', '\u{80}', '\u{85}',
                    '\u{9f}', '\u{a0}', '\u{bf}', '\u{c0}', 'é', 'ł', '\u{2028}', '日', '🦀',
                ])
                .collect();
            for len in 0..=70 {
                for _ in 0..1_000 {
                    let plain = rng.below(3) == 0;
                    let s: String = (0..len)
                        .map(|_| {
                            if plain || rng.below(8) != 0 {
                                char::from(b'a' + rng.below(26) as u8)
                            } else {
                                chars[rng.below(chars.len())]
                            }
                        })
                        .collect();
                    assert_eq!(has_banned_control(&s), s.chars().any(is_banned_control), "{s:?}");
                    assert_eq!(
                        is_secret_key(&s),
                        !s.is_empty() && s.bytes().all(secret_key_byte),
                        "{s:?}"
                    );
                }
            }
        }

        #[test]
        fn empty_strings_hold_nothing_and_are_not_keys() {
            assert!(!is_secret_key(""));
            assert!(!word::any::<SecretKeyMisfits>(b""));
            assert!(!word::any::<ControlSuspects>(b""));
        }
    }
}

/// Why `csikit::validate_encoded` refused a message.
#[derive(Debug)]
pub enum ValidateEncodedError {
    /// No message type has that full name.
    UnknownType(String),
    /// The bytes do not decode as that type.
    Decode(prost::DecodeError),
    /// The message decoded and broke the spec's rules.
    Invalid(Violations),
}

impl fmt::Display for ValidateEncodedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ValidateEncodedError::UnknownType(name) => {
                write!(f, "no message type is named '{name}'")
            }
            ValidateEncodedError::Decode(e) => write!(f, "the bytes do not decode: {e}"),
            ValidateEncodedError::Invalid(v) => write!(f, "{} violation(s): {v}", v.len()),
        }
    }
}

impl std::error::Error for ValidateEncodedError {}

/// A request that breaks the spec's rules is the caller's error: INVALID_ARGUMENT, with every
/// violation's path and rule in the message (never a value).
#[cfg(feature = "tonic")]
impl From<Violations> for tonic::Status {
    fn from(v: Violations) -> Self {
        tonic::Status::invalid_argument(v.to_string())
    }
}
