//! The stranger on the election topic: a `foreign-writer` fault has it
//! write records that are not the election's own (garbage, a stranger's
//! well-formed heartbeats, a member's heartbeats on the wrong partition),
//! which own-evidence must ignore (docs/background.md, hazard 6).

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use neli::Time;
use neli::core::Heartbeat;
use tokio::sync::Notify;

use crate::clock::{Gate, global_ms};
use crate::proto::{Conn, Request};

/// Where the stranger cuts its truncated heartbeats, most telling first:
/// just short of a whole version-2 record's fixed part (44 bytes), of
/// version 1's (35), shorter than the magic and version (5), nothing. A
/// decoder whose length checks are off reads past the end of one of them
/// and panics (the run then fails).
const GARBAGE_CUTS: [usize; 12] = [43, 42, 40, 36, 28, 4, 0, 31, 27, 19, 5, 2];

/// The stranger's garbage, in turn: a heartbeat cut short, plain bytes, a
/// heartbeat of an unknown version, one whose name length claims a byte
/// more than it has.
fn garbage_record(seq: u64) -> Vec<u8> {
    let mut whole = Heartbeat {
        role: 0,
        term: 1,
        seq,
        sent_at: Time::from_millis(global_ms()),
        lease: None,
        name: crate::server::STRANGER.into(),
    }
    .encode();
    let name_len_at = whole.len() - crate::server::STRANGER.len() - 2;
    match seq % 8 {
        0 | 2 | 4 | 6 => {
            let cut = GARBAGE_CUTS[(seq / 2 - 1) as usize % GARBAGE_CUTS.len()].min(whole.len() - 1);
            whole.truncate(cut);
            whole
        }
        3 => {
            whole[4] = 9;
            whole
        }
        7 => {
            whole[name_len_at + 1] += 1;
            whole
        }
        _ => format!("garbage-{seq}").into_bytes(),
    }
}

/// What a `foreign-writer` fault has the stranger write.
pub(super) enum ForeignRecords {
    /// Bytes that are not a heartbeat of ours ([`garbage_record`]).
    Garbage,
    /// Well-formed heartbeats of another deployment's member.
    Stranger,
    /// Well-formed heartbeats in these names (our members'), each naming a
    /// role this election keeps on another partition, or no role it has.
    Misplaced { names: Vec<String> },
}

/// One `foreign-writer` fault: `count` records to `partition`.
pub(super) struct ForeignJob {
    pub partition: u32,
    pub count: u32,
    pub records: ForeignRecords,
}

/// A stranger on the election topic; `layout` is the election's
/// (roles, partitions).
pub(super) async fn foreign_main(
    leader: String,
    layout: (u32, u32),
    queue: Arc<Mutex<VecDeque<ForeignJob>>>,
    notify: Arc<Notify>,
) -> crate::rt::Result {
    let mut conn = Conn::new(&leader, Gate::default());
    let mut seq = 0u64;
    loop {
        let job = queue.lock().expect("fw lock").pop_front();
        let Some(ForeignJob { partition, count, records }) = job else {
            notify.notified().await;
            continue;
        };
        for _ in 0..count {
            seq += 1;
            // Its host has been up far longer than ours (member clocks start
            // within 100 s), so its send times look fresh.
            let sent_at = Time::from_millis(global_ms() + 200_000);
            let payload = match &records {
                ForeignRecords::Garbage => garbage_record(seq),
                // A second deployment sharing the topic: its group's
                // generations (small numbers) collide with ours, so only the
                // name tells its heartbeats apart; it has four roles, so
                // some of its records name a role ours may not have (a
                // misplaced record, which counts for nothing either).
                ForeignRecords::Stranger => Heartbeat {
                    role: (seq % 4) as u32,
                    term: 1 + seq % 8,
                    seq,
                    sent_at,
                    lease: None,
                    name: crate::server::STRANGER.into(),
                }
                .encode(),
                // A deployment whose hosts have our members' names but
                // another role count, so its heartbeat for a role lands on a
                // partition where ours do not keep that role: only the
                // role's partition tells them apart (scenarios/FORMAT.md,
                // `foreign-writer`). Terms 1-8 in turn collide with ours.
                ForeignRecords::Misplaced { names } => {
                    let (roles, partitions) = layout;
                    let candidates: Vec<u32> =
                        (0..roles + 2).filter(|r| *r >= roles || r % partitions.max(1) != partition).collect();
                    // Every term with every role, then the next name.
                    let (step, n) = ((seq - 1) / 8, candidates.len() as u64);
                    let name = names.get(((step / n) % names.len().max(1) as u64) as usize);
                    Heartbeat {
                        role: candidates[(step % n) as usize],
                        term: 1 + (seq - 1) % 8,
                        seq,
                        sent_at,
                        lease: None,
                        name: name.cloned().unwrap_or_else(|| "m0".into()),
                    }
                    .encode()
                }
            };
            let req = Request::Produce {
                partition,
                payload,
                create_time: global_ms(),
                author: crate::server::STRANGER.into(),
            };
            let _ = conn.call(&req, Duration::from_secs(1)).await;
        }
    }
}
