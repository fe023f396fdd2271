//! A cursor that turns fuzz input bytes into values, for the structured targets.
//!
//! Every read succeeds: past the end of the input it reads zeros, so any input decodes to some
//! case and a target needs no error path. Targets bound their loops by counts they read (and stop
//! when [`Bytes::is_empty`]), so a long input never makes a long case.

/// Reads little-endian integers and choices from the front of a byte slice.
pub struct Bytes<'a> {
    data: &'a [u8],
}

impl<'a> Bytes<'a> {
    /// A cursor at the start of `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self { data }
    }

    /// Whether every byte has been read.
    pub fn is_empty(&self) -> bool {
        self.data.is_empty()
    }

    /// The next byte, or 0 past the end.
    pub fn u8(&mut self) -> u8 {
        match self.data.split_first() {
            Some((&b, rest)) => {
                self.data = rest;
                b
            }
            None => 0,
        }
    }

    /// The next two bytes, little-endian.
    pub fn u16(&mut self) -> u16 {
        u16::from_le_bytes([self.u8(), self.u8()])
    }

    /// The next four bytes, little-endian.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }

    /// The next eight bytes, little-endian.
    pub fn u64(&mut self) -> u64 {
        u64::from(self.u32()) | u64::from(self.u32()) << 32
    }

    /// The next eight bytes as a signed value.
    pub fn i64(&mut self) -> i64 {
        self.u64() as i64
    }

    /// A value in `0..n` from one byte (`n` in `1..=256`).
    pub fn below(&mut self, n: u32) -> u32 {
        u32::from(self.u8()) % n.max(1)
    }

    /// A value in `0..n` from two bytes (`n` in `1..=65536`).
    pub fn below16(&mut self, n: u32) -> u32 {
        u32::from(self.u16()) % n.max(1)
    }

    /// One bit of the next byte.
    pub fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }

    /// One of `choices` by the next byte.
    pub fn pick<T: Copy>(&mut self, choices: &[T]) -> T {
        choices[self.below(choices.len() as u32) as usize]
    }
}
