//! What keeps the search fast, kept apart from the model (models/README.md,
//! "How a state stays cheap"); none of it changes which states are reachable
//! or what a property says of them.
//!
//! The model uses it through a small interface:
//! - copy on write (`cow`): `ElectionState::{slot_mut, coord_mut, logs_mut}`
//!   take what a step changes, and `Slot::set_core` is the one way to change
//!   a core;
//! - the cached view of a core (`super::view`, below the state that holds
//!   it): `Slot::{lease, assigned, timeout}`;
//! - fingerprints (`fingerprint`): `ElectionState::seal` at the end of every
//!   step, then a state hashes as one digest;
//! - merging (`forget`): `ElectionModel::forget` after every step;
//! - symmetry (`symmetry`), for the searches: `representative`,
//!   `rename_members`, `canonical_fingerprint`.

mod cow;
mod fingerprint;
mod forget;
mod symmetry;

pub use symmetry::{canonical_fingerprint, rename_members, representative};
