//! `neli-lab completions SHELL` and `neli-lab man`: shell completions and
//! the roff man page, generated from the command line `src/main.rs`
//! declares, so they name every subcommand and flag there is.

use std::io::Write;
use std::process::ExitCode;

use clap_complete::Shell;

/// `completions`' arguments.
#[derive(clap::Args, Debug)]
pub struct CompletionsArgs {
    /// The shell to complete for: bash, zsh, fish, powershell or elvish.
    #[arg(value_enum)]
    shell: Shell,
}

/// `man`'s arguments.
#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// A subcommand's own page (`neli-lab-run(1)`) instead of the main one.
    subcommand: Option<String>,
}

/// Prints the completion script of `a.shell` for `cmd` on stdout.
pub fn completions(a: CompletionsArgs, mut cmd: clap::Command) -> ExitCode {
    let name = cmd.get_name().to_owned();
    let mut out = Vec::new();
    clap_complete::generate(a.shell, &mut cmd, name, &mut out);
    print_all(&out)
}

/// Prints the man page of `cmd` (or of one of its subcommands) on stdout,
/// in roff: `neli-lab man | man -l -`.
pub fn man(a: ManArgs, cmd: clap::Command) -> ExitCode {
    let cmd = match &a.subcommand {
        None => cmd,
        Some(name) => {
            let mut cmd = cmd;
            cmd.build();
            let page = format!("{}-{name}", cmd.get_name());
            let version = cmd.get_version().unwrap_or_default().to_owned();
            let names: Vec<String> = cmd.get_subcommands().map(|s| s.get_name().to_owned()).collect();
            match cmd.find_subcommand(name) {
                Some(sub) => sub.clone().name(page).version(version),
                None => return super::fail(format!("man {name}: no such subcommand (one of {})", names.join(", "))),
            }
        }
    };
    let mut out = Vec::new();
    if let Err(err) = clap_mangen::Man::new(cmd).render(&mut out) {
        return super::fail(format!("man: cannot render the page: {err}"));
    }
    print_all(&out)
}

/// Writes `bytes` to stdout; a closed pipe (`| head`) is no error.
fn print_all(bytes: &[u8]) -> ExitCode {
    let mut stdout = std::io::stdout().lock();
    match stdout.write_all(bytes).and_then(|()| stdout.flush()) {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) if err.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(err) => super::fail(format!("cannot write to stdout: {err}")),
    }
}
