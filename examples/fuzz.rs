//! The mutation fuzzer's long run: `cargo run --release --example fuzz -- [INPUTS] [SEED]`
//! (default 1,000,000 inputs, seed 1). Prints progress, the counts per target, the slowest
//! input, and every panic found; exits 1 if there was one.

#[path = "../tests/fuzz/harness.rs"]
mod harness;

fn main() {
    let mut args = std::env::args().skip(1);
    let inputs: u64 = args
        .next()
        .and_then(|a| a.parse().ok())
        .unwrap_or(1_000_000);
    let seed: u64 = args.next().and_then(|a| a.parse().ok()).unwrap_or(1);
    let started = std::time::Instant::now();
    let stats = harness::run(inputs, seed, |s| {
        if s.inputs % 50_000 == 0 {
            eprintln!(
                "{} inputs, {} panics, {:.0} s",
                s.inputs,
                s.panics,
                started.elapsed().as_secs_f64()
            );
        }
    });
    println!(
        "{} inputs in {:.1} s (seed {seed}): loader {} (full loads {}), quantities {}, merges {}, selectors {}, metadata {}; panics {}",
        stats.inputs,
        started.elapsed().as_secs_f64(),
        stats.loader,
        stats.full_loads,
        stats.quantities,
        stats.merges,
        stats.selectors,
        stats.metadata,
        stats.panics
    );
    println!("slowest: {:?} {}", stats.slowest.0, stats.slowest.1);
    for (target, input, message) in &stats.crashes {
        println!("PANIC in {target}: {message}\n  input: {input:?}");
    }
    std::process::exit(i32::from(stats.panics > 0));
}
