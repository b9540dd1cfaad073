//! Named random streams derived from one scenario seed.
//!
//! Every random process in a scenario (a link's loss process, one direction of a
//! link, a node's MAC backoff ...) draws from its own stream, named by the caller
//! (for example `"link/ap-mobile/down/loss"`). A stream depends only on the scenario
//! seed and its own name, so adding, removing or reordering other streams never changes
//! its numbers (DESIGN.md, "Time and determinism"; STYLE.md habit 3).
//!
//! # Derivation (stable, do not change)
//!
//! The 256-bit ChaCha8 key of the stream `name` under `seed` is
//!
//! ```text
//! key[0..8]   = SplitMix64 output 1 from state `seed`    (little-endian)
//! key[8..16]  = SplitMix64 output 2 from state `seed`    (little-endian)
//! key[16..32] = FNV-1a 128-bit hash of the UTF-8 bytes of `name` (little-endian)
//! ```
//!
//! Both functions are written out below rather than taken from `std` (whose
//! `DefaultHasher` may change between Rust releases), and a known-answer test pins the
//! first outputs. The numbers drawn from a stream also depend on `rand_chacha`'s ChaCha8
//! (fixed by the algorithm) and on how `rand` turns words into values, which `rand`
//! keeps stable within a minor version series.
//!
//! ```
//! use airtrace_link::rng::Streams;
//! use rand::RngExt;
//!
//! let streams = Streams::new(42);
//! let mut a = streams.stream("link/down/loss");
//! let mut b = Streams::new(42).stream("link/down/loss");
//! assert_eq!(a.random::<u64>(), b.random::<u64>());
//! ```

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;

/// The source of all randomness in one scenario run: a seed, and one independent
/// [`ChaCha8Rng`] stream per name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Streams {
    seed: u64,
}

impl Streams {
    /// Streams for the scenario seed `seed`.
    pub fn new(seed: u64) -> Self {
        Self { seed }
    }

    /// The scenario seed, to record in the bundle's `meta.json`.
    pub fn seed(&self) -> u64 {
        self.seed
    }

    /// A fresh generator for the stream `name`, positioned at its start.
    ///
    /// Calling this twice with the same name returns two generators that produce the
    /// same numbers; give each consumer its own name.
    pub fn stream(&self, name: &str) -> ChaCha8Rng {
        ChaCha8Rng::from_seed(stream_key(self.seed, name))
    }
}

/// The 32-byte ChaCha8 key of stream `name` under `seed` (see the module doc).
fn stream_key(seed: u64, name: &str) -> [u8; 32] {
    let mut state = seed;
    let mut key = [0u8; 32];
    key[0..8].copy_from_slice(&splitmix64(&mut state).to_le_bytes());
    key[8..16].copy_from_slice(&splitmix64(&mut state).to_le_bytes());
    key[16..32].copy_from_slice(&fnv1a_128(name.as_bytes()).to_le_bytes());
    key
}

/// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number generators",
/// OOPSLA 2014; constants as in Vigna's reference `splitmix64.c`).
fn splitmix64(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// FNV-1a, 128-bit variant (Fowler, Noll & Vo; draft-eastlake-fnv, offset basis and
/// prime for 128 bits).
fn fnv1a_128(bytes: &[u8]) -> u128 {
    const OFFSET_BASIS: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    bytes.iter().fold(OFFSET_BASIS, |hash, &b| {
        (hash ^ u128::from(b)).wrapping_mul(PRIME)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::RngExt;

    fn first_words(rng: &mut ChaCha8Rng, n: usize) -> Vec<u64> {
        (0..n).map(|_| rng.random::<u64>()).collect()
    }

    #[test]
    fn same_seed_and_name_give_same_sequence() {
        let a = first_words(&mut Streams::new(7).stream("link/loss"), 64);
        let b = first_words(&mut Streams::new(7).stream("link/loss"), 64);
        assert_eq!(a, b);
    }

    #[test]
    fn different_names_give_different_sequences() {
        let s = Streams::new(7);
        let a = first_words(&mut s.stream("link/up/loss"), 8);
        let b = first_words(&mut s.stream("link/down/loss"), 8);
        let empty = first_words(&mut s.stream(""), 8);
        assert_ne!(a, b);
        assert_ne!(a, empty);
    }

    #[test]
    fn different_seeds_give_different_sequences() {
        let a = first_words(&mut Streams::new(1).stream("link/loss"), 8);
        let b = first_words(&mut Streams::new(2).stream("link/loss"), 8);
        assert_ne!(a, b);
    }

    #[test]
    fn creating_other_streams_does_not_disturb_a_stream() {
        let s = Streams::new(99);
        let alone = first_words(&mut s.stream("b"), 16);
        let mut other = s.stream("a");
        let _ = first_words(&mut other, 1000);
        assert_eq!(first_words(&mut s.stream("b"), 16), alone);
    }

    /// Pins the derivation: if this fails, every recorded scenario changes its numbers.
    #[test]
    fn derivation_known_answers() {
        // FNV-1a 128 of "" is the offset basis; of "a" per the FNV reference tables.
        assert_eq!(fnv1a_128(b""), 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d);
        assert_eq!(fnv1a_128(b"a"), 0xd228_cb69_6f1a_8caf_7891_2b70_4e4a_8964);
        // SplitMix64 from state 0: first output per Vigna's splitmix64.c.
        assert_eq!(splitmix64(&mut 0), 0xe220_a839_7b1d_cdaf);
        let first = Streams::new(0).stream("link").random::<u64>();
        assert_eq!(first, 8_637_432_438_375_588_423);
    }
}
