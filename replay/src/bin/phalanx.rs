//! The `phalanx` command-line program; see `replay::cli`.

fn main() {
    let stdout = std::io::stdout();
    let stderr = std::io::stderr();
    let code = replay::cli::run(std::env::args_os(), &mut stdout.lock(), &mut stderr.lock());
    std::process::exit(code);
}
