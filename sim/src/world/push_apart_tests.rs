//! The push-apart's "half each" (docs/motion-rules.md, "Push-apart"; the grid-pathfinding seed's
//! §8: a push of `penetration / 2` per character), against the exact arithmetic of one pass.

use pathing::classes::ClassSet;
use pathing::terrain::{GridSpec, Terrain};

use super::*;

/// Two idle units of radius 0.5 in an open 32 × 32 m world, then set at `a` and `b` (raw), and
/// one turn with `passes` push-apart passes: where the two stand after it.
fn pushed(a: (i64, i64), b: (i64, i64), passes: u8) -> (WorldPos, WorldPos) {
    let m = |n: i32| Fixed::from_num(n);
    let terrain = Terrain::flat(8, 8, m(4), m(12), Fixed::ZERO).unwrap();
    let desc = WorldDesc::new(GridSpec { width: 32, height: 32, cell_size: Fixed::ONE }, ClassSet::zero_ad_defaults(), terrain);
    let mut settings = Settings::default();
    settings.motion.push_iterations = passes;
    let mut world = World::new(desc, Vec::new(), settings).unwrap();
    for (seq, at) in [(0, WorldPos::from_int(5, 5)), (1, WorldPos::from_int(20, 20))] {
        let spawn =
            CommandKind::Spawn { class: pathing::PassClass::of(0), at, count: 1, radius: Fixed::ONE / 2, speed: m(6), turn_rate: None };
        world.step(&[Command { turn: world.turn(), player: crate::PlayerId(1), seq, kind: spawn }]);
    }
    let ids: Vec<EntityId> = world.units().map(|u| u.id).collect();
    for (&id, (x, z)) in ids.iter().zip([a, b]) {
        world.units.get_mut(id).unwrap().pos = WorldPos::new(Fixed::from_bits(x), Fixed::from_bits(z));
    }
    world.step(&[]);
    (world.unit(ids[0]).unwrap().pos, world.unit(ids[1]).unwrap().pos)
}

/// The positions one pass gives by the rule, computed here on its own: each unit moves by half the
/// overlap (rounded down to a raw unit) along the line between the centres, each coordinate of
/// the push truncated toward zero.
fn half_each(a: (i64, i64), b: (i64, i64)) -> ((i64, i64), (i64, i64)) {
    let (dx, dz) = (i128::from(b.0 - a.0), i128::from(b.1 - a.1));
    let d = (dx * dx + dz * dz).isqrt();
    let half = ((1i128 << 16) - d) / 2; // the radius sum is 1 m
    let (px, pz) = ((dx * half / d) as i64, (dz * half / d) as i64);
    ((a.0 - px, a.1 - pz), (b.0 + px, b.1 + pz))
}

#[test]
fn each_unit_of_an_overlapping_pair_moves_by_half_the_overlap() {
    let raw = |p: WorldPos| (p.x.to_bits(), p.z.to_bits());
    let q = 1 << 14; // a quarter metre
    // Apart by 0.625 m along x, along z, on a 3-4-5 diagonal and on an awkward one; none on a
    // navcell border before or after.
    for (a, b) in [
        ((10 * 65536 + q, 10 * 65536 + q), (10 * 65536 + q + 40_960, 10 * 65536 + q)),
        ((12 * 65536 + q, 7 * 65536 + q), (12 * 65536 + q, 7 * 65536 + q + 40_960)),
        ((9 * 65536 + q, 9 * 65536 + q), (9 * 65536 + q + 24_576, 9 * 65536 + q + 32_768)),
        ((14 * 65536 + 20_000, 11 * 65536 + 30_001), (14 * 65536 + 47_123, 11 * 65536 + 7_777)),
    ] {
        let (expect_a, expect_b) = half_each(a, b);
        let (got_a, got_b) = pushed(a, b, 1);
        assert_eq!((raw(got_a), raw(got_b)), (expect_a, expect_b), "{a:?} and {b:?}");
        // Both moved by the same amount, and the pair ends apart by the radius sum to within the
        // rounding (a raw unit per coordinate each).
        let moved = |from: (i64, i64), to: (i64, i64)| (i128::from(to.0 - from.0).pow(2) + i128::from(to.1 - from.1).pow(2)).isqrt();
        assert!((moved(a, expect_a) - moved(b, expect_b)).abs() <= 1);
        let apart = (i128::from(expect_b.0 - expect_a.0).pow(2) + i128::from(expect_b.1 - expect_a.1).pow(2)).isqrt();
        assert!((apart - 65_536).abs() <= 4, "{apart}");
    }
}
