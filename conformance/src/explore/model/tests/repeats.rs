//! Refusals that never pass: a valid clone refused with one code three times in a row, while
//! another volume's clone is served, breaks the support MUST (UNKNOWN, INTERNAL) or is the
//! transient note; fewer times, another code between, nothing served, or histories in flight
//! at once, nothing.

use super::*;

fn clone(name: u16, of: Vol) -> Call {
    Call::CreateVolume { name, mib: 0, limit: 0, source: Some(Source::Volume(of)) }
}

/// Two volumes (names 0 and 1), and (`served`) a clone of the second answered OK.
fn two(alone: bool, served: bool) -> Model {
    let mut m = Model::new(Caps { alone, ..caps() });
    assert!(rules_of(&mut m, create(0, 1), ok_volume("a", MIB)).is_empty());
    assert!(rules_of(&mut m, create(1, 1), ok_volume("b", MIB)).is_empty());
    if served {
        assert!(rules_of(&mut m, clone(2, v(1, 0)), ok_volume("c", MIB)).is_empty());
    }
    m
}

#[test]
fn the_third_refusal_in_a_row_with_one_code_is_judged_by_its_code() {
    let mut m = two(true, true);
    let mut name = 3;
    let mut refuse = |m: &mut Model, code: Code| {
        name += 1;
        rules_of(m, clone(name, v(0, 0)), error(code))
    };
    for _ in 0..2 {
        assert!(refuse(&mut m, Code::Unavailable).is_empty());
    }
    assert_eq!(refuse(&mut m, Code::Unavailable), [Rule::RefusalTransientRepeated]);
    // Another code starts the count again.
    for _ in 0..2 {
        assert!(refuse(&mut m, Code::Internal).is_empty());
    }
    assert!(refuse(&mut m, Code::Unknown).is_empty());
    assert!(refuse(&mut m, Code::Unknown).is_empty());
    assert_eq!(refuse(&mut m, Code::Unknown), [Rule::CloneSupported]);
    // An OK clears it.
    assert!(rules_of(&mut m, clone(90, v(0, 0)), ok_volume("d", MIB)).is_empty());
    assert!(refuse(&mut m, Code::Internal).is_empty());
    assert!(refuse(&mut m, Code::Internal).is_empty());
    assert_eq!(refuse(&mut m, Code::Internal), [Rule::CloneSupported]);
}

#[test]
fn refusals_in_a_row_are_not_judged_with_nothing_served_or_histories_in_flight() {
    for (alone, served) in [(true, false), (false, true)] {
        let mut m = two(alone, served);
        for name in 10..16 {
            let rules = rules_of(&mut m, clone(name, v(0, 0)), error(Code::Internal));
            assert!(rules.is_empty(), "alone {alone}, served {served}: {rules:?}");
        }
    }
}
