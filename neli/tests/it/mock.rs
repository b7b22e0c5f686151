//! `MockNeli`, the test double for downstream users: transitions apply on
//! the next pulse, as in goNELI's mock.

use std::time::Duration;

use neli::{BrokerError, Election, Error, Event, MockNeli, Outcome, Pulse, State, Token, Transition};
use tokio_stream::StreamExt;

/// Code under test that only knows the `Election` trait.
async fn work_if_leader(e: &mut impl Election, done: &mut Vec<Token>) -> Result<(), Error> {
    if e.pulse(Duration::from_millis(10)).await?.is_leader() {
        done.push(e.token().expect("leader has a token"));
    }
    Ok(())
}

#[tokio::test]
async fn transitions_apply_on_the_next_pulse() {
    let mut mock = MockNeli::new();
    let driver = mock.clone();
    let mut events = mock.events();
    let mut done = vec![];
    driver.transition(Transition::Acquire);
    assert!(!mock.is_leader(), "not applied before a pulse");
    work_if_leader(&mut mock, &mut done).await.unwrap();
    assert_eq!(done, vec![Token(1)]);
    driver.transition(Transition::Fence);
    work_if_leader(&mut mock, &mut done).await.unwrap();
    driver.transition(Transition::Acquire);
    work_if_leader(&mut mock, &mut done).await.unwrap();
    assert_eq!(done, vec![Token(1), Token(2)], "tokens increase across terms");
    let seen: Vec<Event> =
        [events.next().await, events.next().await, events.next().await].into_iter().flatten().collect();
    assert_eq!(
        seen,
        vec![
            Event::Acquired { role: 0, token: Token(1) },
            Event::Fenced { role: 0 },
            Event::Acquired { role: 0, token: Token(2) }
        ]
    );
}

#[tokio::test]
async fn mock_errors_fatal_stick_retriable_do_not() {
    let mut mock = MockNeli::new();
    mock.transition(Transition::Fail(Error::Broker(BrokerError::retriable("timeout"))));
    assert!(mock.pulse(Duration::ZERO).await.is_err());
    assert!(mock.pulse(Duration::ZERO).await.is_ok());
    let fatal = Error::Broker(BrokerError::fatal("auth"));
    mock.transition(Transition::Fail(fatal.clone()));
    assert_eq!(mock.pulse(Duration::ZERO).await, Err(fatal.clone()));
    assert_eq!(mock.pulse(Duration::ZERO).await, Err(fatal));
}

#[tokio::test]
async fn mock_close_revokes_and_ends() {
    let mut mock = MockNeli::new();
    let mut events = mock.events();
    mock.transition(Transition::Acquire);
    let _ = mock.pulse(Duration::ZERO).await.unwrap();
    mock.close().await.unwrap();
    assert_eq!(mock.state(), State::Closed);
    assert_eq!(mock.pulse(Duration::ZERO).await, Ok(Pulse::Finished(Outcome::Closed)));
    events.next().await;
    assert_eq!(events.next().await, Some(Event::Revoked { role: 0 }));
}
