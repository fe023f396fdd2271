//! The aura game's own `phalanx` program: every command of the stock program, for this game's
//! replays and scenarios as well as the reference game's.

fn main() {
    phalanx_cli::Program::new().named("aura").ruleset(aura::ruleset()).run()
}
