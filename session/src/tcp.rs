//! The session over TCP: frames as a `u32` little-endian length and the payload, on non-blocking
//! `std::net` sockets polled in a loop that feeds the host's or a client's state machine.
//!
//! The loops read no clock themselves: the caller passes `clock`, the time in milliseconds, as the
//! state machines take it. A frame announcing more than [`MAX_FRAME`] bytes closes its
//! connection before anything is read into memory for it.

use std::collections::BTreeMap;
use std::io::{ErrorKind, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::time::Duration;

use crate::client::{Brain, ClientCore, ClientEvent};
use crate::host::{ConnId, HostCore, HostEvent};
use crate::protocol::MAX_FRAME;

/// How long a loop sleeps when a pass found nothing to do.
const IDLE: Duration = Duration::from_millis(1);
/// The most connections a host keeps open. One more displaces the oldest that has sent no
/// `Hello` ([`HostCore::make_room`]), or is closed as it is accepted when every one has; silent
/// ones are also closed after [`crate::HELLO_WITHIN_MS`].
pub const MAX_CONNECTIONS: usize = 64;
/// The most bytes a host queues for one connection; a peer that reads slower than the game
/// sends is closed rather than let the host's memory grow.
pub const MAX_QUEUED: usize = 8 * MAX_FRAME;

/// One socket with its partial input and unsent output.
struct Stream {
    socket: TcpStream,
    input: Vec<u8>,
    output: Vec<u8>,
    /// Closed by the peer, or at fault: nothing more is read.
    done: bool,
    /// A read that failed after whole frames had arrived: reported by the next [`Stream::frames`],
    /// once those frames are delivered.
    failed: Option<String>,
}

impl Stream {
    fn new(socket: TcpStream) -> std::io::Result<Self> {
        socket.set_nonblocking(true)?;
        socket.set_nodelay(true)?;
        Ok(Self { socket, input: Vec::new(), output: Vec::new(), done: false, failed: None })
    }

    /// Queues a frame: its length, then its payload.
    fn queue(&mut self, payload: &[u8]) {
        self.output.extend(u32::try_from(payload.len()).unwrap_or(u32::MAX).to_le_bytes());
        self.output.extend(payload);
    }

    /// Writes what the socket takes now; `false` when the connection failed.
    fn flush(&mut self) -> bool {
        while !self.output.is_empty() {
            match self.socket.write(&self.output) {
                Ok(0) => return false,
                Ok(n) => {
                    self.output.drain(..n);
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => return true,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(_) => return false,
            }
        }
        true
    }

    /// Reads what has arrived and returns the whole frames; `Err` with a reason when the peer
    /// closed the connection or announced a frame over the limit. The frames that arrived before
    /// the connection failed are returned first: a peer that closes its socket with bytes of ours
    /// still unread resets the connection, and the read that reports the reset may follow the
    /// peer's last frames (the end of a game).
    fn frames(&mut self) -> Result<Vec<Vec<u8>>, String> {
        if let Some(reason) = self.failed.take() {
            return Err(reason);
        }
        let mut buf = [0u8; 16 * 1024];
        let mut closed = false;
        let mut failed = None;
        loop {
            match self.socket.read(&mut buf) {
                Ok(0) => {
                    closed = true;
                    break;
                }
                Ok(n) => {
                    self.input.extend_from_slice(&buf[..n]);
                    // Never hold more than one frame of the limit plus its prefix.
                    if self.input.len() > MAX_FRAME + 4 + buf.len() {
                        break;
                    }
                }
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) if e.kind() == ErrorKind::Interrupted => {}
                Err(e) => {
                    failed = Some(e.to_string());
                    break;
                }
            }
        }
        let mut frames = Vec::new();
        while let Some(prefix) = self.input.get(..4) {
            let len = u32::from_le_bytes([prefix[0], prefix[1], prefix[2], prefix[3]]) as usize;
            if len > MAX_FRAME {
                return Err(format!("frame of {len} bytes is over the limit of {MAX_FRAME}"));
            }
            if self.input.len() < 4 + len {
                break;
            }
            frames.push(self.input[4..4 + len].to_vec());
            self.input.drain(..4 + len);
        }
        match failed {
            Some(reason) if frames.is_empty() => return Err(reason),
            Some(reason) => self.failed = Some(reason),
            None if closed && frames.is_empty() => return Err("the peer closed the connection".to_owned()),
            None => {}
        }
        Ok(frames)
    }
}

/// Runs a host on `listener` until its game is over and its last frames are sent, calling `log`
/// with every event. `clock` gives the time in milliseconds.
///
/// # Errors
/// When the listener cannot be made non-blocking.
pub fn run_host(
    listener: &TcpListener,
    host: &mut HostCore<'_>,
    clock: &dyn Fn() -> u64,
    log: &mut dyn FnMut(&HostEvent),
) -> std::io::Result<()> {
    run_host_watched(listener, host, clock, log, &mut |_| {})
}

/// [`run_host`], calling `watch` with the host after every pass of its loop (for a progress bar).
///
/// # Errors
/// When the listener cannot be made non-blocking.
pub fn run_host_watched(
    listener: &TcpListener,
    host: &mut HostCore<'_>,
    clock: &dyn Fn() -> u64,
    log: &mut dyn FnMut(&HostEvent),
    watch: &mut dyn FnMut(&HostCore<'_>),
) -> std::io::Result<()> {
    listener.set_nonblocking(true)?;
    let mut streams: BTreeMap<ConnId, Stream> = BTreeMap::new();
    let mut next: ConnId = 0;
    let mut over_since: Option<u64> = None;
    loop {
        let now = clock();
        let mut busy = false;
        while let Ok((socket, _)) = listener.accept() {
            busy = true;
            if streams.len() >= MAX_CONNECTIONS {
                // The oldest connection that said no Hello makes room; without one, the new
                // connection is refused. Dropping a socket closes it.
                match host.make_room() {
                    Some(old) => {
                        streams.remove(&old);
                    }
                    None => {
                        log(&HostEvent::Closed { conn: next, reason: format!("over the limit of {MAX_CONNECTIONS} connections") });
                        next += 1;
                        continue;
                    }
                }
            }
            if let Ok(stream) = Stream::new(socket) {
                host.on_connect(next);
                streams.insert(next, stream);
                next += 1;
            }
        }
        let mut lost = Vec::new();
        for (&conn, stream) in &mut streams {
            if stream.done {
                continue;
            }
            match stream.frames() {
                Ok(frames) => {
                    busy |= !frames.is_empty();
                    for frame in frames {
                        host.on_frame(conn, &frame, now);
                    }
                }
                Err(reason) => lost.push((conn, reason)),
            }
        }
        for (conn, reason) in lost {
            if let Some(s) = streams.get_mut(&conn) {
                s.done = true;
            }
            log(&HostEvent::Closed { conn, reason });
            host.on_disconnect(conn, now);
        }
        host.tick(now);
        watch(host);
        let out = host.take_output();
        let mut slow = Vec::new();
        for (conn, frame) in &out.frames {
            if let Some(s) = streams.get_mut(conn)
                && !s.done
            {
                s.queue(frame);
                if s.output.len() > MAX_QUEUED {
                    s.done = true;
                    s.output.clear();
                    slow.push(*conn);
                }
            }
        }
        out.events.iter().for_each(&mut *log);
        for conn in slow {
            log(&HostEvent::Closed { conn, reason: format!("it reads too slowly: over {MAX_QUEUED} bytes queued") });
            host.on_disconnect(conn, now);
        }
        for conn in out.close {
            if let Some(s) = streams.get_mut(&conn) {
                s.done = true;
            }
        }
        // Flush everything; a closed connection is dropped once its last frame (its `Bye`) left.
        streams.retain(|_, s| s.flush() && !(s.done && s.output.is_empty()));
        if host.is_over() {
            let since = *over_since.get_or_insert(now);
            // The last frames are flushed, or the peers had a second to take them.
            if streams.values().all(|s| s.output.is_empty()) || now.saturating_sub(since) > 1000 {
                return Ok(());
            }
        }
        if !busy {
            std::thread::sleep(IDLE);
        }
    }
}

/// Runs a client over `socket` until the game ends or the connection does, calling `log` with
/// every event; `brain` plays the seat. `clock` gives the time in milliseconds.
///
/// # Errors
/// When the socket cannot be made non-blocking.
pub fn run_client(
    socket: TcpStream,
    client: &mut ClientCore,
    brain: &mut dyn Brain,
    clock: &dyn Fn() -> u64,
    log: &mut dyn FnMut(&ClientEvent),
) -> std::io::Result<()> {
    run_client_watched(socket, client, brain, clock, log, &mut |_| {})
}

/// [`run_client`], calling `watch` with the client after every pass of its loop, before its
/// frames are sent (for a progress count, or a test that makes the client send something more).
///
/// # Errors
/// When the socket cannot be made non-blocking.
pub fn run_client_watched(
    socket: TcpStream,
    client: &mut ClientCore,
    brain: &mut dyn Brain,
    clock: &dyn Fn() -> u64,
    log: &mut dyn FnMut(&ClientEvent),
    watch: &mut dyn FnMut(&mut ClientCore),
) -> std::io::Result<()> {
    let mut stream = Stream::new(socket)?;
    loop {
        let now = clock();
        let frames = match stream.frames() {
            Ok(frames) => frames,
            Err(reason) => {
                client.on_lost(reason);
                client.take_events().iter().for_each(&mut *log);
                return Ok(());
            }
        };
        let busy = !frames.is_empty();
        for frame in frames {
            client.on_frame(&frame);
        }
        client.tick(now);
        // What answers the frames just read (a `Pong` above all) goes out before the world
        // steps: a step of a large world takes a while, and the host measures the round trip,
        // and sets the input delay, from the `Pong`.
        for frame in client.take_frames() {
            stream.queue(&frame);
        }
        if !stream.flush() {
            client.on_lost("the connection failed".to_owned());
            client.take_events().iter().for_each(&mut *log);
            return Ok(());
        }
        client.step_ready(now, brain);
        watch(client);
        for frame in client.take_frames() {
            stream.queue(&frame);
        }
        client.take_events().iter().for_each(&mut *log);
        if !stream.flush() {
            client.on_lost("the connection failed".to_owned());
            client.take_events().iter().for_each(&mut *log);
            return Ok(());
        }
        if client.ended().is_some() || client.is_closed() {
            // Whatever is still queued (the last hashes) goes out before the socket closes.
            let _ = stream.socket.set_nonblocking(false);
            let _ = stream.socket.write_all(&stream.output);
            return Ok(());
        }
        if !busy {
            std::thread::sleep(IDLE);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A peer that sends its last frames and closes with bytes of ours unread resets the
    /// connection; the frames that arrived before the reset are still delivered, then the reset.
    #[test]
    fn frames_that_arrived_before_a_reset_are_delivered_first() {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a local port");
        let ours = TcpStream::connect(listener.local_addr().expect("its address")).expect("connect");
        let (mut theirs, _) = listener.accept().expect("accept");
        let mut stream = Stream::new(ours).expect("a stream");
        // Bytes the peer never reads: its close then sends a reset instead of an orderly end.
        stream.queue(b"unread");
        assert!(stream.flush());
        let mut last = Vec::new();
        for payload in [&b"turn 150"[..], b"ended"] {
            last.extend(u32::try_from(payload.len()).expect("a short frame").to_le_bytes());
            last.extend(payload);
        }
        theirs.write_all(&last).expect("the peer's last frames");
        std::thread::sleep(Duration::from_millis(50));
        drop(theirs);
        std::thread::sleep(Duration::from_millis(50));
        let mut got = Vec::new();
        let reason = loop {
            match stream.frames() {
                Ok(frames) => got.extend(frames),
                Err(reason) => break reason,
            }
        };
        assert_eq!(got, vec![b"turn 150".to_vec(), b"ended".to_vec()], "then {reason}");
    }
}
