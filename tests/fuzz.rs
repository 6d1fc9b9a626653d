//! A short, bounded pass of the mutation fuzzer (`tests/fuzz/harness.rs`); the long run is
//! `cargo run --release --example fuzz -- 1000000`.

#[path = "fuzz/harness.rs"]
mod harness;

#[test]
fn a_bounded_fuzz_pass_finds_no_panic() {
    let stats = harness::run(3_000, 7, |_| {});
    assert_eq!(stats.inputs, 3_000);
    assert!(
        stats.loader > 0
            && stats.quantities > 0
            && stats.merges > 0
            && stats.selectors > 0
            && stats.metadata > 0
    );
    assert_eq!(stats.panics, 0, "{:#?}", stats.crashes);
}
