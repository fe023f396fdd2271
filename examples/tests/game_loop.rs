//! The game loop of `phalanx-examples` run for real: two peers agree every turn, their replays
//! are byte-identical and verify; a planted one-bit divergence is caught on its turn and located
//! to its component, entity range and unit, and `phalanx verify` finds it in peer B's replay.

use phalanx_examples::{KEYFRAME_EVERY, run_game};
use replay::verify::{DivergenceKind, Outcome, VerifyOptions, verify};
use sim::World;

const TURNS: u32 = 100;

#[test]
fn two_peers_agree_every_turn_and_their_replays_verify() {
    let mut hashes = Vec::new();
    let outcome = run_game(TURNS, Some([Vec::new(), Vec::new()]), &mut |_| {}, &mut |_, r| hashes.push(r.hash)).unwrap();
    assert!(outcome.desync.is_none());
    assert_eq!(outcome.turns, TURNS);
    // The AIs played: both armies spawned, the scouts crossed the map over the waypoint network
    // and were routed home, both barracks went up, and nothing was refused.
    let n = outcome.counts;
    assert_eq!((n.spawned, n.routes, n.placed, n.rejected), (24, 24, 2, 0), "{n:?}");
    assert!(n.arrived > 24, "{n:?}");

    // One thread or two, the same game: the two recordings are the same bytes.
    let [a, b] = outcome.replays.unwrap();
    assert_eq!(a, b);
    let report = verify(&a[..], "a.replay", &VerifyOptions::default(), None, &|| {});
    assert_eq!(report.outcome, Outcome::Identical, "{}", report.to_text());
    assert_eq!((report.turns_verified, report.keyframes_checked), (TURNS, TURNS / KEYFRAME_EVERY));

    // A second game is the same game.
    let again = run_game::<Vec<u8>>(TURNS, None, &mut |_| {}, &mut |_, _| {}).unwrap();
    assert_eq!(again.final_hash, *hashes.last().unwrap());
}

#[test]
fn a_planted_desync_is_located_to_its_turn_component_range_and_unit() {
    // A keyframe turn: the fault comes after the keyframe is written, as a bug in a turn would.
    const AT: u32 = 3 * KEYFRAME_EVERY;
    let mut victim = None;
    let mut fault = |world: &mut World| {
        if world.turn() == AT {
            let unit = world.units().next().unwrap().id;
            assert!(world.plant_desync(unit));
            victim = Some(unit);
        }
    };
    let outcome = run_game(TURNS, Some([Vec::new(), Vec::new()]), &mut fault, &mut |_, _| {}).unwrap();
    let victim = victim.unwrap();
    let d = outcome.desync.expect("the peers disagree");
    assert_eq!((d.turn, outcome.turns), (AT, AT + 1));
    assert_eq!(d.components, ["units"]);
    assert_eq!(d.leaves.len(), 1);
    assert_eq!((d.leaves[0].component.as_str(), d.leaves[0].leaves.as_slice()), ("units", &[victim.index / 64][..]));
    // The victim differs, and so do the neighbours the push-apart moved off it in that turn.
    let ids: Vec<_> = d.units.iter().map(|(a, b)| a.as_ref().or(b.as_ref()).unwrap().id).collect();
    assert!(ids.contains(&victim) && ids.iter().all(|id| id.index / 64 == victim.index / 64), "{ids:?}");
    let snapshots = d.snapshots;
    assert_ne!(snapshots[0], snapshots[1]);

    // Peer A's replay is the true game; peer B's recorded the perturbed hashes, and re-simulating
    // it finds the turn, the component and the unit's field.
    let [a, b] = outcome.replays.unwrap();
    let report = verify(&a[..], "a.replay", &VerifyOptions::default(), None, &|| {});
    assert_eq!(report.outcome, Outcome::Identical, "{}", report.to_text());
    let report = verify(&b[..], "b.replay", &VerifyOptions::default(), None, &|| {});
    assert_eq!(report.outcome, Outcome::Diverged, "{}", report.to_text());
    let div = report.divergence.as_ref().unwrap();
    assert_eq!((div.kind, div.turn, div.components.clone()), (DivergenceKind::Hash, AT, vec!["units".to_owned()]));
    let name = format!("{}v{}", victim.index, victim.generation);
    assert!(
        div.diffs.iter().any(|f| f.entity.as_deref().is_some_and(|e| e.ends_with(&name)) && f.field.starts_with("pos.")),
        "{}",
        report.to_text()
    );
}
