//! Deciding, from periodic looks at the election topic, that the broker lost
//! the election log (a restart without its data): the rule every driver's
//! topic watcher shares (the Kafka backend and the simulator's client).
//!
//! The rule: the topic missing on [`MISSING_LOOKS`] looks in a row, with no
//! end marker, means the log was lost; the member reports it once (fencing
//! tokens restart with the log: neli/KAFKA.md, "Fencing tokens after a broker
//! lost its log") and recreates the topic. A member that never finds it
//! missing twice (another member recreated it first) reports nothing: the
//! loss wiped what could have told it. Comparing the log's end offset before
//! and after was tried and dropped: librdkafka's cached high watermark
//! outlives the log it came from, so it reported one loss twice.

/// What one look at the election topic found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// The cluster answered and does not list the topic.
    Missing,
    /// The topic exists.
    Present,
}

/// What to do after a look.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct AfterLook {
    /// The log was lost: report it (once per loss).
    pub lost: bool,
    /// Recreate the topic.
    pub recreate: bool,
}

/// The watcher's memory between looks.
#[derive(Debug, Clone, Default)]
pub struct LogWatch {
    missing: u32,
    /// This disappearance was already reported; cleared once the topic is back.
    reported: bool,
}

/// Looks in a row that must find the topic missing: one could race the
/// topic's creation; `neli end` stops members on its marker before deleting,
/// so an ended election never gets here.
pub const MISSING_LOOKS: u32 = 2;

impl LogWatch {
    /// Takes one look's finding into account and says what to do.
    pub fn look(&mut self, look: Look) -> AfterLook {
        match look {
            Look::Missing => {
                self.missing += 1;
                if self.missing < MISSING_LOOKS {
                    return AfterLook::default();
                }
                self.missing = 0;
                let lost = !self.reported;
                self.reported = true;
                AfterLook { lost, recreate: true }
            }
            Look::Present => {
                self.missing = 0;
                self.reported = false;
                AfterLook::default()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_present_topic_is_never_lost() {
        let mut w = LogWatch::default();
        for _ in 0..5 {
            assert_eq!(w.look(Look::Present), AfterLook::default());
        }
    }

    #[test]
    fn missing_twice_recreates_and_reports_once_per_disappearance() {
        let mut w = LogWatch::default();
        w.look(Look::Present);
        assert_eq!(w.look(Look::Missing), AfterLook::default(), "one miss may be a race");
        assert_eq!(w.look(Look::Missing), AfterLook { lost: true, recreate: true });
        // Recreating failed for a while: retried, not reported again.
        assert_eq!(w.look(Look::Missing), AfterLook::default());
        assert_eq!(w.look(Look::Missing), AfterLook { lost: false, recreate: true });
        // Back, then lost again later: a second loss.
        assert_eq!(w.look(Look::Present), AfterLook::default());
        w.look(Look::Missing);
        assert_eq!(w.look(Look::Missing), AfterLook { lost: true, recreate: true });
    }

    #[test]
    fn a_single_miss_between_presences_is_nothing() {
        let mut w = LogWatch::default();
        for look in [Look::Present, Look::Missing, Look::Present, Look::Missing, Look::Present] {
            assert_eq!(w.look(look), AfterLook::default());
        }
    }
}
