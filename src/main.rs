use clap::Parser;

/// mimalloc instead of glibc's malloc: loading a cluster dump builds millions of small strings
/// and maps, and glibc's allocator was a fifth of a whole run's time (perf, 5,000 nodes ×
/// 10,000 pods in one file).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() {
    let cli = schedsim::cli::Cli::parse();
    schedsim::interrupt::install();
    std::process::exit(schedsim::cli::main(cli));
}
