//! Log lines written by a `tracing` subscriber, kept for a test to read
//! back where a line is the behaviour. Also used by `group_heartbeats.rs`,
//! which needs a process-wide subscriber and so its own binary.

use std::sync::{Arc, Mutex};

/// Every line written, as bytes; clones share them.
#[derive(Clone, Default)]
pub struct Lines(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Lines {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("lines lock").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl Lines {
    /// Everything written so far.
    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.0.lock().expect("lines lock")).into_owned()
    }
}
