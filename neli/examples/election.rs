//! Three members elect a leader on the in-memory fake broker; the leader
//! closes and another takes over. `cargo run -p neli --example election`.

use std::time::Duration;

use neli::testing::FakeCluster;
use neli::{Config, Event, Neli, SystemClock};

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), neli::Error> {
    let cluster = FakeCluster::new(1);
    let mut members = Vec::new();
    for name in ["alpha", "bravo", "charlie"] {
        let config =
            Config::builder().group("example").name(name).heartbeat_timeout(Duration::from_millis(500)).build()?;
        let clock = SystemClock::new();
        let mut neli = Neli::new(&config, cluster.broker(name, clock.clone()), clock).await?;
        neli.on_event(move |event, _| async move {
            match event {
                Event::Acquired { token, .. } => println!("{name}: acquired leadership, token {token}"),
                Event::Revoked { .. } => println!("{name}: revoked, handing over"),
                Event::Fenced { .. } => println!("{name}: fenced, stopping now"),
                // `Event` is non-exhaustive: later kinds of events land here.
                other => println!("{name}: {other:?}"),
            }
        });
        members.push((name, neli.background()));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let (leader, handle) = members.remove(0);
    println!("{leader}: leader? {} -> closing", handle.is_leader());
    handle.close().await?;
    tokio::time::sleep(Duration::from_millis(500)).await;
    for (name, handle) in members {
        println!("{name}: leader? {}", handle.is_leader());
        handle.close().await?;
    }
    Ok(())
}
