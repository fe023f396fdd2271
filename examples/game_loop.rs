//! The command line of the two-peer game in `src/lib.rs` (read that first); the command line
//! itself is `phalanx_examples::cli::game_loop`, which the docs test runs as well.
//!
//! ```text
//! cargo run --release -p phalanx-examples --example game_loop -- [--turns N] [--desync-at TURN] [--record DIR]
//! ```

use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    // `World::plant_desync` exists with sim's `desync-hook` feature, which this example's
    // dev-dependency on sim enables; the library never does.
    let code = phalanx_examples::cli::game_loop(&args, &mut std::io::stdout(), &mut std::io::stderr(), &mut |world, unit| {
        world.plant_desync(unit)
    });
    ExitCode::from(code)
}
