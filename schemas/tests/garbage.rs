//! Robustness: truncated, corrupted and random bytes give an error, never a panic.

mod common;

use common::*;
use optics_schemas::{DataBatch, Message, decode, encode};

/// Deterministic xorshift64*, so every run tries the same inputs.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }
}

fn samples() -> Vec<Vec<u8>> {
    [
        Message::Data(DataBatch::from_rows("SPY", &spy_quotes()).unwrap()),
        Message::Data(DataBatch::from_rows("SPX", &[index_tick()]).unwrap()),
        Message::Data(DataBatch::from_rows("*", &calendar()).unwrap()),
        Message::Data(DataBatch::from_rows("*", &companies()).unwrap()),
    ]
    .iter()
    .map(|m| encode(m).unwrap())
    .collect()
}

/// Decoding must return (Ok or Err) without panicking; a corrupted message that still decodes
/// must have passed validation, so it re-encodes.
fn must_not_panic(bytes: &[u8]) {
    if let Ok(message) = decode(bytes) {
        encode(&message).unwrap();
    }
}

#[test]
fn every_truncation_is_an_error() {
    for sample in samples() {
        for len in 0..sample.len() {
            assert!(
                decode(&sample[..len]).is_err(),
                "prefix of {len} bytes decoded"
            );
        }
    }
}

#[test]
fn random_corruption_never_panics() {
    let mut rng = Rng(0x0bad_5eed_1234_5678);
    for sample in samples() {
        for _ in 0..3_000 {
            let mut bytes = sample.clone();
            // 1–8 corrupted bytes, anywhere (header, Arrow metadata, buffers).
            for _ in 0..1 + rng.below(8) {
                let at = rng.below(bytes.len());
                match rng.below(3) {
                    0 => bytes[at] ^= 1 << rng.below(8),
                    1 => bytes[at] = rng.next() as u8,
                    _ => bytes[at] = [0x00, 0xff, 0x7f, 0x80][rng.below(4)],
                }
            }
            must_not_panic(&bytes);
        }
    }
}

#[test]
fn corrupted_body_lengths_never_panic() {
    // Lie about the body length, and keep the header valid otherwise.
    let mut rng = Rng(42);
    for sample in samples() {
        let key_len = u16::from_le_bytes([sample[8], sample[9]]) as usize;
        let at = 10 + key_len;
        for _ in 0..200 {
            let mut bytes = sample.clone();
            bytes[at..at + 4].copy_from_slice(&(rng.next() as u32).to_le_bytes());
            must_not_panic(&bytes);
        }
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = Rng(7);
    for _ in 0..5_000 {
        let len = rng.below(300);
        let mut bytes: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        // Half of them behind a valid header, so the Arrow reader sees garbage too.
        if rng.below(2) == 0 && len > 20 {
            bytes[..4].copy_from_slice(b"OPTB");
            bytes[4..6].copy_from_slice(&1u16.to_le_bytes());
            bytes[6] = [1, 2, 3, 16, 17, 18, 19, 20, 32][rng.below(9)];
            bytes[7] = 0;
            bytes[8..10].copy_from_slice(&3u16.to_le_bytes());
            bytes[10..13].copy_from_slice(b"SPY");
            let body = (len - 17) as u32;
            bytes[13..17].copy_from_slice(&body.to_le_bytes());
        }
        must_not_panic(&bytes);
    }
}

#[test]
fn arrow_body_corruption_behind_a_valid_header_never_panics() {
    // Corrupt only the Arrow IPC body, the part the header checks cannot protect.
    let mut rng = Rng(0xfeed);
    for sample in samples() {
        let key_len = u16::from_le_bytes([sample[8], sample[9]]) as usize;
        let body_start = 14 + key_len;
        for _ in 0..3_000 {
            let mut bytes = sample.clone();
            for _ in 0..1 + rng.below(4) {
                let at = body_start + rng.below(bytes.len() - body_start);
                bytes[at] = rng.next() as u8;
            }
            must_not_panic(&bytes);
        }
    }
}
