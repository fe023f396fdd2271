//! Locating a desync across peers: the host gathers the disagreeing peers' digest tree leaves and
//! snapshots of the diverging turn, names the turn, component, entity and field, and writes files
//! `phalanx diff` opens.
//!
//! Every peer keeps what it needs to simulate again each turn not yet agreed (`recorder::Recorder`), so
//! on a hash mismatch after turn `t` the host stops closing turns and asks every peer still playing
//! for those of `t`. The leaves locate the divergence with `sim::digest_tree::locate_reports`, as
//! `phalanx verify` does; the snapshots name the entity and field (`replay::diff`).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use replay::diff::FieldDiff;
use sim::digest_tree::{Digest, DigestReport, Divergence, locate_reports};

use super::{HostCore, Phase, hex};
use crate::protocol::HostMsg;

/// The host's questions after a mismatch, and the answers so far (seat 0 is the host).
#[derive(Debug)]
pub(super) struct Locating {
    turn: u32,
    votes: Vec<(u8, Digest)>,
    reference: Digest,
    digests: BTreeMap<u8, Vec<DigestReport>>,
    snapshots: BTreeMap<u8, Vec<u8>>,
    deadline: u64,
}

impl Locating {
    /// The turn after which the hashes differed.
    pub(super) fn turn(&self) -> u32 {
        self.turn
    }
}

/// What a seat whose hash differed from the host's turned out to be, from its snapshot of the
/// turn (simulated again from what it kept) against the host's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Case {
    /// Its world equals the host's, byte for byte: the hash it reported was false (a liar, or a
    /// broken hash), which no resync can mend, since its world already is the host's. It is
    /// dropped and the others play on.
    FalseReport,
    /// Its world differs from the host's: a real divergence.
    Diverged,
    /// It sent no snapshot within the snapshot timeout (`HostConfig::drop_after_ms`), so it
    /// would not prove its state: whether it lied or diverged cannot be told, but it disagreed
    /// with the host and refused the one test that could settle it. It is dropped as the peer
    /// that disagrees, as a false report is, and the others play on; an answer that never comes
    /// can no longer end or stall the game for everyone.
    NoAnswer,
    /// The host could not simulate the turn again for a snapshot of its own, so there was nothing
    /// to compare with: handled as a divergence (a fault of the host's, never seen in a test).
    Unjudged,
}

impl Case {
    fn text(self) -> &'static str {
        match self {
            Self::FalseReport => {
                "a false hash report: its world after the turn equals the host's, byte for byte; dropped, the others play on"
            }
            Self::Diverged => "diverged: its world after the turn differs from the host's",
            Self::Unjudged => "not judged: the host has no snapshot of its own of the turn; handled as a divergence",
            Self::NoAnswer => "sent no snapshot of the turn in time, so would not prove its world: dropped, the others play on",
        }
    }
}

/// Where the peers parted, and the files to study it.
#[derive(Clone, Debug)]
pub struct DesyncReport {
    /// The first turn after which the hashes differed.
    pub turn: u32,
    /// Every compared hash after `turn`: seat (0 for the host) and hash.
    pub hashes: Vec<(u8, Digest)>,
    /// The seat each difference is measured from: one on the majority's side (the host when it is).
    pub reference: u8,
    /// Per differing seat, the differing components and leaves after `turn` against the reference.
    pub divergences: Vec<(u8, Vec<Divergence>)>,
    /// Per differing seat, the differing fields of the snapshots against the reference's.
    pub fields: Vec<(u8, Vec<FieldDiff>)>,
    /// Every peer's snapshot after `turn` that arrived (seat 0 is the host).
    pub snapshots: Vec<(u8, Vec<u8>)>,
    /// The host's replay.
    pub replay: Option<Vec<u8>>,
    /// Per seat whose hash differed from the host's, which case it was.
    pub cases: Vec<(u8, Case)>,
}

impl DesyncReport {
    /// The first differing value, as (component, entity, field) of the first differing seat,
    /// preferring a component the digest leaves named.
    pub fn first_field(&self) -> Option<&FieldDiff> {
        let (seat, fields) = self.fields.first()?;
        let named: Vec<&str> =
            self.divergences.iter().filter(|(s, _)| s == seat).flat_map(|(_, d)| d.iter().map(|d| d.component.as_str())).collect();
        fields.iter().find(|f| named.contains(&f.component.as_str())).or_else(|| fields.first())
    }

    /// The report as text, one fact per line.
    pub fn text(&self) -> String {
        let mut s = String::new();
        let name = |seat: u8| if seat == 0 { "host".to_owned() } else { format!("seat {seat}") };
        let _ = writeln!(s, "desync after turn {}", self.turn);
        for (seat, hash) in &self.hashes {
            let _ = writeln!(s, "hash of {}: {}", name(*seat), hex(hash));
        }
        let _ = writeln!(s, "reference: {}", name(self.reference));
        for (seat, case) in &self.cases {
            let _ = writeln!(s, "{}: {}", name(*seat), case.text());
        }
        for (seat, divergences) in &self.divergences {
            for d in divergences {
                let _ = writeln!(s, "{} differs in component {}, leaves {:?}", name(*seat), d.component, d.leaves);
            }
        }
        for (seat, fields) in &self.fields {
            for f in fields {
                let entity = f.entity.as_deref().unwrap_or("-");
                let _ = writeln!(s, "{} field: {} {} {}: {} | {}", name(*seat), f.component, entity, f.field, f.left, f.right);
            }
        }
        if let Some(f) = self.first_field() {
            let entity = f.entity.as_deref().unwrap_or("-");
            let _ = writeln!(s, "first: turn {} component {} entity {} field {}", self.turn, f.component, entity, f.field);
        }
        s
    }

    /// Writes `report.txt`, one `host.snapshot` / `seat-N.snapshot` per peer and `game.replay`
    /// into `dir` (created if missing); returns the paths written.
    ///
    /// # Errors
    /// The file system's.
    pub fn write_to(&self, dir: &Path) -> std::io::Result<Vec<PathBuf>> {
        std::fs::create_dir_all(dir)?;
        let mut written = Vec::new();
        let mut put = |name: String, bytes: &[u8]| -> std::io::Result<()> {
            let path = dir.join(name);
            std::fs::write(&path, bytes)?;
            written.push(path);
            Ok(())
        };
        put("report.txt".to_owned(), self.text().as_bytes())?;
        for (seat, bytes) in &self.snapshots {
            put(if *seat == 0 { "host.snapshot".to_owned() } else { format!("seat-{seat}.snapshot") }, bytes)?;
        }
        if let Some(replay) = &self.replay {
            put("game.replay".to_owned(), replay)?;
        }
        Ok(written)
    }
}

impl HostCore<'_> {
    /// Stops the game after a mismatch on `turn` and asks every peer still playing for its leaves
    /// and snapshot.
    pub(super) fn begin_locating(&mut self, turn: u32, reference: Digest, votes: Vec<(u8, Digest)>, now: u64) {
        self.phase = Phase::Locating;
        // Each answer starts at its first chunk, whatever a connection sent outside a question.
        for c in self.conns.values_mut() {
            c.incoming = crate::protocol::Reassembly::default();
        }
        // The host's own state after the turn, simulated again from its recorder (it is stepped
        // past the turn by now): a second or so on the reference world, once per desync.
        let (mut digests, mut snapshots) = (BTreeMap::new(), BTreeMap::new());
        if let Ok(replayed) = self.recorder.replay_to(turn, &self.world, &mut |_, _| {}) {
            digests.insert(0, replayed.world.digest_reports());
            snapshots.insert(0, replayed.world.save());
        }
        self.broadcast_seats(&HostMsg::AskDigests { turn });
        self.broadcast_seats(&HostMsg::AskSnapshot { turn });
        let deadline = now + self.config.drop_after_ms;
        self.locating = Some(Locating { turn, votes, reference, digests, snapshots, deadline });
    }

    pub(super) fn on_digests(&mut self, seat: u8, turn: u32, reports: Vec<DigestReport>) {
        if let Some(l) = self.locating.as_mut().filter(|l| l.turn == turn && !reports.is_empty()) {
            l.digests.insert(seat, reports);
        }
    }

    pub(super) fn on_snapshot(&mut self, seat: u8, turn: u32, bytes: Vec<u8>) {
        if let Some(l) = self.locating.as_mut().filter(|l| l.turn == turn && !bytes.is_empty()) {
            l.snapshots.insert(seat, bytes);
        }
    }

    /// Ends the game with a report once every peer still playing answered, or the answers are late.
    pub(super) fn locate_tick(&mut self, now: u64) {
        let Some(l) = &self.locating else { return };
        // A seat that rejoined after the turn has nothing of it to give.
        let playing: Vec<u8> = (1..=self.seats.len() as u8)
            .filter(|s| !self.seats[usize::from(s - 1)].gone && self.seats[usize::from(s - 1)].from <= l.turn)
            .collect();
        let answered = playing.iter().all(|s| l.digests.contains_key(s) && l.snapshots.contains_key(s));
        if !answered && now < l.deadline {
            return;
        }
        let Some(l) = self.locating.take() else { return };
        let host = l.votes.first().map(|(_, h)| *h);
        let differing: Vec<u8> = l.votes.iter().filter(|(s, h)| *s != 0 && Some(*h) != host).map(|(s, _)| *s).collect();
        // Each seat's own world after the turn against the host's: equal worlds behind differing
        // hashes are a false report.
        let cases: Vec<(u8, Case)> = differing
            .iter()
            .map(|seat| {
                let case = match (l.snapshots.get(&0), l.snapshots.get(seat)) {
                    (Some(ours), Some(theirs)) if ours == theirs => Case::FalseReport,
                    (Some(_), Some(_)) => Case::Diverged,
                    (Some(_), None) => Case::NoAnswer,
                    (None, _) => Case::Unjudged,
                };
                (*seat, case)
            })
            .collect();
        let liars: Vec<u8> = cases.iter().filter(|(_, c)| *c == Case::FalseReport).map(|(s, _)| *s).collect();
        let unproven: Vec<u8> = cases.iter().filter(|(_, c)| *c == Case::NoAnswer).map(|(s, _)| *s).collect();
        let diverged: Vec<u8> = cases.iter().filter(|(_, c)| matches!(c, Case::Diverged | Case::Unjudged)).map(|(s, _)| *s).collect();
        // Only false reports and seats that would not answer: every world the host could see
        // agrees with its own, and the others go, so the game is in sync and plays on.
        let play_on = diverged.is_empty() && !differing.is_empty();
        if !self.resync && !play_on {
            self.end();
        }
        let reference = l.votes.iter().find(|(_, h)| *h == l.reference).map_or(0, |(s, _)| *s);
        let rulesets = &self.rulesets;
        let mut divergences = Vec::new();
        let mut fields = Vec::new();
        for (seat, _) in l.votes.iter().filter(|(_, h)| *h != l.reference) {
            if let (Some(a), Some(b)) = (l.digests.get(&reference), l.digests.get(seat)) {
                divergences.push((*seat, locate_reports(a, b)));
            }
            let unframe = |s: &u8| l.snapshots.get(s).and_then(|b| sim::snapshot::unframe(b).ok());
            if let (Some(a), Some(b)) = (unframe(&reference), unframe(seat)) {
                fields.push((*seat, replay::diff::diff_snapshots_with(&a, &b, 100, rulesets).diffs));
            }
        }
        self.report = Some(DesyncReport {
            turn: l.turn,
            hashes: l.votes,
            reference,
            divergences,
            fields,
            snapshots: l.snapshots.into_iter().collect(),
            replay: self.replay_done.clone(),
            cases,
        });
        let turn = self.report.as_ref().map_or(0, |r| r.turn);
        if play_on || self.resync {
            for &seat in &liars {
                let reason = format!(
                    "seat {seat}'s hash after turn {turn} differs from the host's, but its world equals the host's: a false hash report"
                );
                if self.drop_seat(seat, reason) {
                    self.out.events.push(super::HostEvent::FalseHash { seat, turn });
                }
            }
            let waited_ms = self.config.drop_after_ms;
            for &seat in &unproven {
                let reason = format!(
                    "seat {seat}'s hash after turn {turn} differs from the host's, and it sent no snapshot of the turn within {waited_ms} ms to show its world"
                );
                if self.drop_seat(seat, reason) {
                    self.out.events.push(super::HostEvent::Unproven { seat, turn, waited_ms });
                }
            }
        }
        if play_on {
            // Nothing diverged: the hashes the liars and the silent seats sent were the only difference.
            self.in_sync = self.in_sync_before;
            self.phase = Phase::Running;
            self.next_boundary = now + u64::from(self.config.turn_ms);
            self.compare(now);
        } else if self.resync {
            self.resync_seats(&diverged, now);
        }
    }

    /// Sends the seats still playing among `seats` the host's world as it is now, and plays on:
    /// their hashes count again from the first turn they step on it.
    fn resync_seats(&mut self, seats: &[u8], now: u64) {
        self.phase = Phase::Running;
        let from = self.closed;
        let bytes = self.world.save();
        let mut sent = Vec::new();
        for &seat in seats {
            let s = &mut self.seats[usize::from(seat - 1)];
            let Some(conn) = s.conn.filter(|_| !s.gone) else { continue };
            if s.resynced {
                // Resynced once already and diverged again: it would be resynced every turn to
                // the end; it is dropped instead, and the others play on.
                let _ = self.drop_seat(seat, format!("seat {seat} diverged again after a resync"));
                continue;
            }
            let s = &mut self.seats[usize::from(seat - 1)];
            s.resynced = true;
            s.from = from;
            s.hashed = from;
            s.hashes.clear();
            self.send_world(conn, &bytes);
            sent.push(seat);
        }
        self.out.events.push(super::HostEvent::Resynced { seats: sent, from });
        // The turn boundary starts afresh, so the turns missed while locating do not close at once.
        self.next_boundary = now + u64::from(self.config.turn_ms);
        self.compare(now);
    }
}
