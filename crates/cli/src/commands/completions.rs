//! `gigagas completions SHELL`: a shell completion script (clap_complete), to stdout.

use anyhow::Result;
use clap::Args;

/// `gigagas completions ...`.
#[derive(Args)]
pub struct CompletionsArgs {
    /// The shell: bash, zsh, fish, elvish or powershell.
    #[arg(value_enum)]
    shell: clap_complete::Shell,
}

/// Writes the completion script of the command line `C` for the shell asked for.
pub fn exec<C: clap::CommandFactory>(args: CompletionsArgs) -> Result<()> {
    let mut command = C::command();
    let mut script = Vec::new();
    clap_complete::generate(args.shell, &mut command, "gigagas", &mut script);
    let text = String::from_utf8_lossy(&script);
    crate::common::out_raw!("{text}");
    Ok(())
}
