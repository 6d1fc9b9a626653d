use clap::Parser;

fn main() {
    let cli = schedsim::cli::Cli::parse();
    std::process::exit(schedsim::cli::main(cli));
}
