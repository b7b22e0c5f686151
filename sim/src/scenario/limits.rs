//! Limits that keep a scenario's cost (memory, time, output) sane
//! (`scenarios/FORMAT.md`); each error that cites one names the field, the
//! value and the limit.

use super::dur::Dur;

pub const MAX_NAME: usize = 64;
pub const MAX_DESCRIPTION: usize = 2000;
pub const MAX_MEMBERS: u32 = 64;
pub const MAX_BROKERS: u32 = 16;
pub const MAX_FAULTS: u32 = 1000;
pub const MAX_RUN: Dur = Dur(3_600_000);
pub const MAX_PPM: u64 = 1_000_000;
pub const MAX_FOREIGN_RECORDS: u32 = 100_000;
