//! Runs librdkafka's mock cluster as a standalone broker for manual tries
//! of the `neli` CLI: prints the bootstrap servers, then serves until killed.
//!
//! Usage: cargo run -p neli --example mock_broker -- TOPIC [PARTITIONS]
//! (the mock has no CreateTopics, so the election topic is created here).

fn main() {
    let mut args = std::env::args().skip(1);
    let Some(topic) = args.next() else {
        eprintln!("usage: mock_broker TOPIC [PARTITIONS]");
        std::process::exit(2);
    };
    let partitions = args.next().and_then(|p| p.parse().ok()).unwrap_or(1);
    let mock = neli::kafka::mock::MockKafka::start(1).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(1)
    });
    if let Err(e) = mock.create_topic(&topic, partitions) {
        eprintln!("{e}");
        std::process::exit(1);
    }
    println!("{}", mock.bootstrap_servers());
    loop {
        std::thread::park();
    }
}
