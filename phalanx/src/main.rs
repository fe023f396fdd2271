//! The stock `phalanx` program: the reference game and its demo ([`phalanx_cli::Program::new`]).

fn main() {
    phalanx_cli::Program::new().run()
}
