//! The `phalanx-net` program: `host` and `join`, networked lockstep games (`session::cli`).

fn main() {
    let code = session::cli::run(std::env::args_os(), &mut std::io::stdout(), &mut std::io::stderr());
    std::process::exit(code);
}
