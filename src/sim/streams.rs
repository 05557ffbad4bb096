//! Named random streams: each kind of draw has a generator of its own, seeded from the
//! scenario's seed and the names of what it draws for (a link's packet errors by its two
//! vehicles, an 802.11 medium's backoffs and receptions by its standard and channel). Adding a
//! vehicle or a link, or traffic elsewhere, leaves every other stream's draws as they were.

use rand::SeedableRng;
use rand_chacha::ChaCha8Rng;
use sha2::{Digest, Sha256};

/// The stream of draws of `kind` for `names` under `seed`: ChaCha8 keyed by the SHA-256 of
/// the seed, the kind and the names (each ended by a NUL, which no name holds).
pub fn stream(seed: u64, kind: &str, names: &[&str]) -> ChaCha8Rng {
    let mut h = Sha256::new();
    h.update(seed.to_le_bytes());
    for part in std::iter::once(kind).chain(names.iter().copied()) {
        h.update(part.as_bytes());
        h.update([0]);
    }
    ChaCha8Rng::from_seed(h.finalize().into())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::Rng;

    #[test]
    fn a_stream_depends_on_its_seed_kind_and_names_in_order_and_nothing_else() {
        let first = |mut r: ChaCha8Rng| r.random::<u64>();
        let a = first(stream(1, "packet errors", &["usv1", "usv2"]));
        assert_eq!(a, first(stream(1, "packet errors", &["usv1", "usv2"])));
        for other in [
            stream(2, "packet errors", &["usv1", "usv2"]),
            stream(1, "802.11", &["usv1", "usv2"]),
            stream(1, "packet errors", &["usv2", "usv1"]),
            // The separator keeps ["ab", "c"] apart from ["a", "bc"].
            stream(1, "packet errors", &["usv", "1usv2"]),
        ] {
            assert_ne!(a, first(other));
        }
    }
}
