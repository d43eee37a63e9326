//! Hash tags placed in chosen Redis Cluster slots: how a sharded board's shards land
//! evenly on the masters.
//!
//! Redis Cluster puts a key in slot `CRC16(tag) mod 16384` (XMODEM CRC of the key's hash
//! tag), and masters own contiguous ranges of slots in the usual layouts. Shard `i` of
//! `n` ([`Placement::Even`](crate::domain::scoring::Placement)) sits in the middle slot
//! of the `i`-th `n`-th of the range ([`shard_slot`]), so `n` shards over `k` masters
//! give each master `n / k` of them, give or take one.
//!
//! A tag reaches its slot through four letters from `@` to `O` after its name
//! ([`tag_in_slot`]). Each letter is `0x40` plus a 4-bit number, and the CRC (initial
//! value 0, no final XOR) is linear over GF(2): the tag's slot is the slot of the name
//! followed by `@@@@`, XOR a fixed combination of the 16 bits those numbers hold. The
//! 16 bits reach every one of the 14 bits of a slot, so one elimination, done once,
//! answers which bits to set for any slot: no search, the same letters every time.

use std::sync::LazyLock;

use crc16::{State, XMODEM};

/// Slots in a Redis Cluster.
pub const SLOTS: u16 = 16384;

/// The letters after a tag's name: four, from `@` (`0x40`) to `O` (`0x4f`).
const LETTERS: usize = 4;
const LETTER_BASE: u8 = 0x40;

/// The slot a hash tag puts its keys in.
pub fn slot_of(tag: &str) -> u16 {
    State::<XMODEM>::calculate(tag.as_bytes()) % SLOTS
}

/// The middle slot of the `i`-th `n`-th of the slot range (`i < n`).
pub fn shard_slot(i: i64, n: i64) -> u16 {
    let slots = i64::from(SLOTS);
    u16::try_from((2 * i + 1) * slots / (2 * n)).unwrap_or(SLOTS - 1)
}

/// `name` followed by the four letters that put the tag in `slot` (below [`SLOTS`]).
pub fn tag_in_slot(name: &str, slot: u16) -> String {
    let mut zeros = name.as_bytes().to_vec();
    zeros.extend([0; LETTERS]);
    let fixed =
        State::<XMODEM>::calculate(&zeros) ^ State::<XMODEM>::calculate(&[LETTER_BASE; LETTERS]);
    let mut want = (fixed ^ slot) % SLOTS;
    let mut bits = 0u16;
    for row in SOLVER.iter() {
        if want & row.pivot != 0 {
            want ^= row.slot;
            bits ^= row.bits;
        }
    }
    let mut tag = String::with_capacity(name.len() + LETTERS);
    tag.push_str(name);
    for j in 0..LETTERS {
        tag.push(char::from(LETTER_BASE | ((bits >> (4 * j)) & 0xf) as u8));
    }
    tag
}

/// One row of the eliminated system: setting `bits` of the letters' numbers flips
/// `slot`'s bits of the slot, of which `pivot` is the highest.
struct Row {
    pivot: u16,
    slot: u16,
    bits: u16,
}

/// The letters' 16 bits eliminated into one row per bit of a slot, highest first: a
/// slot's bits are cleared in that order by the rows whose pivot they hold.
static SOLVER: LazyLock<Vec<Row>> = LazyLock::new(|| {
    let mut rows: Vec<(u16, u16)> = (0..4 * LETTERS)
        .map(|b| {
            let mut letters = [0u8; LETTERS];
            letters[b / 4] = 1 << (b % 4);
            (State::<XMODEM>::calculate(&letters) % SLOTS, 1u16 << b)
        })
        .collect();
    let mut solver = Vec::new();
    for bit in (0..SLOTS.trailing_zeros()).rev() {
        let pivot = 1u16 << bit;
        let Some(at) = rows.iter().position(|(slot, _)| slot & pivot != 0) else {
            continue;
        };
        let (slot, bits) = rows.swap_remove(at);
        for row in rows.iter_mut().filter(|(s, _)| s & pivot != 0) {
            row.0 ^= slot;
            row.1 ^= bits;
        }
        solver.push(Row { pivot, slot, bits });
    }
    solver
});

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_slot_is_reached_and_redis_agrees() {
        assert_eq!(SOLVER.len(), 14);
        for slot in 0..SLOTS {
            let tag = tag_in_slot("b:42:s3:", slot);
            assert_eq!(slot_of(&tag), slot, "{tag}");
            assert_eq!(
                redis::cluster_routing::Slot::for_key(format!("ov:{{{tag}}}:all")),
                redis::cluster_routing::Slot::new(slot).unwrap(),
                "{tag}"
            );
            assert!(
                tag[8..].bytes().all(|b| (b'@'..=b'O').contains(&b)),
                "{tag}"
            );
        }
    }

    #[test]
    fn the_letters_depend_on_the_name() {
        assert_eq!(tag_in_slot("b:1:s0:", 0), tag_in_slot("b:1:s0:", 0));
        assert_ne!(tag_in_slot("b:1:s0:", 0), tag_in_slot("b:2:s0:", 0));
    }

    #[test]
    fn shards_sit_in_the_middle_of_their_share_of_the_range() {
        assert_eq!(shard_slot(0, 2), 4096);
        assert_eq!(shard_slot(1, 2), 12288);
        for n in 2..=256 {
            for i in 0..n {
                let slot = i64::from(shard_slot(i, n));
                let share = i64::from(SLOTS);
                assert!(
                    i * share <= slot * n && slot * n < (i + 1) * share,
                    "{i} of {n}"
                );
            }
        }
    }
}
