//! The `--json` event streams of `phalanx host` and `phalanx join`: each host or client event as
//! one JSON object, named by its `event` field (docs/protocol.md, "JSON event streams", lists
//! every kind and its fields).
//!
//! The matches are exhaustive on purpose: an event added to the session crate does not compile
//! here until it has a kind of its own, and so a line in the documentation.

use serde_json::{Value, json};
use session::Waiting;
use session::{ClientEvent, Ending};
use session::{HostEvent, hex};

/// A waiting status as its event: `waiting_players`, `waiting_seat` or `waiting_desync`.
pub(super) fn waiting(status: &Waiting) -> Value {
    let mut value = match status {
        Waiting::Players { joined, seats } => json!({"event": "waiting_players", "joined": joined, "seats": seats}),
        Waiting::Seat { seat, behind_ms, drops_at_ms } => {
            json!({"event": "waiting_seat", "seat": seat, "behind_ms": behind_ms, "drops_at_ms": drops_at_ms})
        }
        Waiting::Desync { turn } => json!({"event": "waiting_desync", "turn": turn}),
    };
    value["text"] = Value::from(status.to_string());
    value
}

/// A refusal's fields: the text a person reads and serde's form of the value.
fn refusal_fields(value: &mut Value, refusal: &session::Refusal) {
    value["reason"] = Value::from(refusal.to_string());
    value["refusal"] = serde_json::to_value(refusal).unwrap_or(Value::Null);
}

/// A host event as its JSON object, with the host log's line as `text`.
pub(super) fn host_event(event: &HostEvent) -> Value {
    let mut value = match event {
        HostEvent::Waiting(status) => return waiting(status),
        HostEvent::Joined { conn, seat } => json!({"event": "joined", "conn": conn, "seat": seat}),
        HostEvent::Started { delay } => json!({"event": "started", "delay": delay}),
        HostEvent::Closed { conn, reason } => json!({"event": "closed", "conn": conn, "reason": reason}),
        HostEvent::Left { seat } => json!({"event": "left", "seat": seat}),
        HostEvent::Rejoined { conn, seat, from } => json!({"event": "rejoined", "conn": conn, "seat": seat, "from": from}),
        HostEvent::Observing { conn, from } => json!({"event": "observing", "conn": conn, "from": from}),
        HostEvent::Resynced { seats, from } => json!({"event": "resynced", "seats": seats, "from": from}),
        HostEvent::FalseHash { seat, turn } => json!({"event": "false_hash", "seat": seat, "turn": turn}),
        HostEvent::Unproven { seat, turn, waited_ms } => json!({"event": "unproven", "seat": seat, "turn": turn, "waited_ms": waited_ms}),
        HostEvent::Dropped { seat, behind_at } => json!({"event": "dropped", "seat": seat, "behind_at": behind_at}),
        HostEvent::Refused { seat, player, refusal } => {
            let mut value = json!({"event": "refused", "seat": seat, "player": player.0});
            refusal_fields(&mut value, refusal);
            value
        }
        HostEvent::DelayChanged { turn, delay } => json!({"event": "delay_changed", "turn": turn, "delay": delay}),
        HostEvent::Desync { turn, seats } => json!({"event": "desync", "turn": turn, "seats": seats}),
        HostEvent::NotRecording { reason } => json!({"event": "not_recording", "reason": reason}),
        HostEvent::Deserted { turns } => json!({"event": "deserted", "turns": turns}),
        HostEvent::Ended { turns, final_hash, in_sync } => {
            json!({"event": "ended", "turns": turns, "final_hash": hex(final_hash), "in_sync": in_sync})
        }
    };
    value["text"] = Value::from(event.to_string());
    value
}

/// A client event as its JSON object, with the client log's line as `text`.
pub(super) fn client_event(event: &ClientEvent) -> Value {
    let mut value = match event {
        ClientEvent::Waiting(status) => return waiting(status),
        ClientEvent::Welcomed { seat } => {
            json!({"event": "welcomed", "seat": seat, "observer": *seat == session::OBSERVER_SEAT})
        }
        ClientEvent::DelayChanged { turn, delay } => json!({"event": "delay_changed", "turn": turn, "delay": delay}),
        ClientEvent::Dropped { seat } => json!({"event": "dropped", "seat": seat}),
        ClientEvent::Rejoined { seat } => json!({"event": "rejoined", "seat": seat}),
        ClientEvent::NotRecording { reason } => json!({"event": "not_recording", "reason": reason}),
        ClientEvent::NotReproduced { turn } => json!({"event": "not_reproduced", "turn": turn}),
        ClientEvent::Loaded { from } => json!({"event": "loaded", "from": from}),
        ClientEvent::Ended { turns, in_sync } => json!({"event": "ended", "turns": turns, "in_sync": in_sync}),
        ClientEvent::Refused { order, refusal } => {
            let mut value = json!({"event": "refused", "order": order});
            refusal_fields(&mut value, refusal);
            value
        }
        ClientEvent::NotSent { refusal } => {
            let mut value = json!({"event": "not_sent"});
            refusal_fields(&mut value, refusal);
            value
        }
        ClientEvent::Closed { reason } => json!({"event": "closed", "reason": reason}),
    };
    value["text"] = Value::from(event.to_string());
    value
}

/// How a client's game ended, as the `how` of its `end` event, with the host's or the
/// transport's reason where there is one.
pub(super) fn client_ending(ending: Option<&Ending>) -> (&'static str, Option<String>) {
    match ending {
        Some(Ending::Ended { in_sync: true, .. }) => ("in_sync", None),
        Some(Ending::Ended { in_sync: false, .. }) => ("desync", None),
        Some(Ending::Refused { reason }) => ("refused", Some(reason.clone())),
        Some(Ending::Kicked { reason }) => ("kicked", Some(reason.clone())),
        Some(Ending::HostGone { reason }) => ("host_gone", Some(reason.clone())),
        Some(e @ Ending::HostSilent { .. }) => ("host_silent", Some(e.to_string())),
        Some(Ending::Fault { reason }) => ("fault", Some(reason.clone())),
        None => ("not_ended", None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use session::Refusal;
    use sim::PlayerId;

    /// Every host and client event becomes an object whose kind docs/protocol.md's section on the
    /// streams lists, with the log's line as `text`; the list here names every variant, so an
    /// event added without a documented kind fails.
    #[test]
    fn every_event_has_a_documented_kind_and_its_line() {
        let doc = include_str!("../../../docs/protocol.md");
        let section = doc.split("## JSON event streams").nth(1).and_then(|s| s.split("\n## ").next()).expect("the section");
        let refusal = Refusal::TooLarge { bytes: 70_000, limit: 65_536 };
        let host = [
            HostEvent::Waiting(Waiting::Players { joined: 1, seats: 2 }),
            HostEvent::Waiting(Waiting::Seat { seat: 2, behind_ms: 3_500, drops_at_ms: 10_000 }),
            HostEvent::Waiting(Waiting::Desync { turn: 7 }),
            HostEvent::Joined { conn: 0, seat: 1 },
            HostEvent::Started { delay: 2 },
            HostEvent::Closed { conn: 3, reason: "why".to_owned() },
            HostEvent::Left { seat: 1 },
            HostEvent::Rejoined { conn: 4, seat: 1, from: 9 },
            HostEvent::Observing { conn: 5, from: 0 },
            HostEvent::Resynced { seats: vec![2], from: 9 },
            HostEvent::FalseHash { seat: 2, turn: 8 },
            HostEvent::Unproven { seat: 2, turn: 8, waited_ms: 10_000 },
            HostEvent::Dropped { seat: 2, behind_at: 5 },
            HostEvent::Refused { seat: 1, player: PlayerId(2), refusal: refusal.clone() },
            HostEvent::DelayChanged { turn: 4, delay: 3 },
            HostEvent::Desync { turn: 8, seats: vec![2] },
            HostEvent::NotRecording { reason: "disk full".to_owned() },
            HostEvent::Deserted { turns: 12 },
            HostEvent::Ended { turns: 12, final_hash: [7; 32], in_sync: true },
        ];
        let client = [
            ClientEvent::Welcomed { seat: 1 },
            ClientEvent::DelayChanged { turn: 4, delay: 3 },
            ClientEvent::Dropped { seat: 2 },
            ClientEvent::Rejoined { seat: 2 },
            ClientEvent::NotRecording { reason: "joined late".to_owned() },
            ClientEvent::NotReproduced { turn: 8 },
            ClientEvent::Loaded { from: 9 },
            ClientEvent::Ended { turns: 12, in_sync: false },
            ClientEvent::Refused { order: 3, refusal: refusal.clone() },
            ClientEvent::Waiting(Waiting::Desync { turn: 7 }),
            ClientEvent::NotSent { refusal },
            ClientEvent::Closed { reason: "why".to_owned() },
        ];
        let values: Vec<(Value, String)> =
            host.iter().map(|e| (host_event(e), e.to_string())).chain(client.iter().map(|e| (client_event(e), e.to_string()))).collect();
        for (value, line) in &values {
            let kind = value["event"].as_str().unwrap_or_else(|| panic!("no kind: {value}"));
            assert!(section.contains(&format!("| `{kind}`")) || section.contains(&format!(", `{kind}`")), "{kind} is not documented");
            assert_eq!(value["text"], line.as_str(), "{value}");
        }
        assert_eq!(host_event(&host[13])["refusal"], serde_json::json!({"TooLarge": {"bytes": 70_000, "limit": 65_536}}));
        assert_eq!(host_event(&host[18])["final_hash"], "07".repeat(32));
        assert_eq!(client_event(&client[0])["observer"], false);
    }
}
