//! `schedsim completions SHELL`: a completion script for bash, zsh, fish, elvish or
//! PowerShell, printed to stdout (e.g. `schedsim completions bash > /etc/bash_completion.d/schedsim`).

use clap::{Args, CommandFactory};
use clap_complete::Shell;

#[derive(Debug, Args)]
pub struct CompletionsArgs {
    pub shell: Shell,
}

pub fn run(args: &CompletionsArgs) -> i32 {
    let mut cmd = super::Cli::command();
    clap_complete::generate(args.shell, &mut cmd, "schedsim", &mut std::io::stdout());
    crate::error::exit_code::SUCCESS
}
