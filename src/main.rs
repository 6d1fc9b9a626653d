use clap::Parser;

fn main() {
    let cli = schedsim::cli::Cli::parse();
    schedsim::interrupt::install();
    std::process::exit(schedsim::cli::main(cli));
}
