use clap::Parser;

/// jemalloc instead of glibc's malloc: loading a cluster dump builds millions of small strings
/// and maps, and glibc's allocator was a fifth of a whole run's time (perf, 5,000 nodes ×
/// 10,000 pods in one file). jemalloc replaced mimalloc: the same on loads, 9–12 % faster on
/// long replays, whose freed blocks are scattered over a large heap (README "Performance").
#[global_allocator]
static GLOBAL: tikv_jemallocator::Jemalloc = tikv_jemallocator::Jemalloc;

fn main() {
    let cli = schedsim::cli::Cli::parse();
    schedsim::interrupt::install();
    std::process::exit(schedsim::cli::main(cli));
}
