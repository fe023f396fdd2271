//! Restoring a replay's world at the start of a turn: the nearest keyframe at or before it is
//! loaded (or the world is built from the embedded scenario when there is none) and the turns
//! between are re-simulated, each checked against the hash the replay recorded.
//!
//! This is how `phalanx render` finds the state it draws and how `phalanx seek` finds the state it
//! summarises.

use std::io::Read;

use sim::World;
use sim::state_hash::hex;

use crate::format::{End, Record, ReplayReader};
use crate::verify::scenario_world;

/// Which turn to restore.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SeekTarget {
    /// The state at the start of this turn (after `turn` turns were stepped).
    Turn(u32),
    /// The state after the last turn the replay records.
    End,
}

/// The first re-simulated turn whose hash differs from the recording: from there on the restored
/// world is this engine's, not the recorded game's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SeekDivergence {
    /// The turn stepped.
    pub turn: u32,
    /// The hash the replay recorded for it, hex.
    pub recorded: String,
    /// The hash the re-simulation reached, hex.
    pub found: String,
    /// The state-digest components whose roots differ, in the digest's order.
    pub components: Vec<String>,
}

/// A world restored from a replay.
#[derive(Debug)]
pub struct Restored {
    /// The world at the start of the turn asked for.
    pub world: World,
    /// The turn of the keyframe it was loaded from; `None` when built from the scenario.
    pub keyframe: Option<u32>,
    /// Turns re-simulated after the keyframe (or from the scenario).
    pub resimulated: u32,
    /// The first re-simulated turn that did not reach its recorded hash, if any.
    pub divergence: Option<SeekDivergence>,
}

/// Restores the world of a replay at `target`, reading the replay as a stream (one keyframe and
/// the turn records after it are held at a time). `name` names the file in messages.
///
/// # Errors
/// A one-line message starting with `name`: the replay is damaged or of another version, the turn
/// is beyond what it records, or a keyframe does not load.
pub fn restore(
    input: impl Read,
    name: &str,
    target: SeekTarget,
    threads: usize,
    rulesets: &crate::rules::Rulesets,
) -> Result<Restored, String> {
    let damaged = |e: crate::format::ReplayError| format!("{name}: {e}");
    let mut reader = ReplayReader::new(input).map_err(damaged)?;
    let header = reader.header().clone();
    let limit = match target {
        SeekTarget::Turn(t) => t,
        SeekTarget::End => u32::MAX,
    };
    // The latest keyframe at or before the turn, and the turn records after it.
    // With the keyframe, the hash the replay recorded for the turn before it, which its state must
    // have before it is trusted.
    let mut keyframe: Option<(u32, Vec<u8>, Option<[u8; 32]>)> = None;
    let mut pending = Vec::new();
    let mut last_hash: Option<[u8; 32]> = None;
    while let Some(record) = reader.next_record().map_err(damaged)? {
        match record {
            Record::Keyframe { turn: k, snapshot } if k <= limit => {
                keyframe = Some((k, snapshot, last_hash));
                pending.clear();
            }
            Record::Turn(t) if t.turn < limit => {
                last_hash = Some(t.digest(&header.components).hash);
                pending.push(t);
            }
            Record::Turn(_) | Record::Keyframe { .. } => break,
            Record::Footer(_) => {}
        }
    }
    let recorded = pending.last().map_or(0, |t| t.turn + 1).max(keyframe.as_ref().map_or(0, |k| k.0));
    if let SeekTarget::Turn(turn) = target
        && recorded < turn
    {
        let end = match reader.end() {
            Some(End::Truncated { offset }) => format!(" (cut off at offset {offset})"),
            _ => String::new(),
        };
        return Err(format!("{name}: turn {turn} is beyond the replay, which records {recorded} turns{end}"));
    }
    let mut world = match &keyframe {
        Some((k, snapshot, recorded_hash)) => {
            // The scenario's world first: it checks the header's rules against the scenario's.
            let start = scenario_world(&header, rulesets).map_err(|e| format!("{name}: {e}"))?;
            let mut w = start.load_like(snapshot).map_err(|e| format!("{name}: keyframe of turn {k}: {e}"))?;
            if w.turn() != *k {
                return Err(format!("{name}: the keyframe record of turn {k} holds a snapshot of turn {}", w.turn()));
            }
            let state = w.state_hash();
            if *recorded_hash != Some(state) {
                let recorded = recorded_hash.map_or_else(|| "none".to_owned(), |h| hex(&h)[..16].to_owned());
                return Err(format!(
                    "{name}: the keyframe of turn {k} holds a state of hash {}, but the replay recorded {recorded} for turn {}: the keyframe is damaged or forged",
                    &hex(&state)[..16],
                    k.wrapping_sub(1)
                ));
            }
            crate::verify::start_threads(&mut w, threads).map_err(|e| e.to_string())?;
            w
        }
        None => {
            let mut w = scenario_world(&header, rulesets).map_err(|e| format!("{name}: {e}"))?;
            crate::verify::start_threads(&mut w, threads).map_err(|e| e.to_string())?;
            w
        }
    };
    let mut divergence = None;
    for t in &pending {
        let report = world.step(&t.commands);
        let expected = t.digest(&header.components);
        if report.hash != expected.hash && divergence.is_none() {
            divergence = Some(SeekDivergence {
                turn: t.turn,
                recorded: hex(&expected.hash),
                found: hex(&report.hash),
                components: expected.differing_components(&report.digest),
            });
        }
    }
    Ok(Restored { world, keyframe: keyframe.map(|k| k.0), resimulated: pending.len() as u32, divergence })
}
