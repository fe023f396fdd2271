//! The `phalanx` program: the process entry point of [`phalanx::run`].

fn main() {
    // The handles lock per write, not for the whole run: a progress bar drawn on stderr from
    // another thread (indicatif, updated from the rayon workers of `verify`) must be able to take
    // the stderr lock while the command runs.
    let code = phalanx::run(std::env::args_os(), &mut std::io::stdout(), &mut std::io::stderr());
    std::process::exit(code);
}
