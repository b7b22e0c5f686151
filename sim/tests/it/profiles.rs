//! Broker profiles change timing the way the real brokers do
//! (docs/background.md, Measured facts), seen in one story: the leader is
//! killed at 12 s, on a cluster imitating each broker.

use crate::{assert_survives, scenario};

/// The failover after the leader's crash, on a cluster imitating `profile`.
fn crash_failover(profile: &str, seed: u64) -> u64 {
    let text = match profile {
        "kafka" => include_str!("scenarios/profile-kafka.toml"),
        "tansu" => include_str!("scenarios/profile-tansu.toml"),
        "librdkafka-mock" => include_str!("scenarios/profile-librdkafka-mock.toml"),
        other => panic!("no crash story for profile {other}"),
    };
    let r = assert_survives(&scenario(text), seed);
    r.figures.failovers_ms.first().copied().expect("the crash hit the leader")
}

// Proves the tansu profile pays the real broker's rebalance pause:
// tansu's ~3 s pause on every rebalance puts its failover after a SIGKILL
// with S = 3 s in the measured 4.4-6 s band, ~2-3 s behind Apache Kafka's.
#[test]
fn tansu_failover_pays_its_rebalance_pause() {
    for seed in 1..4 {
        let kafka = crash_failover("kafka", seed);
        let tansu = crash_failover("tansu", seed);
        assert!((3000..4500).contains(&kafka), "kafka failover {kafka} ms: S plus a rebalance");
        assert!((4400..6000).contains(&tansu), "tansu failover {tansu} ms outside the measured 4.4-6 s");
        assert!(tansu >= kafka + 1500, "tansu {tansu} ms vs kafka {kafka} ms");
    }
}

// Proves the librdkafka mock's expiry is never faster than Kafka's exact
// one: the mock finds expired members only every second.
#[test]
fn mock_expiry_check_is_never_faster_than_kafka() {
    for seed in 1..4 {
        assert!(crash_failover("librdkafka-mock", seed) >= crash_failover("kafka", seed));
    }
}
