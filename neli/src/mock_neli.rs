//! `MockNeli`: a test double for code that uses an election, and the
//! [`Election`] trait both it and [`crate::Neli`] implement.
//!
//! As in goNELI's mock, a transition requested with
//! [`MockNeli::transition`] takes effect on the next `pulse`, where the
//! matching event reaches handlers and streams.

use std::collections::VecDeque;
use std::future::Future;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::sync::mpsc;
use tokio_stream::wrappers::UnboundedReceiverStream;

use crate::broker::Broker;
use crate::clock::Clock;
use crate::core::{Event, Token};
use crate::driver::{Error, Neli, Outcome, Pulse};
use crate::status::State;

/// What downstream code needs from an election; implemented by [`Neli`] and
/// [`MockNeli`] so code under test can take either.
pub trait Election: Send {
    /// [`Neli::pulse`]: advance the election, waiting up to `timeout`.
    fn pulse(&mut self, timeout: Duration) -> impl Future<Output = Result<Pulse, Error>> + Send;
    /// [`Neli::is_leader`]: whether this member leads role 0 now.
    fn is_leader(&self) -> bool;
    /// [`Neli::token`]: the fencing token of role 0 while leading.
    fn token(&self) -> Option<Token>;
    /// [`Neli::state`]: the lifecycle state.
    fn state(&self) -> State;
    /// [`Neli::resign`]: give up leadership.
    fn resign(&mut self) -> impl Future<Output = Result<(), Error>> + Send;
    /// [`Neli::close`]: end the election.
    fn close(&mut self) -> impl Future<Output = Result<(), Error>> + Send;
}

impl<B: Broker, C: Clock> Election for Neli<B, C> {
    fn pulse(&mut self, timeout: Duration) -> impl Future<Output = Result<Pulse, Error>> + Send {
        Neli::pulse(self, timeout)
    }
    fn is_leader(&self) -> bool {
        Neli::is_leader(self)
    }
    fn token(&self) -> Option<Token> {
        Neli::token(self)
    }
    fn state(&self) -> State {
        Neli::state(self)
    }
    fn resign(&mut self) -> impl Future<Output = Result<(), Error>> + Send {
        Neli::resign(self)
    }
    fn close(&mut self) -> impl Future<Output = Result<(), Error>> + Send {
        Neli::close(self)
    }
}

/// A transition for [`MockNeli`] to apply on its next pulse.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Transition {
    /// Become leader (a fresh, larger token).
    Acquire,
    /// Orderly loss of leadership.
    Revoke,
    /// Abrupt loss of leadership.
    Fence,
    /// The next pulse fails with this error (fatal errors stick).
    Fail(Error),
}

#[derive(Default)]
struct MockState {
    pending: VecDeque<Transition>,
    leader: bool,
    token: u64,
    fatal: Option<Error>,
    subscribers: Vec<mpsc::UnboundedSender<Event>>,
}

/// A scriptable election. Clones share state, so a test can keep one to
/// drive transitions while the code under test owns another.
#[derive(Clone)]
pub struct MockNeli {
    inner: Arc<Mutex<MockState>>,
    state: State,
}

impl Default for MockNeli {
    fn default() -> Self {
        MockNeli::new()
    }
}

impl MockNeli {
    /// A mock that is live and leads nothing.
    pub fn new() -> MockNeli {
        MockNeli { inner: Arc::new(Mutex::new(MockState::default())), state: State::Live }
    }

    /// Queues a transition; it takes effect on the next pulse.
    pub fn transition(&self, t: Transition) {
        self.lock().pending.push_back(t);
    }

    /// Every event from now on, in order.
    pub fn events(&self) -> UnboundedReceiverStream<Event> {
        let (tx, rx) = mpsc::unbounded_channel();
        self.lock().subscribers.push(tx);
        UnboundedReceiverStream::new(rx)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, MockState> {
        self.inner.lock().expect("mock lock")
    }

    fn emit(state: &mut MockState, event: Event) {
        state.subscribers.retain(|tx| tx.send(event).is_ok());
    }
}

impl Election for MockNeli {
    fn pulse(&mut self, _timeout: Duration) -> impl Future<Output = Result<Pulse, Error>> + Send {
        let result = (|| {
            if self.state == State::Closed {
                return Ok(Pulse::Finished(Outcome::Closed));
            }
            let mut s = self.lock();
            if let Some(e) = &s.fatal {
                return Err(e.clone());
            }
            match s.pending.pop_front() {
                Some(Transition::Acquire) if !s.leader => {
                    s.leader = true;
                    s.token += 1;
                    let token = Token(s.token);
                    Self::emit(&mut s, Event::Acquired { role: 0, token });
                }
                Some(Transition::Revoke) if s.leader => {
                    s.leader = false;
                    Self::emit(&mut s, Event::Revoked { role: 0 });
                }
                Some(Transition::Fence) if s.leader => {
                    s.leader = false;
                    Self::emit(&mut s, Event::Fenced { role: 0 });
                }
                Some(Transition::Fail(e)) => {
                    if matches!(&e, Error::Broker(b) if b.is_fatal()) {
                        s.fatal = Some(e.clone());
                    }
                    return Err(e);
                }
                _ => {}
            }
            Ok(Pulse::Running { leader: s.leader })
        })();
        std::future::ready(result)
    }

    fn is_leader(&self) -> bool {
        self.state == State::Live && self.lock().leader
    }

    fn token(&self) -> Option<Token> {
        let s = self.lock();
        s.leader.then_some(Token(s.token))
    }

    fn state(&self) -> State {
        self.state
    }

    fn resign(&mut self) -> impl Future<Output = Result<(), Error>> + Send {
        self.transition(Transition::Revoke);
        std::future::ready(Ok(()))
    }

    fn close(&mut self) -> impl Future<Output = Result<(), Error>> + Send {
        {
            let mut s = self.lock();
            if s.leader {
                s.leader = false;
                Self::emit(&mut s, Event::Revoked { role: 0 });
            }
        }
        self.state = State::Closed;
        std::future::ready(Ok(()))
    }
}
