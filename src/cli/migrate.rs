//! `schedsim migrate FILE`: rewrite `podTemplateOverrides` (Trainer v2.1) as an equivalent
//! `runtimePatches` entry (v2.2+). Prints the migrated YAML, or writes it with `--out`.

use std::path::PathBuf;

use clap::Args;

use crate::error::exit_code;
use crate::report::write_atomic;
use crate::resolve::migrate;
use crate::yaml;

#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// A YAML file with TrainJobs (alone, in a List, or inline in Scenarios).
    pub file: PathBuf,
    /// The manager of the new entry.
    #[arg(long, default_value = migrate::SDK_MANAGER)]
    pub manager: String,
    /// Write here (atomically) instead of printing.
    #[arg(long)]
    pub out: Option<PathBuf>,
}

pub fn run(args: &MigrateArgs) -> i32 {
    let text = match std::fs::read_to_string(&args.file) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("error: {}: {e}", args.file.display());
            return exit_code::BAD_INPUT;
        }
    };
    let docs = match yaml::parse_documents(text.clone(), &args.file) {
        Ok(d) => d,
        Err(e) => {
            eprintln!("error: {e}");
            return exit_code::BAD_INPUT;
        }
    };
    let mut out = format!(
        "# Migrated by schedsim: podTemplateOverrides → runtimePatches (manager {}).\n",
        args.manager
    );
    for (i, doc) in docs.into_iter().enumerate() {
        let mut value = doc.value;
        match migrate::document(&mut value, &args.manager) {
            Ok(notes) => {
                for n in notes {
                    eprintln!("note: {}: {n}", args.file.display());
                }
            }
            Err(e) => {
                eprintln!("error: {}: {e}", args.file.display());
                return exit_code::BAD_INPUT;
            }
        }
        if i > 0 {
            out.push_str("---\n");
        }
        match serde_saphyr::to_string(&value) {
            Ok(y) => out.push_str(&y),
            Err(e) => {
                eprintln!("error: cannot write YAML: {e}");
                return exit_code::BAD_INPUT;
            }
        }
    }
    match &args.out {
        Some(path) => {
            if let Err(e) = write_atomic(path, out.as_bytes()) {
                eprintln!("error: {}: {e}", path.display());
                return exit_code::BAD_INPUT;
            }
        }
        None => print!("{out}"),
    }
    exit_code::SUCCESS
}
