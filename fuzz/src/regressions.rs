//! Regression tests for the bugs the fuzz targets found, one per bug, each with the minimised input
//! kept under `regressions/TARGET/NAME`, plus a test that runs every such input through its body.

use std::path::{Path, PathBuf};

use pathing::{Fixed, Goal, Square, Vec2, WorldPos};

use crate::TARGETS;

fn regressions_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("regressions")
}

/// Runs the body of `target` over its regression input `name`.
#[track_caller]
fn replay(target: &str, name: &str) {
    let body = TARGETS.iter().find(|(t, _)| *t == target).unwrap_or_else(|| panic!("no target {target}")).1;
    let path = regressions_dir().join(target).join(name);
    body(&std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())));
}

/// Every regression input of every target runs cleanly through its body (a directory per target,
/// present only for targets that have found something).
#[test]
fn regression_inputs_replay_cleanly() {
    let mut n = 0;
    for (name, body) in TARGETS {
        let dir = regressions_dir().join(name);
        let Ok(entries) = std::fs::read_dir(&dir) else { continue };
        for entry in entries {
            let path = entry.expect("readable regression entry").path();
            body(&std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())));
            n += 1;
        }
    }
    assert!(n >= 3, "the regression inputs are missing");
}

/// `command_stream` found it: a command with a coordinate of `Fixed::MIN` (a spawn point) panicked
/// with "attempt to negate with overflow" in `pathing`'s range checks, which used `Fixed::abs`
/// (`coord_ok` and the axis check of `Square::new`, `raster::oriented_square`, `Polygon::new`).
/// They now compare against the range, and refuse the value.
#[test]
fn fixed_min_coordinates_are_refused_not_overflowed() {
    replay("command_stream", "fixed_min_coordinate");
    let min = WorldPos::new(Fixed::MIN, Fixed::ZERO);
    assert_eq!(Goal::point(min), Err(pathing::GoalError::OutOfRange));
    assert_eq!(Goal::circle(WorldPos::new(Fixed::ZERO, Fixed::MIN), Fixed::ONE), Err(pathing::GoalError::OutOfRange));
    assert_eq!(Square::axis_aligned(min, Fixed::ZERO, Fixed::ZERO), Err(pathing::GoalError::OutOfRange));
    let (u, v) = (Vec2::new(Fixed::MIN, Fixed::ZERO), Vec2::new(Fixed::ZERO, Fixed::ONE));
    assert_eq!(Square::new(WorldPos::new(Fixed::ZERO, Fixed::ZERO), Fixed::ONE, Fixed::ONE, u, v), Err(pathing::GoalError::AxisTooLong));
    assert_eq!(pathing::raster::oriented_square(min, Fixed::ONE, Fixed::ONE, Fixed::ZERO), Err(pathing::GoalError::OutOfRange));
    let triangle = vec![min, WorldPos::from_int(1, 0), WorldPos::from_int(0, 1)];
    assert!(matches!(pathing::polygon::Polygon::new(triangle), Err(pathing::polygon::PolygonError::OutOfRange { index: 0 })));
}

/// `fixed_math` found it: `parse_fixed("0.6809005")` gave 44624 raw units, but the value is
/// 44623.495168 raw units, so the nearest is 44623. `fixed`'s own parser rounds some long decimals
/// twice; `parse_fixed` now rounds the exact value once (half to even).
#[test]
fn parse_fixed_rounds_long_decimals_once() {
    replay("fixed_math", "parse_fixed_double_rounding");
    assert_eq!(pathing::decimal::parse_fixed("0.6809005").map(Fixed::to_bits), Ok(44623));
    assert_eq!(pathing::decimal::parse_fixed("-0.6809005").map(Fixed::to_bits), Ok(-44623));
    assert_eq!(pathing::decimal::parse_fixed("0.6809006").map(Fixed::to_bits), Ok(44624));
}

/// `command_stream` found it: with `u32::MAX` as the next obstruction id (an initial obstruction
/// numbered `u32::MAX − 1`), `PlaceObstruction` is refused ("obstruction ids exhausted", as the
/// simulation documents: `u32::MAX` is never handed out), but `PlaceBuilding` skips that check,
/// placed the building as obstruction `u32::MAX` and wrapped the counter to 0, so later ids could
/// repeat ids handed out before. Now the building is refused like the obstruction, and nothing
/// changes.
#[test]
fn place_building_refuses_the_exhausted_obstruction_id() {
    use pathing::classes::ClassSet;
    use pathing::passability::{Obstruction, ObstructionFlags, WorldDesc};
    use pathing::terrain::CellKind;
    use sim::{Command, CommandKind, Event, RejectReason, SquareSpec};
    use sim::{Settings, World};

    replay("command_stream", "place_building_hands_out_u32_max");
    let desc =
        WorldDesc::from_cells(32, 32, Fixed::ONE, vec![CellKind::Ground; 32 * 32], ClassSet::zero_ad_defaults()).expect("a small world");
    let square =
        pathing::raster::editor_square(Fixed::from_num(4), Fixed::from_num(4), Fixed::from_num(2), Fixed::from_num(2), Fixed::ZERO);
    let last = (pathing::ObstructionId(u32::MAX - 1), Obstruction { square: square.expect("a square"), flags: ObstructionFlags::STATIC });
    let mut world = World::new(desc, vec![last], Settings::default()).expect("a valid world");
    let at = |x: i32| SquareSpec {
        x: Fixed::from_num(x),
        z: Fixed::from_num(20),
        w: Fixed::from_num(4),
        h: Fixed::from_num(4),
        degrees: Fixed::ZERO,
    };
    let cmd = |seq: u32, kind: CommandKind| Command { turn: 0, player: sim::PlayerId(1), seq, kind };
    let report = world.step(&[
        cmd(0, CommandKind::PlaceObstruction { square: at(8), flags: 3 }),
        cmd(1, CommandKind::PlaceBuilding { class: pathing::PassClass::of(4), square: at(16), builder: None }),
        cmd(2, CommandKind::PlaceObstruction { square: at(24), flags: 3 }),
    ]);
    assert_eq!(
        report.events,
        vec![
            Event::Rejected { command: (0, sim::PlayerId(1), 0), reason: RejectReason::IdsExhausted(sim::IdKind::Obstruction) },
            Event::Rejected { command: (0, sim::PlayerId(1), 1), reason: RejectReason::IdsExhausted(sim::IdKind::Obstruction) },
            Event::Rejected { command: (0, sim::PlayerId(1), 2), reason: RejectReason::IdsExhausted(sim::IdKind::Obstruction) },
        ]
    );
}
