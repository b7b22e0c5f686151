//! The run's own seeded randomness (clock origins, start delays, the
//! random-fault generator's RNG seed): splitmix64 over (seed, salt).

/// splitmix64 of `seed` and `salt`: the same pair gives the same number on
/// every machine.
pub fn mix(seed: u64, salt: u64) -> u64 {
    let mut z = seed.wrapping_add(salt.wrapping_mul(0x9E37_79B9_7F4A_7C15)).wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}
