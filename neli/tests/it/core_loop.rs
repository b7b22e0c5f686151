//! A loopback harness for the core: heartbeats the member produces land in a
//! log it can read back, membership proofs are answered by the test.
//! Faults are injected by editing data (delaying, dropping, reordering).

use std::time::Duration;

use neli::core::{CoreConfig, Member, Output, Record};
use neli::{Event, Time};

pub fn ms(v: u64) -> Time {
    Time::from_millis(v)
}

pub fn dur(v: u64) -> Duration {
    Duration::from_millis(v)
}

/// One member and the partition log it writes to.
pub struct Loop {
    pub member: Member,
    /// Records produced but not yet read back, per partition, in order.
    pub log: Vec<Record>,
    pub next_offset: u64,
    /// Answer membership proofs automatically (a reachable coordinator).
    pub coordinator_reachable: bool,
    pub events: Vec<Event>,
    pub pending_membership: Vec<u64>,
    pub left_group: bool,
}

impl Loop {
    /// Exclusive mode, T = 1000 ms, heartbeat every 250 ms.
    pub fn exclusive() -> Loop {
        Loop::with(CoreConfig::exclusive("me", dur(1000)))
    }

    pub fn with(cfg: CoreConfig) -> Loop {
        Loop {
            member: Member::new(cfg),
            log: Vec::new(),
            next_offset: 0,
            coordinator_reachable: true,
            events: Vec::new(),
            pending_membership: Vec::new(),
            left_group: false,
        }
    }

    /// Carries out outputs at `now`: produce appends to the log, membership
    /// proofs are answered (if reachable) as sent at `now`.
    pub fn drain(&mut self, now: Time) {
        while let Some(out) = self.member.poll_output() {
            match out {
                Output::Produce { partition, payload } => {
                    self.log.push(Record { partition, offset: self.next_offset, timestamp: None, payload });
                    self.next_offset += 1;
                }
                Output::ConfirmMembership { generation } => {
                    if self.coordinator_reachable {
                        self.member.handle_membership(now, generation, now, true);
                    } else {
                        self.pending_membership.push(generation);
                    }
                }
                Output::LeaveGroup { .. } => self.left_group = true,
                Output::Event(e) => self.events.push(e),
            }
        }
    }

    pub fn assign(&mut self, now: Time, generation: u64, partitions: &[u32]) {
        self.member.handle_assigned(now, generation, partitions);
        self.drain(now);
    }

    /// Reads every record produced so far back at `now`.
    pub fn read_back(&mut self, now: Time) {
        for r in std::mem::take(&mut self.log) {
            self.member.handle_record(now, &r);
        }
        self.drain(now);
    }

    pub fn tick(&mut self, now: Time) {
        self.member.handle_timeout(now);
        self.drain(now);
    }

    /// Runs the member's loop every `step` until `until`, reading back
    /// immediately (a healthy broker).
    pub fn run_healthy(&mut self, from: Time, until: Time, step: u64) {
        let mut now = from;
        while now <= until {
            self.tick(now);
            self.read_back(now);
            now = now + dur(step);
        }
    }

    pub fn take_events(&mut self) -> Vec<Event> {
        std::mem::take(&mut self.events)
    }

    /// A record written by somebody else.
    pub fn foreign(&mut self, partition: u32, payload: Vec<u8>) -> Record {
        let r = Record { partition, offset: self.next_offset, timestamp: None, payload };
        self.next_offset += 1;
        r
    }
}
