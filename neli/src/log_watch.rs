//! Deciding, from periodic looks at the election topic, that the broker lost
//! the election log (a restart without its data): the rule every driver's
//! topic watcher shares (the Kafka backend and the simulator's client).
//!
//! Why two signals: the member that finds the topic missing twice in a row
//! recreates it, so the others may never see it missing; they see the log's
//! end offset go backwards instead. Offsets restart with the log, and so do
//! fencing tokens (neli/KAFKA.md, "Fencing tokens after a broker lost its log").

/// What one look at the election topic found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Look {
    /// The cluster answered and does not list the topic.
    Missing,
    /// The topic exists; `log_end` is partition 0's end offset.
    Present { log_end: u64 },
}

/// What to do after a look.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Verdict {
    /// The log was lost since the previous look that found it: report it once.
    pub lost: bool,
    /// Recreate the topic (it was missing twice in a row).
    pub recreate: bool,
}

/// The watcher's memory between looks.
#[derive(Debug, Clone, Default)]
pub struct LogWatch {
    missing: u32,
    /// Highest log end seen on the current log.
    high: Option<u64>,
    /// This log's loss was already reported (by the missing-topic path).
    reported: bool,
}

/// Looks in a row that must find the topic missing before it is recreated:
/// one could race the topic's creation; `neli end` stops members on its
/// marker before deleting, so an ended election never gets here.
pub const MISSING_LOOKS: u32 = 2;

impl LogWatch {
    pub fn look(&mut self, look: Look) -> Verdict {
        match look {
            Look::Missing => {
                self.missing += 1;
                if self.missing < MISSING_LOOKS {
                    return Verdict::default();
                }
                self.missing = 0;
                let lost = !self.reported;
                self.reported = true;
                self.high = None;
                Verdict { lost, recreate: true }
            }
            Look::Present { log_end } => {
                self.missing = 0;
                let went_back = self.high.is_some_and(|h| log_end < h);
                let lost = went_back && !self.reported;
                if went_back || self.high.is_none() {
                    // A new log (or the first look): count from here.
                    self.high = Some(log_end);
                    if went_back {
                        self.reported = false;
                    }
                } else {
                    self.high = self.high.max(Some(log_end));
                    self.reported = false;
                }
                Verdict { lost, recreate: false }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn present(log_end: u64) -> Look {
        Look::Present { log_end }
    }

    #[test]
    fn a_growing_log_is_never_lost() {
        let mut w = LogWatch::default();
        for end in [0, 5, 5, 9, 40] {
            assert_eq!(w.look(present(end)), Verdict::default());
        }
    }

    #[test]
    fn missing_twice_recreates_and_reports_once() {
        let mut w = LogWatch::default();
        w.look(present(30));
        assert_eq!(w.look(Look::Missing), Verdict::default(), "one miss may be a race");
        assert_eq!(w.look(Look::Missing), Verdict { lost: true, recreate: true });
        // The recreated log starts low: not a second loss.
        assert_eq!(w.look(present(0)), Verdict::default());
        assert_eq!(w.look(present(3)), Verdict::default());
    }

    #[test]
    fn a_log_end_that_goes_backwards_is_a_loss_someone_else_repaired() {
        let mut w = LogWatch::default();
        w.look(present(30));
        assert_eq!(w.look(Look::Missing), Verdict::default());
        assert_eq!(w.look(present(2)), Verdict { lost: true, recreate: false });
        assert_eq!(w.look(present(4)), Verdict::default());
        // A second loss later is reported again.
        assert_eq!(w.look(present(1)), Verdict { lost: true, recreate: false });
    }
}
