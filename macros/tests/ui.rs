//! Compile errors for misuse point at the exact attribute. Bless with
//! `TRYBUILD=overwrite cargo test -p csikit-macros --test ui` and review the `.stderr` files.

#[test]
fn misuse_is_reported_at_the_attribute() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
}
